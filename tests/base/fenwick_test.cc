// Fenwick: counts, prefix sums and the k-th one agree with a plain array under random changes.
#include "arbiter/base/fenwick.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace arbiter {
namespace {

TEST(Fenwick, PrefixSumsAndTheKthOneAgreeWithAPlainArray) {
  std::mt19937 rng(7);
  for (size_t n : {1U, 2U, 5U, 64U, 1000U}) {
    Fenwick f;
    f.Reset(n);
    std::vector<int> bits(n, 0);
    for (int step = 0; step < 3000; ++step) {
      const size_t at = rng() % n;
      f.Add(at, bits[at] != 0 ? -1 : 1);
      bits[at] ^= 1;
      int64_t sum = 0;
      std::vector<size_t> ones;
      for (size_t i = 0; i <= n; ++i) {
        if (step % 97 == 0 || i == n || i == at) {
          ASSERT_EQ(f.Prefix(i), sum) << "n=" << n << " i=" << i;
        }
        if (i < n && bits[i] != 0) {
          ones.push_back(i);
          ++sum;
        }
      }
      ASSERT_EQ(f.total(), sum);
      for (size_t k = 0; k < ones.size(); k += 1 + ones.size() / 8) {
        ASSERT_EQ(f.Select(static_cast<int64_t>(k)), ones[k]) << "n=" << n << " k=" << k;
      }
    }
  }
}

}  // namespace
}  // namespace arbiter
