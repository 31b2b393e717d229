#include "arbiter/model/node_eligibility.h"

namespace arbiter::model {

bool MatchesRequiredNodeAffinity(const Pod& pod, const Node& node) {
  for (const auto& [k, v] : pod.node_selector) {
    const std::string* have = node.labels.Find(k);
    if (have == nullptr || *have != v) return false;
  }
  const auto& required = pod.affinity.node_affinity.required;
  return !required.has_value() || required->Matches(node.labels, node.name);
}

bool ToleratesNoScheduleTaints(const Pod& pod, const Node& node) {
  for (const auto& t : node.taints) {
    if (t.effect == TaintEffect::kPreferNoSchedule) continue;
    if (!TolerationsTolerate(pod.tolerations, t)) return false;
  }
  return true;
}

}  // namespace arbiter::model
