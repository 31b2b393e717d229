// The node lifecycle controller (kube-controller-manager's node-lifecycle-controller), for the
// part a simulated cluster needs: every 5 s (nodeMonitorPeriod) each node's health is read from
// its Lease in kube-node-lease (renewTime, as observed on this controller's own clock) and its
// Ready condition:
//   * a node whose Lease has not been renewed for the grace period (50 s,
//     --node-monitor-grace-period's default from v1.32) is unreachable: its conditions become
//     Unknown (reason NodeStatusUnknown, "Kubelet stopped posting node status.") and it gets the
//     node.kubernetes.io/unreachable taints, NoSchedule and NoExecute;
//   * a node that reports Ready False gets the node.kubernetes.io/not-ready taints;
//   * a node that is healthy again loses them.
// The NoExecute taints evict through the taint eviction controller: pods tolerate them for 300 s
// by default (DefaultTolerationSeconds admission). `kubectl annotate node NAME
// arbiter.dev/stopped=true` switches a simulated node off.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "arbiter/controllers/controller.h"

namespace arbiter::controllers {

class NodeLifecycleController final : public Controller {
 public:
  static constexpr Duration kMonitorPeriod = 5 * kSecond;
  static constexpr Duration kGracePeriod = 50 * kSecond;

  std::string_view Name() const override { return "node-lifecycle-controller"; }
  std::vector<std::string> Watches() const override { return {"nodes", "leases"}; }
  // Follows the nodes and Leases that changed on every pass (reading only their bodies), so that
  // the check every 5 s reads the body of a node only when it acts on it.
  Status Sync(Context& ctx, const Changes& changed) override;
  void Reset() override {
    next_ = 0;
    seen_.clear();
    health_.clear();
    renewed_.clear();
  }

 private:
  // What the check needs of a node, from the version the informer last delivered.
  struct Health {
    std::string ready;  // its Ready condition's status ("" without one)
    // Its taints of the two keys this controller owns: (key, whether the effect is NoExecute).
    std::vector<std::pair<std::string, bool>> owned_taints;
  };
  Timestamp next_ = 0;
  std::map<std::string, std::pair<std::string, Timestamp>> seen_;  // node -> (renewTime, seen at)
  std::map<std::string, Health> health_;                           // by node
  std::map<std::string, std::string> renewed_;                     // node -> its Lease's renewTime
};

}  // namespace arbiter::controllers
