// The control loop: node simulation and scheduling over the store.
#include "arbiter/controlplane/control_loop.h"

#include <cstdio>
#include <set>

#include "arbiter/controlplane/pod_json.h"
#include "arbiter/kubelet/node_pressure.h"
#include "arbiter/manifest/loader.h"

namespace arbiter::controlplane {

namespace {

using Json = nlohmann::json;

}  // namespace

constexpr const char* kWatched[] = {"nodes",     "pods",         "namespaces",         "priorityclasses",
                                    "poddisruptionbudgets", "podgroups", "compositepodgroups", "workloads",
                                    "podmetrics.metrics.k8s.io", "leases"};

ControlLoop::ControlLoop(store::Store& store, const Clock& clock, LoopOptions options)
    : store_(store),
      clock_(clock),
      options_(options),
      batch_(store, 512, options.async_writes),
      nodes_(batch_, clock, options.nodes,
             [this](const std::string& ns, const std::string& pod, const std::string& uid, const std::string& type,
                    const std::string& reason, const std::string& message, const std::string& component,
                    const std::string& host) { return RecordEvent(ns, pod, uid, type, reason, message, component, host); }),
      live_(store, batch_, clock, {options.seed, 20000, options.log}, metrics_,
            [this](const store::Object& o) -> const manifest::LoadResult& { return Decoded(o); },
            [this](const std::string& ns, const std::string& pod, const std::string& uid, const std::string& type,
                   const std::string& reason, const std::string& message) {
              return RecordEvent(ns, pod, uid, type, reason, message);
            }) {
  for (const char* r : kWatched) informers_[r] = std::make_unique<store::Informer>(store_, r);
}

Status ControlLoop::RunOnce() {
  for (auto& [name, informer] : informers_) ARBITER_RETURN_IF_ERROR(informer->Sync());
  if (options_.simulate_nodes) {
    Status st = SimulateNodes();
    if (st.ok()) st = EvictUnderPressure();
    // Synchronous writes go now; asynchronous ones leave with the scheduler's at the end of the
    // pass, in one batch that the store commits while the next pass runs.
    Status flushed = batch_.asynchronous() && options_.schedule ? Status::Ok() : batch_.Flush();
    ARBITER_RETURN_IF_ERROR(st);
    ARBITER_RETURN_IF_ERROR(flushed);
    // The scheduler starts from the nodes' writes just made (a pod's Running status, say), not
    // from the versions they replaced, which any write of its own would find stale.
    if (!batch_.asynchronous()) {
      for (auto& [name, informer] : informers_) ARBITER_RETURN_IF_ERROR(informer->Sync());
    }
  }
  if (options_.schedule) {
    Status st = Schedule();
    // Synchronous: after an error, what was queued before it. Asynchronous: the pass sent its
    // writes; the next pass completes them (unless an error cut the pass short).
    Status flushed = batch_.asynchronous() && st.ok() ? Status::Ok() : batch_.Flush();
    ARBITER_RETURN_IF_ERROR(st);
    ARBITER_RETURN_IF_ERROR(flushed);
  }
  return ExpireEvents();
}

Status ControlLoop::ExpireEvents() {
  const Timestamp now = clock_.Now();
  if (now - events_swept_at_ < kMinute) return Status::Ok();
  events_swept_at_ = now;
  ARBITER_ASSIGN_OR_RETURN(events, store_.List("events", ""));
  for (const auto& e : events.items) {
    // When the event last happened: lastTimestamp, eventTime, or its creation.
    Timestamp last = 0;
    for (const char* field : {"lastTimestamp", "eventTime"}) {
      const auto it = e.body.find(field);
      if (it == e.body.end() || !it->is_string()) continue;
      if (auto t = ParseRfc3339(it->get<std::string>()); t.ok()) last = std::max(last, *t);
    }
    if (auto t = ParseRfc3339(StringAt(e.body, "metadata", "creationTimestamp")); t.ok()) last = std::max(last, *t);
    if (now - last <= options_.event_ttl) continue;
    auto r = store_.Delete("events", e.ns, e.name, e.revision);
    if (!r.ok() && r.status().code() != StatusCode::kConflict && r.status().code() != StatusCode::kNotFound) {
      return r.status();
    }
  }
  return Status::Ok();
}

const manifest::LoadResult& ControlLoop::Decoded(const store::Object& o) {
  auto& slot = decoded_[{o.resource, o.ns, o.name}];
  if (slot.first != o.revision) {
    slot.first = o.revision;
    slot.second = manifest::DecodeJson(o.resource + "/" + o.ns + "/" + o.name, o.body);
  }
  return slot.second;
}

Status ControlLoop::RecordEvent(const std::string& ns, const std::string& pod, const std::string& uid,
                                const std::string& type, const std::string& reason, const std::string& message,
                                const std::string& component, const std::string& host) {
  const std::string now = FormatRfc3339(clock_.Now() / kSecond * kSecond);
  // client-go's event correlator: an event identical to one recorded before (same object, type,
  // reason, message and source) is the same event happening again: its count goes up and its
  // lastTimestamp moves, instead of a new object. The most recent 4,096 are remembered, as its
  // LRU cache does; one that has expired meanwhile (the TTL) starts afresh.
  std::string key;
  for (const std::string* part : {&ns, &pod, &uid, &type, &reason, &message, &component, &host}) {
    key += *part;
    key += '\x1f';
  }
  // The write is queued (see WriteBatch); a lost race (the event expired meanwhile) forgets it.
  auto settle = [this, key](const StatusOr<store::Object>& r) -> Status {
    auto it = correlated_.find(key);
    if (r.ok()) {
      if (it != correlated_.end()) it->second = *r;
      return Status::Ok();
    }
    const StatusCode c = r.status().code();
    if (c != StatusCode::kConflict && c != StatusCode::kNotFound && c != StatusCode::kAlreadyExists) return r.status();
    if (it != correlated_.end()) correlated_.erase(it);
    return Status::Ok();
  };
  if (auto it = correlated_.find(key); it != correlated_.end()) {
    const store::Object* queued = batch_.Pending("events", ns, it->second.name);
    const store::Object& last = queued != nullptr ? *queued : it->second;
    if (queued != nullptr || last.revision > 0) {
      Json next = last.body;
      next["count"] = next.value("count", int64_t{1}) + 1;
      next["lastTimestamp"] = now;
      batch_.Update(last, std::move(next), settle);
      return Status::Ok();
    }
  }
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%016llx", static_cast<unsigned long long>(clock_.Now() * 1000 + event_seq_++));
  Json e = {{"apiVersion", "v1"},
            {"kind", "Event"},
            {"metadata", {{"name", pod + suffix}, {"namespace", ns}, {"creationTimestamp", now}}},
            {"involvedObject", {{"kind", "Pod"}, {"namespace", ns}, {"name", pod}, {"uid", uid}, {"apiVersion", "v1"}}},
            {"reason", reason},
            {"message", message},
            {"type", type},
            {"source", host.empty() ? Json{{"component", component}} : Json{{"component", component}, {"host", host}}},
            {"reportingComponent", component},
            {"firstTimestamp", now},
            {"lastTimestamp", now},
            {"count", 1}};
  store::Object created{"events", ns, pod + suffix, 0, e};
  batch_.Create("events", ns, created.name, std::move(e), settle);
  if (correlated_.insert_or_assign(key, std::move(created)).second) correlated_order_.push_back(key);
  while (correlated_order_.size() > kCorrelatedEvents) {
    correlated_.erase(correlated_order_.front());
    correlated_order_.pop_front();
  }
  return Status::Ok();
}

Status ControlLoop::SimulateNodes() {
  return nodes_.Run(*informers_["nodes"], *informers_["pods"], *informers_["leases"]);
}

Status ControlLoop::EvictUnderPressure() {
  const auto& metrics = informers_["podmetrics.metrics.k8s.io"]->objects();
  if (metrics.empty()) return Status::Ok();
  std::map<std::string, const model::PodMetrics*> usage;
  for (const auto& [key, m] : metrics) {
    const manifest::LoadResult& r = Decoded(*m);
    if (r.ok() && !r.objects.pod_metrics.empty()) usage[r.objects.pod_metrics[0].object.Key()] = &r.objects.pod_metrics[0].object;
  }
  // Running pods by node, decoded (priority as admitted).
  std::map<std::string, std::vector<std::pair<const store::Object*, model::Pod>>> by_node;
  for (const auto& [key, p_ptr] : informers_["pods"]->objects()) {
    const store::Object& p = *p_ptr;
    if (NodeOf(p.body).empty() || Terminal(p.body) || Terminating(p.body)) continue;
    const manifest::LoadResult& r = Decoded(p);
    if (!r.ok() || r.objects.pods.empty()) continue;
    model::Pod pod = r.objects.pods[0].object;
    pod.priority = pod.spec_priority.value_or(0);
    by_node[pod.node_name].emplace_back(&p, std::move(pod));
  }
  const std::string now = FormatRfc3339(clock_.Now() / kSecond * kSecond);
  for (const auto& [key, n_ptr] : informers_["nodes"]->objects()) {
    const store::Object& n = *n_ptr;
    auto on = by_node.find(n.name);
    if (on == by_node.end()) continue;
    const manifest::LoadResult& nr = Decoded(n);
    if (!nr.ok() || nr.objects.nodes.empty()) continue;
    std::vector<const model::Pod*> pods;
    std::map<std::string, const store::Object*> stored;
    for (const auto& [obj, pod] : on->second) {
      pods.push_back(&pod);
      stored[pod.Key()] = obj;
    }
    for (const auto& e : kubelet::NodePressureEvictions(nr.objects.nodes[0].object, pods, usage, options_.kubelet)) {
      const store::Object* cur = stored[e.pod];
      Json next = cur->body;
      Json& st = next["status"];
      st["phase"] = "Failed";
      st["reason"] = "Evicted";
      st["message"] = e.message;
      SetCondition(st, {{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", "TerminationByKubelet"},
                        {"message", e.message}, {"lastTransitionTime", now}});
      SetCondition(st, {{"type", "Ready"}, {"status", "False"}, {"lastTransitionTime", now}});
      if (st.contains("containerStatuses") && st["containerStatuses"].is_array()) {
        for (Json& cs : st["containerStatuses"]) {
          cs["ready"] = false;
          cs["state"] = {{"terminated", {{"exitCode", 137}, {"reason", "Evicted"}, {"finishedAt", now}}}};
        }
      }
      auto r = store_.Update("pods", cur->ns, cur->name, next, cur->revision);
      if (!r.ok()) {
        if (r.status().code() == StatusCode::kConflict || r.status().code() == StatusCode::kNotFound) continue;
        return r.status();
      }
      if (options_.log) {
        options_.log("Evicting pod under node pressure", "pod=\"" + e.pod + "\" node=\"" + e.node + "\" signal=\"" + e.signal + "\"");
      }
      ARBITER_RETURN_IF_ERROR(RecordEvent(cur->ns, cur->name, cur->body["metadata"].value("uid", ""), "Warning",
                                          "Evicted", e.message, "kubelet", e.node));
    }
  }
  return Status::Ok();
}

Status ControlLoop::Schedule() {
  // The changes since the last pass go to the live scheduler, which reconciles only those.
  Changes changes;
  for (const char* r : {"nodes", "pods", "namespaces", "priorityclasses", "poddisruptionbudgets", "podgroups",
                        "compositepodgroups", "workloads"}) {
    changes[r] = informers_[r]->TakeChanged();
  }
  Status st = live_.Pass(informers_, changes);
  if (!st.ok()) ++metrics_.errors;
  // Forget the decoded form of objects that are gone.
  for (auto it = decoded_.begin(); it != decoded_.end();) {
    const auto& [resource, ns, name] = it->first;
    const auto& objs = informers_[resource]->objects();
    it = objs.count({ns, name}) ? std::next(it) : decoded_.erase(it);
  }
  return st;
}

void ControlLoop::Pause() {
  // The writes of the scheduler being dropped finish first: their completions use it.
  (void)batch_.Drain();
  live_.Reset();
}

ControlLoop::~ControlLoop() { (void)batch_.Drain(); }

void ControlLoop::SetChangeNotifier(const std::function<void()>& notify) {
  for (auto& [resource, informer] : informers_) {
    // Node leases and metrics change on their own clock; the tick covers them.
    if (resource == "leases" || resource == "podmetrics.metrics.k8s.io") continue;
    informer->SetNotifier(notify);
  }
}

std::string ControlLoop::MetricsText() const {
  std::string t;
  auto counter = [&](const std::string& name, const std::string& help, const std::string& labels, uint64_t v) {
    t += "# HELP " + name + " " + help + "\n# TYPE " + name + " counter\n" + name + labels + " " + std::to_string(v) + "\n";
  };
  t += "# HELP scheduler_schedule_attempts_total Number of attempts to schedule pods, by the result.\n"
       "# TYPE scheduler_schedule_attempts_total counter\n";
  t += "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"scheduled\"} " +
       std::to_string(metrics_.scheduled.load()) + "\n";
  t += "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"unschedulable\"} " +
       std::to_string(metrics_.unschedulable.load()) + "\n";
  t += "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"error\"} " +
       std::to_string(metrics_.errors.load()) + "\n";
  t += "# HELP scheduler_pending_pods Number of pending pods.\n# TYPE scheduler_pending_pods gauge\n"
       "scheduler_pending_pods{queue=\"active\"} " + std::to_string(metrics_.pending.load()) + "\n"
       "scheduler_pending_pods{queue=\"backoff\"} " + std::to_string(metrics_.pending_backoff.load()) + "\n"
       "scheduler_pending_pods{queue=\"unschedulable\"} " + std::to_string(metrics_.pending_unschedulable.load()) + "\n"
       "scheduler_pending_pods{queue=\"gated\"} 0\n";
  counter("scheduler_preemption_attempts_total", "Total preemption attempts in the cluster till now", "",
          metrics_.preemption_attempts.load());
  t += "# HELP scheduler_preemption_victims Number of selected preemption victims\n"
       "# TYPE scheduler_preemption_victims histogram\n";
  uint64_t cumulative = 0;
  const char* bounds[] = {"1", "2", "4", "8", "16", "32", "64", "+Inf"};
  for (int i = 0; i < 8; ++i) {
    cumulative += metrics_.victim_histogram[i].load();
    t += std::string("scheduler_preemption_victims_bucket{le=\"") + bounds[i] + "\"} " + std::to_string(cumulative) + "\n";
  }
  t += "scheduler_preemption_victims_sum " + std::to_string(metrics_.preemption_victims.load()) + "\n";
  t += "scheduler_preemption_victims_count " + std::to_string(metrics_.preemption_attempts.load()) + "\n";
  t += "# HELP scheduler_pod_scheduling_sli_duration_seconds E2e latency for a pod being scheduled, from the time "
       "the pod was created until it is bound.\n# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram\n";
  cumulative = 0;
  for (int i = 0; i < 16; ++i) {
    cumulative += metrics_.e2e_histogram[i].load();
    char le[32];
    if (i < 15) {
      std::snprintf(le, sizeof le, "%g", 0.01 * static_cast<double>(1 << i));
    } else {
      std::snprintf(le, sizeof le, "+Inf");
    }
    t += std::string("scheduler_pod_scheduling_sli_duration_seconds_bucket{le=\"") + le + "\"} " +
         std::to_string(cumulative) + "\n";
  }
  char sum[64];
  std::snprintf(sum, sizeof sum, "%.6f", static_cast<double>(metrics_.e2e_micros_sum.load()) / kSecond);
  t += std::string("scheduler_pod_scheduling_sli_duration_seconds_sum ") + sum + "\n";
  t += "scheduler_pod_scheduling_sli_duration_seconds_count " + std::to_string(cumulative) + "\n";
  // Arbiter's own: the control loop's store writes and the batches (transactions) they took.
  counter("arbiter_control_loop_store_batches_total", "Store transactions (batches) the control loop committed", "",
          batch_.applies());
  counter("arbiter_control_loop_store_writes_total", "Objects the control loop wrote (created, updated or deleted)", "",
          batch_.writes());
  return t;
}

}  // namespace arbiter::controlplane
