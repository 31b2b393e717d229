// A Fenwick (binary indexed) tree of counts over positions 0..n-1: a change, a prefix sum and the
// position of the k-th unit each in O(log n).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace arbiter {

class Fenwick {
 public:
  // n positions, all 0.
  void Reset(size_t n) {
    tree_.assign(n + 1, 0);
    total_ = 0;
  }
  size_t size() const { return tree_.empty() ? 0 : tree_.size() - 1; }
  int64_t total() const { return total_; }
  void Add(size_t position, int64_t delta) {
    total_ += delta;
    for (size_t i = position + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += delta;
  }
  // The sum over positions [0, end).
  int64_t Prefix(size_t end) const {
    int64_t sum = 0;
    for (size_t i = end; i > 0; i -= i & (~i + 1)) sum += tree_[i];
    return sum;
  }
  // REQUIRES: every count is 0 or 1, and 0 <= k < total(). The position of the k-th 1 (from 0).
  size_t Select(int64_t k) const {
    size_t at = 0;  // 1-based: the last position known to hold at most k ones before it
    for (size_t step = std::bit_floor(size()); step > 0; step >>= 1) {
      if (at + step < tree_.size() && tree_[at + step] <= k) {
        at += step;
        k -= tree_[at];
      }
    }
    return at;
  }

 private:
  std::vector<int64_t> tree_;
  int64_t total_ = 0;
};

}  // namespace arbiter
