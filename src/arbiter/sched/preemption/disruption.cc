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

namespace {

int32_t Percent(const model::IntOrPercent& v, int32_t of) {
  if (!v.percent) return v.value;
  return static_cast<int32_t>((int64_t{v.value} * of + 99) / 100);  // rounded up, as upstream
}

}  // namespace

std::vector<PdbView> CurrentPdbViews(const std::vector<model::PodDisruptionBudget>& pdbs,
                                     const std::vector<const model::Pod*>& pods,
                                     const std::function<bool(const model::Pod&)>& healthy,
                                     const std::set<std::string>& evicted) {
  std::vector<PdbView> out;
  for (const auto& pdb : pdbs) {
    PdbView v;
    v.ns = pdb.ns;
    v.name = pdb.name;
    v.selector = pdb.selector;
    v.disrupted_pods.insert(pdb.disrupted_pods.begin(), pdb.disrupted_pods.end());
    auto matches = [&](const model::Pod& p) {
      return p.ns == pdb.ns && !pdb.selector.empty() && pdb.selector.Matches(p.labels);
    };
    if (pdb.disruptions_allowed) {
      int32_t allowed = *pdb.disruptions_allowed;
      for (const model::Pod* pod : pods) {
        if (matches(*pod) && evicted.count(pod->Key()) && !v.disrupted_pods.count(pod->Key())) --allowed;
      }
      v.disruptions_allowed = std::max(0, allowed);
    } else {
      int32_t expected = 0, ok = 0;
      for (const model::Pod* pod : pods) {
        if (!matches(*pod)) continue;
        ++expected;
        if (healthy(*pod) && !v.disrupted_pods.count(pod->Key())) ++ok;
      }
      int32_t desired = 0;
      if (pdb.min_available) {
        desired = Percent(*pdb.min_available, expected);
      } else if (pdb.max_unavailable) {
        desired = expected - Percent(*pdb.max_unavailable, expected);
      }
      v.disruptions_allowed = std::max(0, ok - desired);
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace arbiter::sched::preemption
