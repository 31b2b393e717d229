// Small matching rules shared by several plugins, kept in one place so the plugins agree.
#pragma once

#include <string>

#include "arbiter/model/node_eligibility.h"
#include "arbiter/model/objects.h"
#include "arbiter/state/cluster_cache.h"

namespace arbiter::sched::plugins {

// Node eligibility (nodeSelector, required node affinity, NoSchedule taints) is the model's
// rule: model/node_eligibility.h.
using model::MatchesRequiredNodeAffinity;
using model::ToleratesNoScheduleTaints;

// A namespace's labels as the API server keeps them: the declared labels plus
// kubernetes.io/metadata.name, which every namespace carries.
model::LabelMap NamespaceLabels(const state::Snapshot& snapshot, const std::string& ns);

}  // namespace arbiter::sched::plugins
