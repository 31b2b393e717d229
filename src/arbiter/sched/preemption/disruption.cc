// PDB classification of potential victims.
#include "arbiter/sched/preemption/disruption.h"

namespace arbiter::sched::preemption {

PdbSplit SplitByPdb(const std::vector<state::PodInfoPtr>& pods, const std::vector<PdbView>& pdbs) {
  PdbSplit out;
  std::vector<int64_t> allowed;
  allowed.reserve(pdbs.size());
  for (const auto& p : pdbs) allowed.push_back(p.disruptions_allowed);
  for (const auto& pod : pods) {
    bool violating = false;
    if (!pod->pod.labels.empty()) {
      const std::string key = pod->pod.Key();
      for (size_t i = 0; i < pdbs.size(); ++i) {
        const PdbView& pdb = pdbs[i];
        if (pdb.ns != pod->pod.ns || pdb.selector.empty() || !pdb.selector.Matches(pod->pod.labels)) continue;
        if (pdb.disrupted_pods.count(key)) continue;  // already counted as disrupted
        if (--allowed[i] < 0) violating = true;
      }
    }
    (violating ? out.violating : out.non_violating).push_back(pod);
  }
  return out;
}

}  // namespace arbiter::sched::preemption
