// `arbiter bench`.
#include "bench_command.h"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <streambuf>
#include <vector>

#include "arbiter/base/json.h"

#include "arbiter/bench/api_load.h"
#include "arbiter/bench/serve_load.h"
#include "arbiter/bench/decision_quality.h"
#include "arbiter/bench/model_footprint.h"
#include "arbiter/bench/gang_scenarios.h"
#include "arbiter/bench/nomad_placement.h"
#include "arbiter/bench/preemption_scenarios.h"
#include "arbiter/bench/scenario_file.h"
#include "arbiter/bench/scheduling_basic.h"
#include "arbiter/ui/dashboard.h"
#include "html_file.h"

namespace arbiter::cmd {

namespace {

using Json = nlohmann::ordered_json;

// The fields every preemption and gang scenario reports, with the run number.
Json ResultJson(const bench::PreemptionBenchResult& r, int run) {
  Json j = bench::ResultFields(r);
  j["run"] = run;
  return j;
}

// One run of a scenario as a JSON object, and the figure whose median is reported.
StatusOr<std::pair<Json, double>> RunOnce(const BenchFlags& f, int run, std::ostream& err) {
  auto progress = [&](size_t done, size_t total) {
    err << "run " << run << "/" << f.runs << ": " << done << "/" << total << " pods\n";
  };
  Json j;
  if (f.scenario == "SchedulingBasic") {
    bench::SchedulingBasicOptions o;
    o.nodes = f.nodes;
    o.initial_pods = f.initial_pods;
    o.measured_pods = f.measured_pods;
    o.seed = f.seed;
    auto r = bench::RunSchedulingBasic(o, progress);
    if (!r.ok()) return r.status();
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
    return std::make_pair(j, r->pods_per_second);
  }
  if (f.scenario == "NomadPlacement") {
    auto n = bench::RunNomadPlacement(f.nodes, f.seed);
    if (!n.ok()) return n.status();
    j["scenario"] = n->name;
    j["run"] = run;
    j["nodes"] = n->nodes;
    j["placements"] = n->placements;
    j["preempted"] = n->preempted;
    j["seconds"] = n->seconds;
    j["placementsPerSecond"] = n->placements_per_second;
    j["peakRssKiB"] = n->peak_rss_kib;
    j["calibrationMillis"] = n->calibration_ms;
    j["anchor"] = {{"system", "Nomad C2M: about 1,500 allocations/s placed across the cluster"}, {"placementsPerSecond", 1500}};
    j["ratioToAnchor"] = n->placements_per_second / 1500.0;
    return std::make_pair(j, n->placements_per_second);
  }
  StatusOr<bench::PreemptionBenchResult> r = Status(StatusCode::kInvalidArgument, "");
  double anchor = 0;
  std::string anchor_text;
  bool per_pod = false;  // the anchor is pods/s (else a decision latency in microseconds)
  if (f.scenario.rfind("Gang", 0) == 0 || f.scenario == "PreemptionPodGroupDisruptionMode") {
    bench::GangBenchOptions g;
    g.seed = f.seed;
    g.mode = f.mode;
    if (f.scenario == "GangScheduling") {
      g.nodes = f.nodes;
      g.gangs = f.gangs.value_or(10);
      g.pods_per_gang = f.pods_per_gang.value_or(5000);
      r = bench::RunGangScheduling(g, progress);
      anchor = 680;
      anchor_text = "kube-scheduler SchedulingBasic CI floor, pods/s (GangScheduling has no published figure)";
      per_pod = true;
    } else if (f.scenario == "PreemptionPodGroupDisruptionMode") {
      g.nodes = f.nodes == 5000 ? 1000 : f.nodes;  // the suite's size unless --nodes says otherwise
      r = bench::RunPreemptionPodGroupDisruptionMode(g, progress);
      anchor = 69000;
      anchor_text = "kube-scheduler pod-preempts-PodGroup at 1000 nodes, p99 attempt latency in us (PR #140651)";
    } else {
      g.nodes = f.nodes == 5000 ? 100 : f.nodes;
      g.gangs = f.gangs.value_or(1);
      g.pods_per_gang = f.pods_per_gang.value_or(100);
      r = f.scenario == "GangPreemptionBasic" ? bench::RunGangPreemptionBasic(g, progress)
                                              : bench::RunGangPreemptionPodGroups(g, progress);
      anchor = 50000;
      anchor_text = "Arbiter's target for one GangPreemptionBasic decision (1 gang x 100 pods), in us";
    }
    if (!r.ok()) return r.status();
    j = ResultJson(*r, run);
    if (per_pod) {
      j["anchor"] = {{"system", anchor_text}, {"podsPerSecond", anchor}};
      j["ratioToAnchor"] = r->pods_per_second / anchor;
      return std::make_pair(j, r->pods_per_second);
    }
    j["anchor"] = {{"system", anchor_text}, {"micros", anchor}};
    j["ratioToAnchor"] = r->decision_p99_us > 0 ? anchor / r->decision_p99_us : 0;
    return std::make_pair(j, r->decision_p99_us);
  }
  bench::PreemptionBenchOptions o;
  o.nodes = f.nodes;
  o.initial_pods = f.initial_pods;
  o.measured_pods = f.measured_pods;
  o.seed = f.seed;
  if (f.scenario == "PreemptionBasic" || f.scenario == "PreemptionBasicLegacy") {
    o.legacy = f.scenario == "PreemptionBasicLegacy";
    r = bench::RunPreemptionBasic(o, progress);
    // kube-scheduler's published figures: 99.5 pods/s at 1000 nodes (PR #137981), 16.45 at 5000
    // nodes (PR #94814); other sizes are compared with the nearer of the two.
    const bool small = f.nodes <= 2000;
    anchor = small ? 99.5 : 16.45;
    anchor_text = small ? "kube-scheduler PreemptionBasic/1000Nodes, pods/s (PR #137981)"
                        : "kube-scheduler PreemptionBasic/5000Nodes, pods/s (PR #94814)";
  } else {
    r = bench::RunUnschedulable(o, progress);
    anchor = 600;
    anchor_text = "kube-scheduler Unschedulable/5kNodes/20kInit/10kPods CI floor, pods/s";
  }
  if (!r.ok()) return r.status();
  j = ResultJson(*r, run);
  j["anchor"] = {{"system", anchor_text}, {"podsPerSecond", anchor}};
  j["ratioToAnchor"] = r->pods_per_second / anchor;
  const bool preemption_metric = f.scenario != "Unschedulable";
  return std::make_pair(j, preemption_metric ? r->preemptions_per_second : r->pods_per_second);
}

}  // namespace

static int RunBenchFiles(const BenchFlags& flags, std::ostream& out, std::ostream& err) {
  int status = 0;
  for (const auto& file : flags.files) {
    if (!flags.label.empty()) {
      auto labels = bench::ScenarioLabels(file);
      if (!labels.ok()) {
        err << "arbiter bench: " << labels.status().message() << "\n";
        return 2;
      }
      if (std::find(labels->begin(), labels->end(), flags.label) == labels->end()) continue;
    }
    err << "arbiter bench: running " << file << "\n";
    auto r = bench::RunScenarioFile(file, [&](size_t done, size_t total) {
      err << file << ": " << done << "/" << total << " pods\n";
    });
    if (!r.ok()) {
      err << "arbiter bench: " << r.status().message() << "\n";
      return r.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
    }
    const Json& j = *r;
    if (!j["expectationsFailed"].empty()) {
      for (const auto& f : j["expectationsFailed"]) err << file << ": expectation failed: " << f.get<std::string>() << "\n";
      status = 1;
    }
    if (flags.output == "table") {
      out << j["scenario"].get<std::string>() << ": ";
      if (j.contains("nomad")) {
        out << j["nomad"]["placementsPerSecond"].get<double>() << " placements/s";
      } else {
        out << j["podsPerSecond"].get<double>() << " pods/s, attempt p99 " << j["attemptLatencyMicros"]["p99"].get<double>()
            << " us, " << j["preemptions"].get<size_t>() << " preemptions";
      }
      out << "\n";
    } else {
      out << j.dump() << "\n";
    }
  }
  return status;
}

// The serve scenarios: a fresh server per run; one JSON line per run, then the medians.
int RunServeBench(const BenchFlags& flags, std::ostream& out, std::ostream& err) {
  bench::ServeLoadOptions o;
  o.scenario = flags.scenario;
  std::error_code ec;
  o.arbiter = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  o.store = flags.store;
  o.nodes = flags.nodes;
  o.initial_pods = flags.initial_pods_given ? flags.initial_pods : 0;
  o.measured_pods = flags.measured_pods;
  // One preemptor per node: each takes a whole node once its four low-priority pods are evicted.
  const bool preemption = flags.scenario == "ServePreemptionBasic" || flags.scenario == "SchedulePreemptionBasic";
  if (preemption && !flags.measured_pods_given) o.measured_pods = flags.nodes;
  o.connections = flags.connections_given ? flags.connections : 16;
  o.serve_flags = flags.serve_flags;
  o.poll_unbound_seconds = flags.poll_unbound;
  o.scheduler_flags = flags.scheduler_flags;
  o.kubeconfig = flags.kubeconfig;
  o.scheduler = flags.scheduler;
  o.kube_scheduler = flags.kube_scheduler;
  if (flags.scheduler_qps >= 0) o.scheduler_qps = flags.scheduler_qps;
  if (flags.scheduler_burst >= 0) o.scheduler_burst = flags.scheduler_burst;
  // A connection the server closed fails its next write (EPIPE) rather than ending the process.
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<double> lags, rates, rss;
  for (int run = 1; run <= flags.runs; ++run) {
    err << flags.scenario << ": run " << run << "/" << flags.runs << ", " << o.nodes << " nodes, "
        << (o.kubeconfig.empty() ? o.store + " store" : "the API server of " + o.kubeconfig) << "\n";
    auto r = bench::RunServeLoad(o, [&](const std::string& line) { err << flags.scenario << ": " << line << "\n"; });
    if (!r.ok()) {
      err << "arbiter bench: " << r.status().message() << "\n";
      return 1;
    }
    Json j = {{"scenario", flags.scenario}, {"store", o.kubeconfig.empty() ? o.store : "the API server's"}, {"nodes", o.nodes}, {"run", run}};
    if (preemption) {
      j["initialPods"] = 4 * o.nodes;
      j["preemptors"] = r->created;
      j["preemptorsPerSecond"] = r->bound_per_second;
      j["victimsDeleted"] = r->victims_deleted;
      j["victimsWithDisruptionTarget"] = r->victims_with_condition;
      j["preemptedEvents"] = r->preempted_events;
    } else {
      j["initialPods"] = o.initial_pods;
      j["pods"] = r->created;
      j["podsPerSecond"] = r->bound_per_second;
    }
    j["createsPerSecond"] = r->creates_per_second;
    j["lagAfterLastCreateSeconds"] = r->lag_seconds;
    j["peakRssMiB"] = r->peak_rss_mib;
    if (o.poll_unbound_seconds > 0) {
      j["pollUnboundSeconds"] = o.poll_unbound_seconds;
      j["polls"] = r->polls;
      j["slowestPollSeconds"] = r->slowest_poll_seconds;
    }
    if (flags.scenario.rfind("Schedule", 0) == 0) {
      j["scheduler"] = o.scheduler;
      j["apiServer"] = o.kubeconfig.empty() ? "arbiter serve" : o.kubeconfig;
      if (o.scheduler_qps) j["schedulerQps"] = *o.scheduler_qps;
      if (o.scheduler_burst) j["schedulerBurst"] = *o.scheduler_burst;
      j["schedulerPeakRssMiB"] = r->scheduler_peak_rss_mib;
      j["schedulerFlags"] = o.scheduler_flags;
    }
    j["attempts"] = {{"scheduled", r->attempts_scheduled},
                     {"unschedulable", r->attempts_unschedulable},
                     {"preemptions", r->preemption_attempts}};
    j["controlLoopStore"] = {{"writes", r->loop_writes}, {"batches", r->loop_batches}};
    out << j.dump() << std::endl;
    lags.push_back(r->lag_seconds);
    rates.push_back(r->bound_per_second);
    rss.push_back(r->peak_rss_mib);
  }
  if (flags.runs > 1) {
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    Json j = {{"scenario", flags.scenario + "/median"}, {"store", o.store}, {"nodes", o.nodes}, {"runs", flags.runs},
              {"medianLagAfterLastCreateSeconds", median(lags)},
              {preemption ? "medianPreemptorsPerSecond" : "medianPodsPerSecond", median(rates)},
              {"medianPeakRssMiB", median(rss)}};
    out << j.dump() << "\n";
  }
  return 0;
}

namespace {

// A stream buffer that writes to `out` and keeps a copy (the results --html plots).
class TeeBuf final : public std::streambuf {
 public:
  explicit TeeBuf(std::streambuf* out) : out_(out) {}
  const std::string& copy() const { return copy_; }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    copy_.push_back(traits_type::to_char_type(c));
    return out_->sputc(traits_type::to_char_type(c));
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    copy_.append(s, static_cast<size_t>(n));
    return out_->sputn(s, n);
  }
  int sync() override { return out_->pubsync(); }

 private:
  std::streambuf* out_;
  std::string copy_;
};

int RunBench(const BenchFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace

int RunBenchCommand(const BenchFlags& flags, std::ostream& out, std::ostream& err) {
  if (flags.html.empty()) return RunBench(flags, out, err);
  TeeBuf tee(out.rdbuf());
  std::ostream both(&tee);
  const int code = RunBench(flags, both, err);
  both.flush();
  // Every JSON line the runs printed (the medians' lines are recognised and left out).
  std::vector<Json> runs;
  std::istringstream lines(tee.copy());
  for (std::string line; std::getline(lines, line);) {
    Json j = Json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("scenario")) runs.push_back(std::move(j));
  }
  const Json report = ui::BenchReport(runs);
  if (report["bench"].empty()) {
    err << "arbiter bench: --html " << flags.html
        << ": no result to plot (the report reads the JSON results, -o json, of runs that report pods/s)\n";
    return code != 0 ? code : 1;
  }
  if (Status w = WriteHtml(flags.html, ui::Page(&report)); !w.ok()) {
    err << "arbiter bench: --html " << flags.html << ": " << w.message() << "\n";
    return 1;
  }
  err << "arbiter bench: wrote the report to " << flags.html << "\n";
  return code;
}

namespace {

int RunBench(const BenchFlags& flags, std::ostream& out, std::ostream& err) {
  if (!flags.files.empty()) return RunBenchFiles(flags, out, err);
  static const std::vector<std::string> kScenarios = {
      "SchedulingBasic", "PreemptionBasic",         "PreemptionBasicLegacy",  "Unschedulable",
      "GangScheduling",  "GangPreemptionBasic",     "GangPreemptionPodGroups", "PreemptionPodGroupDisruptionMode",
      "NomadPlacement", "DecisionQuality", "ApiLoad", "ServeSchedulingBasic", "ServePreemptionBasic",
      "ScheduleSchedulingBasic", "SchedulePreemptionBasic", "ModelFootprint"};
  if (std::find(kScenarios.begin(), kScenarios.end(), flags.scenario) == kScenarios.end()) {
    err << "arbiter bench: unknown scenario \"" << flags.scenario << "\" (available:";
    for (const auto& s : kScenarios) err << " " << s;
    err << ")\n";
    return 2;
  }
  if (flags.scenario.rfind("Serve", 0) == 0 || flags.scenario.rfind("Schedule", 0) == 0) {
    return RunServeBench(flags, out, err);
  }
  if (flags.scenario == "ModelFootprint") {
    if (flags.dump.empty()) {
      err << "arbiter bench: ModelFootprint needs --dump FILE (scripts/make-cluster-dump.py writes one)\n";
      return 2;
    }
    auto r = bench::MeasureModelFootprint(flags.dump);
    if (!r.ok()) {
      err << "arbiter bench: " << r.status().message() << "\n";
      return 1;
    }
    out << Json{{"scenario", "ModelFootprint"}, {"dump", flags.dump}, {"nodes", r->nodes}, {"pods", r->pods},
                {"loadSeconds", r->load_seconds}, {"bytesPerNode", r->bytes_per_node},
                {"bytesPerPod", r->bytes_per_pod}, {"allocator", r->allocator}}
               .dump()
        << "\n";
    return 0;
  }
  if (flags.scenario == "ApiLoad") {
    bench::ApiLoadOptions o;
    o.server = flags.server;
    o.token = flags.token;
    o.pods = flags.measured_pods;
    o.connections = flags.connections;
    err << "api load: " << o.pods << " pods over " << o.connections << " connections to " << o.server << "\n";
    auto r = bench::RunApiLoad(o, [&](size_t done, size_t total) { err << done << "/" << total << " pods created\n"; });
    if (!r.ok()) {
      err << "arbiter bench: " << r.status().message() << "\n";
      return 1;
    }
    Json j = {{"scenario", "ApiLoad"}, {"server", o.server}, {"connections", o.connections},
              {"created", r->created}, {"createSeconds", r->create_seconds},
              {"createsPerSecond", r->creates_per_second}, {"bound", r->bound},
              {"allBoundSeconds", r->all_bound_seconds}};
    out << j.dump() << "\n";
    return r->all_bound_seconds < 0 ? 1 : 0;
  }
  if (flags.scenario == "DecisionQuality") {
    err << "decision quality: " << flags.clusters << " random clusters, seed " << flags.seed << "\n";
    auto r = bench::RunDecisionQuality(flags.clusters, flags.seed);
    if (!r.ok()) {
      err << "arbiter bench: " << r.status().message() << "\n";
      return 1;
    }
    for (const auto& q : *r) {
      Json j;
      j["scenario"] = "DecisionQuality";
      j["engine"] = q.engine;
      j["seed"] = flags.seed;
      j["clustersWherePreemptionHelps"] = q.clusters;
      j["optimal"] = q.optimal;
      j["optimalPercent"] = q.clusters > 0 ? 100.0 * static_cast<double>(q.optimal) / static_cast<double>(q.clusters) : 0;
      j["worse"] = q.worse;
      j["missed"] = q.missed;
      j["meanExcessVictims"] = q.mean_excess_victims;
      j["meanExcessPrioritySum"] = q.mean_excess_priority_sum;
      j["cheaperThanOptimum"] = q.beat_optimum;
      if (q.engine == "optimal") j["searchBoundHit"] = q.fallbacks;
      out << j.dump() << "\n";
    }
    return 0;
  }
  std::vector<double> figures;
  for (int run = 1; run <= flags.runs; ++run) {
    auto r = RunOnce(flags, run, err);
    if (!r.ok()) {
      err << "arbiter bench: " << r.status().message() << "\n";
      return 1;
    }
    figures.push_back(r->second);
    out << r->first.dump() << "\n";
  }
  if (flags.runs > 1) {
    std::sort(figures.begin(), figures.end());
    Json j;
    j["scenario"] = flags.scenario + "/median";
    j["runs"] = flags.runs;
    const bool latency = flags.scenario == "PreemptionPodGroupDisruptionMode" ||
                         flags.scenario.rfind("GangPreemption", 0) == 0;
    const char* key = flags.scenario == "NomadPlacement"         ? "medianPlacementsPerSecond"
                      : latency                                   ? "medianDecisionP99Micros"
                      : flags.scenario.rfind("Preemption", 0) == 0 ? "medianPreemptionsPerSecond"
                                                                  : "medianPodsPerSecond";
    j[key] = figures[figures.size() / 2];
    out << j.dump() << "\n";
  }
  return 0;
}

}  // namespace

}  // namespace arbiter::cmd
