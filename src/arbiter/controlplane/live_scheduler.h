// The scheduling pass of `arbiter serve`: one long-lived sched::Scheduler (the class `plan`
// drives on a virtual clock) fed by the informers' changes, as kube-scheduler's event handlers
// feed its cache and queue, and an actuator that writes its decisions to the store.
//
//   * Each pass reconciles only the objects that changed since the last one: nodes are added,
//     updated or removed in the cache; a pod is added to the queue while pending, to the cache
//     once bound, updated or removed as the store says. The queue keeps its pools between passes
//     on the injected clock (backoff 1 -> 10 s, the unschedulable pool with event-driven requeue
//     and the 5-minute flush, nominations).
//   * Decisions are the cycles' typed outcomes, queued in a WriteBatch that the pass flushes in one
//     store transaction (the cycles do not wait for the store): a bind is a conditional update of the
//     pod (never bound twice); a failure as the PodScheduled condition and a FailedScheduling
//     event (once per distinct message); a nomination as status.nominatedNodeName; victims (the
//     PreemptionActuator calls, made inside the cycle) get the DisruptionTarget condition and a
//     graceful deletion, and the cache sees them terminating at once.
//   * A bind assumes the pod in the cache; the store's echo confirms it. A bind the store refuses
//     (the pod changed or went away meanwhile) is forgotten: the pod is taken from the cache,
//     reconciled again from the store's current version and, still pending, waits out its
//     backoff in backoffQ, as upstream handles a binding error.
//   * PodGroups, CompositePodGroups, Workloads and PriorityClasses change rarely and decide the
//     queue's units and group priorities: a change to any of them (a group's own status aside)
//     rebuilds the Scheduler from the informers (the engine has no group removal yet).
//   * After a group cycle, the root group's <Kind>InitiallyScheduled condition is written as
//     `plan` reports it: False / Unschedulable with the cycle's message until a cycle places the
//     quorum, then True / Scheduled for good.
//
// Not thread-safe: the control loop's thread drives it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "arbiter/base/time.h"
#include "arbiter/controlplane/scheduler_activity.h"
#include "arbiter/controlplane/write_batch.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/sched/cycle/scheduler.h"
#include "arbiter/sched/preemption/disruption.h"
#include "arbiter/sched/preemption/pdb_status.h"
#include "arbiter/sched/preemption/preemption_history.h"
#include "arbiter/store/informer.h"
#include "arbiter/store/store.h"

namespace arbiter::controlplane {

struct LoopMetrics;

// Writes one event (namespace, pod, uid, type, reason, message).
using RecordEventFn = std::function<Status(const std::string& ns, const std::string& pod, const std::string& uid,
                                           const std::string& type, const std::string& reason,
                                           const std::string& message)>;
// The decoded form of a stored object (cached by the caller per revision, pods excepted: the
// reference is read at once, before the next call).
using DecodeFn = std::function<const manifest::LoadResult&(const store::Object&)>;
using Informers = std::map<std::string, std::unique_ptr<store::Informer>>;
// The keys changed since the last pass, by resource.
using Changes = std::map<std::string, std::set<store::Informer::Key>>;

struct LiveSchedulerOptions {
  // The profile: pods naming its schedulerName are scheduled; others only take room.
  model::SchedulerConfig config;
  uint64_t seed = 0;
  // The most cycles one pass runs before it returns (the loop's other jobs run in between).
  size_t max_cycles_per_pass = 20000;
  std::function<void(const std::string& msg, const std::string& kv)> log;
  // Where the dashboard reads the queue and the preemptions from; may be null.
  SchedulerActivity* activity = nullptr;
};

class LiveScheduler final : public sched::preemption::PreemptionActuator {
 public:
  // Writes go to `batch`, flushed at the end of each pass (and whenever it is full).
  LiveScheduler(store::Store& store, WriteBatch& batch, const Clock& clock, LiveSchedulerOptions options,
                LoopMetrics& metrics, DecodeFn decode, RecordEventFn record_event);
  ~LiveScheduler() override;

  // Applies `changes` (read from `informers`), then runs cycles until no pod is ready (or the
  // per-pass budget is spent), writing each decision. Returns the first store error.
  Status Pass(const Informers& informers, const Changes& changes);
  // Drops the scheduler (leadership lost); the next pass builds it afresh from the informers.
  void Reset();
  // Pods waiting in the queue, by pool.
  struct QueueSizes {
    size_t active = 0, backoff = 0, unschedulable = 0, gated = 0;
  };
  QueueSizes queue_sizes() const;

  // The queue as the dashboard lists it: every waiting pod (a group's members one by one).
  std::vector<QueuedPodView> QueueView() const;

  // PreemptionActuator.
  std::vector<sched::preemption::PdbView> Pdbs() const override;
  void Preempt(const state::PodInfo& preemptor, const std::string& node,
               const std::vector<sched::preemption::Eviction>& victims) override;
  void PreemptForGroup(const std::string& group, std::string_view kind,
                       const std::vector<sched::preemption::Eviction>& victims) override;
  void ClearNomination(const state::PodInfoPtr& pod) override;
  const sched::preemption::PreemptionHistory* History() const override { return &history_; }

 private:
  enum class Place { kNone, kPending, kBound };
  struct Tracked {
    Place place = Place::kNone;
    state::PodInfoPtr info;  // as last given to the scheduler
  };
  using Key = store::Informer::Key;

  Status Build(const Informers& informers);
  // Brings the scheduler's view of one pod in line with `stored` (nullptr: gone). A pod that
  // becomes pending after `backoff_attempts` > 0 attempts (a refused binding) waits in backoffQ.
  void ReconcilePod(const Key& key, const store::Object* stored, int backoff_attempts = 0);
  void ReconcileNode(const std::string& name, const store::Object* stored);
  // The newest version of an object known here: a write still queued, this scheduler's own write
  // whose echo has not arrived, or the informer's.
  const store::Object* Current(const std::string& resource, const Key& key) const;
  const store::Object* Current(const Key& key) const { return Current("pods", key); }
  // After a write the store refused as stale: the object as the store has it now, kept as this
  // scheduler's own until its echo arrives (nullptr: gone).
  StatusOr<const store::Object*> Refetch(const std::string& resource, const Key& key);
  Status Actuate(const sched::CycleOutcome& out);
  // One pod's outcome (a lone pod's, or a group member's): nomination, then bind or failure.
  Status ActuatePod(const sched::CycleOutcome& out);
  Status Bind(const sched::CycleOutcome& out);
  Status Fail(const sched::CycleOutcome& out);
  void Nominate(const state::PodInfo& pod, const std::string& node);
  void Evict(const std::vector<sched::preemption::Eviction>& victims, const std::string& message);
  // Tells the dashboard about one preemption (a pod's, or a group's with no node).
  void RecordPreemption(const std::string& preemptor, std::string_view kind, const std::string& uid,
                        const std::string& node, const std::vector<sched::preemption::Eviction>& victims);
  // Writes one victim's DisruptionTarget condition and its deletion (graceful, or at once), on
  // the newest version known; a write that loses a race is made again on the store's current
  // version (up to kEvictionRetries times), so that the store agrees with the cache, which holds
  // the victim terminating from the cycle on.
  static constexpr int kEvictionRetries = 5;
  // The root group's <Kind>InitiallyScheduled condition after a group cycle (kind: PodGroup or
  // CompositePodGroup); retried like an eviction.
  void WriteGroupCondition(const std::string& group, const std::string& kind, bool scheduled,
                           const std::string& message, int retries);
  void WriteEviction(const Key& key, const std::string& uid, int64_t grace, const std::string& message, Timestamp now,
                     int retries);
  // The thrash guard (maxPreemptionsPerPod): records the preemption of `victim`'s lineage (its
  // controller's uid) at `now`, and writes the lineage's times on the controller as the
  // annotation arbiter.dev/preemptions (merged with what it holds; retried like an eviction).
  void RecordLineagePreemption(const store::Object& victim, const std::string& owner_uid, Timestamp now);
  // With the thrash guard on: the record starts from the controllers' annotations (when built).
  void SeedPreemptionHistory();
  void WriteLineageAnnotation(const std::string& resource, const Key& owner, const std::string& owner_uid, int retries);
  // Queues `next` over `cur` (conditional on its revision); once written, it is remembered until
  // the echo, and `done` sees the result. A write the store refuses as stale or gone is no error.
  // `intent` says what the write is (a typed write, store::WriteOp::Intent): a binding, a status
  // change, an eviction.
  void Write(const store::Object& cur, nlohmann::json next, store::WriteOp::Intent intent,
             WriteBatch::Done done = nullptr);
  // A binding the store refused after `attempts` attempts: the pod leaves the cache and is
  // reconciled from the store's current version.
  void Forget(const Key& key, int attempts);
  // A write the server refused (invalid, forbidden) or did not take (unreachable): counted and
  // logged, not a pass error.
  Status ReportRefused(const Status& st);
  // A write that lost a race (the object changed or went away): settled by its next event.
  static bool Lost(const Status& st);
  // A write the API server refused (invalid, or forbidden to this scheduler): reported, and the
  // pass goes on; the object's next change is reconciled as any other.
  static bool Refused(const Status& st);
  // The budgets from the informer's PodDisruptionBudgets (after a change to any of them).
  void LoadBudgets(const Informers& informers);
  // A claim, volume, storage class or CSI node as the store has it now (nullptr: gone), into the
  // scheduler's storage index.
  void ReconcileStorage(const std::string& resource, const store::Informer::Key& key, const store::Object* o);
  // Writes the volume bindings the scheduler reserved for `pod` (before its own binding).
  void WriteVolumeBindings(const model::Pod& pod);

  store::Store& store_;
  WriteBatch& batch_;
  const Clock& clock_;
  LiveSchedulerOptions options_;
  LoopMetrics& metrics_;
  DecodeFn decode_;
  RecordEventFn record_event_;

  const Informers* informers_ = nullptr;  // during a pass
  std::unique_ptr<sched::Scheduler> scheduler_;
  model::SchedulerConfig config_;
  std::map<Key, Tracked> pods_;
  // Own writes whose echo has not arrived, by resource.
  std::map<std::string, std::map<Key, store::ObjectPtr>, std::less<>> written_;
  // Each group's (and Workload's) object without its status, as the scheduler was built from it.
  std::map<std::pair<std::string, Key>, std::string> group_specs_;
  std::map<std::string, std::set<Key>> waiting_for_node_;  // bound pods whose node is not known yet
  // The budgets, counted over pods_ (known), the cache (healthy) and this scheduler's evictions.
  sched::preemption::PdbStatusTracker pdb_status_;
  sched::preemption::PreemptionHistory history_;  // the thrash guard's record, by lineage
  std::map<Key, std::string> last_failure_;             // the last FailedScheduling message written
};

}  // namespace arbiter::controlplane
