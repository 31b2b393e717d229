// The disruption controller (kube-controller-manager's disruption-controller): keeps each
// PodDisruptionBudget's status, which preemption and eviction read, as upstream computes it:
//
//   * expectedPods: with an integer minAvailable, the pods the selector matches; with
//     maxUnavailable or a percentage, the replicas their controllers ask for (a ReplicaSet's, or
//     its Deployment's; a StatefulSet's). A matching pod without such a controller makes the
//     budget fail safe: no disruption allowed, condition DisruptionAllowed False / SyncFailed.
//   * desiredHealthy (model::DesiredHealthy, the rule the scheduler's fallback shares),
//     currentHealthy (Ready pods not being deleted and not already disrupted),
//     disruptionsAllowed = max(currentHealthy - desiredHealthy, 0), observedGeneration.
//   * disruptedPods entries (written by evictions) are dropped once their pod is gone or being
//     deleted, or after 2 minutes.
//   * Condition DisruptionAllowed: True / SufficientPods, or False / InsufficientPods.
#pragma once

#include <string>
#include <vector>

#include "arbiter/controllers/controller.h"

namespace arbiter::controllers {

class DisruptionController final : public Controller {
 public:
  static constexpr Duration kDisruptedPodTimeout = 2 * kMinute;

  std::string_view Name() const override { return "disruption-controller"; }
  std::vector<std::string> Watches() const override {
    return {"poddisruptionbudgets", "pods", "replicasets", "deployments", "statefulsets"};
  }
  Status Sync(Context& ctx, const Changes& changed) override;
  void Reset() override { queue_.Clear(); }

 private:
  Status SyncBudget(Context& ctx, const Key& key);
  WorkQueue queue_;
};

}  // namespace arbiter::controllers
