// Nomination bookkeeping.
#include "arbiter/sched/framework/nominator.h"

#include <algorithm>

namespace arbiter::sched {

void Nominator::AddNominatedPod(const state::PodInfoPtr& pod, const std::string& node) {
  DeleteNominatedPod(pod->uid());
  if (node.empty()) return;
  by_node_[node].push_back(pod);
  node_of_[pod->uid()] = node;
  if (on_change_) on_change_(node);
}

void Nominator::DeleteNominatedPod(const std::string& uid) {
  auto it = node_of_.find(uid);
  if (it == node_of_.end()) return;
  const std::string node = it->second;
  auto& v = by_node_[node];
  v.erase(std::remove_if(v.begin(), v.end(), [&](const state::PodInfoPtr& p) { return p->uid() == uid; }),
          v.end());
  if (v.empty()) by_node_.erase(node);
  node_of_.erase(it);
  if (on_change_) on_change_(node);
}

const std::vector<state::PodInfoPtr>& Nominator::NominatedPodsForNode(const std::string& node) const {
  static const std::vector<state::PodInfoPtr> kNone;
  auto it = by_node_.find(node);
  return it == by_node_.end() ? kNone : it->second;
}

std::string Nominator::NominatedNode(const std::string& uid) const {
  auto it = node_of_.find(uid);
  return it == node_of_.end() ? "" : it->second;
}

}  // namespace arbiter::sched
