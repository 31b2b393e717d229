// Pod garbage collection (kube-controller-manager's pod-garbage-collector), every 20 seconds as
// upstream's gcCheckPeriod:
//   * orphaned pods: a pod bound to a node that does not exist, for at least the 40 s quarantine
//     (confirmed by a read through the API), is marked Failed with condition DisruptionTarget
//     (reason DeletionByPodGC, "PodGC: node no longer exists") and deleted at once;
//   * unscheduled terminating pods: a pod being deleted that no node holds is deleted at once;
//   * terminated pods beyond the threshold (--terminated-pod-gc-threshold, 12,500 by default):
//     the oldest Succeeded and Failed pods are deleted.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "arbiter/controllers/controller.h"

namespace arbiter::controllers {

class PodGarbageCollector final : public Controller {
 public:
  static constexpr Duration kCheckPeriod = 20 * kSecond;
  static constexpr Duration kQuarantine = 40 * kSecond;

  explicit PodGarbageCollector(int64_t terminated_threshold = 12500) : threshold_(terminated_threshold) {}
  std::string_view Name() const override { return "pod-garbage-collector"; }
  std::vector<std::string> Watches() const override { return {"pods", "nodes"}; }
  // Follows the pods that changed on every pass (reading only their bodies), so that the check
  // every 20 s walks what it keeps, not every pod's body.
  Status Sync(Context& ctx, const Changes& changed) override;
  void Reset() override {
    next_ = 0;
    missing_since_.clear();
    by_node_.Clear();
    unscheduled_terminating_.clear();
    terminated_.clear();
    terminated_at_.clear();
  }

 private:
  // Brings what is kept of one pod in line with the version the informer delivered (nullptr: gone).
  void Observe(const Key& key, const store::Object* pod);

  int64_t threshold_;
  Timestamp next_ = 0;
  std::map<std::string, Timestamp> missing_since_;  // nodes pods are bound to, absent since
  KeysByGroup<Key> by_node_;                        // pods by the node they are bound to
  std::set<Key> unscheduled_terminating_;           // being deleted, bound to no node
  // Succeeded and Failed pods, oldest first: by metadata.creationTimestamp (0 when unreadable, as
  // upstream's zero time sorts first), then key.
  std::set<std::pair<Timestamp, Key>> terminated_;
  std::map<Key, Timestamp> terminated_at_;  // their creation times, to find them again
};

}  // namespace arbiter::controllers
