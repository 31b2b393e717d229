// The running control plane behind `arbiter serve`: a loop over the store's informers whose
// passes run, in order, each job in its own unit:
//   1. the simulated nodes (node_simulator.h): nodes report Ready, bound pods start Running,
//      terminating pods disappear when their grace period ends;
//   2. the simulated kubelets' node-pressure evictions (pressure_eviction.h);
//      (1 and 2 are the node agents, node_agents.h, with their own view of the store; they may
//      run on a thread of their own instead, see LoopOptions::node_thread)
//   3. the controllers (LoopOptions::controllers, the ControllerManager of
//      src/arbiter/controllers), which write through the API;
//   4. the scheduling pass (live_scheduler.h): the changes since the last pass go to one
//      long-lived Scheduler, whose decisions are written as bindings (conditional, never twice),
//      nominations, evictions of victims with a DisruptionTarget condition, and group
//      conditions;
//   5. the events' TTL (event_recorder.h, which also writes and correlates every event, on a
//      thread of its own in serve).
// The writes of the first two jobs, and then of the third, are queued in one WriteBatch and
// committed one store transaction per flush (write_batch.h). The scheduler metrics are in
// metrics.h.
//
// Everything the scheduler knows comes from the store: a restart (or a new leader) rebuilds it
// from the informers, so a pod bound before the crash stays bound and a nomination or an eviction
// in flight is honoured.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "arbiter/base/time.h"
#include "arbiter/controlplane/decode_cache.h"
#include "arbiter/controlplane/event_recorder.h"
#include "arbiter/controlplane/live_scheduler.h"
#include "arbiter/controlplane/metrics.h"
#include "arbiter/controlplane/node_agents.h"
#include "arbiter/controlplane/write_batch.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/store/informer.h"
#include "arbiter/store/store.h"

namespace arbiter::controlplane {

// A job the loop runs each pass after the node agents and before scheduling, over informers the
// loop keeps for it (the controllers: controller_manager.h).
class LoopJob {
 public:
  virtual ~LoopJob() = default;
  // The resources it reads: the loop keeps an informer for each.
  virtual std::set<std::string> Watched() const = 0;
  // Called once, with the loop's informers (synced before each RunOnce) and event recorder.
  virtual void Attach(const std::map<std::string, store::Informer*>& informers, EventRecorder& events) = 0;
  virtual Status RunOnce() = 0;
  // Leadership lost.
  virtual void Reset() = 0;
};

struct LoopOptions {
  bool simulate_nodes = true;  // off: real node agents report pod status themselves
  // The simulated node agents run on a thread of their own (node_agents.h) while this replica
  // leads; off (serve's setting), each pass runs them first, on the loop's thread. On this
  // 2-core machine the thread lowers the binding lag but costs the API's creates and preemption
  // throughput the CPU it takes (docs/benchmarks.md).
  bool node_thread = false;
  NodeSimOptions nodes;        // how the simulated nodes look (addresses, leases, heartbeats)
  // Events are deleted this long after they last happened (kube-apiserver's --event-ttl); the
  // sweep runs once a minute.
  Duration event_ttl = 60 * kMinute;
  bool schedule = true;
  // The scheduler's profile (its schedulerName names its events' component too).
  model::SchedulerConfig scheduler;
  // Events older than event_ttl are deleted (kube-apiserver's job, which serve does); off for a
  // scheduler of another server's cluster.
  bool expire_events = true;
  // Events are written by the recorder's own thread while the loop goes on (serve's setting, as
  // client-go's broadcaster); off, each pass writes its events before it returns (tests).
  bool background_events = false;
  // The store commits a pass's writes on a writer thread while the next pass runs; off (serve's
  // setting), each pass's writes are committed before it returns. Not yet for serve: under
  // preemption at 1000 nodes a victim's eviction was lost (see WriteBatch) and its preemptor
  // waited in the unschedulable pool.
  bool async_writes = false;
  uint64_t seed = 0;
  // Run each pass before scheduling, on this replica only while it leads; may be null.
  LoopJob* controllers = nullptr;
  // The simulated kubelets' eviction thresholds (node pressure, from PodMetrics usage).
  model::KubeletConfig kubelet = model::KubeletConfig::Defaults();
  // Where the dashboard reads the scheduler's queue and preemptions; may be null.
  SchedulerActivity* activity = nullptr;
  // Receives one structured line per decision worth logging (preemptions); may be empty.
  std::function<void(const std::string& msg, const std::string& kv)> log;
};

class ControlLoop {
 public:
  ControlLoop(store::Store& store, const Clock& clock, LoopOptions options);
  ~ControlLoop();  // writes still in flight are finished first
  // One pass: node simulation, then scheduling. Returns the first store error, if any.
  Status RunOnce();
  LoopMetrics& metrics() { return metrics_; }
  // Prometheus text for the scheduler metrics (kube-scheduler's names).
  std::string MetricsText() const;
  // Leadership lost: the live scheduler is dropped and rebuilt from the store when it returns.
  void Pause();
  // Calls `notify` (from a writer's thread) when an object the loop watches may have changed,
  // so that the loop's driver can run the next pass at once instead of at its next tick.
  void SetChangeNotifier(const std::function<void()>& notify);

 private:
  Status Schedule();
  static std::map<std::string, std::unique_ptr<store::Informer>> MakeInformers(store::Store& store,
                                                                               const LoopJob* controllers);

  store::Store& store_;
  const Clock& clock_;
  LoopOptions options_;
  WriteBatch batch_;  // the scheduler's writes and the events, one store transaction per flush
  LoopMetrics metrics_;
  EventRecorder events_;
  std::map<std::string, std::unique_ptr<store::Informer>> informers_;  // by resource
  DecodeCache decoded_;
  NodeAgents agents_;  // after events_, which they record to, and the informers they may share
  bool agents_active_ = false;
  // When the last pass began: its writes are read by the next pass's controllers and scheduler.
  std::optional<std::chrono::steady_clock::time_point> last_pass_start_;
  LiveScheduler live_;  // after metrics_, which it updates
};

}  // namespace arbiter::controlplane
