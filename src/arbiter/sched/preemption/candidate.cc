// Preemption candidates and the choice among them.
#include "arbiter/sched/preemption/candidate.h"

#include <algorithm>

namespace arbiter::sched::preemption {

bool MoreImportantPod(const model::Pod& a, const model::Pod& b, Timestamp now) {
  if (a.priority != b.priority) return a.priority > b.priority;
  const Timestamp sa = a.start_time.value_or(now);
  const Timestamp sb = b.start_time.value_or(now);
  if (sa != sb) return sa < sb;
  return a.uid < b.uid;
}

void Candidate::Materialize() {
  if (!victims.empty() || victim_indices.empty()) return;
  for (uint32_t i : victim_indices) victims.push_back(node->pods()[i]);
  violates_pdb.assign(victims.size(), false);
}

void Candidate::SetKeys(Timestamp now) {
  victim_count = victims.size();
  top_priority = VictimPriority(0);
  priority_sum = 0;
  earliest_top_start = std::numeric_limits<Timestamp>::max();
  for (size_t i = 0; i < victims.size(); ++i) {
    const int32_t priority = VictimPriority(i);
    priority_sum += int64_t{priority} + kPriorityOffset;
    if (priority == top_priority) earliest_top_start = std::min(earliest_top_start, victims[i]->pod.start_time.value_or(now));
  }
}

void Candidate::SortVictims(Timestamp now) {
  std::vector<size_t> order(victims.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return MoreImportantPod(victims[a]->pod, victims[b]->pod, now); });
  std::vector<PodInfoPtr> sorted;
  std::vector<bool> sorted_violates;
  std::vector<int32_t> sorted_priorities;
  for (size_t i : order) {
    sorted.push_back(victims[i]);
    sorted_violates.push_back(violates_pdb[i]);
    if (!victim_priorities.empty()) sorted_priorities.push_back(victim_priorities[i]);
  }
  victims = std::move(sorted);
  violates_pdb = std::move(sorted_violates);
  victim_priorities = std::move(sorted_priorities);
}

std::string Candidate::Describe() const {
  std::string s = "candidate " + node->name() + ": " + std::to_string(victims.size()) + " victim(s) [";
  for (size_t i = 0; i < victims.size(); ++i) {
    const auto& v = victims[i]->pod;
    s += (i ? ", " : "") + v.Key() + " (priority " + std::to_string(VictimPriority(i)) +
         (violates_pdb[i] ? ", violates PDB" : "") + ")";
  }
  return s + "], " + std::to_string(num_pdb_violations) + " PDB violation(s)";
}

namespace {

// Keeps the candidates with the best value of `key` (lower is better).
template <typename Key>
std::vector<size_t> KeepBest(const std::vector<const Candidate*>& c, const std::vector<size_t>& in, Key key) {
  std::vector<size_t> out;
  auto best = key(*c[in[0]]);
  for (size_t i : in) {
    auto k = key(*c[i]);
    if (k < best) {
      best = k;
      out.clear();
    }
    if (k == best) out.push_back(i);
  }
  return out;
}

}  // namespace

int64_t LostWork(const Candidate& c, Timestamp now) {
  int64_t total = 0;
  auto add = [&](int64_t milli_cpu, bool started, Timestamp start) {
    if (!started || start >= now || milli_cpu <= 0) return;
    int64_t lost = 0;
    if (__builtin_mul_overflow(milli_cpu, (now - start) / kSecond, &lost) || __builtin_add_overflow(total, lost, &total)) {
      total = std::numeric_limits<int64_t>::max();
    }
  };
  if (!c.victims.empty()) {
    for (const auto& v : c.victims) add(v->pod.requests.milli_cpu, v->pod.start_time.has_value(), v->pod.start_time.value_or(0));
  } else {
    const auto& sums = c.node->pod_summaries();
    for (uint32_t i : c.victim_indices) add(sums[i].milli_cpu, sums[i].has_start, sums[i].start);
  }
  return total;
}

std::pair<size_t, std::string> PickOneNodeForPreemption(const std::vector<const Candidate*>& candidates,
                                                        const PickOptions& options) {
  if (candidates.size() == 1) return {0, "the only candidate"};
  const auto& c = candidates;
  std::vector<size_t> left(c.size());
  for (size_t i = 0; i < c.size(); ++i) left[i] = i;
  // 1) Fewest PDB violations.
  left = KeepBest(c, left, [](const Candidate& x) { return x.num_pdb_violations; });
  if (left.size() == 1) return {left[0], "fewest PDB violations"};
  // 2) Lowest priority of the most important victim.
  left = KeepBest(c, left, [](const Candidate& x) { return x.top_priority; });
  if (left.size() == 1) return {left[0], "lowest priority among the most important victims"};
  // 3) Smallest sum of (priority + 2^31): one more victim always costs more.
  left = KeepBest(c, left, [](const Candidate& x) { return x.priority_sum; });
  if (left.size() == 1) return {left[0], "smallest sum of victim priorities"};
  // 4) Fewest victims.
  left = KeepBest(c, left, [](const Candidate& x) { return x.victim_count; });
  if (left.size() == 1) return {left[0], "fewest victims"};
  // Arbiter's victimCost LostWork (off by default): the least work thrown away.
  if (options.lost_work) {
    left = KeepBest(c, left, [&](const Candidate& x) { return LostWork(x, options.now); });
    if (left.size() == 1) return {left[0], "least work lost (victimCost: LostWork)"};
  }
  // 5) Latest earliest start time among the highest-priority victims (the youngest).
  left = KeepBest(c, left, [](const Candidate& x) { return -x.earliest_top_start; });
  if (left.size() == 1) return {left[0], "latest start among the highest-priority victims"};
  // 6) The first in scan order.
  return {left[0], "first in scan order among exact ties"};
}

}  // namespace arbiter::sched::preemption
