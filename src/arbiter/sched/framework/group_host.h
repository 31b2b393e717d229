// What a pod group's scheduling cycle produces, and what workload-aware preemption needs from
// the scheduler to rerun it (docs/upstream-rules.md Part B §3 and §4).
//
// A group cycle places the members of a root group one by one on one snapshot: each placed pod
// is assumed (added to the snapshot) and reserved, so later members see it. PlaceGroup returns,
// for every placed member in scheduling order, its node and its CycleState (which was built with
// the earlier members in place and knows nothing of later ones), and for every member that did
// not fit, why. It never preempts and never binds.
#pragma once

#include <string>
#include <vector>

#include "arbiter/sched/framework/fit_error.h"
#include "arbiter/sched/framework/interfaces.h"

namespace arbiter::sched {

struct PlacedPod {
  PodInfoPtr pod;        // the pending pod (node_name unset)
  std::string node;
  CycleState state;
  // The pod as assumed on `node` (node set, nomination cleared, started now): what binding adds
  // to the cache, so the pod is copied once per placement.
  PodInfoPtr assumed;
};

struct UnplacedPod {
  PodInfoPtr pod;
  std::string message;   // the FailedScheduling message of its attempt
  std::set<std::string> unschedulable_plugins;
  bool resolvable = true;  // false: no node failed it with a plain Unschedulable (preemption cannot help)
};

struct GroupPlacement {
  std::vector<PlacedPod> placed;
  std::vector<UnplacedPod> unplaced;
  // Every gang in the hierarchy reaches its quorum with the placed pods and the members already
  // running (PlacementFeasible).
  bool feasible = false;
  // Why it is not feasible, for messages ("2 of the 3 pods that minCount requires ...").
  std::string reason;
};

// What a PodGroupPostFilter plugin decided for a group that could not be placed.
struct GroupPostFilterResult {
  bool preempted = false;  // victims evicted; `nominations` set
  bool waiting = false;    // an earlier preemption is still in progress; nominations kept
  std::string message;     // for FailedScheduling and the group's condition
  std::vector<std::pair<PodInfoPtr, std::string>> nominations;  // placed pod -> node
  std::vector<std::string> explanation;                          // for --explain
};

// The extension point that replaces PostFilter inside a pod group cycle: it runs once for the
// whole group (the root of its hierarchy), with the pending members in scheduling order.
class PodGroupPostFilterPlugin : public virtual Plugin {
 public:
  virtual GroupPostFilterResult PodGroupPostFilter(const state::GroupNode& root,
                                                   const std::vector<PodInfoPtr>& pods) = 0;
};

class GroupHost : public Handle {
 public:
  // Places `pods` (pending members of the hierarchy under `root`, in scheduling order) on the
  // current snapshot, assuming each placed pod into it. The snapshot keeps the assumed pods until
  // RestoreSnapshot.
  virtual GroupPlacement PlaceGroup(const state::GroupNode& root, const std::vector<PodInfoPtr>& pods) = 0;
  // The cycle's snapshot, for private changes (potential victims removed, pods re-added).
  virtual state::Snapshot& mutable_snapshot() = 0;
  // Undoes every private change to the snapshot (it matches the cache again).
  virtual void RestoreSnapshot() = 0;
};

}  // namespace arbiter::sched
