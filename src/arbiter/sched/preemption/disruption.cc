// PDB classification of potential victims.
#include "arbiter/sched/preemption/disruption.h"

#include <algorithm>

namespace arbiter::sched::preemption {

PdbBudgets::PdbBudgets(const std::vector<PdbView>& pdbs) : pdbs_(pdbs) {
  allowed_.reserve(pdbs.size());
  for (const auto& p : pdbs) allowed_.push_back(p.disruptions_allowed);
}

bool PdbBudgets::Consume(const model::Pod& pod) {
  if (pod.labels.empty()) return false;
  bool violating = false;
  std::string key;  // built at the first match only
  for (size_t i = 0; i < pdbs_.size(); ++i) {
    const PdbView& pdb = pdbs_[i];
    if (!pdb.Matches(pod)) continue;
    if (key.empty()) key = pod.Key();
    if (!pdb.disrupted_pods.empty() && pdb.disrupted_pods.count(key)) continue;  // already counted as disrupted
    if (--allowed_[i] < 0) violating = true;
  }
  return violating;
}

std::vector<std::string> PdbBudgets::Exceeded() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < pdbs_.size(); ++i) {
    if (allowed_[i] < 0) out.push_back(pdbs_[i].ns + "/" + pdbs_[i].name);
  }
  return out;
}

std::string StrictPdbViolation(const std::vector<PdbView>& pdbs, const std::vector<const model::Pod*>& victims) {
  PdbBudgets budgets(pdbs);
  for (const model::Pod* v : victims) budgets.Consume(*v);
  std::string names;
  for (const auto& n : budgets.Exceeded()) names += (names.empty() ? "" : ", ") + n;
  return names.empty() ? names : "Preemption would violate PodDisruptionBudget " + names + " (pdbPolicy: Strict)";
}

int64_t EvictionsBeyondBudgets(const std::vector<PdbView>& pdbs, const std::vector<const model::Pod*>& victims) {
  std::vector<int64_t> taken(pdbs.size(), 0);
  for (const model::Pod* v : victims) {
    const std::string key = v->Key();
    for (size_t b = 0; b < pdbs.size(); ++b) {
      if (pdbs[b].Charges(*v, key)) ++taken[b];
    }
  }
  int64_t out = 0;
  for (size_t b = 0; b < pdbs.size(); ++b) out += std::max<int64_t>(0, taken[b] - pdbs[b].disruptions_allowed);
  return out;
}

PdbSplit SplitByPdb(const std::vector<state::PodInfoPtr>& pods, const std::vector<PdbView>& pdbs) {
  PdbSplit out;
  PdbBudgets budgets(pdbs);
  for (const auto& pod : pods) (budgets.Consume(pod->pod) ? out.violating : out.non_violating).push_back(pod);
  return out;
}

int32_t DisruptionsAllowed(const model::PodDisruptionBudget& pdb, int64_t expected, int64_t healthy, int64_t evicted) {
  if (pdb.disruptions_allowed) return static_cast<int32_t>(std::max<int64_t>(0, *pdb.disruptions_allowed - evicted));
  return static_cast<int32_t>(std::min<int64_t>(model::AllowedDisruptions(pdb, expected, healthy), INT32_MAX));
}

std::vector<PdbView> CurrentPdbViews(const std::vector<model::PodDisruptionBudget>& pdbs,
                                     const std::vector<const model::Pod*>& pods,
                                     const std::function<bool(const model::Pod&)>& healthy,
                                     const std::set<std::string>& evicted,
                                     const std::vector<const model::Pod*>& gone_evicted) {
  std::vector<PdbView> out;
  for (const auto& pdb : pdbs) {
    PdbView v;
    v.ns = pdb.ns;
    v.name = pdb.name;
    v.selector = pdb.selector;
    v.disrupted_pods.insert(pdb.disrupted_pods.begin(), pdb.disrupted_pods.end());
    int64_t expected = 0, ok = 0, gone = 0;
    for (const model::Pod* pod : pods) {
      if (!BudgetCounts(pdb.ns, pdb.selector, pod->ns, pod->labels)) continue;
      ++expected;
      if (v.disrupted_pods.count(pod->Key())) continue;
      if (healthy(*pod)) ++ok;
      if (evicted.count(pod->Key())) ++gone;
    }
    for (const model::Pod* pod : gone_evicted) {
      if (BudgetCounts(pdb.ns, pdb.selector, pod->ns, pod->labels) && !v.disrupted_pods.count(pod->Key())) ++gone;
    }
    v.disruptions_allowed = DisruptionsAllowed(pdb, expected, ok, gone);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace arbiter::sched::preemption
