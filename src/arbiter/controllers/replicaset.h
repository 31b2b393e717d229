// The ReplicaSet controller (kube-controller-manager's replicaset-controller): keeps
// spec.replicas active pods matching the selector, as upstream's syncReplicaSet does.
//
//   * Active pods are those neither Succeeded, Failed nor being deleted. The ReplicaSet claims
//     them (ControllerRefManager): it adopts matching orphans (adding itself as controller) and
//     releases pods it controls that no longer match; a ReplicaSet being deleted does neither.
//   * Too few: creates the difference (at most 500 a pass) in slow-start batches; too many:
//     deletes the difference, most deletable first (SortPodsToDelete, ranking by the pods of the
//     same owner's ReplicaSets on each node). Nothing is done while expectations are unmet.
//   * Status: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas (ready for
//     minReadySeconds), observedGeneration, and the ReplicaFailure condition while creating or
//     deleting fails. A ReplicaSet with pods still becoming available is looked at again when
//     they do.
//   * Events: SuccessfulCreate "Created pod: NAME", SuccessfulDelete "Deleted pod: NAME",
//     FailedCreate "Error creating: MESSAGE".
// A pod preempted or evicted is deleted and so no longer active: its replacement is created on
// the next pass, and waits to be scheduled like any pod.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "arbiter/controllers/controller.h"
#include "arbiter/controllers/pod_control.h"

namespace arbiter::controllers {

class ReplicaSetController final : public Controller {
 public:
  static constexpr int64_t kBurstReplicas = 500;

  std::string_view Name() const override { return "replicaset-controller"; }
  std::vector<std::string> Watches() const override { return {"replicasets", "pods"}; }
  Status Sync(Context& ctx, const Changes& changed) override;
  void Reset() override;

 private:
  Status SyncReplicaSet(Context& ctx, const Key& key);

  WorkQueue queue_;
  Expectations expectations_;
  std::map<Key, Key> owner_of_;  // pods last seen with a ReplicaSet as controller
};

}  // namespace arbiter::controllers
