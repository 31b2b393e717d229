#include "arbiter/model/feature_gates.h"

namespace arbiter::model {

bool FeatureEnabled(const SchedulerConfig& config, std::string_view gate) {
  for (const auto& [name, on] : config.feature_gates) {
    if (name == gate) return on;
  }
  return true;
}

void DropDisabledFields(const SchedulerConfig& config, Pod& pod) {
  if (!pod.pod_group_name.empty() && !FeatureEnabled(config, kGateGenericWorkload)) pod.pod_group_name.clear();
  if (pod.pod_level_resources && !FeatureEnabled(config, kGatePodLevelResources)) {
    pod.requests = pod.pod_level_resources->container_requests;
    pod.non_zero_milli_cpu = pod.pod_level_resources->container_non_zero_milli_cpu;
    pod.non_zero_memory = pod.pod_level_resources->container_non_zero_memory;
    pod.pod_level_resources.reset();
  }
}

void DropDisabledFields(const SchedulerConfig& config, PodGroup& group) {
  if (!group.parent.empty() && !FeatureEnabled(config, kGateCompositePodGroup)) group.parent.clear();
}

}  // namespace arbiter::model
