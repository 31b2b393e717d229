// What the replicating controllers share (ReplicaSet here; StatefulSet and Job build on it):
//   * expectations (upstream's ControllerExpectations): how many creations and which deletions a
//     controller has asked for and not yet seen in its informer, so that it does not act twice
//     on a stale view; they expire after 5 minutes;
//   * pods from a template (GetPodFromTemplate, workload_objects.h);
//   * the order in which a scale-down picks pods (ActivePodsWithRanks, with LogarithmicScaleDown
//     and PodDeletionCost, both on by default upstream);
//   * slow-start batches (slowStartBatch): creations go in batches of 1, 2, 4, ... and stop at
//     the first batch with an error, so a controller that cannot create pods fails fast.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "arbiter/base/time.h"
#include "arbiter/controllers/controller.h"
#include "arbiter/controllers/workload_objects.h"
#include "arbiter/model/labels.h"

namespace arbiter::controllers {

class Expectations {
 public:
  static constexpr Duration kTimeout = 5 * kMinute;

  // The controller of `key` is about to create `adds` pods and delete the pods `deletes`.
  void Expect(const Key& key, int64_t adds, const std::set<Key>& deletes, Timestamp now);
  void CreationObserved(const Key& key);
  // `pod` was seen gone or terminating.
  void DeletionObserved(const Key& key, const Key& pod);
  // Nothing expected (or the expectations expired): the controller may act on what it sees.
  bool Satisfied(const Key& key, Timestamp now) const;
  void Forget(const Key& key) { by_key_.erase(key); }
  void Clear() { by_key_.clear(); }

 private:
  struct Entry {
    int64_t adds = 0;
    std::set<Key> deletes;
    Timestamp at = 0;
  };
  std::map<Key, Entry> by_key_;
};

// ControllerRefManager's claim: walks the objects of `informer` in `ns` that `consider` accepts
// and hands `own` each one `owner` controls and `selector` selects (after adopting it: the stored
// copy). Orphans that match are adopted (a controller reference added, conditional on the
// revision read) unless the owner or the orphan is being deleted; objects the owner controls but
// no longer selects are released (the reference removed) unless the owner is being deleted.
// Returns the first write error; the walk goes on past it.
Status ClaimObjects(ApiClient& api, const api::ResourceInfo& info, const store::Informer& informer,
                    const std::string& ns, const Json& owner, std::string_view owner_api_version,
                    std::string_view owner_kind, const std::optional<model::LabelSelector>& selector,
                    const std::function<bool(const Json&)>& consider, const std::function<void(const Json&)>& own);

// Follows the pods of one kind of owner through their changes (`changed`, read in `pods`): a
// pod's owner (by its controller reference of `owner_kind`) is woken in `queue`, its expectations
// learn of creations and deletions, and `owner_of` remembers each pod's owner so that a pod that
// is gone, released or taken by another controller still wakes the owner it had. Returns the
// active pods without any controller (orphans an owner may adopt).
std::vector<Key> FollowOwnedPods(const std::set<Key>& changed, const store::Informer& pods, std::string_view owner_kind,
                                 std::map<Key, Key>& owner_of, Expectations& expectations, WorkQueue& queue,
                                 Timestamp now);

// Orders `pods` (indices into `objects`) most deletable first: unassigned, then by phase
// (Pending < Unknown < Running), not ready, lower controller.kubernetes.io/pod-deletion-cost,
// more of the owner's related pods on the same node (`rank`), ready for less time and created
// later (both on a logarithmic scale of age at `now`), more container restarts; then by uid, so
// that the order is total.
void SortPodsToDelete(std::vector<const Json*>& pods, const std::map<std::string, int64_t>& pods_per_node,
                      Timestamp now);

// Runs `create(i)` for i in [0, count) in batches of 1, 2, 4, ... while every call of a batch
// succeeds. Returns how many were created and the first error.
std::pair<int64_t, Status> SlowStartBatch(int64_t count, const std::function<Status(int64_t)>& create);

}  // namespace arbiter::controllers
