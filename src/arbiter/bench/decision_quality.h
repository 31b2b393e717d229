// Decision quality: how good are the victims a preemption engine picks? On many small random
// clusters (seeded), a pending pod must preempt; each engine's first decision is compared with the
// exact optimum found by exhaustive search over every subset of strictly-lower-priority pods on
// every node that would let the pod fit (CPU). Costs compare in the order kube-scheduler's node
// choice compares candidates (pickOneNodeForPreemption):
//   1. PDB violations (victims beyond a budget's disruptionsAllowed);
//   2. the highest victim priority (lower is better);
//   3. the sum of (priority + 2^31): fewer victims, then lower priorities;
//   4. the latest earliest start among the highest-priority victims.
// Engines: kube-scheduler's default preemption, the Nomad victim policy for pods
// (DefaultPreemptionArgs.victimSelection: Nomad, delta 10) and Arbiter's victimSelection: Optimal.
// The search is written here apart from Optimal's (no shared code), so that it checks it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arbiter/base/status.h"

namespace arbiter::bench {

struct EngineQuality {
  std::string engine;
  size_t clusters = 0;        // clusters where some preemption can help
  size_t optimal = 0;         // the engine's victims cost exactly the optimum
  size_t missed = 0;          // the engine preempted nothing although a victim set exists
  size_t worse = 0;           // preempted, at a higher cost than the optimum
  double mean_excess_victims = 0;        // over the clusters it preempted in
  double mean_excess_priority_sum = 0;   // likewise
  size_t beat_optimum = 0;    // must stay 0: a cheaper choice than the search found is a bug
  size_t fallbacks = 0;       // decisions where Optimal's search hit its bound (greedy kept)
};

StatusOr<std::vector<EngineQuality>> RunDecisionQuality(size_t clusters, uint64_t seed);

}  // namespace arbiter::bench
