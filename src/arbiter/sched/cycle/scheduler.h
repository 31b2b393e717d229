// The Scheduler owns the cache, the queue, the nominator and the framework of one profile, and
// runs scheduling cycles: ScheduleOne pops a pod and goes through PreFilter, Filter (the
// nominated node first, then the nodes from a rotating start index until enough feasible nodes
// are found), PostFilter on failure, PreScore/Score and host selection, then Reserve, Permit and
// Bind. Everything it decides depends only on its inputs, the injected clock and its seeded Rng.
//
// Not thread-safe: one thread drives a Scheduler.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "arbiter/base/fenwick.h"
#include "arbiter/base/rng.h"
#include "arbiter/model/feature_gates.h"
#include "arbiter/sched/framework/fit_error.h"
#include "arbiter/sched/framework/framework.h"
#include "arbiter/sched/framework/group_host.h"
#include "arbiter/sched/preemption/default_preemption.h"
#include "arbiter/sched/preemption/workload_preemption.h"
#include "arbiter/sched/queue/scheduling_queue.h"

namespace arbiter::sched {

// What --explain shows for one cycle.
struct Explanation {
  struct NodeVerdict {
    std::string node;
    std::vector<Status> filters;  // every filter plugin's verdict (Skip when PreFilter skipped it)
    bool feasible = false;
  };
  bool nominated_node_first = false;  // the pod's nominated node was tried alone first
  std::vector<NodeVerdict> nodes;     // evaluated nodes, in evaluation order
  // Scores; `scores->nodes` points into the cycle's snapshot and is cleared once the cycle
  // ends, so the rows are named by `score_nodes`.
  std::optional<ScoreTable> scores;
  std::vector<std::string> score_nodes;
  std::string chosen;
  std::string why;
};

struct CycleOutcome {
  PodInfoPtr pod;
  int attempt = 0;
  Timestamp time = 0;
  bool scheduled = false;
  std::string node;     // where it was bound
  std::string message;  // FailedScheduling message when not scheduled
  // The node PostFilter nominated ("" = cleared); nullopt = unchanged.
  std::optional<std::string> nominated_node;
  std::optional<Explanation> explain;
  // PostFilter's account of its decision (preemption candidates, victims, the choice).
  std::vector<std::string> post_filter_explanation;

  // A pod group cycle: the root group ("namespace/name") and its kind, and one outcome per
  // member tried, in scheduling order (the fields above then describe the first member).
  std::string group;
  std::string group_kind;
  std::vector<CycleOutcome> members;
  // The group's PodGroupInitiallyScheduled condition after the cycle: True (with reason
  // Scheduled) once a cycle placed its quorum, else False with reason Unschedulable.
  bool group_scheduled = false;
  std::string group_message;
};

struct SchedulerOptions {
  uint64_t seed = 0;
  bool explain = false;
  // DefaultPreemption's own options (a test turns its resource-only fast path off).
  preemption::DefaultPreemption::Options preemption;
  // Reuse a filter verdict (and a preemption dry run) for a pod of the same equivalence class
  // on a node that has not changed since, when every filter in play decides from the pod and
  // the node alone. Decisions are the same either way; off only to test that.
  bool reuse_verdicts = true;
  // How many node verdicts reuse keeps in all (about 60 bytes each): the classes kept are this
  // over the number of nodes, at least 1 and at most 256. A long simulation, where many classes
  // wait at once, keeps more; a server less.
  size_t verdict_entries = 1'000'000;
  // Real elapsed time for metrics (durations); decisions never read it. nullptr: none.
  const Clock* wall_clock = nullptr;
  // Compose the FailedScheduling message of a failed cycle. Off when nobody reads it (a
  // benchmark that records nothing); decisions never depend on it.
  bool messages = true;
};

class Scheduler final : public GroupHost {
 public:
  Scheduler(model::SchedulerConfig config, const Clock* clock, SchedulerOptions options);

  // Builds the profile. With an actuator, DefaultPreemption is the profile's PostFilter and
  // carries its decisions out through it; without one, the scheduler never preempts.
  arbiter::Status Init(preemption::PreemptionActuator* actuator = nullptr);

  // DefaultPreemption's counters; nullptr when preemption is off.
  const preemption::PreemptionMetrics* preemption_metrics() const;

  // Handle.
  const state::Snapshot& snapshot() const override { return snapshot_; }
  const model::SchedulerConfig& config() const override { return config_; }
  const Clock& clock() const override { return *clock_; }
  const Framework& framework() const override { return *framework_; }
  Nominator& nominator() override { return nominator_; }
  Rng& rng() override { return rng_; }
  bool explaining() const override { return options_.explain; }
  bool composing_messages() const override { return options_.messages || options_.explain; }
  uint64_t pod_class() const override { return pod_class_; }
  const Clock* wall_clock() const override { return options_.wall_clock; }
  const state::GroupIndex* groups() const override;
  const state::StorageIndex* storage() const override { return &storage_; }
  void BoundGroupMembers(const state::GroupNode& leaf, std::vector<PodInfoPtr>& out) const override;

  // GroupHost.
  GroupPlacement PlaceGroup(const state::GroupNode& root, const std::vector<PodInfoPtr>& pods) override;
  state::Snapshot& mutable_snapshot() override { return snapshot_; }
  void RestoreSnapshot() override { cache_.UpdateSnapshot(snapshot_); }

  // The Workload API's runtime groups. REQUIRES: a group is added before the pods that name it.
  // Without the GenericWorkload gate, groups are ignored and their pods scheduled one by one;
  // without CompositePodGroup, CompositePodGroups are ignored and every PodGroup is a root.
  void AddPodGroup(const model::PodGroup& group);
  void AddCompositePodGroup(const model::CompositePodGroup& group);
  // Why a pending pod has not been tried: its scheduling gates (the API's SchedulingGated
  // condition message), or its group is missing or short of its quorum.
  std::string WaitingReason(const model::Pod& pod) const;
  const preemption::WorkloadPreemptionMetrics* workload_preemption_metrics() const;

  // The storage objects the volume plugins read. Changes through it must be followed by
  // StorageChanged, which wakes the pods that wait on them.
  state::StorageIndex& storage_index() { return storage_; }
  void StorageChanged();
  // A pending pod's nomination left its node (cleared, or moved elsewhere): pods of no higher
  // priority that its reservation there kept out are tried again, as upstream treats a changed
  // nominatedNodeName like the pod deleted from the old node (updatePodInSchedulingQueue,
  // hasNominatedNodeNameChanged: AssignedPodDelete for pods of lower or equal priority).
  void NominationLeft(const model::Pod& pod);

  state::ClusterCache& cache() { return cache_; }
  const state::ClusterCache& cache() const { return cache_; }
  SchedulingQueue& queue() { return *queue_; }

  // Adds a pending pod to the queue (and to the nominator if it carries a nominated node).
  void AddPendingPod(PodInfoPtr pod, std::optional<Timestamp> enqueue_time = std::nullopt);
  // Adds a bound pod to the cache and tells the queue.
  arbiter::Status AddBoundPod(PodInfoPtr pod);
  // Replaces a bound pod (same UID and node), e.g. with its deletion timestamp set.
  arbiter::Status UpdateBoundPod(PodInfoPtr pod);
  // Removes a bound pod from the cache and tells the queue.
  arbiter::Status DeleteBoundPod(const std::string& uid);

  // One scheduling cycle; nullopt if no pod is ready.
  std::optional<CycleOutcome> ScheduleOne();

  // How many feasible nodes a cycle looks for among `num_all_nodes` (percentageOfNodesToScore).
  size_t NumFeasibleNodesToFind(size_t num_all_nodes) const;

 private:
  struct FindResult {
    std::vector<const NodeInfo*> feasible;
    Diagnosis diagnosis;
  };
  // With `summarize` (a single pod's cycle whose message nobody reads), a pod that every node
  // rejects may be answered from its class's complete verdicts (NodeToStatus::everywhere)
  // instead of a status per node.
  FindResult FindNodesThatFit(CycleState& state, const PodInfo& pod, Explanation* explain, bool summarize = false);
  const NodeInfo* SelectHost(const ScoreTable& table);
  // Keeps a cycle's per-node status buffer for the next cycle (see FindNodesThatFit).
  void RecycleStatuses(std::vector<NodeStatus>& statuses);
  // Scores `feasible` (more than one) and picks the host; nullptr with `error` on a plugin error.
  const NodeInfo* ChooseNode(CycleState& state, const PodInfo& pod, const std::vector<const NodeInfo*>& feasible,
                             Explanation* explain, Status* error);
  // A pod group cycle (schedule_one_podgroup): place, then bind or preempt.
  std::optional<CycleOutcome> ScheduleGroup(QueuedPodInfo qpi);
  // Members in scheduling order: the hierarchy's PodGroups depth first, each group's members by
  // priority, attempts, queue timestamp and name (upstream's PodGroupMemberPodsOrderingFunc).
  std::vector<PodInfoPtr> OrderMembers(const state::GroupNode& root, const QueuedPodInfo& info) const;
  // Per PodGroup: how many members count toward its quorum.
  using MemberCounts = std::map<const state::GroupNode*, int64_t>;
  static bool QuorumMet(const state::GroupNode& node, const MemberCounts& counts);
  bool GroupReady(const QueuedPodInfo& info) const;
  const state::GroupNode* LeafOf(const model::Pod& pod) const;
  // The queue entry a pending member belongs to: its root group and the root's priority (its own
  // PodGroup's name and its priority while that group is unknown).
  std::pair<std::string, int32_t> QueueUnitOf(const model::Pod& pod) const;
  void GroupsChanged();
  void EnsureGroups() const;
  // The pod's equivalence class for verdict reuse: every field of the pod that the
  // node-local filters read, interned to a number (never 0).
  uint64_t PodClassOf(const PodInfo& pod);
  // The verdict of the filters (with nominated pods) for `pod` on `node`, reused when possible.
  // The node's verdict for the pod; valid until the next call (it lives in the verdict cache).
  const Status& FilterNode(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                           const NodeInfo* own_nomination);
  arbiter::Status Bind(const PodInfo& pod, const std::string& node);

  model::SchedulerConfig config_;
  const Clock* clock_;
  SchedulerOptions options_;
  Rng rng_;
  state::ClusterCache cache_;
  state::Snapshot snapshot_;
  Nominator nominator_;
  std::unique_ptr<Framework> framework_;
  std::unique_ptr<SchedulingQueue> queue_;
  std::shared_ptr<preemption::DefaultPreemption> preemption_;
  const PlacedPod* binding_ = nullptr;  // the group member being bound, while Bind runs for it
  std::unique_ptr<preemption::WorkloadPreemption> workload_preemption_;
  const bool workload_enabled_;  // the GenericWorkload feature gate
  mutable state::GroupIndex groups_;
  state::StorageIndex storage_;
  mutable bool groups_dirty_ = false;
  // PodGroup key -> its bound pods by UID.
  std::map<std::string, std::map<std::string, PodInfoPtr>> bound_members_;
  size_t next_start_node_index_ = 0;
  // Verdict reuse: for each of the classes of the last cycles that reused
  // verdicts, per snapshot node, the last verdict and the node's generation it was computed at.
  // Pending pods of several classes take turns, so one verdict per node would be replaced at
  // nearly every cycle.
  // An entry holds only if both its node's generation and its class's epoch are the current
  // ones: a slot handed to another class takes a new epoch instead of clearing every entry.
  struct CachedVerdict {
    uint64_t generation = UINT64_MAX;
    uint64_t epoch = 0;
    Status status;
  };
  struct ClassVerdicts {
    uint64_t pod_class = 0;
    uint64_t last_used = 0;
    uint64_t epoch = 0;  // unique to this class's use of the slot (never 0)
    std::vector<CachedVerdict> by_node;
    // Complete (kept after a cycle of the class that filtered every node, while messages are
    // not composed): every entry is its node's verdict as of the snapshot's change `synced`,
    // and the counts below count the entries. Later changes are read from the snapshot's log.
    bool complete = false;
    uint64_t synced = 0;
    size_t feasible = 0;
    std::map<std::string_view, size_t> rejecting;  // plugin -> entries it rejects (IsRejected)
    Fenwick unschedulable;                          // 1 where the entry is Unschedulable
    // Those where NodeInfo::CouldMakeRoomFor the class's pods, once preemption asks for them:
    // kept from then on as entries change (a class that never preempts never reads a node for it).
    bool roomy_known = false;
    std::set<uint32_t> roomy;
  };
  // A complete class's entries seen as Rejections (NodeToStatus::everywhere) from `start`.
  class ClassRejections final : public Rejections {
   public:
    // `pod`: one of the class's (they all make the same room).
    ClassRejections(ClassVerdicts& c, const state::Snapshot& s, const model::Pod& pod, size_t start)
        : c_(c), snap_(s), pod_(pod), start_(start) {}
    const Status* StatusOf(std::string_view node) const override;
    size_t unschedulable() const override { return static_cast<size_t>(c_.unschedulable.total()); }
    void ForEachUnschedulable(size_t k, bool roomy_only, const std::function<bool(size_t)>& visit) const override;

   private:
    ClassVerdicts& c_;  // its roomy set is made on first use
    const state::Snapshot& snap_;
    const model::Pod& pod_;
    size_t start_;
  };
  // Filters `node` again for `pod` unless its entry is of the node's generation, keeping a
  // complete class's counts.
  void Refresh(ClassVerdicts& c, size_t position, const NodeInfo& node, const CycleState& state, const PodInfo& pod);
  void Count(ClassVerdicts& c, size_t position, const NodeInfo& node, const PodInfo& pod, int sign);
  // Counts every entry (all current) and marks the class complete.
  void Complete(ClassVerdicts& c, const PodInfo& pod);
  // Brings a complete class's entries up to date with the snapshot's changes since it was
  // synced; false (and no longer complete) if the log does not reach back that far.
  bool Sync(ClassVerdicts& c, const CycleState& state, const PodInfo& pod);
  // How many classes are kept (SchedulerOptions::verdict_entries). More classes mean fewer
  // complete scans when many pods wait at once.
  static constexpr size_t kMaxVerdictClasses = 256;
  size_t VerdictClassLimit() const {
    return std::clamp<size_t>(options_.verdict_entries / std::max<size_t>(snapshot_.size(), 1), 1, kMaxVerdictClasses);
  }
  // The verdicts kept for `pod_class`, made (replacing the least recently used) if none are.
  ClassVerdicts& VerdictsOf(uint64_t pod_class);
  uint64_t pod_class_ = 0;  // this cycle's class, 0 = no reuse
  std::map<std::string, uint64_t> pod_classes_;
  std::vector<ClassVerdicts> verdict_classes_;
  std::unordered_map<uint64_t, size_t> verdict_slot_;  // class -> its slot; lookup only, never iterated
  uint64_t verdict_epochs_ = 0;
  ClassVerdicts* verdicts_ = nullptr;  // this cycle's class's, when pod_class_ != 0
  std::optional<ClassRejections> rejections_;  // the last cycle's, when it used a complete class
  uint64_t verdict_uses_ = 0;
  Status uncached_verdict_;  // FilterNode's answer when the cache does not apply
  ScoreMemo score_memo_;    // raw scores per node for equivalent pods (see ScoreMemo)
  ScoreTable score_table_;  // the last cycle's scores; its buffers are reused
  std::vector<NodeStatus> status_scratch_;  // a cycle's per-node statuses, recycled
  uint64_t verdicts_structure_ = UINT64_MAX;
};

}  // namespace arbiter::sched
