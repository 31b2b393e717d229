// Running plugins at each extension point.
#include "arbiter/sched/framework/framework.h"

#include <algorithm>

#include "arbiter/base/small_vector.h"

namespace arbiter::sched {

const Status& NodeToStatus::Get(std::string_view node) const {
  if (everywhere != nullptr) {
    const Status* s = everywhere->StatusOf(node);
    return s != nullptr ? *s : absent;
  }
  for (const auto& s : statuses) {
    if (s.Name() == node) return s.status;
  }
  return absent;
}

Status Framework::ScoreWithMemo(const ScorePlugin& plugin, size_t slot, const CycleState& state, const PodInfo& pod,
                                std::span<const NodeInfo* const> nodes, std::span<NodeScore> out,
                                ScoreMemo& memo) const {
  const state::Snapshot& snap = *memo.snapshot;
  const size_t rows = score_.size() * snap.size();
  if (memo.entries.size() != rows || memo.structure != snap.structure_version()) {
    memo.entries.assign(rows, ScoreMemo::Entry{});
    memo.structure = snap.structure_version();
  }
  ScoreMemo::Entry* remembered = memo.entries.data() + slot * snap.size();
  memo.misses.clear();
  memo.miss_rows.clear();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ScoreMemo::Entry& e = remembered[snap.IndexOf(nodes[i])];
    if (e.generation == nodes[i]->generation() && e.pod_class == memo.pod_class) {
      out[i] = {nodes[i], e.score};
    } else {
      memo.misses.push_back(nodes[i]);
      memo.miss_rows.push_back(i);
    }
  }
  if (memo.misses.empty()) return {};
  memo.miss_scores.resize(memo.misses.size());
  if (Status s = plugin.ScoreNodes(state, pod, memo.misses, memo.miss_scores); !s.IsSuccess()) return s;
  for (size_t m = 0; m < memo.misses.size(); ++m) {
    const NodeInfo* n = memo.misses[m];
    out[memo.miss_rows[m]] = memo.miss_scores[m];
    remembered[snap.IndexOf(n)] = {n->generation(), memo.pod_class, memo.miss_scores[m].score};
  }
  return {};
}

Status ScoreFailure(const NodeInfo& node, const Status& status) {
  return Status(Code::kError, "failed to score node " + node.name() + ": " + status.Message());
}

Status ScorePlugin::ScoreNodes(const CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                               std::span<NodeScore> out) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    ScoreResult r = Score(state, pod, *nodes[i]);
    if (!r.status.IsSuccess()) return ScoreFailure(*nodes[i], r.status);
    out[i] = {nodes[i], r.score};
  }
  return {};
}

void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::span<NodeScore> scores) {
  int64_t max = 0;
  for (const auto& s : scores) max = std::max(max, s.score);
  if (max == 0) {
    if (reverse) {
      for (auto& s : scores) s.score = max_priority;
    }
    return;
  }
  for (auto& s : scores) {
    s.score = max_priority * s.score / max;
    if (reverse) s.score = max_priority - s.score;
  }
}

Framework::Framework(std::vector<PluginEntry> plugins) : plugins_(std::move(plugins)) {
  for (size_t i = 0; i < plugins_.size(); ++i) {
    const PluginEntry& e = plugins_[i];
    Plugin* p = e.plugin.get();
    if (auto* q = dynamic_cast<QueueSortPlugin*>(p); q && queue_sort_ == nullptr) queue_sort_ = q;
    if (auto* x = dynamic_cast<PreEnqueuePlugin*>(p)) pre_enqueue_.push_back(x);
    if (auto* x = dynamic_cast<PreFilterPlugin*>(p)) pre_filter_.emplace_back(x, i);
    if (auto* x = dynamic_cast<FilterPlugin*>(p)) {
      filter_.emplace_back(x, i);
      filter_list_.push_back(x);
    }
    if (auto* x = dynamic_cast<PostFilterPlugin*>(p)) post_filter_.push_back(x);
    if (auto* x = dynamic_cast<PreScorePlugin*>(p)) pre_score_.emplace_back(x, i);
    if (auto* x = dynamic_cast<ScorePlugin*>(p); x && e.score_weight > 0) {
      score_.push_back({x, i, e.score_weight});
    }
    if (auto* x = dynamic_cast<ReservePlugin*>(p)) reserve_.push_back(x);
    if (auto* x = dynamic_cast<PermitPlugin*>(p)) permit_.push_back(x);
    if (auto* x = dynamic_cast<BindPlugin*>(p)) bind_.push_back(x);
  }
}

Status Framework::RunPreEnqueuePlugins(const PodInfo& pod) const {
  for (const auto* p : pre_enqueue_) {
    Status s = p->PreEnqueue(pod);
    if (!s.IsSuccess()) return std::move(s.WithPlugin(p->Name()));
  }
  return {};
}

PreFilterResult Framework::RunPreFilterPlugins(CycleState& state, const PodInfo& pod,
                                               std::span<const NodeInfo* const> nodes) const {
  PreFilterResult out;
  Status unschedulable;
  std::vector<std::string> narrowing_plugins;
  for (const auto& [p, index] : pre_filter_) {
    PreFilterResult r = p->PreFilter(state, pod, nodes);
    if (r.status.IsSkip()) {
      state.SkipFilter(index);
      continue;
    }
    if (r.status.code() == Code::kUnschedulableAndUnresolvable || r.status.code() == Code::kError) {
      out.status = std::move(r.status.WithPlugin(p->Name()));
      return out;
    }
    if (r.status.code() == Code::kUnschedulable) {
      // Remembered; the remaining PreFilters still run.
      if (unschedulable.IsSuccess()) unschedulable = std::move(r.status.WithPlugin(p->Name()));
      continue;
    }
    if (r.node_names) {
      narrowing_plugins.emplace_back(p->Name());
      if (!out.node_names) {
        out.node_names = std::move(r.node_names);
      } else {
        std::set<std::string> both;
        std::set_intersection(out.node_names->begin(), out.node_names->end(), r.node_names->begin(),
                              r.node_names->end(), std::inserter(both, both.begin()));
        out.node_names = std::move(both);
      }
      if (out.node_names->empty()) {
        std::sort(narrowing_plugins.begin(), narrowing_plugins.end());
        std::string msg;
        if (narrowing_plugins.size() == 1) {
          msg = "node(s) didn't satisfy plugin " + narrowing_plugins[0];
        } else {
          msg = "node(s) didn't satisfy plugin(s) [";
          for (size_t i = 0; i < narrowing_plugins.size(); ++i) {
            msg += (i ? " " : "") + narrowing_plugins[i];
          }
          msg += "] simultaneously";
        }
        out.status = Status(Code::kUnschedulableAndUnresolvable, msg);
        return out;
      }
    }
  }
  if (!unschedulable.IsSuccess()) out.status = std::move(unschedulable);
  return out;
}

std::vector<const FilterPlugin*> Framework::ActiveFilterPlugins(const CycleState& state) const {
  std::vector<const FilterPlugin*> out;
  for (const auto& [p, index] : filter_) {
    if (!state.FilterSkipped(index)) out.push_back(p);
  }
  return out;
}

bool Framework::VerdictsDependOnlyOnNode(const CycleState& state) const {
  if (HasActivePreFilterExtensions(state)) return false;
  for (const auto& [p, index] : filter_) {
    if (!state.FilterSkipped(index) && !p->VerdictDependsOnlyOnNode()) return false;
  }
  return true;
}

bool Framework::HasActivePreFilterExtensions(const CycleState& state) const {
  for (const auto& [p, index] : pre_filter_) {
    if (!state.FilterSkipped(index) && p->Extensions() != nullptr) return true;
  }
  return false;
}

Status Framework::RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod,
                                              const PodInfo& to_add, const NodeInfo& node) const {
  for (const auto& [p, index] : pre_filter_) {
    if (state.FilterSkipped(index) || p->Extensions() == nullptr) continue;
    Status s = p->Extensions()->AddPod(state, pod, to_add, node);
    if (!s.IsSuccess()) return std::move(s.WithPlugin(p->Name()));
  }
  return {};
}

Status Framework::RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod,
                                                 const PodInfo& to_remove,
                                                 const NodeInfo& node) const {
  for (const auto& [p, index] : pre_filter_) {
    if (state.FilterSkipped(index) || p->Extensions() == nullptr) continue;
    Status s = p->Extensions()->RemovePod(state, pod, to_remove, node);
    if (!s.IsSuccess()) return std::move(s.WithPlugin(p->Name()));
  }
  return {};
}

Status Framework::RunFilterPlugins(const CycleState& state, const PodInfo& pod,
                                   const NodeInfo& node) const {
  for (const auto& [p, index] : filter_) {
    if (state.FilterSkipped(index)) continue;
    Status s = p->Filter(state, pod, node);
    if (!s.IsSuccess()) return std::move(s.WithPlugin(p->Name()));
  }
  return {};
}

std::vector<Status> Framework::RunAllFilterPlugins(const CycleState& state, const PodInfo& pod,
                                                   const NodeInfo& node) const {
  std::vector<Status> out;
  for (const auto& [p, index] : filter_) {
    if (state.FilterSkipped(index)) {
      out.push_back(Status(Code::kSkip).WithPlugin(p->Name()));
      continue;
    }
    out.push_back(p->Filter(state, pod, node).WithPlugin(p->Name()));
  }
  return out;
}

Status Framework::RunFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                                    const NodeInfo& node) const {
  // Pods nominated to this node with priority >= the pod's, other than the pod itself.
  if (node.nominated_pods().empty()) return RunFilterPlugins(state, pod, node);
  SmallVector<const NodeInfo::Nominated*, 8> nominated;
  node.NominatedAtLeast(pod, nominated);
  if (nominated.empty()) return RunFilterPlugins(state, pod, node);
  // 1) With the nominated pods. Plugins that ignore the node's pods, or can account for extra
  // pods themselves, need no copy of the node; only if one cannot is the node copied.
  bool copied = HasActivePreFilterExtensions(state);
  if (!copied) {
    for (const auto& [p, index] : filter_) {
      if (state.FilterSkipped(index)) continue;
      std::optional<Status> s;
      if (!p->ReadsNodePods()) {
        s = p->Filter(state, pod, node);
      } else {
        s = p->FilterWithExtraPods(state, pod, node, std::span(nominated.data(), nominated.size()));
        if (!s) {
          copied = true;
          break;
        }
      }
      if (!s->IsSuccess()) return std::move(s->WithPlugin(p->Name()));
    }
  }
  if (copied) {
    NodeInfo with = node;
    CycleState state_with = state.Clone();
    for (const NodeInfo::Nominated* np : nominated) {
      with.AddPod(np->pod);
      Status s = RunPreFilterExtensionAddPod(state_with, pod, *np->pod, with);
      if (!s.IsSuccess()) return s;
    }
    Status s = RunFilterPlugins(state_with, pod, with);
    if (!s.IsSuccess()) return s;
  }
  // 2) Without them: both must pass.
  return RunFilterPlugins(state, pod, node);
}

PostFilterResult Framework::RunPostFilterPlugins(CycleState& state, const PodInfo& pod,
                                                 const NodeToStatus& filtered) const {
  PostFilterResult out;
  out.status = Status(Code::kUnschedulable);
  std::vector<std::string> reasons;
  for (auto* p : post_filter_) {
    PostFilterResult r = p->PostFilter(state, pod, filtered);
    if (r.status.IsSuccess() || r.status.code() == Code::kUnschedulableAndUnresolvable ||
        r.status.code() == Code::kError) {
      r.status.WithPlugin(p->Name());
      return r;
    }
    for (const auto& reason : r.status.reasons()) reasons.push_back(reason);
    if (r.nominated_node_name) out.nominated_node_name = r.nominated_node_name;
    for (auto& line : r.explanation) out.explanation.push_back(std::move(line));
  }
  out.status = Status(Code::kUnschedulable, std::move(reasons));
  return out;
}

Status Framework::RunPreScorePlugins(CycleState& state, const PodInfo& pod,
                                     std::span<const NodeInfo* const> feasible) const {
  state.ClearScoreSkips();
  for (const auto& [p, index] : pre_score_) {
    Status s = p->PreScore(state, pod, feasible);
    if (s.IsSkip()) {
      state.SkipScore(index);
      continue;
    }
    if (!s.IsSuccess()) return std::move(s.WithPlugin(p->Name()));
  }
  return {};
}

arbiter::Status Framework::RunScorePlugins(const CycleState& state, const PodInfo& pod,
                                           std::span<const NodeInfo* const> feasible, ScoreTable& t,
                                           ScoreMemo* memo) const {
  t.nodes.assign(feasible.begin(), feasible.end());
  t.plugins.clear();
  t.weights.clear();
  SmallVector<const ScorePlugin*, 8> active;
  SmallVector<size_t, 8> slot;  // each active plugin's position in score_ (its memo rows)
  for (size_t k = 0; k < score_.size(); ++k) {
    const auto& s = score_[k];
    if (state.ScoreSkipped(s.index)) continue;
    active.push_back(s.plugin);
    slot.push_back(k);
    t.plugins.push_back(s.plugin->Name());
    t.weights.push_back(s.weight);
  }
  const size_t np = active.size();
  t.scores.assign(feasible.size() * np, 0);
  t.totals.assign(feasible.size(), 0);
  std::vector<NodeScore>& column = t.column;
  column.resize(feasible.size());
  for (size_t j = 0; j < np; ++j) {
    const ScorePlugin* p = active[j];
    Status scored = memo != nullptr && memo->pod_class != 0 && p->ScoreDependsOnlyOnPodClassAndNode()
                        ? ScoreWithMemo(*p, slot[j], state, pod, feasible, column, *memo)
                        : p->ScoreNodes(state, pod, feasible, column);
    if (!scored.IsSuccess()) {
      return arbiter::Status(StatusCode::kInternal, "plugin " + std::string(p->Name()) + " " + scored.Message());
    }
    Status ns = p->NormalizeScore(state, pod, column);
    if (!ns.IsSuccess()) {
      return arbiter::Status(StatusCode::kInternal,
                             "plugin " + std::string(p->Name()) + " failed to normalise: " + ns.Message());
    }
    for (size_t i = 0; i < feasible.size(); ++i) {
      const int64_t s = column[i].score;
      if (s < kMinNodeScore || s > kMaxNodeScore) {
        return arbiter::Status(StatusCode::kInternal,
                               "plugin " + std::string(p->Name()) + " returned an invalid score " +
                                   std::to_string(s) + " for node " + feasible[i]->name());
      }
      t.scores[i * np + j] = s;
      t.totals[i] += s * t.weights[j];
    }
  }
  return {};
}

Status Framework::RunReservePlugins(CycleState& state, const PodInfo& pod, const std::string& node) const {
  for (auto* p : reserve_) {
    Status s = p->Reserve(state, pod, node);
    if (!s.IsSuccess()) return std::move(s.WithPlugin(p->Name()));
  }
  return {};
}

void Framework::RunUnreservePlugins(CycleState& state, const PodInfo& pod, const std::string& node) const {
  // In reverse order, as upstream.
  for (auto it = reserve_.rbegin(); it != reserve_.rend(); ++it) (*it)->Unreserve(state, pod, node);
}

PermitResult Framework::RunPermitPlugins(CycleState& state, const PodInfo& pod, const std::string& node) const {
  PermitResult out;
  for (auto* p : permit_) {
    PermitResult r = p->Permit(state, pod, node);
    if (r.status.code() == Code::kWait) {
      out.status = Status(Code::kWait);
      out.timeout = std::max(out.timeout, r.timeout);
      continue;
    }
    if (!r.status.IsSuccess()) {
      r.status.WithPlugin(p->Name());
      return r;
    }
  }
  return out;
}

Status Framework::RunBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node) const {
  for (auto* p : bind_) {
    Status s = p->Bind(state, pod, node);
    if (s.IsSkip()) continue;
    return s.WithPlugin(p->Name());
  }
  return Status(Code::kError, "no bind plugin bound the pod");
}

}  // namespace arbiter::sched
