// `arbiter simulate`'s workloads: what arrives in the simulated cluster, and when.
//
// A workload is a list of arrivals, read from JSON Lines (one object per line; docs/simulate.md
// gives the schema) or generated with the published shape of a trace (GenerateWorkload):
//
//   {"time": 30, "kind": "Job", "name": "etl-7", "priorityClass": "beb", "cpu": "500m",
//    "memory": "1Gi", "runSeconds": 600, "count": 4}
//
//   time          seconds after the simulation's start (arrivals at or after the duration's end
//                 do not arrive)
//   kind          Pod (one pod, not replaced when preempted), Job (count pods, each running
//                 runSeconds; a preempted pod is replaced by the Job controller), Deployment
//                 (count replicas for runSeconds, then deleted; a preempted replica is replaced),
//                 Gang (a Job whose count pods form one PodGroup with gang minCount = count)
//   name          unique among the arrivals (namespace "default", or `namespace`)
//   priorityClass a PriorityClass of the cluster (the generated cluster has the trace's bands)
//   cpu, memory   each pod's requests, as Kubernetes quantities
//   runSeconds    how long each pod runs once started (a Deployment: how long it lives)
//   count         pods (Pod: 1)
//
// Decoding is strict: an unknown field, a wrong type or a value out of range is an error naming
// the file, the line and the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arbiter/base/status.h"

namespace arbiter::simulate {

enum class ArrivalKind { kPod, kJob, kDeployment, kGang };
std::string_view ArrivalKindName(ArrivalKind k);

struct Arrival {
  int64_t time_ms = 0;  // after the start, in milliseconds
  ArrivalKind kind = ArrivalKind::kJob;
  std::string ns = "default";
  std::string name;
  std::string priority_class;
  int64_t milli_cpu = 100;
  int64_t memory_bytes = 0;
  int64_t run_seconds = 60;
  int32_t count = 1;
};

// The most arrivals and pods a workload may hold, and the longest line read.
inline constexpr size_t kMaxArrivals = 10'000'000;
inline constexpr int32_t kMaxCountPerArrival = 100'000;
inline constexpr size_t kMaxLineBytes = 64 * 1024;

// Reads JSON Lines (`name` is the file's name, for messages). Arrivals come back sorted by time,
// input order within a time.
StatusOr<std::vector<Arrival>> ParseWorkload(const std::string& text, const std::string& name);
// One line per arrival, as ParseWorkload reads them.
std::string FormatWorkload(const std::vector<Arrival>& arrivals);

// The bands of a trace: the PriorityClasses a generated workload uses, highest first.
struct Band {
  std::string name;
  int32_t priority = 0;
};

enum class TraceShape { kBorg, kAlibaba };

struct GenerateOptions {
  TraceShape shape = TraceShape::kBorg;
  int64_t pods = 10'000;
  int64_t duration_seconds = 24 * 3600;
  uint64_t seed = 1;
  // The cluster's allocatable CPU in milli-CPU: the generator sizes run times so that the
  // offered load is `load` times it (at 1, work arrives as fast as the cluster can run it: with
  // sizes and arrivals uneven, queues form and priorities and preemption decide who waits).
  int64_t cluster_milli_cpu = 0;
  double load = 0.8;
  // The share of arrivals present at the start (a trace opens on a cluster already at work).
  double initial_share = 0.3;
  // The largest CPU request of a pod (`simulate` gives half of the cluster's largest node).
  int64_t max_milli_cpu = 2000;
};

std::vector<Band> BandsOf(TraceShape shape);
// A seeded synthetic workload of about `pods` pods with the trace's priority-band mix, sizes and
// run times (docs/simulate.md cites the sources of each distribution).
std::vector<Arrival> GenerateWorkload(const GenerateOptions& options);

}  // namespace arbiter::simulate
