// The exact best victim set on one node, under the order kube-scheduler's node choice compares
// candidates (pickOneNodeForPreemption; docs/upstream-rules.md Part A §7), the one search both
// users share: DefaultPreemption's `victimSelection: Optimal` for pods, and Nomad mode's
// `--victim-selection optimal` for allocations (Part F§4). What differs between them (what an item
// frees, which budgets it is charged to, its start) the caller states when it adds each item.
//
// A set ranks (lower is better): budget violations (items charged beyond each budget's allowance,
// summed); the highest item priority; the sum of (priority + 2^31), so fewer items first, then
// lower priorities; then the latest earliest start among the highest-priority items.
//
// Items alike in priority, start, what they free and their budgets form one class, of which the
// search chooses a count (the class's last items, which the caller adds least important last),
// so that a node of a hundred equal pods is one choice, not 2^100. A branch and bound over the
// classes (lowest priorities first) prunes with a lower bound of each completion's rank (the
// priority and the count of the cheapest possible completion); a set that frees enough is a leaf,
// since any superset ranks worse. The search is bounded in steps, never in time, so that its
// answer never depends on timing: Run says whether it finished.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

namespace arbiter::model {

__extension__ typedef __int128 ExactAmount;  // sums of user quantities, exactly

struct ExactRank {
  int64_t violations = 0;
  int64_t top = std::numeric_limits<int64_t>::min();  // the highest victim priority
  int64_t sum = 0;                                    // of (priority + 2^31)
  int64_t neg_top_start = 0;                          // minus the earliest start among the top
  auto operator<=>(const ExactRank&) const = default;
};

inline constexpr int64_t kExactPriorityOffset = int64_t{1} << 31;

template <typename Item>
class ExactVictimSearch {
 public:
  // `need[d]`: what must be freed in dimension d (nothing when at most 0); `need_count`: at least
  // how many items must go (a pod's slot); `allowed[b]`: budget b's allowance.
  ExactVictimSearch(std::vector<ExactAmount> need, int64_t need_count, std::vector<int64_t> allowed, size_t max_steps)
      : need_(std::move(need)), need_count_(need_count), allowed_(std::move(allowed)), max_steps_(max_steps) {}

  // Adds an item (priority, start, what it frees per dimension, the budgets it is charged to).
  // Items of one class must come most important first.
  void Add(Item item, int64_t priority, int64_t start, std::vector<ExactAmount> frees, std::vector<uint32_t> budgets) {
    for (auto& a : frees) a = std::max<ExactAmount>(a, 0);
    for (Class& c : classes_) {
      if (c.priority == priority && c.start == start && c.frees == frees && c.budgets == budgets) {
        c.items.push_back(std::move(item));
        return;
      }
    }
    classes_.push_back({priority, start, std::move(frees), std::move(budgets), {std::move(item)}});
  }

  // The rank of a set given by its items' (priority, start, budgets).
  struct Member {
    int64_t priority;
    int64_t start;
    const std::vector<uint32_t>* budgets;
  };
  ExactRank RankOf(const std::vector<Member>& set) const {
    ExactRank r;
    std::vector<int64_t> taken(allowed_.size(), 0);
    int64_t earliest = std::numeric_limits<int64_t>::max();
    for (const Member& m : set) {
      r.top = std::max(r.top, m.priority);
      r.sum += m.priority + kExactPriorityOffset;
      if (m.budgets != nullptr) {
        for (uint32_t b : *m.budgets) ++taken[b];
      }
    }
    for (const Member& m : set) {
      if (m.priority == r.top) earliest = std::min(earliest, m.start);
    }
    for (size_t b = 0; b < allowed_.size(); ++b) r.violations += std::max<int64_t>(0, taken[b] - allowed_[b]);
    r.neg_top_start = -earliest;
    return r;
  }

  // Looks for a set ranked strictly better than `incumbent`; false when the step bound was hit.
  bool Run(const ExactRank& incumbent) {
    Prepare();
    best_ = incumbent;
    best_chosen_.clear();
    Visit(0);
    return !aborted_;
  }
  bool improved() const { return !best_chosen_.empty(); }
  const ExactRank& best() const { return best_; }
  size_t steps() const { return steps_; }
  // The improved set: each class's last `count` items, classes lowest priority first.
  std::vector<Item> Victims() const {
    std::vector<Item> out;
    for (size_t i = 0; i < classes_.size(); ++i) {
      const auto& items = classes_[i].items;
      for (size_t j = items.size() - static_cast<size_t>(best_chosen_[i]); j < items.size(); ++j) out.push_back(items[j]);
    }
    return out;
  }

 private:
  struct Class {
    int64_t priority;
    int64_t start;
    std::vector<ExactAmount> frees;  // per dimension, per item
    std::vector<uint32_t> budgets;
    std::vector<Item> items;
  };

  void Prepare() {
    // Lower priorities first, larger items first: good sets are found early.
    std::stable_sort(classes_.begin(), classes_.end(), [](const Class& a, const Class& b) {
      if (a.priority != b.priority) return a.priority < b.priority;
      return a.frees > b.frees;
    });
    const size_t n = classes_.size(), dims = need_.size();
    suffix_frees_.assign(n + 1, std::vector<ExactAmount>(dims, 0));
    suffix_max_.assign(n + 1, std::vector<ExactAmount>(dims, 0));
    suffix_count_.assign(n + 1, 0);
    for (size_t i = n; i-- > 0;) {
      const Class& c = classes_[i];
      for (size_t d = 0; d < dims; ++d) {
        suffix_frees_[i][d] = suffix_frees_[i + 1][d] + c.frees[d] * static_cast<ExactAmount>(c.items.size());
        suffix_max_[i][d] = std::max(suffix_max_[i + 1][d], c.frees[d]);
      }
      suffix_count_[i] = suffix_count_[i + 1] + static_cast<int64_t>(c.items.size());
    }
    freed_.assign(dims, 0);
    taken_.assign(allowed_.size(), 0);
    chosen_.assign(n, 0);
    removed_ = violations_ = sum_ = 0;
    top_ = std::numeric_limits<int64_t>::min();
    steps_ = 0;
    aborted_ = false;
  }
  bool Fits() const {
    if (removed_ < need_count_) return false;
    for (size_t d = 0; d < need_.size(); ++d) {
      if (freed_[d] < need_[d]) return false;
    }
    return true;
  }
  bool FitsWithAllFrom(size_t i) const {
    if (removed_ + suffix_count_[i] < need_count_) return false;
    for (size_t d = 0; d < need_.size(); ++d) {
      if (freed_[d] + suffix_frees_[i][d] < need_[d]) return false;
    }
    return true;
  }
  // At least how many more items of classes i.. a fitting set needs (at least one).
  int64_t MinMore(size_t i) const {
    int64_t more = std::max<int64_t>(1, need_count_ - removed_);
    for (size_t d = 0; d < need_.size(); ++d) {
      const ExactAmount short_by = need_[d] - freed_[d];
      if (short_by <= 0 || suffix_max_[i][d] <= 0) continue;
      const ExactAmount items = (short_by + suffix_max_[i][d] - 1) / suffix_max_[i][d];
      more = std::max<int64_t>(more, items > ExactAmount{INT64_MAX} ? INT64_MAX : static_cast<int64_t>(items));
    }
    return more;
  }
  ExactRank Current() const {
    ExactRank r{violations_, top_, sum_, 0};
    int64_t earliest = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i < classes_.size(); ++i) {
      if (chosen_[i] > 0 && classes_[i].priority == top_) earliest = std::min(earliest, classes_[i].start);
    }
    r.neg_top_start = -earliest;
    return r;
  }
  void Take(size_t i, int64_t k) {
    const Class& c = classes_[i];
    chosen_[i] += k;
    removed_ += k;
    for (size_t d = 0; d < need_.size(); ++d) freed_[d] += c.frees[d] * k;
    for (uint32_t b : c.budgets) {
      violations_ -= std::max<int64_t>(0, taken_[b] - allowed_[b]);
      taken_[b] += k;
      violations_ += std::max<int64_t>(0, taken_[b] - allowed_[b]);
    }
    sum_ += (c.priority + kExactPriorityOffset) * k;
  }
  bool WorseThanBest(int64_t violations, int64_t top, int64_t sum) const {
    return std::tie(violations, top, sum) > std::tie(best_.violations, best_.top, best_.sum);
  }
  void Visit(size_t i) {
    if (aborted_ || ++steps_ > max_steps_) {
      aborted_ = true;
      return;
    }
    if (removed_ > 0 && Fits()) {
      const ExactRank r = Current();
      if (r < best_) {
        best_ = r;
        best_chosen_ = chosen_;
      }
      return;
    }
    if (i == classes_.size() || !FitsWithAllFrom(i)) return;
    const Class& c = classes_[i];
    // Every completion takes at least MinMore items of priority at least this class's.
    if (WorseThanBest(violations_, std::max(top_, c.priority), sum_ + (c.priority + kExactPriorityOffset) * MinMore(i))) {
      return;
    }
    const int64_t size = static_cast<int64_t>(c.items.size());
    const int64_t saved_top = top_;
    int64_t k = 0;
    for (; !aborted_; ++k) {
      Visit(i + 1);
      if (k == size) break;
      Take(i, 1);
      top_ = std::max(top_, c.priority);
      if (WorseThanBest(violations_, top_, sum_)) {  // more of this class only ranks worse
        ++k;
        break;
      }
    }
    Take(i, -k);
    top_ = saved_top;
  }

  std::vector<ExactAmount> need_;
  int64_t need_count_;
  std::vector<int64_t> allowed_;
  size_t max_steps_;
  std::vector<Class> classes_;
  std::vector<std::vector<ExactAmount>> suffix_frees_, suffix_max_;
  std::vector<int64_t> suffix_count_;
  std::vector<ExactAmount> freed_;
  std::vector<int64_t> taken_, chosen_;
  int64_t removed_ = 0, violations_ = 0, top_ = 0, sum_ = 0;
  ExactRank best_;
  std::vector<int64_t> best_chosen_;
  size_t steps_ = 0;
  bool aborted_ = false;
};

}  // namespace arbiter::model
