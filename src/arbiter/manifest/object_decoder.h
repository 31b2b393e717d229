// The object decoders of the manifest loader (internal to src/arbiter/manifest): one
// ObjectDecoder per load turns each document's tree (through a Node view) into model objects,
// recording every problem with its field's path. The field decoders shared by several kinds are
// in object_fields.cc; each kind family has its file (core_kinds.cc: Node and Pod;
// policy_kinds.cc: PriorityClass, PodDisruptionBudget, Namespace; workload_kinds.cc: the
// Workload API; config_kinds.cc: scheduler and kubelet configuration, pod metrics), and
// object_decoder.cc dispatches on kind. whole_input.cc holds the checks that need every object.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "arbiter/manifest/decoder.h"
#include "arbiter/manifest/loader.h"

namespace arbiter::manifest::internal {

inline constexpr int kMaxListDepth = 8;
inline constexpr int64_t kInt32Min = INT32_MIN;
inline constexpr int64_t kInt32Max = INT32_MAX;
// DefaultPreemptionArgs.minRuntimeSeconds (and preemptionWindowSeconds) at most: ten years.
inline constexpr int64_t kMaxMinRuntimeSeconds = int64_t{10} * 366 * 24 * 3600;

using D = Decoder;

// "PATH[I]".
inline std::string Idx(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// Decodes one object document into `out`.
class ObjectDecoder {
 public:
  ObjectDecoder(ClusterObjects& out, std::vector<std::string>& errors) : out_(out), d_("", &errors) {}
  void set_strict_strings(bool strict) { d_.set_strict_strings(strict); }
  // Unknown fields: what becomes of them, and whether documents are checked against their
  // kinds' schemas at all (`plan`'s input; the API checks its requests itself).
  void set_unknown_fields(UnknownFields mode, std::vector<std::string>* warnings, bool check_schema) {
    d_.set_unknown_fields(mode, warnings);
    check_schema_ = check_schema;
  }

  // `list_depth` counts the Lists around `root`.
  void Decode(const Node& root, Origin origin, int list_depth = 0);
  // Decode, with an exception from a tree (yaml-cpp may throw on exotic ones) reported as the
  // document's error: the document is reported, never the process lost.
  void DecodeReported(const Node& root, const Origin& origin, int list_depth = 0);
  // One label selector on its own (DecodeLabelSelectorJson).
  std::optional<model::LabelSelector> LabelSelector(const Node& n, const std::string& path) {
    return DecodeLabelSelector(n, path);
  }

 private:
  struct Meta {
    std::string ns;
    std::string name;
    std::string uid;
    model::LabelMap labels;
    std::optional<Timestamp> creation;
    std::optional<Timestamp> deletion;
  };

  Meta DecodeMeta(const Node& root, bool namespaced);
  void DecodeWorkloadController(const Node& root, Origin origin);
  bool check_schema_ = false;
  void DecodeNode(const Node& root, Origin origin);
  void DecodePod(const Node& root, Origin origin);
  void DecodePriorityClass(const Node& root, Origin origin);
  void DecodePdb(const Node& root, Origin origin);
  void DecodeNamespace(const Node& root, Origin origin);
  void DecodeWorkload(const Node& root, Origin origin);
  void DecodePodGroup(const Node& root, Origin origin);
  void DecodeCompositePodGroup(const Node& root, Origin origin);
  void DecodeConfig(const Node& root, Origin origin);
  void DecodePodMetrics(const Node& root, Origin origin);
  void DecodeKubeletConfig(const Node& root, Origin origin);
  void DecodePvc(const Node& root, Origin origin);
  void DecodePv(const Node& root, Origin origin);
  void DecodeStorageClass(const Node& root, Origin origin);
  void DecodeCsiNode(const Node& root, Origin origin);
  void DecodePodVolumes(const Node& spec, const std::string& pod_name, model::Pod& pod);
  std::vector<std::string> DecodeAccessModes(const Node& n, const std::string& path);
  int64_t DecodeStorage(const Node& n, const std::string& path);  // a storage quantity, in bytes

  model::Resources DecodeResourceList(const Node& n, const std::string& path);
  std::optional<model::LabelSelector> DecodeLabelSelector(const Node& n,
                                                          const std::string& path);
  std::vector<model::Requirement> DecodeRequirements(const Node& n, const std::string& path,
                                                     bool node_selector, bool fields);
  std::optional<model::NodeSelectorTerm> DecodeNodeSelectorTerm(const Node& n,
                                                                 const std::string& path);
  model::PodAffinityTerm DecodePodAffinityTerm(const Node& n, const std::string& path);
  model::PodAffinityRules DecodePodAffinityRules(const Node& n, const std::string& path);
  void DecodeAffinity(const Node& n, const std::string& path, model::Affinity& a);
  std::vector<model::Toleration> DecodeTolerations(const Node& n, const std::string& path);
  std::vector<model::TopologySpreadConstraint> DecodeSpread(const Node& n,
                                                            const std::string& path);
  std::optional<model::IntOrPercent> DecodeIntOrPercent(const Node& n,
                                                        const std::string& path);
  void CheckLabels(const model::LabelMap& labels, const std::string& path);
  // Parts of the Workload API objects. `prefix` is the path of the object holding the field,
  // ending in a dot ("spec." or "spec.podGroupTemplates[0].").
  struct GroupPolicyValue {
    model::GroupPolicy policy = model::GroupPolicy::kBasic;
    int32_t count = 0;
  };
  GroupPolicyValue DecodeGroupPolicy(const Node& parent, const std::string& prefix,
                                     std::string_view count_field);
  model::DisruptionMode DecodeDisruptionMode(const Node& parent, const std::string& prefix);
  model::GroupPriority DecodeGroupPriority(const Node& parent, const std::string& prefix);
  std::optional<model::WorkloadReference> DecodeWorkloadRef(const Node& parent,
                                                            const std::string& prefix);
  std::string DecodeParentName(const Node& parent, const std::string& prefix);
  // A template's name: a DNS label, unique across the Workload's whole template tree.
  std::string DecodeTemplateName(const Node& t, const std::string& prefix,
                                 std::map<std::string, std::string>& names);
  std::vector<model::PodGroupTemplate> DecodePodGroupTemplates(
      const Node& parent, const std::string& prefix, int depth,
      std::map<std::string, std::string>& names);
  std::vector<model::CompositePodGroupTemplate> DecodeCompositeTemplates(
      const Node& parent, const std::string& prefix, int depth,
      std::map<std::string, std::string>& names);

  ClusterObjects& out_;
  Decoder d_;
  std::set<std::pair<int, int>> lists_seen_;  // positions of the List items read in this document
};

// The checks that need the whole input (duplicates, references between objects, the group
// hierarchy), each problem reported on the object where it shows first.
// Drops the fields of the feature gates the input's configuration turns off, from every pod and
// PodGroup (model::DropDisabledFields), as kube-apiserver drops them when objects are written.
void DropDisabledFields(ClusterObjects& objs);
void CheckWholeInput(const ClusterObjects& objs, std::vector<std::string>& errors);

}  // namespace arbiter::manifest::internal
