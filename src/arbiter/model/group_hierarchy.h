// The rule on the parent links of a group hierarchy, shared by `plan`'s loader (the whole input at
// once) and `serve`'s admission (one written object against the store): every parent is a
// CompositePodGroup, the links form no cycle, and no chain has more than kMaxGroupHierarchyDepth
// levels (leaves included).
//
// Linear in the number of links: each composite's level count is computed once, walking up its
// chain only until a composite already resolved (a 5,000-group chain costs 5,000 steps, not
// 12.5 million).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace arbiter::model {

// One group and the CompositePodGroup it names as its parent.
struct GroupLink {
  std::string key;         // "namespace/name"
  std::string parent_key;  // "namespace/parent"; empty for a root
  bool composite = false;  // a CompositePodGroup (only those can be parents); else a PodGroup
};

struct HierarchyProblem {
  enum class Kind {
    kMissingParent,  // no CompositePodGroup has parent_key
    kCycle,          // the links lead back to the object
    kTooDeep,        // the object is the first level past kMaxGroupHierarchyDepth
  };
  Kind kind = Kind::kMissingParent;
  size_t link = 0;  // index of the object the problem is reported on
  // kCycle: the object, its parent, ... and the object again. kTooDeep: the object and its
  // ancestors, kMaxGroupHierarchyDepth + 1 keys. kMissingParent: empty.
  std::vector<std::string> chain;
  // kMissingParent: a PodGroup has the parent's key (only a CompositePodGroup can be a parent).
  bool parent_is_pod_group = false;
};

// The problems of `links`, each reported once, on the object where it shows first: missing
// parents and cycles of composites in order (a cycle on its first member in `links`), then the
// composites that are one level too deep, then the PodGroups' missing parents and depth. Objects
// in or below a cycle are not checked for depth. A key listed twice counts by its first link.
std::vector<HierarchyProblem> CheckGroupHierarchy(const std::vector<GroupLink>& links);

}  // namespace arbiter::model
