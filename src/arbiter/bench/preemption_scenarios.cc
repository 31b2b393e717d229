// PreemptionBasic and Unschedulable through the in-process simulation.
#include "arbiter/bench/preemption_scenarios.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "arbiter/bench/fixtures.h"
#include "arbiter/sim/cluster_simulation.h"

namespace arbiter::bench {

namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr Timestamp kStart = 1704067200LL * kSecond;

}  // namespace

nlohmann::ordered_json ResultFields(const PreemptionBenchResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.name;
  j["nodes"] = r.nodes;
  j["preemptors"] = r.preemptors;
  j["preemptions"] = r.preemptions;
  j["victims"] = r.victims;
  j["scheduled"] = r.scheduled;
  j["cycles"] = r.cycles;
  j["seconds"] = r.seconds;
  j["preemptionsPerSecond"] = r.preemptions_per_second;
  j["podsPerSecond"] = r.pods_per_second;
  j["attemptLatencyMicros"] = {{"p50", r.attempt_p50_us}, {"p90", r.attempt_p90_us}, {"p99", r.attempt_p99_us}};
  j["decisionLatencyMicros"] = {
      {"p50", r.decision_p50_us}, {"p90", r.decision_p90_us}, {"p99", r.decision_p99_us}, {"max", r.decision_max_us}};
  j["postFilterMeanMicros"] = r.evaluation_seconds_mean * 1e6;
  j["peakRssKiB"] = r.peak_rss_kib;
  j["calibrationMillis"] = r.calibration_ms;
  return j;
}

Status Measure(sim::ClusterSimulation& s, size_t total, const std::function<void(size_t, size_t)>& progress,
               PreemptionBenchResult& r, const MeasureHooks& hooks) {
  std::vector<double> attempts, decisions;
  const auto start = SteadyClock::now();
  bool idle = false;
  uint64_t last_attempts = 0;
  auto preemption_attempts = [&s]() -> uint64_t {
    uint64_t n = 0;
    if (const auto* m = s.scheduler().preemption_metrics()) n += m->attempts;
    if (const auto* m = s.scheduler().workload_preemption_metrics()) n += m->attempts;
    return n;
  };
  while (!idle) {
    const auto t0 = SteadyClock::now();
    auto out = s.Step(&idle);
    const double us = std::chrono::duration<double, std::micro>(SteadyClock::now() - t0).count();
    if (!out.ok()) return out.status();
    if (!*out) continue;
    ++r.cycles;
    attempts.push_back(us);
    if (const uint64_t n = preemption_attempts(); n != last_attempts) {
      last_attempts = n;
      decisions.push_back(us);
    }
    auto counts = [&](const sched::CycleOutcome& o) {
      return o.scheduled && (!hooks.counted || hooks.counted(*o.pod));
    };
    size_t bound = counts(**out) ? 1 : 0;
    for (const auto& m : (*out)->members) bound += counts(m) ? 1 : 0;
    for (size_t k = 0; k < bound; ++k) {
      if (++r.scheduled % 2000 == 0 && progress) progress(r.scheduled, total);
    }
    if (bound > 0 && hooks.after_bound) {
      ARBITER_RETURN_IF_ERROR(hooks.after_bound(r.scheduled));
      idle = false;  // pods created by the hook are still to be scheduled
    }
  }
  r.seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  if (const auto* m = s.scheduler().preemption_metrics()) {
    r.preemptions = m->preemptions;
    r.victims = m->victims;
    r.evaluation_seconds_mean =
        m->evaluation_seconds_count > 0 ? m->evaluation_seconds_sum / static_cast<double>(m->evaluation_seconds_count) : 0;
  }
  if (const auto* m = s.scheduler().workload_preemption_metrics()) {
    r.preemptions += m->preemptions;
    r.victims += m->victims;
  }
  r.preemptions_per_second = r.seconds > 0 ? static_cast<double>(r.preemptions) / r.seconds : 0;
  r.pods_per_second = r.seconds > 0 ? static_cast<double>(r.scheduled) / r.seconds : 0;
  r.decision_p50_us = Percentile(decisions, 0.50);
  r.decision_p90_us = Percentile(decisions, 0.90);
  r.decision_p99_us = Percentile(decisions, 0.99);
  r.decision_max_us = decisions.empty() ? 0 : *std::max_element(decisions.begin(), decisions.end());
  r.attempt_p50_us = Percentile(attempts, 0.50);
  r.attempt_p90_us = Percentile(attempts, 0.90);
  r.attempt_p99_us = Percentile(attempts, 0.99);
  r.peak_rss_kib = PeakRssKib();
  return Status::Ok();
}

sim::SimulationOptions QuietSimulation(uint64_t seed) {
  static const arbiter::SteadyClock wall;
  sim::SimulationOptions o;
  o.wall_clock = &wall;
  o.seed = seed;
  o.record = false;
  o.max_cycles = 100'000'000;
  return o;
}

StatusOr<PreemptionBenchResult> RunPreemptionBasic(const PreemptionBenchOptions& o,
                                                   const std::function<void(size_t, size_t)>& progress) {
  const double calibration = CalibrationMillis();
  sim::ClusterSimulation s(model::SchedulerConfig{}, kStart, QuietSimulation(o.seed));
  ARBITER_RETURN_IF_ERROR(s.Init());
  for (size_t i = 0; i < o.nodes; ++i) ARBITER_RETURN_IF_ERROR(s.AddNode(DefaultNode(i)));
  // 4 low-priority pods of 900m per node, as the scheduler binpacks them; placed directly.
  for (size_t i = 0; i < o.nodes * 4; ++i) {
    model::Pod p = BenchPod("low-" + std::to_string(i), 900, 0, 0);
    p.node_name = "node-" + std::to_string(i / 4);
    p.start_time = kStart - static_cast<Timestamp>(o.nodes * 4 - i) * kSecond;
    ARBITER_RETURN_IF_ERROR(s.AddRunningPod(std::move(p)));
  }
  for (size_t i = 0; i < o.nodes; ++i) {
    s.AddPendingPod(o.legacy ? BenchPod("high-" + std::to_string(i), 3000, 10, 0)
                             : BenchPod("high-" + std::to_string(i), 3970, 10000, 0));
  }
  PreemptionBenchResult r;
  r.name = std::string(o.legacy ? "PreemptionBasicLegacy/" : "PreemptionBasic/") + std::to_string(o.nodes) + "Nodes";
  r.nodes = o.nodes;
  r.preemptors = o.nodes;
  r.calibration_ms = calibration;
  ARBITER_RETURN_IF_ERROR(Measure(s, o.nodes, progress, r));
  if (r.scheduled != o.nodes) {
    return Status(StatusCode::kInternal, "only " + std::to_string(r.scheduled) + " of " +
                                             std::to_string(o.nodes) + " preemptors were scheduled");
  }
  return r;
}

StatusOr<PreemptionBenchResult> RunUnschedulable(const PreemptionBenchOptions& o,
                                                 const std::function<void(size_t, size_t)>& progress) {
  const double calibration = CalibrationMillis();
  sim::ClusterSimulation s(model::SchedulerConfig{}, kStart, QuietSimulation(o.seed));
  ARBITER_RETURN_IF_ERROR(s.Init());
  for (size_t i = 0; i < o.nodes; ++i) ARBITER_RETURN_IF_ERROR(s.AddNode(DefaultNode(i)));
  for (size_t i = 0; i < o.initial_pods; ++i) s.AddPendingPod(BenchPod("init-" + std::to_string(i), 100));
  bool idle = false;
  while (!idle) {
    auto out = s.Step(&idle);
    if (!out.ok()) return out.status();
  }
  size_t blockers = 0;
  for (size_t i = 0; i < o.measured_pods; ++i) {
    if (o.unschedulable_every > 0 && i % o.unschedulable_every == 0) {
      s.AddPendingPod(BenchPod("huge-" + std::to_string(blockers++), 9000, 10));
    }
    s.AddPendingPod(BenchPod("pod-" + std::to_string(i), 100));
  }
  PreemptionBenchResult r;
  r.name = "Unschedulable/" + std::to_string(o.nodes) + "Nodes_" + std::to_string(o.initial_pods) + "Init_" +
           std::to_string(o.measured_pods) + "Pods";
  r.nodes = o.nodes;
  r.preemptors = blockers;
  r.calibration_ms = calibration;
  ARBITER_RETURN_IF_ERROR(Measure(s, o.measured_pods, progress, r));
  return r;
}

}  // namespace arbiter::bench
