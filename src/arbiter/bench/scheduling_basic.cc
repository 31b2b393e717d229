// SchedulingBasic through the in-process engine.
#include "arbiter/bench/scheduling_basic.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "arbiter/bench/fixtures.h"
#include "arbiter/sched/cycle/scheduler.h"

namespace arbiter::bench {

StatusOr<BenchResult> RunSchedulingBasic(const SchedulingBasicOptions& o,
                                         const std::function<void(size_t, size_t)>& progress) {
  const double calibration_ms = CalibrationMillis();
  VirtualClock clock(1704067200LL * kSecond);
  sched::SchedulerOptions so;
  so.seed = o.seed;
  sched::Scheduler s(model::SchedulerConfig{}, &clock, so);
  ARBITER_RETURN_IF_ERROR(s.Init());
  for (size_t i = 0; i < o.nodes; ++i) ARBITER_RETURN_IF_ERROR(s.cache().AddNode(DefaultNode(i)));

  // Initial pods: scheduled through the engine, not measured.
  for (size_t i = 0; i < o.initial_pods; ++i) s.AddPendingPod(state::MakePodInfo(BenchPod("init-" + std::to_string(i), 100)));
  while (s.ScheduleOne()) {
  }
  const size_t total = o.measured_pods;
  for (size_t i = 0; i < total; ++i) s.AddPendingPod(state::MakePodInfo(BenchPod("measured-" + std::to_string(i), 100)));

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
