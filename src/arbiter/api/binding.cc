// The pods/binding subresource: the one path by which a pod is bound to a node.
#include "arbiter/api/server.h"

#include "arbiter/api/field_validation.h"
#include "arbiter/api/server_internal.h"

namespace arbiter::api {

using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares

Response ApiServer::Bind(const Request& r, const Target& t) {
  auto body = ParseBody(r);
  if (!body.ok()) return Error(400, body.status().message());
  std::string node;
  if (body->is_object() && body->contains("target") && (*body)["target"].is_object()) {
    const Json& target = (*body)["target"];
    if (target.contains("name") && !target["name"].is_string()) {
      return Error(422, "Binding \"" + t.name + "\" is invalid: target.name: must be a string");
    }
    node = target.value("name", "");
  }
  if (node.empty()) return Error(422, "Binding \"" + t.name + "\" is invalid: target.name: Required value");
  for (RaceRetry retry(clock_); retry.Again();) {
    auto pod = store_.Get("pods", t.ns, t.name);
    if (!pod.ok()) return Error(404, "pods \"" + t.name + "\" not found", "pods", t.name);
    Json next = *pod->body.tree();
    const std::string current = next["spec"].value("nodeName", "");
    if (!current.empty()) {
      return Error(409, "Operation cannot be fulfilled on pods/binding \"" + t.name + "\": pod " + t.name +
                            " is already assigned to node \"" + current + "\"", "pods", t.name);
    }
    if (next["metadata"].contains("deletionTimestamp")) {
      return Error(409, "Operation cannot be fulfilled on pods/binding \"" + t.name + "\": pod is being deleted",
                   "pods", t.name);
    }
    if (const Json& gates = next["spec"].value("schedulingGates", Json::array()); gates.is_array() && !gates.empty()) {
      // setPodNodeAndMetadata's check: a gated pod is not the scheduler's yet.
      return Error(409, "Operation cannot be fulfilled on pods/binding \"" + t.name + "\": pod " + t.name +
                            " has non-empty .spec.schedulingGates", "pods", t.name);
    }
    if (body->contains("metadata") && (*body)["metadata"].is_object() && (*body)["metadata"].contains("uid") &&
        (*body)["metadata"]["uid"] != next["metadata"].value("uid", "")) {
      return Error(409, "Operation cannot be fulfilled on pods/binding \"" + t.name +
                            "\": the UID in the binding does not match the pod's", "pods", t.name);
    }
    next["spec"]["nodeName"] = node;
    Json& conds = next["status"]["conditions"];
    if (!conds.is_array()) conds = Json::array();
    Json cond = {{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", Now()}};
    bool replaced = false;
    for (Json& c : conds) {
      if (c.value("type", "") == "PodScheduled") {
        c = cond;
        replaced = true;
      }
    }
    if (!replaced) conds.push_back(cond);
    auto updated = store_.Update("pods", t.ns, t.name, next, pod->revision);
    if (updated.ok()) {
      return JsonResponse(201, {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", Json::object()},
                                {"status", "Success"}, {"code", 201}});
    }
    if (updated.status().code() != StatusCode::kConflict) return Error(updated.status());
  }
  return Error(409, "Operation cannot be fulfilled on pods/binding \"" + t.name + "\": the pod keeps changing",
               "pods", t.name);
}

}  // namespace arbiter::api
