// Pod group benchmarks in the shapes of kube-scheduler's 2026 scheduler_perf suites
// (docs/upstream-rules.md Part D §4.4-4.6), run through a ClusterSimulation:
//   * GangScheduling: default nodes; `gangs` PodGroups of `pods_per_gang` pods of 100m (gang
//     minCount = pods per gang); measures pods/s.
//   * GangPreemptionBasic: 100 nodes each running 10 priority-0 pods of 40m; `gangs` preemptor
//     gangs of `pods_per_gang` pods at 3970m (priority 10000): every victim must go.
//   * GangPreemptionPodGroups: 100 nodes running `victim_gangs` low gangs (priority 1000, one
//     600m pod per node per gang, five per node); preemptor gangs at 3500m (priority 9999999).
//   * PreemptionPodGroupDisruptionMode (pod preempts PodGroup): 1000 nodes, 1000 low gangs of 10
//     pods at 300m spread ten per node over ten nodes each, in mode none (plain pods), single or
//     all; then 100 lone preemptors of 3970m at priority 10000.
// Decision latency is the wall time of a cycle in which a preemption engine ran.
#pragma once

#include <functional>
#include <string>

#include "arbiter/bench/preemption_scenarios.h"

namespace arbiter::bench {

struct GangBenchOptions {
  size_t nodes = 5000;
  size_t gangs = 10;
  size_t pods_per_gang = 5000;
  std::string mode = "single";  // PreemptionPodGroupDisruptionMode: none, single or all
  uint64_t seed = 0;
};

StatusOr<PreemptionBenchResult> RunGangScheduling(const GangBenchOptions& options,
                                                  const std::function<void(size_t, size_t)>& progress);
StatusOr<PreemptionBenchResult> RunGangPreemptionBasic(const GangBenchOptions& options,
                                                       const std::function<void(size_t, size_t)>& progress);
StatusOr<PreemptionBenchResult> RunGangPreemptionPodGroups(const GangBenchOptions& options,
                                                           const std::function<void(size_t, size_t)>& progress);
StatusOr<PreemptionBenchResult> RunPreemptionPodGroupDisruptionMode(
    const GangBenchOptions& options, const std::function<void(size_t, size_t)>& progress);

}  // namespace arbiter::bench
