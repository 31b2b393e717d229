// Nomad's preemptor (scheduler/feasible/preemption.go, as docs/upstream-rules.md Part C
// describes it; section numbers below refer to that page). One node, one placement at a time:
//
//   * Eligibility (§3): an allocation is a candidate only if the placing job's priority is at
//     least `delta` (10 in Nomad) above its job's, and it is not one of the placing job's own.
//   * CPU / memory / disk (§4): model::BestFitVictims over the allocations bucketed by exact job
//     priority, the distance being the normalised one plus the migrate.max_parallel penalty.
//   * Network (§5): static ports first (by port number on the device), then bandwidth by
//     ascending priority and bandwidth distance, then the bandwidth-only final filter.
//   * Devices (§6): per device model, by ascending priority until enough instances; trimmed;
//     the option with the lowest sum of distinct priorities wins.
//
// Where Nomad's choice depends on Go map order (ties, device order), Arbiter takes the
// candidates in their order in the input (the plan's own placements after them) and the node's
// devices in the order the node lists them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "arbiter/model/best_fit_victims.h"
#include "arbiter/nomad/model.h"

namespace arbiter::nomad {

// The normalised distance between what is still needed and what an allocation frees (§4).
double ResourceDistance(const Resources& need, const Resources& alloc);

class Preemptor {
 public:
  // The exact search's bound per placement (steps, so that a plan never depends on timing).
  static constexpr size_t kOptimalSteps = 50'000;
  // `plan_preemptions`: allocations already preempted by this plan, per "namespace/job/group",
  // counted over all nodes (the max_parallel penalty reads it).
  // `optimal`: Arbiter's opt-in for the CPU / memory / disk path (ForTaskGroup).
  Preemptor(const Job& job, int32_t delta, const std::map<std::string, int64_t>& plan_preemptions, bool optimal = false)
      : job_(job), delta_(delta), plan_preemptions_(plan_preemptions), optimal_(optimal) {}

  bool Eligible(const Alloc& a) const {
    return a.has_job && !(a.ns == job_.ns && a.job_id == job_.id) && model::PriorityDeltaAllows(job_.priority, a.job_priority, delta_);
  }
  double Penalty(const Alloc& a) const;

  // `capacity`: the node's capacity less reserved; `proposed`: what runs on it now. With
  // `optimal`, Nomad's answer is then bettered where it can be: the set that ranks best under
  // the order kube-scheduler's node choice uses, on job priorities (the highest victim priority,
  // then the sum of priority + 2^31, so fewer first; model/exact_victims.h, bounded in steps).
  std::vector<const Alloc*> ForTaskGroup(const Resources& capacity, const std::vector<const Alloc*>& proposed,
                                         const Resources& ask) const;
  // A network ask on a node; `held` is what the allocation being placed already holds there
  // (earlier tasks' networks), which Nomad's network index counts as used.
  std::vector<const Alloc*> ForNetwork(const Node& node, const std::vector<const Alloc*>& proposed,
                                       const NetworkUse& ask, const std::vector<NetworkUse>& held = {}) const;
  // A device request: `free[model]` is the number of free healthy instances of each model.
  std::vector<const Alloc*> ForDevice(const Node& node, const std::vector<const Alloc*>& proposed,
                                      const DeviceRequest& request, const std::map<std::string, int64_t>& free) const;

 private:
  const Job& job_;
  int32_t delta_;
  const std::map<std::string, int64_t>& plan_preemptions_;
  bool optimal_;
};

}  // namespace arbiter::nomad
