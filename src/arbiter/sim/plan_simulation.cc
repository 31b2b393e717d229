// The virtual-clock loop behind `arbiter plan`.
#include "arbiter/sim/plan_simulation.h"

#include <algorithm>
#include <map>

namespace arbiter::sim {

namespace {

// The virtual clock starts at the latest timestamp in the input, so every creation and start
// time lies in the past; an input without timestamps starts at 2024-01-01T00:00:00Z.
Timestamp StartTime(const manifest::ClusterObjects& objects) {
  Timestamp start = 1704067200LL * kSecond;
  bool any = false;
  for (const auto& [pod, origin] : objects.pods) {
    for (const auto& t : {pod.creation_timestamp, pod.start_time, pod.deletion_timestamp}) {
      if (t && (!any || *t > start)) {
        start = *t;
        any = true;
      }
    }
  }
  return start;
}

}  // namespace

StatusOr<PlanResult> RunPlan(const manifest::ClusterObjects& objects, const PlanOptions& options) {
  PlanResult result;
  result.start = StartTime(objects);
  VirtualClock clock(result.start);
  model::SchedulerConfig config = objects.config ? objects.config->object : model::SchedulerConfig{};
  sched::SchedulerOptions so;
  so.seed = options.seed;
  so.explain = options.explain;
  sched::Scheduler scheduler(config, &clock, so);
  ARBITER_RETURN_IF_ERROR(scheduler.Init());

  for (const auto& [ns, origin] : objects.namespaces) scheduler.cache().SetNamespace(ns);
  for (const auto& [node, origin] : objects.nodes) ARBITER_RETURN_IF_ERROR(scheduler.cache().AddNode(node));
  result.node_count = objects.nodes.size();

  // Running pods: their start time, else input order, is their start time.
  Timestamp input_order_time = result.start - static_cast<Timestamp>(objects.pods.size()) * kSecond;
  std::map<std::string, size_t> plan_index;  // pending pod UID -> index in result.pods
  std::vector<const model::Pod*> pending;
  for (const auto& [pod, origin] : objects.pods) {
    input_order_time += kSecond;
    if (pod.node_name.empty()) {
      pending.push_back(&pod);
      continue;
    }
    model::Pod running = pod;
    if (!running.start_time) running.start_time = input_order_time;
    ARBITER_RETURN_IF_ERROR(scheduler.AddBoundPod(state::MakePodInfo(std::move(running))));
  }
  // Pods for another scheduler are never queued here, as kube-scheduler ignores pods whose
  // schedulerName matches none of its profiles; they are reported after the rest.
  std::vector<const model::Pod*> foreign;
  for (const model::Pod* pod : pending) {
    if (pod->scheduler_name != config.scheduler_name) {
      foreign.push_back(pod);
      continue;
    }
    // Pods joined the queue when they were created; those without a creation time, now.
    scheduler.AddPendingPod(state::MakePodInfo(*pod), pod->creation_timestamp);
  }

  size_t cycles = 0;
  uint64_t cluster_version = 0;
  std::map<std::string, uint64_t> attempted_at;  // UID -> cluster version of its last attempt
  while (true) {
    std::optional<sched::CycleOutcome> out = scheduler.ScheduleOne();
    if (out) {
      if (++cycles > options.max_cycles) {
        return Status(StatusCode::kInternal, "the plan did not settle within " +
                                                 std::to_string(options.max_cycles) + " scheduling cycles");
      }
      const model::Pod& pod = out->pod->pod;
      auto [it, first] = plan_index.emplace(pod.uid, result.pods.size());
      if (first) {
        PodPlan p;
        p.name = pod.Key();
        p.pod_group = pod.pod_group_name.empty() ? "" : pod.ns + "/" + pod.pod_group_name;
        p.priority = pod.priority;
        result.pods.push_back(std::move(p));
      }
      PodPlan& p = result.pods[it->second];
      p.attempts = out->attempt;
      if (out->nominated_node) p.nominated_node = *out->nominated_node;
      if (out->scheduled) {
        p.scheduled = true;
        p.node = out->node;
        p.message.clear();
        ++cluster_version;
      } else {
        p.message = out->message;
        attempted_at[pod.uid] = cluster_version;
      }
      if (options.explain) result.cycles.push_back(std::move(*out));
      continue;
    }
    // Nothing is ready now. Pods still waiting were last tried against some cluster state; if
    // the cluster changed since, let time run to the next wake-up (backoff expiry or the
    // unschedulable pool's leftover flush) and try again. Otherwise nothing more can change.
    bool stale = false;
    for (const auto& [uid, version] : attempted_at) {
      if (version < cluster_version && scheduler.queue().Contains(uid)) stale = true;
    }
    std::optional<Timestamp> wake = scheduler.queue().NextWakeup();
    if (!stale || !wake) break;
    clock.AdvanceTo(*wake);
    for (auto& [uid, version] : attempted_at) version = cluster_version;  // one retry per change
  }
  for (const model::Pod* pod : foreign) {
    PodPlan p;
    p.name = pod->Key();
    p.pod_group = pod->pod_group_name.empty() ? "" : pod->ns + "/" + pod->pod_group_name;
    p.priority = pod->priority;
    p.message = "not scheduled: spec.schedulerName \"" + pod->scheduler_name +
                "\" is not a profile of this scheduler (\"" + config.scheduler_name + "\")";
    result.pods.push_back(std::move(p));
  }
  result.end = clock.Now();
  return result;
}

}  // namespace arbiter::sim
