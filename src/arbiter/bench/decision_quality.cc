// Decision quality against exhaustive search.
#include "arbiter/bench/decision_quality.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <map>
#include <optional>
#include <set>

#include "arbiter/base/rng.h"
#include "arbiter/sim/cluster_simulation.h"

namespace arbiter::bench {

namespace {

constexpr Timestamp kQualityStart = 1704067200LL * kSecond;
constexpr int32_t kPreemptorPriority = 1000;

struct RandomCluster {
  std::vector<model::Node> nodes;
  std::vector<model::Pod> running;
  std::vector<model::PodDisruptionBudget> pdbs;
  model::Pod preemptor;
};

RandomCluster Generate(Rng& rng, size_t index) {
  static const int32_t kPriorities[] = {0, 10, 50, 100, 500, 995};
  RandomCluster c;
  const size_t nodes = 1 + rng.Uniform(3);
  int64_t max_free = 0;
  for (size_t n = 0; n < nodes; ++n) {
    model::Node node;
    node.name = "n" + std::to_string(n);
    node.allocatable.milli_cpu = 4000;
    node.allocatable.memory = int64_t{8} << 30;
    node.allocatable.pods = 110;
    int64_t used = 0;
    const size_t pods = 2 + rng.Uniform(5);
    for (size_t p = 0; p < pods; ++p) {
      model::Pod pod;
      pod.name = "c" + std::to_string(index) + "-n" + std::to_string(n) + "-p" + std::to_string(p);
      pod.uid = pod.name;
      pod.node_name = node.name;
      const int64_t cpu = 250 * static_cast<int64_t>(1 + rng.Uniform(6));  // 250m..1500m
      if (used + cpu > node.allocatable.milli_cpu) break;
      used += cpu;
      pod.requests.milli_cpu = cpu;
      pod.requests.memory = int64_t{256} << 20;
      pod.priority = kPriorities[rng.Uniform(std::size(kPriorities))];
      pod.start_time = kQualityStart - static_cast<Timestamp>(1 + rng.Uniform(3600)) * kSecond;
      pod.termination_grace_period_seconds = 0;
      if (rng.Uniform(3) == 0) pod.labels.Set("app", rng.Uniform(2) == 0 ? "a" : "b");
      c.running.push_back(std::move(pod));
    }
    max_free = std::max(max_free, node.allocatable.milli_cpu - used);
    c.nodes.push_back(std::move(node));
  }
  for (const char* app : {"a", "b"}) {
    if (rng.Uniform(2) == 0) continue;
    model::PodDisruptionBudget pdb;
    pdb.name = std::string("pdb-") + app;
    pdb.selector.requirements.push_back({"app", model::SelectorOp::kIn, {app}});
    pdb.disruptions_allowed = static_cast<int32_t>(rng.Uniform(2));
    c.pdbs.push_back(std::move(pdb));
  }
  c.preemptor.name = "c" + std::to_string(index) + "-preemptor";
  c.preemptor.uid = c.preemptor.name;
  c.preemptor.priority = kPreemptorPriority;
  // Larger than any node's free room, so that it must preempt.
  c.preemptor.requests.milli_cpu = std::min<int64_t>(4000, max_free + 250 * static_cast<int64_t>(1 + rng.Uniform(8)));
  c.preemptor.requests.memory = int64_t{256} << 20;
  return c;
}

// The cost of evicting `victims` (pods of the cluster), in the order kube-scheduler's node choice
// compares candidates (pickOneNodeForPreemption), written here apart from the engines:
//   1. PDB violations: evictions beyond each budget's disruptionsAllowed;
//   2. the highest victim priority;
//   3. the sum of (priority + 2^31), so that fewer victims come first;
//   4. the latest earliest start among the highest-priority victims.
struct Cost {
  int violations = 0;
  int64_t top = 0;
  int64_t offset_sum = 0;
  Timestamp neg_top_start = 0;
  size_t count = 0;          // reported, not compared (the sum orders by it)
  int64_t priority_sum = 0;  // likewise
  auto operator<=>(const Cost& o) const {
    return std::tie(violations, top, offset_sum, neg_top_start) <=> std::tie(o.violations, o.top, o.offset_sum, o.neg_top_start);
  }
  bool operator==(const Cost& o) const { return (*this <=> o) == 0; }
};

Cost CostOf(const RandomCluster& c, const std::vector<const model::Pod*>& victims) {
  Cost cost;
  for (const auto& pdb : c.pdbs) {
    int taken = 0;
    for (const model::Pod* v : victims) taken += pdb.selector.Matches(v->labels) ? 1 : 0;
    cost.violations += std::max(0, taken - pdb.disruptions_allowed.value_or(0));
  }
  cost.top = std::numeric_limits<int64_t>::min();
  for (const model::Pod* v : victims) {
    cost.top = std::max<int64_t>(cost.top, v->priority);
    cost.offset_sum += int64_t{v->priority} + (int64_t{1} << 31);
    cost.priority_sum += v->priority;
  }
  Timestamp earliest = std::numeric_limits<Timestamp>::max();
  for (const model::Pod* v : victims) {
    if (v->priority == cost.top) earliest = std::min(earliest, v->start_time.value_or(kQualityStart));
  }
  cost.neg_top_start = -earliest;
  cost.count = victims.size();
  return cost;
}

// The cheapest victim set over every node, or nullopt if no set lets the pod fit.
std::optional<Cost> Optimum(const RandomCluster& c) {
  std::optional<Cost> best;
  for (const auto& node : c.nodes) {
    std::vector<const model::Pod*> on;
    int64_t used = 0;
    for (const auto& p : c.running) {
      if (p.node_name != node.name) continue;
      used += p.requests.milli_cpu;
      if (p.priority < c.preemptor.priority) on.push_back(&p);
    }
    for (uint32_t mask = 1; mask < (1u << on.size()); ++mask) {
      std::vector<const model::Pod*> victims;
      int64_t freed = 0;
      for (size_t i = 0; i < on.size(); ++i) {
        if (mask & (1u << i)) {
          victims.push_back(on[i]);
          freed += on[i]->requests.milli_cpu;
        }
      }
      if (used - freed + c.preemptor.requests.milli_cpu > node.allocatable.milli_cpu) continue;
      Cost cost = CostOf(c, victims);
      if (!best || cost < *best) best = std::move(cost);
    }
  }
  return best;
}

// The engine's first decision: its victims, or nullopt if it preempted nothing; `fallbacks`
// counts the nodes where victimSelection Optimal's search hit its bound.
StatusOr<std::optional<std::vector<const model::Pod*>>> FirstDecision(const RandomCluster& c,
                                                                      const model::SchedulerConfig& config,
                                                                      uint64_t* fallbacks) {
  sim::SimulationOptions o;
  o.max_cycles = 1000;
  sim::ClusterSimulation s(config, kQualityStart, o);
  ARBITER_RETURN_IF_ERROR(s.Init());
  for (const auto& pdb : c.pdbs) s.AddPdb(pdb);
  for (const auto& n : c.nodes) ARBITER_RETURN_IF_ERROR(s.AddNode(n));
  for (const auto& p : c.running) ARBITER_RETURN_IF_ERROR(s.AddRunningPod(p));
  s.AddPendingPod(c.preemptor, kQualityStart);
  bool idle = false;
  while (!idle && s.result().preemptions.empty()) {
    auto out = s.Step(&idle);
    if (!out.ok()) return out.status();
  }
  *fallbacks = s.result().preemption_metrics.optimal_fallbacks;
  if (s.result().preemptions.empty()) return std::optional<std::vector<const model::Pod*>>();
  std::vector<const model::Pod*> victims;
  for (const auto& v : s.result().preemptions.front().victims) {
    for (const auto& p : c.running) {
      if (p.Key() == v.name) victims.push_back(&p);
    }
  }
  return std::optional<std::vector<const model::Pod*>>(std::move(victims));
}

}  // namespace

StatusOr<std::vector<EngineQuality>> RunDecisionQuality(size_t clusters, uint64_t seed) {
  std::vector<std::pair<std::string, model::SchedulerConfig>> engines(3);
  engines[0].first = "kubernetes-default";
  engines[1].first = "nomad-victim-policy";
  engines[1].second.victim_selection = model::VictimSelection::kNomad;
  engines[2].first = "optimal";
  engines[2].second.victim_selection = model::VictimSelection::kOptimal;
  std::vector<EngineQuality> out(engines.size());
  std::vector<double> excess_victims(engines.size()), excess_priority(engines.size());
  std::vector<size_t> preempted(engines.size());
  for (size_t e = 0; e < engines.size(); ++e) out[e].engine = engines[e].first;
  Rng rng(seed);
  for (size_t i = 0; i < clusters; ++i) {
    const RandomCluster c = Generate(rng, i);
    const std::optional<Cost> best = Optimum(c);
    if (!best) continue;  // no preemption can help: nothing to compare
    for (size_t e = 0; e < engines.size(); ++e) {
      EngineQuality& q = out[e];
      ++q.clusters;
      uint64_t fallbacks = 0;
      auto decision = FirstDecision(c, engines[e].second, &fallbacks);
      if (!decision.ok()) return decision.status();
      if (fallbacks > 0) ++q.fallbacks;
      if (!*decision) {
        ++q.missed;
        continue;
      }
      const Cost cost = CostOf(c, **decision);
      ++preempted[e];
      if (cost == *best) {
        ++q.optimal;
      } else if (cost < *best) {
        ++q.beat_optimum;
      } else {
        ++q.worse;
      }
      excess_victims[e] += static_cast<double>(cost.count) - static_cast<double>(best->count);
      excess_priority[e] += static_cast<double>(cost.priority_sum - best->priority_sum);
    }
  }
  for (size_t e = 0; e < engines.size(); ++e) {
    if (preempted[e] == 0) continue;
    out[e].mean_excess_victims = excess_victims[e] / static_cast<double>(preempted[e]);
    out[e].mean_excess_priority_sum = excess_priority[e] / static_cast<double>(preempted[e]);
  }
  return out;
}

}  // namespace arbiter::bench
