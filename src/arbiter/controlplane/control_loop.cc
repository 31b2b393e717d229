// The control loop: node simulation and scheduling over the store.
#include "arbiter/controlplane/control_loop.h"

#include <cstdio>
#include <set>

#include "arbiter/kubelet/node_pressure.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/sim/plan_simulation.h"

namespace arbiter::controlplane {

namespace {

using Json = nlohmann::json;

// The value at `a`.`b` of an object, or null; never copies.
const Json* At(const Json& o, const char* a, const char* b) {
  if (!o.is_object()) return nullptr;
  auto i = o.find(a);
  if (i == o.end() || !i->is_object()) return nullptr;
  auto j = i->find(b);
  return j == i->end() ? nullptr : &*j;
}

std::string_view StringAt(const Json& o, const char* a, const char* b) {
  const Json* v = At(o, a, b);
  return v != nullptr && v->is_string() ? std::string_view(v->get_ref<const std::string&>()) : std::string_view();
}

bool Terminal(const Json& pod) {
  const std::string_view phase = StringAt(pod, "status", "phase");
  return phase == "Succeeded" || phase == "Failed";
}

std::string NodeOf(const Json& pod) { return std::string(StringAt(pod, "spec", "nodeName")); }

bool Terminating(const Json& o) { return At(o, "metadata", "deletionTimestamp") != nullptr; }

void SetCondition(Json& status, Json cond) {
  Json& conds = status["conditions"];
  if (!conds.is_array()) conds = Json::array();
  for (Json& c : conds) {
    if (c.value("type", "") == cond.value("type", "")) {
      if (c.value("status", "") == cond.value("status", "") && c.value("message", "") == cond.value("message", "")) {
        return;
      }
      c = std::move(cond);
      return;
    }
  }
  conds.push_back(std::move(cond));
}

// "namespace/name" of an event object "Pod namespace/name".
std::pair<std::string, std::string> PodKey(const std::string& object) {
  std::string key = object.starts_with("Pod ") ? object.substr(4) : object;
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return {"default", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

}  // namespace

constexpr const char* kWatched[] = {"nodes",     "pods",         "namespaces",         "priorityclasses",
                                    "poddisruptionbudgets", "podgroups", "compositepodgroups", "workloads",
                                    "podmetrics.metrics.k8s.io", "leases"};

ControlLoop::ControlLoop(store::Store& store, const Clock& clock, LoopOptions options)
    : store_(store),
      clock_(clock),
      options_(options),
      nodes_(store, clock, options.nodes,
             [this](const std::string& ns, const std::string& pod, const std::string& uid, const std::string& type,
                    const std::string& reason, const std::string& message, const std::string& component,
                    const std::string& host) { return RecordEvent(ns, pod, uid, type, reason, message, component, host); }) {
  for (const char* r : kWatched) informers_[r] = std::make_unique<store::Informer>(store_, r);
}

Status ControlLoop::RunOnce() {
  for (auto& [name, informer] : informers_) ARBITER_RETURN_IF_ERROR(informer->Sync());
  if (options_.simulate_nodes) {
    ARBITER_RETURN_IF_ERROR(SimulateNodes());
    ARBITER_RETURN_IF_ERROR(EvictUnderPressure());
  }
  if (options_.schedule) ARBITER_RETURN_IF_ERROR(Schedule());
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
    slot.second = manifest::DecodeEach({{o.resource + "/" + o.ns + "/" + o.name, o.body.dump()}});
  }
  return slot.second;
}

Status ControlLoop::RecordEvent(const std::string& ns, const std::string& pod, const std::string& uid,
                                const std::string& type, const std::string& reason, const std::string& message,
                                const std::string& component, const std::string& host) {
  const std::string now = FormatRfc3339(clock_.Now() / kSecond * kSecond);
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
  auto r = store_.Create("events", ns, e["metadata"]["name"].get<std::string>(), e);
  return r.ok() || r.status().code() == StatusCode::kAlreadyExists ? Status::Ok() : r.status();
}

Status ControlLoop::SimulateNodes() {
  return nodes_.Run(*informers_["nodes"], *informers_["pods"], *informers_["leases"]);
}

Status ControlLoop::EvictUnderPressure() {
  const auto& metrics = informers_["podmetrics.metrics.k8s.io"]->objects();
  if (metrics.empty()) return Status::Ok();
  std::map<std::string, const model::PodMetrics*> usage;
  for (const auto& [key, m] : metrics) {
    const manifest::LoadResult& r = Decoded(m);
    if (r.ok() && !r.objects.pod_metrics.empty()) usage[r.objects.pod_metrics[0].object.Key()] = &r.objects.pod_metrics[0].object;
  }
  // Running pods by node, decoded (priority as admitted).
  std::map<std::string, std::vector<std::pair<const store::Object*, model::Pod>>> by_node;
  for (const auto& [key, p] : informers_["pods"]->objects()) {
    if (NodeOf(p.body).empty() || Terminal(p.body) || Terminating(p.body)) continue;
    const manifest::LoadResult& r = Decoded(p);
    if (!r.ok() || r.objects.pods.empty()) continue;
    model::Pod pod = r.objects.pods[0].object;
    pod.priority = pod.spec_priority.value_or(0);
    by_node[pod.node_name].emplace_back(&p, std::move(pod));
  }
  const std::string now = FormatRfc3339(clock_.Now() / kSecond * kSecond);
  for (const auto& [key, n] : informers_["nodes"]->objects()) {
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
  const auto& pods = informers_["pods"]->objects();
  size_t pending = 0;
  for (const auto& [key, p] : pods) {
    if (NodeOf(p.body).empty() && !Terminating(p.body) && !Terminal(p.body)) ++pending;
  }
  metrics_.pending = pending;
  if (pending == 0) return Status::Ok();
  // Plan when something changed, and at least once a second (backoffs and grace periods run out
  // with time alone).
  int64_t revision = 0;
  for (const auto& [name, informer] : informers_) revision = std::max(revision, informer->revision());
  const Timestamp now_time = clock_.Now();
  if (revision == planned_revision_ && now_time - planned_at_ < kSecond) return Status::Ok();
  planned_revision_ = revision;
  planned_at_ = now_time;

  // The engine's input: every object the plan reads, decoded one by one; an object that does
  // not decode (written by a client that skipped validation) is left out, not fatal.
  manifest::ClusterObjects objects;
  std::set<std::string> node_names;
  auto decode = [&](const store::Object& o) {
    const manifest::LoadResult& r = Decoded(o);
    if (!r.ok()) return;
    auto copy_all = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
    copy_all(objects.nodes, r.objects.nodes);
    copy_all(objects.pods, r.objects.pods);
    copy_all(objects.priority_classes, r.objects.priority_classes);
    copy_all(objects.pdbs, r.objects.pdbs);
    copy_all(objects.namespaces, r.objects.namespaces);
    copy_all(objects.workloads, r.objects.workloads);
    copy_all(objects.pod_groups, r.objects.pod_groups);
    copy_all(objects.composite_pod_groups, r.objects.composite_pod_groups);
  };
  for (const auto& [key, n] : informers_["nodes"]->objects()) {
    decode(n);
    node_names.insert(n.name);
  }
  for (const char* resource : {"namespaces", "priorityclasses", "poddisruptionbudgets", "podgroups",
                               "compositepodgroups", "workloads"}) {
    for (const auto& [key, o] : informers_[resource]->objects()) decode(o);
  }
  for (const auto& [key, p] : pods) {
    if (Terminal(p.body)) continue;
    const std::string node = NodeOf(p.body);
    if (!node.empty() && node_names.count(node) == 0) continue;  // bound to a node that is gone
    decode(p);
  }
  // Forget the decoded form of objects that are gone.
  for (auto it = decoded_.begin(); it != decoded_.end();) {
    const auto& [resource, ns, name] = it->first;
    const auto& objs = informers_[resource]->objects();
    it = objs.count({ns, name}) ? std::next(it) : decoded_.erase(it);
  }
  if (objects.nodes.empty()) return Status::Ok();
  // Priorities were admitted once, when each object was created (a class deleted or a default
  // changed since then changes nothing): the stored spec is authoritative.
  std::map<std::string, const model::PriorityClass*> classes;
  const model::PriorityClass* global_default = nullptr;
  for (const auto& [pc, origin] : objects.priority_classes) {
    classes[pc.name] = &pc;
    if (pc.global_default) global_default = &pc;
  }
  for (auto& [pod, origin] : objects.pods) {
    pod.priority = pod.spec_priority.value_or(0);
    pod.preemption_policy = pod.spec_preemption_policy.value_or(model::PreemptionPolicy::kPreemptLowerPriority);
  }
  auto resolve_group = [&](model::GroupPriority& g) {
    const model::PriorityClass* pc = nullptr;
    if (!g.priority_class_name.empty()) {
      auto it = classes.find(g.priority_class_name);
      if (it != classes.end()) pc = it->second;
    } else if (!g.spec_priority) {
      pc = global_default;
    }
    g.priority = g.spec_priority.value_or(pc != nullptr ? pc->value : 0);
    g.preemption_policy =
        g.spec_preemption_policy.value_or(pc != nullptr ? pc->preemption_policy : model::PreemptionPolicy::kPreemptLowerPriority);
  };
  for (auto& [g, origin] : objects.pod_groups) resolve_group(g.priority);
  for (auto& [g, origin] : objects.composite_pod_groups) resolve_group(g.priority);

  sim::PlanOptions po;
  po.seed = options_.seed;
  po.start = clock_.Now() / kSecond * kSecond;
  auto planned = sim::RunPlan(objects, po);
  ++metrics_.plans;
  if (!planned.ok()) {
    ++metrics_.errors;
    return planned.status();
  }
  const sim::PlanResult& plan = *planned;
  std::map<std::string, const sim::PodPlan*> by_name;
  for (const auto& p : plan.pods) by_name[p.name] = &p;
  std::map<std::string, Timestamp> preempted_at;
  for (const auto& e : plan.events) {
    if (e.reason == "Preempted") preempted_at[PodKey(e.object).first + "/" + PodKey(e.object).second] = e.time;
  }

  // Preemptions decided now: evict the victims, nominate the preemptor.
  for (const auto& pre : plan.preemptions) {
    bool now = !pre.victims.empty();
    for (const auto& v : pre.victims) now = now && preempted_at.count(v.name) && preempted_at[v.name] == plan.start;
    if (!now) continue;
    ++metrics_.preemption_attempts;
    metrics_.preemption_victims += pre.victims.size();
    size_t bucket = 0;
    while (bucket < 7 && (size_t{1} << bucket) < pre.victims.size()) ++bucket;
    ++metrics_.victim_histogram[bucket];
    for (const auto& v : pre.victims) {
      auto [ns, name] = PodKey(v.name);
      auto cur = store_.Get("pods", ns, name);
      if (!cur.ok() || Terminating(cur->body)) continue;
      Json next = cur->body;
      SetCondition(next["status"], {{"type", "DisruptionTarget"},
                                    {"status", "True"},
                                    {"reason", "PreemptionByScheduler"},
                                    {"message", "default-scheduler: preempting to accommodate a higher priority pod"},
                                    {"lastTransitionTime", FormatRfc3339(plan.start)}});
      const int64_t grace = next["spec"].value("terminationGracePeriodSeconds", int64_t{30});
      next["metadata"]["deletionTimestamp"] = FormatRfc3339(plan.start + grace * kSecond);
      next["metadata"]["deletionGracePeriodSeconds"] = grace;
      Status written = NodeOf(next).empty() || grace <= 0
                           ? store_.Delete("pods", ns, name, cur->revision).status()
                           : store_.Update("pods", ns, name, next, cur->revision).status();
      if (!written.ok() && written.code() != StatusCode::kConflict) return written;
      auto [pns, pname] = PodKey(pre.preemptor);
      std::string preemptor_uid;
      if (auto pp = store_.Get("pods", pns, pname); pp.ok()) preemptor_uid = pp->body["metadata"].value("uid", "");
      if (options_.log) {
        options_.log("Preemptor Pod preempted victim Pod", "preemptor=\"" + pre.preemptor + "\" victim=\"" + v.name +
                                                              "\" node=\"" + pre.node.value_or("") + "\"");
      }
      ARBITER_RETURN_IF_ERROR(RecordEvent(ns, name, cur->body["metadata"].value("uid", ""), "Normal", "Preempted",
                                          "Preempted by pod " + preemptor_uid + " on node " + pre.node.value_or("")));
    }
    if (pre.node) {
      auto [ns, name] = PodKey(pre.preemptor);
      if (auto cur = store_.Get("pods", ns, name); cur.ok()) {
        Json next = cur->body;
        if (next["status"].value("nominatedNodeName", "") != *pre.node) {
          next["status"]["nominatedNodeName"] = *pre.node;
          auto r = store_.Update("pods", ns, name, next, cur->revision);
          if (!r.ok() && r.status().code() != StatusCode::kConflict) return r.status();
        }
      }
    }
  }

  // Bindings and failures decided now.
  for (const auto& e : plan.events) {
    if (e.time != plan.start || (e.reason != "Scheduled" && e.reason != "FailedScheduling")) continue;
    auto [ns, name] = PodKey(e.object);
    // The pod as this pass read it; the write below is conditional on that revision.
    auto found = pods.find({ns, name});
    if (found == pods.end()) continue;
    const store::Object* cur = &found->second;
    if (!NodeOf(cur->body).empty() || Terminating(cur->body)) continue;
    const std::string key = ns + "/" + name;
    Json next = cur->body;
    if (e.reason == "Scheduled") {
      auto it = by_name.find(key);
      if (it == by_name.end() || it->second->node.empty()) continue;
      next["spec"]["nodeName"] = it->second->node;
      next["status"].erase("nominatedNodeName");
      SetCondition(next["status"], {{"type", "PodScheduled"}, {"status", "True"},
                                    {"lastTransitionTime", FormatRfc3339(plan.start)}});
      // Conditional on the revision read: a pod is never bound twice, even by a stale loop.
      auto r = store_.Update("pods", ns, name, next, cur->revision);
      if (!r.ok()) {
        if (r.status().code() == StatusCode::kConflict) continue;
        return r.status();
      }
      ++metrics_.scheduled;
      last_failure_.erase(key);
      if (const Json* created = At(cur->body, "metadata", "creationTimestamp"); created != nullptr && created->is_string()) {
        if (auto t = ParseRfc3339(created->get<std::string>()); t.ok()) {
          const Duration d = std::max<Duration>(0, clock_.Now() - *t);
          metrics_.e2e_micros_sum += static_cast<uint64_t>(d);
          size_t b = 0;
          while (b < 15 && static_cast<double>(d) > 0.01 * kSecond * static_cast<double>(uint64_t{1} << b)) ++b;
          ++metrics_.e2e_histogram[b];
        }
      }
      ARBITER_RETURN_IF_ERROR(RecordEvent(ns, name, cur->body["metadata"].value("uid", ""), "Normal", "Scheduled", e.message));
    } else {
      if (last_failure_[key] == e.message) continue;
      last_failure_[key] = e.message;
      ++metrics_.unschedulable;
      SetCondition(next["status"], {{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"},
                                    {"message", e.message}, {"lastTransitionTime", FormatRfc3339(plan.start)}});
      auto r = store_.Update("pods", ns, name, next, cur->revision);
      if (!r.ok() && r.status().code() != StatusCode::kConflict) return r.status();
      ARBITER_RETURN_IF_ERROR(RecordEvent(ns, name, cur->body["metadata"].value("uid", ""), "Warning", "FailedScheduling", e.message));
    }
  }
  return Status::Ok();
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
       "scheduler_pending_pods{queue=\"active\"} " + std::to_string(metrics_.pending.load()) + "\n";
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
  return t;
}

}  // namespace arbiter::controlplane
