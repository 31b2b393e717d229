// DefaultPreemption: kube-scheduler's per-pod preemption, as a PostFilter plugin, in the shape of
// upstream's preemption evaluator (docs/upstream-rules.md Part A describes the algorithm; section
// numbers below refer to it). PostFilter runs the steps in order, each a function of its own,
// passing one Evaluation (victim_selection.h) down:
//
//   1. PodEligibleToPreemptOthers (§2): preemptionPolicy Never never preempts; a pod whose
//      nominated node still holds a lower-priority pod terminating because of preemption waits,
//      unless the nominated node is now UnschedulableAndUnresolvable.
//   2. NodesWherePreemptionMightHelp (§3): only nodes whose filter status was Unschedulable.
//   3. FindCandidates (§4): at most max(10% of them, 100) are needed; the scan starts at a
//      seeded random offset and stops once it has one candidate without PDB violations and
//      enough in all. On each node a dry run (§5) by the configured victim selection —
//      Kubernetes or Nomad — or by victim unit on a node running pod group members.
//   4. SelectCandidate (§7, candidate.h): fewest PDB violations; lowest highest-victim priority;
//      smallest sum of (priority + 2^31); fewest victims; [with victimCost LostWork, Arbiter's
//      option: least work lost;] latest start among the highest-priority victims; then the first
//      in scan order. With pdbPolicy Strict (Arbiter's option) a candidate exceeding a budget is
//      none.
//   5. PrepareCandidate (§8): the actuator evicts the victims; lower-priority pods nominated to
//      the node lose their nomination; the preemptor is nominated to the node but not bound.
//
// With no message to compose (Handle::composing_messages), step 3 first asks each node whether
// the preemptor could fit there by resources with every pod that could be a victim gone
// (NodeInfo::RoomBelow, an upper bound that costs a handful of additions): a node where it could
// not yields no candidate, so its dry run, which would only say why, is skipped. The scan's order,
// its random offset and the candidates found are the same.
//
// Across calls the plugin keeps only its counters and the dry-run cache (DryRunCache below),
// whose entries say exactly what they were computed for.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/sched/framework/fit_error.h"
#include "arbiter/sched/framework/framework.h"
#include "arbiter/sched/preemption/candidate.h"
#include "arbiter/sched/preemption/disruption.h"
#include "arbiter/sched/preemption/victim_selection.h"

namespace arbiter::sched::preemption {

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
  // victimSelection Optimal (Arbiter's): nodes searched exactly, nodes that kept the greedy victims
  // because the search bound was hit, and nodes where the exact search does not apply.
  uint64_t optimal_searches = 0;
  uint64_t optimal_fallbacks = 0;
  uint64_t optimal_not_applicable = 0;
  // Dry runs left out because no room could be made on the node (Options::room_bound).
  uint64_t dry_runs_skipped = 0;

  void ObserveVictims(size_t n) {
    ++preemptions;
    victims += n;
    for (int i = 0; i < kVictimBuckets; ++i) {
      if (n <= (size_t{1} << i)) ++victims_buckets[i];
    }
  }
};

// pdbPolicy Strict: OK when the candidate's victims together stay within every budget's allowed
// disruptions, else an Unschedulable status naming the budgets they exceed.
Status StrictPdbStatus(const std::vector<PdbView>& pdbs, const Candidate& c);

class DefaultPreemption final : public PostFilterPlugin {
 public:
  static constexpr std::string_view kName = "DefaultPreemption";

  struct Options {
    // Use the resource-only dry runs when they give the same answer as the general one
    // (FastPath in victim_selection.h). Off only to test that equivalence.
    bool resource_fast_path = true;
    // Skip the dry run of a node where the preemptor cannot fit by resources even with every
    // pod that could be a victim gone (NodeInfo::RoomBelow), when no message is composed: the
    // node yields no candidate either way. Off only to test that equivalence.
    bool room_bound = true;
  };

  DefaultPreemption(Handle* handle, PreemptionActuator* actuator, Options options);
  DefaultPreemption(Handle* handle, PreemptionActuator* actuator) : DefaultPreemption(handle, actuator, Options{}) {}
  std::string_view Name() const override { return kName; }
  PostFilterResult PostFilter(CycleState& state, const PodInfo& pod, const NodeToStatus& filtered) override;

  // Step 1 (§2). On false, `reason` holds the message (without the "preemption: " prefix).
  bool PodEligibleToPreemptOthers(const PodInfo& pod, const NodeToStatus& filtered, std::string* reason) const;
  // §4: how many candidates the scan looks for among `potential` nodes.
  size_t NumCandidates(size_t potential) const;

  const PreemptionMetrics& metrics() const { return metrics_; }

 private:
  // The candidates FindCandidates found, by pointer: into the dry-run cache, or into `fresh` for
  // dry runs made in this call. Those without PDB violations come first, each in scan order.
  struct Candidates {
    std::deque<Candidate> fresh;
    std::vector<const Candidate*> list;
  };

  // Dry-run reuse: per snapshot node, the last result and what it was computed for — the pod's
  // equivalence class, the node's generation, the time when the result read it, and the allowed
  // disruptions of every budget matching one of the node's pods of at most the preemptor's
  // priority. Only for resource-only dry runs by pod, whose result depends on nothing else.
  class DryRunCache {
   public:
    // Readies the cache for `ev`; false when no result of this call may be cached (the pod has
    // no equivalence class, or the budgets are not the tracker's).
    bool Begin(const Evaluation& ev, const state::Snapshot& snap);
    // The result for `node` (at `index` in the snapshot), from the cache when it still holds,
    // else from `dry_run()`, then stored.
    template <typename DryRunFn>
    const DryRun& Get(const Evaluation& ev, const NodeInfo& node, size_t index, DryRunFn&& dry_run);

   private:
    struct Entry {
      uint64_t generation = UINT64_MAX;
      uint64_t pod_class = 0;
      // The importance order reads the time only for a pod that has not started ("no start =
      // now"), and eligibility only with minRuntimeSeconds. On a node where every pod has started
      // and without that option, the result holds at any time: on a live clock, which moves
      // between any two cycles, that is what lets it be reused at all.
      bool reads_now = true;
      Timestamp now = 0;
      uint64_t budgets_version = 0;
      std::vector<std::pair<uint32_t, int32_t>> budgets;  // (index into the views, allowed)
      DryRun result;
    };
    bool Holds(const Evaluation& ev, const NodeInfo& node, const Entry& e) const;
    std::vector<Entry> entries_;
    uint64_t structure_ = UINT64_MAX;
    uint64_t pod_class_ = 0;
    uint64_t budgets_version_ = 0;
  };

  // Step 2 (§3), into `buffers_.potential`, in filtering order.
  const std::vector<const NodeInfo*>& NodesWherePreemptionMightHelp(const NodeToStatus& filtered);
  // Step 2's answer: `count` nodes, listed in scan order, or (list null) the scheduler's
  // rejections, which visit only the nodes where room can be made. With `by_room`, nodes where
  // none can be made are skipped.
  struct Potential {
    size_t count = 0;
    const std::vector<const NodeInfo*>* list = nullptr;
    const Rejections* rejections = nullptr;
    bool by_room = false;
  };
  // Step 3 (§4, §5). Nodes without a candidate go into `diagnosis` (and `explanation`, if given).
  Candidates FindCandidates(Evaluation& ev, const Potential& potential, Diagnosis& diagnosis,
                            std::vector<std::string>* explanation);
  // §5 on one node: by victim unit where the node runs pod group members, else by the
  // configured victim selection.
  DryRun SelectVictimsOnNode(Evaluation& ev, const NodeInfo& node) const;
  // Step 5 (§8).
  void PrepareCandidate(const PodInfo& pod, const Candidate& chosen);

  Handle* handle_;
  PreemptionActuator* actuator_;
  Options options_;
  PreemptionMetrics metrics_;
  const KubernetesVictimSelection kubernetes_{};
  const NomadVictimSelection nomad_{};
  const OptimalVictimSelection optimal_{};
  DryRunCache dry_runs_;
  // Allocations reused from call to call; no value carries over.
  struct Buffers {
    std::vector<const NodeInfo*> potential;
    std::vector<NodeStatus> no_candidate;
  } buffers_;
};

}  // namespace arbiter::sched::preemption
