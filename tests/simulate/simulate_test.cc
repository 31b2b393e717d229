// `arbiter simulate`: every pod accounted for, each statistic on a scenario small enough to
// check by hand, identical reports for identical inputs, and strict workload files.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/simulate/convert.h"
#include "arbiter/simulate/day_simulation.h"
#include "arbiter/simulate/report.h"
#include "arbiter/simulate/workload.h"
#include "simulate/simulate_testing.h"

namespace arbiter::simulate {
namespace {

TEST(Simulate, APodWaitsForTheRoomAnEarlierPodFreesAndTheTimeIsItsPendingTime) {
  // One 4-CPU node: `first` runs 0-100 s; `second` arrives at 10 s and waits until 100 s.
  auto r = RunDay(Cluster({4}), {A(0, ArrivalKind::kJob, "first", "low", 4, 100), A(10, ArrivalKind::kJob, "second", "low", 4, 50)},
               200);
  const BandReport& low = BandOf(r, "low");
  EXPECT_EQ(low.pods, 2);
  EXPECT_EQ(low.completed, 2);
  EXPECT_DOUBLE_EQ(low.pending_seconds.p50, 0);   // nearest rank of {0, 90}
  EXPECT_DOUBLE_EQ(low.pending_seconds.p99, 90);
  EXPECT_EQ(low.preemptions, 0);
  // 4 CPUs of 4 busy from 0 to 150 s of 200.
  EXPECT_DOUBLE_EQ(r.utilisation, 0.75);
}

TEST(Simulate, APreemptionCountsForBothBandsWithTheVictimsLostWorkAndItsReplacementWaits) {
  // `batch` (low, 4 CPUs, 1000 s) runs from 0; `urgent` (high, a Pod) arrives at 100 s, evicts it
  // (4 CPUs x 100 s lost), waits out its 30 s grace period and runs 130-230 s. The Job replaces
  // its pod once it has terminated (130 s); the replacement waits until 230 s.
  auto r = RunDay(Cluster({4}), {A(0, ArrivalKind::kJob, "batch", "low", 4, 1000), A(100, ArrivalKind::kPod, "urgent", "high", 4, 100)},
               2000);
  const BandReport& low = BandOf(r, "low");
  const BandReport& high = BandOf(r, "high");
  EXPECT_EQ(low.pods, 2);  // the victim and its replacement
  EXPECT_EQ(low.preemptions, 1);
  EXPECT_EQ(low.preemptions_caused, 0);
  EXPECT_DOUBLE_EQ(low.lost_cpu_seconds, 400);
  EXPECT_DOUBLE_EQ(low.pending_seconds.p99, 100);  // the replacement: created 130 s, bound 230 s
  EXPECT_EQ(low.completed, 1);                     // the replacement, 230-1230 s
  EXPECT_EQ(high.preemptions_caused, 1);
  EXPECT_EQ(high.cascade_depth, 1);
  EXPECT_DOUBLE_EQ(high.pending_seconds.p50, 30);
  EXPECT_EQ(high.completed, 1);
  EXPECT_EQ(r.totals.preemptions, 1);
}

TEST(Simulate, CascadeDepthFollowsAReplacementThatPreemptsInTurn) {
  // n1 (4 CPUs) runs `svc` (mid, 3 CPUs); n2 (3 CPUs) runs `batch` (low, 3 CPUs). `urgent` (high,
  // 4 CPUs) fits only n1 and evicts `svc` (depth 1); svc's replacement fits only n2 and evicts
  // `batch` (depth 2); batch's replacement finds no room.
  auto r = RunDay(Cluster({4, 3}),
               {A(0, ArrivalKind::kDeployment, "svc", "mid", 3, 5000), A(0, ArrivalKind::kJob, "batch", "low", 3, 5000),
                A(100, ArrivalKind::kPod, "urgent", "high", 4, 5000)},
               1000);
  EXPECT_EQ(BandOf(r, "high").cascade_depth, 1);
  EXPECT_EQ(BandOf(r, "mid").cascade_depth, 2);
  EXPECT_EQ(BandOf(r, "mid").preemptions, 1);
  EXPECT_EQ(BandOf(r, "low").preemptions, 1);
  EXPECT_EQ(BandOf(r, "low").pending_at_end, 1);
  EXPECT_EQ(r.totals.cascade_depth, 2);
}

TEST(Simulate, ADeploymentsEndWithdrawsItsPendingPodsAndCompletesItsRunningOnes) {
  // Three replicas of 2 CPUs on one 4-CPU node: two run, one waits; at 500 s the Deployment goes.
  auto r = RunDay(Cluster({4}), {A(0, ArrivalKind::kDeployment, "web", "mid", 2, 500, 3)}, 1000);
  const BandReport& mid = BandOf(r, "mid");
  EXPECT_EQ(mid.pods, 3);
  EXPECT_EQ(mid.completed, 2);
  EXPECT_EQ(mid.withdrawn, 1);
  EXPECT_EQ(mid.pending_at_end, 0);
  EXPECT_DOUBLE_EQ(r.utilisation, 0.5);
}

TEST(Simulate, AGangRunsOnlyWhenAllItsPodsFit) {
  // A gang of 3 x 2 CPUs on two 4-CPU nodes (room for 4 pods) beside a 4-CPU Job that runs
  // 0-100 s: the gang waits for the Job, then all three run together. A failed pod group is
  // retried at each backoff expiry, event or not (upstream's), so its backoff has grown to 10 s by
  // then: tried at 96 s, it binds at 106 s, 105 s after it arrived.
  auto r = RunDay(Cluster({4, 4}), {A(0, ArrivalKind::kJob, "first", "low", 4, 100), A(1, ArrivalKind::kGang, "team", "low", 2, 50, 3)},
               400);
  const BandReport& low = BandOf(r, "low");
  EXPECT_EQ(low.pods, 4);
  EXPECT_EQ(low.completed, 4);
  EXPECT_DOUBLE_EQ(low.pending_seconds.p99, 105);
}

TEST(Simulate, EveryPodArrivesAndCompletesRunsWaitsOrWasPreempted) {
  GenerateOptions g;
  g.pods = 1500;
  g.duration_seconds = 6 * 3600;
  g.seed = 7;
  manifest::ClusterObjects c = WithBorgBands(Cluster(std::vector<int64_t>(40, 4)));
  for (const auto& [node, origin] : c.nodes) g.cluster_milli_cpu += node.allocatable.milli_cpu;
  const std::vector<Arrival> arrivals = GenerateWorkload(g);
  int64_t arrived = 0;
  for (const auto& a : arrivals) arrived += a.count;
  EXPECT_EQ(arrived, 1500);
  Report r = RunDay(c, arrivals, g.duration_seconds);
  for (const auto& b : r.bands) ExpectConserved(b);
  ExpectConserved(r.totals);
  // Replacements are the only pods beyond the arrivals', one per victim of a controller.
  EXPECT_GE(r.totals.pods, arrived);
  EXPECT_LE(r.totals.pods - arrived, r.totals.preemptions);
  EXPECT_GT(r.totals.preemptions, 0);  // the generated load contends
  EXPECT_GT(r.utilisation, 0.5);
}

TEST(Simulate, ANodeFailureStopsItsPodsAndTheirControllersReplaceThemAfterTheToleration) {
  // Node failures at a rate that fails the single node within the run (seeded), repaired after
  // 600 s. A Job's pod running there is lost; its replacement is made when the taint manager
  // evicts it (300 s later) and runs once the node is back.
  SimulateOptions o;
  o.duration_seconds = 20000;
  o.node_failures_per_day = 20;
  o.node_repair_seconds = 600;
  auto r = Simulate(Cluster({4}), "test", {A(0, ArrivalKind::kJob, "etl", "low", 4, 100000)}, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const BandReport& low = BandOf(*r, "low");
  EXPECT_GE(r->node_failures, 1);
  EXPECT_GE(low.node_failure_losses, 1);
  EXPECT_EQ(low.pods, low.node_failure_losses + low.running_at_end + low.pending_at_end);
  EXPECT_EQ(low.pods, low.node_failure_losses + 1);  // one replacement per loss; the last is still here
  ExpectConserved(low);
  // The same with the Poisson process seeded alike: byte-identical.
  auto again = Simulate(Cluster({4}), "test", {A(0, ArrivalKind::kJob, "etl", "low", 4, 100000)}, o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(ReportJson(*r, nullptr), ReportJson(*again, nullptr));
}

TEST(Simulate, IdenticalInputsGiveByteIdenticalReports) {
  GenerateOptions g = BorgDay(20, 600, 3, 3);
  manifest::ClusterObjects c = BorgCluster(20);
  const auto w1 = GenerateWorkload(g);
  const auto w2 = GenerateWorkload(g);
  EXPECT_EQ(FormatWorkload(w1), FormatWorkload(w2));
  const std::string a = ReportJson(RunDay(c, w1, g.duration_seconds), nullptr);
  const std::string b = ReportJson(RunDay(c, w2, g.duration_seconds), nullptr);
  EXPECT_EQ(a, b);
  g.seed = 4;
  EXPECT_NE(FormatWorkload(GenerateWorkload(g)), FormatWorkload(w1));
}

// The engine's shortcuts (verdict and dry-run reuse, the resource-only dry run, the dry runs
// skipped where no room can be made, and failures answered from a class's kept verdicts) change
// no number of the report, on days with gangs and preemptions. (Two sizes: each of them caught
// a deliberate fault in a shortcut that the other missed.)
TEST(Simulate, TheReportIsTheSameWithoutTheEnginesShortcuts) {
  for (auto [nodes, pods, hours, seed] : {std::tuple{60, 3000, 12, 2}, std::tuple{200, 4000, 24, 1}}) {
    const GenerateOptions g = BorgDay(nodes, pods, hours, static_cast<uint64_t>(seed));
    const manifest::ClusterObjects c = BorgCluster(nodes);
    const auto w = GenerateWorkload(g);
    SimulateOptions o;
    o.duration_seconds = g.duration_seconds;
    o.sample_seconds = 60;
    auto fast = Simulate(c, "test", w, o);
    o.fast_paths = false;
    auto general = Simulate(c, "test", w, o);
    ASSERT_TRUE(fast.ok() && general.ok());
    EXPECT_GT(fast->totals.preemptions, 0) << nodes << " nodes";
    EXPECT_EQ(ReportJson(*fast, nullptr), ReportJson(*general, nullptr)) << nodes << " nodes";
  }
}

TEST(Simulate, TheHtmlReportShowsBothConfigurationsWithPlotsAndNeedsNoNetwork) {
  const std::vector<Arrival> arrivals = {A(0, ArrivalKind::kJob, "batch", "low", 4, 1000),
                                         A(100, ArrivalKind::kPod, "urgent", "high", 4, 100)};
  Report upstream = RunDay(Cluster({4}), arrivals, 2000);
  Report other = upstream;
  other.config = "other <config>.yaml";
  const std::string page = ReportHtml(upstream, &other);
  EXPECT_NE(page.find("<h2>test</h2>"), std::string::npos);
  EXPECT_NE(page.find("<h2>other &lt;config&gt;.yaml</h2>"), std::string::npos);  // escaped
  EXPECT_NE(page.find("aria-label='utilisation over time'"), std::string::npos);
  EXPECT_NE(page.find("aria-label='pending time p95 by band'"), std::string::npos);
  for (const char* fetch : {"<script", "src=", "href=", "@import", "url("}) {
    EXPECT_EQ(page.find(fetch), std::string::npos) << fetch;
  }
}

TEST(SimulateWorkload, FormattedArrivalsReadBackTheSame) {
  GenerateOptions g;
  g.shape = TraceShape::kAlibaba;
  g.pods = 300;
  g.duration_seconds = 3600;
  const auto arrivals = GenerateWorkload(g);
  const std::string text = FormatWorkload(arrivals);
  auto back = ParseWorkload(text, "w.jsonl");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(FormatWorkload(*back), text);
}

TEST(SimulateWorkload, BadLinesAreErrorsNamingTheFileLineAndField) {
  auto error = [](const std::string& text) {
    auto r = ParseWorkload(text, "w.jsonl");
    return r.ok() ? std::string("ok") : r.status().message();
  };
  const std::string good = R"({"time": 0, "kind": "Job", "name": "a", "cpu": "1", "runSeconds": 10})";
  EXPECT_EQ(error(good + "\n"), "ok");
  EXPECT_EQ(error(good + "\n" + R"({"time": 0, "kind": "Job", "name": "b", "runSecond": 10})"),
            "w.jsonl:2: runSecond: unknown field (time, kind, namespace, name, priorityClass, cpu, memory, runSeconds, count)");
  EXPECT_EQ(error(R"({"time": 0, "kind": "Cron", "name": "a", "runSeconds": 1})"),
            "w.jsonl:1: kind: must be Pod, Job, Deployment or Gang, not \"Cron\"");
  EXPECT_EQ(error(good + "\n" + good), "w.jsonl:2: name: \"a\" arrives twice in namespace default");
  EXPECT_EQ(error(R"({"time": -1, "kind": "Job", "name": "a", "runSeconds": 1})"),
            "w.jsonl:1: time: must be between 0 and 315360000");
  EXPECT_EQ(error(R"({"time": 0, "kind": "Job", "name": "a", "cpu": "lots", "runSeconds": 1})").rfind("w.jsonl:1: cpu: ", 0), 0u);
  EXPECT_EQ(error(R"({"time": 0, "kind": "Pod", "name": "a", "runSeconds": 1, "count": 2})"),
            "w.jsonl:1: count: a Pod arrival is one pod");
  EXPECT_EQ(error("{not json\n"), "w.jsonl:1: not a JSON object");
  EXPECT_EQ(error(R"({"time": 0, "kind": "Job", "name": "Bad_Name", "runSeconds": 1})"),
            "w.jsonl:1: name: must be a DNS label of at most 52 characters, not \"Bad_Name\"");
}

TEST(SimulateWorkload, AnUnknownPriorityClassIsAnErrorNamingTheArrival) {
  SimulateOptions o;
  o.duration_seconds = 100;
  auto r = Simulate(Cluster({4}), "test", {A(0, ArrivalKind::kJob, "etl", "gold", 1, 10)}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("workload arrival default/etl"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("gold"), std::string::npos) << r.status().message();
}

// ---- The trace converters, on samples written in each trace's public schema ------------------

TraceFile Sample(const std::string& name) {
  const std::string path = std::string(ARBITER_SIMULATE_TESTDATA) + "/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "missing sample " << path;
  std::stringstream s;
  s << in.rdbuf();
  return {name, s.str()};
}

TEST(SimulateConvert, Borg2019JobsAndAllocSetsBecomeJobsAndDeploymentsInTheirTiers) {
  auto r = ConvertTrace("borg2019",
                        {Sample("borg2019_collection_events.jsonl"), Sample("borg2019_instance_events.jsonl")}, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  // 1001: an alloc set of two 0.125-CPU instances still running at the trace's end (1200 s):
  // runs of 1195 and 1194 s, the median the upper. 1002: three instances, runs of 300, 400 and
  // 580 s, mean request 1/3 of a 4-CPU machine. 1003: evicted after 120 s.
  EXPECT_EQ(FormatWorkload(*r),
            R"({"time":0,"kind":"Deployment","name":"alloc-1001","priorityClass":"production","cpu":"500m","memory":"1Gi","runSeconds":1195,"count":2})"
            "\n"
            R"({"time":600,"kind":"Job","name":"job-1002","priorityClass":"beb","cpu":"1333m","memory":"4Gi","runSeconds":400,"count":3})"
            "\n"
            R"({"time":900,"kind":"Job","name":"job-1003","priorityClass":"free","cpu":"250m","memory":"512Mi","runSeconds":120,"count":1})"
            "\n");
}

TEST(SimulateConvert, Alibaba2018TasksAndApplicationsBecomeBatchJobsAndOnlineDeployments) {
  ConvertOptions o;
  o.machine_memory = 100LL << 30;  // so that a percentage is a round number of GiB
  auto r = ConvertTrace("alibaba2018", {Sample("alibaba2018_batch_task.csv"), Sample("alibaba2018_container_meta.csv")}, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::string text = FormatWorkload(*r);
  // The failed task is left out; times count from the first event (86400 s).
  EXPECT_NE(text.find(R"({"time":0,"kind":"Job","name":"j-101-m1","priorityClass":"batch","cpu":"1","memory":)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("name":"j-101-r2-1","priorityClass":"batch","cpu":"500m")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"({"time":3600,"kind":"Job","name":"j-103-m1","priorityClass":"batch","cpu":"2")"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("j-102"), std::string::npos) << text;
  EXPECT_NE(text.find(R"({"time":0,"kind":"Deployment","name":"app-app-5","priorityClass":"online","cpu":"4")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("name":"app-app-9")"), std::string::npos) << text;
  // What was converted reads back as a workload.
  auto back = ParseWorkload(text, "converted.jsonl");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->size(), 5u);
}

TEST(SimulateConvert, Borg2019EventsOutOfOrderAndTimesAfterTheTraceStillGiveRunsWithinIt) {
  const std::string collections = R"({"time": "100000000", "type": 0, "collection_id": "9", "priority": 115})" "\n";
  // The export is not sorted: the FINISH comes first; an EVICT then a new SCHEDULE; a sentinel
  // time after the trace is left out.
  const std::string instances =
      R"({"time": "100000000", "type": 0, "collection_id": "9", "instance_index": 0, "resource_request": {"cpus": 0.5}})" "\n"
      R"({"time": "900000000", "type": 6, "collection_id": "9", "instance_index": 0})" "\n"
      R"({"time": "200000000", "type": 3, "collection_id": "9", "instance_index": 0})" "\n"
      R"({"time": "300000000", "type": 4, "collection_id": "9", "instance_index": 0})" "\n"
      R"({"time": "400000000", "type": 3, "collection_id": "9", "instance_index": 0})" "\n"
      R"({"time": "9223372036854775807", "type": 7, "collection_id": "9", "instance_index": 0})" "\n";
  auto r = ConvertTrace("borg2019", {{"collection_events.json", collections}, {"instance_events.json", instances}}, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].time_ms, 100'000);
  EXPECT_EQ((*r)[0].run_seconds, 500);  // its last run: SCHEDULE at 400 s, FINISH at 900 s
  EXPECT_EQ((*r)[0].priority_class, "beb");
  EXPECT_TRUE(ParseWorkload(FormatWorkload(*r), "w.jsonl").ok());
}

TEST(SimulateConvert, BadRowsAndUnknownTablesAreErrorsNamingThem) {
  auto r = ConvertTrace("alibaba2018", {{"x/batch_task.csv", "M1,4,j_1,1,Terminated,10,20,100\n"}}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "x/batch_task.csv:1: (row): batch_task has 9 columns, not 8");
  r = ConvertTrace("borg2019", {{"x/machine_events.jsonl", "{}\n"}}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a borg2019 table"), std::string::npos);
  r = ConvertTrace("borg2019", {{"c/collection_events.jsonl", "{\"type\": 0}\n"}, {"i/instance_events.jsonl", ""}}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "c/collection_events.jsonl:1: time: missing or not a number");
}

}  // namespace
}  // namespace arbiter::simulate
