// Scenario files: parsing, steps, measurement.
#include "arbiter/bench/scenario_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "arbiter/bench/fixtures.h"
#include "arbiter/bench/nomad_placement.h"
#include "arbiter/bench/preemption_scenarios.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/model/quantity.h"

namespace arbiter::bench {

namespace {

using Json = nlohmann::ordered_json;
constexpr Timestamp kStart = 1704067200LL * kSecond;

// Field access with errors naming file, step and field.
class Fields {
 public:
  Fields(std::string where, const YAML::Node& node) : where_(std::move(where)), node_(node) {}
  Status Error(const std::string& field, const std::string& msg) const {
    return Status(StatusCode::kInvalidArgument, where_ + ": " + field + ": " + msg);
  }
  StatusOr<int64_t> Int(const std::string& field, int64_t fallback, int64_t min = 0) const {
    const YAML::Node v = node_[field];
    if (!v) return fallback;
    try {
      const int64_t n = v.as<int64_t>();
      if (n < min) return Error(field, "must be at least " + std::to_string(min));
      return n;
    } catch (const YAML::Exception&) {
      return Error(field, "must be an integer");
    }
  }
  // A Kubernetes quantity; `milli` selects milli-units (CPU).
  StatusOr<int64_t> Quantity(const std::string& field, int64_t fallback, bool milli) const {
    const YAML::Node v = node_[field];
    if (!v) return fallback;
    auto q = model::Quantity::Parse(v.as<std::string>(""));
    if (!q.ok()) return Error(field, q.status().message());
    return milli ? q->milli() : q->value();
  }
  StatusOr<std::string> String(const std::string& field, const std::string& fallback) const {
    const YAML::Node v = node_[field];
    if (!v) return fallback;
    if (!v.IsScalar()) return Error(field, "must be a string");
    return v.as<std::string>();
  }
  bool Bool(const std::string& field) const {
    const YAML::Node v = node_[field];
    return v && v.IsScalar() && v.as<std::string>() == "true";
  }
  const std::string& where() const { return where_; }
  // Every field of the step is one of `known`: a misspelt field is an error naming it, never a
  // default silently taken.
  Status Known(std::initializer_list<std::string_view> known) const {
    if (!node_ || node_.IsNull()) return Status::Ok();
    if (!node_.IsMap()) return Status(StatusCode::kInvalidArgument, where_ + ": must be a map of fields");
    for (const auto& kv : node_) {
      const std::string key = kv.first.as<std::string>();
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string list;
        for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        return Error(key, "unknown field (" + list + ")");
      }
    }
    return Status::Ok();
  }

 private:
  std::string where_;
  YAML::Node node_;
};

struct Runner {
  explicit Runner(model::SchedulerConfig config) : sim(std::move(config), kStart, QuietSimulation(0)) {}
  sim::ClusterSimulation sim;
  size_t nodes = 0;
  size_t pods = 0;
  std::vector<std::string> last_groups;
  bool measure_next = false;
  size_t measured_pods = 0;
  PreemptionBenchResult measured;
  // Background churn during the measured phase (scheduler_perf's `churn mode=create`): one pod
  // of the template per `every` measured pods bound. kube-scheduler's churn is one pod per
  // 200 ms of wall time; at its CI floor (570-600 pods/s) that is one per ~115 measured pods,
  // which is the ratio a scenario states here, so that the mix does not depend on speed.
  struct Churn {
    int64_t every = 0;  // 0: no churn
    int64_t cpu = 0, memory = 0, grace = 0;
    int32_t priority = 0;
    size_t created = 0, next_at = 0;
  } churn;

  Status CreateNodes(const Fields& f) {
    ARBITER_RETURN_IF_ERROR(f.Known({"count", "cpu", "memory", "maxPods"}));
    ARBITER_ASSIGN_OR_RETURN(count, f.Int("count", 1, 1));
    ARBITER_ASSIGN_OR_RETURN(cpu, f.Quantity("cpu", 4000, true));
    ARBITER_ASSIGN_OR_RETURN(memory, f.Quantity("memory", int64_t{32} << 30, false));
    ARBITER_ASSIGN_OR_RETURN(max_pods, f.Int("maxPods", 110, 1));
    for (int64_t i = 0; i < count; ++i) {
      model::Node n = DefaultNode(nodes++);
      n.allocatable.milli_cpu = cpu;
      n.allocatable.memory = memory;
      n.allocatable.pods = max_pods;
      ARBITER_RETURN_IF_ERROR(sim.AddNode(std::move(n)));
    }
    return Status::Ok();
  }

  Status CreatePodGroups(const Fields& f) {
    ARBITER_RETURN_IF_ERROR(f.Known({"count", "minCount", "priority", "disruptionMode"}));
    ARBITER_ASSIGN_OR_RETURN(count, f.Int("count", 1, 1));
    ARBITER_ASSIGN_OR_RETURN(min_count, f.Int("minCount", 1, 0));
    ARBITER_ASSIGN_OR_RETURN(priority, f.Int("priority", 0, -2147483648LL));
    ARBITER_ASSIGN_OR_RETURN(mode, f.String("disruptionMode", "single"));
    if (mode != "single" && mode != "all") return f.Error("disruptionMode", "must be single or all");
    last_groups.clear();
    for (int64_t i = 0; i < count; ++i) {
      model::PodGroup g;
      g.name = "group-" + std::to_string(i) + "-" + std::to_string(pods);
      g.policy = min_count > 0 ? model::GroupPolicy::kGang : model::GroupPolicy::kBasic;
      g.min_count = static_cast<int32_t>(min_count);
      g.disruption_mode = mode == "all" ? model::DisruptionMode::kAll : model::DisruptionMode::kSingle;
      g.priority.priority = static_cast<int32_t>(priority);
      sim.AddPodGroup(g);
      last_groups.push_back(g.name);
    }
    return Status::Ok();
  }

  Status CreatePods(const Fields& f) {
    ARBITER_RETURN_IF_ERROR(f.Known({"count", "cpu", "memory", "priority", "gracePeriodSeconds", "runningPerNode",
                                     "podsPerGroup", "startedSecondsEarlier", "measure"}));
    ARBITER_ASSIGN_OR_RETURN(count, f.Int("count", 1, 1));
    ARBITER_ASSIGN_OR_RETURN(cpu, f.Quantity("cpu", 100, true));
    ARBITER_ASSIGN_OR_RETURN(memory, f.Quantity("memory", int64_t{500} << 20, false));
    ARBITER_ASSIGN_OR_RETURN(priority, f.Int("priority", 0, -2147483648LL));
    ARBITER_ASSIGN_OR_RETURN(grace, f.Int("gracePeriodSeconds", model::kDefaultTerminationGracePeriodSeconds, 0));
    ARBITER_ASSIGN_OR_RETURN(per_node, f.Int("runningPerNode", 0, 0));
    ARBITER_ASSIGN_OR_RETURN(per_group, f.Int("podsPerGroup", 0, 0));
    // Running pods started `count - i` seconds before the run, plus this (an older cohort).
    ARBITER_ASSIGN_OR_RETURN(started_before, f.Int("startedSecondsEarlier", 0, 0));
    if (started_before > 100LL * 366 * 24 * 3600) return f.Error("startedSecondsEarlier", "must be at most 100 years");
    if (per_node > 0 && nodes == 0) return f.Error("runningPerNode", "no nodes were created before this step");
    if (per_group > 0 && static_cast<size_t>((count + per_group - 1) / per_group) > last_groups.size()) {
      return f.Error("podsPerGroup", "needs " + std::to_string((count + per_group - 1) / per_group) +
                                         " groups; the last createPodGroups step made " +
                                         std::to_string(last_groups.size()));
    }
    for (int64_t i = 0; i < count; ++i) {
      model::Pod p = BenchPod("pod-" + std::to_string(pods), cpu, static_cast<int32_t>(priority), grace);
      p.requests.memory = memory;
      if (per_group > 0) p.pod_group_name = last_groups[static_cast<size_t>(i / per_group)];
      ++pods;
      if (per_node > 0) {
        const size_t node = static_cast<size_t>(i / per_node) % nodes;
        p.node_name = "node-" + std::to_string(node);
        p.start_time = kStart - static_cast<Timestamp>(count - i + started_before) * kSecond;
        ARBITER_RETURN_IF_ERROR(sim.AddRunningPod(std::move(p)));
      } else {
        sim.AddPendingPod(std::move(p));
      }
    }
    if (f.Bool("measure")) {
      measure_next = true;
      measured_pods = static_cast<size_t>(count);
    }
    return Status::Ok();
  }

  Status SetChurn(const Fields& f) {
    ARBITER_RETURN_IF_ERROR(f.Known({"mode", "everyMeasuredPods", "cpu", "memory", "priority", "gracePeriodSeconds"}));
    ARBITER_ASSIGN_OR_RETURN(mode, f.String("mode", "create"));
    if (mode != "create") return f.Error("mode", "only create is supported");
    ARBITER_ASSIGN_OR_RETURN(every, f.Int("everyMeasuredPods", 100, 1));
    ARBITER_ASSIGN_OR_RETURN(cpu, f.Quantity("cpu", 100, true));
    ARBITER_ASSIGN_OR_RETURN(memory, f.Quantity("memory", int64_t{500} << 20, false));
    ARBITER_ASSIGN_OR_RETURN(priority, f.Int("priority", 0, -2147483648LL));
    ARBITER_ASSIGN_OR_RETURN(grace, f.Int("gracePeriodSeconds", model::kDefaultTerminationGracePeriodSeconds, 0));
    churn = {every, cpu, memory, grace, static_cast<int32_t>(priority), 0, 0};
    return Status::Ok();
  }

  Status AddChurnPods(size_t bound) {
    while (churn.every > 0 && bound >= churn.next_at) {
      model::Pod p = BenchPod("churn-" + std::to_string(churn.created++), churn.cpu, churn.priority, churn.grace);
      p.requests.memory = churn.memory;
      sim.AddPendingPod(std::move(p));
      churn.next_at += static_cast<size_t>(churn.every);
    }
    return Status::Ok();
  }

  Status Barrier(const std::function<void(size_t, size_t)>& progress) {
    if (measure_next) {
      measure_next = false;
      if (churn.every == 0) return Measure(sim, measured_pods, progress, measured);
      MeasureHooks hooks;
      hooks.counted = [](const state::PodInfo& p) { return !p.pod.name.starts_with("churn-"); };
      hooks.after_bound = [this](size_t bound) { return AddChurnPods(bound); };
      ARBITER_RETURN_IF_ERROR(AddChurnPods(0));  // the first churn pod arrives with the measured ones
      return Measure(sim, measured_pods, progress, measured, hooks);
    }
    bool idle = false;
    while (!idle) {
      auto out = sim.Step(&idle);
      if (!out.ok()) return out.status();
    }
    return Status::Ok();
  }
};

}  // namespace

StatusOr<std::vector<std::string>> ScenarioLabels(const std::string& path) {
  try {
    YAML::Node root = YAML::LoadFile(path);
    std::vector<std::string> out;
    if (root["labels"]) {
      for (const auto& l : root["labels"]) out.push_back(l.as<std::string>());
    }
    return out;
  } catch (const YAML::Exception& e) {
    return Status(StatusCode::kInvalidArgument, path + ": " + e.what());
  }
}

StatusOr<Json> RunScenarioFile(const std::string& path, const std::function<void(size_t, size_t)>& progress) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return Status(StatusCode::kInvalidArgument, path + ": " + e.what());
  }
  if (!root.IsMap()) return Status(StatusCode::kInvalidArgument, path + ": must be a map with name and steps");
  const std::string name = root["name"] ? root["name"].as<std::string>() : path;
  Json j;
  j["scenario"] = name;
  j["file"] = path;
  j["labels"] = Json::array();
  if (root["labels"]) {
    for (const auto& l : root["labels"]) j["labels"].push_back(l.as<std::string>());
  }
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    static const std::set<std::string> kKeys = {"name", "labels", "expect", "steps", "anchor", "config"};
    if (!kKeys.count(key)) {
      return Status(StatusCode::kInvalidArgument,
                    path + ": " + key + ": unknown field (name, labels, config, steps, expect, anchor)");
    }
  }
  // `config`: a KubeSchedulerConfiguration file (relative to the scenario's directory) whose
  // profile the scenario's scheduler runs.
  model::SchedulerConfig config;
  if (const YAML::Node c = root["config"]) {
    if (!c.IsScalar()) return Status(StatusCode::kInvalidArgument, path + ": config: must be a file name");
    const std::filesystem::path file = std::filesystem::path(path).parent_path() / c.as<std::string>();
    ARBITER_ASSIGN_OR_RETURN(loaded, manifest::LoadSchedulerConfigFile(path + ": config", file.string()));
    config = std::move(loaded);
  }
  const double calibration = CalibrationMillis();
  Runner runner(std::move(config));
  ARBITER_RETURN_IF_ERROR(runner.sim.Init());
  const YAML::Node steps = root["steps"];
  if (!steps || !steps.IsSequence() || steps.size() == 0) {
    return Status(StatusCode::kInvalidArgument, path + ": steps: a non-empty list is required");
  }
  Json nomad;
  for (size_t i = 0; i < steps.size(); ++i) {
    const YAML::Node step = steps[i];
    if (!step.IsMap() || step.size() != 1) {
      return Status(StatusCode::kInvalidArgument, path + ": steps[" + std::to_string(i) + "]: must be one operation");
    }
    const std::string op = step.begin()->first.as<std::string>();
    const Fields f(path + ": steps[" + std::to_string(i) + "]." + op, step.begin()->second);
    if (op == "createNodes") {
      ARBITER_RETURN_IF_ERROR(runner.CreateNodes(f));
    } else if (op == "createPodGroups") {
      ARBITER_RETURN_IF_ERROR(runner.CreatePodGroups(f));
    } else if (op == "createPods") {
      ARBITER_RETURN_IF_ERROR(runner.CreatePods(f));
    } else if (op == "churn") {
      ARBITER_RETURN_IF_ERROR(runner.SetChurn(f));
    } else if (op == "barrier") {
      ARBITER_RETURN_IF_ERROR(f.Known({}));
      ARBITER_RETURN_IF_ERROR(runner.Barrier(progress));
    } else if (op == "nomadPlacement") {
      ARBITER_RETURN_IF_ERROR(f.Known({"nodes"}));
      ARBITER_ASSIGN_OR_RETURN(n, f.Int("nodes", 5000, 1));
      auto r = RunNomadPlacement(static_cast<size_t>(n), 0);
      if (!r.ok()) return r.status();
      nomad = {{"nodes", r->nodes}, {"placements", r->placements}, {"preempted", r->preempted},
               {"seconds", r->seconds}, {"placementsPerSecond", r->placements_per_second}};
    } else {
      return Status(StatusCode::kInvalidArgument,
                    f.where() + ": unknown operation (createNodes, createPodGroups, createPods, churn, barrier, nomadPlacement)");
    }
  }
  if (runner.measure_next) ARBITER_RETURN_IF_ERROR(runner.Barrier(progress));
  const PreemptionBenchResult& m = runner.measured;
  double figure = 0;
  if (!nomad.is_null()) {
    j["nomad"] = nomad;
    figure = nomad["placementsPerSecond"].get<double>();
  } else {
    Json fields = ResultFields(m);
    fields.erase("scenario");
    j["nodes"] = runner.nodes;
    j["measuredPods"] = runner.measured_pods;
    if (runner.churn.every > 0) j["churnPods"] = runner.churn.created;
    fields.erase("nodes");
    j.update(fields);
    figure = m.pods_per_second;
  }
  j["peakRssKiB"] = PeakRssKib();
  j["calibrationMillis"] = calibration;  // measured before the steps
  if (root["anchor"]) {
    const std::string system = root["anchor"]["system"] ? root["anchor"]["system"].as<std::string>() : "";
    const double anchor = root["anchor"]["podsPerSecond"] ? root["anchor"]["podsPerSecond"].as<double>() : 0;
    // Some shapes publish only a latency: then the ratio is the anchor's p99 over ours.
    const double anchor_p99 = root["anchor"]["attemptP99Micros"] ? root["anchor"]["attemptP99Micros"].as<double>() : 0;
    j["anchor"] = {{"system", system}};
    if (anchor > 0) {
      j["anchor"]["podsPerSecond"] = anchor;
      j["ratioToAnchor"] = figure / anchor;
    } else if (anchor_p99 > 0 && m.attempt_p99_us > 0) {
      j["anchor"]["attemptP99Micros"] = anchor_p99;
      j["ratioToAnchor"] = anchor_p99 / m.attempt_p99_us;
    }
  }
  // Invariants (never times): counts the run must reach.
  Json failed = Json::array();
  if (const YAML::Node e = root["expect"]) {
    for (const auto& kv : e) {
      const std::string key = kv.first.as<std::string>();
      const int64_t want = kv.second.as<int64_t>();
      int64_t got = -1;
      if (key == "scheduled") got = static_cast<int64_t>(m.scheduled);
      if (key == "preemptions") got = static_cast<int64_t>(m.preemptions);
      if (key == "victims") got = static_cast<int64_t>(m.victims);
      if (key == "placements" && !nomad.is_null()) got = nomad["placements"].get<int64_t>();
      if (got != want) failed.push_back(key + ": want " + std::to_string(want) + ", got " + std::to_string(got));
    }
  }
  j["expectationsFailed"] = failed;
  return j;
}

}  // namespace arbiter::bench
