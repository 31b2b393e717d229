// The pods/eviction subresource: a delete that honours PodDisruptionBudgets.
#include "arbiter/api/server.h"

#include <algorithm>

#include "arbiter/api/field_validation.h"
#include "arbiter/api/server_internal.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/manifest/names.h"

namespace arbiter::api {

using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares

Response ApiServer::Evict(const Request& r, const Target& t) {
  auto body = ParseBody(r);
  if (!body.ok()) return Error(400, body.status().message());
  // The body is a policy/v1 Eviction of this very pod (upstream: "name in URL does not match
  // name in Eviction object").
  if (!body->is_object()) return Error(400, "the eviction body must be an Eviction object");
  if (body->value("kind", "Eviction") != "Eviction") {
    return Error(400, "the eviction body is a " + body->value("kind", std::string()) + ", not an Eviction");
  }
  if (const std::string named = ObjectName(*body); !named.empty() && named != t.name) {
    return Error(400, "name in URL does not match name in Eviction object");
  }
  if (body->contains("deleteOptions") && !(*body)["deleteOptions"].is_object() && !(*body)["deleteOptions"].is_null()) {
    return Error(400, "deleteOptions must be an object");
  }
  auto pod = store_.Get("pods", t.ns, t.name);
  if (!pod.ok()) return Error(404, "pods \"" + t.name + "\" not found", "pods", t.name);
  // The PodDisruptionBudget selecting the pod must allow one more disruption (upstream's
  // eviction REST: at most one budget; its status as the disruption controller keeps it).
  auto pdbs = store_.List("poddisruptionbudgets", t.ns);
  if (!pdbs.ok()) return Error(pdbs.status());
  auto labels_of = [](const Json& object) {
    const auto md = object.find("metadata");
    if (md == object.end() || !md->is_object()) return model::LabelMap();
    const auto labels = md->find("labels");
    return manifest::LabelMapOf(labels == md->end() ? nullptr : &*labels);
  };
  const model::LabelMap pod_labels = labels_of(*pod->body.tree());
  // The budgets as the scheduler reads them, matched by the one rule (model::BudgetCounts).
  std::vector<std::pair<const store::Object*, model::PodDisruptionBudget>> covering;
  for (const auto& pdb : pdbs->items) {
    manifest::LoadResult decoded = manifest::DecodeJson("poddisruptionbudget " + t.ns + "/" + pdb.name, *pdb.body.tree());
    if (!decoded.ok() || decoded.objects.pdbs.empty()) {
      return Error(500, "the disruption budget " + pdb.name + " cannot be read", "pods", t.name);
    }
    model::PodDisruptionBudget budget = std::move(decoded.objects.pdbs.front().object);
    if (model::BudgetCounts(t.ns, budget.selector, t.ns, pod_labels)) covering.emplace_back(&pdb, std::move(budget));
  }
  if (covering.size() > 1) {
    return Error(500, "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                 "pods", t.name);
  }
  bool pod_ready = false;
  for (const Json& c : pod->body->value("status", Json::object()).value("conditions", Json::array())) {
    pod_ready = pod_ready || (c.value("type", "") == "Ready" && c.value("status", "") == "True");
  }
  const bool terminal = pod->body->value("status", Json::object()).value("phase", "") == "Succeeded" ||
                        pod->body->value("status", Json::object()).value("phase", "") == "Failed";
  if (!covering.empty() && !terminal && !(*pod->body.tree())["metadata"].contains("deletionTimestamp")) {
    const store::Object& pdb = *covering.front().first;
    const model::PodDisruptionBudget& budget = covering.front().second;
    const Json& status = pdb.body->value("status", Json::object());
    auto refused = [&](int64_t desired, int64_t current) {
      Json b = StatusBody(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.",
                          "pods", t.name);
      b["details"]["causes"] = Json::array({{{"reason", "DisruptionBudget"},
                                             {"message", "The disruption budget " + pdb.name + " needs " + std::to_string(desired) +
                                                             " healthy pods and has " + std::to_string(current) + " currently"}}});
      return JsonResponse(429, b);
    };
    if (status.contains("disruptionsAllowed")) {
      const int64_t allowed = status.value("disruptionsAllowed", int64_t{0});
      const int64_t desired = status.value("desiredHealthy", int64_t{0});
      const int64_t current = status.value("currentHealthy", int64_t{0});
      // IfHealthyBudget: an unready pod may go while the budget is met, without using it up.
      if (pod_ready || current < desired) {
        if (allowed <= 0) return refused(desired, current);
        Json next = pdb.body.Copy();
        next["status"]["disruptionsAllowed"] = allowed - 1;
        next["status"]["disruptedPods"][t.name] = Now();
        auto charged = store_.Update("poddisruptionbudgets", t.ns, pdb.name, next, pdb.revision);
        if (!charged.ok()) {
          return charged.status().code() == StatusCode::kConflict
                     ? Error(429, "Cannot evict pod: the disruption budget changed; try again", "pods", t.name)
                     : Error(charged.status());
        }
      }
    } else {
      // No controller has computed the budget: its pods as the scheduler's fallback counts them
      // (running and not terminating are healthy), with the shared model::DesiredHealthy.
      auto pods = store_.List("pods", t.ns);
      if (!pods.ok()) return Error(pods.status());
      int64_t expected = 0, healthy = 0;
      for (const auto& p : pods->items) {
        if (!model::BudgetCounts(t.ns, budget.selector, p.ns, labels_of(*p.body.tree()))) continue;
        ++expected;
        if (p.body->value("status", Json::object()).value("phase", "") == "Running" &&
            !(*p.body.tree())["metadata"].contains("deletionTimestamp")) {
          ++healthy;
        }
      }
      const int64_t desired = model::DesiredHealthy(budget, expected);
      const bool running = pod->body->value("status", Json::object()).value("phase", "") == "Running";
      if (running && model::AllowedDisruptions(budget, expected, healthy) <= 0) return refused(desired, healthy);
    }
  }
  std::optional<int64_t> grace;
  if (body->is_object() && body->contains("deleteOptions") && (*body)["deleteOptions"].is_object() &&
      (*body)["deleteOptions"].contains("gracePeriodSeconds")) {
    const Json& g = (*body)["deleteOptions"]["gracePeriodSeconds"];
    if (!g.is_number_integer()) return Error(400, "deleteOptions.gracePeriodSeconds must be an integer");
    grace = g.get<int64_t>();
  }
  auto deleted = DeleteObject(*t.info, t.ns, t.name, grace, 0);
  if (!deleted.ok()) return Error(deleted.status(), "pods", t.name);
  return JsonResponse(201, {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", Json::object()},
                            {"status", "Success"}, {"code", 201}});
}

}  // namespace arbiter::api
