// victimSelection: Optimal (Arbiter's option, docs/upstream-rules.md Part F§4): on a node, the
// exact best victim set under the order kube-scheduler's node choice compares (§7), found by a
// bounded branch and bound over classes of interchangeable pods.
#include <algorithm>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "arbiter/sched/preemption/victim_selection.h"

namespace arbiter::sched::preemption {

namespace {

__extension__ typedef __int128 Wide;  // exact sums of user quantities

// A victim set's rank, lower is better, in §7's order: PDB violations (evictions beyond each
// budget's allowed disruptions), the highest victim priority, the sum of (priority + 2^31) (so
// fewer victims first), then the latest earliest start among the highest-priority victims.
struct Rank {
  int64_t violations = 0;
  int64_t top = 0;
  int64_t sum = 0;
  Timestamp neg_top_start = 0;
  auto operator<=>(const Rank&) const = default;
};

// Pods the search need not tell apart: the same priority and start, the same resources freed in
// every dimension that matters, charged to the same budgets. Pods most important first.
struct PodClass {
  int32_t priority = 0;
  bool has_start = false;
  Timestamp start = 0;
  std::vector<Wide> frees;        // per dimension, per pod
  std::vector<uint32_t> budgets;  // the budgets each pod is charged to
  std::vector<PodInfoPtr> pods;
};

// A resource dimension the preemptor asks for.
struct Dim {
  enum Kind { kCpu, kMemory, kEphemeral, kScalar } kind;
  std::string name;  // kScalar
  int64_t Of(const model::Resources& r) const {
    switch (kind) {
      case kCpu: return r.milli_cpu;
      case kMemory: return r.memory;
      case kEphemeral: return r.ephemeral_storage;
      case kScalar: return r.Scalar(name);
    }
    return 0;
  }
};

class Search {
 public:
  Search(const Evaluation& ev, const NodeInfo& node, size_t max_steps) : ev_(ev), max_steps_(max_steps) {
    const model::Resources& want = ev.pod.pod.requests;
    const model::Resources& alloc = node.allocatable();
    model::Resources used = node.requested();
    int64_t count = static_cast<int64_t>(node.pods().size());
    // Nominated pods of equal or higher priority count, as in the dry run (§14.2).
    SmallVector<const NodeInfo::Nominated*, 8> nominated;
    node.NominatedAtLeast(ev.pod, nominated);
    for (const NodeInfo::Nominated* np : nominated) {
      used.Add(np->pod->pod.requests);
      ++count;
    }
    // What must be freed per dimension (state::FitsResources): only positive requests count.
    auto dim = [&](Dim d, int64_t w, int64_t have, int64_t in_use) {
      if (w <= 0) return;
      need_.push_back(Wide{w} - (Wide{have} - Wide{in_use}));
      dims_.push_back(std::move(d));
    };
    dim({Dim::kCpu, {}}, want.milli_cpu, alloc.milli_cpu, used.milli_cpu);
    dim({Dim::kMemory, {}}, want.memory, alloc.memory, used.memory);
    dim({Dim::kEphemeral, {}}, want.ephemeral_storage, alloc.ephemeral_storage, used.ephemeral_storage);
    for (const auto& [name, w] : want.scalars) dim({Dim::kScalar, name}, w, alloc.Scalar(name), used.Scalar(name));
    need_pods_ = count + 1 - alloc.pods;
  }

  // Groups the potential victims into classes.
  void AddPods(const std::vector<PodInfoPtr>& pods) {
    std::vector<PodInfoPtr> sorted = pods;
    const Timestamp now = ev_.now;
    std::sort(sorted.begin(), sorted.end(),
              [now](const PodInfoPtr& a, const PodInfoPtr& b) { return MoreImportantPod(a->pod, b->pod, now); });
    for (const auto& p : sorted) {
      PodClass k;
      k.priority = p->pod.priority;
      k.has_start = p->pod.start_time.has_value();
      k.start = p->pod.start_time.value_or(0);
      for (size_t d = 0; d < need_.size(); ++d) {
        k.frees.push_back(std::max<int64_t>(0, dims_[d].Of(p->pod.requests)));
      }
      const std::string key = p->pod.Key();
      for (uint32_t b = 0; b < ev_.pdbs.size(); ++b) {
        const PdbView& v = ev_.pdbs[b];
        if (v.Matches(p->pod) && !v.disrupted_pods.count(key)) k.budgets.push_back(b);
      }
      auto same = [&](const PodClass& c) {
        return c.priority == k.priority && c.has_start == k.has_start && c.start == k.start && c.frees == k.frees &&
               c.budgets == k.budgets;
      };
      auto it = std::find_if(classes_.begin(), classes_.end(), same);
      if (it == classes_.end()) {
        k.pods.push_back(p);
        classes_.push_back(std::move(k));
      } else {
        it->pods.push_back(p);
      }
    }
    // Lower priorities first, larger pods first: good sets are found early.
    std::stable_sort(classes_.begin(), classes_.end(), [](const PodClass& a, const PodClass& b) {
      if (a.priority != b.priority) return a.priority < b.priority;
      return a.frees > b.frees;
    });
    const size_t n = classes_.size();
    suffix_frees_.assign(n + 1, std::vector<Wide>(need_.size(), 0));
    suffix_max_.assign(n + 1, std::vector<Wide>(need_.size(), 0));
    suffix_pods_.assign(n + 1, 0);
    for (size_t i = n; i-- > 0;) {
      const PodClass& c = classes_[i];
      for (size_t d = 0; d < need_.size(); ++d) {
        suffix_frees_[i][d] = suffix_frees_[i + 1][d] + c.frees[d] * static_cast<Wide>(c.pods.size());
        suffix_max_[i][d] = std::max(suffix_max_[i + 1][d], c.frees[d]);
      }
      suffix_pods_[i] = suffix_pods_[i + 1] + static_cast<int64_t>(c.pods.size());
    }
    freed_.assign(need_.size(), 0);
    taken_.assign(ev_.pdbs.size(), 0);
    chosen_.assign(n, 0);
  }

  // The rank of a set of victims (the greedy answer, to beat).
  Rank RankOf(const std::vector<PodInfoPtr>& victims) const {
    PdbBudgets budgets(ev_.pdbs);
    Rank r;
    r.top = std::numeric_limits<int64_t>::min();
    Timestamp earliest = std::numeric_limits<Timestamp>::max();
    for (const auto& v : victims) {
      budgets.Consume(v->pod);
      r.sum += int64_t{v->pod.priority} + kPriorityOffset;
      r.top = std::max<int64_t>(r.top, v->pod.priority);
    }
    for (const auto& v : victims) {
      if (v->pod.priority == r.top) earliest = std::min(earliest, v->pod.start_time.value_or(ev_.now));
    }
    r.violations = budgets.Excess();
    r.neg_top_start = -earliest;
    return r;
  }

  // Looks for a set ranked strictly better than `incumbent`. False when the step bound was hit.
  bool Run(const Rank& incumbent) {
    best_ = incumbent;
    top_ = std::numeric_limits<int64_t>::min();
    Visit(0);
    return !aborted_;
  }
  bool improved() const { return !best_chosen_.empty(); }
  size_t steps() const { return steps_; }

  // The improved set, most important first, each pod with whether it takes a budget below zero.
  std::vector<std::pair<PodInfoPtr, bool>> Victims() const {
    std::vector<PodInfoPtr> out;
    for (size_t i = 0; i < classes_.size(); ++i) {
      const auto& pods = classes_[i].pods;
      // The least important pods of the class go.
      for (size_t j = pods.size() - best_chosen_[i]; j < pods.size(); ++j) out.push_back(pods[j]);
    }
    const Timestamp now = ev_.now;
    std::sort(out.begin(), out.end(), [now](const PodInfoPtr& a, const PodInfoPtr& b) { return MoreImportantPod(a->pod, b->pod, now); });
    PdbBudgets budgets(ev_.pdbs);
    std::vector<std::pair<PodInfoPtr, bool>> marked;
    for (const auto& v : out) marked.emplace_back(v, budgets.Consume(v->pod));
    return marked;
  }
  int64_t best_violations() const { return best_.violations; }

 private:
  bool Fits() const {
    if (removed_ < need_pods_) return false;
    for (size_t d = 0; d < need_.size(); ++d) {
      if (freed_[d] < need_[d]) return false;
    }
    return true;
  }
  bool FitsWithAllFrom(size_t i) const {
    if (removed_ + suffix_pods_[i] < need_pods_) return false;
    for (size_t d = 0; d < need_.size(); ++d) {
      if (freed_[d] + suffix_frees_[i][d] < need_[d]) return false;
    }
    return true;
  }
  // At least how many more pods of classes i.. a fitting set needs (at least one).
  int64_t MinMorePods(size_t i) const {
    int64_t more = std::max<int64_t>(1, need_pods_ - removed_);
    for (size_t d = 0; d < need_.size(); ++d) {
      const Wide short_by = need_[d] - freed_[d];
      if (short_by <= 0 || suffix_max_[i][d] <= 0) continue;
      const Wide pods = (short_by + suffix_max_[i][d] - 1) / suffix_max_[i][d];
      more = std::max<int64_t>(more, pods > Wide{INT64_MAX} ? INT64_MAX : static_cast<int64_t>(pods));
    }
    return more;
  }
  Rank Current() const {
    Rank r{violations_, top_, sum_, 0};
    Timestamp earliest = std::numeric_limits<Timestamp>::max();
    for (size_t i = 0; i < classes_.size(); ++i) {
      if (chosen_[i] > 0 && classes_[i].priority == top_) {
        earliest = std::min(earliest, classes_[i].has_start ? classes_[i].start : ev_.now);
      }
    }
    r.neg_top_start = -earliest;
    return r;
  }
  void Take(size_t i, int64_t k) {
    const PodClass& c = classes_[i];
    chosen_[i] += k;
    removed_ += k;
    for (size_t d = 0; d < need_.size(); ++d) freed_[d] += c.frees[d] * k;
    for (uint32_t b : c.budgets) {
      const int64_t allowed = ev_.pdbs[b].disruptions_allowed;
      violations_ -= std::max<int64_t>(0, taken_[b] - allowed);
      taken_[b] += k;
      violations_ += std::max<int64_t>(0, taken_[b] - allowed);
    }
    sum_ += (int64_t{c.priority} + kPriorityOffset) * k;
  }
  void Visit(size_t i) {
    if (aborted_ || ++steps_ > max_steps_) {
      aborted_ = true;
      return;
    }
    if (removed_ > 0 && Fits()) {  // a superset only ranks worse: each victim adds to the sum
      const Rank r = Current();
      if (r < best_) {
        best_ = r;
        best_chosen_ = chosen_;
      }
      return;
    }
    if (i == classes_.size() || !FitsWithAllFrom(i)) return;
    const PodClass& c = classes_[i];
    // Every completion takes at least MinMorePods pods of priority at least this class's.
    const int64_t lb_top = std::max<int64_t>(top_, c.priority);
    const int64_t lb_sum = sum_ + (int64_t{c.priority} + kPriorityOffset) * MinMorePods(i);
    if (std::tie(violations_, lb_top, lb_sum) > std::tie(best_.violations, best_.top, best_.sum)) return;
    const int64_t size = static_cast<int64_t>(c.pods.size());
    const int64_t saved_top = top_;
    int64_t k = 0;
    for (; !aborted_; ++k) {
      Visit(i + 1);
      if (k == size) break;
      Take(i, 1);
      top_ = std::max<int64_t>(top_, c.priority);
      // More pods of this class only rank worse from here.
      if (std::tie(violations_, top_, sum_) > std::tie(best_.violations, best_.top, best_.sum)) {
        ++k;
        break;
      }
    }
    Take(i, -k);
    top_ = saved_top;
  }

  const Evaluation& ev_;
  const size_t max_steps_;
  std::vector<Wide> need_;
  std::vector<Dim> dims_;
  int64_t need_pods_ = 0;
  std::vector<PodClass> classes_;
  std::vector<std::vector<Wide>> suffix_frees_, suffix_max_;
  std::vector<int64_t> suffix_pods_;
  // The set being built.
  std::vector<Wide> freed_;
  std::vector<int64_t> taken_;  // per budget
  std::vector<int64_t> chosen_;  // per class
  int64_t removed_ = 0, violations_ = 0, top_ = 0, sum_ = 0;
  // The best set found better than the incumbent (empty: none).
  Rank best_;
  std::vector<int64_t> best_chosen_;
  size_t steps_ = 0;
  bool aborted_ = false;
};

}  // namespace

DryRun OptimalVictimSelection::SelectVictimsOnNode(Evaluation& ev, const NodeInfo& node) const {
  // Upstream's greedy answer first: it says whether any set fits (all potential victims gone) and
  // is the set to beat.
  DryRun greedy = KubernetesVictimSelection().SelectVictimsOnNode(ev, node);
  if (!greedy.first) return greedy;
  if (!ev.fast_path.applies) {
    // The exact search weighs resources only; here other filters read the node's pods.
    ++ev.optimal.not_applicable;
    return greedy;
  }
  std::vector<PodInfoPtr> potential;
  for (const auto& p : node.pods()) {
    if (ev.eligible.MayEvict(p->pod.priority, p->pod)) potential.push_back(p);
  }
  Candidate& g = *greedy.first;
  g.Materialize();
  Search search(ev, node, std::min(kStepsPerNode, kStepsPerCall - std::min(kStepsPerCall, ev.optimal.steps)));
  const Rank greedy_rank = search.RankOf(g.victims);
  // The node choice compares every candidate's exact count of evictions beyond the budgets.
  g.num_pdb_violations = static_cast<int>(greedy_rank.violations);
  // Every potential victim goes: the reprieve found that none could stay with all the others
  // gone, so no smaller set fits (removing fewer pods never frees more).
  if (g.victims.size() == potential.size()) return greedy;
  ++ev.optimal.searched;
  search.AddPods(potential);
  const bool finished = search.Run(greedy_rank);
  ev.optimal.steps += search.steps();
  if (!finished) {
    ++ev.optimal.fallbacks;
    ev.optimal.fallback_nodes.push_back(node.name());
    return greedy;
  }
  if (!search.improved()) return greedy;
  Candidate c;
  c.node = &node;
  for (auto& [v, violating] : search.Victims()) c.AddVictim(std::move(v), violating);
  // The exact count of evictions beyond the budgets, which the node choice compares.
  c.num_pdb_violations = static_cast<int>(search.best_violations());
  c.SetKeys(ev.now);
  return {std::move(c), {}};
}

}  // namespace arbiter::sched::preemption
