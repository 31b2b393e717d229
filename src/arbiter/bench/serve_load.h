// The serve benchmarks of `arbiter bench --scenario Serve*`: each run starts a fresh
// `arbiter serve` (this binary) on a free loopback port with a store of its own (SQLite in a
// temporary directory, or a fresh single etcd member), creates the cluster through the HTTP API
// as any client would, then creates the measured pods over several keep-alive connections as fast
// as the API takes them, and follows the bindings on a watch.
//
//   * ServeSchedulingBasic: NODES nodes (4 CPU, 32Gi), INITIAL pods already bound, then MEASURED
//     pods of 10m / 10Mi.
//   * ServePreemptionBasic: NODES nodes full of 4 x NODES low-priority pods of 1 CPU, then
//     MEASURED preemptors of 3970m at a higher priority, each of which must evict the four pods
//     of one node.
//   * ScheduleSchedulingBasic, SchedulePreemptionBasic: the same, with the server started
//     `--no-scheduler` (or any API server, by kubeconfig) and the scheduling done by a scheduler
//     process of its own against the server's API: `arbiter schedule`, or kube-scheduler, with
//     the same client rate limits.
//
// Reported per run: creates/s, the lag from the last create's acknowledgement until the last
// measured pod is bound, pods (or preemptors) bound per second from the first create, and the
// server's peak RSS (VmHWM).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "arbiter/base/status.h"

namespace arbiter::bench {

struct ServeLoadOptions {
  std::string scenario = "ServeSchedulingBasic";  // or ServePreemptionBasic
  std::string arbiter;      // the arbiter binary to start as the server
  std::string store = "sqlite";  // or "etcd" (starts `etcd` from PATH)
  size_t nodes = 5000;
  size_t initial_pods = 0;  // ServeSchedulingBasic: pods bound before measuring
  size_t measured_pods = 10000;
  size_t connections = 16;
  double timeout_seconds = 300;  // for each wait
  std::vector<std::string> serve_flags;  // given to `arbiter serve` as they are
  // While the measured pods are created and bound, a client of its own lists the unbound pods
  // (fieldSelector=spec.nodeName=) every this many seconds, as controllers and dashboards poll.
  double poll_unbound_seconds = 0;
  std::vector<std::string> scheduler_flags;  // Schedule*: given to the scheduler as they are
  // Schedule*: the API server of this kubeconfig instead of a fresh `arbiter serve` (which must
  // hold none of the run's objects and keep the nodes it is given Ready: `arbiter nodes`, as in
  // scripts/upstream-cluster.sh). Empty: a fresh server per run.
  std::string kubeconfig;
  // Schedule*: "arbiter" (`arbiter schedule`) or "kube" (kube-scheduler, the binary kube_scheduler).
  std::string scheduler = "arbiter";
  std::string kube_scheduler = "kube-scheduler";
  // Schedule*: the scheduler's client rate limits, the same for either (unset: each its default,
  // 50 and 100 for both).
  std::optional<double> scheduler_qps;
  std::optional<int> scheduler_burst;
};

struct ServeLoadResult {
  size_t created = 0;
  double creates_per_second = 0;
  double lag_seconds = 0;        // last create acknowledged -> last measured pod bound
  double bound_per_second = 0;   // measured pods bound per second, from the first create
  size_t victims_deleted = 0;    // ServePreemptionBasic: low-priority pods gone
  size_t victims_with_condition = 0;  // of those, deleted with the DisruptionTarget condition
  size_t preempted_events = 0;        // ServePreemptionBasic: Preempted events in the namespace at the end
  size_t polls = 0;                   // with poll_unbound_seconds: lists made, and the slowest
  double slowest_poll_seconds = 0;
  double peak_rss_mib = 0;       // the server's VmHWM
  double scheduler_peak_rss_mib = 0;  // Schedule*: the scheduler's VmHWM
  // The server's scheduling attempts over the whole run (scheduler_schedule_attempts_total by
  // result) and its preemption attempts: how much work each measured pod cost.
  uint64_t attempts_scheduled = 0, attempts_unschedulable = 0, preemption_attempts = 0;
  // The control loop's store writes over the whole run, and the batches they took.
  uint64_t loop_writes = 0, loop_batches = 0;
};

// `progress` receives one line of what the run is doing.
StatusOr<ServeLoadResult> RunServeLoad(const ServeLoadOptions& options,
                                       const std::function<void(const std::string&)>& progress);

}  // namespace arbiter::bench
