// DefaultPreemption: kube-scheduler's per-pod preemption, as a PostFilter plugin
// (docs/upstream-rules.md Part A describes the upstream algorithm; section
// numbers below refer to it).
//
//   1. Eligibility (§2): preemptionPolicy Never never preempts; a pod whose nominated node
//      still holds a lower-priority pod terminating because of preemption waits, unless the
//      nominated node is now UnschedulableAndUnresolvable.
//   2. Potential nodes (§3): only nodes whose filter status was Unschedulable.
//   3. Candidates (§4): at most max(10% of them, 100) are needed; the scan starts at a seeded
//      random offset and stops once it has one candidate without PDB violations and enough in
//      all.
//   4. Dry run per node (§5, SelectVictimsOnNode): on a copy of the node and a clone of the
//      CycleState, remove every strictly-lower-priority pod, check the filters (with nominated
//      pods), then reprieve greedily — PDB-violating pods first, then the rest, each in
//      importance order — keeping every pod whose return still lets the preemptor fit.
//   5. Choice (§7): fewest PDB violations; lowest highest-victim priority; smallest sum of
//      (priority + 2^31); fewest victims; latest start among the highest-priority victims;
//      then the first in scan order.
//   6. Actuation (§8): the actuator evicts the victims; lower-priority pods nominated to the
//      node lose their nomination; the preemptor is nominated to the node but not bound.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/base/small_vector.h"
#include "arbiter/sched/framework/framework.h"
#include "arbiter/sched/preemption/disruption.h"
#include "arbiter/sched/preemption/victim_units.h"

namespace arbiter::sched::preemption {

struct Candidate {
  const NodeInfo* node = nullptr;
  std::vector<PodInfoPtr> victims;   // most important first
  std::vector<bool> violates_pdb;    // per victim
  // Per victim, its effective priority when it differs from the pod's own (a group member under
  // a root of another priority); empty: every victim's own priority.
  std::vector<int32_t> victim_priorities;
  int32_t VictimPriority(size_t i) const { return victim_priorities.empty() ? victims[i]->pod.priority : victim_priorities[i]; }
  int num_pdb_violations = 0;
  // The resource-only dry run keeps victims as indices into node->pods() (most important
  // first, none violating a PDB) and fills `victims` only for the chosen candidate.
  SmallVector<uint32_t, 8> victim_indices;
  // The keys node choice compares (§7), set when the candidate is built.
  int32_t top_priority = 0;           // priority of the most important victim
  int64_t priority_sum = 0;           // sum of (priority + 2^31)
  size_t victim_count = 0;
  Timestamp earliest_top_start = 0;   // earliest start among the highest-priority victims

  // Fills `victims` and `violates_pdb` from `victim_indices` if needed.
  void Materialize();
  // Appends a victim (its own priority), counting it if it violates a budget.
  void AddVictim(PodInfoPtr v, bool violating) {
    victims.push_back(std::move(v));
    violates_pdb.push_back(violating);
    if (violating) ++num_pdb_violations;
  }
};

// Preemption's counters, kept under kube-scheduler's metric names for the server to expose:
//   scheduler_preemption_attempts_total  `attempts` (every PostFilter call);
//   scheduler_preemption_victims         a histogram of victims per carried-out decision, with
//                                        upstream's buckets 1, 2, 4, …, 64 (`victims_buckets[i]`
//                                        counts decisions with at most 2^i victims);
//   scheduler_framework_extension_point_duration_seconds{extension_point="PostFilter"}
//                                        `evaluation_seconds_sum` / `_count`, measured only when a
//                                        wall clock is injected (never in `plan`, whose output must
//                                        not depend on timing).
struct PreemptionMetrics {
  static constexpr int kVictimBuckets = 7;
  uint64_t attempts = 0;
  uint64_t preemptions = 0;  // decisions carried out (the histogram's count)
  uint64_t victims = 0;      // the histogram's sum
  uint64_t victims_buckets[kVictimBuckets] = {};
  double evaluation_seconds_sum = 0;
  uint64_t evaluation_seconds_count = 0;

  void ObserveVictims(size_t n) {
    ++preemptions;
    victims += n;
    for (int i = 0; i < kVictimBuckets; ++i) {
      if (n <= (size_t{1} << i)) ++victims_buckets[i];
    }
  }
};

// True if `a` is more important than `b`: higher priority, then earlier start (a pod without
// a start time counts as starting `now`), then UID as the final tie-break.
bool MoreImportantPod(const model::Pod& a, const model::Pod& b, Timestamp now);

// The choice of §7 among `candidates` (non-empty). Returns the index and the deciding rule.
std::pair<size_t, std::string> PickOneNodeForPreemption(const std::vector<Candidate>& candidates, Timestamp now);
// The same over candidates held elsewhere; REQUIRES: their keys are set.
std::pair<size_t, std::string> PickOneNodeForPreemption(const std::vector<const Candidate*>& candidates, Timestamp now);

class DefaultPreemption final : public PostFilterPlugin {
 public:
  static constexpr std::string_view kName = "DefaultPreemption";
  static constexpr std::string_view kNoVictims = "No preemption victims found for incoming pod";
  static constexpr std::string_view kNotHelpful = "Preemption is not helpful for scheduling";

  struct Options {
    // Use the resource-only dry run when it gives the same answer as the general one (see
    // SelectVictimsOnNode). Off only to test that equivalence.
    bool resource_fast_path = true;
  };

  DefaultPreemption(Handle* handle, PreemptionActuator* actuator, Options options);
  DefaultPreemption(Handle* handle, PreemptionActuator* actuator) : DefaultPreemption(handle, actuator, Options{}) {}
  std::string_view Name() const override { return kName; }
  PostFilterResult PostFilter(CycleState& state, const PodInfo& pod, const NodeToStatus& filtered) override;

  // §2. On false, `reason` holds the message (without the "preemption: " prefix).
  bool PodEligibleToPreemptOthers(const PodInfo& pod, const NodeToStatus& filtered, std::string* reason) const;
  // §5 on one node. Returns the candidate, or the status explaining why the node cannot help.
  //
  // When every filter that runs for the pod either ignores the node's pods or is
  // NodeResourcesFit, and no PreFilter extension is active, removing and re-adding pods can only
  // change the resource verdict; the dry run then works on resource sums instead of copies of
  // the node and the CycleState. It makes the same decisions (a test runs both and compares).
  std::pair<std::optional<Candidate>, Status> SelectVictimsOnNode(const CycleState& state, const PodInfo& pod,
                                                                   const NodeInfo& node,
                                                                   const std::vector<PdbView>& pdbs) const;
  // §4: how many candidates the scan looks for among `potential` nodes.
  size_t NumCandidates(size_t potential) const;

  const PreemptionMetrics& metrics() const { return metrics_; }

 private:
  // The resource-only dry run on the node's pod summaries, for nodes whose pods request only
  // CPU, memory and ephemeral storage and when no PDB is in play; nullopt if it does not apply.
  std::optional<std::pair<std::optional<Candidate>, Status>> DryRunOnSummaries(
      const CycleState& state, const PodInfo& pod, const NodeInfo& node, const std::vector<PdbView>& pdbs) const;
  // The part of the dry run after the potential victims are known, on a copied node.
  std::pair<std::optional<Candidate>, Status> DryRunOnCopy(const CycleState& state, const PodInfo& pod,
                                                            const NodeInfo& node, std::vector<PodInfoPtr> potential,
                                                            const std::vector<PdbView>& pdbs) const;
  // Nomad's victim policy for pods (SchedulerConfig::victim_selection kNomad): only pods at least
  // the delta lower, by ascending priority, best fit by Nomad's distance over CPU, memory and
  // ephemeral storage, then the superset filter; the node's filters must pass without them.
  std::pair<std::optional<Candidate>, Status> DryRunNomad(const CycleState& state, const PodInfo& pod,
                                                           const NodeInfo& node, const std::vector<PdbView>& pdbs) const;
  // The dry run when the node runs pod group members: by victim unit (see victim_units.h).
  std::pair<std::optional<Candidate>, Status> DryRunWithUnits(const CycleState& state, const PodInfo& pod,
                                                               const NodeInfo& node,
                                                               const std::vector<PdbView>& pdbs) const;
  // The same on resource sums; REQUIRES: the filters in play are resource-only (see above).
  std::pair<std::optional<Candidate>, Status> DryRunOnResources(const CycleState& state, const PodInfo& pod,
                                                                 const NodeInfo& node,
                                                                 std::vector<PodInfoPtr> potential,
                                                                 const std::vector<PdbView>& pdbs) const;
  // Whether the resource-only dry run applies to this cycle, and the filters it must still run.
  struct FastPath {
    bool applies = false;
    std::vector<const FilterPlugin*> pod_independent;
    // The filter the resource rule stands in for (FilterPlugin::ChecksOnlyNodeResources).
    const FilterPlugin* resources = nullptr;
    // A shortage in that filter's words, naming it; Unschedulable when the profile has none.
    Status Shortage(const model::Resources& request, const model::Resources& allocatable,
                    const model::Resources& used, int64_t pod_count) const;
  };
  FastPath PlanFastPath(const CycleState& state) const;

  Handle* handle_;
  PreemptionActuator* actuator_;
  Options options_;
  PreemptionMetrics metrics_;
  mutable FastPath fast_path_;  // computed per PostFilter call
  mutable std::unique_ptr<UnitBuilder> units_;  // victim units of one PostFilter call
  // Dry-run reuse: per snapshot node, the last result and what it was computed for (the pod's
  // equivalence class, the node's generation, the time when it read the time, and the allowed
  // disruptions of every budget matching one of the node's lower-priority pods). Only for
  // resource-only dry runs, whose result depends on nothing else.
  struct CachedDryRun {
    uint64_t generation = UINT64_MAX;
    uint64_t pod_class = 0;
    // The importance order reads the time only for a pod that has not started ("no start =
    // now"). On a node where every pod has started, the result holds at any time: on a live
    // clock, which moves between any two cycles, that is what lets it be reused at all.
    bool reads_now = true;
    Timestamp now = 0;
    uint64_t budgets_version = 0;
    std::vector<std::pair<uint32_t, int32_t>> budgets;  // (index into the views, allowed)
    std::optional<Candidate> candidate;
    Status status;
  };
  std::vector<CachedDryRun> dry_runs_;
  std::vector<const NodeInfo*> potential_scratch_;  // PostFilter's potential nodes, recycled
  std::vector<NodeStatus> no_candidate_scratch_;  // PostFilter's per-node statuses, recycled
  uint64_t dry_runs_structure_ = UINT64_MAX;
};

}  // namespace arbiter::sched::preemption
