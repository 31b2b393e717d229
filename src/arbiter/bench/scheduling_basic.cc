// SchedulingBasic through the in-process engine.
#include "arbiter/bench/scheduling_basic.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "arbiter/sched/cycle/scheduler.h"

namespace arbiter::bench {

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

namespace {

model::Node MakeNode(size_t i) {
  model::Node n;
  n.name = "node-" + std::to_string(i);
  n.labels.Set("kubernetes.io/hostname", n.name);
  n.allocatable.milli_cpu = 4000;
  n.allocatable.memory = 32LL << 30;
  n.allocatable.pods = 110;
  return n;
}

model::Pod MakePod(const std::string& prefix, size_t i) {
  model::Pod p;
  p.ns = "default";
  p.name = prefix + std::to_string(i);
  p.uid = p.ns + "/" + p.name;
  p.requests.milli_cpu = 100;
  p.requests.memory = 500LL << 20;
  p.non_zero_milli_cpu = p.requests.milli_cpu;
  p.non_zero_memory = p.requests.memory;
  return p;
}

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  size_t k = static_cast<size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

}  // namespace

StatusOr<BenchResult> RunSchedulingBasic(const SchedulingBasicOptions& o,
                                         const std::function<void(size_t, size_t)>& progress) {
  const double calibration_ms = CalibrationMillis();
  VirtualClock clock(1704067200LL * kSecond);
  sched::SchedulerOptions so;
  so.seed = o.seed;
  sched::Scheduler s(model::SchedulerConfig{}, &clock, so);
  ARBITER_RETURN_IF_ERROR(s.Init());
  for (size_t i = 0; i < o.nodes; ++i) ARBITER_RETURN_IF_ERROR(s.cache().AddNode(MakeNode(i)));

  // Initial pods: scheduled through the engine, not measured.
  for (size_t i = 0; i < o.initial_pods; ++i) s.AddPendingPod(state::MakePodInfo(MakePod("init-", i)));
  while (s.ScheduleOne()) {
  }
  const size_t total = o.measured_pods;
  for (size_t i = 0; i < total; ++i) s.AddPendingPod(state::MakePodInfo(MakePod("measured-", i)));

  BenchResult r;
  r.name = "SchedulingBasic/" + std::to_string(o.nodes) + "Nodes_" + std::to_string(total) + "Pods";
  r.nodes = o.nodes;
  r.measured_pods = total;
  r.calibration_ms = calibration_ms;
  std::vector<double> latencies;
  latencies.reserve(total);
  using SteadyClock = std::chrono::steady_clock;
  const auto start = SteadyClock::now();
  size_t done = 0;
  while (true) {
    const auto t0 = SteadyClock::now();
    auto out = s.ScheduleOne();
    if (!out) break;
    latencies.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - t0).count());
    if (out->scheduled) ++r.scheduled;
    if (++done % 2000 == 0 && progress) progress(done, total);
    if (done > 4 * total) return Status(StatusCode::kInternal, "the benchmark did not settle");
  }
  r.seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  r.pods_per_second = r.seconds > 0 ? static_cast<double>(r.scheduled) / r.seconds : 0;
  r.attempt_p50_us = Percentile(latencies, 0.50);
  r.attempt_p90_us = Percentile(latencies, 0.90);
  r.attempt_p99_us = Percentile(latencies, 0.99);
  r.peak_rss_kib = PeakRssKib();
  return r;
}

}  // namespace arbiter::bench
