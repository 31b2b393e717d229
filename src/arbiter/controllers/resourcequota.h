// The resource quota controller (kube-controller-manager's resourcequota-controller): each
// ResourceQuota's status carries its hard limits and what its namespace uses of the resources
// Arbiter tracks (pods, count/pods, requests.cpu, requests.memory), counted by the rule quota
// admission enforces (api::QuotaUsage): the pods not yet finished that its PriorityClass scope
// selects.
#pragma once

#include <string>
#include <vector>

#include "arbiter/controllers/controller.h"

namespace arbiter::controllers {

class ResourceQuotaController final : public Controller {
 public:
  std::string_view Name() const override { return "resourcequota-controller"; }
  std::vector<std::string> Watches() const override { return {"resourcequotas", "pods"}; }
  Status Sync(Context& ctx, const Changes& changed) override;
  void Reset() override { queue_.Clear(); }

 private:
  Status SyncQuota(Context& ctx, const Key& key);
  WorkQueue queue_;
};

}  // namespace arbiter::controllers
