// Benchmark scenarios as files (bench/scenarios/*.yaml), in the manner of kube-scheduler's
// scheduler_perf: a list of workload steps run through a ClusterSimulation on a virtual clock,
// one of which is measured.
//
//   name: SchedulingBasic/5000Nodes_10000Pods
//   labels: [performance]                       # short (run in CI) and/or performance
//   anchor: {system: "...", podsPerSecond: 680} # the figure the result is compared with
//   expect: {scheduled: 10000}                  # invariants checked after the run (optional)
//   steps:
//   - createNodes: {count: 5000, cpu: "4", memory: 32Gi, maxPods: 110}
//   - createPods: {count: 1000, cpu: 100m, memory: 500Mi}
//   - barrier: {}                               # schedule until nothing more can change
//   - createPodGroups: {count: 10, minCount: 5000, priority: 0, disruptionMode: single}
//   - createPods: {count: 10000, cpu: 100m, priority: 10, gracePeriodSeconds: 0,
//                  runningPerNode: 4,           # bound directly, N per node, instead of pending
//                  podsPerGroup: 5000,          # members of the groups created last, in order
//                  measure: true}               # the run that follows is measured
//   - barrier: {}
//   - nomadPlacement: {nodes: 5000}             # Nomad's planner instead of the steps above
//
// Every problem in a file is reported with the file, the step and the field.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "arbiter/base/json.h"

#include "arbiter/base/status.h"

namespace arbiter::bench {

// Runs the scenario in `path`; returns its JSON result (pods/s, latencies, preemptions, RSS,
// anchor and ratio, and `expectations` with any that failed).
StatusOr<nlohmann::ordered_json> RunScenarioFile(const std::string& path,
                                                 const std::function<void(size_t, size_t)>& progress);
// The labels of a scenario file (to select `short` ones).
StatusOr<std::vector<std::string>> ScenarioLabels(const std::string& path);

}  // namespace arbiter::bench
