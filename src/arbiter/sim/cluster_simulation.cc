// The simulated cluster: scheduling cycles, victims' graceful termination, PDB status.
#include "arbiter/sim/cluster_simulation.h"

#include <algorithm>
#include <cctype>

namespace arbiter::sim {

ClusterSimulation::ClusterSimulation(model::SchedulerConfig config, Timestamp start, SimulationOptions options)
    : options_(options), clock_(start), scheduler_(std::move(config), &clock_,
                 {options.seed, options.explain, options.preemption, options.reuse_verdicts, options.verdict_entries,
                  options.wall_clock,
                  /*messages=*/options.record && options.messages}) {
  result_.start = start;
}

Status ClusterSimulation::Init() {
  scheduler_.cache().SetBoundPodObserver([this](const model::Pod* before, const model::Pod* after) {
    if (!pdb_status_.empty()) pdb_status_.BoundChanged(before, after);
  });
  return scheduler_.Init(this);
}

Status ClusterSimulation::AddRunningPod(model::Pod pod) {
  if (!pdb_status_.empty()) pdb_status_.Know(pod);
  if (pod.deletion_timestamp) terminations_.push({*pod.deletion_timestamp, termination_seq_++, pod.uid});
  return scheduler_.AddBoundPod(state::MakePodInfo(std::move(pod)));
}

void ClusterSimulation::AddPendingPod(model::Pod pod, std::optional<Timestamp> enqueue_time) {
  if (!pdb_status_.empty()) pdb_status_.Know(pod);
  if (options_.record && (!pod.pod_group_name.empty() || !pod.scheduling_gates.empty())) pending_.push_back(pod);
  scheduler_.AddPendingPod(state::MakePodInfo(std::move(pod)), enqueue_time);
}

void ClusterSimulation::AddEvent(std::string type, std::string reason, const model::Pod& pod, std::string message) {
  if (!options_.record) return;
  result_.events.push_back({clock_.Now(), std::move(type), std::move(reason), "Pod " + pod.Key(), std::move(message)});
}

void ClusterSimulation::RecordEviction(NodePressureEviction e) {
  if (options_.record) result_.events.push_back({clock_.Now(), "Warning", "Evicted", "Pod " + e.name, e.message});
  result_.evictions.push_back(std::move(e));
}

PodPlan& ClusterSimulation::PlanFor(const model::Pod& pod) {
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

void ClusterSimulation::Record(const sched::CycleOutcome& out) {
  if (out.group.empty()) {
    RecordPod(out);
    return;
  }
  for (const auto& m : out.members) RecordPod(m);
  if (!options_.record || out.group_kind.empty()) return;
  auto [it, first] = group_index_.emplace(out.group, result_.groups.size());
  if (first) result_.groups.push_back({out.group, out.group_kind, false, ""});
  GroupPlan& g = result_.groups[it->second];
  if (g.initially_scheduled) return;  // terminal once True
  g.initially_scheduled = out.group_scheduled;
  g.message = out.group_message;
}

void ClusterSimulation::RecordPod(const sched::CycleOutcome& out) {
  const model::Pod& pod = out.pod->pod;
  if (out.scheduled) {
    ++cluster_version_;
  } else {
    attempted_at_[pod.uid] = cluster_version_;
  }
  if (!options_.record) return;
  PodPlan& p = PlanFor(pod);
  p.attempts = out.attempt;
  if (out.nominated_node) p.nominated_node = *out.nominated_node;
  if (out.scheduled) {
    p.scheduled = true;
    p.node = out.node;
    p.message.clear();
    AddEvent("Normal", "Scheduled", pod, "Successfully assigned " + pod.Key() + " to " + out.node);
  } else {
    p.message = out.message;
    AddEvent("Warning", "FailedScheduling", pod, out.message);
  }
}

void ClusterSimulation::RecordNeverTried() {
  if (!options_.record) return;
  for (const auto& pod : pending_) {
    if (plan_index_.count(pod.uid)) continue;
    PlanFor(pod).message = scheduler_.WaitingReason(pod);
  }
}

std::vector<sched::preemption::PdbView> ClusterSimulation::Pdbs() const {
  pdb_status_.CheckAgainstRecount([&](const std::string& uid) -> const model::Pod* {
    state::PodInfoPtr bound = scheduler_.cache().FindPod(uid);
    return bound ? &bound->pod : nullptr;
  });
  return pdb_status_.Views();
}

void ClusterSimulation::Preempt(const state::PodInfo& preemptor, const std::string& node,
                                const std::vector<sched::preemption::Eviction>& victims) {
  Preemption entry;
  entry.preemptor = preemptor.pod.Key();
  entry.node = node;
  Evict(std::move(entry), victims, "Preempted by pod " + preemptor.uid() + " on node " + node);
}

void ClusterSimulation::PreemptForGroup(const std::string& group, std::string_view kind,
                                        const std::vector<sched::preemption::Eviction>& victims) {
  Preemption entry;
  entry.preemptor = group;
  entry.preemptor_kind = std::string(kind);
  std::string lower(kind);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  Evict(std::move(entry), victims, "Preempted by " + lower + " " + group);
}

void ClusterSimulation::Evict(Preemption entry, const std::vector<sched::preemption::Eviction>& victims,
                              const std::string& by) {
  bool updated = false;
  for (const auto& e : victims) {
    const model::Pod& v = e.victim->pod;
    if (sched::preemption::AlreadyTerminating(e)) continue;
    entry.victims.push_back({v.Key(), v.node_name, e.priority, e.violates_pdb});
    model::Pod evicted = v;
    // A grace period past the year 9999 ends then, as in `serve`.
    evicted.deletion_timestamp = AddSecondsCapped(clock_.Now(), evicted.termination_grace_period_seconds);
    evicted.preempted_by_scheduler = true;
    if (!pdb_status_.empty()) pdb_status_.Evicted(v.Key());
    history_.Record(v.controller_uid, clock_.Now());
    terminations_.push({*evicted.deletion_timestamp, termination_seq_++, v.uid});
    AddEvent("Normal", "Preempted", v, by);
    if (options_.on_evicted) options_.on_evicted(v, entry.preemptor, entry.preemptor_kind);
    (void)scheduler_.UpdateBoundPod(state::MakePodInfo(std::move(evicted)));
    updated = true;
  }
  if (updated) scheduler_.queue().MoveOnEvent(sched::ClusterEvent::kAssignedPodUpdate);
  if (options_.record && !entry.victims.empty()) result_.preemptions.push_back(std::move(entry));
}

void ClusterSimulation::ClearNomination(const state::PodInfoPtr& pod) {
  scheduler_.nominator().DeleteNominatedPod(pod->uid());
  model::Pod cleared = pod->pod;
  cleared.nominated_node_name.clear();
  scheduler_.queue().Update(state::MakePodInfo(std::move(cleared)));
  scheduler_.NominationLeft(pod->pod);
  if (options_.record) PlanFor(pod->pod).nominated_node = "";
}

void ClusterSimulation::TerminateDue() {
  while (!terminations_.empty() && terminations_.top().at <= clock_.Now()) {
    const std::string uid = terminations_.top().uid;
    terminations_.pop();
    state::PodInfoPtr pod = scheduler_.cache().FindPod(uid);
    if (!pod) continue;
    (void)scheduler_.DeleteBoundPod(uid);
    if (!pdb_status_.empty()) pdb_status_.Forget(uid);
    ++cluster_version_;
    AddEvent("Normal", "Killing", pod->pod, "Stopping container (grace period over)");
    if (options_.on_terminated) options_.on_terminated(pod->pod);
  }
}

Status ClusterSimulation::UpdateNode(model::Node node) {
  ARBITER_RETURN_IF_ERROR(scheduler_.cache().UpdateNode(std::move(node)));
  ++cluster_version_;
  scheduler_.queue().MoveOnEvent(sched::ClusterEvent::kNodeUpdate);
  return Status::Ok();
}

Status ClusterSimulation::RemoveBoundPod(const std::string& uid) {
  ARBITER_RETURN_IF_ERROR(scheduler_.DeleteBoundPod(uid));
  if (!pdb_status_.empty()) pdb_status_.Forget(uid);
  ++cluster_version_;
  return Status::Ok();
}

void ClusterSimulation::RemovePendingPod(const std::string& uid) {
  scheduler_.nominator().DeleteNominatedPod(uid);
  scheduler_.queue().Delete(uid);
  attempted_at_.erase(uid);
  if (!pdb_status_.empty()) pdb_status_.Forget(uid);
}

StatusOr<std::optional<sched::CycleOutcome>> ClusterSimulation::StepUntil(Timestamp limit, bool* blocked) {
  *blocked = false;
  TerminateDue();
  std::optional<sched::CycleOutcome> out = scheduler_.ScheduleOne();
  if (out) {
    if (out->scheduled && out->pod) attempted_at_.erase(out->pod->uid());
    for (const auto& m : out->members) {
      if (m.scheduled && m.pod) attempted_at_.erase(m.pod->uid());
    }
    Record(*out);
    return out;
  }
  // Unlike Step, no settling test: the caller's changes keep coming, and a pod waits for the
  // events and wake-ups a live scheduler would see.
  Timestamp next = limit;
  if (!terminations_.empty()) next = std::min(next, terminations_.top().at);
  if (std::optional<Timestamp> wake = scheduler_.queue().NextWakeup(); wake && *wake > clock_.Now()) {
    next = std::min(next, *wake);
  }
  if (next >= limit) {
    *blocked = true;
    return std::optional<sched::CycleOutcome>();
  }
  // A termination due now (a victim with no grace period) is carried out by the next call.
  clock_.AdvanceTo(next);
  return std::optional<sched::CycleOutcome>();
}

StatusOr<std::optional<sched::CycleOutcome>> ClusterSimulation::Step(bool* idle) {
  *idle = false;
  TerminateDue();
  std::optional<sched::CycleOutcome> out = scheduler_.ScheduleOne();
  if (out) {
    if (++cycles_ > options_.max_cycles) {
      return Status(StatusCode::kInternal, "the simulation did not settle within " +
                                               std::to_string(options_.max_cycles) + " scheduling cycles");
    }
    Record(*out);
    return out;
  }
  // Nothing is ready now. Victims still terminating will free room: run the clock to the next,
  // or to an earlier backoff expiry (upstream retries a failed pod group at each expiry, event or
  // not, and those retries lengthen its backoff: where it stands when the room frees decides who
  // takes it). Retries are followed only over the last kBackoffHorizon before a termination; an
  // earlier stretch (a grace period of hours) is crossed at once.
  if (!terminations_.empty()) {
    constexpr Duration kBackoffHorizon = 10 * kMinute;
    const Timestamp next_termination = terminations_.top().at;
    Timestamp next = next_termination;
    if (std::optional<Timestamp> wake = scheduler_.queue().NextBackoffExpiry();
        wake && *wake > clock_.Now() && *wake < next && next_termination - *wake <= kBackoffHorizon) {
      next = *wake;
    }
    clock_.AdvanceTo(next);
    return std::optional<sched::CycleOutcome>();
  }
  // Pods still waiting were last tried against some cluster state; if the cluster changed since,
  // let time run to the next wake-up (backoff expiry or the unschedulable pool's leftover flush)
  // and try again. Otherwise nothing more can change.
  bool stale = false;
  for (const auto& [uid, version] : attempted_at_) {
    if (version < cluster_version_ && scheduler_.queue().Contains(uid)) stale = true;
  }
  std::optional<Timestamp> wake = scheduler_.queue().NextWakeup();
  if (!stale || !wake) {
    *idle = true;
    result_.end = clock_.Now();
    if (const auto* m = scheduler_.preemption_metrics()) result_.preemption_metrics = *m;
    if (const auto* m = scheduler_.workload_preemption_metrics()) result_.workload_preemption_metrics = *m;
    RecordNeverTried();
    return std::optional<sched::CycleOutcome>();
  }
  clock_.AdvanceTo(*wake);
  for (auto& [uid, version] : attempted_at_) version = cluster_version_;  // one retry per change
  return std::optional<sched::CycleOutcome>();
}

Status ClusterSimulation::RunUntilIdle() {
  bool idle = false;
  while (!idle) {
    auto out = Step(&idle);
    if (!out.ok()) return out.status();
    if (!*out || !options_.explain) continue;
    if (options_.on_cycle) {
      options_.on_cycle(**out);
    } else {
      result_.cycles.push_back(std::move(**out));
    }
  }
  return Status::Ok();
}

}  // namespace arbiter::sim
