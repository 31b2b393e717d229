// Small matching rules shared by several plugins, kept in one place so the plugins agree.
#pragma once

#include <string>

#include "arbiter/model/objects.h"
#include "arbiter/state/cluster_cache.h"

namespace arbiter::sched::plugins {

// True if the node matches the pod's nodeSelector and required node affinity
// (component-helpers nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)).
bool MatchesRequiredNodeAffinity(const model::Pod& pod, const model::Node& node);

// True if every NoSchedule / NoExecute taint of the node is tolerated by the pod.
bool ToleratesNoScheduleTaints(const model::Pod& pod, const model::Node& node);

// A namespace's labels as the API server keeps them: the declared labels plus
// kubernetes.io/metadata.name, which every namespace carries.
model::LabelMap NamespaceLabels(const state::Snapshot& snapshot, const std::string& ns);

}  // namespace arbiter::sched::plugins
