// The plan simulation end to end: the shipped example, determinism, pod order, and the
// conformance examples' inputs.
#include "arbiter/sim/plan_simulation.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>
#include "arbiter/base/json.h"

#include "arbiter/plan/render.h"
#include "testing/manifest_builders.h"
#include "testing/paths.h"
#include "testing/plan_harness.h"

namespace arbiter::sim {
namespace {

namespace fs = std::filesystem;
using arbiter::testing::PodOf;
using arbiter::testing::VictimNames;

using arbiter::testing::SourceDir;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Plan, ShippedExamplePlacesPodsAsKubeSchedulerWould) {
  auto r = arbiter::testing::Plan(ReadFile(SourceDir() + "/examples/basic/cluster.yaml"));
  ASSERT_EQ(r.pods.size(), 4u);
  // Popped by priority first (web-high), then by creation time.
  EXPECT_EQ(r.pods[0].name, "shop/web-2");
  EXPECT_EQ(r.pods[1].name, "jobs/train-1");
  EXPECT_EQ(r.pods[2].name, "jobs/analytics-1");
  EXPECT_EQ(r.pods[3].name, "shop/cache-1");
  // Anti-affinity keeps web-2 off node-a2 (web-1) and the taint keeps it off node-b1.
  EXPECT_EQ(PodOf(r, "shop/web-2").node, "node-a1");
  // The only node with a GPU, whose taint it tolerates.
  EXPECT_EQ(PodOf(r, "jobs/train-1").node, "node-b1");
  // Spread over zones: zone-b's node is tainted, so only zone-a counts; node-a2 has more room.
  EXPECT_EQ(PodOf(r, "shop/cache-1").node, "node-a2");
  auto big = PodOf(r, "jobs/analytics-1");
  EXPECT_FALSE(big.scheduled);
  EXPECT_EQ(big.message,
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
            "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
}

// The writer puts each explained cycle out as it ends, before the plan's outcome exists, and the
// streamed document is the whole plan: the same data in JSON and YAML, cycles first.
TEST(PlanWriter, WritesEachCycleAsItEndsAndThenTheOutcome) {
  const std::string yaml = ReadFile(SourceDir() + "/examples/basic/cluster.yaml");
  const sim::PlanResult whole = arbiter::testing::Plan(yaml, 0, true);
  ASSERT_FALSE(whole.cycles.empty());
  for (plan::Format f : {plan::Format::kJson, plan::Format::kYaml, plan::Format::kTable}) {
    std::ostringstream out;
    plan::PlanWriter w(f, true, out);
    size_t written = out.str().size();
    for (const auto& c : whole.cycles) {
      w.Cycle(c);
      EXPECT_GT(out.str().size(), written) << "a cycle waited to be written";
      written = out.str().size();
    }
    const char* outcome = f == plan::Format::kJson ? "\"pods\":" : f == plan::Format::kYaml ? "\npods:" : "NAME ";
    EXPECT_EQ(out.str().find(outcome), std::string::npos) << "the outcome came before Finish";
    w.Finish(whole);
    EXPECT_EQ(out.str(), plan::Render(whole, f, true));
  }
  const auto json = nlohmann::ordered_json::parse(plan::Render(whole, plan::Format::kJson, true));
  std::vector<std::string> keys;
  for (const auto& [k, v] : json.items()) keys.push_back(k);
  ASSERT_GE(keys.size(), 3u);
  EXPECT_EQ(keys[0], "kind");
  EXPECT_EQ(keys[1], "cycles");
  EXPECT_EQ(keys[2], "pods");
  EXPECT_EQ(json["cycles"].size(), whole.cycles.size());
  const std::string table = plan::Render(whole, plan::Format::kTable, true);
  EXPECT_EQ(table.rfind("Cycle 1 at ", 0), 0u);
  EXPECT_LT(table.find("Cycle 1 at "), table.find("NAME "));
}

// A plan that fails after its first cycles were written still leaves a document that parses,
// ending with the error.
TEST(PlanWriter, AFailureAfterCyclesClosesTheDocumentWithTheError) {
  const sim::PlanResult whole =
      arbiter::testing::Plan(ReadFile(SourceDir() + "/examples/basic/cluster.yaml"), 0, true);
  ASSERT_FALSE(whole.cycles.empty());
  std::ostringstream json, yaml;
  plan::PlanWriter j(plan::Format::kJson, true, json), y(plan::Format::kYaml, true, yaml);
  j.Cycle(whole.cycles.front());
  y.Cycle(whole.cycles.front());
  j.Abort("the simulation did not settle");
  y.Abort("the simulation did not settle");
  const auto parsed = nlohmann::json::parse(json.str());
  EXPECT_EQ(parsed["cycles"].size(), 1u);
  EXPECT_EQ(parsed["error"], "the simulation did not settle");
  EXPECT_NE(yaml.str().find("error: the simulation did not settle"), std::string::npos) << yaml.str();
}

TEST(Plan, SameInputAndSeedGiveByteIdenticalOutput) {
  std::string yaml;
  for (int i = 0; i < 30; ++i) yaml += arbiter::testing::Node("n" + std::to_string(i));
  for (int i = 0; i < 60; ++i) yaml += arbiter::testing::Pod("p" + std::to_string(i), "300m");
  for (plan::Format f : {plan::Format::kJson, plan::Format::kTable, plan::Format::kYaml}) {
    auto a = plan::Render(arbiter::testing::Plan(yaml, 7, true), f, true);
    auto b = plan::Render(arbiter::testing::Plan(yaml, 7, true), f, true);
    EXPECT_EQ(a, b);
  }
}

TEST(Plan, SeedOnlyChangesTiesBetweenEquallyScoredNodes) {
  std::string yaml;
  for (int i = 0; i < 8; ++i) yaml += arbiter::testing::Node("n" + std::to_string(i));
  yaml += arbiter::testing::Pod("p");
  std::set<std::string> chosen;
  for (uint64_t seed = 0; seed < 16; ++seed) chosen.insert(PodOf(arbiter::testing::Plan(yaml, seed), "default/p").node);
  EXPECT_GT(chosen.size(), 1u);  // eight identical nodes: the seed picks among them
}

TEST(Plan, JsonOutputHasTheSpecifiedShape) {
  auto r = arbiter::testing::Plan(arbiter::testing::Node("n1", "1") + arbiter::testing::Pod("fits", "500m") +
                                  arbiter::testing::Pod("too-big", "2"));
  auto j = nlohmann::json::parse(plan::Render(r, plan::Format::kJson, false));
  EXPECT_EQ(j["kind"], "Plan");
  ASSERT_EQ(j["pods"].size(), 2u);
  EXPECT_EQ(j["pods"][0]["name"], "default/fits");
  EXPECT_TRUE(j["pods"][0]["podGroup"].is_null());
  EXPECT_EQ(j["pods"][0]["status"], "Scheduled");
  EXPECT_EQ(j["pods"][0]["node"], "n1");
  EXPECT_TRUE(j["pods"][0]["nominatedNode"].is_null());
  EXPECT_EQ(j["pods"][0]["message"], "");
  EXPECT_EQ(j["pods"][1]["status"], "Pending");
  EXPECT_TRUE(j["pods"][1]["node"].is_null());
  EXPECT_EQ(j["pods"][1]["message"],
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not "
            "helpful for scheduling.");
  EXPECT_TRUE(j["preemptions"].is_array());
}

TEST(Plan, RunningPodsWithoutStartTimeStartInInputOrder) {
  std::string yaml = arbiter::testing::Node("n1") + arbiter::testing::Pod("first", "100m", "n1") +
                     arbiter::testing::Pod("second", "100m", "n1") + arbiter::testing::Pod("pending");
  auto r = arbiter::testing::Plan(yaml);
  EXPECT_EQ(r.pods.size(), 1u);  // only pending pods are planned
  EXPECT_TRUE(PodOf(r, "default/pending").scheduled);
}

TEST(Plan, PodsForAnotherSchedulerAreLeftAlone) {
  std::string yaml = arbiter::testing::Node("n1") + arbiter::testing::Pod("mine") +
                     arbiter::testing::Pod("theirs", "100m", "", "{}", "  schedulerName: volcano\n");
  auto r = arbiter::testing::Plan(yaml);
  ASSERT_EQ(r.pods.size(), 2u);
  EXPECT_EQ(r.pods[0].name, "default/mine");
  EXPECT_TRUE(r.pods[0].scheduled);
  EXPECT_FALSE(PodOf(r, "default/theirs").scheduled);
  EXPECT_NE(PodOf(r, "default/theirs").message.find("volcano"), std::string::npos);
}

TEST(Plan, JsonCountsPreemptionsUnderKubeSchedulerMetricNames) {
  // One 2-CPU node with two 1-CPU low pods; a high pod of 2 CPU evicts both; a second high pod
  // finds only equal-priority pods and cannot preempt.
  std::string yaml = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n" +
                     arbiter::testing::Node("n1", "2") + arbiter::testing::Pod("low-a", "1", "n1") +
                     arbiter::testing::Pod("low-b", "1", "n1") +
                     arbiter::testing::Pod("high", "2", "", "{}", "  priorityClassName: high\n") +
                     arbiter::testing::Pod("high-2", "2", "", "{}", "  priorityClassName: high\n");
  auto j = nlohmann::json::parse(plan::Render(arbiter::testing::Plan(yaml), plan::Format::kJson, false));
  const auto& m = j["metrics"];
  EXPECT_EQ(m["scheduler_preemption_attempts_total"].get<int>(), 3);  // high once, high-2 twice
  EXPECT_EQ(m["scheduler_preemption_victims"]["count"], 1);
  EXPECT_EQ(m["scheduler_preemption_victims"]["sum"], 2);
  EXPECT_EQ(m["scheduler_preemption_victims"]["buckets"][0]["count"], 0);  // le 1
  EXPECT_EQ(m["scheduler_preemption_victims"]["buckets"][1]["count"], 1);  // le 2
}

TEST(Plan, PodsBeingDeletedAreNotScheduled) {
  std::string yaml = arbiter::testing::Node("n1") + arbiter::testing::Pod("live") +
                     "---\napiVersion: v1\nkind: Pod\nmetadata: {name: leaving, deletionTimestamp: "
                     "'2026-01-01T00:00:00Z'}\nspec:\n  containers:\n  - name: c\n";
  auto r = arbiter::testing::Plan(yaml);
  ASSERT_EQ(r.pods.size(), 2u);
  EXPECT_TRUE(PodOf(r, "default/live").scheduled);
  EXPECT_FALSE(PodOf(r, "default/leaving").scheduled);
  EXPECT_NE(PodOf(r, "default/leaving").message.find("being deleted"), std::string::npos);
}

TEST(Plan, GracePeriodAtTheLimitEndsInTheYear9999InsteadOfOverflowingTheClock) {
  // The largest grace period the loader accepts, added to the plan's clock, used to wrap around
  // int64 and end the victim's termination before it began.
  const std::string grace = "  terminationGracePeriodSeconds: " + std::to_string(INT64_MAX / kSecond) + "\n";
  std::string yaml = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n" +
                     arbiter::testing::Node("n1", "1") + arbiter::testing::Pod("low", "1", "n1", "{}", grace) +
                     arbiter::testing::Pod("high", "1", "", "{}", "  priorityClassName: high\n");
  const PlanResult r = arbiter::testing::Plan(yaml);
  EXPECT_TRUE(PodOf(r, "default/high").scheduled);
  EXPECT_EQ(r.end, kLastTimestamp);
  EXPECT_EQ(FormatRfc3339(r.end), "9999-12-31T23:59:59Z");
}

// Every shipped example is valid input: it loads and admits, and its running pods keep their
// nodes. (The examples live in the repository; a missing one fails the test.)
TEST(Plan, ShippedExamplesLoadAndAdmit) {
  int checked = 0;
  for (const char* name : {"basic", "gang", "node-pressure"}) {
    const fs::path file = fs::path(SourceDir()) / "examples" / name / "cluster.yaml";
    ASSERT_TRUE(fs::exists(file)) << file;
    manifest::LoadResult loaded = manifest::Load({{file.string(), ReadFile(file)}});
    ASSERT_TRUE(loaded.ok()) << file << ": " << loaded.errors[0];
    auto errors = admission::AdmitPriorities(loaded.objects);
    ASSERT_TRUE(errors.empty()) << file << ": " << errors[0];
    EXPECT_FALSE(loaded.objects.pods.empty()) << file;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

}  // namespace
}  // namespace arbiter::sim

namespace arbiter::sim {
namespace {

// DefaultPreemptionArgs.victimSelection: Nomad applies Nomad's victim policy to pods. A 5-CPU
// node runs keep-95 (1 CPU) and three priority-50 pods started in the order a (1), b (2), c (1);
// `urgent` (priority 100) needs 3 CPUs.
std::string VictimPolicyCluster(const std::string& config) {
  std::string y;
  for (auto [name, value] : {std::pair{"p50", 50}, std::pair{"p95", 95}, std::pair{"p100", 100}}) {
    y += "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " + std::string(name) +
         "}\nvalue: " + std::to_string(value) + "\n";
  }
  y += arbiter::testing::Node("n1", "5");
  y += arbiter::testing::Pod("keep-95", "1", "n1", "{}", "  priorityClassName: p95\n");
  y += arbiter::testing::Pod("a", "1", "n1", "{}", "  priorityClassName: p50\n");
  y += arbiter::testing::Pod("b", "2", "n1", "{}", "  priorityClassName: p50\n");
  y += arbiter::testing::Pod("c", "1", "n1", "{}", "  priorityClassName: p50\n");
  y += arbiter::testing::Pod("urgent", "3", "", "{}", "  priorityClassName: p100\n");
  return y + config;
}

TEST(VictimSelection, KubernetesReprievesByImportance) {
  // Every lower pod goes, then they come back most important first: keep-95, then a (earliest);
  // b and c do not fit back.
  auto r = arbiter::testing::Plan(VictimPolicyCluster(""));
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/b", "default/c"}));
  EXPECT_TRUE(PodOf(r, "default/urgent").scheduled);
}

TEST(VictimSelection, NomadTakesTheBestFitWithinTheDelta) {
  // keep-95 is within 10 of 100, never a victim. Nomad's greedy takes b (nearest to the 3 CPUs
  // needed), then the first of the equally near a and c; the superset filter keeps both.
  const std::string config = arbiter::testing::ProfileConfig(
      "  pluginConfig:\n  - name: DefaultPreemption\n    args: {victimSelection: Nomad, priorityDelta: 10}\n");
  auto r = arbiter::testing::Plan(VictimPolicyCluster(config));
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/a", "default/b"}));
  EXPECT_TRUE(PodOf(r, "default/urgent").scheduled);
  // With a delta of 60 no pod is eligible.
  const std::string strict = arbiter::testing::ProfileConfig(
      "  pluginConfig:\n  - name: DefaultPreemption\n    args: {victimSelection: Nomad, priorityDelta: 60}\n");
  auto s = arbiter::testing::Plan(VictimPolicyCluster(strict));
  EXPECT_TRUE(s.preemptions.empty());
  EXPECT_FALSE(PodOf(s, "default/urgent").scheduled);
}

TEST(VictimSelection, NomadPolicyPreemptsForExtendedResources) {
  // The node has CPU to spare but its one GPU is held by a priority-50 pod: the GPU is a
  // dimension of the ask, so its holder is the victim (not the bigger CPU user).
  using arbiter::testing::NodeY;
  using arbiter::testing::PodY;
  std::string y;
  for (auto [name, value] : {std::pair{"p50", 50}, std::pair{"p100", 100}}) {
    y += "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " + std::string(name) +
         "}\nvalue: " + std::to_string(value) + "\n";
  }
  y += NodeY("n1").Cpu("4").Allocatable("example.com/gpu", "1").Y();
  y += PodY("gpu-user").On("n1").PriorityClass("p50").Cpu("500m").Request("example.com/gpu", "1").Y();
  y += PodY("cpu-user").On("n1").PriorityClass("p50").Cpu("2").Y();
  y += PodY("trainer").PriorityClass("p100").Cpu("100m").Request("example.com/gpu", "1").Y();
  y += arbiter::testing::ProfileConfig(
      "  pluginConfig:\n  - name: DefaultPreemption\n    args: {victimSelection: Nomad}\n");
  auto r = arbiter::testing::Plan(y);
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/gpu-user"}));
  EXPECT_TRUE(PodOf(r, "default/trainer").scheduled);
}

TEST(VictimSelection, UnknownPolicyIsAnInputError) {
  const std::string config = arbiter::testing::ProfileConfig(
      "  pluginConfig:\n  - name: DefaultPreemption\n    args: {victimSelection: Cheapest}\n");
  const auto errors = arbiter::testing::LoadErrors(VictimPolicyCluster(config));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("args.victimSelection: must be Kubernetes, Nomad or Optimal"), std::string::npos) << errors[0];
}

}  // namespace
}  // namespace arbiter::sim
