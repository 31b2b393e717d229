// The namespace controller (kube-controller-manager's namespace-controller): a namespace being
// deleted (phase Terminating) is emptied — every object of every namespaced resource in it is
// deleted (in the background: the garbage collector takes their dependents, pods terminate
// gracefully on their nodes) — and, once nothing is left, finalized: "kubernetes" leaves its
// spec.finalizers, and the API deletes it. Until then it is looked at again every few seconds,
// as upstream estimates the time its content needs to go.
#pragma once

#include <string>
#include <vector>

#include "arbiter/controllers/controller.h"

namespace arbiter::controllers {

class NamespaceController final : public Controller {
 public:
  static constexpr Duration kRecheck = 2 * kSecond;

  std::string_view Name() const override { return "namespace-controller"; }
  std::vector<std::string> Watches() const override { return {"namespaces"}; }
  Status Sync(Context& ctx, const Changes& changed) override;
  void Reset() override { queue_.Clear(); }

 private:
  Status Finalize(Context& ctx, const Key& key);
  WorkQueue queue_;
};

}  // namespace arbiter::controllers
