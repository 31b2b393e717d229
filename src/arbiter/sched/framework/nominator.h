// The Nominator remembers which pending pods were nominated to which node (by preemption, or by
// `status.nominatedNodeName` in the input), so that filtering can count them against pods of
// equal or lower priority. Per node, pods are kept in nomination order; lookups by node return
// them in that order, so results never depend on hash order.
#pragma once

#include <unordered_map>
#include <functional>
#include <string>
#include <vector>

#include "arbiter/state/node_info.h"

namespace arbiter::sched {

class Nominator {
 public:
  // Called with a node's name whenever the pods nominated to it change.
  void set_on_change(std::function<void(const std::string&)> f) { on_change_ = std::move(f); }

  // Records (or moves) the nomination of `pod` to `node`; an empty node removes it.
  void AddNominatedPod(const state::PodInfoPtr& pod, const std::string& node);
  void DeleteNominatedPod(const std::string& uid);
  // Pods nominated to `node`, in nomination order.
  const std::vector<state::PodInfoPtr>& NominatedPodsForNode(const std::string& node) const;
  bool empty() const { return node_of_.empty(); }
  // The node `uid` is nominated to, or "".
  std::string NominatedNode(const std::string& uid) const;

 private:
  // Lookup only: per node the pods keep nomination order, so no result depends on hash order.
  std::unordered_map<std::string, std::vector<state::PodInfoPtr>> by_node_;
  std::unordered_map<std::string, std::string> node_of_;
  std::function<void(const std::string&)> on_change_;
};

}  // namespace arbiter::sched
