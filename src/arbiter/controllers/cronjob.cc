// The CronJob controller.
#include "arbiter/controllers/cronjob.h"

#include <algorithm>

#include "arbiter/controllers/cron_schedule.h"
#include "arbiter/controllers/object_json.h"

namespace arbiter::controllers {

namespace {

constexpr std::string_view kCronJobApiVersion = "batch/v1";
constexpr std::string_view kCronJobKind = "CronJob";

bool Finished(const Json& job, std::string* how) {
  const Json* status = Find(job, {"status"});
  for (const char* type : {"Complete", "Failed"}) {
    const Json* c = status != nullptr ? GetCondition(*status, type) : nullptr;
    if (c != nullptr && c->value("status", "") == "True") {
      if (how != nullptr) *how = type;
      return true;
    }
  }
  return false;
}

}  // namespace

Status CronJobController::Sync(Context& ctx, const Changes& changed) {
  const Timestamp now = ctx.now();
  for (const Key& key : changed.at("cronjobs")) queue_.Add(key, now);
  for (const Key& key : changed.at("jobs")) {
    const store::Object* job = ctx.informer("jobs").Find(key);
    const store::Body::Tree job_pinned = job != nullptr ? job->body.tree() : nullptr;
    const Json* ref = job != nullptr ? ControllerRef(*job_pinned) : nullptr;
    if (ref != nullptr && ref->value("kind", "") == kCronJobKind) queue_.Add({key.first, ref->value("name", "")}, now);
  }
  return queue_.ProcessDue(
      now, [&](const Key& key) { return SyncCronJob(ctx, key); },
      [](const Key& key) { return "cronjob " + key.first + "/" + key.second; });
}

Status CronJobController::SyncCronJob(Context& ctx, const Key& key) {
  const store::Object* object = ctx.informer("cronjobs").Find(key);
  if (object == nullptr || BeingDeleted(*object->body.tree())) return Status::Ok();
  const store::Body::Tree cj_tree = object->body.tree();
  const Json& cj = *cj_tree;
  const std::string& ns = key.first;
  const std::string component(Name());
  const Timestamp now = ctx.now();
  ApiClient& api = ctx.api();
  const api::ResourceInfo& job_info = Resource("batch", "v1", "jobs");

  // Its Jobs, and what became of them.
  std::vector<const Json*> mine;
  std::vector<store::Body::Tree> mine_trees;  // pins what `mine` points into
  const auto& jobs = ctx.informer("jobs").objects();
  for (auto it = jobs.lower_bound({ns, ""}); it != jobs.end() && it->first.first == ns; ++it) {
    const store::Body::Tree second_pinned = it->second->body.tree();
    const Json* ref = ControllerRef(*second_pinned);
    if (ref != nullptr && ref->value("uid", "") == Uid(cj)) mine.push_back(mine_trees.emplace_back(second_pinned).get());
  }
  Json status = StatusOf(cj);
  const Json before = status;
  Json active = Json::array();
  std::vector<const Json*> succeeded, failed, running;
  for (const Json* job : mine) {
    std::string how;
    if (!Finished(*job, &how)) {
      running.push_back(job);
      active.push_back({{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", NameOf(*job)}, {"namespace", ns},
                        {"uid", Uid(*job)}, {"resourceVersion", StringAt(*job, {"metadata", "resourceVersion"})}});
      continue;
    }
    (how == "Complete" ? succeeded : failed).push_back(job);
    // A Job that was active and has finished: said once.
    bool was_active = false;
    for (const Json& a : status.value("active", Json::array())) was_active = was_active || a.value("uid", "") == Uid(*job);
    if (was_active) {
      ctx.Event(cj, kCronJobKind, kCronJobApiVersion, "Normal", "SawCompletedJob",
                "Saw completed job: " + NameOf(*job) + ", condition: " + how, component);
    }
    if (how == "Complete") {
      const std::string done = StringAt(*job, {"status", "completionTime"});
      if (!done.empty() && done > status.value("lastSuccessfulTime", "")) status["lastSuccessfulTime"] = done;
    }
  }
  status["active"] = active;
  if (active.empty()) status.erase("active");

  // History limits: the oldest finished Jobs beyond them go.
  auto prune = [&](std::vector<const Json*>& done, const char* field, int64_t fallback) -> Status {
    const int64_t keep = IntAt(cj, {"spec", field}, fallback);
    std::sort(done.begin(), done.end(), [](const Json* a, const Json* b) {
      return std::make_pair(TimeAt(*a, {"metadata", "creationTimestamp"}).value_or(0), NameOf(*a)) <
             std::make_pair(TimeAt(*b, {"metadata", "creationTimestamp"}).value_or(0), NameOf(*b));
    });
    for (int64_t i = 0; i + keep < static_cast<int64_t>(done.size()); ++i) {
      const Json& job = *done[static_cast<size_t>(i)];
      auto r = api.Delete(ObjectPath(job_info, ns, NameOf(job)), {{"propagationPolicy", "Background"}});
      if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
      ctx.Event(cj, kCronJobKind, kCronJobApiVersion, "Normal", "SuccessfulDelete", "Deleted job " + NameOf(job), component);
    }
    return Status::Ok();
  };
  ARBITER_RETURN_IF_ERROR(prune(succeeded, "successfulJobsHistoryLimit", 3));
  ARBITER_RETURN_IF_ERROR(prune(failed, "failedJobsHistoryLimit", 1));

  auto write_status = [&]() -> Status {
    if (status == before) return Status::Ok();
    Json body = cj;
    body["status"] = status;
    auto r = api.Update(ObjectPath(Resource("batch", "v1", "cronjobs"), ns, key.second, "status"), body);
    if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
    return Status::Ok();
  };

  // The schedule.
  const std::string zone = StringAt(cj, {"spec", "timeZone"});
  if (!zone.empty() && zone != "UTC" && zone != "Etc/UTC") {
    ctx.Event(cj, kCronJobKind, kCronJobApiVersion, "Warning", "UnknownTimeZone",
              "invalid timeZone: \"" + zone + "\": Arbiter runs CronJobs in UTC only", component);
    return write_status();
  }
  auto schedule = CronSchedule::Parse(StringAt(cj, {"spec", "schedule"}));
  if (!schedule.ok()) {
    ctx.Event(cj, kCronJobKind, kCronJobApiVersion, "Warning", "InvalidSchedule",
              "invalid schedule: " + StringAt(cj, {"spec", "schedule"}) + " : " + schedule.status().message(), component);
    return write_status();
  }
  // The latest scheduled time not yet run: after the last one (or the CronJob's creation).
  const Timestamp from = TimeAt(status, {"lastScheduleTime"}).value_or(TimeAt(cj, {"metadata", "creationTimestamp"}).value_or(now));
  std::optional<Timestamp> due;
  int missed = 0;
  for (std::optional<Timestamp> t = schedule->Next(from); t && *t <= now && missed <= 100; t = schedule->Next(*t)) {
    due = t;
    ++missed;
  }
  if (missed > 100) {
    ctx.Event(cj, kCronJobKind, kCronJobApiVersion, "Warning", "TooManyMissedTimes",
              "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew", component);
  }
  if (auto next = schedule->Next(due.value_or(now))) queue_.AddAfter(key, *next);
  if (!due || BoolAt(cj, {"spec", "suspend"}, false)) return write_status();
  if (const Json* deadline = Find(cj, {"spec", "startingDeadlineSeconds"});
      deadline != nullptr && deadline->is_number_integer() && *due + deadline->get<int64_t>() * kSecond < now) {
    return write_status();  // too late to start this run
  }
  const std::string policy = StringAt(cj, {"spec", "concurrencyPolicy"});
  if (policy == "Forbid" && !running.empty()) {
    ctx.Event(cj, kCronJobKind, kCronJobApiVersion, "Normal", "JobAlreadyActive",
              "Not starting job because prior execution is running and concurrency policy is Forbid", component);
    return write_status();
  }
  if (policy == "Replace") {
    for (const Json* job : running) {
      auto r = api.Delete(ObjectPath(job_info, ns, NameOf(*job)), {{"propagationPolicy", "Background"}});
      if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
      ctx.Event(cj, kCronJobKind, kCronJobApiVersion, "Normal", "SuccessfulDelete", "Deleted job " + NameOf(*job), component);
    }
    status.erase("active");
  }
  const std::string job_name = key.second + "-" + std::to_string(*due / kMinute);
  const Json* tmpl = Find(cj, {"spec", "jobTemplate"});
  Json job = {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", Json::object()}, {"spec", Json::object()}};
  if (tmpl != nullptr) {
    for (const char* k : {"labels", "annotations"}) {
      if (const Json* v = Find(*tmpl, {"metadata", k}); v != nullptr) job["metadata"][k] = *v;
    }
    if (const Json* spec = Find(*tmpl, {"spec"}); spec != nullptr) job["spec"] = *spec;
  }
  job["metadata"]["name"] = job_name;
  job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] = FormatRfc3339(*due);
  job["metadata"]["ownerReferences"] = Json::array({NewControllerRef(cj, kCronJobApiVersion, kCronJobKind)});
  auto created = api.Create(CollectionPath(job_info, ns), job);
  if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) {
    ctx.Event(cj, kCronJobKind, kCronJobApiVersion, "Warning", "FailedCreate", "Error creating job: " + created.status().message(), component);
    return created.status();
  }
  if (created.ok()) {
    ctx.Event(cj, kCronJobKind, kCronJobApiVersion, "Normal", "SuccessfulCreate", "Created job " + job_name, component);
    status["active"].push_back({{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", job_name}, {"namespace", ns},
                                {"uid", Uid(*created)}, {"resourceVersion", StringAt(*created, {"metadata", "resourceVersion"})}});
  }
  status["lastScheduleTime"] = FormatRfc3339(*due);
  return write_status();
}

}  // namespace arbiter::controllers
