// The CronJob controller (kube-controller-manager's cronjob-controller, v2):
//   * at each scheduled time (cron_schedule.h; spec.timeZone UTC or unset) a Job is made from
//     jobTemplate, named "<cronjob>-<scheduled time in minutes since the epoch>", with the
//     annotation batch.kubernetes.io/cronjob-scheduled-timestamp and a controller reference;
//   * a time missed by more than startingDeadlineSeconds is skipped; of many missed times only
//     the latest runs (more than 100: the TooManyMissedTimes warning);
//   * concurrencyPolicy Allow, Forbid (skip while a Job runs) or Replace (delete the running
//     ones first); suspend stops new runs;
//   * status.active lists the running Jobs; lastScheduleTime, lastSuccessfulTime; finished Jobs
//     beyond successfulJobsHistoryLimit (3) and failedJobsHistoryLimit (1) are deleted, oldest
//     first. Events: SuccessfulCreate "Created job NAME", SawCompletedJob, SuccessfulDelete,
//     JobAlreadyActive, UnknownTimeZone, InvalidSchedule.
#pragma once

#include <string>
#include <vector>

#include "arbiter/controllers/controller.h"

namespace arbiter::controllers {

class CronJobController final : public Controller {
 public:
  std::string_view Name() const override { return "cronjob-controller"; }
  std::vector<std::string> Watches() const override { return {"cronjobs", "jobs"}; }
  Status Sync(Context& ctx, const Changes& changed) override;
  void Reset() override { queue_.Clear(); }

 private:
  Status SyncCronJob(Context& ctx, const Key& key);
  WorkQueue queue_;
};

}  // namespace arbiter::controllers
