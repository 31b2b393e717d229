// The disruption controller.
#include "arbiter/controllers/disruption.h"

#include <map>
#include <set>

#include "arbiter/controllers/object_json.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/rules/pod_rules.h"

namespace arbiter::controllers {

Status DisruptionController::Sync(Context& ctx, const Changes& changed) {
  const Timestamp now = ctx.now();
  const store::Informer& budgets = ctx.informer("poddisruptionbudgets");
  for (const Key& key : changed.at("poddisruptionbudgets")) queue_.Add(key, now);
  // Any change of a namespace's pods or controllers may move its budgets: they are few.
  std::set<std::string> namespaces;
  for (const char* r : {"pods", "replicasets", "deployments", "statefulsets"}) {
    for (const Key& key : changed.at(r)) namespaces.insert(key.first);
  }
  for (const std::string& ns : namespaces) {
    const auto& all = budgets.objects();
    for (auto it = all.lower_bound({ns, ""}); it != all.end() && it->first.first == ns; ++it) queue_.Add(it->first, now);
  }
  return queue_.ProcessDue(
      now, [&](const Key& key) { return SyncBudget(ctx, key); },
      [](const Key& key) { return "poddisruptionbudget " + key.first + "/" + key.second; });
}

Status DisruptionController::SyncBudget(Context& ctx, const Key& key) {
  const Timestamp now = ctx.now();
  const store::Object* object = ctx.informer("poddisruptionbudgets").Find(key);
  if (object == nullptr) return Status::Ok();
  const store::Body::Tree pdb_tree = object->body.tree();
  const Json& pdb = *pdb_tree;
  const std::string& ns = key.first;
  // The budget as the scheduler reads it (selector, minAvailable / maxUnavailable).
  manifest::LoadResult decoded = manifest::DecodeJson("poddisruptionbudget " + ns + "/" + key.second, pdb);
  if (!decoded.ok() || decoded.objects.pdbs.empty()) return Status::Ok();  // the API validated it
  model::PodDisruptionBudget budget = decoded.objects.pdbs.front().object;
  budget.disruptions_allowed.reset();

  const store::Informer& pods = ctx.informer("pods");
  std::vector<const Json*> matching;
  const auto& all = pods.objects();
  for (auto it = all.lower_bound({ns, ""}); it != all.end() && it->first.first == ns; ++it) {
    const store::Body::Tree pod_tree = it->second->body.tree();
    const Json& pod = *pod_tree;
    if (model::BudgetCounts(ns, budget.selector, ns, LabelsOf(pod))) matching.push_back(&pod);
  }
  // disruptedPods: kept while the pod is there, not being deleted, and younger than the timeout.
  const Json* disrupted = Find(pdb, {"status", "disruptedPods"});
  Json still = Json::object();
  std::set<std::string> disrupted_names;
  std::optional<Timestamp> next_expiry;
  if (disrupted != nullptr && disrupted->is_object()) {
    for (const auto& [name, when] : disrupted->items()) {
      const store::Object* p = pods.Find({ns, name});
      auto at = when.is_string() ? ParseRfc3339(when.get<std::string>()) : StatusOr<Timestamp>(InvalidArgument(""));
      if (p == nullptr || BeingDeleted(*p->body.tree()) || !at.ok() || *at + kDisruptedPodTimeout < now) continue;
      still[name] = when;
      disrupted_names.insert(name);
      next_expiry = next_expiry ? std::min(*next_expiry, *at + kDisruptedPodTimeout) : *at + kDisruptedPodTimeout;
    }
  }
  if (next_expiry) queue_.AddAfter(key, *next_expiry + kSecond);

  // expectedPods.
  const bool by_scale = budget.max_unavailable || (budget.min_available && budget.min_available->percent);
  int64_t expected = static_cast<int64_t>(matching.size());
  std::string sync_error;
  if (by_scale) {
    expected = 0;
    std::set<std::string> counted;  // controllers by uid
    for (const Json* pod : matching) {
      const Json* ref = ControllerRef(*pod);
      const std::string kind = ref != nullptr ? ref->value("kind", "") : "";
      const store::Object* controller = nullptr;
      if (kind == "ReplicaSet") {
        controller = ctx.informer("replicasets").Find({ns, ref->value("name", "")});
        // A ReplicaSet of a Deployment: the Deployment's scale.
        const store::Body::Tree controller_pinned = controller != nullptr ? controller->body.tree() : nullptr;
        if (const Json* up = controller != nullptr ? ControllerRef(*controller_pinned) : nullptr;
            up != nullptr && up->value("kind", "") == "Deployment") {
          if (const store::Object* d = ctx.informer("deployments").Find({ns, up->value("name", "")})) controller = d;
        }
      } else if (kind == "StatefulSet") {
        controller = ctx.informer("statefulsets").Find({ns, ref->value("name", "")});
      }
      if (controller == nullptr) {
        sync_error = "found no controllers for pod \"" + NameOf(*pod) + "\"";
        break;
      }
      if (counted.insert(Uid(*controller->body.tree())).second) expected += IntAt(*controller->body.tree(), {"spec", "replicas"}, 1);
    }
  }
  int64_t healthy = 0;
  for (const Json* pod : matching) {
    if (!BeingDeleted(*pod) && PodReady(*pod) && !disrupted_names.contains(NameOf(*pod))) ++healthy;
  }
  const int64_t desired = model::DesiredHealthy(budget, expected);
  const int64_t allowed = sync_error.empty() ? model::AllowedDisruptions(budget, expected, healthy) : 0;

  Json status = StatusOf(pdb);
  Json next = status;
  next["observedGeneration"] = IntAt(pdb, {"metadata", "generation"}, 0);
  next["disruptionsAllowed"] = allowed;
  next["currentHealthy"] = healthy;
  next["desiredHealthy"] = desired;
  next["expectedPods"] = expected;
  if (still.empty()) {
    next.erase("disruptedPods");
  } else {
    next["disruptedPods"] = still;
  }
  const std::string t = FormatRfc3339(now / kSecond * kSecond);
  if (!sync_error.empty()) {
    rules::SetStatusCondition(next, {{"type", "DisruptionAllowed"}, {"status", "False"}, {"reason", "SyncFailed"},
                                     {"message", sync_error}, {"observedGeneration", next["observedGeneration"]}},
                              t);
  } else {
    rules::SetStatusCondition(
        next,
        {{"type", "DisruptionAllowed"}, {"status", allowed > 0 ? "True" : "False"},
         {"reason", allowed > 0 ? "SufficientPods" : "InsufficientPods"},
         // Upstream leaves the message empty; the API's schema requires one, so it says what the
         // reason means.
         {"message", std::to_string(healthy) + " healthy pod(s), " + std::to_string(desired) + " needed"},
         {"observedGeneration", next["observedGeneration"]}},
        t);
  }
  if (next == status) return Status::Ok();
  Json body = pdb;
  body["status"] = next;
  auto r = ctx.api().Update(ObjectPath(Resource("policy", "v1", "poddisruptionbudgets"), ns, key.second, "status"), body);
  if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
  return Status::Ok();
}

}  // namespace arbiter::controllers
