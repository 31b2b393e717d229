// Who may be a victim of a preemptor: the one rule that every victim policy (Kubernetes, Nomad),
// the dry run by victim unit and workload-aware preemption apply.
//
// Upstream: a pod of strictly lower priority (docs/upstream-rules.md Part A §14.1; Part B for
// groups, by effective priority). Nomad: at least 10 lower. Arbiter's options
// (model::SchedulerConfig, DefaultPreemptionArgs) narrow it, each off by default:
//   * priorityDelta: at least this much lower, under every policy;
//   * minRuntimeSeconds: a pod that started less than this long ago is no victim (one that has
//     not started has lost no work and may go). A unit goes whole, so one member too young to go
//     keeps the whole unit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "arbiter/base/time.h"
#include "arbiter/model/objects.h"
#include "arbiter/state/node_info.h"

namespace arbiter::sched::preemption {

class VictimEligibility {
 public:
  VictimEligibility(const model::SchedulerConfig& cfg, int64_t preemptor_priority, Timestamp now)
      : preemptor_priority_(preemptor_priority),
        delta_(cfg.EffectivePriorityDelta()),
        // minRuntimeSeconds is bounded by the decoder (ten years): no overflow.
        started_by_(cfg.min_runtime_seconds > 0 ? now - cfg.min_runtime_seconds * kSecond : kLastTimestamp) {}

  // A pod of effective `priority` that started at `start` (if `has_start`).
  bool MayEvict(int64_t priority, bool has_start, Timestamp start) const {
    return model::PriorityDeltaAllows(preemptor_priority_, priority, delta_) && (!has_start || start <= started_by_);
  }
  bool MayEvict(int64_t priority, const model::Pod& p) const {
    return MayEvict(priority, p.start_time.has_value(), p.start_time.value_or(0));
  }
  // A unit of effective `priority`: only when every pod of it may go.
  bool MayEvictAll(int64_t priority, const std::vector<state::PodInfoPtr>& pods) const {
    return std::all_of(pods.begin(), pods.end(), [&](const state::PodInfoPtr& p) { return MayEvict(priority, p->pod); });
  }
  // Whether the answers depend on the time (minRuntimeSeconds is set): a dry run cached at one
  // time does not hold at another.
  bool ReadsNow() const { return started_by_ != kLastTimestamp; }

 private:
  int64_t preemptor_priority_;
  int32_t delta_;         // SchedulerConfig::EffectivePriorityDelta
  Timestamp started_by_;  // now less minRuntimeSeconds; kLastTimestamp when unset
};

}  // namespace arbiter::sched::preemption
