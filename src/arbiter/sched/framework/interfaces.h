// The plugin SDK: one small interface per extension point, as kube-scheduler's framework
// defines them. A plugin implements the interfaces of the points it takes part in. Contracts:
//
// * Plugins are created once per profile and called from the single scheduling thread.
// * Filter and Score are const and side-effect free: they read the CycleState, the pod and the
//   NodeInfo they are given — never the global snapshot — because preemption calls them with
//   pruned copies of nodes.
// * PreFilter computes per-cycle state; its AddPod/RemovePod extensions keep that state right
//   when preemption adds or removes pods on a copied node.
// * Unreserve must be idempotent.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/base/rng.h"
#include "arbiter/base/time.h"
#include "arbiter/model/objects.h"
#include "arbiter/sched/framework/cycle_state.h"
#include "arbiter/sched/framework/status.h"
#include "arbiter/state/cluster_cache.h"
#include "arbiter/state/group_index.h"
#include "arbiter/state/resource_fit.h"
#include "arbiter/state/storage_index.h"

namespace arbiter::sched {

using state::NodeInfo;
using state::PodInfo;
using state::PodInfoPtr;

inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;

class Framework;
class Nominator;

// What plugins may reach beyond their arguments: the current snapshot (for PreFilter and
// PreScore, which look across nodes), the configuration, and the injected clock. PostFilter
// plugins (preemption) also run the profile's filters on copied nodes, update nominations and
// draw from the seeded random source.
class Handle {
 public:
  virtual ~Handle() = default;
  virtual const state::Snapshot& snapshot() const = 0;
  virtual const model::SchedulerConfig& config() const = 0;
  virtual const Clock& clock() const = 0;
  virtual const Framework& framework() const = 0;
  virtual Nominator& nominator() = 0;
  virtual Rng& rng() = 0;
  // True when decisions should be explained (plugins then record what they considered).
  virtual bool explaining() const { return false; }
  // False when nobody reads a failed cycle's message (why each node rejected the pod): work
  // done only to word it may then be left out. Decisions never depend on it.
  virtual bool composing_messages() const { return true; }
  // An identifier of the pod's equivalence class for this cycle — pods of one class get the same
  // verdict from every filter on an unchanged node — or 0 when the cycle's verdicts may depend on
  // more than the node (see FilterPlugin::VerdictDependsOnlyOnNode) and must not be reused.
  virtual uint64_t pod_class() const { return 0; }
  // A clock of real elapsed time for metrics only (never for decisions); nullptr when none.
  virtual const Clock* wall_clock() const { return nullptr; }
  // The pod groups (Workload API) the scheduler knows; nullptr when the GenericWorkload gate is
  // off or there are none. Preemption reads them for group priority and disruption modes.
  virtual const state::GroupIndex* groups() const { return nullptr; }
  // The storage objects (claims, volumes, classes, CSI nodes) the volume plugins read; nullptr
  // when the scheduler keeps none.
  virtual const state::StorageIndex* storage() const { return nullptr; }
  // Appends the bound pods of the PodGroup `leaf`, on every node, in UID order.
  virtual void BoundGroupMembers(const state::GroupNode& leaf, std::vector<PodInfoPtr>& out) const {
    (void)leaf, (void)out;
  }
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view Name() const = 0;
};

// Gate before a pod enters activeQ. Non-success parks the pod until a later event.
class PreEnqueuePlugin : public virtual Plugin {
 public:
  virtual Status PreEnqueue(const PodInfo& pod) const = 0;
};

// Information the queue keeps per pod, which QueueSort orders.
// A queue entry is one pod, or one pod group (the root of a hierarchy) with its pending members:
// the group is scheduled as a unit, ordered by the root's priority.
// A group member's own place in the queue (upstream keeps a QueuedPodInfo per member): how many
// times its group was tried with it, and when it was last (re)added. They order the members.
struct MemberQueueing {
  int attempts = 0;
  Timestamp timestamp = 0;
};

struct QueuedPodInfo {
  PodInfoPtr pod;                   // the pod; for a group, its first pending member
  int32_t priority = 0;             // the pod's priority, or the root group's
  std::string group;                // the root group's key ("namespace/name"); "" for a lone pod
  std::vector<PodInfoPtr> members;  // a group's pending members, in the order they were added
  std::map<std::string, MemberQueueing> member_queueing;  // by member UID
  Timestamp timestamp = 0;          // when the pod was (re)added to the queue
  Timestamp initial_attempt = 0;    // first time it was popped
  int attempts = 0;
  std::set<std::string> unschedulable_plugins;  // plugins that rejected it in its last attempt
  uint64_t sequence = 0;            // monotonic insertion counter, the final tie-break
};

class QueueSortPlugin : public virtual Plugin {
 public:
  // A strict weak order that is total over distinct pods.
  virtual bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
};

class PreFilterExtensions {
 public:
  virtual ~PreFilterExtensions() = default;
  virtual Status AddPod(CycleState& state, const PodInfo& to_schedule, const PodInfo& to_add,
                        const NodeInfo& node) const = 0;
  virtual Status RemovePod(CycleState& state, const PodInfo& to_schedule, const PodInfo& to_remove,
                           const NodeInfo& node) const = 0;
};

// A PreFilter may narrow the nodes worth filtering (nullopt = all nodes).
struct PreFilterResult {
  Status status;
  std::optional<std::set<std::string>> node_names;
};

class PreFilterPlugin : public virtual Plugin {
 public:
  // Returns Skip to have this plugin's Filter not run for this pod; Unschedulable* rejects the
  // pod on every node.
  virtual PreFilterResult PreFilter(CycleState& state, const PodInfo& pod,
                                    std::span<const NodeInfo* const> nodes) const = 0;
  virtual const PreFilterExtensions* Extensions() const { return nullptr; }
};

class FilterPlugin : public virtual Plugin {
 public:
  virtual Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const = 0;
  // False if the verdict depends only on the pod and the node object, never on the pods running
  // on the node: preemption's dry run may then reuse the verdict on the original node.
  virtual bool ReadsNodePods() const { return true; }
  // True if the verdict is a function of the pod and this node's state alone (its object, pods
  // and nominated pods) — not of other nodes or of cluster-wide PreFilter state. The scheduler
  // may then reuse a verdict for an equivalent pod while the node is unchanged.
  virtual bool VerdictDependsOnlyOnNode() const { return false; }
  // True for the filter whose verdict is the node-resource fit rule alone (state::CheckResourceFit
  // over the node's pods): preemption's resource-only dry run may stand in for it, and reports a
  // shortage in the filter's words through ShortageStatus.
  virtual bool ChecksOnlyNodeResources() const { return false; }
  virtual Status ShortageStatus(const state::ResourceShortage& shortage) const {
    (void)shortage;
    return Status(Code::kUnschedulable);
  }
  // The verdict as if `extra` pods also ran on the node, computed without copying it; nullopt
  // if the plugin cannot tell that way (the framework then filters a copy of the node with the
  // pods added). Only asked when no PreFilter extension is active in the cycle.
  virtual std::optional<Status> FilterWithExtraPods(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                                                    std::span<const NodeInfo::Nominated* const> extra) const {
    (void)state, (void)pod, (void)node, (void)extra;
    return std::nullopt;
  }
};

// Per-node outcome of filtering, for PostFilter and messages. Nodes without an entry take
// `absent` (UnschedulableAndUnresolvable unless PreFilter rejected the pod outright).
struct NodeStatus {
  const NodeInfo* node = nullptr;  // the node in the cycle's snapshot
  Status status;
  // The node's name, valid for the cycle. (Read from the node only when asked: filtering
  // records thousands of statuses per cycle and rarely needs the names.)
  std::string_view Name() const { return node != nullptr ? std::string_view(node->name()) : std::string_view(); }
};

// The verdicts of a pod that every node rejected, kept by the scheduler for the pod's class
// rather than listed node by node (NodeToStatus::everywhere). Positions are the snapshot's
// (Snapshot::IndexOf). The scan order is the filtering order: positions from the cycle's start,
// wrapping once.
class Rejections {
 public:
  virtual ~Rejections() = default;
  // The status of the node of this name; nullptr if the snapshot has none.
  virtual const Status* StatusOf(std::string_view node) const = 0;
  // How many nodes rejected the pod as Unschedulable: preemption's potential nodes.
  virtual size_t unschedulable() const = 0;
  // Calls `visit` with the position of each Unschedulable node, in scan order from the k-th of
  // them (0 <= k < unschedulable()) and wrapping once, until it returns false. With
  // `roomy_only`, only those where NodeInfo::CouldMakeRoomFor(pod).
  virtual void ForEachUnschedulable(size_t k, bool roomy_only, const std::function<bool(size_t)>& visit) const = 0;
};

struct NodeToStatus {
  std::vector<NodeStatus> statuses;  // in filtering order
  Status absent{Code::kUnschedulableAndUnresolvable};
  // When set, every node rejected the pod and `statuses` is empty: this holds every node's
  // status (and `absent` is that of nodes outside the snapshot).
  const Rejections* everywhere = nullptr;
  const Status& Get(std::string_view node) const;
};

struct PostFilterResult {
  Status status;
  std::optional<std::string> nominated_node_name;  // "" clears the nomination
  // What the plugin considered and why it decided as it did, line by line (for --explain).
  std::vector<std::string> explanation;
};

class PostFilterPlugin : public virtual Plugin {
 public:
  virtual PostFilterResult PostFilter(CycleState& state, const PodInfo& pod,
                                      const NodeToStatus& filtered) = 0;
};

class PreScorePlugin : public virtual Plugin {
 public:
  virtual Status PreScore(CycleState& state, const PodInfo& pod,
                          std::span<const NodeInfo* const> feasible) const = 0;
};

struct NodeScore {
  const NodeInfo* node = nullptr;
  int64_t score = 0;
};

struct ScoreResult {
  int64_t score = 0;
  Status status;
};

// The status of a Score call that failed on `node`.
Status ScoreFailure(const NodeInfo& node, const Status& status);

class ScorePlugin : public virtual Plugin {
 public:
  virtual ScoreResult Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const = 0;
  // Score for every node of `nodes`, into `out` (the same length, in the same order). The
  // framework calls this form; the default asks Score node by node. Plugins scored on every
  // cycle override it with ScoreEachNode, which calls their own Score without a virtual call.
  virtual Status ScoreNodes(const CycleState& state, const PodInfo& pod,
                            std::span<const NodeInfo* const> nodes, std::span<NodeScore> out) const;
  // True when the raw score is a function of the node (its generation) and of what the pod
  // class of Scheduler::PodClassOf covers alone: then a node's score may be remembered for an
  // equivalent pod until the node changes (see ScoreMemo).
  virtual bool ScoreDependsOnlyOnPodClassAndNode() const { return false; }
  // Brings raw scores into [kMinNodeScore, kMaxNodeScore]; plugins whose raw scores already are
  // keep the default (no-op).
  virtual Status NormalizeScore(const CycleState& state, const PodInfo& pod,
                                std::span<NodeScore> scores) const {
    (void)state, (void)pod, (void)scores;
    return {};
  }
};

class ReservePlugin : public virtual Plugin {
 public:
  virtual Status Reserve(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
  virtual void Unreserve(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

struct PermitResult {
  Status status;  // Success, Wait (with timeout) or a rejection
  Duration timeout = 0;
};

class PermitPlugin : public virtual Plugin {
 public:
  virtual PermitResult Permit(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

class BindPlugin : public virtual Plugin {
 public:
  // Returns Skip to let the next bind plugin handle the pod.
  virtual Status Bind(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

// Scores `nodes` with P::Score, statically dispatched (for ScoreNodes overrides). A failure names
// the node.
template <typename P>
Status ScoreEachNode(const P& plugin, const CycleState& state, const PodInfo& pod,
                     std::span<const NodeInfo* const> nodes, std::span<NodeScore> out) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    ScoreResult r = plugin.P::Score(state, pod, *nodes[i]);
    if (!r.status.IsSuccess()) [[unlikely]] {
      return ScoreFailure(*nodes[i], r.status);
    }
    out[i] = {nodes[i], r.score};
  }
  return {};
}

// Default upstream helper: scale raw scores to [0, 100] by the maximum (reverse: 100 - that).
void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::span<NodeScore> scores);

}  // namespace arbiter::sched
