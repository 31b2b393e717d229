// What the simulate tests share: small clusters, arrivals, a day's run and the conservation of
// pods.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/simulate/day_simulation.h"
#include "arbiter/simulate/workload.h"

namespace arbiter::simulate {

// A cluster of `cpus` nodes (one node per entry, its CPUs) and the classes low 10, mid 50,
// high 100, admitted as `simulate` admits its -f files.
inline manifest::ClusterObjects Cluster(const std::vector<int64_t>& cpus) {
  manifest::ClusterObjects c;
  for (size_t i = 0; i < cpus.size(); ++i) {
    model::Node n;
    n.name = "n" + std::to_string(i + 1);
    n.labels.Set("kubernetes.io/hostname", n.name);
    n.allocatable.milli_cpu = cpus[i] * 1000;
    n.allocatable.memory = 64LL << 30;
    n.allocatable.pods = 110;
    n.capacity = n.allocatable;
    c.nodes.push_back({n, {}});
  }
  for (auto [name, value] : {std::pair{"low", 10}, std::pair{"mid", 50}, std::pair{"high", 100}}) {
    model::PriorityClass pc;
    pc.name = name;
    pc.value = value;
    c.priority_classes.push_back({pc, {}});
  }
  EXPECT_TRUE(admission::AdmitPriorities(c).empty());
  return c;
}

// The cluster with the generated Borg workload's classes added.
inline manifest::ClusterObjects WithBorgBands(manifest::ClusterObjects c) {
  for (const Band& band : BandsOf(TraceShape::kBorg)) {
    model::PriorityClass pc;
    pc.name = band.name;
    pc.value = band.priority;
    c.priority_classes.push_back({pc, {}});
  }
  return c;
}

inline Arrival A(int64_t at_seconds, ArrivalKind kind, const std::string& name, const std::string& pc, int64_t cpus,
          int64_t run_seconds, int32_t count = 1) {
  Arrival a;
  a.time_ms = at_seconds * 1000;
  a.kind = kind;
  a.name = name;
  a.priority_class = pc;
  a.milli_cpu = cpus * 1000;
  a.run_seconds = run_seconds;
  a.count = count;
  return a;
}

inline Report RunDay(const manifest::ClusterObjects& c, const std::vector<Arrival>& arrivals, int64_t duration) {
  SimulateOptions o;
  o.duration_seconds = duration;
  o.sample_seconds = 10;
  auto r = Simulate(c, "test", arrivals, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Report{};
}

inline const BandReport& BandOf(const Report& r, const std::string& name) {
  for (const auto& b : r.bands) {
    if (b.name == name) return b;
  }
  static const BandReport kNone;
  ADD_FAILURE() << "no band " << name;
  return kNone;
}

// Every pod made ends in exactly one state: completed, withdrawn, a victim, running, pending.
inline void ExpectConserved(const BandReport& b) {
  EXPECT_EQ(b.pods, b.completed + b.withdrawn + b.preemptions + b.node_failure_losses + b.running_at_end +
                        b.pending_at_end)
      << b.name;
  EXPECT_LE(b.scheduled, b.pods) << b.name;
  EXPECT_EQ(b.scheduled, b.completed + b.preemptions + b.node_failure_losses + b.running_at_end) << b.name;
}

// A generated Borg day's options for `nodes` nodes of 4 CPUs (BorgCluster).
inline GenerateOptions BorgDay(int64_t nodes, int64_t pods, int64_t hours, uint64_t seed) {
  GenerateOptions g;
  g.pods = pods;
  g.duration_seconds = hours * 3600;
  g.seed = seed;
  g.cluster_milli_cpu = nodes * 4000;
  return g;
}
inline manifest::ClusterObjects BorgCluster(int64_t nodes) {
  return WithBorgBands(Cluster(std::vector<int64_t>(static_cast<size_t>(nodes), 4)));
}

}  // namespace arbiter::simulate
