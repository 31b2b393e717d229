// The Job controller.
#include "arbiter/controllers/job.h"

#include <algorithm>
#include <deque>
#include <set>

#include "arbiter/controllers/object_json.h"

namespace arbiter::controllers {

namespace {


bool HasTracking(const Json& pod) {
  const Json* f = Find(pod, {"metadata", "finalizers"});
  return f != nullptr && f->is_array() && std::find(f->begin(), f->end(), Json(kJobTrackingFinalizer)) != f->end();
}

std::optional<int64_t> IndexOf(const Json& pod) {
  const std::string v = StringAt(pod, {"metadata", "annotations", kJobCompletionIndex});
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  const long long i = std::strtoll(v.c_str(), &end, 10);
  if (end == nullptr || *end != '\0' || i < 0) return std::nullopt;
  return i;
}

// "0-2,4,6-7": the succeeded indexes as upstream writes completedIndexes.
std::string IndexRanges(const std::set<int64_t>& indexes) {
  std::string out;
  for (auto it = indexes.begin(); it != indexes.end();) {
    int64_t first = *it, last = *it;
    for (++it; it != indexes.end() && *it == last + 1; ++it) last = *it;
    out += (out.empty() ? "" : ",") + std::to_string(first) + (last > first ? "-" + std::to_string(last) : "");
  }
  return out;
}

std::set<int64_t> ParseIndexRanges(const std::string& text) {
  std::set<int64_t> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    const std::string part = text.substr(at, comma - at);
    const size_t dash = part.find('-');
    const int64_t a = std::strtoll(part.c_str(), nullptr, 10);
    const int64_t b = dash == std::string::npos ? a : std::strtoll(part.c_str() + dash + 1, nullptr, 10);
    for (int64_t i = a; i <= b && i - a < 1000000; ++i) out.insert(i);
    at = comma + 1;
  }
  return out;
}

bool ConditionTrue(const Json& job, std::string_view type) {
  const Json* status = Find(job, {"status"});
  const Json* c = status != nullptr ? GetCondition(*status, type) : nullptr;
  return c != nullptr && c->value("status", "") == "True";
}

Json Condition(std::string_view type, std::string_view reason, std::string message, Timestamp now) {
  const std::string t = FormatRfc3339(now / kSecond * kSecond);
  return Json{{"type", type}, {"status", "True"}, {"lastProbeTime", t}, {"lastTransitionTime", t},
              {"reason", reason}, {"message", std::move(message)}};
}

// podFailurePolicy: the action of the first rule a failed pod matches ("" for none), with
// upstream's message for FailJob.
std::pair<std::string, std::string> MatchFailurePolicy(const Json& job, const Json& pod) {
  const Json* rules = Find(job, {"spec", "podFailurePolicy", "rules"});
  if (rules == nullptr || !rules->is_array()) return {"", ""};
  const std::string who = NamespaceOf(pod) + "/" + NameOf(pod);
  for (size_t i = 0; i < rules->size(); ++i) {
    const Json& rule = (*rules)[i];
    const std::string action = rule.value("action", "");
    const std::string at = " matching " + action + " rule at index " + std::to_string(i);
    if (const Json* codes = Find(rule, {"onExitCodes"}); codes != nullptr && codes->is_object()) {
      const std::string container = codes->value("containerName", "");
      const bool in = codes->value("operator", "In") == "In";
      const Json values = codes->value("values", Json::array());
      const Json* statuses = Find(pod, {"status", "containerStatuses"});
      if (statuses == nullptr || !statuses->is_array()) continue;
      for (const Json& cs : *statuses) {
        if (!container.empty() && cs.value("name", "") != container) continue;
        const Json* t = Find(cs, {"state", "terminated"});
        if (t == nullptr || !t->is_object()) continue;
        const int64_t code = t->value("exitCode", int64_t{0});
        if (code == 0) continue;
        const bool listed = std::find(values.begin(), values.end(), Json(code)) != values.end();
        if (listed == in) {
          return {action, "Container " + cs.value("name", "") + " for pod " + who + " failed with exit code " +
                              std::to_string(code) + at};
        }
      }
      continue;
    }
    if (const Json* patterns = Find(rule, {"onPodConditions"}); patterns != nullptr && patterns->is_array()) {
      const Json* status = Find(pod, {"status"});
      for (const Json& p : *patterns) {
        const Json* c = status != nullptr ? GetCondition(*status, p.value("type", "")) : nullptr;
        if (c != nullptr && c->value("status", "") == p.value("status", "True")) {
          return {action, "Pod " + who + " has condition " + p.value("type", "") + at};
        }
      }
    }
  }
  return {"", ""};
}

}  // namespace

void JobController::Reset() {
  queue_.Clear();
  expectations_.Clear();
  owner_of_.clear();
}

Status JobController::Sync(Context& ctx, const Changes& changed) {
  const Timestamp now = ctx.now();
  for (const Key& key : changed.at("jobs")) queue_.Add(key, now);
  (void)FollowOwnedPods(changed.at("pods"), ctx.informer("pods"), kJobKind, owner_of_, expectations_, queue_, now);
  return queue_.ProcessDue(
      now, [&](const Key& key) { return SyncJob(ctx, key); },
      [](const Key& key) { return "job " + key.first + "/" + key.second; });
}

Status JobController::SyncJob(Context& ctx, const Key& key) {
  const Timestamp now = ctx.now();
  const store::Object* object = ctx.informer("jobs").Find(key);
  if (object == nullptr) {
    expectations_.Forget(key);
    return Status::Ok();
  }
  Json job = object->body.Copy();
  const std::string& ns = key.first;
  const std::string component(Name());
  ApiClient& api = ctx.api();
  const api::ResourceInfo& pod_info = Resource("", "v1", "pods");
  const api::ResourceInfo& job_info = Resource("batch", "v1", "jobs");
  auto selector = DecodeSelector(Find(job, {"spec", "selector"}), "spec.selector");
  if (!selector.ok()) return Status::Ok();

  // The Job's pods, every phase (finished ones are counted).
  std::vector<const Json*> mine;
  std::deque<Json> adopted;
  const store::Informer& pod_informer = ctx.informer("pods");
  Status claim = ClaimObjects(api, pod_info, pod_informer, ns, job, kJobApiVersion, kJobKind, *selector,
                              [](const Json&) { return true; }, [&](const Json& pod) {
                                const store::Object* seen = pod_informer.Find({ns, NameOf(pod)});
                                mine.push_back(seen != nullptr && &*seen->body.tree() == &pod ? &pod : &adopted.emplace_back(pod));
                              });
  ARBITER_RETURN_IF_ERROR(claim);

  Json status = StatusOf(job);
  const bool finished = ConditionTrue(job, "Complete") || ConditionTrue(job, "Failed");
  const bool indexed = StringAt(job, {"spec", "completionMode"}) == "Indexed";
  const Json* completions_field = Find(job, {"spec", "completions"});
  const bool has_completions = completions_field != nullptr && completions_field->is_number_integer();
  const int64_t completions = has_completions ? completions_field->get<int64_t>() : 0;
  const int64_t parallelism = IntAt(job, {"spec", "parallelism"}, 1);
  const int64_t backoff_limit = IntAt(job, {"spec", "backoffLimit"}, 6);
  const bool replace_when_failed = StringAt(job, {"spec", "podReplacementPolicy"}) == "Failed";
  const bool suspended = BoolAt(job, {"spec", "suspend"}, false);

  // 1) Count the finished pods still holding the tracking finalizer, through
  //    uncountedTerminatedPods: record them, remove their finalizers, then fold them in.
  Json& uncounted = status["uncountedTerminatedPods"];
  if (!uncounted.is_object()) uncounted = Json::object();
  std::set<std::string> already;
  for (const char* side : {"succeeded", "failed"}) {
    if (uncounted.contains(side) && uncounted[side].is_array()) {
      for (const Json& u : uncounted[side]) already.insert(u.get<std::string>());
    }
  }
  std::set<int64_t> done_indexes = ParseIndexRanges(StringAt(job, {"status", "completedIndexes"}));
  std::optional<std::pair<std::string, std::string>> fail_job;  // (reason, message)
  std::vector<const Json*> to_release;
  for (const Json* p : mine) {
    if (!PodTerminal(*p) || !HasTracking(*p)) continue;
    to_release.push_back(p);
    const std::string uid = Uid(*p);
    if (already.contains(uid)) continue;
    if (StringAt(*p, {"status", "phase"}) == "Succeeded") {
      uncounted["succeeded"].push_back(uid);
      if (auto i = IndexOf(*p)) done_indexes.insert(*i);
      continue;
    }
    auto [action, message] = MatchFailurePolicy(job, *p);
    if (action == "Ignore") continue;  // not counted against backoffLimit
    if (action == "FailJob" && !fail_job) fail_job = {{"PodFailurePolicy", message}};
    uncounted["failed"].push_back(uid);
  }
  auto write_status = [&](const Json& next) -> Status {
    Json body = job;
    body["status"] = next;
    auto r = api.Update(ObjectPath(job_info, ns, key.second, "status"), body);
    if (!r.ok()) return r.status();
    job = std::move(*r);
    return Status::Ok();
  };
  if (!to_release.empty()) {
    if (!uncounted.empty()) ARBITER_RETURN_IF_ERROR(write_status(status));
    for (const Json* p : to_release) {
      Json rest = Json::array();
      for (const Json& f : *Find(*p, {"metadata", "finalizers"})) {
        if (f != kJobTrackingFinalizer) rest.push_back(f);
      }
      auto r = api.MergePatch(ObjectPath(pod_info, ns, NameOf(*p)),
                              {{"metadata", {{"finalizers", rest.empty() ? Json(nullptr) : rest}}}});
      if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
    }
  }
  for (const char* side : {"succeeded", "failed"}) {
    if (uncounted.contains(side) && uncounted[side].is_array()) {
      status[side] = status.value(side, int64_t{0}) + static_cast<int64_t>(uncounted[side].size());
    }
  }
  uncounted = Json::object();
  if (indexed) status["completedIndexes"] = IndexRanges(done_indexes);
  if (status.contains("completedIndexes") && status["completedIndexes"] == "") status.erase("completedIndexes");

  // 2) The pods by state.
  std::vector<const Json*> active;
  int64_t terminating = 0, ready = 0;
  std::set<int64_t> active_indexes;
  for (const Json* p : mine) {
    if (PodTerminal(*p)) continue;
    if (BeingDeleted(*p)) {
      ++terminating;
      continue;
    }
    active.push_back(p);
    ready += PodReady(*p);
    if (auto i = IndexOf(*p)) active_indexes.insert(*i);
  }
  const int64_t succeeded = status.value("succeeded", int64_t{0});
  const int64_t failed = status.value("failed", int64_t{0});

  // 3) Finished?
  std::optional<std::pair<std::string, std::string>> failure = fail_job;
  if (!failure && failed > backoff_limit) {
    failure = {{"BackoffLimitExceeded", "Job has reached the specified backoff limit"}};
  }
  const Json* deadline = Find(job, {"spec", "activeDeadlineSeconds"});
  auto started = TimeAt(job, {"status", "startTime"});
  if (!failure && deadline != nullptr && deadline->is_number_integer() && started &&
      now - *started >= deadline->get<int64_t>() * kSecond) {
    failure = {{"DeadlineExceeded", "Job was active longer than specified deadline"}};
  } else if (deadline != nullptr && deadline->is_number_integer() && started && !finished) {
    queue_.AddAfter(key, *started + deadline->get<int64_t>() * kSecond);
  }
  bool complete = false;
  if (indexed) {
    complete = has_completions && static_cast<int64_t>(done_indexes.size()) >= completions;
  } else if (has_completions) {
    complete = succeeded >= completions;
  } else {
    complete = succeeded > 0 && active.empty();
  }
  if (finished || failure || complete) {
    // Delete what still runs, then finish once nothing is terminating.
    for (const Json* p : active) {
      auto r = api.Delete(ObjectPath(pod_info, ns, NameOf(*p)));
      if (r.ok()) {
        ctx.Event(job, kJobKind, kJobApiVersion, "Normal", "SuccessfulDelete", "Deleted pod: " + NameOf(*p), component);
        ++terminating;
      }
    }
    if (!finished) {
      if (failure) {
        SetCondition(status, Condition("FailureTarget", failure->first, failure->second, now));
        if (terminating == 0) {
          SetCondition(status, Condition("Failed", failure->first, failure->second, now));
          ctx.Event(job, kJobKind, kJobApiVersion, "Warning", failure->first, failure->second, component);
        }
      } else {
        SetCondition(status, Condition("SuccessCriteriaMet", "CompletionsReached",
                                       "Reached expected number of succeeded pods", now));
        if (terminating == 0) {
          SetCondition(status, Condition("Complete", "CompletionsReached", "Reached expected number of succeeded pods", now));
          status["completionTime"] = FormatRfc3339(now / kSecond * kSecond);
          ctx.Event(job, kJobKind, kJobApiVersion, "Normal", "Completed", "Job completed", component);
        }
      }
    }
    status["active"] = 0;
  } else if (suspended) {
    for (const Json* p : active) (void)api.Delete(ObjectPath(pod_info, ns, NameOf(*p)));
    SetCondition(status, Condition("Suspended", "JobSuspended", "Job suspended", now));
    status["active"] = 0;
  } else if (expectations_.Satisfied(key, now)) {
    if (!started) status["startTime"] = FormatRfc3339(now / kSecond * kSecond);
    if (const Json* s = GetCondition(status, "Suspended"); s != nullptr && s->value("status", "") == "True") {
      Json resumed = Condition("Suspended", "JobResumed", "Job resumed", now);
      resumed["status"] = "False";
      SetCondition(status, resumed);
    }
    // 4) How many should run: what remains to complete, at most parallelism.
    int64_t want = parallelism;
    if (has_completions) want = std::min(want, completions - (indexed ? static_cast<int64_t>(done_indexes.size()) : succeeded));
    if (!has_completions && succeeded > 0) want = static_cast<int64_t>(active.size());
    want = std::max<int64_t>(want, 0);
    const int64_t running = static_cast<int64_t>(active.size()) + (replace_when_failed ? terminating : 0);
    // After failures, new pods wait out the backoff: 10 s × 2^(failures since the last success
    // - 1) from the last failure, the pods' finish times telling both (upstream's backoff record).
    Timestamp last_success = 0, last_failure = 0;
    int64_t failures = 0;
    std::vector<std::pair<Timestamp, bool>> ends;  // (finish time, failed)
    for (const Json* p : mine) {
      if (!PodTerminal(*p)) continue;
      const bool pod_failed = StringAt(*p, {"status", "phase"}) == "Failed";
      if (pod_failed && MatchFailurePolicy(job, *p).first == "Ignore") continue;
      Timestamp end = 0;
      if (const Json* cs = Find(*p, {"status", "containerStatuses"}); cs != nullptr && cs->is_array()) {
        for (const Json& c : *cs) end = std::max(end, TimeAt(c, {"state", "terminated", "finishedAt"}).value_or(0));
      }
      ends.emplace_back(end, pod_failed);
      (pod_failed ? last_failure : last_success) = std::max(pod_failed ? last_failure : last_success, end);
    }
    for (const auto& [end, pod_failed] : ends) failures += pod_failed && end >= last_success;
    Timestamp backoff_until = 0;
    if (failures > 0) {
      Duration delay = kBackoffBase;
      for (int64_t i = 1; i < failures && delay < kBackoffMax; ++i) delay *= 2;
      backoff_until = last_failure + std::min(delay, kBackoffMax);
    }
    if (running < want && backoff_until > now) {
      queue_.AddAfter(key, backoff_until);
    } else if (running < want) {
      const int64_t n = std::min(want - running, kBurstReplicas);
      // Indexed: the lowest indexes neither done nor running.
      std::vector<int64_t> indexes;
      for (int64_t i = 0; indexed && static_cast<int64_t>(indexes.size()) < n && i < completions; ++i) {
        if (!done_indexes.contains(i) && !active_indexes.contains(i)) indexes.push_back(i);
      }
      const int64_t count = indexed ? static_cast<int64_t>(indexes.size()) : n;
      expectations_.Expect(key, count, {}, now);
      auto [created, err] = SlowStartBatch(count, [&](int64_t k) -> Status {
        const Json pod = JobPod(job, indexed ? std::optional<int64_t>(indexes[static_cast<size_t>(k)]) : std::nullopt);
        auto r = api.Create(CollectionPath(pod_info, ns), pod);
        if (r.ok()) {
          ctx.Event(job, kJobKind, kJobApiVersion, "Normal", "SuccessfulCreate", "Created pod: " + NameOf(*r), component);
          return Status::Ok();
        }
        ctx.Event(job, kJobKind, kJobApiVersion, "Warning", "FailedCreate", "Error creating: " + r.status().message(), component);
        return r.status();
      });
      for (int64_t i = created; i < count; ++i) expectations_.CreationObserved(key);
      if (!err.ok()) return err;
    } else if (static_cast<int64_t>(active.size()) > want) {
      std::vector<const Json*> extra = active;
      SortPodsToDelete(extra, {}, now);
      extra.resize(static_cast<size_t>(static_cast<int64_t>(active.size()) - want));
      std::set<Key> keys;
      for (const Json* p : extra) keys.insert({ns, NameOf(*p)});
      expectations_.Expect(key, 0, keys, now);
      for (const Json* p : extra) {
        auto r = api.Delete(ObjectPath(pod_info, ns, NameOf(*p)));
        if (!r.ok()) expectations_.DeletionObserved(key, {ns, NameOf(*p)});
      }
    }
    status["active"] = static_cast<int64_t>(active.size());
  }
  status["ready"] = ready;
  status["terminating"] = terminating;
  for (const char* f : {"active", "succeeded", "failed"}) {
    if (status.contains(f) && status[f] == 0) status.erase(f);
  }
  const Json current = StatusOf(job);
  if (status != current) return write_status(status);
  return Status::Ok();
}

}  // namespace arbiter::controllers
