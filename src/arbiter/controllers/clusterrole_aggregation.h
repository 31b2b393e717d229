// ClusterRole aggregation (kube-controller-manager's clusterrole-aggregation controller): every
// ClusterRole with an aggregationRule has its rules replaced by those its selectors gather from
// the other ClusterRoles (api::AggregatedRules: each selector in order, the matching roles in
// name order, each rule once), so `kubectl get clusterrole edit -o yaml` shows what the role
// grants. Any change to a ClusterRole requeues every aggregated one; a role gathered from another
// aggregated role (view into edit into admin) settles over successive passes, as upstream's does.
// The authorizer does not wait for this: it follows aggregation at every decision.
#pragma once

#include <string>
#include <vector>

#include "arbiter/controllers/controller.h"

namespace arbiter::controllers {

class ClusterRoleAggregationController final : public Controller {
 public:
  std::string_view Name() const override { return "clusterrole-aggregation-controller"; }
  std::vector<std::string> Watches() const override { return {"clusterroles"}; }
  Status Sync(Context& ctx, const Changes& changed) override;
  void Reset() override { queue_.Clear(); }

 private:
  WorkQueue queue_;
};

}  // namespace arbiter::controllers
