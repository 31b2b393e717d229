// PrioritySort, NodeUnschedulable, NodeName, TaintToleration, NodeAffinity and NodePorts.
#include "arbiter/sched/plugins/simple_plugins.h"

#include <optional>
#include <set>

#include "arbiter/sched/plugins/helpers.h"

namespace arbiter::sched::plugins {

namespace {
// Interned reason lists: a rejection per node allocates nothing.
template <typename Plugin>
const Status::Reasons& InternedReason() {
  static const Status::Reasons r = Status::Interned(Plugin::kReason);
  return r;
}
}  // namespace


bool PrioritySort::Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.timestamp != b.timestamp) return a.timestamp < b.timestamp;
  return a.sequence < b.sequence;
}

Status SchedulingGates::PreEnqueue(const PodInfo& pod) const {
  const auto& gates = pod.pod.scheduling_gates;
  if (gates.empty()) return {};
  std::string names;  // Go's %v of a []string
  for (const auto& g : gates) names += (names.empty() ? "" : " ") + g;
  return Status(Code::kUnschedulableAndUnresolvable, "waiting for scheduling gates: [" + names + "]");
}

Status NodeUnschedulable::Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  if (!node.unschedulable()) return {};
  const model::Taint cordon{std::string(model::kTaintNodeUnschedulable), "",
                            model::TaintEffect::kNoSchedule};
  if (model::TolerationsTolerate(pod.pod.tolerations, cordon)) return {};
  return Status(Code::kUnschedulableAndUnresolvable, InternedReason<NodeUnschedulable>());
}

Status NodeName::Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  if (pod.pod.node_name.empty() || pod.pod.node_name == node.name()) return {};
  return Status(Code::kUnschedulableAndUnresolvable, InternedReason<NodeName>());
}

Status TaintToleration::Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  // A NoSchedule/NoExecute taint that nothing tolerates. The message names no taint
  // (kube-scheduler >= 1.35 keeps a node's taints out of a pod's status).
  if (!node.has_taints()) return {};
  for (const auto& t : node.node().taints) {
    if (t.effect == model::TaintEffect::kPreferNoSchedule) continue;
    if (!model::TolerationsTolerate(pod.pod.tolerations, t)) {
      return Status(Code::kUnschedulableAndUnresolvable, InternedReason<TaintToleration>());
    }
  }
  return {};
}

namespace {
constexpr std::string_view kTaintStateKey = "PreScoreTaintToleration";
struct PreferTolerations final : StateData {
  std::vector<model::Toleration> tolerations;
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreferTolerations>(*this); }
};
}  // namespace

Status TaintToleration::PreScore(CycleState& state, const PodInfo& pod,
                                 std::span<const NodeInfo* const>) const {
  auto s = std::make_unique<PreferTolerations>();
  for (const auto& t : pod.pod.tolerations) {
    if (!t.effect || *t.effect == model::TaintEffect::kPreferNoSchedule) s->tolerations.push_back(t);
  }
  state.Write(kTaintStateKey, std::move(s));
  return {};
}

ScoreResult TaintToleration::Score(const CycleState& state, const PodInfo&, const NodeInfo& node) const {
  if (!node.has_taints()) return {0, {}};
  const auto* s = state.Read<PreferTolerations>(kTaintStateKey);
  int64_t count = 0;
  for (const auto& t : node.node().taints) {
    if (t.effect != model::TaintEffect::kPreferNoSchedule) continue;
    if (s == nullptr || !model::TolerationsTolerate(s->tolerations, t)) ++count;
  }
  return {count, {}};
}

Status TaintToleration::NormalizeScore(const CycleState&, const PodInfo&, std::span<NodeScore> scores) const {
  DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/true, scores);
  return {};
}

PreFilterResult NodeAffinity::PreFilter(CycleState&, const PodInfo& pod,
                                        std::span<const NodeInfo* const>) const {
  const auto& required = pod.pod.affinity.node_affinity.required;
  if (!required.has_value() && pod.pod.node_selector.empty()) return {Status(Code::kSkip), std::nullopt};
  PreFilterResult r;
  if (!required.has_value()) return r;
  // Terms that pin metadata.name narrow the nodes worth filtering; one term without such a pin
  // leaves every node possible. Within a term the pins are ANDed (their name sets intersect);
  // the terms are ORed (their sets unite).
  std::set<std::string> names;
  for (const auto& term : required->terms) {
    std::optional<std::set<std::string>> term_names;
    for (const auto& f : term.match_fields) {
      if (f.key != "metadata.name" || f.op != model::SelectorOp::kIn) continue;
      std::set<std::string> values(f.values.begin(), f.values.end());
      if (!term_names) {
        term_names = std::move(values);
      } else {
        std::erase_if(*term_names, [&](const std::string& n) { return !values.contains(n); });
      }
    }
    if (!term_names) return r;
    names.insert(term_names->begin(), term_names->end());
  }
  if (names.empty()) {
    r.status = Status(Code::kUnschedulableAndUnresolvable, "pod affinity terms conflict");
    return r;
  }
  r.node_names = std::move(names);
  return r;
}

Status NodeAffinity::Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  if (MatchesRequiredNodeAffinity(pod.pod, node.node())) return {};
  return Status(Code::kUnschedulableAndUnresolvable, InternedReason<NodeAffinity>());
}

Status NodeAffinity::PreScore(CycleState&, const PodInfo& pod, std::span<const NodeInfo* const>) const {
  if (pod.pod.affinity.node_affinity.preferred.empty()) return Status(Code::kSkip);
  return {};
}

ScoreResult NodeAffinity::Score(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  int64_t score = 0;
  for (const auto& p : pod.pod.affinity.node_affinity.preferred) {
    if (p.weight != 0 && p.preference.Matches(node.node().labels, node.name())) score += p.weight;
  }
  return {score, {}};
}

Status NodeAffinity::NormalizeScore(const CycleState&, const PodInfo&, std::span<NodeScore> scores) const {
  DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/false, scores);
  return {};
}

PreFilterResult NodePorts::PreFilter(CycleState&, const PodInfo& pod, std::span<const NodeInfo* const>) const {
  if (pod.pod.host_ports.empty()) return {Status(Code::kSkip), std::nullopt};
  return {};
}

Status NodePorts::Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  for (const auto& hp : pod.pod.host_ports) {
    if (state::HostPortConflicts(node.used_ports(), hp)) {
      return Status(Code::kUnschedulable, InternedReason<NodePorts>());
    }
  }
  return {};
}

}  // namespace arbiter::sched::plugins
