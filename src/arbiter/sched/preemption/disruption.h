// What preemption needs to know about PodDisruptionBudgets and how it asks for evictions.
//
// PdbView is a budget as the disruption controller would report it now: its selector and
// namespace, how many more disruptions it allows, and the pods already counted as disrupted.
// SplitByPdb is kube-scheduler's filterPodsWithPDBViolation: one pass over victims in
// importance order, consuming each matching budget; a pod that takes any matching budget
// below zero is violating. Unlabelled pods and empty selectors match nothing; namespaces must
// match; a pod already in a budget's disruptedPods does not consume it.
//
// PreemptionActuator is the environment that carries decisions out (the simulator in `plan`,
// the API in `serve`).
#pragma once

#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/model/objects.h"
#include "arbiter/state/node_info.h"

namespace arbiter::sched::preemption {

class PreemptionHistory;

using model::BudgetCounts;  // the one matching rule (model/objects.h)

struct PdbView {
  std::string ns;
  std::string name;
  model::LabelSelector selector;
  int32_t disruptions_allowed = 0;
  std::set<std::string> disrupted_pods;  // "namespace/name"
  // Which set of budgets this view belongs to: the same non-zero value for two calls means the
  // same budgets at the same indices (selectors and disruptedPods unchanged), only their
  // allowed disruptions may differ. 0: unknown (a dry run may then not be reused).
  uint64_t budgets_version = 0;

  // Whether this budget counts `pod`: same namespace, a non-empty selector matching its labels.
  bool Matches(const model::Pod& pod) const { return BudgetCounts(ns, selector, pod.ns, pod.labels); }
  // Whether evicting `pod` (whose Key() is `key`) takes from this budget: it counts the pod, and
  // its status does not list the pod as disrupted already.
  bool Charges(const model::Pod& pod, const std::string& key) const {
    return Matches(pod) && (disrupted_pods.empty() || !disrupted_pods.count(key));
  }
};

// The budgets of a pass over victims in importance order: Consume charges a pod to every budget
// that matches it and says whether it took one below zero.
class PdbBudgets {
 public:
  explicit PdbBudgets(const std::vector<PdbView>& pdbs);
  bool Consume(const model::Pod& pod);
  // The budgets charged beyond what they allow so far, as "namespace/name", in the budgets' order.
  std::vector<std::string> Exceeded() const;

 private:
  const std::vector<PdbView>& pdbs_;
  std::vector<int64_t> allowed_;
};

struct PdbSplit {
  std::vector<state::PodInfoPtr> violating;
  std::vector<state::PodInfoPtr> non_violating;
};

// pdbPolicy Strict's rule: whether `victims`, evicted together, take more of some budget's pods
// than it allows. Upstream flags a victim as violating by its place among all the potential
// victims (§5 step 7), which may flag a set that stays within every budget; Strict forbids only
// a set that does not. The message names the budgets exceeded ("Preemption would violate
// PodDisruptionBudget ns/name (pdbPolicy: Strict)"); empty when none is.
std::string StrictPdbViolation(const std::vector<PdbView>& pdbs, const std::vector<const model::Pod*>& victims);
// How many evictions of `victims` go beyond the budgets' allowances, summed over the budgets: the
// count victimSelection Optimal compares candidates by (upstream counts flagged victims).
int64_t EvictionsBeyondBudgets(const std::vector<PdbView>& pdbs, const std::vector<const model::Pod*>& victims);

// REQUIRES: `pods` sorted by importance, most important first. Both groups keep that order.
PdbSplit SplitByPdb(const std::vector<state::PodInfoPtr>& pods, const std::vector<PdbView>& pdbs);

struct Eviction {
  state::PodInfoPtr victim;
  bool violates_pdb = false;
  int32_t priority = 0;  // effective: the root group's for a group member
};

// A victim already terminating (evicted by an earlier preemption, or deleted) is not evicted
// again: upstream's preemption skips its API call and its Preempted event, so it stays its
// first preemptor's victim and is not this preemption's. `plan` and `serve` both apply it here.
inline bool AlreadyTerminating(const Eviction& e) { return e.victim->pod.deletion_timestamp.has_value(); }

// A budget's allowed disruptions from the counts of the pods it matches (those in its
// status.disruptedPods count only in `expected`): a status the budget carries
// (disruptionsAllowed) less `evicted`, the matching pods evicted since; otherwise `healthy` less
// the desired healthy count, from minAvailable or from expected - maxUnavailable (percentages of
// `expected` rounded up, as upstream); never below 0.
int32_t DisruptionsAllowed(const model::PodDisruptionBudget& pdb, int64_t expected, int64_t healthy, int64_t evicted);

// The budgets as the disruption controller would report them now, the rule both actuators (the
// simulation and `serve`) use. A status the budget carries (disruptionsAllowed) is taken as it
// stands, less the pods in `evicted` ("namespace/name", evicted since) that match it, counting
// those of `gone_evicted` too (evicted and since deleted: the status was counted with them, and
// their going does not give the disruption back; a budget replaced by a newer status forgets
// them, see PdbStatusTracker::SetBudgets); otherwise
// it is computed from `pods` (every pod known, pending ones included): expected = the matching
// pods, healthy = those `healthy` accepts (bound, not terminating) and not already disrupted,
// desired healthy from minAvailable or maxUnavailable (percentages rounded up, as upstream).
std::vector<PdbView> CurrentPdbViews(const std::vector<model::PodDisruptionBudget>& pdbs,
                                     const std::vector<const model::Pod*>& pods,
                                     const std::function<bool(const model::Pod&)>& healthy,
                                     const std::set<std::string>& evicted,
                                     const std::vector<const model::Pod*>& gone_evicted = {});

class PreemptionActuator {
 public:
  virtual ~PreemptionActuator() = default;
  // The budgets as they stand now.
  virtual std::vector<PdbView> Pdbs() const = 0;
  // Carries out a decision for `preemptor` on `node`: each victim not already terminating gets
  // the DisruptionTarget condition (reason PreemptionByScheduler), a Preempted event and a
  // graceful deletion lasting its terminationGracePeriodSeconds. `victims` lists them all,
  // terminating ones included, in importance order.
  virtual void Preempt(const state::PodInfo& preemptor, const std::string& node,
                       const std::vector<Eviction>& victims) = 0;
  // Carries out a pod group's decision (kind PodGroup or CompositePodGroup, `group` named
  // namespace/name): every victim as in Preempt, its event naming the group.
  virtual void PreemptForGroup(const std::string& group, std::string_view kind,
                               const std::vector<Eviction>& victims) = 0;
  // Clears the nomination of a pending pod (a lower-priority pod nominated to the chosen node).
  virtual void ClearNomination(const state::PodInfoPtr& pod) = 0;
  // The preemptions of each lineage so far, for the thrash guard (preemption_history.h); null
  // when the actuator keeps none.
  virtual const PreemptionHistory* History() const { return nullptr; }
};

}  // namespace arbiter::sched::preemption
