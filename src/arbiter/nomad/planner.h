// Plans a Nomad job the way Nomad's scheduler for its type would, with Nomad's preemption
// (../shared/reference/nomad-preemption.md §1, §2, §8):
//
//   * service and batch (GenericScheduler): each missing allocation is placed by a pass over the
//     nodes without preemption; only if no node can take it, and the job type's preemption is on
//     in the scheduler configuration, by a second pass with preemption. A pass visits nodes in a
//     seeded shuffled order, continuing where the previous placement stopped, and scores the first
//     `limit` feasible nodes (2 for batch, max(2, ceil(log2 nodes)) for service): bin-pack fit,
//     job anti-affinity, and for options with victims the preemption score; the mean decides.
//   * system and sysbatch: one allocation per eligible node that lacks one, each evaluated with
//     preemption available when the type's preemption is on; no preemption score.
//
// On a node (BinPackIterator.Next): group network ports, then each task's network, then its
// devices, then CPU/memory/disk, each path preempting when it cannot be satisfied and eviction is
// on; the victims of each path leave the node before the next. A node whose ask still does not fit
// once its victims are gone is exhausted (as Nomad's plan applier would reject it).
// The job's existing allocations count toward each group's Count and are never its victims.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "arbiter/nomad/model.h"

namespace arbiter::nomad {

struct PlannerOptions {
  uint64_t seed = 0;
  int32_t priority_delta = kDefaultPriorityDelta;
};

struct Placement {
  std::string task_group;
  int64_t index = 0;
  std::string node_id;
  std::string node_name;
  std::string alloc_id;
  std::vector<std::string> preempted;  // PreemptedAllocations
};

struct Preempted {
  const Alloc* alloc = nullptr;
  std::string by;  // PreemptedByAllocation
};

struct FailedGroup {
  int64_t nodes_evaluated = 0;
  int64_t nodes_filtered = 0;
  int64_t nodes_exhausted = 0;
  std::map<std::string, int64_t> dimension_exhausted;
  int64_t coalesced_failures = 0;
};

struct GroupUpdate {
  int64_t ignore = 0;  // existing allocations kept
  int64_t place = 0;
  int64_t preemptions = 0;
};

struct NomadPlan {
  std::vector<Placement> placements;
  std::vector<Preempted> preempted;                    // in the order they were chosen
  std::map<std::string, GroupUpdate> desired_updates;  // per task group
  std::map<std::string, FailedGroup> failed;           // per task group
  bool Changes() const { return !placements.empty() || !failed.empty(); }
};

// REQUIRES: `cluster` and `job` came from LoadNomad without errors. `cluster` outlives the plan.
NomadPlan PlanJob(const Cluster& cluster, const Job& job, const PlannerOptions& options);

}  // namespace arbiter::nomad
