// A preemption candidate — a node and the victims a dry run chose there — and the choice among
// candidates (docs/upstream-rules.md Part A §7, kube-scheduler's SelectCandidate and
// pickOneNodeForPreemption):
//
//   fewest PDB violations; lowest priority of the most important victim; smallest sum of
//   (priority + 2^31), so one more victim always costs more; fewest victims; latest start among
//   the highest-priority victims; then the first in scan order.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "arbiter/base/small_vector.h"
#include "arbiter/base/time.h"
#include "arbiter/sched/framework/interfaces.h"

namespace arbiter::sched::preemption {

struct Candidate {
  const NodeInfo* node = nullptr;
  std::vector<PodInfoPtr> victims;   // most important first
  std::vector<bool> violates_pdb;    // per victim
  // Per victim, its effective priority when it differs from the pod's own (a group member under
  // a root of another priority); empty: every victim's own priority.
  std::vector<int32_t> victim_priorities;
  int32_t VictimPriority(size_t i) const { return victim_priorities.empty() ? victims[i]->pod.priority : victim_priorities[i]; }
  int num_pdb_violations = 0;
  // The dry run on pod summaries keeps victims as indices into node->pods() (most important
  // first, none violating a PDB) and fills `victims` only for the chosen candidate.
  SmallVector<uint32_t, 8> victim_indices;
  // The keys node choice compares (§7), set by SetKeys (or by the dry run that built it).
  int32_t top_priority = 0;           // priority of the most important victim
  int64_t priority_sum = 0;           // sum of (priority + 2^31)
  size_t victim_count = 0;
  Timestamp earliest_top_start = 0;   // earliest start among the highest-priority victims

  // Appends a victim (its own priority), counting it if it violates a budget.
  void AddVictim(PodInfoPtr v, bool violating) {
    victims.push_back(std::move(v));
    violates_pdb.push_back(violating);
    if (violating) ++num_pdb_violations;
  }
  // Fills `victims` and `violates_pdb` from `victim_indices` if needed.
  void Materialize();
  // Sets the §7 keys from `victims` (non-empty); a victim without a start time started `now`.
  void SetKeys(Timestamp now);
  // Re-sorts the victims most important first (after a reprieve in two groups, §5 step 8).
  void SortVictims(Timestamp now);
  // "candidate NODE: N victim(s) [ns/name (priority P[, violates PDB]), …], K PDB violation(s)";
  // REQUIRES: materialized.
  std::string Describe() const;
};

// (priority + 2^31) is never negative, so a sum of them grows with every victim.
inline constexpr int64_t kPriorityOffset = int64_t{std::numeric_limits<int32_t>::max()} + 1;

// True if `a` is more important than `b`: higher priority, then earlier start (a pod without
// a start time counts as starting `now`), then UID as the final tie-break.
bool MoreImportantPod(const model::Pod& a, const model::Pod& b, Timestamp now);

// The CPU work `c`'s victims would lose, in milli-CPU seconds: each victim's CPU request times
// the whole seconds since it started (none for a pod not started, or started after `now`),
// saturating at INT64_MAX (requests are user input).
int64_t LostWork(const Candidate& c, Timestamp now);

// What the choice weighs beyond upstream's rules (model::SchedulerConfig::victim_cost).
struct PickOptions {
  bool lost_work = false;  // victimCost LostWork: least LostWork before the start-time rule
  Timestamp now = 0;
};

// The choice of §7 among `candidates` (non-empty, keys set). Returns the index and the rule that
// decided, for explanations.
std::pair<size_t, std::string> PickOneNodeForPreemption(const std::vector<const Candidate*>& candidates,
                                                        const PickOptions& options = {});

}  // namespace arbiter::sched::preemption
