// The StatefulSet controller.
#include "arbiter/controllers/statefulset.h"

#include <algorithm>

#include "arbiter/controllers/object_json.h"
#include "arbiter/controllers/pod_control.h"

namespace arbiter::controllers {

namespace {


bool RunningAndReady(const Json& pod) {
  return StringAt(pod, {"status", "phase"}) == "Running" && PodReady(pod) && !BeingDeleted(pod);
}

}  // namespace

Status StatefulSetController::Sync(Context& ctx, const Changes& changed) {
  const Timestamp now = ctx.now();
  for (const Key& key : changed.at("statefulsets")) queue_.Add(key, now);
  const store::Informer& pods = ctx.informer("pods");
  for (const Key& key : changed.at("pods")) {
    const store::Object* o = pods.Find(key);
    auto prev = owner_of_.find(key);
    if (prev != owner_of_.end()) queue_.Add(prev->second, now);
    const store::Body::Tree o_pinned = o != nullptr ? o->body.tree() : nullptr;
    const Json* ref = o != nullptr ? ControllerRef(*o_pinned) : nullptr;
    if (ref != nullptr && ref->value("kind", "") == kStatefulSetKind) {
      owner_of_[key] = {key.first, ref->value("name", "")};
      queue_.Add(owner_of_[key], now);
    } else if (prev != owner_of_.end()) {
      owner_of_.erase(prev);
    }
  }
  return queue_.ProcessDue(
      now, [&](const Key& key) { return SyncSet(ctx, key); },
      [](const Key& key) { return "statefulset " + key.first + "/" + key.second; });
}

Status StatefulSetController::SyncSet(Context& ctx, const Key& key) {
  const store::Object* object = ctx.informer("statefulsets").Find(key);
  if (object == nullptr) return Status::Ok();
  Json set = object->body.Copy();
  const std::string& ns = key.first;
  const std::string& name = key.second;
  const std::string component(Name());
  ApiClient& api = ctx.api();
  const api::ResourceInfo& pod_info = Resource("", "v1", "pods");
  const api::ResourceInfo& rev_info = Resource("apps", "v1", "controllerrevisions");
  const api::ResourceInfo& pvc_info = Resource("", "v1", "persistentvolumeclaims");
  auto selector = DecodeSelector(Find(set, {"spec", "selector"}), "spec.selector");
  if (!selector.ok()) return Status::Ok();

  // The update revision: the template's hash, recorded as a ControllerRevision.
  const Json* tmpl = Find(set, {"spec", "template"});
  const Json template_json = tmpl != nullptr ? *tmpl : Json::object();
  const std::string update_revision = StatefulSetRevision(set);
  int64_t newest = 0;
  bool have_revision = false;
  const auto& revisions = ctx.informer("controllerrevisions").objects();
  for (auto it = revisions.lower_bound({ns, ""}); it != revisions.end() && it->first.first == ns; ++it) {
    const store::Body::Tree second_pinned = it->second->body.tree();
    const Json* ref = ControllerRef(*second_pinned);
    if (ref == nullptr || ref->value("uid", "") != Uid(set)) continue;
    newest = std::max(newest, IntAt(*it->second->body.tree(), {"revision"}, 0));
    have_revision = have_revision || it->first.second == update_revision;
  }
  if (!have_revision) {
    Json labels = Find(template_json, {"metadata", "labels"}) != nullptr ? template_json["metadata"]["labels"] : Json::object();
    labels[kControllerRevisionHashLabel] = update_revision;
    auto r = api.Create(CollectionPath(rev_info, ns),
                        {{"apiVersion", "apps/v1"},
                         {"kind", "ControllerRevision"},
                         {"metadata", {{"name", update_revision}, {"labels", labels},
                                       {"ownerReferences", Json::array({NewControllerRef(set, kStatefulSetApiVersion, kStatefulSetKind)})}}},
                         {"data", {{"spec", {{"template", template_json}, {"$patch", "replace"}}}}},
                         {"revision", newest + 1}});
    if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists) return r.status();
  }

  // The pods it owns (adopting matching orphans), by ordinal.
  const int64_t start = IntAt(set, {"spec", "ordinals", "start"}, 0);
  const int64_t replicas = IntAt(set, {"spec", "replicas"}, 1);
  std::map<int64_t, Json> by_ordinal;
  std::vector<Json> condemned;  // beyond the replicas, or not named as the set names pods
  ARBITER_RETURN_IF_ERROR(ClaimObjects(api, pod_info, ctx.informer("pods"), ns, set, kStatefulSetApiVersion, kStatefulSetKind, *selector,
                                       [](const Json&) { return true; }, [&](const Json& pod) {
                                         const std::string pod_name = NameOf(pod);
                                         const std::string prefix = name + "-";
                                         char* end = nullptr;
                                         const long long ordinal =
                                             pod_name.starts_with(prefix) ? std::strtoll(pod_name.c_str() + prefix.size(), &end, 10) : -1;
                                         if (ordinal >= start && ordinal < start + replicas && end != nullptr && *end == '\0') {
                                           by_ordinal[ordinal] = pod;
                                         } else {
                                           condemned.push_back(pod);
                                         }
                                       }));
  const bool parallel = StringAt(set, {"spec", "podManagementPolicy"}) == "Parallel";
  const bool deleting_set = BeingDeleted(set);

  auto new_pod = [&](int64_t ordinal) {
    std::vector<Json> claims;
    const Json pod = StatefulSetPod(set, ordinal, update_revision, &claims);
    const std::string pod_name = NameOf(pod);
    // The claims of the volumeClaimTemplates, each made before the pod.
    for (const Json& pvc : claims) {
      const std::string claim_name = NameOf(pvc);
      if (ctx.informer("persistentvolumeclaims").Find({ns, claim_name}) != nullptr) continue;
      auto r = api.Create(CollectionPath(pvc_info, ns), pvc);
      if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists) return r.status();
      if (r.ok()) {
        ctx.Event(set, kStatefulSetKind, kStatefulSetApiVersion, "Normal", "SuccessfulCreate",
                  "create Claim " + claim_name + " Pod " + pod_name + " in StatefulSet " + name + " success", component);
      }
    }
    auto r = api.Create(CollectionPath(pod_info, ns), pod);
    if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists) return r.status();
    if (r.ok()) {
      ctx.Event(set, kStatefulSetKind, kStatefulSetApiVersion, "Normal", "SuccessfulCreate",
                "create Pod " + pod_name + " in StatefulSet " + name + " successful", component);
    }
    return Status::Ok();
  };
  auto delete_pod = [&](const Json& pod) {
    auto r = api.Delete(ObjectPath(pod_info, ns, NameOf(pod)), {{"preconditions", {{"uid", Uid(pod)}}}});
    if (!r.ok() && r.status().code() != StatusCode::kNotFound && r.status().code() != StatusCode::kConflict) return r.status();
    if (r.ok()) {
      ctx.Event(set, kStatefulSetKind, kStatefulSetApiVersion, "Normal", "SuccessfulDelete",
                "delete Pod " + NameOf(pod) + " in StatefulSet " + name + " successful", component);
    }
    return Status::Ok();
  };

  if (!deleting_set) {
    // Replicas: create the missing (and replace the finished), in order, halting at an
    // unhealthy pod unless Parallel.
    bool halted = false;
    for (int64_t ordinal = start; ordinal < start + replicas && !halted; ++ordinal) {
      auto it = by_ordinal.find(ordinal);
      if (it == by_ordinal.end()) {
        ARBITER_RETURN_IF_ERROR(new_pod(ordinal));
        halted = !parallel;
        continue;
      }
      const Json& pod = it->second;
      if (PodTerminal(pod) && !BeingDeleted(pod)) {
        ARBITER_RETURN_IF_ERROR(delete_pod(pod));
        halted = !parallel;
        continue;
      }
      if (!parallel && !RunningAndReady(pod)) halted = true;
    }
    // Condemned pods go highest ordinal first, one at a time unless Parallel, and only while
    // the rest are healthy.
    std::sort(condemned.begin(), condemned.end(), [](const Json& a, const Json& b) { return NameOf(a) > NameOf(b); });
    for (const Json& pod : condemned) {
      if (BeingDeleted(pod)) {
        if (!parallel) break;
        continue;
      }
      if (halted && !parallel) break;
      ARBITER_RETURN_IF_ERROR(delete_pod(pod));
      if (!parallel) break;
    }
    // RollingUpdate: the highest ordinal at or above the partition not at the update revision.
    const bool rolling = StringAt(set, {"spec", "updateStrategy", "type"}) != "OnDelete";
    const int64_t partition = IntAt(set, {"spec", "updateStrategy", "rollingUpdate", "partition"}, 0);
    if (rolling && !halted && condemned.empty()) {
      bool all_ready = std::all_of(by_ordinal.begin(), by_ordinal.end(), [](const auto& kv) { return RunningAndReady(kv.second); });
      for (auto it = by_ordinal.rbegin(); it != by_ordinal.rend() && all_ready; ++it) {
        if (it->first < start + partition) break;
        if (StringAt(it->second, {"metadata", "labels", kControllerRevisionHashLabel}) == update_revision) continue;
        ARBITER_RETURN_IF_ERROR(delete_pod(it->second));
        break;
      }
    }
  }

  // Status.
  int64_t ready = 0, current = 0, updated = 0, count = 0;
  std::string current_revision = StringAt(set, {"status", "currentRevision"});
  for (const auto& [ordinal, pod] : by_ordinal) {
    if (PodTerminal(pod)) continue;
    ++count;
    ready += RunningAndReady(pod);
    const std::string revision = StringAt(pod, {"metadata", "labels", kControllerRevisionHashLabel});
    updated += revision == update_revision;
    current += revision == (current_revision.empty() ? update_revision : current_revision);
  }
  if (current_revision.empty() || (updated == replicas && ready == replicas)) {
    current_revision = update_revision;
    current = updated;
  }
  Json status = StatusOf(set);
  Json next = status;
  next["observedGeneration"] = IntAt(set, {"metadata", "generation"}, 0);
  next["replicas"] = count;
  next["readyReplicas"] = ready;
  next["availableReplicas"] = ready;
  next["currentReplicas"] = current;
  next["updatedReplicas"] = updated;
  next["currentRevision"] = current_revision;
  next["updateRevision"] = update_revision;
  for (const char* f : {"readyReplicas", "availableReplicas", "currentReplicas", "updatedReplicas"}) {
    if (next[f] == 0) next.erase(f);
  }
  if (next == status) return Status::Ok();
  set["status"] = next;
  auto r = api.Update(ObjectPath(Resource("apps", "v1", "statefulsets"), ns, name, "status"), set);
  if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
  return Status::Ok();
}

}  // namespace arbiter::controllers
