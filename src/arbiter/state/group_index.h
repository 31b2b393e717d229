// GroupIndex: the scheduler's view of the Workload API's runtime groups — PodGroups (always
// leaves) and CompositePodGroups (inner nodes) — as a forest, with what scheduling and
// preemption ask of it (docs/upstream-rules.md Part B):
//
//   * the root of a pod's hierarchy, whose priority and preemption policy are authoritative for
//     every member (§2: the code walks up to the root);
//   * the victim unit of a running member (§4 step 1): the highest ancestor in `all` disruption
//     mode, if any; otherwise the pod alone;
//   * the quorum rules of a gang (§3): a PodGroup needs `minCount` members (1 for `basic`), a
//     CompositePodGroup `minGroupCount` children that meet their own quorum (1 for `basic`).
//
// A hierarchy whose links form a cycle, go deeper than kMaxGroupHierarchyDepth, or name a parent
// that does not exist is invalid; admission rejects such input, and Valid() says so for callers
// that meet it at run time. Children keep the order in which groups were added (upstream sorts
// siblings by creation time), so every walk is deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "arbiter/model/objects.h"

namespace arbiter::state {

struct GroupNode {
  std::string key;  // namespace/name
  std::string name;
  bool composite = false;
  std::string parent_key;  // "" for a root
  model::GroupPolicy policy = model::GroupPolicy::kBasic;
  int32_t min = 0;  // minCount or minGroupCount as written (0 for basic)
  model::DisruptionMode disruption_mode = model::DisruptionMode::kSingle;
  int32_t priority = 0;
  model::PreemptionPolicy preemption_policy = model::PreemptionPolicy::kPreemptLowerPriority;
  uint64_t order = 0;  // order of addition

  // Filled by Finalize.
  const GroupNode* parent = nullptr;
  std::vector<const GroupNode*> children;
  const GroupNode* root = this;
  int depth = 1;        // 1 for a root
  bool valid = true;
  std::string invalid_reason;

  // The quorum: members for a PodGroup, children for a CompositePodGroup (1 for basic).
  int32_t Quorum() const { return policy == model::GroupPolicy::kGang ? min : 1; }
  std::string_view Kind() const { return composite ? "CompositePodGroup" : "PodGroup"; }
};

class GroupIndex {
 public:
  // Not copyable: its lookups and its order point into its own map (moving keeps them valid).
  GroupIndex() = default;
  GroupIndex(const GroupIndex&) = delete;
  GroupIndex& operator=(const GroupIndex&) = delete;
  GroupIndex(GroupIndex&&) = default;
  GroupIndex& operator=(GroupIndex&&) = default;
  void AddPodGroup(const model::PodGroup& g);
  void AddCompositePodGroup(const model::CompositePodGroup& g);
  // Links parents and children and checks the hierarchies. Call after adding groups.
  void Finalize();

  bool empty() const { return groups_.empty(); }
  const GroupNode* Find(const std::string& key) const;
  // The PodGroup a pod names, or nullptr (no group, or a group that does not exist).
  const GroupNode* PodGroupOf(const model::Pod& pod) const;
  // The pod's effective priority: its root group's, or its own when it has no group.
  int32_t EffectivePriority(const model::Pod& pod) const;
  // The same, for a pod whose PodGroupOf is `group` (already looked up).
  static int32_t EffectivePriority(const GroupNode* group, const model::Pod& pod) {
    return group != nullptr && group->valid ? group->root->priority : pod.priority;
  }
  // The highest ancestor-or-self of `leaf` in `all` disruption mode, or nullptr.
  static const GroupNode* AllModeAncestor(const GroupNode& leaf);
  // The PodGroups under `node` (itself if it is one), depth first in child order.
  static void LeavesUnder(const GroupNode& node, std::vector<const GroupNode*>& out);
  // Every group, in order of addition.
  const std::vector<const GroupNode*>& all() const { return order_; }

 private:
  std::map<std::string, GroupNode, std::less<>> groups_;
  std::vector<const GroupNode*> order_;
  // Lookups by key without string comparisons down the map (preemption looks up every victim's
  // group): never iterated, so no decision depends on its order.
  std::unordered_map<std::string_view, const GroupNode*> by_key_;
  void Index(const std::string& key);
};

}  // namespace arbiter::state
