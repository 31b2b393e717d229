// Shared matching rules for plugins.
#include "arbiter/sched/plugins/helpers.h"

namespace arbiter::sched::plugins {

bool MatchesRequiredNodeAffinity(const model::Pod& pod, const model::Node& node) {
  for (const auto& [k, v] : pod.node_selector) {
    const std::string* have = node.labels.Find(k);
    if (have == nullptr || *have != v) return false;
  }
  const auto& required = pod.affinity.node_affinity.required;
  return !required.has_value() || required->Matches(node.labels, node.name);
}

bool ToleratesNoScheduleTaints(const model::Pod& pod, const model::Node& node) {
  for (const auto& t : node.taints) {
    if (t.effect == model::TaintEffect::kPreferNoSchedule) continue;
    if (!model::TolerationsTolerate(pod.tolerations, t)) return false;
  }
  return true;
}

model::LabelMap NamespaceLabels(const state::Snapshot& snapshot, const std::string& ns) {
  model::LabelMap labels;
  if (const model::LabelMap* declared = snapshot.NamespaceLabels(ns)) labels = *declared;
  labels.Set("kubernetes.io/metadata.name", ns);
  return labels;
}

}  // namespace arbiter::sched::plugins
