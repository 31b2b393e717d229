// InterPodAffinity: required and preferred pod affinity and anti-affinity, as kube-scheduler's
// plugin computes them.
//
// PreFilter counts, per (topology key, value):
//   * existing pods whose required anti-affinity terms match the incoming pod;
//   * existing pods matching all of the incoming pod's required affinity terms;
//   * existing pods matching each of its required anti-affinity terms.
// Filter then rejects a node when (in this order) the affinity terms find no matching pod in the
// node's domain (UnschedulableAndUnresolvable) — unless no pod anywhere matches and the pod
// matches its own terms, which lets the first pod of a group land — when the pod's anti-affinity
// finds one (Unschedulable), or when an existing pod's anti-affinity rejects it (Unschedulable).
// AddPod/RemovePod keep the counts right during preemption dry runs.
// Score sums, per topology domain, the weights of matching preferred terms of both the incoming
// and the existing pods (and hardPodAffinityWeight for existing required affinity), then scales
// the node totals to [0, 100] between their minimum and maximum.
#pragma once

#include "arbiter/model/objects.h"
#include "arbiter/sched/framework/interfaces.h"

namespace arbiter::sched::plugins {

class InterPodAffinity final : public PreFilterPlugin,
                               public PreFilterExtensions,
                               public FilterPlugin,
                               public PreScorePlugin,
                               public ScorePlugin {
 public:
  static constexpr std::string_view kName = "InterPodAffinity";
  static constexpr std::string_view kReasonAffinity = "node(s) didn't match pod affinity rules";
  static constexpr std::string_view kReasonAntiAffinity = "node(s) didn't match pod anti-affinity rules";
  static constexpr std::string_view kReasonExistingAntiAffinity =
      "node(s) didn't satisfy existing pods anti-affinity rules";

  InterPodAffinity(const Handle* handle, int32_t hard_pod_affinity_weight)
      : handle_(handle), hard_weight_(hard_pod_affinity_weight) {}
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
  int32_t hard_weight_;
};

}  // namespace arbiter::sched::plugins
