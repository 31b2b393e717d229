// `arbiter simulate --nomad`: the same day under Nomad's semantics (docs/upstream-rules.md Part C).
//
// The cluster's nodes become Nomad client nodes (1 CPU = 1000 MHz of CpuShares, memory and
// ephemeral storage in MiB; an unschedulable node is ineligible). Each arrival becomes a Nomad job
// of one task group of one task asking for the arrival's CPU and memory:
//
//   Deployment  a service job of `count` allocations, stopped when its lifetime ends;
//   Job, Gang   a batch job of `count` allocations (Nomad has no gangs: each allocation is placed
//               on its own); a complete allocation is not placed again;
//   Pod         a batch job of one allocation.
//
// Job priorities are Nomad's 1-100: the cluster's PriorityClasses, lowest value first, are spread
// evenly over 10..90 (NomadPriorities; one class: 50); a job without a class has Nomad's default,
// 50. With the generated Borg bands that is free 10, beb 30, mid 50, production 70, monitoring 90,
// so that each band may preempt every lower one under the delta-10 rule.
//
// Then, on the virtual clock, as Nomad's servers and clients do:
//
//   * Evaluations. A job's registration, a preemption of one of its allocations and a node failure
//     that loses one each make an evaluation for the job (one per job at a time). The eval broker
//     hands them out highest priority first, oldest first within a priority. Each runs Nomad's
//     scheduler for the job's type (nomad::PlanJob: the generic scheduler's two passes, the second
//     with preemption when the job type's preemption is on), which places the missing allocations.
//   * Blocked evaluations. An evaluation that could not place everything blocks, and is unblocked
//     when capacity frees: an allocation completes or stops, a victim's client reports it stopped,
//     a node is repaired. (All nodes here are of one computed class with no constraints, so every
//     blocked evaluation is unblocked.)
//   * Preemption. The plan frees a victim's resources at once (the plan applier counts them as
//     freed); the victim's desired status is `evict`, its work is lost, and its job gets an
//     evaluation (TriggeredBy "preemption") that places a replacement at once: the reconciler
//     ignores evicted allocations, so it is not a reschedule (no reschedule policy, no delay). The
//     preemptor starts once the victims' tasks are killed (kill_timeout, 5 s), and its client's
//     report of the victims stopped unblocks blocked evaluations.
//   * Node failures (--node-failures): a down node's allocations are lost at once and replaced
//     (lost allocations are not rescheduled with a delay either); the node is ineligible until it
//     is repaired.
//
// The report is the Kubernetes engine's (simulate::Ledger): a pod there is an allocation here,
// binding is placement, `cycles` counts evaluations.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "arbiter/base/status.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/nomad/model.h"
#include "arbiter/simulate/day_simulation.h"
#include "arbiter/simulate/workload.h"

namespace arbiter::simulate {

struct NomadSimulateOptions {
  // The scheduler configuration's PreemptionConfig (Nomad's defaults: system jobs only, so that
  // a day of service and batch jobs preempts nothing unless they are turned on).
  nomad::PreemptionConfig preemption;
  int32_t priority_delta = nomad::kDefaultPriorityDelta;
};

// Nomad's job priority for each class (name, value): see above.
std::map<std::string, int32_t> NomadPriorities(const std::vector<std::pair<std::string, int32_t>>& classes);

// Nomad's kill_timeout default: how long a victim's tasks take to stop.
inline constexpr int64_t kNomadKillTimeoutSeconds = 5;

StatusOr<Report> SimulateNomad(const manifest::ClusterObjects& cluster, const std::string& config_name,
                               const std::vector<Arrival>& arrivals, const SimulateOptions& options,
                               const NomadSimulateOptions& nomad);

}  // namespace arbiter::simulate
