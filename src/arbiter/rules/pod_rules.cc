// Rules on a pod's body that the API server and the control loop both apply.
#include "arbiter/rules/pod_rules.h"

#include <utility>

namespace arbiter::rules {

using Json = nlohmann::json;

namespace {

std::string StringOr(const Json& o, const char* key) {
  if (!o.is_object()) return "";
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

bool UpdatePodCondition(Json& status, Json condition, const std::string& now) {
  if (!status.is_object()) status = Json::object();
  Json& conds = status["conditions"];
  if (!conds.is_array()) conds = Json::array();
  const std::string type = StringOr(condition, "type");
  condition["lastTransitionTime"] = now;
  for (Json& c : conds) {
    if (StringOr(c, "type") != type) continue;
    // The same status keeps the time it last changed (none, if it had none).
    if (StringOr(c, "status") == StringOr(condition, "status")) {
      if (c.is_object() && c.contains("lastTransitionTime")) {
        condition["lastTransitionTime"] = c["lastTransitionTime"];
      } else {
        condition.erase("lastTransitionTime");
      }
    }
    const bool changed = c != condition;
    c = std::move(condition);
    return changed;
  }
  conds.push_back(std::move(condition));
  return true;
}

bool SetStatusCondition(Json& status, Json condition, const std::string& now) {
  if (!status.is_object()) status = Json::object();
  Json& conds = status["conditions"];
  if (!conds.is_array()) conds = Json::array();
  const std::string type = StringOr(condition, "type");
  const bool has_time = !StringOr(condition, "lastTransitionTime").empty();
  for (Json& c : conds) {
    if (StringOr(c, "type") != type) continue;
    if (!c.is_object()) c = Json::object();
    bool changed = false;
    if (StringOr(c, "status") != StringOr(condition, "status")) {
      c["status"] = condition.value("status", Json());
      c["lastTransitionTime"] = has_time ? condition["lastTransitionTime"] : Json(now);
      changed = true;
    }
    for (const char* field : {"reason", "message", "observedGeneration"}) {
      const Json want = condition.value(field, Json());
      const Json have = c.value(field, Json());
      if (want == have) continue;
      if (want.is_null()) {
        c.erase(field);
      } else {
        c[field] = want;
      }
      changed = true;
    }
    return changed;
  }
  if (!has_time) condition["lastTransitionTime"] = now;
  conds.push_back(std::move(condition));
  return true;
}

Status BindPod(Json& pod, const PodBinding& binding, const std::string& now) {
  if (!pod.is_object()) return InvalidArgument("the pod is not an object");
  const Json& meta = pod.contains("metadata") && pod["metadata"].is_object() ? pod["metadata"] : Json::object();
  const std::string name = StringOr(meta, "name");
  if (!binding.uid.empty() && binding.uid != StringOr(meta, "uid")) {
    return Conflict("Precondition failed: UID in precondition: " + binding.uid + ", UID in object meta: " +
                    StringOr(meta, "uid"));
  }
  if (meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null()) {
    return FailedPrecondition("pod " + name + " is being deleted, cannot be assigned to a host");
  }
  const Json& spec = pod.contains("spec") && pod["spec"].is_object() ? pod["spec"] : Json::object();
  if (const std::string current = StringOr(spec, "nodeName"); !current.empty()) {
    return FailedPrecondition("pod " + name + " is already assigned to node \"" + current + "\"");
  }
  if (auto gates = spec.find("schedulingGates"); gates != spec.end() && gates->is_array() && !gates->empty()) {
    return FailedPrecondition("pod " + name + " has non-empty .spec.schedulingGates");
  }
  pod["spec"]["nodeName"] = binding.node;
  Json& status = pod["status"];
  if (!status.is_object()) status = Json::object();
  status.erase("nominatedNodeName");
  MergeMetadata(pod, "annotations", binding.annotations);
  MergeMetadata(pod, "labels", binding.labels);
  UpdatePodCondition(status, {{"type", "PodScheduled"}, {"status", "True"}}, now);
  return Status::Ok();
}

void MergeMetadata(Json& object, const char* field, const std::map<std::string, std::string>& values) {
  if (values.empty()) return;
  Json& to = object["metadata"][field];
  if (!to.is_object()) to = Json::object();
  for (const auto& [k, v] : values) to[k] = v;
}

std::map<std::string, std::string> TopologyLabelsOf(const Json& node) {
  std::map<std::string, std::string> out;
  if (!node.is_object() || !node.contains("metadata") || !node["metadata"].is_object()) return out;
  const Json& labels = node["metadata"].value("labels", Json::object());
  if (!labels.is_object()) return out;
  for (const char* key : {"topology.kubernetes.io/zone", "topology.kubernetes.io/region"}) {
    if (auto it = labels.find(key); it != labels.end() && it->is_string()) out[key] = it->get<std::string>();
  }
  return out;
}

}  // namespace arbiter::rules
