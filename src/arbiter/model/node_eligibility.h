// Whether a pod may run on a node at all, as its own spec says: the rules the NodeAffinity and
// TaintToleration filters apply, and the daemon controller's NodeShouldRunDaemonPod with them.
#pragma once

#include "arbiter/model/objects.h"

namespace arbiter::model {

// True if the node matches the pod's nodeSelector and required node affinity
// (component-helpers nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)).
bool MatchesRequiredNodeAffinity(const Pod& pod, const Node& node);

// True if every NoSchedule / NoExecute taint of the node is tolerated by the pod.
bool ToleratesNoScheduleTaints(const Pod& pod, const Node& node);

}  // namespace arbiter::model
