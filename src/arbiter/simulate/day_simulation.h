// `arbiter simulate`: what a preemption policy does to a cluster over time.
//
// A virtual clock runs through the workload's arrivals. Each arrival's pods are made by the
// workload controllers' own rules (controllers/workload_objects.h: a Job's pods, a Deployment's
// ReplicaSet and its pods), decoded and admitted as `plan` admits its input (priorities from the
// cluster's PriorityClasses), and scheduled by the same Scheduler, plugins and profile as `plan`
// (sim::ClusterSimulation), including Arbiter's opt-in preemption options. Then, on that clock:
//
//   * a pod runs for its run time from the moment it is bound, then completes and leaves;
//   * a victim of preemption is marked for deletion (DisruptionTarget), keeps its room through its
//     grace period, then leaves; its controller makes a replacement at once, as the ReplicaSet and
//     Job controllers do for a terminating pod (a bare Pod is not replaced), and the replacement
//     starts its work again from nothing (a Job's generated pods carry a podFailurePolicy that
//     ignores disruptions, so preemption never fails a Job);
//   * a Deployment is deleted when its lifetime ends: its running pods leave, its pending ones are
//     withdrawn;
//   * a Gang is a Job whose pods form one PodGroup (gang minCount = its count), scheduled and
//     preempted as workload-aware preemption does.
//
// Every decision is a function of the cluster, the workload, the configuration and the seed: the
// report is byte-identical for identical inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "arbiter/base/status.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/simulate/workload.h"

namespace arbiter::simulate {

struct SimulateOptions {
  int64_t duration_seconds = 24 * 3600;
  uint64_t seed = 1;
  // Utilisation samples for the report's plot; 0: 288 over the duration (5 minutes of a day).
  int64_t sample_seconds = 0;
  // Told of progress now and then (every 2,000 cycles or changes), for a terminal's status line.
  struct Progress {
    int64_t simulated_seconds = 0;
    int64_t duration_seconds = 0;
    int64_t pods = 0;     // made so far
    int64_t pending = 0;  // waiting to be scheduled now
  };
  std::function<void(const Progress&)> progress;
  // Node failures, per node per day (0: none): a failed node is tainted unreachable (NoSchedule
  // and NoExecute, as the node lifecycle controller taints it); its pods' work is lost at once,
  // and they are evicted when their toleration of unreachable ends (300 s, the default the API
  // gives every pod), which is when their controllers replace them. It is repaired (the taints
  // removed) `node_repair_seconds` after it failed. Failures are a Poisson process per node.
  double node_failures_per_day = 0;
  int64_t node_repair_seconds = 3600;
  // The engine's shortcuts that change no decision (verdict and dry-run reuse, the resource-only
  // dry run, dry runs skipped where no room can be made; docs/design.md). Off only to test that
  // the report is the same without them.
  bool fast_paths = true;
};

struct Percentiles {
  double p50 = 0, p95 = 0, p99 = 0;
};

// One priority band's statistics (or the totals'): pods are every pod made, replacements
// included; `preemptions` counts the band's pods that were victims, `preemptionsCaused` the
// victims its pods or groups evicted; lost work is each victim's CPU request times how long it
// had run when it was marked for deletion.
struct BandReport {
  std::string name;
  int32_t priority = 0;
  int64_t pods = 0;
  int64_t scheduled = 0;          // bound at least once (each pod is bound at most once)
  int64_t completed = 0;          // ran to the end of its run time (or to its Deployment's end)
  int64_t withdrawn = 0;          // deleted while pending (its Deployment ended)
  int64_t running_at_end = 0;
  int64_t pending_at_end = 0;
  Percentiles pending_seconds;    // creation to binding, over the pods bound
  int64_t node_failure_losses = 0;  // running when their node failed (work lost, replaced)
  int64_t preemptions = 0;        // suffered
  int64_t preemptions_caused = 0;
  double lost_cpu_seconds = 0;
  int32_t cascade_depth = 0;      // the longest chain ending in a preemption its pods caused
};

struct UtilisationSample {
  int64_t seconds = 0;  // after the start
  double cpu = 0;       // requested CPU of bound pods over allocatable
};

struct Report {
  std::string config;  // which configuration (a file's name, or "upstream defaults")
  int64_t nodes = 0;
  int64_t duration_seconds = 0;
  int64_t arrivals = 0;
  std::vector<BandReport> bands;  // highest priority first
  BandReport totals;
  double utilisation = 0;  // time-weighted mean of requested CPU over allocatable
  int64_t node_failures = 0;
  std::vector<UtilisationSample> samples;
  int64_t cycles = 0;
};

// The cluster: nodes, PriorityClasses, namespaces, budgets and the scheduler's configuration
// (its pods, if any, are ignored: the workload brings the pods). `config_name` names it in the
// report.
// What every engine checks before a day is spent: a positive duration, nodes, and every class an
// arrival names.
Status CheckSimulation(const manifest::ClusterObjects& cluster, const std::vector<Arrival>& arrivals,
                       const SimulateOptions& options);

StatusOr<Report> Simulate(const manifest::ClusterObjects& cluster, const std::string& config_name,
                          const std::vector<Arrival>& arrivals, const SimulateOptions& options);

}  // namespace arbiter::simulate
