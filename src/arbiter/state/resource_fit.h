// The node-resource fit rule, one place for the filter (NodeResourcesFit) and preemption's
// resource-only dry run: a pod fits when the node runs fewer pods than it allows and, for every
// resource the pod requests (a positive amount), what is in use plus the request stays within the
// allocatable (noderesources.fitsRequest). A request larger than the whole allocatable can never
// fit there (kube-scheduler >= 1.34 makes that node UnschedulableAndUnresolvable).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arbiter/model/resources.h"

namespace arbiter::state {

struct ResourceShortage {
  bool too_many_pods = false;
  bool cpu = false;
  bool memory = false;
  bool ephemeral_storage = false;
  std::vector<std::string> scalars;  // extended resources short, by name
  bool unresolvable = false;         // some request exceeds the whole allocatable
  bool fits() const { return !too_many_pods && !cpu && !memory && !ephemeral_storage && scalars.empty(); }
};

// `used`: what the node's pods request; `pod_count`: how many it runs.
ResourceShortage CheckResourceFit(const model::Resources& request, const model::Resources& allocatable,
                                  const model::Resources& used, int64_t pod_count);

// The rule for one resource: a positive request must fit in what the allocatable leaves.
inline bool ShortOf(int64_t want, int64_t have, int64_t in_use) { return want > 0 && want > have - in_use; }

// CheckResourceFit's yes or no alone, allocating nothing (for the reprieve loops).
inline bool FitsResources(const model::Resources& request, const model::Resources& allocatable,
                          const model::Resources& used, int64_t pod_count) {
  if (pod_count + 1 > allocatable.pods) return false;
  if (ShortOf(request.milli_cpu, allocatable.milli_cpu, used.milli_cpu) ||
      ShortOf(request.memory, allocatable.memory, used.memory) ||
      ShortOf(request.ephemeral_storage, allocatable.ephemeral_storage, used.ephemeral_storage)) {
    return false;
  }
  for (const auto& [name, want] : request.scalars) {
    if (ShortOf(want, allocatable.Scalar(name), used.Scalar(name))) return false;
  }
  return true;
}

}  // namespace arbiter::state
