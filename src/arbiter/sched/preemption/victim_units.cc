// Victim units and their importance order.
#include "arbiter/sched/preemption/victim_units.h"

#include <algorithm>

namespace arbiter::sched::preemption {

bool MoreImportantUnit(const VictimUnit& a, const VictimUnit& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.rank != b.rank) return a.rank > b.rank;
  if (a.pods.size() != b.pods.size()) return a.pods.size() > b.pods.size();
  if (a.earliest_start != b.earliest_start) {
    if (!a.earliest_start) return false;  // not started: the newest possible
    if (!b.earliest_start) return true;
    return *a.earliest_start < *b.earliest_start;
  }
  return a.first_uid < b.first_uid;
}

int32_t EffectivePriority(const Handle& handle, const model::Pod& pod) {
  if (pod.pod_group_name.empty()) return pod.priority;
  const state::GroupIndex* groups = handle.groups();
  return groups != nullptr ? groups->EffectivePriority(pod) : pod.priority;
}

UnitBuilder::Looked UnitBuilder::Look(const model::Pod& pod) const {
  const state::GroupIndex* groups = handle_.groups();
  const state::GroupNode* group = groups != nullptr ? groups->PodGroupOf(pod) : nullptr;
  return {state::GroupIndex::EffectivePriority(group, pod), group};
}

size_t UnitBuilder::UnitOf(const PodInfoPtr& pod, const Looked& looked) {
  const state::GroupNode* leaf = looked.group;
  if (leaf != nullptr && !leaf->valid) leaf = nullptr;
  const state::GroupNode* all = leaf != nullptr ? state::GroupIndex::AllModeAncestor(*leaf) : nullptr;
  const void* id = all != nullptr ? static_cast<const void*>(all) : static_cast<const void*>(pod.get());
  auto [it, inserted] = by_key_.emplace(id, units_.size());
  if (!inserted) return it->second;
  VictimUnit u;
  u.priority = looked.priority;
  if (all != nullptr) {
    u.rank = all->composite ? UnitRank::kCompositePodGroup : UnitRank::kPodGroup;
    std::vector<const state::GroupNode*> leaves;
    state::GroupIndex::LeavesUnder(*all, leaves);
    for (const state::GroupNode* l : leaves) handle_.BoundGroupMembers(*l, u.pods);
    if (u.pods.empty()) u.pods.push_back(pod);  // not yet known as a member (defensive)
  } else {
    u.rank = leaf != nullptr ? UnitRank::kPodGroup : UnitRank::kPod;
    u.pods.push_back(pod);
  }
  u.first_uid = u.pods.front()->uid();
  for (const auto& p : u.pods) {
    u.first_uid = std::min(u.first_uid, p->uid());
    if (p->pod.start_time && (!u.earliest_start || *p->pod.start_time < *u.earliest_start)) {
      u.earliest_start = p->pod.start_time;
    }
  }
  units_.push_back(std::move(u));
  return units_.size() - 1;
}

void ClassifyByPdb(std::vector<VictimUnit*>& units, const std::vector<PdbView>& pdbs) {
  if (pdbs.empty()) return;
  PdbBudgets budgets(pdbs);
  for (VictimUnit* u : units) {
    for (const auto& p : u->pods) u->violates_pdb |= budgets.Consume(p->pod);
  }
}

}  // namespace arbiter::sched::preemption
