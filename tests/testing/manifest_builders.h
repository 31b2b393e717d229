// Manifest builders for scenario tests: small fluent classes and functions that render Kubernetes
// objects (Nodes, Pods, KubeSchedulerConfigurations) and common pod-spec fragments as YAML, so a
// test can write a cluster in a line or two and hand it to Plan() (see plan_harness.h). Each
// builder renders exactly one document (starting with "---") or one fragment; the defaults below
// are part of what the tests expect, so changing one changes the YAML of every test that uses it.
#pragma once

#include <string>
#include <utility>

namespace arbiter::testing {

inline constexpr char kZone[] = "topology.kubernetes.io/zone";

// A Node. Defaults: no labels ("{}"), schedulable, 4 CPUs, 32Gi memory, 110 pods, no taints.
class NodeY {
 public:
  explicit NodeY(std::string name) : name_(std::move(name)) {}
  // Labels as a YAML flow map, e.g. "{zone: a}".
  NodeY& Labels(std::string flow_map) {
    labels_ = std::move(flow_map);
    return *this;
  }
  NodeY& Cpu(std::string v) {
    cpu_ = std::move(v);
    return *this;
  }
  NodeY& Memory(std::string v) {
    memory_ = std::move(v);
    return *this;
  }
  NodeY& MaxPods(std::string v) {
    pods_ = std::move(v);
    return *this;
  }
  // Another allocatable resource, e.g. ("example.com/gpu", "2").
  NodeY& Allocatable(const std::string& resource, const std::string& v) {
    extra_alloc_ += "    " + resource + ": \"" + v + "\"\n";
    return *this;
  }
  // Appends a taint; taints are listed in the order they are added.
  NodeY& Taint(const std::string& key, const std::string& value, const std::string& effect) {
    taints_ += "  - {key: " + key + ", value: \"" + value + "\", effect: " + effect + "}\n";
    return *this;
  }
  // A taint whose value does not matter to the test (it is rendered as "x").
  NodeY& Taint(const std::string& key, const std::string& effect) { return Taint(key, "x", effect); }
  // spec.unschedulable: true.
  NodeY& Cordon() {
    cordoned_ = true;
    return *this;
  }
  // An entry of status.images: one name and its size, e.g. ("registry.example/app:1", "800Mi").
  NodeY& Image(const std::string& name, int64_t size_bytes) {
    images_ += "  - names: [\"" + name + "\"]\n    sizeBytes: " + std::to_string(size_bytes) + "\n";
    return *this;
  }
  std::string Y() const {
    std::string s = "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name_ + "\n  labels: " + labels_ +
                    "\nspec:\n  unschedulable: " + (cordoned_ ? "true" : "false") + "\n";
    if (!taints_.empty()) s += "  taints:\n" + taints_;
    s += "status:\n  allocatable:\n    cpu: \"" + cpu_ + "\"\n    memory: " + memory_ + "\n    pods: \"" + pods_ +
         "\"\n" + extra_alloc_;
    if (!images_.empty()) s += "  images:\n" + images_;
    return s;
  }

 private:
  std::string name_;
  std::string labels_ = "{}";
  std::string cpu_ = "4";
  std::string memory_ = "32Gi";
  std::string pods_ = "110";
  std::string extra_alloc_;
  std::string taints_;
  std::string images_;
  bool cordoned_ = false;
};

// A Pod with one container "c". Defaults: namespace "default", no labels ("{}"), pending (no
// nodeName), and a container request of cpu 100m only.
class PodY {
 public:
  explicit PodY(std::string name) : name_(std::move(name)) {}
  PodY& Ns(std::string ns) {
    ns_ = std::move(ns);
    return *this;
  }
  // spec.nodeName: the pod is running there. Empty: pending.
  PodY& On(std::string node) {
    node_ = std::move(node);
    return *this;
  }
  // Labels as a YAML flow map, e.g. "{app: web}".
  PodY& Labels(std::string flow_map) {
    labels_ = std::move(flow_map);
    return *this;
  }
  // Raw YAML placed under metadata after the labels, indented by two spaces.
  PodY& Metadata(const std::string& lines) {
    meta_ += lines;
    return *this;
  }
  PodY& PriorityClass(std::string name) {
    priority_class_ = std::move(name);
    return *this;
  }
  // Container requests; the first call replaces the default cpu 100m.
  PodY& Request(const std::string& resource, const std::string& v) {
    if (default_request_) {
      requests_.clear();
      default_request_ = false;
    }
    requests_ += "        " + resource + ": \"" + v + "\"\n";
    return *this;
  }
  PodY& Cpu(const std::string& v) { return Request("cpu", v); }
  PodY& Memory(const std::string& v) { return Request("memory", v); }
  // A container without any requests.
  PodY& NoRequests() {
    requests_.clear();
    default_request_ = false;
    return *this;
  }
  // A container port with the same host port; protocol and host IP are left out when empty.
  PodY& HostPort(int port, const std::string& protocol = "", const std::string& host_ip = "") {
    ports_ += "    - containerPort: " + std::to_string(port) + "\n      hostPort: " + std::to_string(port) + "\n";
    if (!protocol.empty()) ports_ += "      protocol: " + protocol + "\n";
    if (!host_ip.empty()) ports_ += "      hostIP: " + host_ip + "\n";
    return *this;
  }
  // An init container (init0, init1, ...) requesting `cpu`; a sidecar has restartPolicy Always.
  PodY& InitContainer(const std::string& cpu, bool sidecar = false) {
    init_ += "  - name: init" + std::to_string(init_count_++) + "\n";
    if (sidecar) init_ += "    restartPolicy: Always\n";
    init_ += "    resources:\n      requests:\n        cpu: \"" + cpu + "\"\n";
    return *this;
  }
  // The container's image; further calls add containers c1, c2, ... with that image and no requests.
  PodY& Image(const std::string& image) {
    if (image_.empty()) {
      image_ = image;
    } else {
      extra_containers_ += "  - name: c" + std::to_string(++extra_count_) + "\n    image: \"" + image + "\"\n";
    }
    return *this;
  }
  PodY& OverheadCpu(const std::string& cpu) {
    overhead_ = "  overhead:\n    cpu: \"" + cpu + "\"\n";
    return *this;
  }
  // Raw YAML placed under spec (after nodeName, before the containers), indented by two spaces.
  PodY& Spec(const std::string& lines) {
    spec_ += lines;
    return *this;
  }
  // Raw YAML placed under status, indented by two spaces. Nothing: no status.
  PodY& Status(const std::string& lines) {
    status_ += lines;
    return *this;
  }
  std::string Y() const {
    std::string s = "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name_ + "\n  namespace: " + ns_ +
                    "\n  labels: " + labels_ + "\n" + meta_ + "spec:\n";
    if (!priority_class_.empty()) s += "  priorityClassName: " + priority_class_ + "\n";
    if (!node_.empty()) s += "  nodeName: " + node_ + "\n";
    s += spec_ + overhead_;
    if (!init_.empty()) s += "  initContainers:\n" + init_;
    s += "  containers:\n  - name: c\n";
    if (!image_.empty()) s += "    image: \"" + image_ + "\"\n";
    if (!requests_.empty()) s += "    resources:\n      requests:\n" + requests_;
    if (!ports_.empty()) s += "    ports:\n" + ports_;
    s += extra_containers_;
    if (!status_.empty()) s += "status:\n" + status_;
    return s;
  }

 private:
  std::string name_;
  std::string ns_ = "default";
  std::string node_;
  std::string labels_ = "{}";
  std::string meta_;
  std::string priority_class_;
  std::string requests_ = "        cpu: 100m\n";
  bool default_request_ = true;
  std::string ports_;
  std::string init_;
  int init_count_ = 0;
  std::string overhead_;
  std::string image_;
  std::string extra_containers_;
  int extra_count_ = 0;
  std::string spec_;
  std::string status_;
};

// `n` running pods named <node>-web-0, <node>-web-1, ... on `node`, with `labels`.
inline std::string WebPodsOn(const std::string& node, int n, const std::string& labels = "{app: web}") {
  std::string s;
  for (int i = 0; i < n; ++i) s += PodY(node + "-web-" + std::to_string(i)).On(node).Labels(labels).Y();
  return s;
}

// Node labels putting a node in `zone`, followed by the `more` labels ("key: value, ...") if any.
inline std::string ZoneLabels(const std::string& zone, const std::string& more = "") {
  return std::string("{") + kZone + ": " + zone + (more.empty() ? "" : ", " + more) + "}";
}

inline std::string HostLabels(const std::string& host) { return "{kubernetes.io/hostname: " + host + "}"; }

// A KubeSchedulerConfiguration whose body (its fields after `kind`) is `body`.
inline std::string Config(const std::string& body) {
  return "---\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body;
}

// A KubeSchedulerConfiguration with one profile, default-scheduler, whose other fields are the
// `profile` lines (indented by two spaces).
inline std::string ProfileConfig(const std::string& profile) {
  return Config("profiles:\n- schedulerName: default-scheduler\n" + profile);
}

// Pod-spec fragments, for PodY::Spec.

// A required pod (anti-)affinity term. `kind` is podAffinity or podAntiAffinity; `extra` holds
// more fields of the term as "        key: value\n" lines.
inline std::string RequiredPodTerm(const std::string& kind, const std::string& match_labels, const std::string& key,
                                   const std::string& extra = "") {
  return "  affinity:\n    " + kind + ":\n      requiredDuringSchedulingIgnoredDuringExecution:\n" +
         "      - labelSelector: {matchLabels: " + match_labels + "}\n        topologyKey: " + key + "\n" + extra;
}

// One topology spread constraint over pods labelled app=web; `when` is its whenUnsatisfiable and
// `extra` holds more fields of the constraint as "    key: value\n" lines.
inline std::string SpreadWeb(int max_skew, const std::string& key, const std::string& extra = "",
                             const std::string& when = "DoNotSchedule") {
  return "  topologySpreadConstraints:\n  - maxSkew: " + std::to_string(max_skew) + "\n    topologyKey: " + key +
         "\n    whenUnsatisfiable: " + when + "\n    labelSelector: {matchLabels: {app: web}}\n" + extra;
}

// SpreadWeb with whenUnsatisfiable: ScheduleAnyway, which scores instead of filtering.
inline std::string SoftSpreadWeb(int max_skew, const std::string& key) {
  return SpreadWeb(max_skew, key, "", "ScheduleAnyway");
}

}  // namespace arbiter::testing
