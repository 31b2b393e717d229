// `arbiter plan`: builds a ClusterSimulation from loaded and admitted manifests, puts the
// running pods on their nodes and the pending ones in the queue, and runs it until nothing more
// can change. The result is a function of the input and the seed alone.
#pragma once

#include "arbiter/manifest/loader.h"
#include "arbiter/sim/cluster_simulation.h"

namespace arbiter::sim {

struct PlanOptions {
  uint64_t seed = 0;
  bool explain = false;
  // With explain: each cycle handed over as it ends instead of kept in PlanResult::cycles.
  std::function<void(const sched::CycleOutcome&)> on_cycle;
  size_t max_cycles = 1'000'000;
  // Verdict reuse and the resource-only dry run (same decisions; off to check that).
  bool fast_paths = true;
  // The virtual clock's start; unset: the latest timestamp in the input. `arbiter serve` plans
  // from the wall clock's now.
  std::optional<Timestamp> start;
};

// REQUIRES: `objects` passed loading and admission without errors.
StatusOr<PlanResult> RunPlan(const manifest::ClusterObjects& objects, const PlanOptions& options);

}  // namespace arbiter::sim
