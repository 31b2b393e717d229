// Group hierarchies: linking, validation and the walks scheduling and preemption need.
#include "arbiter/state/group_index.h"

#include <algorithm>
#include <set>

namespace arbiter::state {

namespace {

template <typename G>
GroupNode MakeNode(const G& g, bool composite, int32_t min, uint64_t order) {
  GroupNode n;
  n.key = g.Key();
  n.name = g.name;
  n.composite = composite;
  n.parent_key = g.parent.empty() ? "" : g.ns + "/" + g.parent;
  n.policy = g.policy;
  n.min = min;
  n.disruption_mode = g.disruption_mode;
  n.priority = g.priority.priority;
  n.preemption_policy = g.priority.preemption_policy;
  n.order = order;
  return n;
}

}  // namespace

void GroupIndex::Index(const std::string& key) {
  auto it = groups_.find(key);
  by_key_[it->first] = &it->second;
}

void GroupIndex::AddPodGroup(const model::PodGroup& g) {
  const std::string key = g.Key();
  groups_[key] = MakeNode(g, false, g.min_count, groups_.size());
  Index(key);
}

void GroupIndex::AddCompositePodGroup(const model::CompositePodGroup& g) {
  const std::string key = g.Key();
  groups_[key] = MakeNode(g, true, g.min_group_count, groups_.size());
  Index(key);
}

void GroupIndex::Finalize() {
  for (auto& [key, g] : groups_) {
    g.parent = nullptr;
    g.children.clear();
    g.root = &g;
    g.depth = 1;
    g.valid = true;
    g.invalid_reason.clear();
  }
  // Reindex in order of addition (a key added twice keeps its latest definition's place).
  std::vector<GroupNode*> by_order;
  for (auto& [key, g] : groups_) by_order.push_back(&g);
  std::sort(by_order.begin(), by_order.end(), [](const GroupNode* a, const GroupNode* b) { return a->order < b->order; });
  order_.assign(by_order.begin(), by_order.end());

  for (GroupNode* g : by_order) {
    if (g->parent_key.empty()) continue;
    auto it = groups_.find(g->parent_key);
    if (it == groups_.end() || !it->second.composite) {
      g->valid = false;
      g->invalid_reason = it == groups_.end()
                              ? "its parent CompositePodGroup " + g->parent_key + " does not exist"
                              : "its parent " + g->parent_key + " is a PodGroup; only a CompositePodGroup can be a parent";
      continue;
    }
    g->parent = &it->second;
    it->second.children.push_back(g);
  }
  // Roots and depths: walk up from each group, stopping at a repeat (a cycle) or a dead end.
  for (GroupNode* g : by_order) {
    std::set<const GroupNode*> seen;
    const GroupNode* at = g;
    int depth = 1;
    bool cycle = false;
    while (at->parent != nullptr) {
      if (!seen.insert(at).second) {
        cycle = true;
        break;
      }
      at = at->parent;
      ++depth;
    }
    if (cycle) {
      g->valid = false;
      g->invalid_reason = "its parent links form a cycle";
      continue;
    }
    g->root = at;
    g->depth = depth;
    if (!at->valid) {
      g->valid = false;
      g->invalid_reason = at->invalid_reason;
    }
  }
  // Depth: a hierarchy may have at most kMaxGroupHierarchyDepth levels; every member of a too
  // deep one is invalid.
  for (GroupNode* g : by_order) {
    if (g->valid && g->depth > model::kMaxGroupHierarchyDepth) {
      for (GroupNode* h : by_order) {
        if (h->root == g->root && h->valid) {
          h->valid = false;
          h->invalid_reason = "its hierarchy under " + g->root->key + " is " + std::to_string(g->depth) +
                              " levels deep; at most " + std::to_string(model::kMaxGroupHierarchyDepth) + " are allowed";
        }
      }
    }
  }
}

const GroupNode* GroupIndex::Find(const std::string& key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second;
}

const GroupNode* GroupIndex::PodGroupOf(const model::Pod& pod) const {
  if (pod.pod_group_name.empty()) return nullptr;
  // Called for every pod preemption looks at: the key is built in a reused buffer.
  thread_local std::string key;
  key.assign(pod.ns).append(1, '/').append(pod.pod_group_name);
  auto it = by_key_.find(std::string_view(key));
  if (it == by_key_.end() || it->second->composite) return nullptr;
  return it->second;
}

int32_t GroupIndex::EffectivePriority(const model::Pod& pod) const {
  return EffectivePriority(PodGroupOf(pod), pod);
}

const GroupNode* GroupIndex::AllModeAncestor(const GroupNode& leaf) {
  const GroupNode* found = nullptr;
  for (const GroupNode* at = &leaf; at != nullptr; at = at->parent) {
    if (at->disruption_mode == model::DisruptionMode::kAll) found = at;
    if (at == at->root) break;
  }
  return found;
}

void GroupIndex::LeavesUnder(const GroupNode& node, std::vector<const GroupNode*>& out) {
  if (!node.composite) {
    out.push_back(&node);
    return;
  }
  for (const GroupNode* c : node.children) LeavesUnder(*c, out);
}

}  // namespace arbiter::state
