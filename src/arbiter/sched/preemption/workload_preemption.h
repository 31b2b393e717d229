// Workload-aware preemption (WAP): a pod group preempting as one unit over the whole cluster,
// as kube-scheduler v1.37 does it in DefaultPreemption's PodGroupPostFilter
// (docs/upstream-rules.md Part B §4; step numbers below refer to it).
//
//   0. Eligibility: the root's preemptionPolicy Never never preempts; a group one of whose
//      members is nominated to a node where a lower-priority victim is still terminating waits
//      for it (no new preemption; its nominations stay).
//   1. Victim units over every node (victim_units.h), 2. strictly below the root's priority,
//   3. sorted by importance and classified by PDB; the reprieval order is the PDB-violating
//      units first, then the rest, each most important first.
//   4. Every potential victim is removed from the snapshot, and 5. the group placement runs once.
//      If it fails, nothing is evicted.
//   6. Reprieval in place, unit by unit: the unit's pods go back (and into every placed pod's
//      CycleState); every placed preemptor pod is replayed in scheduling order (Filter on its
//      node with nominated pods, then add, then Reserve); the unit stays only if all pass; the
//      preemptor pods are always rolled back. When every filter in play decides from the node
//      alone and no PreFilter extension is active, only the preemptor pods on the nodes the unit
//      touches are replayed: the verdicts elsewhere cannot change (upstream's phase 1).
//   7. The victims are the units not reprieved, all their pods; 8. they are evicted and every
//      placed pod is nominated to its node.
//
// Exact shortcuts (the same victims and nominations, at a cost that follows the victims rather
// than the cluster): step 1 passes over a node with no pod up to the priority limit and no group
// member (VictimEligibility::MayHoldVictims), and reads no pod whose summary rules it out; step 4 removes each
// node's victims in one pass; in step 6, when only the placed pods' nodes are replayed, a unit
// with no pod on one of them stays without being put back (the snapshot is restored after).
//
// victimSelection Optimal (Arbiter's, off by default; docs/upstream-rules.md Part F) adds
// alternative placements: for each topology domain the group could use (the values of the
// members' required pod affinity, anti-affinity and spread keys, then of
// topology.kubernetes.io/zone; at most kMaxGroupAlternatives), steps 4-6 again with only the
// units that have a pod in that domain removed. Each attempt's whole victim set is ranked as
// node choice ranks candidates (candidate.h: evictions beyond each budget's allowance, the
// highest victim priority, the offset sum, the count, then the start-time rule); the upstream
// attempt comes first and wins ties.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "arbiter/sched/framework/group_host.h"
#include "arbiter/sched/preemption/disruption.h"
#include "arbiter/sched/preemption/victim_units.h"

namespace arbiter::sched::preemption {

// Upstream's scheduler_podgroup_preemption_* counters.
struct WorkloadPreemptionMetrics {
  uint64_t attempts = 0;
  uint64_t preemptions = 0;
  uint64_t victims = 0;
  uint64_t reprieved = 0;  // units kept by reprieval
};

class WorkloadPreemption final : public PodGroupPostFilterPlugin {
 public:
  static constexpr std::string_view kName = "DefaultPreemption";

  WorkloadPreemption(GroupHost* host, PreemptionActuator* actuator) : host_(host), actuator_(actuator) {}
  std::string_view Name() const override { return kName; }

  // `pods`: the group's pending members in scheduling order. The snapshot must match the cache
  // on entry; it does again on return.
  GroupPostFilterResult PodGroupPostFilter(const state::GroupNode& root, const std::vector<PodInfoPtr>& pods) override;

  const WorkloadPreemptionMetrics& metrics() const { return metrics_; }

  // The most alternative placements victimSelection Optimal tries for one group decision.
  static constexpr size_t kMaxGroupAlternatives = 32;

 private:
  // One run of steps 4-6 over `units` (reprieval order); the snapshot matches the cache after.
  struct GroupAttempt {
    bool placed_any = false;  // the group placed feasibly with every unit of `units` removed
    std::string reason;       // why not
    std::vector<std::pair<PodInfoPtr, std::string>> nominations;  // placed pod -> node, in order
    std::vector<const VictimUnit*> victims;                        // the units not reprieved
    uint64_t reprieved = 0;
  };
  // The position of the node of each potential victim looked at (lookup only, never iterated);
  // a pod missing from it is found by its node's name.
  using NodePositions = std::unordered_map<const state::PodInfo*, uint32_t>;
  GroupAttempt Attempt(const state::GroupNode& root, const std::vector<PodInfoPtr>& pods,
                       const std::vector<VictimUnit*>& units, const NodePositions& where);
  // victimSelection Optimal: replaces `chosen` (and its Strict violation) by the best-ranked
  // attempt over single topology domains, if one ranks strictly better.
  void ChooseAmongDomains(const state::GroupNode& root, const std::vector<PodInfoPtr>& pods,
                          const std::vector<VictimUnit*>& units, const NodePositions& where,
                          const std::vector<PdbView>& pdbs, GroupAttempt& chosen,
                          std::string& strict_violation, std::vector<std::string>& explanation);
  static std::vector<const model::Pod*> PodsOf(const std::vector<const VictimUnit*>& victims);

  GroupHost* host_;
  PreemptionActuator* actuator_;
  WorkloadPreemptionMetrics metrics_;
};

}  // namespace arbiter::sched::preemption
