// The ReplicaSet controller.
#include "arbiter/controllers/replicaset.h"

#include <algorithm>
#include <deque>

#include "arbiter/controllers/object_json.h"

namespace arbiter::controllers {

namespace {


// The objects of an informer in one namespace, in name order.
template <typename Fn>
void EachInNamespace(const store::Informer& informer, const std::string& ns, Fn&& fn) {
  const auto& objects = informer.objects();
  for (auto it = objects.lower_bound({ns, ""}); it != objects.end() && it->first.first == ns; ++it) fn(*it->second);
}

}  // namespace

void ReplicaSetController::Reset() {
  queue_.Clear();
  expectations_.Clear();
  owner_of_.clear();
}

Status ReplicaSetController::Sync(Context& ctx, const Changes& changed) {
  const Timestamp now = ctx.now();
  const store::Informer& pods = ctx.informer("pods");
  const store::Informer& sets = ctx.informer("replicasets");
  for (const Key& key : changed.at("replicasets")) queue_.Add(key, now);
  for (const Key& pod_key :
       FollowOwnedPods(changed.at("pods"), pods, kReplicaSetKind, owner_of_, expectations_, queue_, now)) {
    const store::Object* o = pods.Find(pod_key);
    // An orphan: the ReplicaSets of its namespace that select it may adopt it.
    const model::LabelMap labels = LabelsOf(*o->body.tree());
    EachInNamespace(sets, pod_key.first, [&](const store::Object& rs) {
      auto sel = DecodeSelector(Find(*rs.body.tree(), {"spec", "selector"}), "spec.selector");
      if (sel.ok() && *sel && (*sel)->Matches(labels)) queue_.Add({rs.ns, rs.name}, now);
    });
  }
  return queue_.ProcessDue(
      now, [&](const Key& key) { return SyncReplicaSet(ctx, key); },
      [](const Key& key) { return "replicaset " + key.first + "/" + key.second; });
}

Status ReplicaSetController::SyncReplicaSet(Context& ctx, const Key& key) {
  const Timestamp now = ctx.now();
  const store::Object* object = ctx.informer("replicasets").Find(key);
  if (object == nullptr) {
    expectations_.Forget(key);
    return Status::Ok();
  }
  const store::Body::Tree rs_tree = object->body.tree();
  const Json& rs = *rs_tree;
  const std::string& ns = key.first;
  const std::string uid = Uid(rs);
  const bool deleting = BeingDeleted(rs);
  auto selector = DecodeSelector(Find(rs, {"spec", "selector"}), "spec.selector");
  if (!selector.ok()) {
    // Upstream gives up on such a ReplicaSet until it changes; so does Arbiter.
    ctx.Log("Invalid ReplicaSet selector", "replicaSet=\"" + ns + "/" + key.second + "\" err=\"" +
                                               selector.status().message() + "\"");
    return Status::Ok();
  }
  const api::ResourceInfo& pod_info = Resource("", "v1", "pods");
  ApiClient& api = ctx.api();

  // Claim the active pods (adopted ones are kept as stored after the adoption).
  std::vector<const Json*> owned;
  std::deque<Json> adopted;
  const store::Informer& pod_informer = ctx.informer("pods");
  Status claim_error = ClaimObjects(
      api, pod_info, pod_informer, ns, rs, kReplicaSetApiVersion, kReplicaSetKind, *selector, [](const Json& pod) { return PodActive(pod); },
      [&](const Json& pod) {
        const store::Object* seen = pod_informer.Find({ns, NameOf(pod)});
        owned.push_back(seen != nullptr && &*seen->body.tree() == &pod ? &pod : &adopted.emplace_back(pod));
      });

  // Manage the replicas.
  const int64_t replicas = IntAt(rs, {"spec", "replicas"}, 1);
  Status manage_error = Status::Ok();
  int64_t diff = static_cast<int64_t>(owned.size()) - replicas;
  if (expectations_.Satisfied(key, now) && !deleting && claim_error.ok() && diff != 0) {
    if (diff < 0) {
      const int64_t n = std::min(-diff, kBurstReplicas);
      expectations_.Expect(key, n, {}, now);
      const Json* tmpl = Find(rs, {"spec", "template"});
      const Json pod = PodFromTemplate(tmpl != nullptr ? *tmpl : Json::object(), rs, kReplicaSetApiVersion, kReplicaSetKind, key.second + "-");
      const std::string collection = CollectionPath(pod_info, ns);
      auto [created, err] = SlowStartBatch(n, [&](int64_t) -> Status {
        auto r = api.Create(collection, pod);
        if (r.ok()) {
          ctx.Event(rs, kReplicaSetKind, kReplicaSetApiVersion, "Normal", "SuccessfulCreate", "Created pod: " + NameOf(*r), std::string(Name()));
          return Status::Ok();
        }
        ctx.Event(rs, kReplicaSetKind, kReplicaSetApiVersion, "Warning", "FailedCreate", "Error creating: " + r.status().message(),
                  std::string(Name()));
        return r.status();
      });
      for (int64_t i = created; i < n; ++i) expectations_.CreationObserved(key);
      manage_error = err;
    } else {
      const int64_t n = std::min(diff, kBurstReplicas);
      std::vector<const Json*> victims = owned;
      if (n < static_cast<int64_t>(owned.size())) {
        // Rank by the pods related to this one (those of every ReplicaSet of the same owner) on
        // each node: a node running more of them gives up a pod first.
        std::map<std::string, int64_t> per_node;
        const Json* owner_ref = ControllerRef(rs);
        std::set<std::string> related_sets{uid};
        if (owner_ref != nullptr) {
          EachInNamespace(ctx.informer("replicasets"), ns, [&](const store::Object& other) {
            const store::Body::Tree other_pinned = other.body.tree();
            const Json* r = ControllerRef(*other_pinned);
            if (r != nullptr && r->value("uid", "") == owner_ref->value("uid", "")) related_sets.insert(Uid(*other.body.tree()));
          });
        }
        EachInNamespace(ctx.informer("pods"), ns, [&](const store::Object& p) {
          const store::Body::Tree p_pinned = p.body.tree();
          const Json* r = ControllerRef(*p_pinned);
          if (r == nullptr || !PodActive(*p.body.tree()) || !related_sets.contains(r->value("uid", ""))) return;
          const std::string node = StringAt(*p.body.tree(), {"spec", "nodeName"});
          if (!node.empty()) ++per_node[node];
        });
        SortPodsToDelete(victims, per_node, now);
        victims.resize(static_cast<size_t>(n));
      }
      std::set<Key> keys;
      for (const Json* p : victims) keys.insert({ns, NameOf(*p)});
      expectations_.Expect(key, 0, keys, now);
      for (const Json* p : victims) {
        const std::string name = NameOf(*p);
        auto r = api.Delete(ObjectPath(pod_info, ns, name));
        if (r.ok()) {
          ctx.Event(rs, kReplicaSetKind, kReplicaSetApiVersion, "Normal", "SuccessfulDelete", "Deleted pod: " + name, std::string(Name()));
          continue;
        }
        expectations_.DeletionObserved(key, {ns, name});
        if (r.status().code() == StatusCode::kNotFound) continue;
        ctx.Event(rs, kReplicaSetKind, kReplicaSetApiVersion, "Warning", "FailedDelete", "Error deleting: " + r.status().message(),
                  std::string(Name()));
        if (manage_error.ok()) manage_error = r.status();
      }
    }
  }

  // Status.
  const int64_t min_ready = IntAt(rs, {"spec", "minReadySeconds"}, 0);
  const model::LabelMap template_labels = LabelMapOf(Find(rs, {"spec", "template", "metadata", "labels"}));
  int64_t fully = 0, ready = 0, available = 0;
  std::optional<Timestamp> next_available;
  for (const Json* p : owned) {
    const model::LabelMap labels = LabelsOf(*p);
    if (std::all_of(template_labels.begin(), template_labels.end(), [&](const auto& kv) {
          const std::string* v = labels.Find(kv.first);
          return v != nullptr && *v == kv.second;
        })) {
      ++fully;
    }
    if (!PodReady(*p)) continue;
    ++ready;
    const auto at = PodAvailableAt(*p, min_ready);
    if (at && *at <= now) {
      ++available;
    } else if (at) {
      next_available = next_available ? std::min(*next_available, *at) : *at;
    }
  }
  Json status = rs.contains("status") && rs["status"].is_object() ? rs["status"] : Json::object();
  Json next = status;
  next["replicas"] = static_cast<int64_t>(owned.size());
  auto set_or_omit = [&next](const char* field, int64_t v) {
    if (v != 0) {
      next[field] = v;
    } else {
      next.erase(field);
    }
  };
  set_or_omit("fullyLabeledReplicas", fully);
  set_or_omit("readyReplicas", ready);
  set_or_omit("availableReplicas", available);
  set_or_omit("observedGeneration", IntAt(rs, {"metadata", "generation"}, 0));
  const Json* failure = GetCondition(next, "ReplicaFailure");
  if (!manage_error.ok() && failure == nullptr) {
    SetCondition(next, {{"type", "ReplicaFailure"},
                        {"status", "True"},
                        {"lastTransitionTime", FormatRfc3339(now / kSecond * kSecond)},
                        {"reason", diff < 0 ? "FailedCreate" : "FailedDelete"},
                        {"message", manage_error.message()}});
  } else if (manage_error.ok() && failure != nullptr) {
    Json kept = Json::array();
    for (const Json& c : next["conditions"]) {
      if (c.value("type", "") != "ReplicaFailure") kept.push_back(c);
    }
    next["conditions"] = kept;
  }
  if (next.contains("conditions") && next["conditions"].empty()) next.erase("conditions");
  if (next != status) {
    // updateReplicaSetStatus: on a conflict (the ReplicaSet changed since the informer saw it),
    // once more on the ReplicaSet as it is now.
    const std::string path = ObjectPath(Resource("apps", "v1", "replicasets"), ns, key.second, "status");
    Json body = rs;
    body["status"] = next;
    auto r = api.Update(path, body);
    if (!r.ok() && r.status().code() == StatusCode::kConflict) {
      auto fresh = api.Get(ObjectPath(Resource("apps", "v1", "replicasets"), ns, key.second));
      if (fresh.ok()) {
        (*fresh)["status"] = next;
        r = api.Update(path, *fresh);
      }
    }
    if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
  }
  if (next_available) queue_.AddAfter(key, *next_available);
  if (!claim_error.ok()) return claim_error;
  return manage_error;
}

}  // namespace arbiter::controllers
