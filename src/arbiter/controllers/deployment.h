// The Deployment controller (kube-controller-manager's deployment-controller), as upstream's
// pkg/controller/deployment does it:
//
//   * The Deployment claims ReplicaSets by selector and controller reference. The *new*
//     ReplicaSet is the one whose pod template equals the Deployment's (ignoring the
//     pod-template-hash label), created on demand as "<deployment>-<hash>" with the hash label
//     added to its template and selector; the others are *old*. Revisions
//     (deployment.kubernetes.io/revision) number them: the new one gets the highest old one + 1,
//     and a ReplicaSet brought back by `kubectl rollout undo` keeps its earlier numbers in
//     deployment.kubernetes.io/revision-history. ReplicaSets carry desired-replicas and
//     max-replicas annotations, and a copy of the Deployment's own annotations.
//   * RollingUpdate: the new ReplicaSet grows while the total stays within replicas + maxSurge;
//     old ones shrink while availability stays at least replicas - maxUnavailable (unhealthy
//     old replicas first, then oldest ReplicaSets first). Recreate: every old ReplicaSet goes to
//     0, and the new one grows only once no old pod runs.
//   * A change of replicas alone (a scaling event, told by the desired-replicas annotation)
//     scales the active ReplicaSets proportionally, leftovers to the largest. A paused Deployment
//     only scales.
//   * Status: observedGeneration, replicas, updatedReplicas, readyReplicas, availableReplicas,
//     unavailableReplicas; conditions Available (MinimumReplicasAvailable /
//     MinimumReplicasUnavailable), Progressing (NewReplicaSetCreated, FoundNewReplicaSet,
//     ReplicaSetUpdated, NewReplicaSetAvailable, ProgressDeadlineExceeded, DeploymentPaused,
//     DeploymentResumed) and ReplicaFailure, with upstream's messages; a Deployment still
//     progressing is looked at again when its progress deadline passes.
//   * Old ReplicaSets beyond revisionHistoryLimit are deleted once scaled to 0.
//   * Events: ScalingReplicaSet "Scaled up replica set NAME from A to B" (and down).
// The pod-template-hash is FNV-1a over the template's JSON, encoded as upstream encodes its own
// hash; the value differs from kube-controller-manager's (whose input is Go's printing of the
// struct) but plays the same part.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "arbiter/controllers/controller.h"

namespace arbiter::controllers {

class DeploymentController final : public Controller {
 public:
  std::string_view Name() const override { return "deployment-controller"; }
  std::vector<std::string> Watches() const override { return {"deployments", "replicasets", "pods"}; }
  Status Sync(Context& ctx, const Changes& changed) override;
  void Reset() override {
    queue_.Clear();
    recreate_pods_.clear();
  }

 private:
  struct Run;  // one reconcile of one Deployment (deployment.cc)
  WorkQueue queue_;
  std::map<Key, Key> recreate_pods_;  // pods of Recreate Deployments: pod -> Deployment
};

}  // namespace arbiter::controllers
