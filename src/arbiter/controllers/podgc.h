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
    facts_.clear();
    by_node_.clear();
    unscheduled_terminating_.clear();
    terminated_.clear();
  }

 private:
  // What the check needs of a pod, from the version the informer last delivered.
  struct PodFacts {
    std::string node;  // spec.nodeName
    bool terminal = false;
    bool being_deleted = false;
    Timestamp created = 0;  // metadata.creationTimestamp (0 when unreadable, as upstream's zero time sorts first)
  };
  void Observe(const Key& key, const store::Object* pod);

  int64_t threshold_;
  Timestamp next_ = 0;
  std::map<std::string, Timestamp> missing_since_;  // nodes pods are bound to, absent since
  std::map<Key, PodFacts> facts_;
  std::map<std::string, std::set<Key>> by_node_;   // pods bound to each node
  std::set<Key> unscheduled_terminating_;          // being deleted, bound to no node
  std::set<std::pair<Timestamp, Key>> terminated_;  // Succeeded and Failed, oldest first
};

}  // namespace arbiter::controllers
