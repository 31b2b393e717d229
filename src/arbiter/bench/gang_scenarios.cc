// Gang scheduling and gang preemption benchmarks.
#include "arbiter/bench/gang_scenarios.h"

#include "arbiter/bench/fixtures.h"

namespace arbiter::bench {

namespace {

constexpr Timestamp kGangStart = 1704067200LL * kSecond;

model::PodGroup Gang(const std::string& name, size_t min_count, int32_t priority,
                     model::DisruptionMode mode = model::DisruptionMode::kSingle) {
  model::PodGroup g;
  g.name = name;
  g.policy = model::GroupPolicy::kGang;
  g.min_count = static_cast<int32_t>(min_count);
  g.disruption_mode = mode;
  g.priority.priority = priority;
  return g;
}

model::Pod Member(const std::string& name, const std::string& group, int64_t milli_cpu, int32_t priority) {
  model::Pod p = BenchPod(name, milli_cpu, priority, 0);
  p.pod_group_name = group;
  return p;
}

// A running pod on node `node`, started `age` seconds before the run.
model::Pod Running(model::Pod p, size_t node, size_t age) {
  p.node_name = "node-" + std::to_string(node);
  p.start_time = kGangStart - static_cast<Timestamp>(age + 1) * kSecond;
  return p;
}

StatusOr<PreemptionBenchResult> Finish(sim::ClusterSimulation& s, PreemptionBenchResult r, size_t expected,
                                       const std::function<void(size_t, size_t)>& progress) {
  ARBITER_RETURN_IF_ERROR(Measure(s, expected, progress, r));
  if (r.scheduled != expected) {
    return Status(StatusCode::kInternal, r.name + ": only " + std::to_string(r.scheduled) + " of " +
                                             std::to_string(expected) + " pods were scheduled");
  }
  return r;
}

// A result named `name` and a simulation of `nodes` default nodes, ready for a scenario.
struct Setup {
  PreemptionBenchResult result;
  sim::ClusterSimulation sim;
  Setup(std::string name, size_t nodes, uint64_t seed)
      : sim(model::SchedulerConfig{}, kGangStart, QuietSimulation(seed)) {
    result.calibration_ms = CalibrationMillis();
    result.name = std::move(name);
    result.nodes = nodes;
  }
  Status Init() {
    ARBITER_RETURN_IF_ERROR(sim.Init());
    for (size_t i = 0; i < result.nodes; ++i) ARBITER_RETURN_IF_ERROR(sim.AddNode(DefaultNode(i)));
    return Status::Ok();
  }
};

std::string GangShape(const GangBenchOptions& o, const char* gangs_word) {
  return std::to_string(o.nodes) + "Nodes_" + std::to_string(o.gangs) + gangs_word + std::to_string(o.pods_per_gang) +
         "Pods";
}

// Preemptor gangs of `size` pods requesting `milli_cpu` at `priority`.
size_t AddPreemptorGangs(sim::ClusterSimulation& s, size_t gangs, size_t size, int64_t milli_cpu, int32_t priority) {
  for (size_t g = 0; g < gangs; ++g) {
    const std::string name = "high-" + std::to_string(g);
    s.AddPodGroup(Gang(name, size, priority));
    for (size_t i = 0; i < size; ++i) {
      s.AddPendingPod(Member(name + "-" + std::to_string(i), name, milli_cpu, priority));
    }
  }
  return gangs * size;
}

}  // namespace

StatusOr<PreemptionBenchResult> RunGangScheduling(const GangBenchOptions& o,
                                                  const std::function<void(size_t, size_t)>& progress) {
  Setup setup("GangScheduling/" + GangShape(o, "x"), o.nodes, o.seed);
  ARBITER_RETURN_IF_ERROR(setup.Init());
  sim::ClusterSimulation& s = setup.sim;
  for (size_t g = 0; g < o.gangs; ++g) {
    const std::string name = "gang-" + std::to_string(g);
    s.AddPodGroup(Gang(name, o.pods_per_gang, 0));
    for (size_t i = 0; i < o.pods_per_gang; ++i) s.AddPendingPod(Member(name + "-" + std::to_string(i), name, 100, 0));
  }
  return Finish(s, std::move(setup.result), o.gangs * o.pods_per_gang, progress);
}

StatusOr<PreemptionBenchResult> RunGangPreemptionBasic(const GangBenchOptions& o,
                                                       const std::function<void(size_t, size_t)>& progress) {
  Setup setup("GangPreemptionBasic/" + GangShape(o, "PreemptorGangs_"), o.nodes, o.seed);
  ARBITER_RETURN_IF_ERROR(setup.Init());
  sim::ClusterSimulation& s = setup.sim;
  for (size_t i = 0; i < o.nodes * 10; ++i) {
    ARBITER_RETURN_IF_ERROR(s.AddRunningPod(Running(BenchPod("low-" + std::to_string(i), 40, 0, 0), i / 10, i)));
  }
  setup.result.preemptors = o.gangs;
  return Finish(s, std::move(setup.result), AddPreemptorGangs(s, o.gangs, o.pods_per_gang, 3970, 10000), progress);
}

StatusOr<PreemptionBenchResult> RunGangPreemptionPodGroups(const GangBenchOptions& o,
                                                           const std::function<void(size_t, size_t)>& progress) {
  Setup setup("GangPreemptionPodGroups/" + GangShape(o, "PreemptorGangs_"), o.nodes, o.seed);
  ARBITER_RETURN_IF_ERROR(setup.Init());
  sim::ClusterSimulation& s = setup.sim;
  // Five pods of 600m per node, each from a different low gang: the low gangs hold 5 x nodes pods
  // in gangs of the preemptors' size.
  const size_t low_pods = o.nodes * 5;
  const size_t low_gangs = low_pods / o.pods_per_gang;
  for (size_t g = 0; g < low_gangs; ++g) s.AddPodGroup(Gang("low-" + std::to_string(g), o.pods_per_gang, 1000));
  for (size_t i = 0; i < low_pods; ++i) {
    const std::string gang = "low-" + std::to_string(i / o.pods_per_gang);
    ARBITER_RETURN_IF_ERROR(s.AddRunningPod(Running(Member("lowpod-" + std::to_string(i), gang, 600, 1000), i % o.nodes, i)));
  }
  setup.result.preemptors = o.gangs;
  return Finish(s, std::move(setup.result), AddPreemptorGangs(s, o.gangs, o.pods_per_gang, 3500, 9999999),
                progress);
}

StatusOr<PreemptionBenchResult> RunPreemptionPodGroupDisruptionMode(
    const GangBenchOptions& o, const std::function<void(size_t, size_t)>& progress) {
  if (o.mode != "none" && o.mode != "single" && o.mode != "all") {
    return Status(StatusCode::kInvalidArgument, "--mode must be none, single or all, not \"" + o.mode + "\"");
  }
  if (o.nodes < 10 || o.nodes % 10 != 0) {
    return Status(StatusCode::kInvalidArgument, "PreemptionPodGroupDisruptionMode needs a multiple of 10 nodes");
  }
  Setup setup("PreemptionPodGroupDisruptionMode/" + std::to_string(o.nodes) + "Nodes_" + o.mode, o.nodes, o.seed);
  ARBITER_RETURN_IF_ERROR(setup.Init());
  sim::ClusterSimulation& s = setup.sim;
  // As many low gangs as nodes, 10 pods of 300m each; pod j of gang g runs on node
  // (g + j * nodes/10) mod nodes, so every node holds 10 pods of 10 different gangs and every gang
  // spans 10 nodes.
  const auto mode = o.mode == "all" ? model::DisruptionMode::kAll : model::DisruptionMode::kSingle;
  for (size_t g = 0; g < o.nodes; ++g) {
    const std::string gang = "low-" + std::to_string(g);
    if (o.mode != "none") s.AddPodGroup(Gang(gang, 10, 1000, mode));
    for (size_t j = 0; j < 10; ++j) {
      model::Pod p = BenchPod(gang + "-" + std::to_string(j), 300, 1000, 0);
      if (o.mode != "none") p.pod_group_name = gang;
      ARBITER_RETURN_IF_ERROR(s.AddRunningPod(Running(std::move(p), (g + j * (o.nodes / 10)) % o.nodes, g * 10 + j)));
    }
  }
  const size_t preemptors = 100;
  for (size_t i = 0; i < preemptors; ++i) s.AddPendingPod(BenchPod("high-" + std::to_string(i), 3970, 10000, 0));
  setup.result.preemptors = preemptors;
  return Finish(s, std::move(setup.result), preemptors, progress);
}

}  // namespace arbiter::bench
