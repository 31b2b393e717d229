// The default profile.
#include "arbiter/sched/plugins/in_tree_registry.h"

#include <algorithm>

#include "arbiter/sched/plugins/imagelocality.h"
#include "arbiter/sched/plugins/interpodaffinity.h"
#include "arbiter/sched/plugins/noderesources.h"
#include "arbiter/sched/plugins/podtopologyspread.h"
#include "arbiter/sched/plugins/volumes.h"

namespace arbiter::sched::plugins {

namespace {
struct Entry {
  std::shared_ptr<Plugin> plugin;
  int32_t weight;
};

std::vector<Entry> DefaultEntries(const ProfileDeps& d) {
  const model::SchedulerConfig& cfg = *d.config;
  std::vector<Entry> e = {
      {std::make_shared<SchedulingGates>(), 0},
      {std::make_shared<PrioritySort>(), 0},
      {std::make_shared<NodeUnschedulable>(), 0},
      {std::make_shared<NodeName>(), 0},
      {std::make_shared<TaintToleration>(), 3},
      {std::make_shared<NodeAffinity>(), 2},
      {std::make_shared<NodePorts>(), 0},
      {std::make_shared<NodeResourcesFit>(cfg), 1},
      {std::make_shared<VolumeRestrictions>(d.handle), 0},
      {std::make_shared<NodeVolumeLimits>(d.handle), 0},
      {std::make_shared<VolumeBinding>(d.handle, d.storage), 0},
      {std::make_shared<VolumeZone>(d.handle), 0},
      {std::make_shared<PodTopologySpread>(d.handle), 2},
      {std::make_shared<InterPodAffinity>(d.handle, cfg.hard_pod_affinity_weight), 2},
  };
  for (const auto& p : d.post_filter) e.push_back({p, 0});
  e.push_back({std::make_shared<NodeResourcesBalancedAllocation>(), 1});
  e.push_back({std::make_shared<ImageLocality>(d.handle), 1});
  e.push_back({std::make_shared<DefaultBinder>(d.bind), 0});
  return e;
}
}  // namespace

StatusOr<std::vector<PluginEntry>> BuildDefaultProfile(const ProfileDeps& deps) {
  const model::SchedulerConfig& cfg = *deps.config;
  std::vector<Entry> entries = DefaultEntries(deps);
  auto find = [&](std::string_view name) {
    return std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.plugin->Name() == name; });
  };
  for (const auto& d : cfg.disabled_plugins) {
    const bool score_only = d.size() > 6 && d.ends_with("/score");
    const std::string name = score_only ? d.substr(0, d.size() - 6) : d;
    auto it = find(name);
    if (it == entries.end() && name == "DefaultPreemption") continue;  // preemption is off already
    if (it == entries.end()) {
      return InvalidArgument("KubeSchedulerConfiguration disables unknown plugin \"" + name + "\"");
    }
    if (score_only) {
      it->weight = 0;
    } else {
      entries.erase(it);
    }
  }
  for (const auto& [name, weight] : cfg.score_weights) {
    auto it = find(name);
    if (it == entries.end() || dynamic_cast<ScorePlugin*>(it->plugin.get()) == nullptr) {
      return InvalidArgument("KubeSchedulerConfiguration sets a score weight for \"" + name +
                             "\", which is not a score plugin of the profile");
    }
    it->weight = weight;
  }
  std::vector<PluginEntry> out;
  for (auto& e : entries) out.push_back({std::move(e.plugin), e.weight});
  return out;
}

}  // namespace arbiter::sched::plugins
