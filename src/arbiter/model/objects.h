// The cluster objects Arbiter schedules with, as plain values: Node, Pod, PriorityClass,
// PodDisruptionBudget, Namespace and the scheduler configuration. These are the model, not the
// wire format: manifest/ converts Kubernetes manifests into them at the edge, and every field
// here is already validated and defaulted.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/base/time.h"
#include "arbiter/model/best_fit_victims.h"
#include "arbiter/model/labels.h"
#include "arbiter/model/resources.h"
#include "arbiter/model/storage.h"
#include "arbiter/model/taints.h"

namespace arbiter::model {

// One entry of a node's status.images: the names it is known by (tags and digests) and its size.
struct ContainerImage {
  std::vector<std::string> names;
  int64_t size_bytes = 0;
};

struct Node {
  std::string name;
  LabelMap labels;
  std::vector<Taint> taints;
  bool unschedulable = false;
  Resources allocatable;
  Resources capacity;  // status.capacity; allocatable when absent (what node-pressure signals start from)
  std::vector<ContainerImage> images;  // status.images (ImageLocality)
};

struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;  // null matches no pod
  std::vector<std::string> namespaces;
  std::optional<LabelSelector> namespace_selector;  // {} = all namespaces
  std::string topology_key;
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
};

struct NodeAffinity {
  std::optional<NodeSelector> required;
  std::vector<PreferredSchedulingTerm> preferred;
};

struct PodAffinityRules {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
  bool empty() const { return required.empty() && preferred.empty(); }
};

struct Affinity {
  NodeAffinity node_affinity;
  PodAffinityRules pod_affinity;
  PodAffinityRules pod_anti_affinity;
};

enum class UnsatisfiableAction { kDoNotSchedule, kScheduleAnyway };
enum class NodeInclusionPolicy { kHonor, kIgnore };

struct TopologySpreadConstraint {
  int32_t max_skew = 1;
  std::string topology_key;
  UnsatisfiableAction when_unsatisfiable = UnsatisfiableAction::kDoNotSchedule;
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  NodeInclusionPolicy node_affinity_policy = NodeInclusionPolicy::kHonor;
  NodeInclusionPolicy node_taints_policy = NodeInclusionPolicy::kIgnore;
  std::vector<std::string> match_label_keys;
};

struct HostPort {
  int32_t port = 0;
  std::string protocol = "TCP";
  std::string host_ip = "0.0.0.0";
};

enum class PreemptionPolicy { kPreemptLowerPriority, kNever };
std::string_view PreemptionPolicyName(PreemptionPolicy p);
// The policy a name (as PreemptionPolicyName writes it) stands for; nullopt for any other text.
std::optional<PreemptionPolicy> ParsePreemptionPolicy(std::string_view name);

inline constexpr int64_t kDefaultTerminationGracePeriodSeconds = 30;

// The PodScheduled condition kube-apiserver gives a pod created with scheduling gates (status
// False), until the scheduler sets its own; kubectl's STATUS column shows the reason.
inline constexpr std::string_view kPodReasonSchedulingGated = "SchedulingGated";
inline constexpr std::string_view kSchedulingGatedMessage = "Scheduling is blocked due to non-empty scheduling gates";
// kube-apiserver's answer to a pod created with both spec.nodeName and scheduling gates
// (ValidatePodCreate), after the field path.
inline constexpr std::string_view kGatedNodeNameForbidden =
    "Forbidden: cannot be set until all schedulingGates have been cleared";

// A pod's pod-level spec.resources requests and what its requests are without them, kept so that
// a profile with the PodLevelResources gate off can drop the field (DropDisabledFields).
struct PodLevelResources {
  std::vector<std::pair<std::string, int64_t>> requests;  // (name, amount in Resources::Set's units)
  Resources container_requests;  // EffectivePodRequests without the pod level
  int64_t container_non_zero_milli_cpu = 0;
  int64_t container_non_zero_memory = 0;
};

struct Pod {
  // metadata
  std::string ns = "default";
  std::string name;
  std::string uid;
  LabelMap labels;
  std::optional<Timestamp> creation_timestamp;
  std::optional<Timestamp> deletion_timestamp;
  // spec
  std::string node_name;  // set: bound and running
  std::string scheduler_name = "default-scheduler";
  std::string priority_class_name;
  std::optional<int32_t> spec_priority;                  // as written; admission fills `priority`
  std::optional<PreemptionPolicy> spec_preemption_policy;  // as written
  Resources requests;  // effective requests (containers, init containers, overhead)
  // The CPU and memory requests that scoring counts: the same sum with 100m / 200Mi put in for
  // each container that states no CPU / memory request (schedutil's non-zero defaults).
  int64_t non_zero_milli_cpu = model::kDefaultMilliCpuRequest;
  int64_t non_zero_memory = model::kDefaultMemoryRequest;
  LabelMap node_selector;
  Affinity affinity;
  std::vector<Toleration> tolerations;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  std::vector<HostPort> host_ports;
  int64_t termination_grace_period_seconds = kDefaultTerminationGracePeriodSeconds;
  std::string pod_group_name;  // spec.schedulingGroup.podGroupName
  // The uid of the controller that owns the pod (metadata.ownerReferences' entry with
  // controller: true), empty for none: the pod's lineage, which a controller's replacement pods
  // share (the thrash guard counts preemptions by it).
  std::string controller_uid;
  // spec.schedulingGates' names, in order: while any remains the pod waits outside activeQ
  // (the SchedulingGates PreEnqueue plugin).
  std::vector<std::string> scheduling_gates;
  // spec.volumes that name a claim (persistentVolumeClaim or ephemeral), in order.
  std::vector<PodVolume> volumes;
  // The image of each init and app container, in that order, as written ("" for a container
  // that names none): ImageLocality.
  std::vector<std::string> container_images;
  // The app containers' names and requests, in order (for the kubelet's eviction messages).
  std::vector<std::pair<std::string, Resources>> container_requests;
  // Set when spec.resources gives pod-level requests (already part of `requests`).
  std::shared_ptr<const PodLevelResources> pod_level_resources;
  // status
  std::optional<Timestamp> start_time;
  std::string nominated_node_name;
  // The condition DisruptionTarget=True with reason PreemptionByScheduler: the pod is being
  // evicted to make room for a higher-priority pod.
  bool preempted_by_scheduler = false;

  // Filled by admission.
  int32_t priority = 0;
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;

  std::string Key() const { return ns + "/" + name; }
};

// metrics.k8s.io/v1beta1 PodMetrics: what a pod's containers use, as metrics-server reports it
// (cpu, memory; ephemeral-storage is read too, for the nodefs signal).
struct PodMetrics {
  std::string ns;
  std::string name;
  std::vector<std::pair<std::string, Resources>> containers;  // usage per container, in order
  Resources Usage() const;                                     // the sum over containers
  std::string Key() const { return ns + "/" + name; }
};

// One hard eviction threshold of a KubeletConfiguration: `signal` < quantity, or < a percentage
// of the node's capacity.
struct EvictionThreshold {
  std::string signal;               // memory.available, nodefs.available, imagefs.available, nodefs.inodesFree
  int64_t quantity = 0;             // bytes (inodes for nodefs.inodesFree)
  std::optional<double> percentage; // 0..100, when written as "10%"
  std::string text;                 // as written, for messages ("100Mi", "10%")
};

// kubelet.config.k8s.io/v1beta1 KubeletConfiguration, the part node-pressure eviction reads.
// Without evictionHard the kubelet's Linux defaults apply; a given evictionHard replaces them
// (signals it leaves out have no threshold), as the kubelet does.
struct KubeletConfig {
  std::vector<EvictionThreshold> eviction_hard;
  static KubeletConfig Defaults();
};

// How a container's requests combine into the pod's, as Kubernetes computes it
// (resourcehelper.PodRequests): the sum over app containers and restartable ("sidecar") init
// containers, at least the largest one-shot init container plus the sidecars started before it,
// plus the pod overhead.
struct ContainerRequests {
  Resources requests;
  bool init = false;
  bool restartable = false;  // an init container with restartPolicy: Always
};
// With PodLevelResources, a pod-level request (spec.resources.requests, as (name, amount in
// Resources::Set's units) pairs of resources IsSupportedPodLevelResource accepts) replaces the
// containers' sum for that resource; the overhead is added after (resourcehelper.PodRequests).
Resources EffectivePodRequests(const std::vector<ContainerRequests>& containers,
                               const Resources& overhead,
                               const std::vector<std::pair<std::string, int64_t>>& pod_level = {});
// True for the resources spec.resources may set at pod level (IsSupportedPodLevelResource).
bool IsSupportedPodLevelResource(std::string_view name);

struct PriorityClass {
  std::string name;
  int32_t value = 0;
  bool global_default = false;
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  std::string description;
};

// An IntOrString such as `minAvailable: 2` or `maxUnavailable: "50%"`.
struct IntOrPercent {
  int32_t value = 0;
  bool percent = false;
};

struct PodDisruptionBudget {
  std::string ns = "default";
  std::string name;
  LabelSelector selector;
  std::optional<IntOrPercent> min_available;
  std::optional<IntOrPercent> max_unavailable;
  std::optional<int32_t> disruptions_allowed;  // status, when the input gives it
  std::vector<std::string> disrupted_pods;      // status.disruptedPods keys
};

// How many of a budget's `expected` pods must stay healthy: minAvailable, or expected less
// maxUnavailable but never below 0 (percentages of `expected` rounded up, as upstream's
// disruption controller computes desiredHealthy in getExpectedPodCount); 0 when the budget sets
// neither.
int32_t DesiredHealthy(const PodDisruptionBudget& pdb, int64_t expected);

// The disruptions a budget allows with `healthy` of its `expected` pods healthy: healthy less
// DesiredHealthy, never below 0 (the disruption controller's disruptionsAllowed). The one rule
// of the disruption controller's status, the eviction subresource's fallback and the scheduler's
// count of budgets without a status.
int64_t AllowedDisruptions(const PodDisruptionBudget& pdb, int64_t expected, int64_t healthy);

// Whether a budget (in `budget_ns`, selecting with `selector`) counts a pod of `pod_ns` with
// `labels`: the same namespace and a non-empty selector that matches ("a PDB with a nil or empty
// selector matches nothing", as the scheduler's preemption and the eviction subresource read
// it). The one matching rule of the scheduler, the eviction subresource and the disruption
// controller.
inline bool BudgetCounts(std::string_view budget_ns, const LabelSelector& selector, std::string_view pod_ns,
                         const LabelMap& labels) {
  return budget_ns == pod_ns && !selector.empty() && selector.Matches(labels);
}

struct Namespace {
  std::string name;
  LabelMap labels;
};

// --- The scheduling.k8s.io Workload API (v1beta1 Workload and PodGroup, v1alpha3
// CompositePodGroup). Decoded and validated; the gang scheduler is what will act on them.

// How the members of a group may be disrupted (preempted): one at a time, or only all together.
enum class DisruptionMode { kSingle, kAll };
std::string_view DisruptionModeName(DisruptionMode m);

// A group's scheduling policy: `basic: {}` (plain per-pod scheduling) or `gang: {...}`
// (all-or-nothing once the minimum is reached).
enum class GroupPolicy { kBasic, kGang };

// spec.workloadRef: the Workload template a group was made from.
struct WorkloadReference {
  std::string workload_name;
  std::string template_name;
};

// The priority fields shared by groups and their templates. The first three are as written;
// admission resolves `priority_class_name` into `priority` and `preemption_policy`, as it does
// for a pod (and, like for a pod, fills in the global default's name when no class is given).
// Only PodGroups and CompositePodGroups are resolved: in Workload templates the two resolved
// fields keep their defaults.
struct GroupPriority {
  std::string priority_class_name;
  std::optional<int32_t> spec_priority;                    // as written
  std::optional<PreemptionPolicy> spec_preemption_policy;  // as written

  // Filled by admission.
  int32_t priority = 0;
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
};

struct PodGroup {
  std::string ns = "default";
  std::string name;
  std::optional<WorkloadReference> workload_ref;
  std::string parent;  // spec.parentCompositePodGroupName; empty for a root
  GroupPolicy policy = GroupPolicy::kBasic;
  int32_t min_count = 0;  // gang.minCount (>= 1) for a gang; 0 for basic
  DisruptionMode disruption_mode = DisruptionMode::kSingle;
  GroupPriority priority;

  std::string Key() const { return ns + "/" + name; }
};

struct CompositePodGroup {
  std::string ns = "default";
  std::string name;
  WorkloadReference workload_ref;  // required
  std::string parent;              // spec.parentCompositePodGroupName; empty for a root
  GroupPolicy policy = GroupPolicy::kBasic;
  int32_t min_group_count = 0;  // gang.minGroupCount (>= 1) for a gang; 0 for basic
  DisruptionMode disruption_mode = DisruptionMode::kSingle;
  GroupPriority priority;

  std::string Key() const { return ns + "/" + name; }
};

// The most levels a group hierarchy (or a Workload's template tree) may have, leaves included.
inline constexpr int kMaxGroupHierarchyDepth = 4;
// The most templates one list of a Workload (or of a composite template) may hold.
inline constexpr size_t kMaxTemplatesPerList = 8;

struct PodGroupTemplate {
  std::string name;
  GroupPolicy policy = GroupPolicy::kBasic;
  int32_t min_count = 0;
  DisruptionMode disruption_mode = DisruptionMode::kSingle;
  GroupPriority priority;
};

struct CompositePodGroupTemplate {
  std::string name;
  GroupPolicy policy = GroupPolicy::kBasic;
  int32_t min_group_count = 0;
  DisruptionMode disruption_mode = DisruptionMode::kSingle;
  GroupPriority priority;
  std::vector<PodGroupTemplate> pod_group_templates;
  std::vector<CompositePodGroupTemplate> composite_pod_group_templates;
};

struct TypedLocalObjectReference {
  std::string api_group;
  std::string kind;
  std::string name;
};

struct Workload {
  std::string ns = "default";
  std::string name;
  std::optional<TypedLocalObjectReference> controller_ref;
  // Exactly one of the two lists is non-empty.
  std::vector<PodGroupTemplate> pod_group_templates;
  std::vector<CompositePodGroupTemplate> composite_pod_group_templates;

  std::string Key() const { return ns + "/" + name; }
};

enum class ScoringStrategy { kLeastAllocated, kMostAllocated, kRequestedToCapacityRatio };

// How DefaultPreemption picks victims on a node: kube-scheduler's rule (every lower-priority pod
// removed, then reprieved by importance), Nomad's (only pods at least the priority delta lower;
// by ascending priority, best fit by Nomad's distance, then the superset filter), or Arbiter's
// Optimal (the exact best set under the order kube-scheduler's node choice compares, bounded).
enum class VictimSelection { kKubernetes, kNomad, kOptimal };

// What preemption does about PodDisruptionBudgets: upstream's best effort (a candidate that
// violates budgets is chosen only when no other is found), or never violate one (Arbiter's
// `pdbPolicy: Strict`: the pod stays pending instead).
enum class PdbPolicy { kBestEffort, kStrict };

// How preemption weighs what a victim set costs beyond upstream's node-choice rules: not at all,
// or by the work it throws away (Arbiter's `victimCost: LostWork`: CPU requests times the time
// since each victim started, compared just before upstream's start-time rule).
enum class VictimCost { kNone, kLostWork };

struct ResourceWeight {
  std::string name;
  int64_t weight = 1;
};

struct UtilizationShapePoint {
  int64_t utilization = 0;  // 0..100
  int64_t score = 0;        // 0..10
};

// DefaultPreemptionArgs.maxPreemptionsPerPod at most, and so the times a lineage's record keeps.
inline constexpr int32_t kMaxPreemptionsPerPod = 64;

// The parts of kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration that Arbiter honours.
struct SchedulerConfig {
  std::string scheduler_name = "default-scheduler";
  // 0 = adaptive, as upstream.
  int32_t percentage_of_nodes_to_score = 0;
  int64_t pod_initial_backoff_seconds = 1;
  int64_t pod_max_backoff_seconds = 10;
  // DefaultPreemptionArgs.
  int32_t min_candidate_nodes_percentage = 10;
  int32_t min_candidate_nodes_absolute = 100;
  // Arbiter's extensions of DefaultPreemptionArgs, each off by default (docs/upstream-rules.md,
  // "Deliberate departures"):
  //   victimSelection  the victim policy on a node (above);
  //   priorityDelta    how much lower than the preemptor a victim's priority must be; unset:
  //                    Nomad's 10 under the Nomad policy, any lower priority (1) under Kubernetes';
  //   pdbPolicy        Strict: a candidate whose victims would violate a budget is no candidate;
  //   minRuntimeSeconds  a pod that started less than this long ago is no victim;
  //   victimCost       LostWork: among candidates tied before upstream's start-time rule, the
  //                    one whose victims lose the least CPU-seconds of work;
  //   maxPreemptionsPerPod, preemptionWindowSeconds  the thrash guard: a pod whose lineage (its
  //                    controller's uid) was preempted that many times within the window is no
  //                    victim (both set, or neither);
  //   crossNodePreemption  a pod rejected by anti-affinity or topology spread may evict the
  //                    lower-priority pods of other nodes whose presence rejects it.
  VictimSelection victim_selection = VictimSelection::kKubernetes;
  std::optional<int32_t> priority_delta;
  PdbPolicy pdb_policy = PdbPolicy::kBestEffort;
  int64_t min_runtime_seconds = 0;
  VictimCost victim_cost = VictimCost::kNone;
  int32_t max_preemptions_per_pod = 0;
  int64_t preemption_window_seconds = 0;
  bool cross_node_preemption = false;
  bool ThrashGuard() const { return max_preemptions_per_pod > 0 && preemption_window_seconds > 0; }
  // The delta in force for the configured victim policy.
  int32_t EffectivePriorityDelta() const {
    return priority_delta.value_or(victim_selection == VictimSelection::kNomad ? kNomadPriorityDelta : 1);
  }
  // NodeResourcesFitArgs.scoringStrategy.
  ScoringStrategy scoring_strategy = ScoringStrategy::kLeastAllocated;
  std::vector<ResourceWeight> scoring_resources = {{"cpu", 1}, {"memory", 1}};
  std::vector<UtilizationShapePoint> requested_to_capacity_shape = {{0, 0}, {100, 10}};
  // InterPodAffinityArgs.
  int32_t hard_pod_affinity_weight = 1;
  // Score plugin weights by plugin name; plugins absent here keep their default weight.
  std::map<std::string, int32_t> score_weights;
  // Plugins switched off in the profile (plugins.*.disabled).
  std::vector<std::string> disabled_plugins;
  // featureGates.
  std::map<std::string, bool> feature_gates = {{"GenericWorkload", true},
                                               {"CompositePodGroup", true}};
};

}  // namespace arbiter::model
