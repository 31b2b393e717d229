// Preemption benchmarks in the shapes of kube-scheduler's scheduler_perf, run through a
// ClusterSimulation in process:
//   * PreemptionBasic: nodes of 4 CPU / 32Gi / 110 pods, each running 4 low-priority pods of
//     900m (grace period 0); then one high-priority pod per node, each of which must preempt:
//     3970m at priority 10000 (the current template: all 4 victims go) or, in the legacy
//     variant, 3000m at priority 10 (3 of 4 go).
//   * Unschedulable: ordinary pods of 100m / 500Mi, with a 9-CPU priority-10 pod that can
//     never fit interleaved every `unschedulable_every` pods.
// Each prints preemptions per second of wall time, the latency of one preemption decision (a
// scheduling cycle that ran PostFilter), and pods/s.
#pragma once

#include <functional>
#include <string>

#include "arbiter/base/json.h"

#include "arbiter/base/status.h"
#include "arbiter/sim/cluster_simulation.h"

namespace arbiter::bench {

struct PreemptionBenchOptions {
  size_t nodes = 5000;
  bool legacy = false;           // 3000m / priority 10 preemptors
  size_t initial_pods = 100;     // Unschedulable: ordinary pods scheduled first
  size_t measured_pods = 10000;  // Unschedulable: ordinary pods measured
  size_t unschedulable_every = 100;
  uint64_t seed = 0;
};

struct PreemptionBenchResult {
  std::string name;
  size_t nodes = 0;
  size_t preemptors = 0;
  size_t preemptions = 0;
  size_t victims = 0;
  size_t scheduled = 0;
  size_t cycles = 0;
  double seconds = 0;
  double preemptions_per_second = 0;
  double pods_per_second = 0;
  double decision_p50_us = 0;
  double decision_p90_us = 0;
  double decision_p99_us = 0;
  double decision_max_us = 0;
  // scheduler_framework_extension_point_duration_seconds{PostFilter}: mean of PostFilter alone.
  double evaluation_seconds_mean = 0;
  double attempt_p50_us = 0;
  double attempt_p90_us = 0;
  double attempt_p99_us = 0;
  long peak_rss_kib = 0;
  double calibration_ms = 0;
};

// The measured fields of a result as JSON (counts, rates, p50/p90/p99 latencies, RSS,
// calibration), shared by every way a benchmark prints one.
nlohmann::ordered_json ResultFields(const PreemptionBenchResult& r);

// What a measured phase counts, and what it does as pods bind (background churn).
struct MeasureHooks {
  // Whether a bound pod counts as measured (default: every pod).
  std::function<bool(const state::PodInfo&)> counted;
  // Called after every cycle that bound counted pods, with the number bound so far.
  std::function<Status(size_t bound)> after_bound;
};

// Steps `s` until idle, timing every cycle; cycles in which a preemption engine ran are
// decisions. Fills the timing and count fields of `r`.
Status Measure(sim::ClusterSimulation& s, size_t total, const std::function<void(size_t, size_t)>& progress,
               PreemptionBenchResult& r, const MeasureHooks& hooks = {});
// Simulation options for benchmarks: nothing recorded, a wall clock for metrics.
sim::SimulationOptions QuietSimulation(uint64_t seed);

StatusOr<PreemptionBenchResult> RunPreemptionBasic(const PreemptionBenchOptions& options,
                                                   const std::function<void(size_t, size_t)>& progress);
StatusOr<PreemptionBenchResult> RunUnschedulable(const PreemptionBenchOptions& options,
                                                 const std::function<void(size_t, size_t)>& progress);

}  // namespace arbiter::bench
