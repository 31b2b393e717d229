// Nomad's best-fit victim selection (scheduler/feasible/preemption.go, PreemptForTaskGroup;
// docs/upstream-rules.md Part C §3-§4), the one implementation both users share: Nomad mode's
// preemptor for a task group's CPU, memory and disk, and DefaultPreemption's `victimSelection:
// Nomad` for pods. What differs between them (what a candidate frees, how far it is from what is
// still needed, what "enough" means) is the Policy; the rule is here:
//
//   1. Candidates come bucketed by priority; buckets are visited in ascending priority.
//   2. Within a bucket, greedily: take the candidate with the smallest distance to what is still
//      needed (the first on a tie), until what is available covers the ask. The loop takes one
//      candidate before it first checks (Nomad's quirk: a caller asks only when the ask does
//      not fit).
//   3. The superset filter: the chosen victims ordered by their distance to the whole ask,
//      largest first (stable), and the shortest prefix that still covers the ask is kept.
//
// Returns no victims when even every candidate does not cover the ask.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <utility>
#include <vector>

namespace arbiter::model {

// How much lower than the preemptor a victim's priority must be: Nomad's fixed 10 ("a priority
// delta of 10 or greater"); Arbiter lets both users configure it.
inline constexpr int32_t kNomadPriorityDelta = 10;

// The priority delta rule, for Nomad's preemptor and DefaultPreemption's every victim policy:
// true if a victim of `victim_priority` may be preempted by a preemptor of `priority`.
inline bool PriorityDeltaAllows(int64_t priority, int64_t victim_priority, int32_t delta) {
  return priority - victim_priority >= delta;
}

// Nomad's basicResourceDistance: over the dimensions (need, freed), each still needed (need > 0)
// contributes ((need - freed) / need)^2 (DistanceTerm); the distance is the root of the sum,
// added in the order the dimensions are given.
inline double DistanceTerm(int64_t need, int64_t freed) {
  if (need <= 0) return 0;
  const double c = static_cast<double>(need - freed) / static_cast<double>(need);
  return c * c;
}
inline double NormalizedDistance(std::initializer_list<std::pair<int64_t, int64_t>> dims) {
  double sum = 0;
  for (const auto& [need, freed] : dims) sum += DistanceTerm(need, freed);
  return std::sqrt(sum);
}

// Policy requirements (all const):
//   using Amount = ...;                                   // resources, copyable
//   Amount Frees(const Candidate&) const;                 // what evicting it frees
//   double Distance(const Amount& need, const Candidate&) const;     // greedy score (step 2)
//   double AskDistance(const Amount& ask, const Candidate&) const;   // superset order (step 3)
//   void Add(Amount& a, const Amount& b) const;  void Sub(Amount& a, const Amount& b) const;
//   bool Covers(const Amount& available, const Amount& ask) const;
template <typename Candidate, typename Policy>
std::vector<Candidate> BestFitVictims(std::map<int64_t, std::vector<Candidate>> buckets,
                                      const typename Policy::Amount& available,
                                      const typename Policy::Amount& ask, const Policy& policy) {
  using Amount = typename Policy::Amount;
  Amount now = available;
  Amount need = ask;
  std::vector<Candidate> victims;
  bool covered = false;
  for (auto& [priority, bucket] : buckets) {
    while (!bucket.empty() && !covered) {
      size_t best = 0;
      double best_distance = 0;
      for (size_t i = 0; i < bucket.size(); ++i) {
        const double d = policy.Distance(need, bucket[i]);
        if (i == 0 || d < best_distance) {
          best = i;
          best_distance = d;
        }
      }
      const Amount freed = policy.Frees(bucket[best]);
      victims.push_back(std::move(bucket[best]));
      bucket.erase(bucket.begin() + static_cast<std::ptrdiff_t>(best));
      policy.Add(now, freed);
      policy.Sub(need, freed);
      covered = policy.Covers(now, ask);
    }
    if (covered) break;
  }
  if (!covered) return {};
  std::stable_sort(victims.begin(), victims.end(), [&](const Candidate& a, const Candidate& b) {
    return policy.AskDistance(ask, a) > policy.AskDistance(ask, b);
  });
  Amount acc = available;
  for (size_t i = 0; i < victims.size(); ++i) {
    policy.Add(acc, policy.Frees(victims[i]));
    if (policy.Covers(acc, ask)) {
      victims.resize(i + 1);
      break;
    }
  }
  return victims;
}

}  // namespace arbiter::model
