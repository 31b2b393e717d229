// Table columns and cells per resource.
#include "arbiter/api/tables.h"

#include "arbiter/api/selectors.h"

#include <string>

#include "arbiter/model/objects.h"

namespace arbiter::api {

using Json = nlohmann::json;

namespace {

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
  std::string reason = Str(At(pod, {"status", "phase"}), "Pending");
  const Json& pod_reason = At(pod, {"status", "reason"});
  if (pod_reason.is_string() && !pod_reason.get<std::string>().empty()) reason = pod_reason.get<std::string>();
  // kubectl's printPod: the last container with something to say names the status.
  const Json& statuses = At(pod, {"status", "containerStatuses"});
  bool running = false;
  if (statuses.is_array()) {
    for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) {
      const Json& waiting = At(*it, {"state", "waiting"});
      const Json& terminated = At(*it, {"state", "terminated"});
      if (waiting.is_object() && !Str(At(waiting, {"reason"}), "").empty()) {
        reason = Str(At(waiting, {"reason"}), "");
      } else if (terminated.is_object() && !Str(At(terminated, {"reason"}), "").empty()) {
        reason = Str(At(terminated, {"reason"}), "");
      } else if (terminated.is_object()) {
        const int64_t signal = terminated.value("signal", int64_t{0});
        reason = signal != 0 ? "Signal:" + std::to_string(signal)
                             : "ExitCode:" + std::to_string(terminated.value("exitCode", int64_t{0}));
      } else if (it->value("ready", false) && At(*it, {"state", "running"}).is_object()) {
        running = true;
      }
    }
  }
  if (reason == "Completed" && running) {
    bool ready = false;
    if (conditions.is_array()) {
      for (const Json& c : conditions) ready = ready || (c.value("type", Json()) == "Ready" && c.value("status", Json()) == "True");
    }
    reason = ready ? "Running" : "NotReady";
  }
  return reason;
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

// A workload's containers and images ("a,b"), for -o wide.
std::string TemplateField(const Json& o, const char* field) {
  std::string out;
  const Json& containers = At(o, {"spec", "template", "spec", "containers"});
  if (!containers.is_array()) return "<none>";
  for (const Json& c : containers) out += (out.empty() ? "" : ",") + Str(At(c, {field}), "");
  return out;
}

// kubectl's SELECTOR column: the selector's string form, <none> when empty.
std::string SelectorText(const Json& selector) {
  const std::string text = FormatLabelSelector(selector);
  return text.empty() ? "<none>" : text;
}

int64_t Count(const Json& o, std::initializer_list<const char*> path) {
  const Json& v = At(o, path);
  return v.is_number_integer() ? v.get<int64_t>() : 0;
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
  if (resource == "deployments") {
    return {{"Name", "string", 0},       {"Ready", "string", 0},      {"Up-to-date", "string", 0},
            {"Available", "string", 0}, {"Age", "string", 0},        {"Containers", "string", 1},
            {"Images", "string", 1},     {"Selector", "string", 1}};
  }
  if (resource == "replicasets") {
    return {{"Name", "string", 0},       {"Desired", "integer", 0}, {"Current", "integer", 0},
            {"Ready", "integer", 0},     {"Age", "string", 0},      {"Containers", "string", 1},
            {"Images", "string", 1},     {"Selector", "string", 1}};
  }
  if (resource == "statefulsets") {
    return {{"Name", "string", 0}, {"Ready", "string", 0}, {"Age", "string", 0}, {"Containers", "string", 1},
            {"Images", "string", 1}};
  }
  if (resource == "jobs") {
    return {{"Name", "string", 0},       {"Status", "string", 0}, {"Completions", "string", 0},
            {"Duration", "string", 0},   {"Age", "string", 0},    {"Containers", "string", 1},
            {"Images", "string", 1},     {"Selector", "string", 1}};
  }
  if (resource == "cronjobs") {
    return {{"Name", "string", 0},    {"Schedule", "string", 0},      {"Timezone", "string", 0},
            {"Suspend", "boolean", 0}, {"Active", "integer", 0},      {"Last Schedule", "string", 0},
            {"Age", "string", 0}};
  }
  if (resource == "services") {
    return {{"Name", "string", 0},        {"Type", "string", 0},    {"Cluster-IP", "string", 0},
            {"External-IP", "string", 0}, {"Port(s)", "string", 0}, {"Age", "string", 0},
            {"Selector", "string", 1}};
  }
  if (resource == "configmaps") return {{"Name", "string", 0}, {"Data", "string", 0}, {"Age", "string", 0}};
  if (resource == "secrets") {
    return {{"Name", "string", 0}, {"Type", "string", 0}, {"Data", "string", 0}, {"Age", "string", 0}};
  }
  if (resource == "serviceaccounts") return {{"Name", "string", 0}, {"Secrets", "string", 0}, {"Age", "string", 0}};
  if (resource == "events") {
    return {{"Last Seen", "string", 0}, {"Type", "string", 0},    {"Reason", "string", 0},
            {"Object", "string", 0},    {"Message", "string", 0}, {"Source", "string", 1},
            {"First Seen", "string", 1}, {"Count", "string", 1}, {"Name", "string", 1}};
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
    // The first address of each type, as kubectl's node printer (ROLES from the node-role labels).
    auto address = [&o](const char* type) -> std::string {
      const Json& list = At(o, {"status", "addresses"});
      if (list.is_array()) {
        for (const Json& a : list) {
          if (a.is_object() && a.value("type", "") == type && a.contains("address")) return Str(a["address"], "<none>");
        }
      }
      return "<none>";
    };
    std::string roles;
    if (const Json& labels = At(o, {"metadata", "labels"}); labels.is_object()) {
      for (const auto& [k, v] : labels.items()) {
        std::string role;
        if (k.starts_with("node-role.kubernetes.io/")) role = k.substr(24);
        if (k == "kubernetes.io/role" && v.is_string()) role = v.get<std::string>();
        if (!role.empty()) roles += (roles.empty() ? "" : ",") + role;
      }
    }
    return {name, NodeStatus(o), roles.empty() ? "<none>" : roles, Age(o, now), Str(At(o, {"status", "nodeInfo", "kubeletVersion"}), ""),
            address("InternalIP"), address("ExternalIP"), Str(At(o, {"status", "nodeInfo", "osImage"}), "<unknown>"),
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
  if (resource == "deployments") {
    const int64_t want = At(o, {"spec", "replicas"}).is_number_integer() ? At(o, {"spec", "replicas"}).get<int64_t>() : 1;
    return {name, std::to_string(Count(o, {"status", "readyReplicas"})) + "/" + std::to_string(want),
            Count(o, {"status", "updatedReplicas"}), Count(o, {"status", "availableReplicas"}), Age(o, now),
            TemplateField(o, "name"), TemplateField(o, "image"), SelectorText(At(o, {"spec", "selector"}))};
  }
  if (resource == "replicasets") {
    const int64_t want = At(o, {"spec", "replicas"}).is_number_integer() ? At(o, {"spec", "replicas"}).get<int64_t>() : 1;
    return {name, want, Count(o, {"status", "replicas"}), Count(o, {"status", "readyReplicas"}), Age(o, now),
            TemplateField(o, "name"), TemplateField(o, "image"), SelectorText(At(o, {"spec", "selector"}))};
  }
  if (resource == "statefulsets") {
    const int64_t want = At(o, {"spec", "replicas"}).is_number_integer() ? At(o, {"spec", "replicas"}).get<int64_t>() : 1;
    return {name, std::to_string(Count(o, {"status", "readyReplicas"})) + "/" + std::to_string(want), Age(o, now),
            TemplateField(o, "name"), TemplateField(o, "image")};
  }
  if (resource == "jobs") {
    // kubectl's printJob: the status from the conditions, completions as done/wanted.
    std::string status = "Running";
    if (const Json& conds = At(o, {"status", "conditions"}); conds.is_array()) {
      for (const Json& c : conds) {
        if (c.value("status", "") != "True") continue;
        const std::string type = c.value("type", "");
        if (type == "Complete" || type == "Failed" || type == "Suspended") status = type;
        if (type == "FailureTarget" && status == "Running") status = "FailureTarget";
        if (type == "SuccessCriteriaMet" && status == "Running") status = "SuccessCriteriaMet";
      }
    }
    const Json& completions = At(o, {"spec", "completions"});
    const std::string wanted = completions.is_number_integer() ? completions.dump()
                                                               : std::string(Count(o, {"status", "succeeded"}) > 0 ? "1" : "0");
    std::string duration;
    auto start = ParseRfc3339(Str(At(o, {"status", "startTime"}), ""));
    auto end = ParseRfc3339(Str(At(o, {"status", "completionTime"}), ""));
    if (start.ok()) duration = HumanDuration((end.ok() ? *end : now) - *start);
    return {name,
            status,
            std::to_string(Count(o, {"status", "succeeded"})) + "/" + wanted,
            duration,
            Age(o, now),
            TemplateField(o, "name"),
            TemplateField(o, "image"),
            SelectorText(At(o, {"spec", "selector"}))};
  }
  if (resource == "cronjobs") {
    const Json& active = At(o, {"status", "active"});
    std::string last = "<none>";
    if (auto t = ParseRfc3339(Str(At(o, {"status", "lastScheduleTime"}), "")); t.ok()) last = HumanDuration(now - *t);
    return {name, Str(At(o, {"spec", "schedule"}), ""), Str(At(o, {"spec", "timeZone"}), "<none>"),
            At(o, {"spec", "suspend"}).is_boolean() && At(o, {"spec", "suspend"}).get<bool>(),
            active.is_array() ? static_cast<int64_t>(active.size()) : int64_t{0}, last, Age(o, now)};
  }
  if (resource == "services") {
    std::string ports;
    if (const Json& ps = At(o, {"spec", "ports"}); ps.is_array()) {
      for (const Json& p : ps) {
        std::string one = Str(At(p, {"port"}), "");
        if (At(p, {"nodePort"}).is_number_integer()) one += ":" + At(p, {"nodePort"}).dump();
        ports += (ports.empty() ? "" : ",") + one + "/" + Str(At(p, {"protocol"}), "TCP");
      }
    }
    std::string selector;
    if (const Json& sel = At(o, {"spec", "selector"}); sel.is_object()) {
      for (const auto& [k, v] : sel.items()) selector += (selector.empty() ? "" : ",") + k + "=" + Str(v, "");
    }
    return {name, Str(At(o, {"spec", "type"}), "ClusterIP"), Str(At(o, {"spec", "clusterIP"}), "<none>"),
            "<none>", ports.empty() ? "<none>" : ports, Age(o, now), selector.empty() ? "<none>" : selector};
  }
  if (resource == "configmaps") {
    int64_t n = 0;
    for (const char* f : {"data", "binaryData"}) n += At(o, {f}).is_object() ? static_cast<int64_t>(At(o, {f}).size()) : 0;
    return {name, n, Age(o, now)};
  }
  if (resource == "secrets") {
    const int64_t n = At(o, {"data"}).is_object() ? static_cast<int64_t>(At(o, {"data"}).size()) : 0;
    return {name, Str(At(o, {"type"}), "Opaque"), n, Age(o, now)};
  }
  if (resource == "serviceaccounts") {
    const int64_t n = At(o, {"secrets"}).is_array() ? static_cast<int64_t>(At(o, {"secrets"}).size()) : 0;
    return {name, n, Age(o, now)};
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

std::optional<TableObject> ParseIncludeObject(std::string_view value) {
  if (value.empty() || value == "Metadata") return TableObject::kMetadata;
  if (value == "Object") return TableObject::kObject;
  if (value == "None") return TableObject::kNone;
  return std::nullopt;
}

Json ToTable(const std::string& resource, const std::vector<const Json*>& objects, Timestamp now, TableObject include,
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
  for (const Json* o : objects) {
    Json row = {{"cells", Cells(resource, *o, now)}};
    if (include == TableObject::kObject) {
      row["object"] = *o;
    } else if (include == TableObject::kMetadata) {
      row["object"] = {{"kind", "PartialObjectMetadata"},
                       {"apiVersion", "meta.k8s.io/v1"},
                       {"metadata", o->value("metadata", Json::object())}};
    }
    t["rows"].push_back(std::move(row));
  }
  return t;
}

}  // namespace arbiter::api
