// `arbiter plan` as a user runs it: exit codes, stdout/stderr discipline, stdin, several files.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include "arbiter/base/json.h"
#include <yaml-cpp/yaml.h>

#include "testing/paths.h"

namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

CliRun Arbiter(const std::string& args, const std::string& stdin_text = "") {
  const std::string bin = arbiter::testing::ArbiterBinary();
  // Files named after the running test and process: CTest runs tests in parallel.
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = ::testing::TempDir() + "/arbiter-" + std::to_string(getpid()) + "-" +
                          (info != nullptr ? std::string(info->test_suite_name()) + "." + info->name() : "x");
  const std::string in = dir + ".stdin", out = dir + ".stdout", err = dir + ".stderr";
  std::ofstream(in) << stdin_text;
  const std::string cmd = bin + " " + args + " <" + in + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

std::string Example() {
  return arbiter::testing::SourceDir() + "/examples/basic/cluster.yaml";
}

const char* kNode =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}\n";
const char* kPod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n";

TEST(PlanCli, PrintsJsonAndExitsZero) {
  CliRun r = Arbiter("plan -f " + Example() + " -o json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "Plan");
  EXPECT_EQ(j["pods"].size(), 4u);
}

TEST(PlanCli, YamlOutputCarriesTheSameContentAsJson) {
  CliRun json = Arbiter("plan -f " + Example() + " -o json");
  CliRun yaml = Arbiter("plan -f " + Example() + " -o yaml");
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  YAML::Node y = YAML::Load(yaml.out);
  auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(y["pods"].size(), j["pods"].size());
  for (size_t i = 0; i < j["pods"].size(); ++i) {
    EXPECT_EQ(y["pods"][i]["name"].as<std::string>(), j["pods"][i]["name"].get<std::string>());
    EXPECT_EQ(y["pods"][i]["message"].as<std::string>(), j["pods"][i]["message"].get<std::string>());
  }
}

TEST(PlanCli, TableOutputShowsTheColumns) {
  CliRun r = Arbiter("plan -f " + Example());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("NAME", 0), 0u);
  EXPECT_NE(r.out.find("NOMINATED NODE"), std::string::npos);
  EXPECT_NE(r.out.find("shop/web-2"), std::string::npos);
}

TEST(PlanCli, ExplainShowsFilterVerdictsAndScores) {
  CliRun r = Arbiter("plan -f " + Example() + " --explain");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("TaintToleration: UnschedulableAndUnresolvable (node(s) had untolerated taint(s))"),
            std::string::npos);
  EXPECT_NE(r.out.find("chosen: "), std::string::npos);
}

TEST(PlanCli, ExplainedJsonAndYamlCarryTheSameCycles) {
  CliRun json = Arbiter("plan -f " + Example() + " -o json --explain");
  CliRun yaml = Arbiter("plan -f " + Example() + " -o yaml --explain");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  auto j = nlohmann::json::parse(json.out);
  YAML::Node y = YAML::Load(yaml.out);
  ASSERT_GT(j["cycles"].size(), 0u);
  ASSERT_EQ(y["cycles"].size(), j["cycles"].size());
  for (size_t i = 0; i < j["cycles"].size(); ++i) {
    EXPECT_EQ(y["cycles"][i]["pod"].as<std::string>(), j["cycles"][i]["pod"].get<std::string>());
    EXPECT_EQ(y["cycles"][i]["filter"].size(), j["cycles"][i]["filter"].size());
  }
  EXPECT_EQ(y["pods"].size(), j["pods"].size());
}

TEST(PlanCli, ReadsStandardInputAndConcatenatesFilesInOrder) {
  const std::string node_file = ::testing::TempDir() + "/arbiter-" + std::to_string(getpid()) + "-node.yaml";
  std::ofstream(node_file) << kNode;
  CliRun r = Arbiter("plan -f " + node_file + " -f - -o json", kPod);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pods"][0]["node"], "n1");
}

TEST(PlanCli, InvalidInputExitsTwoWithOneLinePerProblemAndNothingOnStdout) {
  const std::string bad = std::string(kNode) + "---\n" +
                          "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
                          "    resources: {requests: {cpu: 1.2.3, memory: -5}}\n";
  CliRun r = Arbiter("plan -f - -o json", bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("<stdin>: document 2: Pod default/p: spec.containers[0].resources.requests.cpu: invalid "
                       "quantity \"1.2.3\""),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("spec.containers[0].resources.requests.memory: must be greater than or equal to 0"),
            std::string::npos)
      << r.err;
}

TEST(PlanCli, MissingFileExitsTwo) {
  CliRun r = Arbiter("plan -f /nonexistent/cluster.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/cluster.yaml: cannot open file: No such file or directory"), std::string::npos);
}

TEST(PlanCli, InputBeyondTheSizeLimitIsRefusedWithTheFlagToRaiseIt) {
  // A device that never ends is read only up to the limit, not until memory runs out.
  CliRun zero = Arbiter("plan -f /dev/zero --max-input-size 4Mi");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_TRUE(zero.out.empty());
  EXPECT_NE(zero.err.find("/dev/zero: larger than the input limit of 4Mi (raise it with --max-input-size)"),
            std::string::npos)
      << zero.err;
  // The limit counts all files together: the example fits alone, not with standard input beside it.
  const std::string example = Slurp(Example());
  EXPECT_EQ(Arbiter("plan -f " + Example() + " --max-input-size " + std::to_string(example.size())).exit_code, 0);
  CliRun two = Arbiter("plan -f " + Example() + " -f - --max-input-size " + std::to_string(example.size() + 10),
                       std::string(kNode));
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.err.find("<stdin>: larger than the input limit"), std::string::npos) << two.err;
  CliRun bad = Arbiter("plan -f " + Example() + " --max-input-size lots");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--max-input-size: \"lots\" is not a positive quantity"), std::string::npos) << bad.err;
}

TEST(PlanCli, NomadNumberBeyondDoubleExitsWithAnErrorNotAnAbort) {
  const std::string job = arbiter::testing::SourceDir() + "/examples/nomad/job.json";
  CliRun r = Arbiter("plan --nomad -f - -f " + job, "[1e400]");
  EXPECT_EQ(r.exit_code, 255);
  EXPECT_NE(r.err.find("<stdin>: not valid JSON"), std::string::npos) << r.err;
}

TEST(PlanCli, BadFlagsExitTwo) {
  EXPECT_EQ(Arbiter("plan -f " + Example() + " -o xml").exit_code, 2);
  EXPECT_EQ(Arbiter("plan").exit_code, 2);
}

TEST(PlanCli, FastPathsChangeNoDecision) {
  for (const char* example : {"basic", "gang", "node-pressure"}) {
    const std::string file = arbiter::testing::SourceDir() + "/examples/" + example + "/cluster.yaml";
    ASSERT_TRUE(std::ifstream(file)) << file;
    CliRun fast = Arbiter("plan -f " + file + " -o json");
    CliRun slow = Arbiter("plan -f " + file + " -o json --no-fast-paths");
    EXPECT_EQ(fast.exit_code, 0);
    EXPECT_EQ(fast.out, slow.out) << example;
  }
  CliRun fast = Arbiter("plan -f " + Example() + " -o json");
  CliRun slow = Arbiter("plan -f " + Example() + " -o json --no-fast-paths");
  EXPECT_EQ(fast.out, slow.out);
}

TEST(PlanCli, OutputIsByteIdenticalAcrossRuns) {
  CliRun a = Arbiter("plan -f " + Example() + " -o json --explain --seed 3");
  CliRun b = Arbiter("plan -f " + Example() + " -o json --explain --seed 3");
  EXPECT_EQ(a.out, b.out);
}

}  // namespace

namespace {

TEST(NomadPlanCli, ShippedExampleEvictsTheDocumentedAllocations) {
  const std::string dir = arbiter::testing::SourceDir() + "/examples/nomad/";
  CliRun r = Arbiter("plan --nomad -f " + dir + "cluster.json -f " + dir + "job.json -o json");
  EXPECT_EQ(r.exit_code, 1) << r.err;  // allocations created and destroyed
  const auto j = nlohmann::json::parse(r.out);
  std::set<std::string> victims;
  for (const auto& a : j["Annotations"]["PreemptedAllocs"]) {
    victims.insert(a["ID"].get<std::string>());
    EXPECT_LE(a["JobPriority"].get<int>(), 75 - 10) << a.dump();
    EXPECT_EQ(a["DesiredStatus"], "evict");
  }
  EXPECT_EQ(victims, (std::set<std::string>{"a-email-1", "a-email-2", "a-email-3", "a-analytics-1"}));
  ASSERT_EQ(j["Placements"].size(), 2u);
  EXPECT_EQ(j["Placements"][0]["NodeID"], "node-2");
  EXPECT_EQ(j["Placements"][1]["NodeID"], "node-1");
  EXPECT_EQ(j["Annotations"]["DesiredTGUpdates"]["web"]["Preemptions"], 4);
  CliRun table = Arbiter("plan --nomad -f " + dir + "cluster.json -f " + dir + "job.json");
  EXPECT_NE(table.out.find("Preemptions:"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Alloc ID"), std::string::npos) << table.out;
}

TEST(NomadPlanCli, InvalidInputExitsWith255AndNamesTheField) {
  const std::string dir = arbiter::testing::SourceDir() + "/examples/nomad/";
  CliRun r = Arbiter("plan --nomad -f - -f " + dir + "job.json",
                     R"({"Nodes": [{"ID": "n1", "NodeResources": {"Cpu": {"CpuShares": "lots"}}}]})");
  EXPECT_EQ(r.exit_code, 255);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("Nodes[0] (n1): NodeResources.Cpu.CpuShares: must be an integer"), std::string::npos) << r.err;
}

// `arbiter bench` as a smoke test on small shapes: it completes and its counts hold (never a time).
nlohmann::json BenchJson(const std::string& args) {
  CliRun r = Arbiter("bench " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

TEST(BenchCli, SchedulingBasicPlacesEveryPod) {
  auto j = BenchJson("--scenario SchedulingBasic --nodes 50 --initial-pods 20 --pods 300");
  EXPECT_EQ(j["scheduled"], 300);
  EXPECT_GT(j["podsPerSecond"].get<double>(), 0);
}

TEST(BenchCli, GangSchedulingPlacesEveryMemberOfEveryGang) {
  auto j = BenchJson("--scenario GangScheduling --nodes 40 --gangs 6 --pods-per-gang 25");
  EXPECT_EQ(j["scheduled"], 150);
  EXPECT_EQ(j["preemptions"], 0);
}

TEST(BenchCli, GangPreemptionBasicEvictsEveryVictimInOneDecision) {
  // 20 nodes of ten 40m victims; one gang of 20 pods at 3970m needs every node whole.
  auto j = BenchJson("--scenario GangPreemptionBasic --nodes 20 --gangs 1 --pods-per-gang 20");
  EXPECT_EQ(j["scheduled"], 20);
  EXPECT_EQ(j["preemptions"], 1);
  EXPECT_EQ(j["victims"], 200);
}

TEST(BenchCli, PodPreemptingAllModeGroupsEvictsWholeGangs) {
  // Each preemptor clears one node's ten pods, each from a different all-mode gang of ten pods
  // spread over ten nodes: a decision evicts 100 pods and frees ten nodes.
  auto all = BenchJson("--scenario PreemptionPodGroupDisruptionMode --nodes 100 --mode all");
  EXPECT_EQ(all["scheduled"], 100);
  EXPECT_EQ(all["preemptions"], 10);
  EXPECT_EQ(all["victims"], 1000);
  auto single = BenchJson("--scenario PreemptionPodGroupDisruptionMode --nodes 100 --mode single");
  EXPECT_EQ(single["preemptions"], 100);
  EXPECT_EQ(single["victims"], 1000);
}

TEST(BenchCli, NomadPlacementPlacesEveryAllocationByEvictingTwo) {
  auto j = BenchJson("--scenario NomadPlacement --nodes 200");
  EXPECT_EQ(j["placements"], 200);
  EXPECT_EQ(j["preempted"], 400);
}

TEST(BenchCli, DecisionQualityNeverBeatsTheExhaustiveOptimum) {
  CliRun r = Arbiter("bench --scenario DecisionQuality --clusters 300 --seed 7");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  int engines = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    ++engines;
    // The search is exact: no engine can find a cheaper victim set, and every cluster is counted once.
    EXPECT_EQ(j["cheaperThanOptimum"], 0) << line;
    EXPECT_EQ(j["optimal"].get<int>() + j["worse"].get<int>() + j["missed"].get<int>(),
              j["clustersWherePreemptionHelps"].get<int>())
        << line;
    EXPECT_GT(j["clustersWherePreemptionHelps"].get<int>(), 0) << line;
    if (j["engine"] == "optimal") {
      // victimSelection Optimal finds the optimum on every one of these clusters, within its bound.
      EXPECT_EQ(j["optimal"], j["clustersWherePreemptionHelps"]) << line;
      EXPECT_EQ(j["searchBoundHit"], 0) << line;
    }
  }
  EXPECT_EQ(engines, 3);
}

TEST(BenchCli, ScenarioFileRefusesAMisspeltFieldAtEveryLevel) {
  const std::string step = ::testing::TempDir() + "misspelt-step.yaml";
  std::ofstream(step) << "name: Bad\nsteps:\n- createNodes: {count: 2}\n- createPods: {count: 3, runingPerNode: 1}\n";
  CliRun r = Arbiter("bench " + step);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("steps[1].createPods: runingPerNode: unknown field"), std::string::npos) << r.err;
  const std::string top = ::testing::TempDir() + "misspelt-top.yaml";
  std::ofstream(top) << "name: Bad\nconfg: x.yaml\nsteps:\n- barrier: {}\n";
  r = Arbiter("bench " + top);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("confg: unknown field"), std::string::npos) << r.err;
  // A scenario's configuration decodes strictly too, named by the scenario that points at it.
  const std::string config = ::testing::TempDir() + "bad-config.yaml";
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
                           "- pluginConfig:\n  - name: DefaultPreemption\n    args: {victimSelection: Best}\n";
  const std::string with_config = ::testing::TempDir() + "with-config.yaml";
  std::ofstream(with_config) << "name: Bad\nconfig: bad-config.yaml\nsteps:\n- barrier: {}\n";
  r = Arbiter("bench " + with_config);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("args.victimSelection: must be Kubernetes, Nomad or Optimal"), std::string::npos) << r.err;
}

TEST(BenchCli, ScenarioFileErrorsNameTheStepAndField) {
  const std::string path = ::testing::TempDir() + "bad-scenario.yaml";
  std::ofstream(path) << "name: Bad\nsteps:\n- createNodes: {count: 2}\n- createPods: {count: 3, cpu: lots}\n";
  CliRun r = Arbiter("bench " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("steps[1].createPods: cpu:"), std::string::npos) << r.err;
}

TEST(BenchCli, ChurnOnlyCreatesAndCountsNoChurnPodAsMeasured) {
  const std::string bad = ::testing::TempDir() + "bad-churn.yaml";
  std::ofstream(bad) << "name: Bad\nsteps:\n- createNodes: {count: 2}\n- churn: {mode: delete}\n";
  CliRun r = Arbiter("bench " + bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("steps[1].churn: mode: only create is supported"), std::string::npos) << r.err;

  // 10 nodes with room for 40 small pods; a 9-CPU churn pod per 10 measured pods never fits.
  const std::string good = ::testing::TempDir() + "churn.yaml";
  std::ofstream(good) << "name: Churn\nsteps:\n- createNodes: {count: 10}\n"
                         "- churn: {everyMeasuredPods: 10, cpu: \"9\", priority: 10}\n"
                         "- createPods: {count: 40, measure: true}\n- barrier: {}\n";
  r = Arbiter("bench " + good + " -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["scheduled"], 40);   // the churn pods are not among the measured
  EXPECT_EQ(j["churnPods"], 5);    // at 0, 10, 20, 30 and 40 measured pods bound
  EXPECT_EQ(j["preemptions"], 0);  // 9 CPU fits no node, whoever is evicted
}

TEST(BenchCli, PreemptionBasicEvictsFourPodsPerPreemptor) {
  auto j = BenchJson("--scenario PreemptionBasic --nodes 30");
  EXPECT_EQ(j["preemptors"], 30);
  EXPECT_EQ(j["preemptions"], 30);
  EXPECT_EQ(j["victims"], 120);  // 3970m needs all four 900m pods gone
  EXPECT_EQ(j["scheduled"], 30);
}

TEST(BenchCli, LegacyPreemptionBasicEvictsThreeOfFour) {
  auto j = BenchJson("--scenario PreemptionBasicLegacy --nodes 30");
  EXPECT_EQ(j["victims"], 90);  // 3000m needs 2.6 CPU more: three of the four pods
  EXPECT_EQ(j["scheduled"], 30);
}

TEST(BenchCli, UnschedulablePodsNeverPreemptAndOrdinaryPodsAllLand) {
  auto j = BenchJson("--scenario Unschedulable --nodes 40 --initial-pods 10 --pods 500");
  EXPECT_EQ(j["preemptions"], 0);
  EXPECT_EQ(j["victims"], 0);
  EXPECT_EQ(j["scheduled"], 500);
  EXPECT_EQ(j["preemptors"], 5);
}

TEST(BenchCli, UnknownScenarioExitsTwo) {
  EXPECT_EQ(Arbiter("bench --scenario Nope").exit_code, 2);
}

TEST(PlanCli, AnUnknownFieldIsAnErrorNamingItUnlessValidateSaysWarnOrIgnore) {
  const std::string typo = std::string(kNode) + "---\n" +
                           "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priorityClasName: high\n  containers:\n  - name: c\n";
  CliRun strict = Arbiter("plan -f -", typo);
  EXPECT_EQ(strict.exit_code, 2);
  EXPECT_EQ(strict.out, "");
  EXPECT_EQ(strict.err, "<stdin>: document 2: Pod default/p: spec.priorityClasName: unknown field \"priorityClasName\" "
                        "(--validate=warn reads on without it)\n");
  CliRun warn = Arbiter("plan --validate=warn -f -", typo);
  EXPECT_EQ(warn.exit_code, 0) << warn.err;
  EXPECT_NE(warn.err.find("warning: <stdin>: document 2: Pod default/p: spec.priorityClasName: unknown field "
                          "\"priorityClasName\", ignored"),
            std::string::npos)
      << warn.err;
  CliRun ignore = Arbiter("plan --validate=ignore -f -", typo);
  EXPECT_EQ(ignore.exit_code, 0) << ignore.err;
  EXPECT_EQ(ignore.err, "");
  // The scheduler's configuration has no published schema: its decoder lists its fields.
  CliRun config = Arbiter("plan -f -", std::string(kNode) +
                                           "---\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                                           "profiles:\n- schedulerName: default-scheduler\n  pluginz: {}\n");
  EXPECT_EQ(config.exit_code, 2);
  EXPECT_NE(config.err.find("profiles[0].pluginz: unknown field \"pluginz\""), std::string::npos) << config.err;
}

TEST(PlanCli, PlansTheExampleDeploymentAndNotesWhatItExpandedAndSkipped) {
  const std::string extra = std::string(kNode) +
                            "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n"
                            "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n"
                            "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n";
  CliRun r = Arbiter("plan -f - -f " + arbiter::testing::SourceDir() + "/examples/serve/web-deployment.yaml -o json", extra);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  int web = 0;
  for (const auto& p : j["pods"]) web += p["name"].get<std::string>().starts_with("default/web-");
  EXPECT_EQ(web, 2) << r.out;
  EXPECT_NE(r.err.find("note: Deployment default/web: new ReplicaSet web-"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("note: read and skipped what scheduling does not use: 1 Service, 1 Widget"), std::string::npos)
      << r.err;
  // A kind of a group Arbiter reads, misspelt, is still an error.
  CliRun typo = Arbiter("plan -f -", std::string(kNode) + "---\napiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: d}\n");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("unknown kind \"Deploymnet\""), std::string::npos) << typo.err;
}

TEST(PlanCli, SmallMistakesAreNamedWithTheirFix) {
  CliRun typo = Arbiter("plna -f x.yaml");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_EQ(typo.err, "arbiter: unknown command \"plna\" (did you mean \"plan\"?); the commands are plan, simulate, bench, "
                      "serve, schedule, nodes, version\n");
  CliRun nomad = Arbiter("plan -f " + arbiter::testing::SourceDir() + "/examples/nomad/job.json");
  EXPECT_EQ(nomad.exit_code, 2);
  EXPECT_NE(nomad.err.find("kind: is required (this looks like a Nomad file: plan it with --nomad"), std::string::npos)
      << nomad.err;
  CliRun down = Arbiter("plan --server http://127.0.0.1:1 -f " + Example());
  EXPECT_EQ(down.exit_code, 2);
  EXPECT_NE(down.err.find("connection refused or the host unreachable: is the API server running there?"), std::string::npos)
      << down.err;
}

}  // namespace
