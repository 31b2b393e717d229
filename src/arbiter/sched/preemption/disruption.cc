// PDB classification of potential victims.
#include "arbiter/sched/preemption/disruption.h"

namespace arbiter::sched::preemption {

PdbBudgets::PdbBudgets(const std::vector<PdbView>& pdbs) : pdbs_(pdbs) {
  allowed_.reserve(pdbs.size());
  for (const auto& p : pdbs) allowed_.push_back(p.disruptions_allowed);
}

bool PdbBudgets::Consume(const model::Pod& pod) {
  if (pod.labels.empty()) return false;
  bool violating = false;
  const std::string key = pod.Key();
  for (size_t i = 0; i < pdbs_.size(); ++i) {
    const PdbView& pdb = pdbs_[i];
    if (pdb.ns != pod.ns || pdb.selector.empty() || !pdb.selector.Matches(pod.labels)) continue;
    if (pdb.disrupted_pods.count(key)) continue;  // already counted as disrupted
    if (--allowed_[i] < 0) violating = true;
  }
  return violating;
}

PdbSplit SplitByPdb(const std::vector<state::PodInfoPtr>& pods, const std::vector<PdbView>& pdbs) {
  PdbSplit out;
  PdbBudgets budgets(pdbs);
  for (const auto& pod : pods) (budgets.Consume(pod->pod) ? out.violating : out.non_violating).push_back(pod);
  return out;
}

}  // namespace arbiter::sched::preemption
