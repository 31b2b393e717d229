// PdbStatusTracker: CurrentPdbViews' answer kept up to date as pods come, go, bind, terminate
// and are evicted, so that asking for the budgets costs one step per budget rather than a pass
// over every pod of the cluster with a label match per budget (the rule stays CurrentPdbViews;
// this is its incremental form, and RecountedViews recomputes it the slow way to check it).
//
// What it is told, by whom:
//   * the actuator's pods (every pod it knows, pending ones included: the "expected" pods):
//     Know / Forget;
//   * the scheduler cache's bound pods (healthy = bound and not terminating): BoundChanged,
//     attached to ClusterCache::SetBoundPodObserver so that no change of the cache is missed;
//   * the pods the actuator evicted ("namespace/name"): Evicted.
// A pod's budgets (same namespace, a non-empty selector matching its labels) are found once,
// when it becomes known, and again only when its labels or the budgets change.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "arbiter/model/objects.h"
#include "arbiter/sched/preemption/disruption.h"

namespace arbiter::sched::preemption {

class PdbStatusTracker {
 public:
  // Replaces the budgets (every known pod is matched again). A replaced status was counted
  // without the evicted pods that are gone since, so they stop counting against it.
  void SetBudgets(std::vector<model::PodDisruptionBudget> pdbs);
  void AddBudget(model::PodDisruptionBudget pdb);
  bool empty() const { return pdbs_.empty(); }

  // The actuator knows `pod` (added, or replaced by UID).
  void Know(const model::Pod& pod);
  // The pod is gone. One that was evicted keeps counting against the budgets' status (which was
  // counted while it ran) until SetBudgets.
  void Forget(const std::string& uid);
  // The cache's copy of a bound pod changed: `before` and `after` are null when it was not,
  // or is no longer, bound.
  void BoundChanged(const model::Pod* before, const model::Pod* after);
  // The actuator evicted the pod "namespace/name".
  void Evicted(const std::string& key);
  bool WasEvicted(const std::string& key) const { return evicted_.count(key) > 0; }

  // The budgets now, as CurrentPdbViews would give them.
  std::vector<PdbView> Views() const;
  // The same, recounted with CurrentPdbViews from every known pod (or from `known_pods`, the
  // actuator's own list, which checks what it told too), `bound` giving the cache's copy of a pod
  // (or null): the reference the tracker is checked against.
  std::vector<PdbView> RecountedViews(const std::function<const model::Pod*(const std::string& uid)>& bound,
                                      const std::vector<const model::Pod*>* known_pods = nullptr) const;

  // Debug builds (NDEBUG unset, as in the sanitizer tests): aborts with a message when Views()
  // and RecountedViews disagree. Release builds: nothing.
  void CheckAgainstRecount(const std::function<const model::Pod*(const std::string& uid)>& bound,
                           const std::vector<const model::Pod*>* known_pods = nullptr) const;

  // Forgets every pod (known or bound), keeping the budgets and the evictions: for an actuator
  // that rebuilds its scheduler and tells everything again.
  void ForgetPods();

 private:
  struct Match {
    uint32_t pdb;
    bool disrupted;  // in that budget's status.disruptedPods: counts for nothing but "expected"
  };
  struct Entry {
    bool known = false;
    std::string ns, name;   // of the known pod
    model::LabelMap labels;  // of the known pod: they decide the matches
    bool healthy = false;    // bound in the cache and not terminating
    std::vector<Match> matches;
    std::string Key() const { return ns + "/" + name; }
  };
  struct Counts {
    int64_t expected = 0, healthy = 0, evicted = 0;
  };

  struct GonePod {
    std::string ns, name;
    model::LabelMap labels;
  };
  void Apply(const Entry& e, int sign);
  void ApplyGone(const GonePod& g, int sign);
  void MatchAll(Entry& e) const;
  void Recount();
  void Unindex(const std::string& key, const std::string& uid);

  std::vector<model::PodDisruptionBudget> pdbs_;
  uint64_t version_ = 1;  // PdbView::budgets_version: bumped whenever the budgets are replaced
  std::vector<std::set<std::string, std::less<>>> disrupted_;  // per budget, its disruptedPods
  std::vector<Counts> counts_;
  std::unordered_map<std::string, Entry> entries_;            // by UID; lookup only, never iterated for a decision
  std::map<std::string, std::set<std::string>> uids_by_key_;  // "namespace/name" -> known UIDs
  std::set<std::string> evicted_;
  std::map<std::string, GonePod> gone_evicted_;  // by "namespace/name": evicted, then forgotten
};

}  // namespace arbiter::sched::preemption
