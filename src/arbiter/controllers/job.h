// The Job controller (kube-controller-manager's job-controller), as upstream's
// pkg/controller/job does it for batch/v1 Jobs:
//
//   * Pods come from the template with the Job's generated labels, the finalizer
//     batch.kubernetes.io/job-tracking and a controller reference; in Indexed mode each carries
//     its completion index (annotation and label batch.kubernetes.io/job-completion-index, env
//     JOB_COMPLETION_INDEX) and is named "<job>-<index>-<random>".
//   * Active pods are kept at min(parallelism, what remains to complete). With
//     podReplacementPolicy Failed (the default when a podFailurePolicy is set) a terminating pod
//     is replaced only once it has failed; with TerminatingOrFailed at once. After a counted
//     failure, new pods wait 10 s × 2^(failures-1), at most 6 minutes.
//   * Finished pods are counted through status.uncountedTerminatedPods before their tracking
//     finalizer is removed, so no pod is lost or counted twice.
//   * A failed pod is matched against podFailurePolicy's rules in order (onExitCodes: a container
//     that exited non-zero with a code In / NotIn the values; onPodConditions: a condition of that
//     type and status): Ignore does not count it against backoffLimit (a pod preempted by the
//     scheduler carries DisruptionTarget, which is what users match); FailJob fails the Job;
//     Count, and no match, count it.
//   * The Job completes when enough pods succeeded (every index, in Indexed mode), and fails on
//     backoffLimit, activeDeadlineSeconds or a FailJob rule; its remaining pods are deleted, the
//     SuccessCriteriaMet / FailureTarget condition is set at once and Complete / Failed once no
//     pod is terminating. A suspended Job deletes its pods (condition Suspended).
//   * Status: active, ready, terminating, succeeded, failed, startTime, completionTime,
//     completedIndexes, uncountedTerminatedPods, conditions. Events: SuccessfulCreate,
//     SuccessfulDelete, Completed, BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "arbiter/controllers/controller.h"
#include "arbiter/controllers/pod_control.h"

namespace arbiter::controllers {

class JobController final : public Controller {
 public:
  static constexpr int64_t kBurstReplicas = 500;
  static constexpr Duration kBackoffBase = 10 * kSecond;
  static constexpr Duration kBackoffMax = 6 * kMinute;

  std::string_view Name() const override { return "job-controller"; }
  std::vector<std::string> Watches() const override { return {"jobs", "pods"}; }
  Status Sync(Context& ctx, const Changes& changed) override;
  void Reset() override;

 private:
  Status SyncJob(Context& ctx, const Key& key);

  WorkQueue queue_;
  Expectations expectations_;
  std::map<Key, Key> owner_of_;  // pods last seen with a Job as controller
};

}  // namespace arbiter::controllers
