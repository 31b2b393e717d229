// Taint-based eviction (kube-controller-manager's taint-eviction-controller, once the
// NoExecuteTaintManager): a pod on a node with a NoExecute taint it does not tolerate is evicted
// at once; one whose tolerations of the node's NoExecute taints all give tolerationSeconds is
// evicted that long after the controller first saw it so (the smallest of them; 0 or less: at
// once); a toleration without tolerationSeconds keeps it for good. A taint removed in time, or
// a toleration added, cancels the eviction. An eviction marks the pod with condition
// DisruptionTarget (reason DeletionByTaintManager), records the event TaintManagerEviction
// "Marking for deletion Pod NS/NAME", and deletes it gracefully. Toleration matching is the
// scheduler's own (model::TolerationsTolerate).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "arbiter/controllers/controller.h"

namespace arbiter::controllers {

class TaintEvictionController final : public Controller {
 public:
  std::string_view Name() const override { return "taint-eviction-controller"; }
  std::vector<std::string> Watches() const override { return {"pods", "nodes"}; }
  // Evaluates the pods that changed, and the pods of each node whose NoExecute taints changed
  // (found through an index of pods by node kept from the pods' changes): a node's other changes
  // (its status reports) leave every decision as it was, so they are not looked at.
  Status Sync(Context& ctx, const Changes& changed) override;
  void Reset() override {
    queue_.Clear();
    due_.clear();
    on_node_.Clear();
    no_execute_.clear();
  }

 private:
  // Decides for one pod: nothing, evict now, or evict at a time.
  void Evaluate(Context& ctx, const Key& pod);
  Status Evict(Context& ctx, const Key& pod);

  WorkQueue queue_;                // pods due for eviction
  std::map<Key, Timestamp> due_;   // their eviction times
  KeysByGroup<Key> on_node_;                       // pods by the node they are bound to
  std::map<std::string, std::string> no_execute_;  // nodes with NoExecute taints: them, as text
};

}  // namespace arbiter::controllers
