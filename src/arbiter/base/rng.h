// The injected random source. Every random choice the scheduler makes (node sampling offsets,
// ties between equally scored nodes) draws from one seeded Rng, so a run is a function of its
// input and seed alone. The generator and the reduction to a range are fixed here (SplitMix64 and
// rejection sampling), not left to the standard library, so results do not change across
// toolchains.
#pragma once

#include <cstdint>

namespace arbiter {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n). REQUIRES: n > 0.
  uint64_t Uniform(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t v;
    do {
      v = Next();
    } while (v >= limit);
    return v % n;
  }

 private:
  uint64_t state_;
};

}  // namespace arbiter
