// `arbiter bench`.
#include "bench_command.h"

#include <algorithm>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "arbiter/bench/scheduling_basic.h"

namespace arbiter::cmd {

int RunBenchCommand(const BenchFlags& flags, std::ostream& out, std::ostream& err) {
  if (flags.scenario != "SchedulingBasic") {
    err << "arbiter bench: unknown scenario \"" << flags.scenario << "\" (available: SchedulingBasic)\n";
    return 2;
  }
  bench::SchedulingBasicOptions o;
  o.nodes = flags.nodes;
  o.initial_pods = flags.initial_pods;
  o.measured_pods = flags.measured_pods;
  o.seed = flags.seed;
  std::vector<double> rates;
  for (int run = 1; run <= flags.runs; ++run) {
    auto r = bench::RunSchedulingBasic(o, [&](size_t done, size_t total) {
      err << "run " << run << "/" << flags.runs << ": " << done << "/" << total << " pods\n";
    });
    if (!r.ok()) {
      err << "arbiter bench: " << r.status().message() << "\n";
      return 1;
    }
    rates.push_back(r->pods_per_second);
    nlohmann::ordered_json j;
    j["scenario"] = r->name;
    j["run"] = run;
    j["nodes"] = r->nodes;
    j["measuredPods"] = r->measured_pods;
    j["scheduled"] = r->scheduled;
    j["seconds"] = r->seconds;
    j["podsPerSecond"] = r->pods_per_second;
    j["attemptLatencyMicros"] = {{"p50", r->attempt_p50_us}, {"p90", r->attempt_p90_us}, {"p99", r->attempt_p99_us}};
    j["peakRssKiB"] = r->peak_rss_kib;
    j["calibrationMillis"] = r->calibration_ms;
    j["anchor"] = {{"system", "kube-scheduler scheduler_perf CI floor"}, {"podsPerSecond", 680}};
    j["ratioToAnchor"] = r->pods_per_second / 680.0;
    out << j.dump() << "\n";
  }
  if (flags.runs > 1) {
    std::sort(rates.begin(), rates.end());
    nlohmann::ordered_json j;
    j["scenario"] = "SchedulingBasic/median";
    j["runs"] = flags.runs;
    j["medianPodsPerSecond"] = rates[rates.size() / 2];
    out << j.dump() << "\n";
  }
  return 0;
}

}  // namespace arbiter::cmd
