// Table columns and cells per resource.
#include "arbiter/api/tables.h"

#include <string>

#include "arbiter/model/objects.h"

namespace arbiter::api {

namespace {

using Json = nlohmann::json;

struct Column {
  const char* name;
  const char* type;
  int priority;  // 0: always shown; 1: with -o wide
};

const Json& At(const Json& o, std::initializer_list<const char*> path) {
  static const Json kNull;
  const Json* cur = &o;
  for (const char* p : path) {
    if (!cur->is_object() || !cur->contains(p)) return kNull;
    cur = &(*cur)[p];
  }
  return *cur;
}

std::string Str(const Json& v, const std::string& fallback = "<none>") {
  if (v.is_string() && !v.get<std::string>().empty()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return fallback;
}

std::string Age(const Json& o, Timestamp now, const char* field = "creationTimestamp") {
  const Json& t = At(o, {"metadata", field});
  if (!t.is_string()) return "<unknown>";
  auto ts = ParseRfc3339(t.get<std::string>());
  if (!ts.ok()) return "<unknown>";
  return HumanDuration(now - *ts);
}

std::string PodStatus(const Json& pod) {
  if (At(pod, {"metadata", "deletionTimestamp"}).is_string()) return "Terminating";
  // kubectl's printPod: a PodScheduled condition with reason SchedulingGated names the status.
  const Json& conditions = At(pod, {"status", "conditions"});
  if (conditions.is_array()) {
    for (const Json& c : conditions) {
      if (c.is_object() && c.value("type", Json()) == "PodScheduled" &&
          c.value("reason", Json()) == model::kPodReasonSchedulingGated) {
        return std::string(model::kPodReasonSchedulingGated);
      }
    }
  }
  const Json& reason = At(pod, {"status", "reason"});
  if (reason.is_string() && !reason.get<std::string>().empty()) return reason.get<std::string>();
  return Str(At(pod, {"status", "phase"}), "Pending");
}

std::string PodReady(const Json& pod) {
  const Json& containers = At(pod, {"spec", "containers"});
  const size_t total = containers.is_array() ? containers.size() : 0;
  size_t ready = 0;
  const Json& statuses = At(pod, {"status", "containerStatuses"});
  if (statuses.is_array()) {
    for (const Json& s : statuses) ready += s.value("ready", false) ? 1 : 0;
  }
  return std::to_string(ready) + "/" + std::to_string(total);
}

std::string NodeStatus(const Json& node) {
  std::string status = "Unknown";
  const Json& conds = At(node, {"status", "conditions"});
  if (conds.is_array()) {
    for (const Json& c : conds) {
      if (c.value("type", "") == "Ready") status = c.value("status", "") == "True" ? "Ready" : "NotReady";
    }
  }
  if (At(node, {"spec", "unschedulable"}).is_boolean() && At(node, {"spec", "unschedulable"}).get<bool>()) {
    status += ",SchedulingDisabled";
  }
  return status;
}

std::string Restarts(const Json& pod) {
  int64_t n = 0;
  const Json& statuses = At(pod, {"status", "containerStatuses"});
  if (statuses.is_array()) {
    for (const Json& s : statuses) n += s.value("restartCount", int64_t{0});
  }
  return std::to_string(n);
}

std::string IntOrString(const Json& v) { return v.is_null() ? "N/A" : Str(v, "N/A"); }

// kubectl's short access modes (RWO, ROX, RWX, RWOP), joined by commas.
std::string AccessModes(const Json& modes) {
  std::string out;
  if (!modes.is_array()) return out;
  for (const Json& m : modes) {
    const std::string v = Str(m, "");
    const std::string s = v == "ReadWriteOnce" ? "RWO" : v == "ReadOnlyMany" ? "ROX" : v == "ReadWriteMany" ? "RWX"
                        : v == "ReadWriteOncePod" ? "RWOP" : v;
    out += (out.empty() ? "" : ",") + s;
  }
  return out;
}

std::vector<Column> Columns(const std::string& resource) {
  if (resource == "persistentvolumeclaims") {
    return {{"Name", "string", 0},         {"Status", "string", 0},       {"Volume", "string", 0},
            {"Capacity", "string", 0},     {"Access Modes", "string", 0}, {"StorageClass", "string", 0},
            {"VolumeAttributesClass", "string", 0}, {"Age", "string", 0}, {"VolumeMode", "string", 1}};
  }
  if (resource == "persistentvolumes") {
    return {{"Name", "string", 0},      {"Capacity", "string", 0},     {"Access Modes", "string", 0},
            {"Reclaim Policy", "string", 0}, {"Status", "string", 0}, {"Claim", "string", 0},
            {"StorageClass", "string", 0}, {"VolumeAttributesClass", "string", 0}, {"Reason", "string", 0},
            {"Age", "string", 0},       {"VolumeMode", "string", 1}};
  }
  if (resource == "storageclasses") {
    return {{"Name", "string", 0}, {"Provisioner", "string", 0}, {"ReclaimPolicy", "string", 0},
            {"VolumeBindingMode", "string", 0}, {"AllowVolumeExpansion", "string", 0}, {"Age", "string", 0}};
  }
  if (resource == "pods") {
    return {{"Name", "string", 0},           {"Ready", "string", 0},          {"Status", "string", 0},
            {"Restarts", "string", 0},       {"Age", "string", 0},            {"IP", "string", 1},
            {"Node", "string", 1},           {"Nominated Node", "string", 1}, {"Readiness Gates", "string", 1}};
  }
  if (resource == "nodes") {
    return {{"Name", "string", 0},        {"Status", "string", 0},      {"Roles", "string", 0},
            {"Age", "string", 0},         {"Version", "string", 0},     {"Internal-IP", "string", 1},
            {"External-IP", "string", 1}, {"OS-Image", "string", 1},    {"Kernel-Version", "string", 1},
            {"Container-Runtime", "string", 1}};
  }
  if (resource == "priorityclasses") {
    return {{"Name", "string", 0}, {"Value", "integer", 0}, {"Global-Default", "boolean", 0}, {"Age", "string", 0},
            {"PreemptionPolicy", "string", 0}};
  }
  if (resource == "poddisruptionbudgets") {
    return {{"Name", "string", 0}, {"Min Available", "string", 0}, {"Max Unavailable", "string", 0},
            {"Allowed Disruptions", "integer", 0}, {"Age", "string", 0}};
  }
  if (resource == "events") {
    return {{"Last Seen", "string", 0}, {"Type", "string", 0},    {"Reason", "string", 0},
            {"Object", "string", 0},    {"Message", "string", 0}, {"Source", "string", 1},
            {"First Seen", "string", 1}, {"Count", "integer", 1}, {"Name", "string", 1}};
  }
  return {{"Name", "string", 0}, {"Age", "string", 0}};
}

Json Cells(const std::string& resource, const Json& o, Timestamp now) {
  const std::string name = Str(At(o, {"metadata", "name"}), "");
  if (resource == "persistentvolumeclaims") {
    const bool bound = Str(At(o, {"status", "phase"}), "") == "Bound";
    return {name,
            Str(At(o, {"status", "phase"}), "Pending"),
            Str(At(o, {"spec", "volumeName"}), ""),
            bound ? Str(At(o, {"status", "capacity", "storage"}), "") : "",
            bound ? AccessModes(At(o, {"status", "accessModes"})) : "",
            Str(At(o, {"spec", "storageClassName"}), "<unset>"),
            Str(At(o, {"spec", "volumeAttributesClassName"}), "<unset>"),
            Age(o, now),
            Str(At(o, {"spec", "volumeMode"}), "Filesystem")};
  }
  if (resource == "persistentvolumes") {
    const Json& ref = At(o, {"spec", "claimRef"});
    const std::string claim =
        ref.is_object() ? Str(At(ref, {"namespace"}), "") + "/" + Str(At(ref, {"name"}), "") : std::string();
    return {name,
            Str(At(o, {"spec", "capacity", "storage"}), ""),
            AccessModes(At(o, {"spec", "accessModes"})),
            Str(At(o, {"spec", "persistentVolumeReclaimPolicy"}), "Retain"),
            Str(At(o, {"status", "phase"}), "Pending"),
            claim,
            Str(At(o, {"spec", "storageClassName"}), ""),
            Str(At(o, {"spec", "volumeAttributesClassName"}), "<unset>"),
            Str(At(o, {"status", "reason"}), ""),
            Age(o, now),
            Str(At(o, {"spec", "volumeMode"}), "Filesystem")};
  }
  if (resource == "storageclasses") {
    std::string shown = name;
    if (Str(At(o, {"metadata", "annotations", "storageclass.kubernetes.io/is-default-class"}), "") == "true") {
      shown += " (default)";
    }
    return {shown,
            Str(At(o, {"provisioner"}), ""),
            Str(At(o, {"reclaimPolicy"}), "Delete"),
            Str(At(o, {"volumeBindingMode"}), "Immediate"),
            At(o, {"allowVolumeExpansion"}).is_boolean() && At(o, {"allowVolumeExpansion"}).get<bool>() ? "true" : "false",
            Age(o, now)};
  }
  if (resource == "pods") {
    return {name,
            PodReady(o),
            PodStatus(o),
            Restarts(o),
            Age(o, now),
            Str(At(o, {"status", "podIP"})),
            Str(At(o, {"spec", "nodeName"})),
            Str(At(o, {"status", "nominatedNodeName"})),
            "<none>"};
  }
  if (resource == "nodes") {
    return {name, NodeStatus(o), "<none>", Age(o, now), Str(At(o, {"status", "nodeInfo", "kubeletVersion"}), ""),
            "<none>", "<none>", Str(At(o, {"status", "nodeInfo", "osImage"}), "<unknown>"),
            Str(At(o, {"status", "nodeInfo", "kernelVersion"}), "<unknown>"),
            Str(At(o, {"status", "nodeInfo", "containerRuntimeVersion"}), "<unknown>")};
  }
  if (resource == "priorityclasses") {
    return {name, o.value("value", int64_t{0}), o.value("globalDefault", false), Age(o, now),
            o.value("preemptionPolicy", std::string("PreemptLowerPriority"))};
  }
  if (resource == "poddisruptionbudgets") {
    return {name, IntOrString(At(o, {"spec", "minAvailable"})), IntOrString(At(o, {"spec", "maxUnavailable"})),
            At(o, {"status", "disruptionsAllowed"}).is_number() ? At(o, {"status", "disruptionsAllowed"}) : Json(0),
            Age(o, now)};
  }
  if (resource == "events") {
    const Json& last = o.contains("lastTimestamp") && o["lastTimestamp"].is_string() ? o["lastTimestamp"]
                                                                                      : At(o, {"metadata", "creationTimestamp"});
    std::string last_seen = "<unknown>";
    if (last.is_string()) {
      if (auto t = ParseRfc3339(last.get<std::string>()); t.ok()) last_seen = HumanDuration(now - *t);
    }
    std::string kind = Str(At(o, {"involvedObject", "kind"}), "");
    for (auto& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return {last_seen,
            Str(At(o, {"type"}), ""),
            Str(At(o, {"reason"}), ""),
            kind + "/" + Str(At(o, {"involvedObject", "name"}), ""),
            Str(At(o, {"message"}), ""),
            Str(At(o, {"source", "component"}), ""),
            Age(o, now),
            o.value("count", int64_t{1}),
            name};
  }
  return {name, Age(o, now)};
}

}  // namespace

std::string HumanDuration(Duration d) {
  // kube's k8s.io/apimachinery/pkg/util/duration.HumanDuration.
  const int64_t seconds = d / kSecond;
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return std::to_string(seconds) + "s";
  const int64_t minutes = seconds / 60;
  if (minutes < 10) {
    const int64_t s = seconds % 60;
    return s == 0 ? std::to_string(minutes) + "m" : std::to_string(minutes) + "m" + std::to_string(s) + "s";
  }
  if (minutes < 60 * 3) return std::to_string(minutes) + "m";
  const int64_t hours = minutes / 60;
  if (hours < 8) {
    const int64_t m = minutes % 60;
    return m == 0 ? std::to_string(hours) + "h" : std::to_string(hours) + "h" + std::to_string(m) + "m";
  }
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) {
    const int64_t h = hours % 24;
    return h == 0 ? std::to_string(hours / 24) + "d" : std::to_string(hours / 24) + "d" + std::to_string(h) + "h";
  }
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    const int64_t dd = (hours / 24) % 365;
    return dd == 0 ? std::to_string(hours / 24 / 365) + "y" : std::to_string(hours / 24 / 365) + "y" + std::to_string(dd) + "d";
  }
  return std::to_string(hours / 24 / 365) + "y";
}

Json ToTable(const std::string& resource, const std::vector<const Json*>& objects, Timestamp now,
             bool with_column_definitions) {
  Json t = {{"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", Json::object()}};
  t["columnDefinitions"] = Json::array();
  if (with_column_definitions) {
    for (const Column& c : Columns(resource)) {
      t["columnDefinitions"].push_back(
          {{"name", c.name}, {"type", c.type}, {"format", c.name == std::string("Name") ? "name" : ""},
           {"description", ""}, {"priority", c.priority}});
    }
  }
  t["rows"] = Json::array();
  for (const Json* o : objects) t["rows"].push_back({{"cells", Cells(resource, *o, now)}, {"object", *o}});
  return t;
}

}  // namespace arbiter::api
