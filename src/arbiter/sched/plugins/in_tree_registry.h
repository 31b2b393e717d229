// The in-tree plugins and kube-scheduler's default profile: which plugins run, in which order,
// and with which score weights (TaintToleration 3, NodeAffinity 2, PodTopologySpread 2,
// InterPodAffinity 2, NodeResourcesFit 1, NodeResourcesBalancedAllocation 1, ImageLocality 1). Registration is
// explicit: adding a plugin means one line in BuildDefaultProfile.
#pragma once

#include <memory>
#include <vector>

#include "arbiter/base/status.h"
#include "arbiter/sched/framework/framework.h"
#include "arbiter/sched/plugins/simple_plugins.h"

namespace arbiter::sched::plugins {

struct ProfileDeps {
  const Handle* handle = nullptr;
  const model::SchedulerConfig* config = nullptr;
  DefaultBinder::BindFn bind;
  // The scheduler's storage objects, which VolumeBinding's Reserve changes (nullptr: none).
  state::StorageIndex* storage = nullptr;
  // Plugins that live outside this folder (preemption), placed where upstream's default profile
  // puts DefaultPreemption: after the filters, before the score-only plugins.
  std::vector<std::shared_ptr<Plugin>> post_filter;
};

// The default profile with the configuration's disabled plugins and weights applied. Fails on a
// plugin name Arbiter does not know.
StatusOr<std::vector<PluginEntry>> BuildDefaultProfile(const ProfileDeps& deps);

}  // namespace arbiter::sched::plugins
