// The Framework runs a profile's plugins at each extension point, in the profile's order, and
// applies the framework-level rules that kube-scheduler's runtime applies:
//   * PreFilter: Skip removes the plugin's Filter for the cycle; UnschedulableAndUnresolvable
//     stops at once; Unschedulable is remembered while later PreFilters still run; node sets
//     returned by plugins are intersected.
//   * Filter stops at the first plugin that does not succeed, and that status is the node's.
//   * Filter with nominated pods: pods nominated to the node (NodeInfo::nominated_pods) with
//     priority >= the pod's are added to a copy of the node (and to a cloned CycleState through the PreFilter extensions); the
//     node must pass both with them and, if any were added, without them.
//   * Score: PreScore's Skip drops the plugin's Score; each plugin's scores are normalised, then
//     weighted and summed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "arbiter/base/status.h"
#include "arbiter/sched/framework/interfaces.h"
#include "arbiter/sched/framework/nominator.h"

namespace arbiter::sched {

// A plugin instance with the extension points it takes part in.
struct PluginEntry {
  std::shared_ptr<Plugin> plugin;
  int32_t score_weight = 0;
};

// Scores of the feasible nodes: one row per node (in the order given), one column per score
// plugin that ran (normalised, before weighting), and each node's weighted total.
struct ScoreTable {
  std::vector<std::string_view> plugins;
  std::vector<int32_t> weights;
  std::vector<const NodeInfo*> nodes;
  std::vector<int64_t> scores;  // nodes.size() x plugins.size(), row-major
  std::vector<int64_t> totals;
  std::vector<NodeScore> column;  // one plugin's scores while they are normalised (scratch)
  int64_t score(size_t node, size_t plugin) const { return scores[node * plugins.size() + plugin]; }
};

// Raw scores remembered per node for the plugins whose score depends only on the pod's class
// and the node (ScorePlugin::ScoreDependsOnlyOnPodClassAndNode). A gang's members, or a run of
// equivalent pods, are scored on mostly unchanged nodes; a remembered score is used only while
// the node's generation and the pod class are those it was computed for, so the result is the
// one Score would give.
struct ScoreMemo {
  struct Entry {
    uint64_t generation = UINT64_MAX;
    uint64_t pod_class = 0;
    int64_t score = 0;
  };
  uint64_t pod_class = 0;  // the pod's class for the coming call; 0 turns the memo off
  // The snapshot the scored nodes belong to: a node's row is its IndexOf. Set with the pod class.
  const state::Snapshot* snapshot = nullptr;
  uint64_t structure = UINT64_MAX;  // the snapshot's structure_version the entries were kept for
  std::vector<Entry> entries;  // [score plugin][node]
  // Scratch of the call: the nodes to score afresh and where their scores go.
  std::vector<const NodeInfo*> misses;
  std::vector<size_t> miss_rows;
  std::vector<NodeScore> miss_scores;
};

class Framework {
 public:
  // Plugins in profile order; each is registered at every extension point it implements.
  explicit Framework(std::vector<PluginEntry> plugins);

  const QueueSortPlugin* queue_sort() const { return queue_sort_; }
  bool HasScorePlugins() const { return !score_.empty(); }
  bool HasPostFilterPlugins() const { return !post_filter_.empty(); }
  const std::vector<const FilterPlugin*>& filter_plugins() const { return filter_list_; }

  Status RunPreEnqueuePlugins(const PodInfo& pod) const;
  PreFilterResult RunPreFilterPlugins(CycleState& state, const PodInfo& pod,
                                      std::span<const NodeInfo* const> nodes) const;
  // The filter plugins that run for this cycle (those whose PreFilter did not Skip), in order.
  std::vector<const FilterPlugin*> ActiveFilterPlugins(const CycleState& state) const;
  // True if every filter that runs this cycle decides from the pod and the node alone.
  bool VerdictsDependOnlyOnNode(const CycleState& state) const;
  // True if some PreFilter that ran this cycle has AddPod/RemovePod extensions.
  bool HasActivePreFilterExtensions(const CycleState& state) const;
  Status RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod, const PodInfo& to_add,
                                     const NodeInfo& node) const;
  Status RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod,
                                        const PodInfo& to_remove, const NodeInfo& node) const;
  Status RunFilterPlugins(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
  // Every filter plugin's verdict on the node (for --explain); does not stop at a failure.
  std::vector<Status> RunAllFilterPlugins(const CycleState& state, const PodInfo& pod,
                                          const NodeInfo& node) const;
  Status RunFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                           const NodeInfo& node) const;
  PostFilterResult RunPostFilterPlugins(CycleState& state, const PodInfo& pod,
                                        const NodeToStatus& filtered) const;
  Status RunPreScorePlugins(CycleState& state, const PodInfo& pod,
                            std::span<const NodeInfo* const> feasible) const;
  // Fills `table` (reusing its buffers): every active plugin's normalised score per feasible node.
  // With a memo, remembered raw scores are used where they apply (see ScoreMemo).
  arbiter::Status RunScorePlugins(const CycleState& state, const PodInfo& pod,
                                  std::span<const NodeInfo* const> feasible, ScoreTable& table,
                                  ScoreMemo* memo = nullptr) const;
  Status RunReservePlugins(CycleState& state, const PodInfo& pod, const std::string& node) const;
  void RunUnreservePlugins(CycleState& state, const PodInfo& pod, const std::string& node) const;
  PermitResult RunPermitPlugins(CycleState& state, const PodInfo& pod, const std::string& node) const;
  Status RunBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node) const;

 private:
  std::vector<PluginEntry> plugins_;  // owns the instances
  const QueueSortPlugin* queue_sort_ = nullptr;
  // Each extension point's plugins paired with the plugin's index in the profile, which keys
  // the CycleState skip bits.
  template <typename T>
  using Indexed = std::vector<std::pair<T*, size_t>>;
  std::vector<const PreEnqueuePlugin*> pre_enqueue_;
  Indexed<const PreFilterPlugin> pre_filter_;
  Indexed<const FilterPlugin> filter_;
  std::vector<const FilterPlugin*> filter_list_;
  std::vector<PostFilterPlugin*> post_filter_;
  Indexed<const PreScorePlugin> pre_score_;
  Status ScoreWithMemo(const ScorePlugin& plugin, size_t slot, const CycleState& state, const PodInfo& pod,
                       std::span<const NodeInfo* const> nodes, std::span<NodeScore> out, ScoreMemo& memo) const;
  struct WeightedScore {
    const ScorePlugin* plugin;
    size_t index;
    int32_t weight;
  };
  std::vector<WeightedScore> score_;
  std::vector<ReservePlugin*> reserve_;
  std::vector<PermitPlugin*> permit_;
  std::vector<BindPlugin*> bind_;
};

}  // namespace arbiter::sched
