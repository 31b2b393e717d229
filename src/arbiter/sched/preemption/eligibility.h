// Who may be a victim of a preemptor: the one rule that every victim policy (Kubernetes, Nomad),
// the dry run by victim unit and workload-aware preemption apply.
//
// Upstream: a pod of strictly lower priority (docs/upstream-rules.md Part A §14.1; Part B for
// groups, by effective priority). Nomad: at least 10 lower. Arbiter's options
// (model::SchedulerConfig, DefaultPreemptionArgs) narrow it, each off by default:
//   * priorityDelta: at least this much lower, under every policy;
//   * minRuntimeSeconds: a pod that started less than this long ago is no victim (one that has
//     not started has lost no work and may go). A unit goes whole, so one member too young to go
//     keeps the whole unit (and likewise below).
//   * maxPreemptionsPerPod within preemptionWindowSeconds (the thrash guard): a pod whose lineage
//     (its controller's uid, preemption_history.h) was preempted that many times in the window is
//     no victim. That reads the pod itself, so a caller that sees only a node's pod summaries
//     must not decide with them (ReadsPods).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "arbiter/base/time.h"
#include "arbiter/model/objects.h"
#include "arbiter/sched/preemption/preemption_history.h"
#include "arbiter/state/node_info.h"

namespace arbiter::sched::preemption {

class VictimEligibility {
 public:
  // Pods (a policy's dry run by pod), or victim units (the dry run by unit, B§7, and pod-group
  // preemption, B§4): those take any lower priority unless priorityDelta is set, whatever the
  // victim policy (Nomad's delta of 10 is the pods' policy alone).
  enum class Scope { kPods, kUnits };
  // `history` may be null (no preemption recorded yet, or no guard).
  VictimEligibility(const model::SchedulerConfig& cfg, int64_t preemptor_priority, Timestamp now,
                    const PreemptionHistory* history = nullptr, Scope scope = Scope::kPods)
      : preemptor_priority_(preemptor_priority),
        delta_(scope == Scope::kUnits ? cfg.priority_delta.value_or(1) : cfg.EffectivePriorityDelta()),
        // minRuntimeSeconds and preemptionWindowSeconds are bounded by the decoder (ten years):
        // no overflow.
        started_by_(cfg.min_runtime_seconds > 0 ? now - cfg.min_runtime_seconds * kSecond : kLastTimestamp),
        history_(cfg.ThrashGuard() ? history : nullptr),
        max_preemptions_(static_cast<size_t>(cfg.max_preemptions_per_pod)),
        window_start_(now - cfg.preemption_window_seconds * kSecond) {}

  // A pod of effective `priority` that started at `start` (if `has_start`).
  bool MayEvict(int64_t priority, bool has_start, Timestamp start) const {
    return model::PriorityDeltaAllows(preemptor_priority_, priority, delta_) && (!has_start || start <= started_by_);
  }
  // False when no pod of `node` can go: none is at or below the delta rule's limit, and none is
  // a pod group member (whose effective priority is its group's, which the node does not know).
  bool MayHoldVictims(const state::NodeInfo& node) const {
    const int64_t limit = preemptor_priority_ - delta_;  // MayEvict is false above it
    if (limit >= std::numeric_limits<int32_t>::max()) return true;
    const int64_t below = std::max<int64_t>(limit + 1, std::numeric_limits<int32_t>::min());
    return node.RoomBelow(static_cast<int32_t>(below)).pods > 0;
  }
  bool MayEvict(int64_t priority, const model::Pod& p) const {
    return MayEvict(priority, p.start_time.has_value(), p.start_time.value_or(0)) && !Thrashed(p);
  }
  // The thrash guard: the pod's lineage was preempted too often lately.
  bool Thrashed(const model::Pod& p) const {
    return history_ != nullptr && !p.controller_uid.empty() &&
           history_->CountSince(p.controller_uid, window_start_) >= max_preemptions_;
  }
  // Whether the answers need the pods themselves, not only their priority and start.
  bool ReadsPods() const { return history_ != nullptr; }
  // A unit of effective `priority`: only when every pod of it may go.
  bool MayEvictAll(int64_t priority, const std::vector<state::PodInfoPtr>& pods) const {
    return std::all_of(pods.begin(), pods.end(), [&](const state::PodInfoPtr& p) { return MayEvict(priority, p->pod); });
  }
  // Whether the answers depend on the time (minRuntimeSeconds or the thrash guard is set): a dry
  // run cached at one time does not hold at another.
  bool ReadsNow() const { return started_by_ != kLastTimestamp || history_ != nullptr; }

 private:
  int64_t preemptor_priority_;
  int32_t delta_;         // SchedulerConfig::EffectivePriorityDelta
  Timestamp started_by_;  // now less minRuntimeSeconds; kLastTimestamp when unset
  const PreemptionHistory* history_;  // null: no thrash guard
  size_t max_preemptions_;
  Timestamp window_start_;  // now less preemptionWindowSeconds
};

}  // namespace arbiter::sched::preemption
