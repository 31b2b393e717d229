// The `arbiter plan` simulation: builds a Scheduler from loaded and admitted manifests, puts the
// running pods in the cache and the pending ones in the queue, then runs scheduling cycles on a
// virtual clock until nothing more can change. The result is a function of the input and the
// seed alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "arbiter/base/status.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/sched/cycle/scheduler.h"

namespace arbiter::sim {

struct PlanOptions {
  uint64_t seed = 0;
  bool explain = false;
  // A guard against livelock; a plan that needs more cycles stops with an error.
  size_t max_cycles = 1'000'000;
};

struct PodPlan {
  std::string name;  // namespace/name
  std::string pod_group;  // namespace/name, or "" for a lone pod
  int32_t priority = 0;
  bool scheduled = false;
  std::string node;
  std::optional<std::string> nominated_node;
  std::string message;
  int attempts = 0;
};

struct Victim {
  std::string name;
  std::string node;
  int32_t priority = 0;
  bool violates_pdb = false;
};

struct Preemption {
  std::string preemptor;
  std::string preemptor_kind = "Pod";
  std::optional<std::string> node;
  std::vector<Victim> victims;
};

// An event as the Kubernetes API would record it.
struct Event {
  Timestamp time = 0;
  std::string type;    // Normal or Warning
  std::string reason;  // Scheduled, FailedScheduling, Preempted, Killing
  std::string object;  // "Pod namespace/name"
  std::string message;
};

struct PlanResult {
  Timestamp start = 0;
  Timestamp end = 0;
  std::vector<PodPlan> pods;  // in first-pop order
  std::vector<Preemption> preemptions;
  std::vector<sched::CycleOutcome> cycles;  // every cycle, when explaining
  std::vector<Event> events;
  size_t node_count = 0;
  sched::preemption::PreemptionMetrics preemption_metrics;
};

// REQUIRES: `objects` passed loading and admission without errors.
StatusOr<PlanResult> RunPlan(const manifest::ClusterObjects& objects, const PlanOptions& options);

}  // namespace arbiter::sim
