// ClusterSimulation: a simulated cluster around one Scheduler on a virtual clock. It holds the
// nodes and pods, runs scheduling cycles, and carries out preemption decisions as the rest of
// Kubernetes would: a victim gets the DisruptionTarget condition (reason PreemptionByScheduler)
// and a Preempted event, keeps its resources while its grace period runs, then leaves its node,
// which wakes the pods waiting for room. It is the engine of `arbiter plan` and of the
// benchmarks. Everything it does is a function of what was added and the seed.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "arbiter/base/status.h"
#include "arbiter/sched/cycle/scheduler.h"
#include "arbiter/sched/preemption/pdb_status.h"
#include "arbiter/sched/preemption/preemption_history.h"

namespace arbiter::sim {

struct PodPlan {
  std::string name;  // namespace/name
  std::string pod_group;  // namespace/name, or "" for a lone pod
  int32_t priority = 0;
  bool scheduled = false;
  std::string node;
  std::optional<std::string> nominated_node;
  std::string message;
  int attempts = 0;
};

struct Victim {
  std::string name;
  std::string node;
  int32_t priority = 0;
  bool violates_pdb = false;
};

struct Preemption {
  std::string preemptor;
  std::string preemptor_kind = "Pod";
  std::optional<std::string> node;
  std::vector<Victim> victims;
};

// An event as the Kubernetes API would record it.
struct Event {
  Timestamp time = 0;
  std::string type;    // Normal or Warning
  std::string reason;  // Scheduled, FailedScheduling, Preempted, Killing
  std::string object;  // "Pod namespace/name"
  std::string message;
};

// A pod group's PodGroupInitiallyScheduled condition at the end of the run.
struct GroupPlan {
  std::string name;  // namespace/name of the root group
  std::string kind;  // PodGroup or CompositePodGroup
  bool initially_scheduled = false;
  std::string message;
};

// A pod the kubelet evicted under node pressure before scheduling began.
struct NodePressureEviction {
  std::string name;  // namespace/name
  std::string node;
  std::string reason = "Evicted";
  std::string signal;   // memory.available, nodefs.available
  std::string message;  // the kubelet's
};

struct PlanResult {
  Timestamp start = 0;
  Timestamp end = 0;
  std::vector<PodPlan> pods;  // in first-pop order
  std::vector<Preemption> preemptions;
  std::vector<NodePressureEviction> evictions;
  std::vector<GroupPlan> groups;  // root groups that had a cycle, in order of their first
  std::vector<sched::CycleOutcome> cycles;  // every cycle, when explaining
  std::vector<Event> events;
  size_t node_count = 0;
  sched::preemption::PreemptionMetrics preemption_metrics;
  sched::preemption::WorkloadPreemptionMetrics workload_preemption_metrics;
};

struct SimulationOptions {
  uint64_t seed = 0;
  bool explain = false;
  // With explain: each cycle handed over as it ends instead of kept in PlanResult::cycles.
  std::function<void(const sched::CycleOutcome&)> on_cycle;
  // Keep events and per-pod results (a benchmark may turn them off to measure the engine).
  bool record = true;
  // Compose each failed cycle's message (PodPlan::message and the FailedScheduling event) when
  // recording; off when nobody reads them, which lets preemption skip hopeless dry runs
  // (DefaultPreemption::Options::room_bound). Decisions are the same either way.
  bool messages = true;
  // A guard against livelock; a run that needs more cycles stops with an error.
  size_t max_cycles = 1'000'000;
  // Passed to DefaultPreemption (a test turns its resource-only fast path off).
  sched::preemption::DefaultPreemption::Options preemption;
  // See sched::SchedulerOptions::reuse_verdicts, verdict_entries and wall_clock.
  bool reuse_verdicts = true;
  size_t verdict_entries = 1'000'000;
  const Clock* wall_clock = nullptr;
  // Told of each victim as it is marked for deletion (its preemptor: a pod's or a group's
  // namespace/name, and the preemptor's kind), and of each pod as it leaves its node at the end
  // of its grace period; `arbiter simulate` keeps its statistics and its controllers by them.
  std::function<void(const model::Pod& victim, const std::string& preemptor, std::string_view kind)> on_evicted;
  std::function<void(const model::Pod& pod)> on_terminated;
};

class ClusterSimulation final : public sched::preemption::PreemptionActuator {
 public:
  ClusterSimulation(model::SchedulerConfig config, Timestamp start, SimulationOptions options);

  // Builds the scheduler's profile, with preemption carried out by this simulation.
  Status Init();

  void SetNamespace(const model::Namespace& ns) { scheduler_.cache().SetNamespace(ns); }
  // REQUIRES: budgets are added before the pods they count.
  void AddPdb(model::PodDisruptionBudget pdb) { pdb_status_.AddBudget(std::move(pdb)); }
  Status AddNode(model::Node node) { return scheduler_.cache().AddNode(std::move(node)); }
  // Replaces a node (its taints, labels, allocatable), waking the pods a node change may help.
  Status UpdateNode(model::Node node);
  // A pod bound to `pod.node_name`; it leaves at its deletion timestamp if it has one.
  Status AddRunningPod(model::Pod pod);
  // Workload API groups. REQUIRES: added before the pods that name them.
  void AddPodGroup(const model::PodGroup& g) { scheduler_.AddPodGroup(g); }
  void AddCompositePodGroup(const model::CompositePodGroup& g) { scheduler_.AddCompositePodGroup(g); }
  // A pending pod, queued at `enqueue_time` (now if absent).
  void AddPendingPod(model::Pod pod, std::optional<Timestamp> enqueue_time = std::nullopt);
  // Records a pod the kubelet evicted before scheduling: the eviction and its Evicted event.
  void RecordEviction(NodePressureEviction e);

  // One step: a scheduling cycle if a pod is ready (its outcome is returned), else virtual time
  // runs to the next thing that can change the cluster. `idle` turns true when nothing more can.
  StatusOr<std::optional<sched::CycleOutcome>> Step(bool* idle);
  // Steps until nothing more can change.
  Status RunUntilIdle();
  // One step for a caller that brings changes of its own at `limit` (`arbiter simulate`'s
  // arrivals and completions): a cycle if a pod is ready; else virtual time runs to the next
  // termination or queue wake-up (backoff expiry, the unschedulable pods' flush), never past
  // `limit`. `blocked` turns true when nothing can happen before `limit` (the clock stays).
  StatusOr<std::optional<sched::CycleOutcome>> StepUntil(Timestamp limit, bool* blocked);
  // A bound pod leaves its node now (its work done, or its owner gone), waking the pods that wait
  // for room. NotFound if it is not bound.
  Status RemoveBoundPod(const std::string& uid);
  // A pending pod is deleted before it was scheduled (its owner gone).
  void RemovePendingPod(const std::string& uid);

  PlanResult& result() { return result_; }
  sched::Scheduler& scheduler() { return scheduler_; }
  VirtualClock& clock() { return clock_; }

  // PreemptionActuator.
  std::vector<sched::preemption::PdbView> Pdbs() const override;
  void Preempt(const state::PodInfo& preemptor, const std::string& node,
               const std::vector<sched::preemption::Eviction>& victims) override;
  void PreemptForGroup(const std::string& group, std::string_view kind,
                       const std::vector<sched::preemption::Eviction>& victims) override;
  void ClearNomination(const state::PodInfoPtr& pod) override;
  const sched::preemption::PreemptionHistory* History() const override { return &history_; }
  // Preemptions of a lineage known before the run (its controller's arbiter.dev/preemptions).
  void SeedPreemptions(const std::string& owner_uid, const std::vector<Timestamp>& times) {
    history_.Seed(owner_uid, times);
  }

 private:
  struct Termination {
    Timestamp at;
    uint64_t seq;
    std::string uid;
    bool operator>(const Termination& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  PodPlan& PlanFor(const model::Pod& pod);
  void Record(const sched::CycleOutcome& out);
  void RecordPod(const sched::CycleOutcome& out);
  // Evicts the victims of one decision and records it.
  void Evict(Preemption entry, const std::vector<sched::preemption::Eviction>& victims, const std::string& by);
  // Pods that never had a cycle (a group short of its quorum, a missing PodGroup, scheduling
  // gates) get an entry.
  void RecordNeverTried();
  void TerminateDue();
  void AddEvent(std::string type, std::string reason, const model::Pod& pod, std::string message);

  SimulationOptions options_;
  VirtualClock clock_;
  sched::Scheduler scheduler_;
  PlanResult result_;
  // The budgets, counted over every pod added (tracked only when there are budgets).
  sched::preemption::PdbStatusTracker pdb_status_;
  sched::preemption::PreemptionHistory history_;  // every eviction, by the victim's lineage
  std::map<std::string, size_t> plan_index_;     // pending pod UID -> index in result_.pods
  std::vector<model::Pod> pending_;              // pending group members and gated pods, in the order added
  std::map<std::string, size_t> group_index_;    // root group -> index in result_.groups
  std::priority_queue<Termination, std::vector<Termination>, std::greater<>> terminations_;
  uint64_t termination_seq_ = 0;
  uint64_t cluster_version_ = 0;                 // bumped by every bind and every pod that leaves
  std::map<std::string, uint64_t> attempted_at_; // UID -> cluster version at its last failed attempt
  size_t cycles_ = 0;
};

}  // namespace arbiter::sim
