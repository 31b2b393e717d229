#include "arbiter/model/group_hierarchy.h"

#include <map>
#include <set>

#include "arbiter/model/objects.h"

namespace arbiter::model {

std::vector<HierarchyProblem> CheckGroupHierarchy(const std::vector<GroupLink>& links) {
  constexpr long kRoot = -1, kMissing = -2;
  const size_t n = links.size();
  std::map<std::string, size_t> composites;
  std::set<std::string> pod_groups;
  for (size_t i = 0; i < n; ++i) {
    if (links[i].composite) {
      composites.emplace(links[i].key, i);
    } else {
      pod_groups.insert(links[i].key);
    }
  }
  std::vector<long> parent(n, kRoot);
  for (size_t i = 0; i < n; ++i) {
    if (links[i].parent_key.empty()) continue;
    auto it = composites.find(links[i].parent_key);
    parent[i] = it == composites.end() ? kMissing : static_cast<long>(it->second);
  }

  // levels[i]: how many levels the chain from composite i up to its root (or up to a missing
  // parent) has, counting i; 0 for a composite in or below a cycle.
  enum State : char { kUnseen, kOnPath, kDone };
  std::vector<State> state(n, kUnseen);
  std::vector<size_t> levels(n, 0), path_pos(n, 0);
  std::vector<long> cycle_of(n, -1);
  std::vector<size_t> path;
  long cycles = 0;
  for (size_t start = 0; start < n; ++start) {
    if (!links[start].composite || state[start] != kUnseen) continue;
    path.clear();
    long cur = static_cast<long>(start);
    for (;;) {
      if (state[cur] == kDone) break;
      if (state[cur] == kOnPath) {  // the walk came back to itself: path[pos..] is a cycle
        for (size_t k = path_pos[cur]; k < path.size(); ++k) cycle_of[path[k]] = cycles;
        ++cycles;
        break;
      }
      state[cur] = kOnPath;
      path_pos[cur] = path.size();
      path.push_back(static_cast<size_t>(cur));
      if (parent[cur] < 0) break;
      cur = parent[cur];
    }
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      const size_t i = *it;
      state[i] = kDone;
      if (cycle_of[i] >= 0) {
        levels[i] = 0;
      } else if (parent[i] < 0) {
        levels[i] = 1;
      } else {
        const size_t up = levels[static_cast<size_t>(parent[i])];
        levels[i] = up == 0 ? 0 : up + 1;
      }
    }
  }

  std::vector<HierarchyProblem> out;
  auto missing = [&](size_t i) {
    HierarchyProblem p;
    p.kind = HierarchyProblem::Kind::kMissingParent;
    p.link = i;
    p.parent_is_pod_group = pod_groups.count(links[i].parent_key) > 0;
    out.push_back(std::move(p));
  };
  auto too_deep = [&](size_t i) {
    HierarchyProblem p;
    p.kind = HierarchyProblem::Kind::kTooDeep;
    p.link = i;
    p.chain.push_back(links[i].key);
    for (long up = parent[i]; up >= 0 && p.chain.size() <= static_cast<size_t>(kMaxGroupHierarchyDepth);
         up = parent[up]) {
      p.chain.push_back(links[up].key);
    }
    out.push_back(std::move(p));
  };
  // Report only the first level past the limit: deeper objects sit below an object reported.
  const size_t first_too_deep = static_cast<size_t>(kMaxGroupHierarchyDepth) + 1;

  std::vector<bool> cycle_reported(static_cast<size_t>(cycles), false);
  for (size_t i = 0; i < n; ++i) {
    if (!links[i].composite) continue;
    if (parent[i] == kMissing) {
      missing(i);
    } else if (cycle_of[i] >= 0 && !cycle_reported[static_cast<size_t>(cycle_of[i])]) {
      cycle_reported[static_cast<size_t>(cycle_of[i])] = true;
      HierarchyProblem p;
      p.kind = HierarchyProblem::Kind::kCycle;
      p.link = i;
      p.chain.push_back(links[i].key);
      for (long up = parent[i];; up = parent[up]) {
        p.chain.push_back(links[up].key);
        if (static_cast<size_t>(up) == i) break;
      }
      out.push_back(std::move(p));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (links[i].composite && levels[i] == first_too_deep) too_deep(i);
  }
  for (size_t i = 0; i < n; ++i) {
    if (links[i].composite || parent[i] == kRoot) continue;
    if (parent[i] == kMissing) {
      missing(i);
    } else if (const size_t up = levels[static_cast<size_t>(parent[i])]; up != 0 && up + 1 == first_too_deep) {
      too_deep(i);
    }
  }
  return out;
}

}  // namespace arbiter::model
