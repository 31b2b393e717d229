// SelectVictimsOnNode's greedy reprieve (docs/upstream-rules.md Part A §5 step 8), the one loop
// every dry run of DefaultPreemption uses, whatever it keeps of the node (a copy with the
// filters, resource sums, or victim units): the potential victims, in the order given
// (PDB-violating ones first, each group by importance), are added back one by one; a victim the
// preemptor still fits beside stays, any other is a victim.
//
//   stays(v, &error): adds `v` back and answers whether the preemptor still fits; when it does
//   not, it takes `v` out again itself. Setting `error` (not success) stops the reprieve.
//   evict(v): records `v` as a victim.
#pragma once

#include "arbiter/sched/framework/status.h"

namespace arbiter::sched::preemption {

template <typename Range, typename Stays, typename Evict>
Status GreedyReprieve(const Range& ordered, Stays&& stays, Evict&& evict) {
  for (const auto& v : ordered) {
    Status error;
    const bool kept = stays(v, &error);
    if (!error.IsSuccess()) return error;
    if (!kept) evict(v);
  }
  return {};
}

}  // namespace arbiter::sched::preemption
