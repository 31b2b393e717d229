// Topology spread constraints.
#include "arbiter/sched/plugins/podtopologyspread.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <map>

#include "arbiter/sched/plugins/helpers.h"

namespace arbiter::sched::plugins {

namespace {
// Interned reason lists: a rejection per node allocates nothing.
const Status::Reasons& FixedReasonConstraintsNotMatch() {
  static const Status::Reasons r = Status::Interned(PodTopologySpread::kReasonConstraintsNotMatch);
  return r;
}
const Status::Reasons& FixedReasonNodeLabelNotMatch() {
  static const Status::Reasons r = Status::Interned(PodTopologySpread::kReasonNodeLabelNotMatch);
  return r;
}
}  // namespace

namespace {

constexpr std::string_view kPreFilterKey = "PreFilterPodTopologySpread";
constexpr std::string_view kPreScoreKey = "PreScorePodTopologySpread";
constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";

struct Constraint {
  int32_t max_skew = 1;
  std::string topology_key;
  std::optional<model::LabelSelector> selector;  // nullopt matches nothing
  int32_t min_domains = 1;
  model::NodeInclusionPolicy affinity_policy = model::NodeInclusionPolicy::kHonor;
  model::NodeInclusionPolicy taints_policy = model::NodeInclusionPolicy::kIgnore;

  bool SelectorMatches(const model::LabelMap& labels) const { return selector && selector->Matches(labels); }
};

std::vector<Constraint> BuildConstraints(const model::Pod& pod, model::UnsatisfiableAction action) {
  std::vector<Constraint> out;
  for (const auto& c : pod.topology_spread_constraints) {
    if (c.when_unsatisfiable != action) continue;
    Constraint k;
    k.max_skew = c.max_skew;
    k.topology_key = c.topology_key;
    k.selector = c.label_selector;
    if (k.selector) {
      // matchLabelKeys: the pod's own values for these keys narrow the selector.
      for (const auto& key : c.match_label_keys) {
        if (const std::string* v = pod.labels.Find(key)) {
          k.selector->requirements.push_back({key, model::SelectorOp::kIn, {*v}});
        }
      }
    }
    k.min_domains = c.min_domains.value_or(1);
    k.affinity_policy = c.node_affinity_policy;
    k.taints_policy = c.node_taints_policy;
    out.push_back(std::move(k));
  }
  return out;
}

bool NodeHasAllKeys(const model::Node& node, const std::vector<Constraint>& cs) {
  for (const auto& c : cs) {
    if (!node.labels.Has(c.topology_key)) return false;
  }
  return true;
}

bool PassesInclusionPolicies(const model::Pod& pod, const model::Node& node, const Constraint& c) {
  if (c.affinity_policy == model::NodeInclusionPolicy::kHonor && !MatchesRequiredNodeAffinity(pod, node)) {
    return false;
  }
  if (c.taints_policy == model::NodeInclusionPolicy::kHonor && !ToleratesNoScheduleTaints(pod, node)) {
    return false;
  }
  return true;
}

// countPodsMatchSelector: pods of the namespace, not terminating, matching the selector. An
// empty selector counts nothing (upstream checks selector.Empty()).
int64_t CountMatching(const std::vector<PodInfoPtr>& pods, const Constraint& c, const std::string& ns) {
  if (!c.selector || c.selector->empty()) return 0;
  int64_t n = 0;
  for (const auto& p : pods) {
    if (p->pod.deletion_timestamp || p->pod.ns != ns) continue;
    if (c.selector->Matches(p->pod.labels)) ++n;
  }
  return n;
}

// The two smallest domain counts, maintained as upstream's criticalPaths.
struct CriticalPaths {
  struct Path {
    std::string value;
    int64_t num = INT32_MAX;
  };
  Path p[2];
  void Update(const std::string& value, int64_t num) {
    int i = value == p[0].value ? 0 : (value == p[1].value ? 1 : -1);
    if (i >= 0) {
      p[i].num = num;
      if (p[0].num > p[1].num) std::swap(p[0], p[1]);
    } else if (num < p[0].num) {
      p[1] = p[0];
      p[0] = {value, num};
    } else if (num < p[1].num) {
      p[1] = {value, num};
    }
  }
};

struct PreFilterState final : StateData {
  std::vector<Constraint> constraints;
  std::vector<std::map<std::string, int64_t>> counts;  // per constraint: domain value -> pods
  std::vector<CriticalPaths> critical;
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }

  int64_t MinMatch(size_t i) const {
    if (static_cast<int64_t>(counts[i].size()) < constraints[i].min_domains) return 0;
    return critical[i].p[0].num;
  }

  void Update(const PodInfo& changed, const model::Node& node, const model::Pod& incoming, int64_t delta) {
    if (changed.pod.ns != incoming.ns || !NodeHasAllKeys(node, constraints)) return;
    for (size_t i = 0; i < constraints.size(); ++i) {
      const Constraint& c = constraints[i];
      if (!PassesInclusionPolicies(incoming, node, c) || !c.SelectorMatches(changed.pod.labels)) continue;
      const std::string& v = *node.labels.Find(c.topology_key);
      int64_t& n = counts[i][v];
      n += delta;
      critical[i].Update(v, n);
    }
  }
};

}  // namespace

PreFilterResult PodTopologySpread::PreFilter(CycleState& state, const PodInfo& pod,
                                             std::span<const NodeInfo* const>) const {
  auto cs = BuildConstraints(pod.pod, model::UnsatisfiableAction::kDoNotSchedule);
  if (cs.empty()) return {Status(Code::kSkip), std::nullopt};
  auto s = std::make_unique<PreFilterState>();
  s->counts.resize(cs.size());
  s->critical.resize(cs.size());
  for (const NodeInfo* n : handle_->snapshot().nodes()) {
    const model::Node& node = n->node();
    if (!NodeHasAllKeys(node, cs)) continue;
    for (size_t i = 0; i < cs.size(); ++i) {
      if (!PassesInclusionPolicies(pod.pod, node, cs[i])) continue;
      s->counts[i][*node.labels.Find(cs[i].topology_key)] += CountMatching(n->pods(), cs[i], pod.pod.ns);
    }
  }
  for (size_t i = 0; i < cs.size(); ++i) {
    for (const auto& [v, n] : s->counts[i]) s->critical[i].Update(v, n);
  }
  s->constraints = std::move(cs);
  state.Write(kPreFilterKey, std::move(s));
  return {};
}

Status PodTopologySpread::AddPod(CycleState& state, const PodInfo& to_schedule, const PodInfo& to_add,
                                 const NodeInfo& node) const {
  auto* s = state.Read<PreFilterState>(kPreFilterKey);
  if (s == nullptr) return Status(Code::kError, "PodTopologySpread PreFilter state is missing");
  s->Update(to_add, node.node(), to_schedule.pod, +1);
  return {};
}

Status PodTopologySpread::RemovePod(CycleState& state, const PodInfo& to_schedule,
                                    const PodInfo& to_remove, const NodeInfo& node) const {
  auto* s = state.Read<PreFilterState>(kPreFilterKey);
  if (s == nullptr) return Status(Code::kError, "PodTopologySpread PreFilter state is missing");
  s->Update(to_remove, node.node(), to_schedule.pod, -1);
  return {};
}

Status PodTopologySpread::Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const {
  const auto* s = state.Read<PreFilterState>(kPreFilterKey);
  if (s == nullptr) return Status(Code::kError, "PodTopologySpread PreFilter state is missing");
  for (size_t i = 0; i < s->constraints.size(); ++i) {
    const Constraint& c = s->constraints[i];
    const std::string* v = node.node().labels.Find(c.topology_key);
    if (v == nullptr) return Status(Code::kUnschedulableAndUnresolvable, FixedReasonNodeLabelNotMatch());
    const int64_t self_match = c.SelectorMatches(pod.pod.labels) ? 1 : 0;
    auto it = s->counts[i].find(*v);
    const int64_t match_num = it == s->counts[i].end() ? 0 : it->second;
    if (match_num + self_match - s->MinMatch(i) > c.max_skew) {
      return Status(Code::kUnschedulable, FixedReasonConstraintsNotMatch());
    }
  }
  return {};
}

namespace {

struct PreScoreState final : StateData {
  std::vector<Constraint> constraints;
  std::vector<std::map<std::string, int64_t>> counts;  // per constraint (not hostname)
  std::vector<double> weights;
  std::vector<std::string> ignored_nodes;  // sorted
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
  bool Ignored(const std::string& node) const {
    return std::binary_search(ignored_nodes.begin(), ignored_nodes.end(), node);
  }
};

}  // namespace

Status PodTopologySpread::PreScore(CycleState& state, const PodInfo& pod,
                                   std::span<const NodeInfo* const> feasible) const {
  const state::Snapshot& snap = handle_->snapshot();
  auto cs = BuildConstraints(pod.pod, model::UnsatisfiableAction::kScheduleAnyway);
  if (cs.empty() || snap.size() == 0) return Status(Code::kSkip);
  auto s = std::make_unique<PreScoreState>();
  s->counts.resize(cs.size());
  for (const NodeInfo* n : feasible) {
    const model::Node& node = n->node();
    if (!NodeHasAllKeys(node, cs)) {
      s->ignored_nodes.push_back(node.name);
      continue;
    }
    for (size_t i = 0; i < cs.size(); ++i) {
      if (cs[i].topology_key == kHostnameLabel) continue;
      s->counts[i].emplace(*node.labels.Find(cs[i].topology_key), 0);
    }
  }
  std::sort(s->ignored_nodes.begin(), s->ignored_nodes.end());
  for (size_t i = 0; i < cs.size(); ++i) {
    const size_t size = cs[i].topology_key == kHostnameLabel ? feasible.size() - s->ignored_nodes.size()
                                                              : s->counts[i].size();
    s->weights.push_back(std::log(static_cast<double>(size) + 2));
  }
  for (const NodeInfo* n : snap.nodes()) {
    const model::Node& node = n->node();
    if (!NodeHasAllKeys(node, cs)) continue;
    for (size_t i = 0; i < cs.size(); ++i) {
      if (cs[i].topology_key == kHostnameLabel || !PassesInclusionPolicies(pod.pod, node, cs[i])) continue;
      auto it = s->counts[i].find(*node.labels.Find(cs[i].topology_key));
      if (it == s->counts[i].end()) continue;  // only domains of feasible nodes count
      it->second += CountMatching(n->pods(), cs[i], pod.pod.ns);
    }
  }
  s->constraints = std::move(cs);
  state.Write(kPreScoreKey, std::move(s));
  return {};
}

ScoreResult PodTopologySpread::Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const {
  const auto* s = state.Read<PreScoreState>(kPreScoreKey);
  if (s == nullptr || s->Ignored(node.name())) return {0, {}};
  double score = 0;
  for (size_t i = 0; i < s->constraints.size(); ++i) {
    const Constraint& c = s->constraints[i];
    const std::string* v = node.node().labels.Find(c.topology_key);
    if (v == nullptr) continue;
    int64_t cnt = 0;
    if (c.topology_key == kHostnameLabel) {
      cnt = CountMatching(node.pods(), c, pod.pod.ns);
    } else {
      auto it = s->counts[i].find(*v);
      cnt = it == s->counts[i].end() ? 0 : it->second;
    }
    score += static_cast<double>(cnt) * s->weights[i] + static_cast<double>(c.max_skew - 1);
  }
  return {static_cast<int64_t>(std::round(score)), {}};
}

Status PodTopologySpread::NormalizeScore(const CycleState& state, const PodInfo&,
                                         std::span<NodeScore> scores) const {
  const auto* s = state.Read<PreScoreState>(kPreScoreKey);
  if (s == nullptr) return {};
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = 0;
  for (const auto& ns : scores) {
    if (s->Ignored(ns.node->name())) continue;
    min = std::min(min, ns.score);
    max = std::max(max, ns.score);
  }
  for (auto& ns : scores) {
    if (s->Ignored(ns.node->name())) {
      ns.score = 0;
    } else if (max == 0) {
      ns.score = kMaxNodeScore;
    } else {
      ns.score = kMaxNodeScore * (max + min - ns.score) / max;
    }
  }
  return {};
}

}  // namespace arbiter::sched::plugins
