// Node-pressure eviction as the kubelet does it: when a node's available memory (or ephemeral
// storage) falls below a hard threshold of its KubeletConfiguration, the kubelet evicts pods,
// ranked for the starved resource (pkg/kubelet/eviction, rankMemoryPressure and
// rankDiskPressureFunc):
//   1. pods whose usage of the resource exceeds their request, before pods within it;
//   2. then lower priority first;
//   3. then the larger usage above the request first;
// (ties: namespace/name, so that the order is deterministic), until the signal is back at or
// above the threshold. A lower-priority pod within its requests can so outlive a
// higher-priority pod that exceeds them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "arbiter/model/objects.h"

namespace arbiter::kubelet {

struct Eviction {
  std::string pod;      // namespace/name
  std::string node;
  std::string signal;   // memory.available, nodefs.available
  std::string message;  // the kubelet's, e.g. "The node was low on resource: memory. Threshold quantity: ..."
};

// The resource a signal starves ("memory", "ephemeral-storage"), or "" for signals Arbiter has
// no usage figures for (inodes, image filesystem, PIDs).
std::string ResourceOfSignal(const std::string& signal);

// The pods the kubelet of `node` evicts, in eviction order. `pods` are the pods running there;
// `usage` maps namespace/name to the pod's metrics (pods without metrics use nothing).
std::vector<Eviction> NodePressureEvictions(const model::Node& node, const std::vector<const model::Pod*>& pods,
                                            const std::map<std::string, const model::PodMetrics*>& usage,
                                            const model::KubeletConfig& config);

}  // namespace arbiter::kubelet
