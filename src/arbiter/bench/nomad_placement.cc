// The Nomad placement benchmark.
#include "arbiter/bench/nomad_placement.h"

#include <chrono>

#include "arbiter/bench/fixtures.h"
#include "arbiter/nomad/planner.h"

namespace arbiter::bench {

StatusOr<NomadBenchResult> RunNomadPlacement(size_t nodes, uint64_t seed) {
  NomadBenchResult r;
  r.calibration_ms = CalibrationMillis();
  r.name = "NomadPlacement/" + std::to_string(nodes) + "Nodes";
  r.nodes = nodes;
  nomad::Cluster cluster;
  cluster.preemption.service = true;
  for (size_t i = 0; i < nodes; ++i) {
    nomad::Node n;
    n.id = "node-" + std::to_string(i);
    n.name = n.id;
    n.capacity = {4000, 8192, 100000};
    n.networks.push_back({"eth0", "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250), 1000});
    cluster.nodes.push_back(std::move(n));
  }
  for (size_t i = 0; i < nodes * 4; ++i) {
    nomad::Alloc a;
    a.id = "low-" + std::to_string(i);
    a.job_id = "batch-" + std::to_string(i % 97);
    a.name = a.job_id + ".work[" + std::to_string(i) + "]";
    a.job_type = "batch";
    a.job_priority = 20;
    a.task_group = "work";
    a.node_id = "node-" + std::to_string(i / 4);
    a.resources = {1000, 2048, 0};
    cluster.allocs.push_back(std::move(a));
  }
  nomad::Job job;
  job.id = "web";
  job.name = "web";
  job.priority = 80;
  nomad::TaskGroup tg;
  tg.name = "web";
  tg.count = static_cast<int64_t>(nodes);
  tg.max_parallel = 1;
  tg.tasks.push_back({"server", 1500, 1024, {}, {}});
  job.groups.push_back(std::move(tg));

  const auto start = std::chrono::steady_clock::now();
  nomad::PlannerOptions options;
  options.seed = seed;
  const nomad::NomadPlan plan = nomad::PlanJob(cluster, job, options);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.placements = plan.placements.size();
  r.preempted = plan.preempted.size();
  for (const auto& [name, f] : plan.failed) r.failed += static_cast<size_t>(f.coalesced_failures + 1);
  r.placements_per_second = r.seconds > 0 ? static_cast<double>(r.placements) / r.seconds : 0;
  r.peak_rss_kib = PeakRssKib();
  if (r.placements != nodes) {
    return Status(StatusCode::kInternal, r.name + ": placed " + std::to_string(r.placements) + " of " +
                                             std::to_string(nodes) + " allocations");
  }
  return r;
}

}  // namespace arbiter::bench
