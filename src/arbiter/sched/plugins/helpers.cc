// Shared matching rules for plugins.
#include "arbiter/sched/plugins/helpers.h"

namespace arbiter::sched::plugins {

model::LabelMap NamespaceLabels(const state::Snapshot& snapshot, const std::string& ns) {
  model::LabelMap labels;
  if (const model::LabelMap* declared = snapshot.NamespaceLabels(ns)) labels = *declared;
  labels.Set("kubernetes.io/metadata.name", ns);
  return labels;
}

}  // namespace arbiter::sched::plugins
