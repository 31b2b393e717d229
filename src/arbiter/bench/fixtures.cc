// Shared benchmark fixtures.
#include "arbiter/bench/fixtures.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

namespace arbiter::bench {

model::Node DefaultNode(size_t i) {
  model::Node n;
  n.name = "node-" + std::to_string(i);
  n.labels.Set("kubernetes.io/hostname", n.name);
  n.allocatable.milli_cpu = 4000;
  n.allocatable.memory = 32LL << 30;
  n.allocatable.pods = 110;
  return n;
}

model::Pod BenchPod(const std::string& name, int64_t milli_cpu, int32_t priority, int64_t grace_period_seconds) {
  model::Pod p;
  p.ns = "default";
  p.name = name;
  p.uid = p.ns + "/" + name;
  p.requests.milli_cpu = milli_cpu;
  p.requests.memory = 500LL << 20;
  p.non_zero_milli_cpu = milli_cpu;
  p.non_zero_memory = p.requests.memory;
  p.priority = priority;
  p.termination_grace_period_seconds = grace_period_seconds;
  return p;
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const size_t k = static_cast<size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

long PeakRssKib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

double CalibrationMillis() {
  // Sorting pseudo-random keys: memory- and branch-bound, like the scheduler's hot loop.
  std::vector<uint64_t> keys(1 << 18);
  uint64_t x = 42;
  for (auto& k : keys) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    k = x;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::sort(keys.begin(), keys.end());
  volatile uint64_t sink = keys[keys.size() / 2];
  (void)sink;
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace arbiter::bench
