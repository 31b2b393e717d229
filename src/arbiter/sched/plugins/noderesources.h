// NodeResourcesFit and NodeResourcesBalancedAllocation.
//
// Fit filters on requested + pod request <= allocatable for every resource the pod asks for
// and on the node's pod count; its reasons are "Too many pods" and "Insufficient <resource>".
// A request larger than the node's whole allocatable can never fit there, so that node is
// UnschedulableAndUnresolvable (kube-scheduler >= 1.34); otherwise Unschedulable.
// Fit scores with LeastAllocated (default), MostAllocated or RequestedToCapacityRatio over the
// configured resources, counting 100m / 200Mi for containers that state no CPU / memory request.
// BalancedAllocation scores how the pod changes the node's balance, balance being
// 100 * (1 - std-dev of the requested/allocatable fractions) with actual requests:
// 50 + (50 + balance with the pod - balance without) / 2 (kube-scheduler >= 1.37); it skips pods
// that request none of its resources.
#pragma once

#include "arbiter/model/objects.h"
#include "arbiter/sched/framework/interfaces.h"
#include "arbiter/state/resource_fit.h"

namespace arbiter::sched::plugins {

class NodeResourcesFit final : public FilterPlugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "NodeResourcesFit";
  explicit NodeResourcesFit(const model::SchedulerConfig& config);
  std::string_view Name() const override { return kName; }
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override;
  std::optional<Status> FilterWithExtraPods(const CycleState&, const PodInfo& pod, const NodeInfo& node,
                                            std::span<const NodeInfo::Nominated* const> extra) const override;
  bool VerdictDependsOnlyOnNode() const override { return true; }
  ScoreResult Score(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override;
  Status ScoreNodes(const CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                    std::span<NodeScore> out) const override {
    return ScoreEachNode(*this, state, pod, nodes, out);
  }
  bool ScoreDependsOnlyOnPodClassAndNode() const override { return true; }

  bool ChecksOnlyNodeResources() const override { return true; }

  // The Filter's verdict for a request against a node's allocatable, what is already in use and
  // how many pods it runs (state::CheckResourceFit, with kube-scheduler's reasons).
  static Status FitsRequest(const model::Resources& request, const model::Resources& allocatable,
                            const model::Resources& used, int64_t pod_count);
  // A shortage as the Filter reports it: "Too many pods", "Insufficient <resource>".
  static Status StatusOf(const state::ResourceShortage& shortage);
  Status ShortageStatus(const state::ResourceShortage& shortage) const override { return StatusOf(shortage); }

  // A scored resource, with its kind resolved once so scoring compares no strings.
  struct ScoredResource {
    enum class Kind { kCpu, kMemory, kOther, kScalar } kind;
    std::string name;
    int64_t weight;
  };

 private:
  model::ScoringStrategy strategy_;
  std::vector<ScoredResource> resources_;
  std::vector<model::UtilizationShapePoint> shape_;  // scores scaled to 0..100
};

class NodeResourcesBalancedAllocation final : public PreScorePlugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "NodeResourcesBalancedAllocation";
  std::string_view Name() const override { return kName; }
  Status PreScore(CycleState& state, const PodInfo& pod,
                  std::span<const NodeInfo* const> feasible) const override;
  ScoreResult Score(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override;
  Status ScoreNodes(const CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                    std::span<NodeScore> out) const override {
    return ScoreEachNode(*this, state, pod, nodes, out);
  }
  bool ScoreDependsOnlyOnPodClassAndNode() const override { return true; }
};

}  // namespace arbiter::sched::plugins
