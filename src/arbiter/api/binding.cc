// The pods/binding subresource: the one path by which a pod is bound to a node.
#include "arbiter/api/server.h"

#include <utility>

#include "arbiter/api/field_validation.h"
#include "arbiter/api/server_internal.h"
#include "arbiter/rules/pod_rules.h"

namespace arbiter::api {

using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares

Response ApiServer::Bind(const Request& r, const Target& t) {
  auto body = ParseBody(r);
  if (!body.ok()) return Error(400, body.status().message());
  // BindingREST.Create's checks, in its order: the binding names the pod of the URL, then
  // ValidatePodBinding (a target of kind Node or none, with a name).
  const Json* meta = body->is_object() && body->contains("metadata") ? &(*body)["metadata"] : nullptr;
  const Json* named = meta != nullptr && meta->is_object() && meta->contains("name") ? &(*meta)["name"] : nullptr;
  if (named == nullptr || !named->is_string() || named->get<std::string>() != t.name) {
    return Error(400, "name in URL does not match name in Binding object");
  }
  std::string node;
  if (body->contains("target") && (*body)["target"].is_object()) {
    const Json& target = (*body)["target"];
    if (target.contains("name") && !target["name"].is_string()) {
      return Error(422, "Binding \"" + t.name + "\" is invalid: target.name: must be a string");
    }
    if (const Json& kind = target.value("kind", Json("")); !kind.is_string() || (kind != "" && kind != "Node")) {
      return Error(422, "Binding \"" + t.name + "\" is invalid: target.kind: Unsupported value: " + kind.dump() +
                            ": supported values: \"Node\", \"<empty>\"");
    }
    node = target.value("name", "");
  }
  if (node.empty()) return Error(422, "Binding \"" + t.name + "\" is invalid: target.name: Required value");
  // What the binding carries onto the pod: its metadata's uid (a precondition), annotations and
  // labels, and (PodTopologyLabels admission) the target node's zone and region labels.
  rules::PodBinding binding;
  binding.node = node;
  if (meta != nullptr && meta->is_object()) {
    if (meta->contains("uid") && !(*meta)["uid"].is_string()) {
      return Error(400, "Binding in version \"v1\" cannot be handled as a Binding: metadata.uid: expects a string");
    }
    binding.uid = meta->value("uid", "");
    for (const auto& [field, to] : {std::pair{"annotations", &binding.annotations}, std::pair{"labels", &binding.labels}}) {
      const Json& m = meta->value(field, Json::object());
      if (!m.is_object()) return Error(400, std::string("Binding in version \"v1\" cannot be handled as a Binding: metadata.") + field + ": expects an object");
      for (const auto& [k, v] : m.items()) {
        if (!v.is_string()) {
          return Error(400, std::string("Binding in version \"v1\" cannot be handled as a Binding: metadata.") + field + "." + k + ": expects a string");
        }
        (*to)[k] = v.get<std::string>();
      }
    }
  }
  if (auto n = store_.Get("nodes", "", node); n.ok()) {
    for (auto& [k, v] : rules::TopologyLabelsOf(*n->body.tree())) binding.labels[k] = std::move(v);
  }
  for (RaceRetry retry(clock_); retry.Again();) {
    auto pod = store_.Get("pods", t.ns, t.name);
    if (!pod.ok()) return Error(404, "pods \"" + t.name + "\" not found", "pods", t.name);
    Json next = pod->body.Copy();
    // One rule for every binding: the scheduler's go through it too (rules/pod_rules.h).
    if (Status st = rules::BindPod(next, binding, Now()); !st.ok()) {
      // A failed uid precondition is the storage's Conflict on the pod; the rest are the
      // binding's own (assignPod wraps them as a Conflict on pods/binding).
      const std::string on = st.code() == StatusCode::kConflict ? "pods" : "pods/binding";
      return Error(409, "Operation cannot be fulfilled on " + on + " \"" + t.name + "\": " + st.message(), on, t.name);
    }
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
