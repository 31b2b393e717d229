// PodTopologySpread: `topologySpreadConstraints`, as kube-scheduler (>= 1.33, per-constraint
// state) evaluates them.
//
// Filter (whenUnsatisfiable: DoNotSchedule): for each constraint, a node without the topology key
// is UnschedulableAndUnresolvable; otherwise the node is rejected (Unschedulable) when
//   matching pods in the node's domain + (1 if the pod matches its own selector) - the global
//   minimum over eligible domains  >  maxSkew,
// where the minimum is 0 while fewer domains than minDomains exist. Eligible nodes carry every
// constraint's key and pass the node inclusion policies (nodeAffinityPolicy Honor and
// nodeTaintsPolicy Ignore by default).
// Score (ScheduleAnyway): per constraint, matching pods in the node's domain weighted by
// ln(number of domains + 2), plus maxSkew - 1; fewer is better, so NormalizeScore maps the
// totals to 100 * (max + min - score) / max.
// Pods with no constraints get none: Arbiter has no Services or ReplicaSets from which the
// system default constraints would take their selector, so those defaults select nothing here,
// as they do upstream for a pod that no Service or controller selects.
#pragma once

#include "arbiter/sched/framework/interfaces.h"

namespace arbiter::sched::plugins {

class PodTopologySpread final : public PreFilterPlugin,
                                public PreFilterExtensions,
                                public FilterPlugin,
                                public PreScorePlugin,
                                public ScorePlugin {
 public:
  static constexpr std::string_view kName = "PodTopologySpread";
  static constexpr std::string_view kReasonConstraintsNotMatch =
      "node(s) didn't match pod topology spread constraints";
  static constexpr std::string_view kReasonNodeLabelNotMatch =
      "node(s) didn't match pod topology spread constraints (missing required label)";

  explicit PodTopologySpread(const Handle* handle) : handle_(handle) {}
  std::string_view Name() const override { return kName; }

  PreFilterResult PreFilter(CycleState& state, const PodInfo& pod,
                            std::span<const NodeInfo* const> nodes) const override;
  const PreFilterExtensions* Extensions() const override { return this; }
  Status AddPod(CycleState& state, const PodInfo& to_schedule, const PodInfo& to_add,
                const NodeInfo& node) const override;
  Status RemovePod(CycleState& state, const PodInfo& to_schedule, const PodInfo& to_remove,
                   const NodeInfo& node) const override;
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  Status PreScore(CycleState& state, const PodInfo& pod,
                  std::span<const NodeInfo* const> feasible) const override;
  ScoreResult Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  Status NormalizeScore(const CycleState& state, const PodInfo& pod,
                        std::span<NodeScore> scores) const override;

 private:
  const Handle* handle_;
};

}  // namespace arbiter::sched::plugins
