// The dispatch on kind (and Lists), for every document.
#include "arbiter/manifest/object_decoder.h"

#include "arbiter/manifest/schema_check.h"

namespace arbiter::manifest::internal {

using model::Quantity;

struct KindInfo {
  std::string_view kind;
  std::string_view api_version;
};
constexpr KindInfo kKinds[] = {
    {"Node", "v1"},
    {"Pod", "v1"},
    {"Namespace", "v1"},
    {"PriorityClass", "scheduling.k8s.io/v1"},
    {"PodDisruptionBudget", "policy/v1"},
    {"Workload", "scheduling.k8s.io/v1beta1"},
    {"PodGroup", "scheduling.k8s.io/v1beta1"},
    {"CompositePodGroup", "scheduling.k8s.io/v1alpha3"},
    {"KubeSchedulerConfiguration", "kubescheduler.config.k8s.io/v1"},
    {"PodMetrics", "metrics.k8s.io/v1beta1"},
    {"KubeletConfiguration", "kubelet.config.k8s.io/v1beta1"},
    {"PersistentVolumeClaim", "v1"},
    {"PersistentVolume", "v1"},
    {"StorageClass", "storage.k8s.io/v1"},
    {"CSINode", "storage.k8s.io/v1"},
    // The workload controllers' kinds, kept as JSON for `plan`'s expansion.
    {"Deployment", "apps/v1"},
    {"ReplicaSet", "apps/v1"},
    {"StatefulSet", "apps/v1"},
    {"DaemonSet", "apps/v1"},
    {"Job", "batch/v1"},
    {"CronJob", "batch/v1"},
};

bool IsWorkloadController(std::string_view kind) {
  return kind == "Deployment" || kind == "ReplicaSet" || kind == "StatefulSet" || kind == "DaemonSet" ||
         kind == "Job" || kind == "CronJob";
}

// The API groups whose kinds Arbiter reads: a kind of these it does not know is a mistake (a
// typo in `kind:`), while kinds of other groups (custom resources, networking) are noted.
bool ReadGroup(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  const std::string_view group = slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
  return group.empty() || group == "apps" || group == "batch" || group == "policy" || group == "scheduling.k8s.io" ||
         group == "storage.k8s.io" || group == "kubescheduler.config.k8s.io" || group == "kubelet.config.k8s.io" ||
         group == "metrics.k8s.io";
}

void ObjectDecoder::Decode(const Node& root, Origin origin, int list_depth) {
  d_.set_prefix(origin.ToString());
  if (!root.IsMap()) {
    d_.Error("", "a document must be an object with apiVersion and kind");
    return;
  }
  auto kind = d_.String(D::Child(root, "kind"), "kind");
  auto api = d_.String(D::Child(root, "apiVersion"), "apiVersion");
  if (!kind) {
    if (!D::Present(D::Child(root, "kind"))) {
      // Nomad's files (a job, or a cluster of nodes and allocations) have no kind.
      const bool nomad = D::Present(D::Child(root, "Job")) || D::Present(D::Child(root, "Nodes")) ||
                         D::Present(D::Child(root, "Allocations"));
      d_.Error("kind", nomad ? "is required (this looks like a Nomad file: plan it with --nomad -f CLUSTER.json -f JOB.json)"
                             : "is required");
    }
    return;
  }
  if (*kind == "List") {
    Node items = D::Child(root, "items");
    if (!d_.ExpectSeq(items, "items")) return;
    if (!D::Present(items)) return;
    // Lists may hold Lists. YAML aliases could repeat a List many times or make it hold
    // itself: each List is read once.
    if (list_depth == 0) lists_seen_.clear();
    if (const YAML::Mark m = items.Mark(); !m.is_null() && !lists_seen_.insert({m.line, m.column}).second) {
      d_.Error("items", "this List is already included (through a YAML alias)");
      return;
    }
    if (list_depth >= kMaxListDepth) {
      d_.Error("items", "Lists are nested more than " + std::to_string(kMaxListDepth) + " deep");
      return;
    }
    int i = 0;
    for (const auto& item : items) {
      Origin o = origin;
      o.item = ++i;
      Decode(item, o, list_depth + 1);
    }
    return;
  }
  const KindInfo* info = nullptr;
  for (const auto& k : kKinds) {
    if (k.kind == *kind) info = &k;
  }
  if (info == nullptr && api && !api->empty()) {
    // Not a kind scheduling reads: noted, and checked against its schema where there is one.
    const google::protobuf::Descriptor* m = SchemaMessageOf(*api, *kind);
    if (m != nullptr || !ReadGroup(*api)) {
      origin.kind = *kind;
      Node md = D::Child(root, "metadata");
      Node name = D::Child(md, "name");
      Node nsn = D::Child(md, "namespace");
      if (name.IsScalar()) origin.object = nsn.IsScalar() ? nsn.Scalar() + "/" + name.Scalar() : name.Scalar();
      d_.set_prefix(origin.ToString());
      if (m != nullptr && check_schema_) CheckSchemaFields(root, m, d_);
      out_.skipped.push_back(std::move(origin));
      return;
    }
  }
  if (info == nullptr) {
    std::string known;
    for (const auto& k : kKinds) known += (known.empty() ? "" : ", ") + std::string(k.kind);
    d_.Error("kind", "unknown kind \"" + *kind + "\" (Arbiter reads " + known + " and List)");
    return;
  }
  origin.kind = *kind;
  // Name the object in every later error.
  Node md = D::Child(root, "metadata");
  Node name = D::Child(md, "name");
  if (name.IsScalar()) {
    const bool namespaced = *kind == "Pod" || *kind == "PodDisruptionBudget" || *kind == "Workload" ||
                            *kind == "PodGroup" || *kind == "CompositePodGroup" || *kind == "PodMetrics" ||
                            *kind == "PersistentVolumeClaim" || IsWorkloadController(*kind);
    std::string ns = "default";
    if (Node nsn = D::Child(md, "namespace"); nsn.IsScalar()) ns = nsn.Scalar();
    origin.object = namespaced ? ns + "/" + name.Scalar() : name.Scalar();
  }
  d_.set_prefix(origin.ToString());
  if (!api) {
    if (!D::Present(D::Child(root, "apiVersion"))) d_.Error("apiVersion", "is required");
    return;
  }
  if (*api != info->api_version) {
    d_.Error("apiVersion", "unsupported apiVersion \"" + *api + "\" for kind " + *kind + " (want " +
                               std::string(info->api_version) + ")");
    return;
  }
  if (check_schema_) {
    if (const google::protobuf::Descriptor* m = SchemaMessageOf(*api, *kind)) CheckSchemaFields(root, m, d_);
  }
  if (IsWorkloadController(*kind)) {
    DecodeWorkloadController(root, origin);
  } else if (*kind == "Node") {
    DecodeNode(root, origin);
  } else if (*kind == "Pod") {
    DecodePod(root, origin);
  } else if (*kind == "Namespace") {
    DecodeNamespace(root, origin);
  } else if (*kind == "PriorityClass") {
    DecodePriorityClass(root, origin);
  } else if (*kind == "PodDisruptionBudget") {
    DecodePdb(root, origin);
  } else if (*kind == "KubeSchedulerConfiguration") {
    DecodeConfig(root, origin);
  } else if (*kind == "Workload") {
    DecodeWorkload(root, origin);
  } else if (*kind == "PodGroup") {
    DecodePodGroup(root, origin);
  } else if (*kind == "PodMetrics") {
    DecodePodMetrics(root, origin);
  } else if (*kind == "KubeletConfiguration") {
    DecodeKubeletConfig(root, origin);
  } else if (*kind == "PersistentVolumeClaim") {
    DecodePvc(root, origin);
  } else if (*kind == "PersistentVolume") {
    DecodePv(root, origin);
  } else if (*kind == "StorageClass") {
    DecodeStorageClass(root, origin);
  } else if (*kind == "CSINode") {
    DecodeCsiNode(root, origin);
  } else {
    DecodeCompositePodGroup(root, origin);
  }
}

void ObjectDecoder::DecodeWorkloadController(const Node& root, Origin origin) {
  const size_t errors = d_.error_count();
  DecodeMeta(root, /*namespaced=*/true);
  if (d_.error_count() != errors) return;
  nlohmann::json object = ToJson(root);
  nlohmann::json& md = object["metadata"];
  if (!md.contains("namespace") || !md["namespace"].is_string()) md["namespace"] = "default";
  out_.workload_controllers.push_back({std::move(object), std::move(origin)});
}

void ObjectDecoder::DecodeReported(const Node& root, const Origin& origin, int list_depth) {
  try {
    Decode(root, origin, list_depth);
  } catch (const std::exception& e) {
    d_.set_prefix(origin.ToString());
    d_.Error("", std::string("cannot decode: ") + e.what());
  }
}

}  // namespace arbiter::manifest::internal
