// `arbiter simulate`: flags to a cluster and a workload, the simulation, the report.
#include "simulate_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/base/time.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/model/quantity.h"
#include "arbiter/simulate/convert.h"
#include "arbiter/simulate/day_simulation.h"
#include "arbiter/simulate/nomad_day.h"
#include "arbiter/simulate/report.h"
#include "arbiter/simulate/workload.h"
#include "html_file.h"

namespace arbiter::cmd {

namespace {

constexpr int kInvalid = 2;
constexpr uint64_t kMaxWorkloadBytes = 4ULL << 30;  // a workload file (about 40 million arrivals)

// Generated nodes: 4 CPU, 16 GiB and 110 pods each (a Borg-sized machine), in ten zones.
manifest::Sourced<model::Node> GeneratedNode(int64_t i) {
  model::Node n;
  char name[32];
  std::snprintf(name, sizeof name, "node-%06lld", static_cast<long long>(i));
  n.name = name;
  n.labels.Set("kubernetes.io/hostname", n.name);
  n.labels.Set("topology.kubernetes.io/zone", "zone-" + std::to_string(i % 10));
  n.allocatable.milli_cpu = 4000;
  n.allocatable.memory = 16LL << 30;
  n.allocatable.pods = 110;
  n.capacity = n.allocatable;
  manifest::Origin origin;
  origin.file = "--nodes";
  origin.kind = "Node";
  origin.object = n.name;
  return {std::move(n), origin};
}

std::string Clock(int64_t seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(seconds / 3600),
                static_cast<long long>(seconds / 60 % 60));
  return buf;
}

void PrintTable(const simulate::Report& r, std::ostream& out) {
  out << r.config << ": " << r.nodes << " nodes, " << Clock(r.duration_seconds) << ", " << r.totals.pods << " pods, "
      << "mean utilisation " << static_cast<int>(r.utilisation * 1000) / 10.0 << "%\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %9s %9s %26s %10s %8s %14s %8s %8s\n", "BAND", "PRIORITY", "PODS",
                "PENDING P50/P95/P99 (s)", "PREEMPTED", "CAUSED", "LOST CPU-S", "CASCADE", "PENDING");
  out << line;
  auto row = [&](const simulate::BandReport& b, bool total) {
    char pending[64];
    std::snprintf(pending, sizeof pending, "%.1f/%.1f/%.1f", b.pending_seconds.p50, b.pending_seconds.p95,
                  b.pending_seconds.p99);
    std::snprintf(line, sizeof line, "%-14s %9s %9lld %26s %10lld %8lld %14.0f %8d %8lld\n", b.name.c_str(),
                  total ? "" : std::to_string(b.priority).c_str(), static_cast<long long>(b.pods), pending,
                  static_cast<long long>(b.preemptions), static_cast<long long>(b.preemptions_caused),
                  b.lost_cpu_seconds, b.cascade_depth, static_cast<long long>(b.pending_at_end));
    out << line;
  };
  for (const auto& b : r.bands) row(b, false);
  row(r.totals, true);
}

// "system,batch" (or "none") as Nomad's PreemptionConfig.
StatusOr<nomad::PreemptionConfig> PreemptionTypes(const std::string& flag, const std::string& list) {
  nomad::PreemptionConfig c;
  c.system = c.sysbatch = c.batch = c.service = false;
  if (list == "none") return c;
  std::stringstream in(list);
  std::string type;
  bool any = false;
  while (std::getline(in, type, ',')) {
    any = true;
    if (type == "system") {
      c.system = true;
    } else if (type == "sysbatch") {
      c.sysbatch = true;
    } else if (type == "batch") {
      c.batch = true;
    } else if (type == "service") {
      c.service = true;
    } else {
      return InvalidArgument(flag + ": \"" + type +
                             "\" is not a Nomad job type (system, sysbatch, batch, service; or none for no preemption)");
    }
  }
  if (!any) return InvalidArgument(flag + ": give job types (system, sysbatch, batch, service) or none");
  return c;
}

std::string NomadConfigName(const nomad::PreemptionConfig& c) {
  std::string types;
  for (auto [on, name] : {std::pair{c.system, "system"}, {c.sysbatch, "sysbatch"}, {c.batch, "batch"}, {c.service, "service"}}) {
    if (on) types += (types.empty() ? "" : ",") + std::string(name);
  }
  return "nomad (preemption: " + (types.empty() ? std::string("none") : types) + ")";
}

}  // namespace

int RunConvertCommand(const ConvertFlags& flags, std::ostream& out, std::ostream& err) {
  const std::string me = "arbiter simulate convert: ";
  simulate::ConvertOptions o;
  auto cpu = model::Quantity::Parse(flags.machine_cpu);
  if (!cpu.ok() || cpu->milli() <= 0) {
    err << me << "--machine-cpu: \"" << flags.machine_cpu << "\" is not a positive quantity (e.g. 4, 3500m)\n";
    return kInvalid;
  }
  auto memory = model::Quantity::Parse(flags.machine_memory);
  if (!memory.ok() || memory->value() <= 0) {
    err << me << "--machine-memory: \"" << flags.machine_memory << "\" is not a positive quantity (e.g. 16Gi)\n";
    return kInvalid;
  }
  o.machine_milli_cpu = cpu->milli();
  o.machine_memory = memory->value();
  std::vector<simulate::TraceFile> files;
  for (const auto& path : flags.inputs) {
    auto f = manifest::ReadInputFile(path, kMaxWorkloadBytes);
    if (!f.ok()) {
      err << f.status().message() << "\n";
      return kInvalid;
    }
    files.push_back({path, std::move(f->content)});
  }
  auto arrivals = simulate::ConvertTrace(flags.from, files, o);
  if (!arrivals.ok()) {
    err << me << arrivals.status().message() << "\n";
    return kInvalid;
  }
  int64_t pods = 0;
  for (const auto& a : *arrivals) pods += a.count;
  if (Status st = WriteHtml(flags.output, simulate::FormatWorkload(*arrivals)); !st.ok()) {
    err << me << "-o: " << st.message() << "\n";
    return 1;
  }
  out << flags.output << ": " << arrivals->size() << " arrivals, " << pods << " pods\n";
  return 0;
}

int RunSimulateCommand(const SimulateFlags& flags, std::ostream& out, std::ostream& err) {
  const std::string me = "arbiter simulate: ";
  auto nanos = ParseGoDurationNanos(flags.duration);
  if (!nanos.ok() || *nanos < 1'000'000'000LL || *nanos > 3650LL * 24 * 3600 * 1'000'000'000LL) {
    err << me << "--duration: \"" << flags.duration << "\" is not a duration from 1s to 3650 days (e.g. 24h, 90m)\n";
    return kInvalid;
  }
  const int64_t duration = *nanos / 1'000'000'000LL;
  auto repair = ParseGoDurationNanos(flags.node_repair);
  if (!repair.ok() || *repair < 1'000'000'000LL || *repair > 365LL * 24 * 3600 * 1'000'000'000LL) {
    err << me << "--node-repair: \"" << flags.node_repair << "\" is not a duration from 1s to 365 days (e.g. 1h, 30m)\n";
    return kInvalid;
  }
  if (!flags.workload.empty() && !flags.generate.empty()) {
    err << me << "give --workload or --generate, not both\n";
    return kInvalid;
  }
  // Nomad mode's flags, and the Kubernetes ones it does not read.
  std::vector<std::pair<nomad::PreemptionConfig, std::string>> nomad_configs;
  if (flags.nomad) {
    if (!flags.compare.empty()) {
      err << me << "--compare takes a KubeSchedulerConfiguration, which Nomad's scheduler does not read; with --nomad, "
                   "compare preemption settings with --compare-nomad-preemption\n";
      return kInvalid;
    }
    for (const auto& [flag, list] : {std::pair{std::string("--nomad-preemption"), flags.nomad_preemption},
                                     {std::string("--compare-nomad-preemption"), flags.compare_nomad_preemption}}) {
      if (list.empty() && flag != "--nomad-preemption") continue;
      auto c = PreemptionTypes(flag, list);
      if (!c.ok()) {
        err << me << c.status().message() << "\n";
        return kInvalid;
      }
      nomad_configs.emplace_back(*c, NomadConfigName(*c));
    }
  } else if (flags.nomad_preemption != "system" || !flags.compare_nomad_preemption.empty() ||
             flags.nomad_priority_delta != model::kNomadPriorityDelta) {
    err << me << "--nomad-preemption, --compare-nomad-preemption and --priority-delta are for Nomad mode: add --nomad\n";
    return kInvalid;
  }

  // The cluster.
  std::vector<manifest::InputFile> files;
  for (const auto& path : flags.files) {
    auto f = manifest::ReadInputFile(path);
    if (!f.ok()) {
      err << f.status().message() << "\n";
      return kInvalid;
    }
    files.push_back(std::move(*f));
  }
  manifest::LoadResult loaded = manifest::Load(files);
  if (!loaded.ok()) {
    for (const auto& e : loaded.errors) err << e << "\n";
    return kInvalid;
  }
  manifest::ClusterObjects& cluster = loaded.objects;
  if (!cluster.pods.empty()) {
    err << me << cluster.pods.front().origin.ToString()
        << ": the cluster files hold pods; the workload brings every pod (--workload or --generate)\n";
    return kInvalid;
  }
  if (flags.nomad) {
    // What Nomad's scheduler would not read is refused, not ignored.
    if (cluster.config) {
      err << me << cluster.config->origin.ToString()
          << ": Nomad's scheduler reads no KubeSchedulerConfiguration (--nomad); remove it or drop --nomad\n";
      return kInvalid;
    }
    if (!cluster.pdbs.empty()) {
      err << me << cluster.pdbs.front().origin.ToString()
          << ": Nomad's scheduler reads no PodDisruptionBudget (--nomad); remove it or drop --nomad\n";
      return kInvalid;
    }
    for (const auto& [node, origin] : cluster.nodes) {
      if (!node.taints.empty()) {
        err << me << origin.ToString() << ": Nomad's scheduler reads no taints (--nomad); remove them or drop --nomad\n";
        return kInvalid;
      }
    }
  }
  if (cluster.nodes.empty()) {
    for (int64_t i = 0; i < flags.nodes; ++i) cluster.nodes.push_back(GeneratedNode(i));
  }
  const simulate::TraceShape shape =
      flags.generate == "alibaba" ? simulate::TraceShape::kAlibaba : simulate::TraceShape::kBorg;
  // The workload, read before admission: the bands it names may need classes.
  std::vector<simulate::Arrival> arrivals;
  if (!flags.workload.empty()) {
    auto f = manifest::ReadInputFile(flags.workload, kMaxWorkloadBytes);
    if (!f.ok()) {
      err << f.status().message() << "\n";
      return kInvalid;
    }
    auto parsed = simulate::ParseWorkload(f->content, flags.workload);
    if (!parsed.ok()) {
      err << parsed.status().message() << "\n";
      return kInvalid;
    }
    arrivals = std::move(*parsed);
  }
  {
    // A generated workload's bands, and those of the generated or converted traces that a
    // workload file names, unless the cluster defines classes of those names.
    std::vector<simulate::Band> bands;
    if (flags.workload.empty()) {
      bands = simulate::BandsOf(shape);
    } else {
      std::set<std::string> named;
      for (const auto& a : arrivals) named.insert(a.priority_class);
      for (auto s : {simulate::TraceShape::kBorg, simulate::TraceShape::kAlibaba}) {
        for (const auto& band : simulate::BandsOf(s)) {
          if (named.contains(band.name)) bands.push_back(band);
        }
      }
    }
    for (const auto& band : bands) {
      bool have = false;
      for (const auto& [pc, origin] : cluster.priority_classes) have = have || pc.name == band.name;
      if (have) continue;
      model::PriorityClass pc;
      pc.name = band.name;
      pc.value = band.priority;
      manifest::Origin origin;
      origin.file = "--generate";
      origin.kind = "PriorityClass";
      origin.object = band.name;
      cluster.priority_classes.push_back({pc, origin});
    }
  }
  if (auto errors = admission::AdmitPriorities(cluster); !errors.empty()) {
    for (const auto& e : errors) err << e << "\n";
    return kInvalid;
  }

  // A generated workload, sized to the cluster.
  if (flags.workload.empty()) {
    simulate::GenerateOptions g;
    g.shape = shape;
    g.pods = flags.pods;
    g.duration_seconds = duration;
    g.seed = flags.seed;
    g.load = flags.load;
    int64_t largest = 0;
    for (const auto& [node, origin] : cluster.nodes) {
      g.cluster_milli_cpu += node.allocatable.milli_cpu;
      largest = std::max(largest, node.allocatable.milli_cpu);
    }
    g.max_milli_cpu = std::max<int64_t>(10, largest / 2);  // half the largest node
    arrivals = simulate::GenerateWorkload(g);
  }

  // The configurations.
  std::string primary_name = "upstream defaults";
  if (cluster.config) primary_name = cluster.config->origin.file;
  std::optional<manifest::ClusterObjects> other;
  if (!flags.compare.empty()) {
    auto config = manifest::LoadSchedulerConfigFile("--compare", flags.compare);
    if (!config.ok()) {
      err << config.status().message() << "\n";
      return kInvalid;
    }
    other = cluster;
    manifest::Origin origin;
    origin.file = flags.compare;
    origin.kind = "KubeSchedulerConfiguration";
    other->config = manifest::Sourced<model::SchedulerConfig>{*config, origin};
  }

  const bool show = flags.progress || isatty(STDERR_FILENO) == 1;
  auto run = [&](const manifest::ClusterObjects& c, const std::string& name) -> StatusOr<simulate::Report> {
    simulate::SimulateOptions o;
    o.duration_seconds = duration;
    o.seed = flags.seed;
    o.node_failures_per_day = flags.node_failures;
    o.node_repair_seconds = *repair / 1'000'000'000LL;
    const auto began = std::chrono::steady_clock::now();
    if (show) {
      o.progress = [&, name](const simulate::SimulateOptions::Progress& p) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
        const double done = p.duration_seconds > 0 ? static_cast<double>(p.simulated_seconds) / p.duration_seconds : 0;
        const double eta = done > 0.01 ? elapsed * (1 - done) / done : 0;
        char line[200];
        std::snprintf(line, sizeof line, "\r%s: simulated %s of %s, %lld pods, %lld pending, ETA %.0f s   ",
                      name.c_str(), Clock(p.simulated_seconds).c_str(), Clock(p.duration_seconds).c_str(),
                      static_cast<long long>(p.pods), static_cast<long long>(p.pending), eta);
        err << line << std::flush;
      };
    }
    StatusOr<simulate::Report> r = InvalidArgument("no engine");
    if (flags.nomad) {
      simulate::NomadSimulateOptions n;
      n.priority_delta = flags.nomad_priority_delta;
      for (const auto& [config, config_name] : nomad_configs) {
        if (config_name == name) n.preemption = config;
      }
      r = simulate::SimulateNomad(c, name, arrivals, o, n);
    } else {
      r = simulate::Simulate(c, name, arrivals, o);
    }
    if (show) err << "\n";
    return r;
  };
  if (flags.nomad) {
    primary_name = nomad_configs.front().second;
    if (nomad_configs.size() > 1) {
      if (nomad_configs[1].second == primary_name) {
        err << me << "--compare-nomad-preemption: the same job types as --nomad-preemption\n";
        return kInvalid;
      }
      other = cluster;
    }
  }
  auto report = run(cluster, primary_name);
  if (!report.ok()) {
    err << me << report.status().message() << "\n";
    return report.status().code() == StatusCode::kInvalidArgument ? kInvalid : 1;
  }
  std::optional<simulate::Report> compared;
  if (other) {
    auto r = run(*other, flags.nomad ? nomad_configs[1].second : flags.compare);
    if (!r.ok()) {
      err << me << r.status().message() << "\n";
      return r.status().code() == StatusCode::kInvalidArgument ? kInvalid : 1;
    }
    compared = std::move(*r);
  }
  const simulate::Report* cmp = compared ? &*compared : nullptr;

  std::string text;
  if (flags.output == "json") {
    text = simulate::ReportJson(*report, cmp);
  } else if (flags.output == "html") {
    text = simulate::ReportHtml(*report, cmp);
  } else {
    std::ostringstream s;
    PrintTable(*report, s);
    if (cmp != nullptr) {
      s << "\n";
      PrintTable(*cmp, s);
    }
    text = s.str();
  }
  if (flags.output_file.empty()) {
    out << text;
    return 0;
  }
  if (Status st = WriteHtml(flags.output_file, text); !st.ok()) {
    err << me << "--output-file: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace arbiter::cmd
