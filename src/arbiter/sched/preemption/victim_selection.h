// Victim selection on one node: kube-scheduler's SelectVictimsOnNode (docs/upstream-rules.md
// Part A §5) and the policies DefaultPreemption may apply there.
//
// An Evaluation is everything one PostFilter call knows: the preemptor, its CycleState, the
// budgets, the time, whether the resource-only dry run applies, and the victim units built so
// far. It is passed down to every step; nothing of it outlives the call.
//
// A dry run works on a trial node — the node with potential victims taken out — and asks it
// whether the preemptor fits. Two trials answer the same question:
//   * FilterTrial: a copy of the node and a clone of the CycleState, with the PreFilter
//     extensions told of every pod taken out or put back; the profile's filters decide (with
//     the nominated pods, §14.2). Always right.
//   * ResourceTrial: resource sums. Right when every filter in play either ignores the node's
//     pods or is the resource filter, and no PreFilter extension is active (FastPath::applies):
//     taking pods out can then change only the resource verdict. Much cheaper.
//
// The policies (VictimSelection):
//   * Kubernetes (upstream's): every strictly lower-priority pod is a potential victim; if the
//     preemptor fits with all of them gone, they go back one by one by GreedyReprieve
//     (reprieve.h) — PDB-violating pods first, then the rest, each most important first — and
//     those that cannot go back are the victims.
//   * Nomad (SchedulerConfig::victim_selection kNomad): only pods at least the priority delta
//     lower, lowest priority first, best fit by Nomad's distance, then the superset filter
//     (model/best_fit_victims.h, the rule Nomad's own preemptor uses); the node's filters must
//     pass without them.
// From v1.37 a node that runs pod group members is tried by victim unit under either policy
// (SelectUnitVictimsOnNode, victim_units.h): an `all`-mode group is never broken up.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <optional>
#include <utility>
#include <vector>

#include "arbiter/sched/framework/framework.h"
#include "arbiter/sched/preemption/candidate.h"
#include "arbiter/sched/preemption/disruption.h"
#include "arbiter/sched/preemption/eligibility.h"
#include "arbiter/sched/preemption/victim_units.h"

namespace arbiter::sched::preemption {

inline constexpr std::string_view kNoVictims = "No preemption victims found for incoming pod";
inline constexpr std::string_view kNotHelpful = "Preemption is not helpful for scheduling";
// The two as interned reason lists: a rejection per node allocates nothing.
Status::Reasons NoVictimsReasons();
Status::Reasons NotHelpfulReasons();

// Whether the resource-only dry run applies to a cycle, and what it must still run.
struct FastPath {
  bool applies = false;
  // The filters in play that ignore the node's pods: their verdict on the trial node is the
  // verdict on the node, so they run once.
  std::vector<const FilterPlugin*> pod_independent;
  // The filter the resource rule stands in for (FilterPlugin::ChecksOnlyNodeResources).
  const FilterPlugin* resources = nullptr;

  // Decides for the cycle in `state`; `enabled` false (a test of the equivalence) never applies.
  static FastPath For(const Framework& fw, const CycleState& state, bool enabled);
  // A shortage in the resource filter's words, naming it; Unschedulable when the profile has none.
  Status Shortage(const model::Resources& request, const model::Resources& allocatable,
                  const model::Resources& used, int64_t pod_count) const;
};

struct Evaluation;

// crossNodePreemption (Arbiter's option): at most this many pods of other nodes are weighed for
// one node; beyond, the node keeps upstream's answer (the call counts it).
inline constexpr size_t kMaxCrossNodeVictims = 256;

// crossNodePreemption's index, built once per call: the potential victims on every node that
// the preemptor's rules can count against it (pods its required anti-affinity terms or its
// DoNotSchedule spread constraints select; pods whose own required anti-affinity selects it),
// by topology domain (key, value). A superset: the reprieve keeps whichever need not go.
class CrossNodeIndex {
 public:
  void Build(const Evaluation& ev);
  // Those in `node`'s domains, on other nodes, each once.
  std::vector<PodInfoPtr> OtherNodesPods(const NodeInfo& node) const;

 private:
  std::map<std::pair<std::string, std::string>, std::vector<PodInfoPtr>> by_domain_;
  std::set<std::string> keys_;
};

struct Evaluation {
  Evaluation(Handle& h, const CycleState& s, const PodInfo& p, std::vector<PdbView> budgets, FastPath fp,
             const PreemptionHistory* history = nullptr);

  Handle& handle;
  const CycleState& state;
  const PodInfo& pod;
  const std::vector<PdbView> pdbs;
  const FastPath fast_path;
  const Timestamp now;

  // Who may be a victim (eligibility.h): by pod, and by victim unit.
  const VictimEligibility eligible;
  const VictimEligibility unit_eligible;

  // victimSelection Optimal's record of this call (optimal_victims.cc): nodes searched, search
  // steps taken, nodes left with the greedy answer because a bound was hit (named, for
  // --explain), and nodes where the exact search does not apply (other filters read the pods).
  struct OptimalRecord {
    size_t searched = 0;
    size_t steps = 0;
    size_t fallbacks = 0;
    std::vector<std::string> fallback_nodes;
    size_t not_applicable = 0;
  } optimal;

  // crossNodePreemption's index (built on first use) and record: nodes whose candidate evicts
  // pods of other nodes, and nodes where too many such pods were in play to weigh.
  std::optional<CrossNodeIndex> cross_node;
  size_t cross_node_candidates = 0;
  size_t cross_node_skipped = 0;

  // The victim units of this call, built as nodes need them and shared by every node (a unit
  // may span nodes).
  UnitBuilder& units() {
    if (!units_) units_ = std::make_unique<UnitBuilder>(handle);
    return *units_;
  }
  // Whether `node` is tried by victim unit.
  bool ByUnits(const NodeInfo& node) const { return handle.groups() != nullptr && node.has_group_members(); }

 private:
  std::unique_ptr<UnitBuilder> units_;
};

// The result of a dry run on one node: the candidate, or the status saying why the node cannot
// help.
using DryRun = std::pair<std::optional<Candidate>, Status>;

class VictimSelection {
 public:
  virtual ~VictimSelection() = default;
  // §5 on `node` for the evaluation's preemptor, when the node is not tried by unit.
  virtual DryRun SelectVictimsOnNode(Evaluation& ev, const NodeInfo& node) const = 0;
};

class KubernetesVictimSelection final : public VictimSelection {
 public:
  DryRun SelectVictimsOnNode(Evaluation& ev, const NodeInfo& node) const override;
};

class NomadVictimSelection final : public VictimSelection {
 public:
  DryRun SelectVictimsOnNode(Evaluation& ev, const NodeInfo& node) const override;
};

// Arbiter's `victimSelection: Optimal` (docs/upstream-rules.md Part F§4): the Kubernetes
// policy's answer, then, where the resource-only dry run applies, an exact search for a set that
// ranks strictly better under §7's order (PDB violations counted as evictions beyond each budget's
// allowance; the highest victim priority; the sum of priority + 2^31; the latest start among the
// highest-priority victims). The search is bounded in steps per node, so that its answer never
// depends on timing nor on the other nodes (a dry run may be cached): a node whose bound is hit
// keeps the greedy answer, and the call records it (Evaluation::optimal) for --explain and the
// metrics (a cached result is not searched, nor counted, again).
class OptimalVictimSelection final : public VictimSelection {
 public:
  static constexpr size_t kStepsPerNode = 20'000;
  DryRun SelectVictimsOnNode(Evaluation& ev, const NodeInfo& node) const override;
};

// §5 by victim unit, on a node that runs pod group members (Part B §7).
DryRun SelectUnitVictimsOnNode(Evaluation& ev, const NodeInfo& node);

}  // namespace arbiter::sched::preemption
