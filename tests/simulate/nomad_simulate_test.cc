// `arbiter simulate --nomad`: Nomad's evaluations, blocked evaluations, preemption (per job type,
// the delta rule) and replacements on scenarios small enough to check by hand; every allocation
// accounted for; identical reports for identical inputs and without the room index.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "arbiter/simulate/nomad_day.h"
#include "arbiter/simulate/report.h"
#include "simulate/simulate_testing.h"

namespace arbiter::simulate {
namespace {

nomad::PreemptionConfig Preempting(bool batch, bool service) {
  nomad::PreemptionConfig c;  // Nomad's defaults: system only
  c.batch = batch;
  c.service = service;
  return c;
}

Report RunNomad(const manifest::ClusterObjects& c, const std::vector<Arrival>& arrivals, int64_t duration,
                const NomadSimulateOptions& nomad, bool fast_paths = true) {
  SimulateOptions o;
  o.duration_seconds = duration;
  o.sample_seconds = 10;
  o.fast_paths = fast_paths;
  auto r = SimulateNomad(c, "test", arrivals, o, nomad);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Report{};
}

TEST(NomadSimulate, ClassesSpreadOverNomadsPrioritiesLowestFirst) {
  auto borg = NomadPriorities({{"monitoring", 360}, {"production", 200}, {"mid", 117}, {"beb", 110}, {"free", 0}});
  EXPECT_EQ(borg, (std::map<std::string, int32_t>{
                      {"free", 10}, {"beb", 30}, {"mid", 50}, {"production", 70}, {"monitoring", 90}}));
  EXPECT_EQ(NomadPriorities({{"only", 1000}}), (std::map<std::string, int32_t>{{"only", 50}}));
  EXPECT_EQ(NomadPriorities({{"low", 10}, {"mid", 50}, {"high", 100}}),
            (std::map<std::string, int32_t>{{"low", 10}, {"mid", 50}, {"high", 90}}));
}

// One 4-CPU node: `batch` (low: Nomad priority 10) runs four 1-CPU allocations from 0 to 1000 s;
// `urgent` (high: 90) asks for one CPU at 100 s and runs 100 s.
std::vector<Arrival> FullNodeThenUrgent() {
  return {A(0, ArrivalKind::kJob, "batch", "low", 1, 1000, 4), A(100, ArrivalKind::kJob, "urgent", "high", 1, 100)};
}

TEST(NomadSimulate, WithBatchPreemptionOnAHigherJobEvictsAtOnceAndTheVictimsReplacementWaitsForRoom) {
  NomadSimulateOptions n;
  n.preemption = Preempting(true, false);
  Report r = RunNomad(Cluster({4}), FullNodeThenUrgent(), 2000, n);
  const BandReport& low = BandOf(r, "low");
  const BandReport& high = BandOf(r, "high");
  // `urgent` is placed at 100 s over one victim (1 CPU x 100 s of work lost). The victim's job
  // places a replacement at once, which blocks: the node is full again. `urgent` starts once the
  // victim's tasks are killed (5 s) and completes at 205 s; its room unblocks the replacement.
  EXPECT_EQ(high.preemptions_caused, 1);
  EXPECT_EQ(high.cascade_depth, 1);
  EXPECT_DOUBLE_EQ(high.pending_seconds.p99, 0);
  EXPECT_EQ(high.completed, 1);
  EXPECT_EQ(low.pods, 5);  // four and the replacement
  EXPECT_EQ(low.preemptions, 1);
  EXPECT_DOUBLE_EQ(low.lost_cpu_seconds, 100);
  EXPECT_DOUBLE_EQ(low.pending_seconds.p99, 105);  // the replacement: made at 100 s, placed at 205 s
  EXPECT_EQ(low.completed, 4);                     // three at 1000 s, the replacement at 1205 s
  EXPECT_EQ(r.totals.preemptions, 1);
  ExpectConserved(low);
  ExpectConserved(high);
}

TEST(NomadSimulate, WithNomadsDefaultsABatchJobDoesNotPreemptAndWaitsForRoom) {
  // Nomad's default PreemptionConfig preempts for system jobs only: `urgent` blocks until the
  // four allocations complete at 1000 s.
  Report r = RunNomad(Cluster({4}), FullNodeThenUrgent(), 2000, NomadSimulateOptions{});
  EXPECT_EQ(r.totals.preemptions, 0);
  EXPECT_DOUBLE_EQ(BandOf(r, "high").pending_seconds.p99, 900);
  EXPECT_EQ(BandOf(r, "high").completed, 1);
}

TEST(NomadSimulate, TheDeltaRuleKeepsAJobFromPreemptingOneTooLittleBelowIt) {
  // high (90) is 80 above low (10): with a delta of 81 nothing is eligible.
  NomadSimulateOptions n;
  n.preemption = Preempting(true, false);
  n.priority_delta = 81;
  Report r = RunNomad(Cluster({4}), FullNodeThenUrgent(), 2000, n);
  EXPECT_EQ(r.totals.preemptions, 0);
  EXPECT_DOUBLE_EQ(BandOf(r, "high").pending_seconds.p99, 900);
  n.priority_delta = 80;
  EXPECT_EQ(RunNomad(Cluster({4}), FullNodeThenUrgent(), 2000, n).totals.preemptions, 1);
}

TEST(NomadSimulate, AServiceJobsEndStopsItsAllocationsAndDropsThoseNotPlaced) {
  // Five 1-CPU allocations of a service job on one 4-CPU node, for 500 s: four run, one waits;
  // at 500 s the job is stopped.
  Report r = RunNomad(Cluster({4}), {A(0, ArrivalKind::kDeployment, "web", "mid", 1, 500, 5)}, 1000,
                      NomadSimulateOptions{});
  const BandReport& mid = BandOf(r, "mid");
  EXPECT_EQ(mid.pods, 5);
  EXPECT_EQ(mid.completed, 4);
  EXPECT_EQ(mid.withdrawn, 1);
  EXPECT_EQ(mid.pending_at_end, 0);
  EXPECT_DOUBLE_EQ(r.utilisation, 0.5);  // 4 of 4 CPUs for 500 s of 1000
  ExpectConserved(mid);
}

TEST(NomadSimulate, EveryAllocationEndsInOneStateAndTheRoomIndexChangesNoNumber) {
  for (double failures : {0.0, 2.0}) {
    GenerateOptions g = BorgDay(40, 1500, 8, 5);
    g.load = 1.0;  // contended: preemptions happen
    const manifest::ClusterObjects c = BorgCluster(40);
    const auto w = GenerateWorkload(g);
    NomadSimulateOptions n;
    n.preemption = Preempting(true, true);
    SimulateOptions o;
    o.duration_seconds = g.duration_seconds;
    o.sample_seconds = 60;
    o.node_failures_per_day = failures;
    o.node_repair_seconds = 1800;
    auto fast = SimulateNomad(c, "test", w, o, n);
    auto again = SimulateNomad(c, "test", w, o, n);
    o.fast_paths = false;
    auto general = SimulateNomad(c, "test", w, o, n);
    ASSERT_TRUE(fast.ok() && again.ok() && general.ok());
    for (const auto& b : fast->bands) ExpectConserved(b);
    ExpectConserved(fast->totals);
    int64_t arrived = 0;
    for (const auto& a : w) arrived += a.count;
    // Replacements are the only allocations beyond the arrivals', one per victim or loss.
    EXPECT_EQ(fast->totals.pods - arrived, fast->totals.preemptions + fast->totals.node_failure_losses) << failures;
    EXPECT_GT(fast->totals.preemptions, 0) << failures;
    if (failures > 0) {
      EXPECT_GT(fast->node_failures, 0);
    }
    EXPECT_EQ(ReportJson(*fast, nullptr), ReportJson(*again, nullptr)) << failures;
    EXPECT_EQ(ReportJson(*fast, nullptr), ReportJson(*general, nullptr)) << failures;
  }
}

TEST(NomadSimulate, AClassThatDoesNotExistIsAnErrorNamingTheArrival) {
  SimulateOptions o;
  o.duration_seconds = 100;
  auto r = SimulateNomad(Cluster({4}), "test", {A(0, ArrivalKind::kJob, "etl", "nope", 1, 10)}, o, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("default/etl"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("\"nope\""), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace arbiter::simulate
