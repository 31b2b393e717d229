// Runs folders of worked examples (each a plan's input and an expected.json) through
// `arbiter plan` in process and checks each `expect` block as tests/conformance/README.md
// defines it. CTest runs it on tests/conformance/ (ConformanceExamples); any other folder in the
// same format can be checked with scripts/check-spec-examples.sh DIR.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include "arbiter/base/json.h"

#include "arbiter/nomad/input.h"
#include "arbiter/nomad/planner.h"
#include "arbiter/nomad/render.h"
#include "arbiter/plan/render.h"
#include "testing/paths.h"
#include "testing/plan_harness.h"

namespace arbiter::sim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// The examples' folder, from ARBITER_SPEC_EXAMPLES.
fs::path ExamplesDir() {
  const char* dir = std::getenv("ARBITER_SPEC_EXAMPLES");
  return dir != nullptr ? fs::path(dir) : fs::path();
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> CasesOfMode(const std::string& mode) {
  std::vector<std::string> out;
  if (ExamplesDir().empty() || !fs::exists(ExamplesDir())) {
    // No examples is a failure, never a silent pass.
    std::fprintf(stderr, "spec_examples_check: set ARBITER_SPEC_EXAMPLES to the examples' folder (now \"%s\")\n",
                 ExamplesDir().c_str());
    std::exit(2);
  }
  for (const auto& e : fs::directory_iterator(ExamplesDir())) {
    if (!fs::exists(e.path() / "expected.json")) continue;
    if (Json::parse(ReadFile(e.path() / "expected.json")).value("mode", "") == mode) {
      out.push_back(e.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::set<std::string> Strings(const Json& a) {
  std::set<std::string> s;
  for (const auto& v : a) s.insert(v.get<std::string>());
  return s;
}

// Checks one `expect` object against the plan's JSON; returns the failures.
std::vector<std::string> Check(const Json& expect, const Json& plan, const Json& facts) {
  std::vector<std::string> bad;
  auto pod_of = [&](const std::string& name) -> const Json* {
    for (const auto& p : plan["pods"]) {
      if (p["name"] == name) return &p;
    }
    return nullptr;
  };
  // Always: the pods list holds exactly the pending pods, with their pod group.
  std::set<std::string> want_pending, have_pending;
  for (const auto& [name, f] : facts["pending"].items()) {
    want_pending.insert(name);
    const Json* p = pod_of(name);
    if (p && (*p)["podGroup"] != f["podGroup"]) bad.push_back(name + ": podGroup " + (*p)["podGroup"].dump());
  }
  for (const auto& p : plan["pods"]) have_pending.insert(p["name"].get<std::string>());
  if (want_pending != have_pending) bad.push_back("the pods list is not exactly the pending pods");
  if (expect.contains("pods")) {
    for (const auto& [name, want] : expect["pods"].items()) {
      const Json* p = pod_of(name);
      if (!p) {
        bad.push_back(name + ": not in the plan");
        continue;
      }
      for (const char* field : {"status", "node", "nominatedNode", "podGroup"}) {
        if (want.contains(field) && want[field] != (*p)[field]) {
          bad.push_back(name + ": " + field + " is " + (*p)[field].dump() + ", want " + want[field].dump());
        }
      }
      if (want.contains("message_contains") &&
          (*p)["message"].get<std::string>().find(want["message_contains"].get<std::string>()) == std::string::npos) {
        bad.push_back(name + ": message " + (*p)["message"].dump() + " lacks " + want["message_contains"].dump());
      }
    }
  }
  if (expect.contains("placement_sets")) {
    for (const auto& set : expect["placement_sets"]) {
      std::multiset<std::string> want, have;
      for (const auto& n : set["nodes"]) want.insert(n.get<std::string>());
      for (const auto& name : set["pods"]) {
        const Json* p = pod_of(name.get<std::string>());
        have.insert(p && (*p)["node"].is_string() ? (*p)["node"].get<std::string>() : "<none>");
      }
      if (want != have) bad.push_back("placement set " + set.dump() + " not met");
    }
  }
  std::set<std::string> victims;
  int pdb_violations = 0;
  for (const auto& pre : plan["preemptions"]) {
    for (const auto& v : pre["victims"]) {
      victims.insert(v["name"].get<std::string>());
      if (v["violatesPDB"].get<bool>()) ++pdb_violations;
      const auto& fact = facts["running"][v["name"].get<std::string>()];
      if (v["node"] != fact["node"] || v["priority"] != fact["priority"]) {
        bad.push_back("victim " + v.dump() + " disagrees with the facts");
      }
    }
  }
  if (expect.contains("preemptions")) {
    const Json& e = expect["preemptions"];
    if (e.contains("victims") && Strings(e["victims"]) != victims) bad.push_back("victims differ: got " + Json(victims).dump());
    if (e.contains("count") && e["count"].get<size_t>() != plan["preemptions"].size()) {
      bad.push_back("preemption count " + std::to_string(plan["preemptions"].size()));
    }
    if (e.contains("preemptor")) {
      for (const auto& pre : plan["preemptions"]) {
        const Json& want = e["preemptor"];
        if (want.contains("name") && pre["preemptor"] != want["name"]) bad.push_back("preemptor " + pre["preemptor"].dump());
        if (want.contains("kind") && pre["preemptorKind"] != want["kind"]) bad.push_back("kind " + pre["preemptorKind"].dump());
        if (want.contains("node") && pre["node"] != want["node"]) bad.push_back("preemption node " + pre["node"].dump());
      }
    }
    if (e.contains("victim_count") && e["victim_count"].get<size_t>() != victims.size()) {
      bad.push_back("victim count " + std::to_string(victims.size()));
    }
    if (e.contains("victims_from")) {
      auto from = Strings(e["victims_from"]);
      for (const auto& v : victims) {
        if (!from.count(v)) bad.push_back("victim " + v + " not among victims_from");
      }
    }
    if (e.contains("not_victims")) {
      for (const auto& v : Strings(e["not_victims"])) {
        if (victims.count(v)) bad.push_back(v + " must not be a victim");
      }
    }
    if (e.contains("pdb_violations") && e["pdb_violations"].get<int>() != pdb_violations) {
      bad.push_back("pdb violations " + std::to_string(pdb_violations));
    }
  }
  return bad;
}

class ConformanceExample : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceExample, MeetsItsExpectation) {
  const fs::path dir = ExamplesDir() / GetParam();
  const Json expected = Json::parse(ReadFile(dir / "expected.json"));
  std::string yaml;
  for (const auto& in : expected["inputs"]) yaml += ReadFile(dir / in.get<std::string>()) + "\n---\n";
  const Json plan = Json::parse(plan::Render(arbiter::testing::Plan(yaml, 0), plan::Format::kJson, false));
  std::vector<Json> alternatives;
  if (expected.contains("expect_any_of")) {
    for (const auto& a : expected["expect_any_of"]) alternatives.push_back(a);
  } else {
    alternatives.push_back(expected["expect"]);
  }
  std::vector<std::string> failures;
  for (const auto& alt : alternatives) {
    auto bad = Check(alt, plan, expected["facts"]);
    if (bad.empty()) return;
    failures.insert(failures.end(), bad.begin(), bad.end());
  }
  for (const auto& f : failures) ADD_FAILURE() << f;
  ADD_FAILURE() << "plan: " << plan.dump(1);
}

INSTANTIATE_TEST_SUITE_P(Examples, ConformanceExample, ::testing::ValuesIn(CasesOfMode("kubernetes")),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConformanceExample);

// Nomad cases: `placed`, `task_group`, `placements` (node with `preempted` or `preempted_count`,
// in any order) and `preempted` (the union, also Annotations.PreemptedAllocs).
class NomadConformanceExample : public ::testing::TestWithParam<std::string> {};

TEST_P(NomadConformanceExample, MeetsItsExpectation) {
  const fs::path dir = ExamplesDir() / GetParam();
  const Json expected = Json::parse(ReadFile(dir / "expected.json"));
  const auto& inputs = expected["inputs"];
  ASSERT_EQ(inputs.size(), 2u);
  const std::string cluster = inputs[0].get<std::string>(), job = inputs[1].get<std::string>();
  nomad::NomadInput in = nomad::LoadNomad(cluster, ReadFile(dir / cluster), job, ReadFile(dir / job));
  ASSERT_TRUE(in.ok()) << in.errors.front();
  const Json plan = Json::parse(nomad::RenderJson(in.job, nomad::PlanJob(in.cluster, in.job, {})));
  const Json& e = expected["expect"];
  const std::string tg = e.value("task_group", "");
  if (e.contains("placed")) {
    const bool failed = plan["FailedTGAllocs"].contains(tg);
    EXPECT_EQ(!failed, e["placed"].get<bool>()) << plan.dump(1);
    if (failed) {
      for (const char* k : {"NodesEvaluated", "NodesExhausted", "DimensionExhausted"}) {
        EXPECT_TRUE(plan["FailedTGAllocs"][tg].contains(k)) << k;
      }
    }
  }
  std::set<std::string> annotated;
  for (const auto& a : plan["Annotations"]["PreemptedAllocs"]) annotated.insert(a["ID"].get<std::string>());
  std::set<std::string> from_placements;
  for (const auto& p : plan["Placements"]) {
    for (const auto& id : p["PreemptedAllocations"]) from_placements.insert(id.get<std::string>());
  }
  EXPECT_EQ(annotated, from_placements);
  if (e.contains("preempted")) {
    EXPECT_EQ(annotated, Strings(e["preempted"])) << plan.dump(1);
  }
  if (e.contains("placements")) {
    std::vector<Json> left(plan["Placements"].begin(), plan["Placements"].end());
    for (const auto& want : e["placements"]) {
      auto it = std::find_if(left.begin(), left.end(), [&](const Json& got) {
        if (got["NodeID"] != want["node"]) return false;
        if (want.contains("preempted")) return Strings(got["PreemptedAllocations"]) == Strings(want["preempted"]);
        if (want.contains("preempted_count")) return got["PreemptedAllocations"].size() == want["preempted_count"].get<size_t>();
        return true;
      });
      EXPECT_NE(it, left.end()) << "no placement matches " << want.dump() << " in " << plan["Placements"].dump();
      if (it != left.end()) left.erase(it);
    }
  }
  // A victim is always at least the delta below the placing job.
  for (const auto& a : plan["Annotations"]["PreemptedAllocs"]) {
    EXPECT_LE(a["JobPriority"].get<int>(), in.job.priority - nomad::kDefaultPriorityDelta) << a.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, NomadConformanceExample, ::testing::ValuesIn(CasesOfMode("nomad")),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(NomadConformanceExample);

}  // namespace
}  // namespace arbiter::sim
