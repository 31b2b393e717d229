// Derived values of the model objects.
#include "arbiter/model/objects.h"

#include <algorithm>
#include <cstdint>

namespace arbiter::model {

std::string_view PreemptionPolicyName(PreemptionPolicy p) {
  return p == PreemptionPolicy::kNever ? "Never" : "PreemptLowerPriority";
}

std::optional<PreemptionPolicy> ParsePreemptionPolicy(std::string_view name) {
  for (PreemptionPolicy p : {PreemptionPolicy::kPreemptLowerPriority, PreemptionPolicy::kNever}) {
    if (name == PreemptionPolicyName(p)) return p;
  }
  return std::nullopt;
}

std::string_view DisruptionModeName(DisruptionMode m) {
  return m == DisruptionMode::kAll ? "all" : "single";
}

Resources PodMetrics::Usage() const {
  Resources sum;
  for (const auto& container : containers) sum.Add(container.second);
  return sum;
}

KubeletConfig KubeletConfig::Defaults() {
  // The kubelet's defaults on Linux (DefaultEvictionHard).
  KubeletConfig c;
  c.eviction_hard = {{"memory.available", 100LL << 20, std::nullopt, "100Mi"},
                     {"nodefs.available", 0, 10.0, "10%"},
                     {"imagefs.available", 0, 15.0, "15%"},
                     {"nodefs.inodesFree", 0, 5.0, "5%"}};
  return c;
}

bool IsSupportedPodLevelResource(std::string_view name) {
  return name == kResourceCpu || name == kResourceMemory || name.starts_with("hugepages-");
}

Resources EffectivePodRequests(const std::vector<ContainerRequests>& containers,
                               const Resources& overhead,
                               const std::vector<std::pair<std::string, int64_t>>& pod_level) {
  Resources app;
  for (const auto& c : containers) {
    if (!c.init) app.Add(c.requests);
  }
  // Init containers run in order; each one-shot init container runs next to the sidecars
  // (restartable init containers) started before it. Sidecars keep running with the app.
  Resources sidecars;
  Resources init_peak;
  for (const auto& c : containers) {
    if (!c.init) continue;
    if (c.restartable) {
      sidecars.Add(c.requests);
      init_peak.Max(sidecars);
    } else {
      Resources during = sidecars;
      during.Add(c.requests);
      init_peak.Max(during);
    }
  }
  Resources total = app;
  total.Add(sidecars);
  total.Max(init_peak);
  for (const auto& [name, amount] : pod_level) total.Set(name, amount);  // stands for the whole pod
  total.Add(overhead);
  return total;
}

int32_t DesiredHealthy(const PodDisruptionBudget& pdb, int64_t expected) {
  auto percent = [expected](const IntOrPercent& v) {
    if (!v.percent) return int64_t{v.value};
    return (int64_t{v.value} * expected + 99) / 100;  // rounded up
  };
  int64_t desired = 0;
  if (pdb.min_available) {
    desired = percent(*pdb.min_available);
  } else if (pdb.max_unavailable) {
    // A budget that allows more unavailable pods than it expects wants none healthy, not fewer
    // than none: otherwise a terminating pod would leave a disruption allowed that upstream
    // does not give (disruption controller, getExpectedPodCount: desiredHealthy < 0 is 0).
    desired = std::max<int64_t>(0, expected - percent(*pdb.max_unavailable));
  }
  return static_cast<int32_t>(std::clamp<int64_t>(desired, INT32_MIN, INT32_MAX));
}

int64_t AllowedDisruptions(const PodDisruptionBudget& pdb, int64_t expected, int64_t healthy) {
  return std::max<int64_t>(0, healthy - DesiredHealthy(pdb, expected));
}

}  // namespace arbiter::model
