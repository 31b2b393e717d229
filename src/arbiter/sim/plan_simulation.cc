// The virtual-clock loop behind `arbiter plan`, and the simulated cluster that carries out
// preemption decisions: victims get the DisruptionTarget condition and a Preempted event, and
// leave their node when their grace period has passed.
#include "arbiter/sim/plan_simulation.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>

namespace arbiter::sim {

namespace {

// The virtual clock starts at the latest timestamp in the input, so every creation and start
// time lies in the past; an input without timestamps starts at 2024-01-01T00:00:00Z.
Timestamp StartTime(const manifest::ClusterObjects& objects) {
  Timestamp start = 1704067200LL * kSecond;
  bool any = false;
  for (const auto& [pod, origin] : objects.pods) {
    for (const auto& t : {pod.creation_timestamp, pod.start_time}) {
      if (t && (!any || *t > start)) {
        start = *t;
        any = true;
      }
    }
  }
  return start;
}

int32_t Percent(const model::IntOrPercent& v, int32_t of) {
  if (!v.percent) return v.value;
  return static_cast<int32_t>((int64_t{v.value} * of + 99) / 100);  // rounded up, as upstream
}

class Simulation final : public sched::preemption::PreemptionActuator {
 public:
  Simulation(const manifest::ClusterObjects& objects, const PlanOptions& options)
      : objects_(objects),
        options_(options),
        config_(objects.config ? objects.config->object : model::SchedulerConfig{}),
        clock_(StartTime(objects)),
        scheduler_(config_, &clock_, {options.seed, options.explain}) {}

  StatusOr<PlanResult> Run();

  // PreemptionActuator.
  std::vector<sched::preemption::PdbView> Pdbs() const override;
  void Preempt(const state::PodInfo& preemptor, const std::string& node,
               const std::vector<sched::preemption::Eviction>& victims) override;
  void ClearNomination(const state::PodInfoPtr& pod) override;

 private:
  struct Termination {
    Timestamp at;
    uint64_t seq;
    std::string uid;
    bool operator>(const Termination& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  PodPlan& PlanFor(const model::Pod& pod);
  void Record(const sched::CycleOutcome& out);
  void TerminateDue();
  void AddEvent(std::string type, std::string reason, const model::Pod& pod, std::string message) {
    result_.events.push_back({clock_.Now(), std::move(type), std::move(reason), "Pod " + pod.Key(), std::move(message)});
  }

  const manifest::ClusterObjects& objects_;
  PlanOptions options_;
  model::SchedulerConfig config_;
  VirtualClock clock_;
  sched::Scheduler scheduler_;
  PlanResult result_;
  std::map<std::string, size_t> plan_index_;  // pending pod UID -> index in result_.pods
  std::priority_queue<Termination, std::vector<Termination>, std::greater<>> terminations_;
  uint64_t termination_seq_ = 0;
  std::set<std::string> evicted_;  // pods the simulation evicted ("namespace/name")
  uint64_t cluster_version_ = 0;   // bumped by every bind and every pod that leaves
};

PodPlan& Simulation::PlanFor(const model::Pod& pod) {
  auto [it, first] = plan_index_.emplace(pod.uid, result_.pods.size());
  if (first) {
    PodPlan p;
    p.name = pod.Key();
    p.pod_group = pod.pod_group_name.empty() ? "" : pod.ns + "/" + pod.pod_group_name;
    p.priority = pod.priority;
    result_.pods.push_back(std::move(p));
  }
  return result_.pods[it->second];
}

void Simulation::Record(const sched::CycleOutcome& out) {
  const model::Pod& pod = out.pod->pod;
  PodPlan& p = PlanFor(pod);
  p.attempts = out.attempt;
  if (out.nominated_node) p.nominated_node = *out.nominated_node;
  if (out.scheduled) {
    p.scheduled = true;
    p.node = out.node;
    p.message.clear();
    ++cluster_version_;
    AddEvent("Normal", "Scheduled", pod, "Successfully assigned " + pod.Key() + " to " + out.node);
  } else {
    p.message = out.message;
    AddEvent("Warning", "FailedScheduling", pod, out.message);
  }
}

std::vector<sched::preemption::PdbView> Simulation::Pdbs() const {
  // Budgets as the disruption controller would report them now. A status given in the input
  // is taken as it stands, less the evictions this simulation has made since; otherwise it is
  // computed from the pods: healthy = running, not terminating, not already disrupted;
  // expected = every matching pod; desired healthy from minAvailable or maxUnavailable.
  std::vector<sched::preemption::PdbView> out;
  for (const auto& [pdb, origin] : objects_.pdbs) {
    sched::preemption::PdbView v;
    v.ns = pdb.ns;
    v.name = pdb.name;
    v.selector = pdb.selector;
    v.disrupted_pods.insert(pdb.disrupted_pods.begin(), pdb.disrupted_pods.end());
    auto matches = [&](const model::Pod& p) {
      return p.ns == pdb.ns && !pdb.selector.empty() && pdb.selector.Matches(p.labels);
    };
    if (pdb.disruptions_allowed) {
      int32_t allowed = *pdb.disruptions_allowed;
      for (const auto& [pod, o] : objects_.pods) {
        if (matches(pod) && evicted_.count(pod.Key()) && !v.disrupted_pods.count(pod.Key())) --allowed;
      }
      v.disruptions_allowed = std::max(0, allowed);
    } else {
      int32_t expected = 0, healthy = 0;
      for (const auto& [pod, o] : objects_.pods) {
        if (!matches(pod)) continue;
        ++expected;
        state::PodInfoPtr running = scheduler_.cache().FindPod(pod.uid);
        if (running && !running->pod.deletion_timestamp && !v.disrupted_pods.count(pod.Key())) ++healthy;
      }
      // Pending pods this simulation has bound count as running too.
      int32_t desired = 0;
      if (pdb.min_available) {
        desired = Percent(*pdb.min_available, expected);
      } else if (pdb.max_unavailable) {
        desired = expected - Percent(*pdb.max_unavailable, expected);
      }
      v.disruptions_allowed = std::max(0, healthy - desired);
    }
    out.push_back(std::move(v));
  }
  return out;
}

void Simulation::Preempt(const state::PodInfo& preemptor, const std::string& node,
                         const std::vector<sched::preemption::Eviction>& victims) {
  Preemption entry;
  entry.preemptor = preemptor.pod.Key();
  entry.node = node;
  for (const auto& e : victims) {
    const model::Pod& v = e.victim->pod;
    entry.victims.push_back({v.Key(), v.node_name, v.priority, e.violates_pdb});
    if (v.deletion_timestamp) continue;  // already terminating: no second eviction
    model::Pod evicted = v;
    evicted.deletion_timestamp = clock_.Now() + evicted.termination_grace_period_seconds * kSecond;
    evicted.preempted_by_scheduler = true;
    evicted_.insert(v.Key());
    (void)scheduler_.cache().UpdatePod(state::MakePodInfo(evicted));
    scheduler_.queue().MoveOnEvent(sched::ClusterEvent::kAssignedPodUpdate);
    AddEvent("Normal", "Preempted", v, "Preempted by pod " + preemptor.uid() + " on node " + node);
    terminations_.push({*evicted.deletion_timestamp, termination_seq_++, v.uid});
  }
  result_.preemptions.push_back(std::move(entry));
}

void Simulation::ClearNomination(const state::PodInfoPtr& pod) {
  scheduler_.nominator().DeleteNominatedPod(pod->uid());
  model::Pod cleared = pod->pod;
  cleared.nominated_node_name.clear();
  scheduler_.queue().Update(state::MakePodInfo(std::move(cleared)));
  PlanFor(pod->pod).nominated_node = "";
}

void Simulation::TerminateDue() {
  while (!terminations_.empty() && terminations_.top().at <= clock_.Now()) {
    const std::string uid = terminations_.top().uid;
    terminations_.pop();
    state::PodInfoPtr pod = scheduler_.cache().FindPod(uid);
    if (!pod) continue;
    (void)scheduler_.DeleteBoundPod(uid);
    ++cluster_version_;
    AddEvent("Normal", "Killing", pod->pod, "Stopping container (grace period over)");
  }
}

StatusOr<PlanResult> Simulation::Run() {
  result_.start = clock_.Now();
  ARBITER_RETURN_IF_ERROR(scheduler_.Init(this));
  for (const auto& [ns, origin] : objects_.namespaces) scheduler_.cache().SetNamespace(ns);
  for (const auto& [node, origin] : objects_.nodes) ARBITER_RETURN_IF_ERROR(scheduler_.cache().AddNode(node));
  result_.node_count = objects_.nodes.size();

  // Running pods: their start time, else input order, is their start time. Pods already
  // terminating leave at their deletion timestamp.
  Timestamp input_order_time = result_.start - static_cast<Timestamp>(objects_.pods.size()) * kSecond;
  std::vector<const model::Pod*> pending;
  for (const auto& [pod, origin] : objects_.pods) {
    input_order_time += kSecond;
    if (pod.node_name.empty()) {
      pending.push_back(&pod);
      continue;
    }
    model::Pod running = pod;
    if (!running.start_time) running.start_time = input_order_time;
    if (running.deletion_timestamp) terminations_.push({*running.deletion_timestamp, termination_seq_++, running.uid});
    ARBITER_RETURN_IF_ERROR(scheduler_.AddBoundPod(state::MakePodInfo(std::move(running))));
  }
  // Pods for another scheduler are never queued here, as kube-scheduler ignores pods whose
  // schedulerName matches none of its profiles; they are reported after the rest.
  std::vector<const model::Pod*> foreign;
  for (const model::Pod* pod : pending) {
    if (pod->scheduler_name != config_.scheduler_name) {
      foreign.push_back(pod);
      continue;
    }
    // Pods joined the queue when they were created; those without a creation time, now.
    scheduler_.AddPendingPod(state::MakePodInfo(*pod), pod->creation_timestamp);
  }

  size_t cycles = 0;
  std::map<std::string, uint64_t> attempted_at;  // UID -> cluster version of its last attempt
  while (true) {
    TerminateDue();
    std::optional<sched::CycleOutcome> out = scheduler_.ScheduleOne();
    if (out) {
      if (++cycles > options_.max_cycles) {
        return Status(StatusCode::kInternal, "the plan did not settle within " +
                                                 std::to_string(options_.max_cycles) + " scheduling cycles");
      }
      Record(*out);
      if (!out->scheduled) attempted_at[out->pod->uid()] = cluster_version_;
      if (options_.explain) result_.cycles.push_back(std::move(*out));
      continue;
    }
    // Nothing is ready now. Victims still terminating will free room: run the clock to the
    // next one.
    if (!terminations_.empty()) {
      clock_.AdvanceTo(terminations_.top().at);
      continue;
    }
    // Pods still waiting were last tried against some cluster state; if the cluster changed
    // since, let time run to the next wake-up (backoff expiry or the unschedulable pool's
    // leftover flush) and try again. Otherwise nothing more can change.
    bool stale = false;
    for (const auto& [uid, version] : attempted_at) {
      if (version < cluster_version_ && scheduler_.queue().Contains(uid)) stale = true;
    }
    std::optional<Timestamp> wake = scheduler_.queue().NextWakeup();
    if (!stale || !wake) break;
    clock_.AdvanceTo(*wake);
    for (auto& [uid, version] : attempted_at) version = cluster_version_;  // one retry per change
  }
  for (const model::Pod* pod : foreign) {
    PodPlan& p = PlanFor(*pod);
    p.message = "not scheduled: spec.schedulerName \"" + pod->scheduler_name +
                "\" is not a profile of this scheduler (\"" + config_.scheduler_name + "\")";
  }
  result_.end = clock_.Now();
  if (const auto* m = scheduler_.preemption_metrics()) result_.preemption_metrics = *m;
  return std::move(result_);
}

}  // namespace

StatusOr<PlanResult> RunPlan(const manifest::ClusterObjects& objects, const PlanOptions& options) {
  Simulation sim(objects, options);
  return sim.Run();
}

}  // namespace arbiter::sim
