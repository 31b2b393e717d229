// Plans a Nomad job the way Nomad's scheduler for its type would, with Nomad's preemption
// (docs/upstream-rules.md Part C §1, §2, §8):
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
// on; the victims of each path leave the node before the next. The job's existing allocations
// count toward each group's Count and are never its victims.
//
// What the plan shows is what `nomad job plan` prints. The Job.Plan RPC runs the scheduler with
// an in-memory planner that accepts every plan (nomad/job_endpoint.go: "an in-memory Planner that
// returns no errors"), so a placement carries the victims the preemptor chose even when they are
// too few: the preemptor does not count the job's own allocations on the node as used (its
// own-allocation quirk), stops early, and the node still overflows once they leave. Such a
// placement is marked (Placement::overflow). On a real submission Nomad's plan applier
// (nomad/plan_apply.go, evaluateNodePlan) would refuse that node's part of the plan; with
// PlannerOptions::plan_applier the planner refuses it instead, as if the node were exhausted (an
// approximation: the real scheduler retries the refused plan and may fail the placement).
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
  // Arbiter's opt-in (plan --nomad --victim-selection optimal): for a task group's CPU, memory and
  // disk, the fewest and lowest-priority allocations that free them (Preemptor::ForTaskGroup).
  bool optimal_victims = false;
  // Refuse a node that still overflows after its victims leave, as the plan applier of a real
  // submission would; off = `nomad job plan`'s output.
  bool plan_applier = false;
};

struct Placement {
  std::string task_group;
  int64_t index = 0;
  std::string node_id;
  std::string node_name;
  std::string alloc_id;
  std::vector<std::string> preempted;  // PreemptedAllocations
  // The dimension (cpu, memory, disk) the node still lacks once the victims leave: the plan
  // applier of a real submission would refuse this placement. Empty when it fits.
  std::string overflow;
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

// The cluster as the planner reads it: the nodes, the allocations on each and each job's
// allocations. PlanJob(cluster, ...) builds one for a single plan (ViewOf); a caller that plans
// many jobs against a cluster that changes between them (simulate --nomad) keeps one current.
struct ClusterView {
  PreemptionConfig preemption;
  std::vector<const Node*> nodes;
  // Per node (by index in `nodes`): its allocations not terminal on the client, in a fixed order
  // (the preemptor's ties follow it).
  std::vector<std::vector<const Alloc*>> on_node;
  // Per "namespace/job": its allocations, whatever their state.
  std::map<std::string, std::vector<const Alloc*>> by_job;
};
// REQUIRES: every allocation's node is one of the cluster's.
ClusterView ViewOf(const Cluster& cluster);
// REQUIRES: the view's pointers outlive the plan (its Preempted::alloc points into them).
NomadPlan PlanJob(const ClusterView& view, const Job& job, const PlannerOptions& options);

}  // namespace arbiter::nomad
