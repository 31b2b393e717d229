// The in-tree plugins whose logic fits in a few lines each: PrioritySort (QueueSort),
// SchedulingGates (PreEnqueue), NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts and DefaultBinder.
// Reasons and codes are kube-scheduler's, word for word, because users grep for them.
#pragma once

#include <functional>

#include "arbiter/sched/framework/interfaces.h"

namespace arbiter::sched::plugins {

// Higher priority first, then earlier queue timestamp, then insertion order (a total order).
class PrioritySort final : public QueueSortPlugin {
 public:
  static constexpr std::string_view kName = "PrioritySort";
  std::string_view Name() const override { return kName; }
  bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override;
};

// A pod with spec.schedulingGates stays out of activeQ until every gate is removed
// (UnschedulableAndUnresolvable "waiting for scheduling gates: [a b]", as upstream's
// schedulinggates plugin). Gates can only be removed after creation, so a pod that passes once
// never fails again; the queue re-runs the check when the pod is updated.
class SchedulingGates final : public PreEnqueuePlugin {
 public:
  static constexpr std::string_view kName = "SchedulingGates";
  std::string_view Name() const override { return kName; }
  Status PreEnqueue(const PodInfo& pod) const override;
};

class NodeUnschedulable final : public FilterPlugin {
 public:
  static constexpr std::string_view kName = "NodeUnschedulable";
  static constexpr std::string_view kReason = "node(s) were unschedulable";
  std::string_view Name() const override { return kName; }
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override;
  bool ReadsNodePods() const override { return false; }
  bool VerdictDependsOnlyOnNode() const override { return true; }
};

class NodeName final : public PreFilterPlugin, public FilterPlugin {
 public:
  static constexpr std::string_view kName = "NodeName";
  static constexpr std::string_view kReason = "node(s) didn't match the requested node name";
  std::string_view Name() const override { return kName; }
  // Skip for pods that name no node (the Filter would pass every node).
  PreFilterResult PreFilter(CycleState&, const PodInfo& pod, std::span<const NodeInfo* const>) const override {
    if (pod.pod.node_name.empty()) return {Status(Code::kSkip), std::nullopt};
    return {};
  }
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override;
  bool ReadsNodePods() const override { return false; }
  bool VerdictDependsOnlyOnNode() const override { return true; }
};

class TaintToleration final : public FilterPlugin, public PreScorePlugin, public ScorePlugin {
 public:
  static constexpr std::string_view kReason = "node(s) had untolerated taint(s)";
  static constexpr std::string_view kName = "TaintToleration";
  std::string_view Name() const override { return kName; }
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override;
  bool ReadsNodePods() const override { return false; }
  bool VerdictDependsOnlyOnNode() const override { return true; }
  Status PreScore(CycleState& state, const PodInfo& pod,
                  std::span<const NodeInfo* const> feasible) const override;
  ScoreResult Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  Status ScoreNodes(const CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                    std::span<NodeScore> out) const override {
    return ScoreEachNode(*this, state, pod, nodes, out);
  }
  bool ScoreDependsOnlyOnPodClassAndNode() const override { return true; }
  Status NormalizeScore(const CycleState&, const PodInfo&, std::span<NodeScore> scores) const override;
};

class NodeAffinity final : public PreFilterPlugin,
                           public FilterPlugin,
                           public PreScorePlugin,
                           public ScorePlugin {
 public:
  static constexpr std::string_view kName = "NodeAffinity";
  static constexpr std::string_view kReason = "node(s) didn't match Pod's node affinity/selector";
  std::string_view Name() const override { return kName; }
  PreFilterResult PreFilter(CycleState& state, const PodInfo& pod,
                            std::span<const NodeInfo* const> nodes) const override;
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override;
  bool ReadsNodePods() const override { return false; }
  bool VerdictDependsOnlyOnNode() const override { return true; }
  Status PreScore(CycleState& state, const PodInfo& pod,
                  std::span<const NodeInfo* const> feasible) const override;
  ScoreResult Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  Status NormalizeScore(const CycleState&, const PodInfo&, std::span<NodeScore> scores) const override;
};

class NodePorts final : public PreFilterPlugin, public FilterPlugin {
 public:
  static constexpr std::string_view kName = "NodePorts";
  static constexpr std::string_view kReason = "node(s) didn't have free ports for the requested pod ports";
  std::string_view Name() const override { return kName; }
  PreFilterResult PreFilter(CycleState& state, const PodInfo& pod,
                            std::span<const NodeInfo* const> nodes) const override;
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override;
  bool VerdictDependsOnlyOnNode() const override { return true; }
};

// Binds through the function the scheduler gives it (the cache in `plan`, the API in `serve`).
class DefaultBinder final : public BindPlugin {
 public:
  using BindFn = std::function<Status(const PodInfo&, const std::string&)>;
  static constexpr std::string_view kName = "DefaultBinder";
  explicit DefaultBinder(BindFn bind) : bind_(std::move(bind)) {}
  std::string_view Name() const override { return kName; }
  Status Bind(CycleState&, const PodInfo& pod, const std::string& node) override { return bind_(pod, node); }

 private:
  BindFn bind_;
};

}  // namespace arbiter::sched::plugins
