// Inter-pod affinity and anti-affinity.
#include "arbiter/sched/plugins/interpodaffinity.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "arbiter/sched/plugins/helpers.h"

namespace arbiter::sched::plugins {

namespace {
// Interned reason lists: a rejection per node allocates nothing.
const Status::Reasons& FixedReasonAffinity() {
  static const Status::Reasons r = Status::Interned(InterPodAffinity::kReasonAffinity);
  return r;
}
const Status::Reasons& FixedReasonAntiAffinity() {
  static const Status::Reasons r = Status::Interned(InterPodAffinity::kReasonAntiAffinity);
  return r;
}
const Status::Reasons& FixedReasonExistingAntiAffinity() {
  static const Status::Reasons r = Status::Interned(InterPodAffinity::kReasonExistingAntiAffinity);
  return r;
}
}  // namespace

namespace {

constexpr std::string_view kPreFilterKey = "PreFilterInterPodAffinity";
constexpr std::string_view kPreScoreKey = "PreScoreInterPodAffinity";

// An affinity term resolved for its owner pod: the owner's namespace by default, and
// matchLabelKeys / mismatchLabelKeys folded into the selector from the owner's labels.
struct Term {
  std::optional<model::LabelSelector> selector;
  std::vector<std::string> namespaces;
  std::optional<model::LabelSelector> namespace_selector;
  std::string topology_key;
  int32_t weight = 0;

  bool Matches(const model::Pod& pod, const model::LabelMap& pod_ns_labels) const {
    bool ns_ok = std::find(namespaces.begin(), namespaces.end(), pod.ns) != namespaces.end() ||
                 (namespace_selector && namespace_selector->Matches(pod_ns_labels));
    return ns_ok && selector && selector->Matches(pod.labels);
  }
};

Term Resolve(const model::PodAffinityTerm& t, const model::Pod& owner, int32_t weight) {
  Term out;
  out.selector = t.label_selector;
  if (out.selector) {
    for (const auto& k : t.match_label_keys) {
      if (const std::string* v = owner.labels.Find(k)) out.selector->requirements.push_back({k, model::SelectorOp::kIn, {*v}});
    }
    for (const auto& k : t.mismatch_label_keys) {
      if (const std::string* v = owner.labels.Find(k)) out.selector->requirements.push_back({k, model::SelectorOp::kNotIn, {*v}});
    }
  }
  out.namespaces = t.namespaces;
  out.namespace_selector = t.namespace_selector;
  if (out.namespaces.empty() && !out.namespace_selector) out.namespaces.push_back(owner.ns);
  out.topology_key = t.topology_key;
  out.weight = weight;
  return out;
}

std::vector<Term> ResolveRequired(const std::vector<model::PodAffinityTerm>& terms, const model::Pod& owner) {
  std::vector<Term> out;
  for (const auto& t : terms) out.push_back(Resolve(t, owner, 1));
  return out;
}

std::vector<Term> ResolvePreferred(const std::vector<model::WeightedPodAffinityTerm>& terms,
                                   const model::Pod& owner) {
  std::vector<Term> out;
  for (const auto& t : terms) out.push_back(Resolve(t.term, owner, t.weight));
  return out;
}

using TopologyPair = std::pair<std::string, std::string>;
using TopologyCounts = std::map<TopologyPair, int64_t>;

void AddCount(TopologyCounts& counts, const std::string& key, const model::Node& node, int64_t delta) {
  const std::string* v = node.labels.Find(key);
  if (v == nullptr) return;
  auto& c = counts[{key, *v}];
  c += delta;
  if (c == 0) counts.erase({key, *v});
}

struct PreFilterState final : StateData {
  std::vector<Term> affinity;
  std::vector<Term> anti_affinity;
  model::LabelMap ns_labels;  // of the incoming pod's namespace
  TopologyCounts existing_anti_affinity;
  TopologyCounts affinity_counts;
  TopologyCounts anti_affinity_counts;
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }

  // Applies an existing pod (added or removed, by `delta`) on `node` to all three counts.
  void Update(const PodInfo& existing, const model::Node& node, const model::Pod& incoming,
              int64_t delta) {
    for (const auto& t : ResolveRequired(existing.pod.affinity.pod_anti_affinity.required, existing.pod)) {
      if (t.Matches(incoming, ns_labels)) AddCount(existing_anti_affinity, t.topology_key, node, delta);
    }
    if (!affinity.empty()) {
      bool all = true;
      for (const auto& t : affinity) {
        if (!t.Matches(existing.pod, ExistingNsLabels(existing.pod.ns))) {
          all = false;
          break;
        }
      }
      if (all) {
        for (const auto& t : affinity) AddCount(affinity_counts, t.topology_key, node, delta);
      }
    }
    for (const auto& t : anti_affinity) {
      if (t.Matches(existing.pod, ExistingNsLabels(existing.pod.ns))) {
        AddCount(anti_affinity_counts, t.topology_key, node, delta);
      }
    }
  }

  // The incoming pod's terms match existing pods by *their* namespace's labels.
  const model::LabelMap& ExistingNsLabels(const std::string& ns) {
    auto it = ns_cache.find(ns);
    if (it != ns_cache.end()) return it->second;
    return ns_cache.emplace(ns, NamespaceLabels(*snapshot, ns)).first->second;
  }
  const state::Snapshot* snapshot = nullptr;
  std::map<std::string, model::LabelMap> ns_cache;
};

}  // namespace

PreFilterResult InterPodAffinity::PreFilter(CycleState& state, const PodInfo& pod,
                                            std::span<const NodeInfo* const>) const {
  const state::Snapshot& snap = handle_->snapshot();
  const auto& a = pod.pod.affinity;
  if (a.pod_affinity.required.empty() && a.pod_anti_affinity.required.empty() &&
      snap.have_pods_with_required_anti_affinity().empty()) {
    return {Status(Code::kSkip), std::nullopt};  // nothing can constrain this pod
  }
  auto s = std::make_unique<PreFilterState>();
  s->snapshot = &snap;
  s->affinity = ResolveRequired(pod.pod.affinity.pod_affinity.required, pod.pod);
  s->anti_affinity = ResolveRequired(pod.pod.affinity.pod_anti_affinity.required, pod.pod);
  s->ns_labels = NamespaceLabels(snap, pod.pod.ns);
  // Existing pods' required anti-affinity against the incoming pod.
  for (const NodeInfo* n : snap.have_pods_with_required_anti_affinity()) {
    for (const auto& existing : n->pods_with_required_anti_affinity()) {
      for (const auto& t : ResolveRequired(existing->pod.affinity.pod_anti_affinity.required, existing->pod)) {
        if (t.Matches(pod.pod, s->ns_labels)) AddCount(s->existing_anti_affinity, t.topology_key, n->node(), 1);
      }
    }
  }
  if (s->existing_anti_affinity.empty() && s->affinity.empty() && s->anti_affinity.empty()) {
    return {Status(Code::kSkip), std::nullopt};
  }
  // The incoming pod's required terms against every existing pod.
  if (!s->affinity.empty() || !s->anti_affinity.empty()) {
    for (const NodeInfo* n : snap.nodes()) {
      for (const auto& existing : n->pods()) {
        const model::LabelMap& ens = s->ExistingNsLabels(existing->pod.ns);
        if (!s->affinity.empty()) {
          bool all = std::all_of(s->affinity.begin(), s->affinity.end(),
                                 [&](const Term& t) { return t.Matches(existing->pod, ens); });
          if (all) {
            for (const auto& t : s->affinity) AddCount(s->affinity_counts, t.topology_key, n->node(), 1);
          }
        }
        for (const auto& t : s->anti_affinity) {
          if (t.Matches(existing->pod, ens)) AddCount(s->anti_affinity_counts, t.topology_key, n->node(), 1);
        }
      }
    }
  }
  state.Write(kPreFilterKey, std::move(s));
  return {};
}

Status InterPodAffinity::AddPod(CycleState& state, const PodInfo& to_schedule, const PodInfo& to_add,
                                const NodeInfo& node) const {
  auto* s = state.Read<PreFilterState>(kPreFilterKey);
  if (s == nullptr) return Status(Code::kError, "InterPodAffinity PreFilter state is missing");
  s->Update(to_add, node.node(), to_schedule.pod, +1);
  return {};
}

Status InterPodAffinity::RemovePod(CycleState& state, const PodInfo& to_schedule,
                                   const PodInfo& to_remove, const NodeInfo& node) const {
  auto* s = state.Read<PreFilterState>(kPreFilterKey);
  if (s == nullptr) return Status(Code::kError, "InterPodAffinity PreFilter state is missing");
  s->Update(to_remove, node.node(), to_schedule.pod, -1);
  return {};
}

Status InterPodAffinity::Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const {
  const auto* s = state.Read<PreFilterState>(kPreFilterKey);
  if (s == nullptr) return Status(Code::kError, "InterPodAffinity PreFilter state is missing");
  const model::LabelMap& labels = node.node().labels;
  auto count = [](const TopologyCounts& c, const std::string& key, const std::string& value) {
    auto it = c.find({key, value});
    return it == c.end() ? 0 : it->second;
  };
  // 1) The incoming pod's required affinity.
  if (!s->affinity.empty()) {
    bool pods_exist = true;
    bool has_keys = true;
    for (const auto& t : s->affinity) {
      const std::string* v = labels.Find(t.topology_key);
      if (v == nullptr) {
        has_keys = false;
        break;
      }
      if (count(s->affinity_counts, t.topology_key, *v) <= 0) pods_exist = false;
    }
    bool ok = has_keys && pods_exist;
    if (has_keys && !pods_exist && s->affinity_counts.empty()) {
      // No pod anywhere matches: the pod may still go where it would match itself.
      ok = std::all_of(s->affinity.begin(), s->affinity.end(),
                       [&](const Term& t) { return t.Matches(pod.pod, s->ns_labels); });
    }
    if (!ok) return Status(Code::kUnschedulableAndUnresolvable, FixedReasonAffinity());
  }
  // 2) The incoming pod's required anti-affinity.
  if (!s->anti_affinity_counts.empty()) {
    for (const auto& t : s->anti_affinity) {
      const std::string* v = labels.Find(t.topology_key);
      if (v != nullptr && count(s->anti_affinity_counts, t.topology_key, *v) > 0) {
        return Status(Code::kUnschedulable, FixedReasonAntiAffinity());
      }
    }
  }
  // 3) Existing pods' required anti-affinity.
  if (!s->existing_anti_affinity.empty()) {
    for (const auto& [k, v] : labels) {
      if (count(s->existing_anti_affinity, k, v) > 0) {
        return Status(Code::kUnschedulable, FixedReasonExistingAntiAffinity());
      }
    }
  }
  return {};
}

namespace {

using TopologyScore = std::map<std::string, std::map<std::string, int64_t>>;

struct PreScoreState final : StateData {
  TopologyScore scores;
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
};

void AddScore(TopologyScore& s, const std::string& key, const model::Node& node, int64_t w) {
  const std::string* v = node.labels.Find(key);
  if (v == nullptr || w == 0) return;
  s[key][*v] += w;
}

}  // namespace

Status InterPodAffinity::PreScore(CycleState& state, const PodInfo& pod,
                                  std::span<const NodeInfo* const>) const {
  const state::Snapshot& snap = handle_->snapshot();
  const auto& a = pod.pod.affinity;
  if (a.pod_affinity.preferred.empty() && a.pod_anti_affinity.preferred.empty() &&
      snap.have_pods_with_affinity().empty()) {
    return Status(Code::kSkip);  // no term on either side
  }
  const auto pref_affinity = ResolvePreferred(pod.pod.affinity.pod_affinity.preferred, pod.pod);
  const auto pref_anti = ResolvePreferred(pod.pod.affinity.pod_anti_affinity.preferred, pod.pod);
  const bool has_preferred = !pref_affinity.empty() || !pref_anti.empty();
  const model::LabelMap incoming_ns = NamespaceLabels(snap, pod.pod.ns);
  std::map<std::string, model::LabelMap> ns_cache;
  auto ns_labels = [&](const std::string& ns) -> const model::LabelMap& {
    auto it = ns_cache.find(ns);
    if (it != ns_cache.end()) return it->second;
    return ns_cache.emplace(ns, NamespaceLabels(snap, ns)).first->second;
  };
  auto s = std::make_unique<PreScoreState>();
  auto process = [&](const NodeInfo& n, const PodInfo& existing) {
    const model::Node& node = n.node();
    if (node.labels.empty()) return;
    const model::LabelMap& ens = ns_labels(existing.pod.ns);
    for (const auto& t : pref_affinity) {
      if (t.Matches(existing.pod, ens)) AddScore(s->scores, t.topology_key, node, t.weight);
    }
    for (const auto& t : pref_anti) {
      if (t.Matches(existing.pod, ens)) AddScore(s->scores, t.topology_key, node, -t.weight);
    }
    const auto& ea = existing.pod.affinity;
    if (hard_weight_ > 0) {
      for (const auto& t : ResolveRequired(ea.pod_affinity.required, existing.pod)) {
        if (t.Matches(pod.pod, incoming_ns)) AddScore(s->scores, t.topology_key, node, hard_weight_);
      }
    }
    for (const auto& t : ResolvePreferred(ea.pod_affinity.preferred, existing.pod)) {
      if (t.Matches(pod.pod, incoming_ns)) AddScore(s->scores, t.topology_key, node, t.weight);
    }
    for (const auto& t : ResolvePreferred(ea.pod_anti_affinity.preferred, existing.pod)) {
      if (t.Matches(pod.pod, incoming_ns)) AddScore(s->scores, t.topology_key, node, -t.weight);
    }
  };
  if (has_preferred) {
    for (const NodeInfo* n : snap.nodes()) {
      for (const auto& p : n->pods()) process(*n, *p);
    }
  } else {
    for (const NodeInfo* n : snap.have_pods_with_affinity()) {
      for (const auto& p : n->pods_with_affinity()) process(*n, *p);
    }
  }
  // Skip only if no term matched anywhere. A domain whose contributions cancel out keeps its
  // (zero) entry, so the plugin still scores, as upstream's PreScore does.
  if (s->scores.empty()) return Status(Code::kSkip);
  state.Write(kPreScoreKey, std::move(s));
  return {};
}

ScoreResult InterPodAffinity::Score(const CycleState& state, const PodInfo&, const NodeInfo& node) const {
  const auto* s = state.Read<PreScoreState>(kPreScoreKey);
  if (s == nullptr) return {0, {}};
  int64_t score = 0;
  for (const auto& [key, values] : s->scores) {
    const std::string* v = node.node().labels.Find(key);
    if (v == nullptr) continue;
    auto it = values.find(*v);
    if (it != values.end()) score += it->second;
  }
  return {score, {}};
}

Status InterPodAffinity::NormalizeScore(const CycleState& state, const PodInfo&,
                                        std::span<NodeScore> scores) const {
  const auto* s = state.Read<PreScoreState>(kPreScoreKey);
  if (s == nullptr || s->scores.empty()) return {};
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = std::numeric_limits<int64_t>::min();
  for (const auto& ns : scores) {
    min = std::min(min, ns.score);
    max = std::max(max, ns.score);
  }
  const int64_t diff = max - min;
  for (auto& ns : scores) {
    ns.score = diff > 0 ? static_cast<int64_t>(static_cast<double>(kMaxNodeScore) *
                                               (static_cast<double>(ns.score - min) / static_cast<double>(diff)))
                        : 0;
  }
  return {};
}

}  // namespace arbiter::sched::plugins
