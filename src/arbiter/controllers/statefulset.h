// The StatefulSet controller (kube-controller-manager's statefulset-controller), as upstream's
// pkg/controller/statefulset does it:
//
//   * Pods have stable names, "<set>-<ordinal>" for ordinals spec.ordinals.start (0) onwards,
//     hostname = the pod's name and subdomain = spec.serviceName, the labels
//     statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index and
//     controller-revision-hash, and a controller reference.
//   * volumeClaimTemplates: each pod gets the claims "<template>-<pod>" (made before the pod,
//     kept after it: the default Retain policy), mounted as the template's volume.
//   * podManagementPolicy OrderedReady: pods are created in ordinal order, each only once the
//     ones before it are Running and Ready, and removed highest ordinal first, one at a time;
//     Parallel: all at once. A Failed or Succeeded pod is deleted and made again.
//   * Revisions: the template's hash names a ControllerRevision "<set>-<hash>" (revision numbers
//     counting up); RollingUpdate replaces the pods at or above the partition whose revision is
//     not the update revision, highest ordinal first, one at a time and only while the rest are
//     Ready; OnDelete leaves that to the user.
//   * Status: replicas, readyReplicas, availableReplicas, currentReplicas, updatedReplicas,
//     currentRevision, updateRevision, observedGeneration. Events: SuccessfulCreate
//     "create Pod NAME in StatefulSet SET successful", SuccessfulDelete, and for claims
//     "create Claim NAME Pod POD in StatefulSet SET success".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "arbiter/controllers/controller.h"

namespace arbiter::controllers {

class StatefulSetController final : public Controller {
 public:
  std::string_view Name() const override { return "statefulset-controller"; }
  std::vector<std::string> Watches() const override {
    return {"statefulsets", "pods", "controllerrevisions", "persistentvolumeclaims"};
  }
  Status Sync(Context& ctx, const Changes& changed) override;
  void Reset() override {
    queue_.Clear();
    owner_of_.clear();
  }

 private:
  Status SyncSet(Context& ctx, const Key& key);
  WorkQueue queue_;
  std::map<Key, Key> owner_of_;  // pods -> their StatefulSet
};

}  // namespace arbiter::controllers
