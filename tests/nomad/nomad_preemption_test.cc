// Scenario tests for Arbiter's Nomad mode: Nomad's preemption (victim selection per node and
// placement) and the schedulers around it, fed with Nomad's own JSON shapes built inline.
// Section numbers refer to docs/upstream-rules.md Part C.
//
// Every scenario is built so that the expected victims follow from the reference's rules and
// would differ under the obvious wrong rule (for example the lower-priority alloc is listed after
// a better-fitting higher-priority one, so picking "first in input" or "best fit overall" fails).
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "arbiter/base/json.h"

#include "arbiter/nomad/input.h"
#include "arbiter/nomad/model.h"
#include "arbiter/nomad/planner.h"
#include "arbiter/nomad/preemptor.h"
#include "arbiter/nomad/render.h"

namespace arbiter::nomad {
namespace {

using Json = nlohmann::json;
using Ids = std::set<std::string>;

// ---------------------------------------------------------------------------------------------
// Builders for Nomad's JSON (the shapes `nomad operator api` returns for nodes, allocations and jobs).

Json NodeJson(const std::string& id, int64_t cpu, int64_t mem, int64_t disk = 100000, int64_t mbits = 1000) {
  return Json{{"ID", id},
              {"Name", id},
              {"Datacenter", "dc1"},
              {"Status", "ready"},
              {"SchedulingEligibility", "eligible"},
              {"Drain", false},
              {"NodeResources",
               {{"Cpu", {{"CpuShares", cpu}}},
                {"Memory", {{"MemoryMB", mem}}},
                {"Disk", {{"DiskMB", disk}}},
                {"Networks", Json::array({Json{{"Mode", "host"},
                                               {"Device", "eth0"},
                                               {"CIDR", "10.0.0.1/32"},
                                               {"IP", "10.0.0.1"},
                                               {"MBits", mbits}}})},
                {"Devices", Json::array()}}},
              {"ReservedResources",
               {{"Cpu", {{"CpuShares", 0}}},
                {"Memory", {{"MemoryMB", 0}}},
                {"Disk", {{"DiskMB", 0}}},
                {"Networks", {{"ReservedHostPorts", ""}}}}}};
}

// A device model on a node with `n` healthy instances named <prefix>0..n-1.
Json DeviceModel(const std::string& vendor, const std::string& type, const std::string& name, int n,
                 const std::string& prefix) {
  Json inst = Json::array();
  for (int i = 0; i < n; ++i) inst.push_back({{"ID", prefix + std::to_string(i)}, {"Healthy", true}});
  return Json{{"Vendor", vendor}, {"Type", type}, {"Name", name}, {"Instances", inst}};
}

// An allocated (or asked) network on eth0 with static ports.
Json Net(int64_t mbits, const std::vector<int64_t>& ports = {}) {
  Json rp = Json::array();
  for (int64_t p : ports) rp.push_back({{"Label", "p" + std::to_string(p)}, {"Value", p}});
  return Json{{"Device", "eth0"}, {"IP", "10.0.0.1"}, {"MBits", mbits}, {"ReservedPorts", rp},
              {"DynamicPorts", Json::array()}};
}

// A device an allocation holds: the model and the instance IDs it was given.
Json DevUse(const std::string& name, const std::vector<std::string>& ids) {
  return Json{{"Vendor", "nvidia"}, {"Type", "gpu"}, {"Name", name}, {"DeviceIDs", ids}};
}

struct A {
  std::string id = "";
  std::string job = "";
  int prio = 50;
  std::string node = "n1";
  int64_t cpu = 0, mem = 0, disk = 0;
  std::string tg = "web";
  std::string type = "service";
  int max_parallel = -1;  // -1: no Migrate block (canonical default)
  Json networks = Json::array();
  Json devices = Json::array();
  Json shared_networks = Json::array();
  std::string name = "";  // default: job.tg[0]
};

Json AllocJson(const A& a) {
  Json group{{"Name", a.tg}, {"Count", 1}};
  if (a.max_parallel >= 0) group["Migrate"] = {{"MaxParallel", a.max_parallel}};
  return Json{{"ID", a.id},
              {"Name", a.name.empty() ? a.job + "." + a.tg + "[0]" : a.name},
              {"Namespace", "default"},
              {"NodeID", a.node},
              {"NodeName", a.node},
              {"JobID", a.job},
              {"Job",
               {{"ID", a.job},
                {"Name", a.job},
                {"Namespace", "default"},
                {"Type", a.type},
                {"Priority", a.prio},
                {"Datacenters", {"dc1"}},
                {"TaskGroups", Json::array({group})}}},
              {"TaskGroup", a.tg},
              {"DesiredStatus", "run"},
              {"ClientStatus", "running"},
              {"AllocatedResources",
               {{"Tasks",
                 {{a.tg,
                   {{"Cpu", {{"CpuShares", a.cpu}}},
                    {"Memory", {{"MemoryMB", a.mem}}},
                    {"Networks", a.networks},
                    {"Devices", a.devices}}}}},
                {"Shared", {{"DiskMB", a.disk}, {"Networks", a.shared_networks}}}}}};
}

struct G {
  std::string name = "web";
  int64_t count = 1;
  int64_t cpu = 100, mem = 100, disk = 0;
  Json networks = Json::array();        // the task's Resources.Networks
  Json devices = Json::array();         // the task's Resources.Devices
  Json group_networks = Json::array();  // the group's Networks
};

Json JobJson(const std::string& id, const std::string& type, int prio, const std::vector<G>& groups) {
  Json tgs = Json::array();
  for (const G& g : groups) {
    tgs.push_back({{"Name", g.name},
                   {"Count", g.count},
                   {"EphemeralDisk", {{"SizeMB", g.disk}}},
                   {"Networks", g.group_networks},
                   {"Tasks", Json::array({Json{{"Name", g.name},
                                               {"Resources",
                                                {{"CPU", g.cpu},
                                                 {"MemoryMB", g.mem},
                                                 {"Networks", g.networks},
                                                 {"Devices", g.devices}}}}})}});
  }
  return Json{{"Job",
               {{"ID", id},
                {"Name", id},
                {"Namespace", "default"},
                {"Type", type},
                {"Priority", prio},
                {"Datacenters", {"dc1"}},
                {"TaskGroups", tgs}}}};
}

Json Preemption(bool system, bool sysbatch, bool batch, bool service) {
  return Json{{"PreemptionConfig",
               {{"SystemSchedulerEnabled", system},
                {"SysBatchSchedulerEnabled", sysbatch},
                {"BatchSchedulerEnabled", batch},
                {"ServiceSchedulerEnabled", service}}}};
}
const Json kAllOn = Preemption(true, true, true, true);

// `sched` null: no SchedulerConfig at all (Nomad's built-in defaults apply).
Json ClusterJson(const std::vector<Json>& nodes, const std::vector<Json>& allocs, const Json& sched = kAllOn) {
  Json c{{"Nodes", nodes}, {"Allocations", Json::array()}};
  for (const Json& a : allocs) c["Allocations"].push_back(a);
  if (!sched.is_null()) c["SchedulerConfig"] = sched;
  return c;
}

// ---------------------------------------------------------------------------------------------
// Running a scenario.

struct Outcome {
  std::unique_ptr<NomadInput> in;
  NomadPlan plan;

  Ids Victims() const {
    Ids out;
    for (const auto& p : plan.preempted) out.insert(p.alloc->id);
    return out;
  }
  std::vector<std::string> PlacedNodes() const {
    std::vector<std::string> out;
    for (const auto& p : plan.placements) out.push_back(p.node_id);
    return out;
  }
  Ids PlacedNodeSet() const {
    auto v = PlacedNodes();
    return Ids(v.begin(), v.end());
  }
  const Alloc* Victim(const std::string& id) const {
    for (const auto& p : plan.preempted) {
      if (p.alloc->id == id) return p.alloc;
    }
    return nullptr;
  }
  std::string Rendered() const { return RenderJson(in->job, plan); }
};

std::string JoinErrors(const std::vector<std::string>& errors) {
  std::string s;
  for (const auto& e : errors) s += e + "\n";
  return s;
}

// Loads and plans; also checks the invariants every plan must satisfy: each preempted alloc is
// listed by exactly the placement whose AllocID it names, and nothing is preempted twice.
Outcome Plan(const Json& cluster, const Json& job, PlannerOptions opts = {}) {
  Outcome r;
  r.in = std::make_unique<NomadInput>(LoadNomad("cluster.json", cluster.dump(), "job.json", job.dump()));
  if (!r.in->ok()) {
    ADD_FAILURE() << "input errors:\n" << JoinErrors(r.in->errors);
    return r;
  }
  r.plan = PlanJob(r.in->cluster, r.in->job, opts);
  std::map<std::string, std::string> by;  // victim -> placement alloc ID
  for (const auto& p : r.plan.placements) {
    for (const auto& v : p.preempted) EXPECT_TRUE(by.emplace(v, p.alloc_id).second) << v << " preempted twice";
  }
  EXPECT_EQ(by.size(), r.plan.preempted.size());
  for (const auto& p : r.plan.preempted) {
    auto it = by.find(p.alloc->id);
    if (it == by.end()) {
      ADD_FAILURE() << p.alloc->id << " is preempted but no placement lists it";
      continue;
    }
    EXPECT_EQ(p.by, it->second) << p.alloc->id;
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// 1. Distance (§4).

TEST(NomadResourceDistance, ReproducesReferenceTable) {
  const Resources ask{2048, 512, 4096};
  EXPECT_NEAR(ResourceDistance(ask, Resources{2048, 512, 4096}), 0.000, 1e-3);
  EXPECT_NEAR(ResourceDistance(ask, Resources{1024, 400, 1024}), 0.928, 1e-3);
  EXPECT_NEAR(ResourceDistance(ask, Resources{8192, 200, 1024}), 3.152, 1e-3);
  EXPECT_NEAR(ResourceDistance(ask, Resources{2048, 500, 4096}), 0.023, 1e-3);
}

TEST(NomadResourceDistance, DimensionsNoLongerNeededCountZero) {
  // need ≤ 0 gives a zero coordinate whatever the alloc holds.
  EXPECT_NEAR(ResourceDistance(Resources{0, 1000, -300}, Resources{5000, 1000, 9000}), 0.0, 1e-9);
  EXPECT_NEAR(ResourceDistance(Resources{1000, -1, 0}, Resources{500, 4096, 4096}), 0.5, 1e-9);
}

// ---------------------------------------------------------------------------------------------
// 2. Priority delta (§3).

// One node whose CPU is taken by a priority-`victim` alloc; the job asks 500 of the 200 left.
Outcome DeltaScenario(int job_prio, int victim_prio, PlannerOptions opts = {}) {
  const Json cluster = ClusterJson({NodeJson("n1", 1000, 4096)},
                                   {AllocJson(A{.id = "victim", .job = "low", .prio = victim_prio, .cpu = 800, .mem = 100})});
  return Plan(cluster, JobJson("hi", "service", job_prio, {G{.cpu = 500, .mem = 100}}), opts);
}

TEST(NomadPriorityDelta, ExactlyTenAboveCanPreempt) {
  Outcome r = DeltaScenario(50, 40);
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.plan.placements[0].node_id, "n1");
  EXPECT_EQ(r.Victims(), Ids{"victim"});
  EXPECT_TRUE(r.plan.failed.empty());
}

TEST(NomadPriorityDelta, NineAboveCannotPreempt) {
  Outcome r = DeltaScenario(49, 40);
  EXPECT_TRUE(r.plan.placements.empty());
  EXPECT_TRUE(r.plan.preempted.empty());
  ASSERT_EQ(r.plan.failed.count("web"), 1u);
  EXPECT_EQ(r.plan.failed.at("web").nodes_exhausted, 1);
  EXPECT_EQ(r.plan.failed.at("web").dimension_exhausted.count("cpu"), 1u);
}

TEST(NomadPriorityDelta, EqualOrHigherNeverPreempted) {
  for (int victim : {40, 45, 90}) {
    Outcome r = DeltaScenario(40, victim);
    EXPECT_TRUE(r.plan.placements.empty()) << victim;
    EXPECT_TRUE(r.plan.preempted.empty()) << victim;
    EXPECT_EQ(r.plan.failed.count("web"), 1u) << victim;
  }
}

TEST(NomadPriorityDelta, OptionChangesTheThreshold) {
  PlannerOptions five;
  five.priority_delta = 5;
  EXPECT_EQ(DeltaScenario(45, 40, five).Victims(), Ids{"victim"});
  EXPECT_TRUE(DeltaScenario(44, 40, five).plan.placements.empty());

  PlannerOptions twenty;
  twenty.priority_delta = 20;
  Outcome ten_above = DeltaScenario(50, 40, twenty);
  EXPECT_TRUE(ten_above.plan.placements.empty());
  EXPECT_TRUE(ten_above.plan.preempted.empty());
  EXPECT_EQ(DeltaScenario(60, 40, twenty).Victims(), Ids{"victim"});
}

TEST(NomadPriorityDelta, PreemptorEligibility) {
  Job job;
  job.id = "hi";
  job.priority = 60;
  const std::map<std::string, int64_t> none;
  Alloc a;
  a.job_id = "other";
  Preemptor p(job, kDefaultPriorityDelta, none);
  a.job_priority = 50;
  EXPECT_TRUE(p.Eligible(a));
  a.job_priority = 51;
  EXPECT_FALSE(p.Eligible(a));
  a.job_priority = 60;
  EXPECT_FALSE(p.Eligible(a));
  a.job_priority = 1;
  a.job_id = "hi";  // its own job: never
  EXPECT_FALSE(p.Eligible(a));
}

// ---------------------------------------------------------------------------------------------
// 3. Lowest priority bucket first; 4. best fit within a bucket (§4).

TEST(NomadTaskGroupPreemption, LowestPriorityBucketFirstEvenIfHigherFitsBetter) {
  // Free CPU 200; ask 800. Either alloc alone suffices; the priority-40 one fits exactly
  // (distance 0) and is listed first, yet the priority-20 one must go.
  const Json cluster = ClusterJson({NodeJson("n1", 2000, 4096)},
                                   {AllocJson(A{.id = "p40", .job = "mid", .prio = 40, .cpu = 800, .mem = 100}),
                                    AllocJson(A{.id = "p20", .job = "low", .prio = 20, .cpu = 1000, .mem = 100})});
  ASSERT_LT(ResourceDistance({800, 100, 0}, {800, 100, 0}), ResourceDistance({800, 100, 0}, {1000, 100, 0}));
  Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 800, .mem = 100}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims(), Ids{"p20"});
}

TEST(NomadTaskGroupPreemption, NextBucketWhenLowestInsufficient) {
  // Free CPU 200; ask 1000. The priority-20 alloc frees 300 (not enough); the priority-40 bucket
  // supplies the rest with its nearest alloc (800, not 1500). The priority-90 alloc is ineligible.
  const Json cluster = ClusterJson({NodeJson("n1", 3300, 4096)},
                                   {AllocJson(A{.id = "p90", .job = "top", .prio = 90, .cpu = 500, .mem = 100}),
                                    AllocJson(A{.id = "p40-big", .job = "mid2", .prio = 40, .cpu = 1500, .mem = 100}),
                                    AllocJson(A{.id = "p40", .job = "mid", .prio = 40, .cpu = 800, .mem = 100}),
                                    AllocJson(A{.id = "p20", .job = "low", .prio = 20, .cpu = 300, .mem = 100})});
  Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 1000, .mem = 100}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims(), (Ids{"p20", "p40"}));
  EXPECT_EQ(r.plan.desired_updates.at("web").preemptions, 2);
}

TEST(NomadTaskGroupPreemption, AllEligibleInsufficientPreemptsNothing) {
  // Free 200 + eligible 300 < 1000; the rest is held by an ineligible alloc.
  const Json cluster = ClusterJson({NodeJson("n1", 2000, 4096)},
                                   {AllocJson(A{.id = "p90", .job = "top", .prio = 90, .cpu = 1500, .mem = 100}),
                                    AllocJson(A{.id = "p20", .job = "low", .prio = 20, .cpu = 300, .mem = 100})});
  Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 1000, .mem = 100}}));
  EXPECT_TRUE(r.plan.placements.empty());
  EXPECT_TRUE(r.plan.preempted.empty());
  ASSERT_EQ(r.plan.failed.count("web"), 1u);
  EXPECT_EQ(r.plan.failed.at("web").dimension_exhausted.count("cpu"), 1u);
}

TEST(NomadTaskGroupPreemption, BestFitInsideBucketBeatsBiggerAlloc) {
  // Same priority; free 200; ask 1000. "big" (1900, listed first) alone would do, but "fit" (900)
  // is nearer to the need (0.1 vs 0.9) and also suffices.
  const Json cluster = ClusterJson({NodeJson("n1", 3000, 4096)},
                                   {AllocJson(A{.id = "big", .job = "low1", .prio = 20, .cpu = 1900, .mem = 100}),
                                    AllocJson(A{.id = "fit", .job = "low2", .prio = 20, .cpu = 900, .mem = 100})});
  Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 1000, .mem = 100}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims(), Ids{"fit"});
}

// ---------------------------------------------------------------------------------------------
// 5. Superset filter (§4 "Filter out allocs whose resource usage superset").
//
// Node 3000 CPU / 3500 MB, full. Ask 2000/1000. Greedy: small1 (1.06) beats big (2.0), then
// small2 (0.94 vs 3.0), then big; the filter then sorts big first, which alone covers the ask.

Alloc MakeAlloc(const std::string& id, const std::string& job, int prio, Resources r, const std::string& tg = "web",
                int max_parallel = 0) {
  Alloc a;
  a.id = id;
  a.job_id = job;
  a.job_priority = prio;
  a.task_group = tg;
  a.node_id = "n1";
  a.resources = r;
  a.max_parallel = max_parallel;
  return a;
}

TEST(NomadSupersetFilter, PreemptorDropsSmallAllocsCoveredByBigOne) {
  const Resources ask{2000, 1000, 0};
  const Alloc s1 = MakeAlloc("small1", "low", 20, {500, 250, 0});
  const Alloc s2 = MakeAlloc("small2", "low", 20, {500, 250, 0});
  const Alloc big = MakeAlloc("big", "low", 20, {2000, 3000, 0});
  // Greedy order really is small1, small2, big.
  ASSERT_LT(ResourceDistance(ask, s1.resources), ResourceDistance(ask, big.resources));
  ASSERT_LT(ResourceDistance({1500, 750, 0}, s2.resources), ResourceDistance({1500, 750, 0}, big.resources));
  Job job;
  job.id = "hi";
  job.priority = 70;
  const std::map<std::string, int64_t> none;
  Preemptor p(job, kDefaultPriorityDelta, none);
  auto victims = p.ForTaskGroup(Resources{3000, 3500, 0}, {&s1, &s2, &big}, ask);
  ASSERT_EQ(victims.size(), 1u);
  EXPECT_EQ(victims[0]->id, "big");
}

TEST(NomadSupersetFilter, PlanKeepsOnlyTheCoveringVictim) {
  const Json cluster = ClusterJson({NodeJson("n1", 3000, 3500)},
                                   {AllocJson(A{.id = "small1", .job = "low", .prio = 20, .cpu = 500, .mem = 250}),
                                    AllocJson(A{.id = "small2", .job = "low", .prio = 20, .cpu = 500, .mem = 250,
                                                .name = "low.web[1]"}),
                                    AllocJson(A{.id = "big", .job = "low", .prio = 20, .cpu = 2000, .mem = 3000,
                                                .name = "low.web[2]"})});
  Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 2000, .mem = 1000}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims(), Ids{"big"});
  EXPECT_EQ(r.plan.desired_updates.at("web").preemptions, 1);
}

// Arbiter's --victim-selection optimal: Nomad takes the lowest bucket first, so a small
// priority-20 allocation goes beside the priority-30 one that alone would free enough; the exact
// search keeps the set that ranks best (the same top priority, fewer victims).
TEST(NomadOptimalVictims, TheFewestAllocationsAtTheLowestTopPriority) {
  const Alloc s = MakeAlloc("small", "low", 20, {200, 100, 0});
  const Alloc b = MakeAlloc("big", "mid", 30, {2000, 100, 0});
  Job job;
  job.id = "hi";
  job.priority = 70;
  const std::map<std::string, int64_t> none;
  const Resources capacity{3000, 4000, 0}, ask{1800, 100, 0};
  Preemptor nomad(job, kDefaultPriorityDelta, none);
  auto greedy = nomad.ForTaskGroup(capacity, {&s, &b}, ask);
  ASSERT_EQ(greedy.size(), 2u);
  Preemptor optimal(job, kDefaultPriorityDelta, none, /*optimal=*/true);
  auto best = optimal.ForTaskGroup(capacity, {&s, &b}, ask);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0]->id, "big");
  // Where Nomad's answer is already best, it stands.
  auto same = optimal.ForTaskGroup(capacity, {&s, &b}, Resources{900, 100, 0});
  EXPECT_EQ(same, nomad.ForTaskGroup(capacity, {&s, &b}, Resources{900, 100, 0}));
}

// ---------------------------------------------------------------------------------------------
// 6. max_parallel penalty (§4).

TEST(NomadMaxParallelPenalty, PenaltyValues) {
  Job job;
  job.id = "hi";
  job.priority = 80;
  std::map<std::string, int64_t> plan;
  Preemptor p(job, kDefaultPriorityDelta, plan);
  Alloc a = MakeAlloc("a", "jobA", 30, {}, "ag", 1);
  EXPECT_EQ(p.Penalty(a), 0.0);  // nothing preempted yet
  plan["default/jobA/ag"] = 1;
  EXPECT_EQ(p.Penalty(a), 50.0);
  plan["default/jobA/ag"] = 2;
  EXPECT_EQ(p.Penalty(a), 100.0);
  a.max_parallel = 2;
  EXPECT_EQ(p.Penalty(a), 50.0);
  plan["default/jobA/ag"] = 1;
  EXPECT_EQ(p.Penalty(a), 0.0);
  a.max_parallel = 0;  // batch/system: no migrate block
  plan["default/jobA/ag"] = 5;
  EXPECT_EQ(p.Penalty(a), 0.0);
}

TEST(NomadMaxParallelPenalty, PreemptorPrefersOtherJobOnceGroupAlreadyPreempted) {
  // Free CPU 400; ask 1000/500. A (600/500) is nearer (0.4) than B (600/100, 0.89).
  const Alloc a = MakeAlloc("A", "jobA", 30, {600, 500, 0}, "ag", 1);
  const Alloc b = MakeAlloc("B", "jobB", 30, {600, 100, 0}, "bg", 1);
  Job job;
  job.id = "hi";
  job.priority = 80;
  std::map<std::string, int64_t> plan;
  Preemptor p(job, kDefaultPriorityDelta, plan);
  auto without = p.ForTaskGroup(Resources{1600, 4000, 0}, {&a, &b}, Resources{1000, 500, 0});
  ASSERT_EQ(without.size(), 1u);
  EXPECT_EQ(without[0]->id, "A");
  plan["default/jobA/ag"] = 1;
  auto with = p.ForTaskGroup(Resources{1600, 4000, 0}, {&a, &b}, Resources{1000, 500, 0});
  ASSERT_EQ(with.size(), 1u);
  EXPECT_EQ(with[0]->id, "B");
}

// Two nodes, each 1600 CPU running A_k (job A, group ag; 600/500) and B_k (job B; 600/100), both
// priority 30. Job X (80) places Count 2 asking 1000/500. The first placement evicts A on its node
// (nearest). That node cannot take the second (X+X > 1600 even without B), so the second goes to
// the other node, where A again fits best; with the penalty (A's group already lost one alloc and
// MaxParallel is 1) B goes instead. With MaxParallel 2 there is no penalty and both A allocs go.
Json PenaltyCluster(int a_max_parallel) {
  std::vector<Json> allocs;
  for (const std::string n : {"n1", "n2"}) {
    allocs.push_back(AllocJson(A{.id = "A-" + n, .job = "jobA", .prio = 30, .node = n, .cpu = 600, .mem = 500,
                                 .tg = "ag", .max_parallel = a_max_parallel, .name = "jobA.ag[" + n + "]"}));
    allocs.push_back(AllocJson(A{.id = "B-" + n, .job = "jobB", .prio = 30, .node = n, .cpu = 600, .mem = 100,
                                 .tg = "bg", .max_parallel = 1, .name = "jobB.bg[" + n + "]"}));
  }
  return ClusterJson({NodeJson("n1", 1600, 4000), NodeJson("n2", 1600, 4000)}, allocs);
}

TEST(NomadMaxParallelPenalty, SecondPlacementPrefersOtherJobsAlloc) {
  for (uint64_t seed = 0; seed < 6; ++seed) {
    PlannerOptions opts;
    opts.seed = seed;
    Outcome r = Plan(PenaltyCluster(1), JobJson("x", "service", 80, {G{.count = 2, .cpu = 1000, .mem = 500}}), opts);
    ASSERT_EQ(r.plan.placements.size(), 2u) << "seed " << seed;
    EXPECT_EQ(r.PlacedNodeSet(), (Ids{"n1", "n2"})) << "seed " << seed;
    ASSERT_EQ(r.plan.preempted.size(), 2u) << "seed " << seed;
    // The first placement took A on its node; the second took B (not A) on the other node.
    const auto& first = r.plan.placements[0];
    const auto& second = r.plan.placements[1];
    EXPECT_EQ(first.preempted, std::vector<std::string>{"A-" + first.node_id}) << "seed " << seed;
    EXPECT_EQ(second.preempted, std::vector<std::string>{"B-" + second.node_id}) << "seed " << seed;
  }
}

TEST(NomadMaxParallelPenalty, WithoutPenaltyBothAllocsOfTheGroupGo) {
  // Control: MaxParallel 2, one preemption so far is within the budget -> no penalty.
  Outcome r = Plan(PenaltyCluster(2), JobJson("x", "service", 80, {G{.count = 2, .cpu = 1000, .mem = 500}}));
  ASSERT_EQ(r.plan.placements.size(), 2u);
  EXPECT_EQ(r.Victims(), (Ids{"A-n1", "A-n2"}));
}

// ---------------------------------------------------------------------------------------------
// 7. Memory and disk.

TEST(NomadDimensions, MemoryShortagePreemptsMemoryHolder) {
  // CPU is plentiful; memory free 448 < 1000. "cpuhog" (listed first) holds CPU, not memory.
  const Json cluster = ClusterJson({NodeJson("n1", 4000, 2048)},
                                   {AllocJson(A{.id = "cpuhog", .job = "low1", .prio = 20, .cpu = 2000, .mem = 100}),
                                    AllocJson(A{.id = "memhog", .job = "low2", .prio = 20, .cpu = 100, .mem = 1500})});
  const Json job = JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 1000}});
  Outcome r = Plan(cluster, job);
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims(), Ids{"memhog"});

  Outcome off = Plan(ClusterJson({NodeJson("n1", 4000, 2048)},
                             {AllocJson(A{.id = "cpuhog", .job = "low1", .prio = 20, .cpu = 2000, .mem = 100}),
                              AllocJson(A{.id = "memhog", .job = "low2", .prio = 20, .cpu = 100, .mem = 1500})},
                             Preemption(true, false, false, false)),
                 job);
  EXPECT_TRUE(off.plan.placements.empty());
  ASSERT_EQ(off.plan.failed.count("web"), 1u);
  EXPECT_EQ(off.plan.failed.at("web").dimension_exhausted, (std::map<std::string, int64_t>{{"memory", 1}}));
}

TEST(NomadDimensions, DiskShortagePreemptsNearestDiskHolder) {
  // Disk is full (6000 + 4000 of 10000); the group asks EphemeralDisk 4000. "disk4000" matches
  // exactly (distance 0) and is chosen over the bigger "disk6000" listed first.
  std::vector<Json> allocs{
      AllocJson(A{.id = "disk6000", .job = "low1", .prio = 20, .cpu = 100, .mem = 100, .disk = 6000}),
      AllocJson(A{.id = "disk4000", .job = "low2", .prio = 20, .cpu = 100, .mem = 100, .disk = 4000})};
  const Json job = JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .disk = 4000}});
  Outcome r = Plan(ClusterJson({NodeJson("n1", 4000, 8192, 10000)}, allocs), job);
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims(), Ids{"disk4000"});

  Outcome off = Plan(ClusterJson({NodeJson("n1", 4000, 8192, 10000)}, allocs, Preemption(true, false, false, false)), job);
  EXPECT_TRUE(off.plan.placements.empty());
  ASSERT_EQ(off.plan.failed.count("web"), 1u);
  EXPECT_EQ(off.plan.failed.at("web").dimension_exhausted, (std::map<std::string, int64_t>{{"disk", 1}}));
}

TEST(NomadDimensions, DiskAskTooBigForEligibleAllocsFails) {
  // 10000 disk: 8000 held at priority 65 (ineligible for 70), 2000 at 20; ask 3000.
  std::vector<Json> allocs{
      AllocJson(A{.id = "keep", .job = "near", .prio = 65, .cpu = 100, .mem = 100, .disk = 8000}),
      AllocJson(A{.id = "low", .job = "low", .prio = 20, .cpu = 100, .mem = 100, .disk = 2000})};
  Outcome r = Plan(ClusterJson({NodeJson("n1", 4000, 8192, 10000)}, allocs),
               JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .disk = 3000}}));
  EXPECT_TRUE(r.plan.placements.empty());
  EXPECT_TRUE(r.plan.preempted.empty());
  ASSERT_EQ(r.plan.failed.count("web"), 1u);
  EXPECT_EQ(r.plan.failed.at("web").dimension_exhausted.count("disk"), 1u);
}

// ---------------------------------------------------------------------------------------------
// 8. Static ports (§5).

TEST(NomadNetworkPreemption, StaticPortHolderPreemptedDespiteSpareCpu) {
  const Json cluster = ClusterJson(
      {NodeJson("n1", 4000, 8192)},
      {AllocJson(A{.id = "other", .job = "low1", .prio = 20, .cpu = 100, .mem = 100}),
       AllocJson(A{.id = "holder", .job = "low2", .prio = 20, .cpu = 100, .mem = 100, .networks = Json::array({Net(10, {8080})})})});
  Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .networks = Json::array({Net(10, {8080})})}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims(), Ids{"holder"});
}

TEST(NomadNetworkPreemption, GroupNetworkPortHolderPreempted) {
  Json ask{{"MBits", 0}, {"ReservedPorts", Json::array({Json{{"Label", "db"}, {"Value", 9090}}})}};
  const Json cluster = ClusterJson(
      {NodeJson("n1", 4000, 8192)},
      {AllocJson(A{.id = "other", .job = "low1", .prio = 20, .cpu = 100, .mem = 100, .networks = Json::array({Net(5, {9091})})}),
       AllocJson(A{.id = "holder", .job = "low2", .prio = 20, .cpu = 100, .mem = 100, .shared_networks = Json::array({Net(0, {9090})})})});
  Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .group_networks = Json::array({ask})}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims(), Ids{"holder"});
}

TEST(NomadNetworkPreemption, PortHeldByIneligibleAllocExhaustsNode) {
  const Json cluster = ClusterJson(
      {NodeJson("n1", 4000, 8192)},
      {AllocJson(A{.id = "low", .job = "low", .prio = 20, .cpu = 100, .mem = 100}),
       AllocJson(A{.id = "holder", .job = "near", .prio = 65, .cpu = 100, .mem = 100, .networks = Json::array({Net(10, {8080})})})});
  Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .networks = Json::array({Net(10, {8080})})}}));
  EXPECT_TRUE(r.plan.placements.empty());
  EXPECT_TRUE(r.plan.preempted.empty());
  ASSERT_EQ(r.plan.failed.count("web"), 1u);
  const auto& dims = r.plan.failed.at("web").dimension_exhausted;
  ASSERT_EQ(dims.size(), 1u);
  EXPECT_EQ(dims.begin()->first.rfind("network", 0), 0u) << dims.begin()->first;
}

TEST(NomadNetworkPreemption, PortHeldByIneligibleAllocSendsPlacementElsewhere) {
  // n1: port 8080 held at priority 65; n2: port free but CPU full of a priority-20 alloc.
  const Json cluster = ClusterJson(
      {NodeJson("n1", 4000, 8192), NodeJson("n2", 1000, 8192)},
      {AllocJson(A{.id = "holder", .job = "near", .prio = 65, .cpu = 100, .mem = 100, .networks = Json::array({Net(10, {8080})})}),
       AllocJson(A{.id = "n1-low", .job = "low1", .prio = 20, .node = "n1", .cpu = 100, .mem = 100}),
       AllocJson(A{.id = "n2-low", .job = "low2", .prio = 20, .node = "n2", .cpu = 1000, .mem = 100})});
  for (uint64_t seed = 0; seed < 4; ++seed) {
    PlannerOptions opts;
    opts.seed = seed;
    Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 500, .mem = 100, .networks = Json::array({Net(10, {8080})})}}),
                 opts);
    ASSERT_EQ(r.plan.placements.size(), 1u) << "seed " << seed;
    EXPECT_EQ(r.plan.placements[0].node_id, "n2") << "seed " << seed;
    EXPECT_EQ(r.Victims(), Ids{"n2-low"}) << "seed " << seed;
  }
}

TEST(NomadNetworkPreemption, NodeReservedPortIsNeverFreed) {
  Json node = NodeJson("n1", 4000, 8192);
  node["ReservedResources"]["Networks"]["ReservedHostPorts"] = "22,8000-8100";
  const Json cluster =
      ClusterJson({node}, {AllocJson(A{.id = "low", .job = "low", .prio = 20, .cpu = 100, .mem = 100,
                                       .networks = Json::array({Net(10, {8081})})})});
  Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .networks = Json::array({Net(10, {8080})})}}));
  EXPECT_TRUE(r.plan.placements.empty());
  EXPECT_TRUE(r.plan.preempted.empty());
  ASSERT_EQ(r.plan.failed.count("web"), 1u);
}

// ---------------------------------------------------------------------------------------------
// 9. Bandwidth (§5).

Json BandwidthCluster(const Json& sched = kAllOn) {
  // 1000 Mbit: 250 at priority 40 (listed first), 400 and 300 at priority 20; 50 free.
  return ClusterJson({NodeJson("n1", 8000, 8192)},
                     {AllocJson(A{.id = "bw250-p40", .job = "mid", .prio = 40, .cpu = 100, .mem = 100, .networks = Json::array({Net(250)})}),
                      AllocJson(A{.id = "bw400-p20", .job = "low1", .prio = 20, .cpu = 100, .mem = 100, .networks = Json::array({Net(400)})}),
                      AllocJson(A{.id = "bw300-p20", .job = "low2", .prio = 20, .cpu = 100, .mem = 100, .networks = Json::array({Net(300)})}),
                      AllocJson(A{.id = "nonet-p20", .job = "low3", .prio = 20, .cpu = 100, .mem = 100})},
                     sched);
}

TEST(NomadNetworkPreemption, BandwidthTakesLowestPriorityHoldersUntilItFits) {
  Outcome r = Plan(BandwidthCluster(), JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .networks = Json::array({Net(500)})}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims(), (Ids{"bw400-p20", "bw300-p20"}));
}

TEST(NomadNetworkPreemption, BandwidthMovesToNextPriorityWhenLowestInsufficient) {
  Outcome r = Plan(BandwidthCluster(), JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .networks = Json::array({Net(800)})}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims(), (Ids{"bw400-p20", "bw300-p20", "bw250-p40"}));
}

TEST(NomadNetworkPreemption, SingleHolderCoveringTheAskIsEnough) {
  // Ask 400: the 400-Mbit holder alone (distance 0) frees enough.
  Outcome r = Plan(BandwidthCluster(), JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .networks = Json::array({Net(400)})}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims(), Ids{"bw400-p20"});
}

TEST(NomadNetworkPreemption, BandwidthWithoutPreemptionFailsOnNetwork) {
  Outcome r = Plan(BandwidthCluster(Preemption(true, false, false, false)),
               JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .networks = Json::array({Net(500)})}}));
  EXPECT_TRUE(r.plan.placements.empty());
  ASSERT_EQ(r.plan.failed.count("web"), 1u);
  const auto& dims = r.plan.failed.at("web").dimension_exhausted;
  ASSERT_EQ(dims.size(), 1u);
  EXPECT_EQ(dims.begin()->first.rfind("network", 0), 0u) << dims.begin()->first;
}

// ---------------------------------------------------------------------------------------------
// 10. Devices (§6).

Json GpuNode(const std::vector<Json>& models) {
  Json n = NodeJson("n1", 8000, 8192);
  for (const Json& m : models) n["NodeResources"]["Devices"].push_back(m);
  return n;
}

TEST(NomadDevicePreemption, HolderOfAllInstancesIsPreempted) {
  for (const std::string request : {"nvidia/gpu", "gpu", "nvidia/gpu/1080ti"}) {
    const Json cluster = ClusterJson(
        {GpuNode({DeviceModel("nvidia", "gpu", "1080ti", 2, "g")})},
        {AllocJson(A{.id = "nogpu", .job = "low1", .prio = 20, .cpu = 100, .mem = 100}),
         AllocJson(A{.id = "gpuholder", .job = "low2", .prio = 20, .cpu = 100, .mem = 100,
                     .devices = Json::array({DevUse("1080ti", {"g0", "g1"})})})});
    Json dev{{"Name", request}, {"Count", 1}};
    Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .devices = Json::array({dev})}}));
    ASSERT_EQ(r.plan.placements.size(), 1u) << request;
    EXPECT_EQ(r.Victims(), Ids{"gpuholder"}) << request;
  }
}

TEST(NomadDevicePreemption, IneligibleHolderMeansNoPlacement) {
  const Json cluster = ClusterJson({GpuNode({DeviceModel("nvidia", "gpu", "1080ti", 2, "g")})},
                                   {AllocJson(A{.id = "gpuholder", .job = "near", .prio = 65, .cpu = 100, .mem = 100,
                                                .devices = Json::array({DevUse("1080ti", {"g0", "g1"})})})});
  Json dev{{"Name", "nvidia/gpu"}, {"Count", 1}};
  Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .devices = Json::array({dev})}}));
  EXPECT_TRUE(r.plan.placements.empty());
  EXPECT_TRUE(r.plan.preempted.empty());
  ASSERT_EQ(r.plan.failed.count("web"), 1u);
}

// Two models with two instances each, all used: one model by a priority-`p1080` alloc, the other
// by a priority-`p2080` alloc. The ask needs two instances of any nvidia/gpu.
Outcome TwoModels(int p1080, int p2080) {
  const Json cluster = ClusterJson(
      {GpuNode({DeviceModel("nvidia", "gpu", "1080ti", 2, "a"), DeviceModel("nvidia", "gpu", "2080ti", 2, "b")})},
      {AllocJson(A{.id = "on1080", .job = "j1080", .prio = p1080, .cpu = 100, .mem = 100,
                   .devices = Json::array({DevUse("1080ti", {"a0", "a1"})})}),
       AllocJson(A{.id = "on2080", .job = "j2080", .prio = p2080, .cpu = 100, .mem = 100,
                   .devices = Json::array({DevUse("2080ti", {"b0", "b1"})})})});
  Json dev{{"Name", "nvidia/gpu"}, {"Count", 2}};
  return Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .devices = Json::array({dev})}}));
}

TEST(NomadDevicePreemption, ModelWithLowerPriorityHolderWins) {
  Outcome later = TwoModels(30, 20);  // the winning model is listed second
  ASSERT_EQ(later.plan.placements.size(), 1u);
  EXPECT_EQ(later.Victims(), Ids{"on2080"});
  Outcome first = TwoModels(20, 30);
  ASSERT_EQ(first.plan.placements.size(), 1u);
  EXPECT_EQ(first.Victims(), Ids{"on1080"});
}

TEST(NomadDevicePreemption, LowerSumOfDistinctPrioritiesWins) {
  // 1080ti is held by priorities 20 and 25 (one instance each: sum 45); 2080ti by one priority-40
  // alloc (sum 40). The ask needs two instances: the 2080ti option wins.
  const Json cluster = ClusterJson(
      {GpuNode({DeviceModel("nvidia", "gpu", "1080ti", 2, "a"), DeviceModel("nvidia", "gpu", "2080ti", 2, "b")})},
      {AllocJson(A{.id = "p20", .job = "j20", .prio = 20, .cpu = 100, .mem = 100, .devices = Json::array({DevUse("1080ti", {"a0"})})}),
       AllocJson(A{.id = "p25", .job = "j25", .prio = 25, .cpu = 100, .mem = 100, .devices = Json::array({DevUse("1080ti", {"a1"})})}),
       AllocJson(A{.id = "p40", .job = "j40", .prio = 40, .cpu = 100, .mem = 100,
                   .devices = Json::array({DevUse("2080ti", {"b0", "b1"})})})});
  Json dev{{"Name", "nvidia/gpu"}, {"Count", 2}};
  Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.cpu = 100, .mem = 100, .devices = Json::array({dev})}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims(), Ids{"p40"});
}

// ---------------------------------------------------------------------------------------------
// 11. Scheduler per job type (§1, §9).

// One node whose CPU is held by a priority-20 alloc.
Json FullNodeCluster(const Json& sched) {
  return ClusterJson({NodeJson("n1", 1000, 4096)},
                     {AllocJson(A{.id = "low", .job = "low", .prio = 20, .cpu = 1000, .mem = 100})}, sched);
}

TEST(NomadSchedulerTypes, ServiceWithPreemptionOffNeverPreempts) {
  for (const Json& sched : {Preemption(true, true, true, false), Json()}) {  // explicit off; absent = default off
    Outcome r = Plan(FullNodeCluster(sched), JobJson("hi", "service", 90, {G{.cpu = 500, .mem = 100}}));
    EXPECT_TRUE(r.plan.placements.empty()) << sched.dump();
    EXPECT_TRUE(r.plan.preempted.empty()) << sched.dump();
    const Json out = Json::parse(r.Rendered());
    EXPECT_TRUE(out["FailedTGAllocs"].contains("web")) << out.dump();
    EXPECT_TRUE(out["Annotations"]["PreemptedAllocs"].empty());
  }
}

TEST(NomadSchedulerTypes, BatchFollowsBatchSchedulerEnabled) {
  const Json job = JobJson("hi", "batch", 90, {G{.cpu = 500, .mem = 100}});
  for (const Json& sched : {Preemption(true, true, false, true), Json()}) {
    Outcome off = Plan(FullNodeCluster(sched), job);
    EXPECT_TRUE(off.plan.placements.empty()) << sched.dump();
    EXPECT_TRUE(off.plan.preempted.empty()) << sched.dump();
    EXPECT_EQ(off.plan.failed.count("web"), 1u) << sched.dump();
  }
  Outcome on = Plan(FullNodeCluster(Preemption(false, false, true, false)), job);
  ASSERT_EQ(on.plan.placements.size(), 1u);
  EXPECT_EQ(on.Victims(), Ids{"low"});
}

TEST(NomadSchedulerTypes, ServiceWithPreemptionOnPreempts) {
  Outcome on = Plan(FullNodeCluster(Preemption(false, false, false, true)),
                JobJson("hi", "service", 90, {G{.cpu = 500, .mem = 100}}));
  ASSERT_EQ(on.plan.placements.size(), 1u);
  EXPECT_EQ(on.Victims(), Ids{"low"});
}

TEST(NomadSchedulerTypes, GenericSchedulersPreferANodeThatFitsWithoutPreemption) {
  // n-full is full of a priority-20 alloc; n-free is empty but smaller (bin-packing would not favour
  // it over an evicted n-full). With preemption on, service and batch still never preempt here.
  const Json cluster = ClusterJson(
      {NodeJson("n-full", 4000, 8192), NodeJson("n-free", 1000, 2048)},
      {AllocJson(A{.id = "low", .job = "low", .prio = 20, .node = "n-full", .cpu = 4000, .mem = 8000})});
  for (const std::string type : {"service", "batch"}) {
    for (uint64_t seed = 0; seed < 6; ++seed) {
      PlannerOptions opts;
      opts.seed = seed;
      Outcome r = Plan(cluster, JobJson("hi", type, 90, {G{.cpu = 500, .mem = 500}}), opts);
      ASSERT_EQ(r.plan.placements.size(), 1u) << type << " seed " << seed;
      EXPECT_EQ(r.plan.placements[0].node_id, "n-free") << type << " seed " << seed;
      EXPECT_TRUE(r.plan.preempted.empty()) << type << " seed " << seed;
    }
  }
}

// n-free: room; n-full: a priority-20 alloc fills it; n-off: same but not eligible for scheduling;
// n-high: filled by a priority-75 alloc (ineligible for 80); n-has: already runs the system job.
Json SystemCluster(const Json& sched) {
  Json off = NodeJson("n-off", 1000, 1000);
  off["SchedulingEligibility"] = "ineligible";
  return ClusterJson(
      {NodeJson("n-free", 2000, 2000), NodeJson("n-full", 1000, 1000), off, NodeJson("n-high", 1000, 1000),
       NodeJson("n-has", 1000, 1000)},
      {AllocJson(A{.id = "full-low", .job = "low", .prio = 20, .node = "n-full", .cpu = 1000, .mem = 1000}),
       AllocJson(A{.id = "off-low", .job = "low", .prio = 20, .node = "n-off", .cpu = 1000, .mem = 1000,
                   .name = "low.web[1]"}),
       AllocJson(A{.id = "high", .job = "high", .prio = 75, .node = "n-high", .cpu = 1000, .mem = 1000}),
       AllocJson(A{.id = "sys-existing", .job = "sys", .prio = 80, .node = "n-has", .cpu = 500, .mem = 500,
                   .tg = "agent", .type = "system"})},
      sched);
}

TEST(NomadSchedulerTypes, SystemJobPreemptsWherePreemptionIsTheDefault) {
  const Json job = JobJson("sys", "system", 80, {G{.name = "agent", .cpu = 500, .mem = 500}});
  // No SchedulerConfig; one without PreemptionConfig; one whose PreemptionConfig omits the system
  // key; system explicitly on.
  const Json no_preemption_config{{"SchedulerAlgorithm", "binpack"}};
  const Json service_only{{"PreemptionConfig", {{"ServiceSchedulerEnabled", true}}}};
  for (const Json& sched : {Json(), no_preemption_config, service_only, Preemption(true, false, false, false)}) {
    Outcome r = Plan(SystemCluster(sched), job);
    EXPECT_EQ(r.PlacedNodeSet(), (Ids{"n-free", "n-full"})) << sched.dump();
    EXPECT_EQ(r.plan.placements.size(), 2u) << sched.dump();
    EXPECT_EQ(r.Victims(), Ids{"full-low"}) << sched.dump();
    ASSERT_EQ(r.plan.failed.count("agent"), 1u) << sched.dump();
    EXPECT_EQ(r.plan.failed.at("agent").nodes_exhausted, 1);  // n-high
    EXPECT_EQ(r.plan.failed.at("agent").nodes_filtered, 0);   // n-off is not in the node set at all
    EXPECT_EQ(r.plan.desired_updates.at("agent").ignore, 1);  // n-has
    EXPECT_EQ(r.plan.desired_updates.at("agent").place, 3);   // wanted: two placed, one failed
  }
}

TEST(NomadSchedulerTypes, SystemJobWithPreemptionOffDoesNotPreempt) {
  Outcome r = Plan(SystemCluster(Preemption(false, true, true, true)),
               JobJson("sys", "system", 80, {G{.name = "agent", .cpu = 500, .mem = 500}}));
  EXPECT_EQ(r.PlacedNodeSet(), Ids{"n-free"});
  EXPECT_TRUE(r.plan.preempted.empty());
  ASSERT_EQ(r.plan.failed.count("agent"), 1u);
  EXPECT_EQ(r.plan.failed.at("agent").nodes_exhausted, 2);  // n-full and n-high
}

TEST(NomadSchedulerTypes, SysbatchDefaultsToNoPreemption) {
  const Json job = JobJson("sys", "sysbatch", 80, {G{.name = "agent", .cpu = 500, .mem = 500}});
  Outcome def = Plan(SystemCluster(Json()), job);
  EXPECT_EQ(def.PlacedNodeSet(), Ids{"n-free"});
  EXPECT_TRUE(def.plan.preempted.empty());

  Outcome on = Plan(SystemCluster(Preemption(false, true, false, false)), job);
  EXPECT_EQ(on.PlacedNodeSet(), (Ids{"n-free", "n-full"}));
  EXPECT_EQ(on.Victims(), Ids{"full-low"});
}

// ---------------------------------------------------------------------------------------------
// 12. A job never preempts its own allocations (§2).

TEST(NomadOwnAllocs, ExistingAllocCountsAndIsNeverAVictim) {
  // "x" already runs x.web[0] (recorded at priority 20, as an older version might be) on n1.
  // Count 3 -> Place 2, Ignore 1. The first new alloc needs room: only "low" may go.
  const Json cluster = ClusterJson(
      {NodeJson("n1", 3000, 4096)},
      {AllocJson(A{.id = "x-old", .job = "x", .prio = 20, .cpu = 1000, .mem = 100}),
       AllocJson(A{.id = "low", .job = "low", .prio = 20, .cpu = 2000, .mem = 100})});
  Outcome r = Plan(cluster, JobJson("x", "service", 70, {G{.count = 3, .cpu = 1000, .mem = 100}}));
  EXPECT_EQ(r.plan.desired_updates.at("web").place, 2);
  EXPECT_EQ(r.plan.desired_updates.at("web").ignore, 1);
  EXPECT_EQ(r.Victims(), Ids{"low"});
  EXPECT_TRUE(r.plan.failed.empty());
  std::set<int64_t> indexes;
  for (const auto& p : r.plan.placements) indexes.insert(p.index);
  EXPECT_EQ(indexes, (std::set<int64_t>{1, 2}));  // web[0] is taken by the existing alloc
}

TEST(NomadOwnAllocs, OwnAllocsNotEvictedEvenWhenThatIsTheOnlyWay) {
  // 2000 CPU: x-old 1000 + low 1000. Count 3: the first new alloc evicts "low"; the second could
  // only fit by evicting x's own allocs, so it fails.
  const Json cluster = ClusterJson(
      {NodeJson("n1", 2000, 4096)},
      {AllocJson(A{.id = "x-old", .job = "x", .prio = 20, .cpu = 1000, .mem = 100}),
       AllocJson(A{.id = "low", .job = "low", .prio = 20, .cpu = 1000, .mem = 100})});
  Outcome r = Plan(cluster, JobJson("x", "service", 70, {G{.count = 3, .cpu = 1000, .mem = 100}}));
  EXPECT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims(), Ids{"low"});
  EXPECT_EQ(r.plan.desired_updates.at("web").ignore, 1);
  ASSERT_EQ(r.plan.failed.count("web"), 1u);
  EXPECT_EQ(r.plan.failed.at("web").coalesced_failures, 0);  // one allocation failed
}

// The preemptor's own-allocation quirk, printed as `nomad job plan` prints it. The preemptor
// counts as available the node's capacity less the candidates only, not less the placing job's
// own allocations; here it believes 2700 of 4000 CPU are free for a 1000 ask, takes the one
// allocation its greedy loop always takes, and stops. Job.Plan's in-memory planner accepts
// the placement with that one victim (the node would still lack CPU); a real submission's plan
// applier would refuse it.
Json OwnAllocationQuirkCluster() {
  return ClusterJson({NodeJson("n1", 4000, 8192)},
                     {AllocJson(A{.id = "etl-0", .job = "etl", .prio = 60, .cpu = 2700, .mem = 100}),
                      AllocJson(A{.id = "cache", .job = "cache", .prio = 20, .cpu = 600, .mem = 100}),
                      AllocJson(A{.id = "report", .job = "report", .prio = 20, .cpu = 700, .mem = 100})});
}

TEST(NomadOwnAllocs, TheOwnAllocationQuirkIsShownAsNomadJobPlanShowsIt) {
  Outcome r = Plan(OwnAllocationQuirkCluster(), JobJson("etl", "service", 60, {G{.count = 2, .cpu = 1000, .mem = 100}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_TRUE(r.plan.failed.empty());
  EXPECT_EQ(r.plan.placements[0].node_id, "n1");
  EXPECT_EQ(r.plan.placements[0].preempted.size(), 1u);  // too few: one more would be needed
  EXPECT_EQ(r.plan.placements[0].overflow, "cpu");
  EXPECT_EQ(r.plan.desired_updates.at("web").preemptions, 1);
  const Json out = Json::parse(RenderJson(r.in->job, r.plan));
  EXPECT_EQ(out["Annotations"]["PreemptedAllocs"].size(), 1u);
  EXPECT_EQ(out["Placements"][0]["PlanApplierWouldRefuse"], "cpu");
  const auto notes = ApplierNotes(r.plan);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("placement web[1] on node n1: once its 1 preempted allocation leave, the node still lacks cpu"),
            std::string::npos)
      << notes[0];
}

TEST(NomadOwnAllocs, WithThePlanApplierTheOverflowingNodeIsRefused) {
  PlannerOptions o;
  o.plan_applier = true;
  Outcome r = Plan(OwnAllocationQuirkCluster(), JobJson("etl", "service", 60, {G{.count = 2, .cpu = 1000, .mem = 100}}), o);
  EXPECT_TRUE(r.plan.placements.empty());
  EXPECT_TRUE(r.plan.preempted.empty());
  ASSERT_EQ(r.plan.failed.count("web"), 1u);
  EXPECT_EQ(r.plan.failed.at("web").nodes_exhausted, 1);
  EXPECT_TRUE(ApplierNotes(r.plan).empty());
}

// ---------------------------------------------------------------------------------------------
// 13. Visibility (§10, §11).

TEST(NomadVisibility, RenderJsonAnnotatesEveryVictim) {
  // n1 holds two priority-20 allocs that must both go; n2 one. Count 2 -> three victims over two
  // placements.
  const Json cluster = ClusterJson(
      {NodeJson("n1", 1000, 1000), NodeJson("n2", 1000, 1000)},
      {AllocJson(A{.id = "n1-a", .job = "low", .prio = 20, .node = "n1", .cpu = 500, .mem = 500}),
       AllocJson(A{.id = "n1-b", .job = "low", .prio = 20, .node = "n1", .cpu = 500, .mem = 500, .name = "low.web[1]"}),
       AllocJson(A{.id = "n2-a", .job = "other", .prio = 30, .node = "n2", .cpu = 1000, .mem = 1000,
                   .type = "batch"})});
  Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.count = 2, .cpu = 1000, .mem = 1000}}));
  ASSERT_EQ(r.plan.placements.size(), 2u);
  const Json out = Json::parse(r.Rendered());

  std::map<std::string, std::string> placed_by;  // victim -> AllocID of its placement
  std::set<std::string> alloc_ids;
  for (const auto& p : out["Placements"]) {
    const std::string id = p["AllocID"].get<std::string>();
    EXPECT_FALSE(id.empty());
    alloc_ids.insert(id);
    for (const auto& v : p["PreemptedAllocations"]) placed_by[v.get<std::string>()] = id;
  }
  EXPECT_EQ(alloc_ids.size(), 2u);
  EXPECT_EQ(placed_by.size(), 3u);

  const Json& preempted = out["Annotations"]["PreemptedAllocs"];
  ASSERT_EQ(preempted.size(), 3u);
  Ids seen;
  for (const auto& v : preempted) {
    const std::string id = v["ID"].get<std::string>();
    seen.insert(id);
    ASSERT_EQ(placed_by.count(id), 1u) << id;
    EXPECT_EQ(v["DesiredStatus"], "evict");
    EXPECT_EQ(v["DesiredDescription"], "Preempted by alloc ID " + placed_by[id]);
    EXPECT_EQ(v["PreemptedByAllocation"], placed_by[id]);
  }
  EXPECT_EQ(seen, (Ids{"n1-a", "n1-b", "n2-a"}));
  // The two victims on n1 go together, to the placement on n1.
  EXPECT_EQ(placed_by["n1-a"], placed_by["n1-b"]);
  EXPECT_NE(placed_by["n1-a"], placed_by["n2-a"]);
  EXPECT_EQ(out["Annotations"]["DesiredTGUpdates"]["web"]["Preemptions"], 3);
  EXPECT_EQ(out["Annotations"]["DesiredTGUpdates"]["web"]["Place"], 2);
  EXPECT_EQ(ExitCode(r.plan), 1);
}

TEST(NomadVisibility, ExitCodeZeroWhenCountAlreadyMet) {
  const Json cluster = ClusterJson(
      {NodeJson("n1", 1000, 1000)},
      {AllocJson(A{.id = "hi-0", .job = "hi", .prio = 70, .cpu = 500, .mem = 500}),
       AllocJson(A{.id = "low", .job = "low", .prio = 20, .cpu = 500, .mem = 500})});
  Outcome r = Plan(cluster, JobJson("hi", "service", 70, {G{.count = 1, .cpu = 500, .mem = 500}}));
  EXPECT_TRUE(r.plan.placements.empty());
  EXPECT_TRUE(r.plan.preempted.empty());
  EXPECT_TRUE(r.plan.failed.empty());
  EXPECT_EQ(r.plan.desired_updates.at("web").ignore, 1);
  EXPECT_EQ(r.plan.desired_updates.at("web").place, 0);
  EXPECT_EQ(ExitCode(r.plan), 0);
}

TEST(NomadVisibility, ExitCodeOneWhenPlacedWithoutPreemption) {
  Outcome r = Plan(ClusterJson({NodeJson("n1", 1000, 1000)}, {}),
               JobJson("hi", "service", 70, {G{.count = 1, .cpu = 500, .mem = 500}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(ExitCode(r.plan), 1);
}

// ---------------------------------------------------------------------------------------------
// 14. Input errors.

const Json kGoodCluster = ClusterJson({NodeJson("n1", 1000, 1000)},
                                      {AllocJson(A{.id = "a1", .job = "low", .prio = 20, .cpu = 100, .mem = 100})});
const Json kGoodJob = JobJson("hi", "service", 70, {G{}});

// True when some error line contains every one of `parts`.
::testing::AssertionResult HasError(const std::vector<std::string>& errors, const std::vector<std::string>& parts) {
  for (const auto& e : errors) {
    bool all = true;
    for (const auto& p : parts) all = all && e.find(p) != std::string::npos;
    if (all) return ::testing::AssertionSuccess();
  }
  std::string want;
  for (const auto& p : parts) want += "[" + p + "] ";
  return ::testing::AssertionFailure() << "no error line with " << want << "in:\n" << JoinErrors(errors);
}

TEST(NomadInputErrors, GoodInputLoads) {
  NomadInput in = LoadNomad("cluster.json", kGoodCluster.dump(), "job.json", kGoodJob.dump());
  EXPECT_TRUE(in.ok()) << JoinErrors(in.errors);
  ASSERT_EQ(in.cluster.nodes.size(), 1u);
  EXPECT_EQ(in.cluster.nodes[0].capacity.cpu, 1000);
  ASSERT_EQ(in.cluster.allocs.size(), 1u);
  EXPECT_EQ(in.cluster.allocs[0].job_priority, 20);
}

TEST(NomadInputErrors, NegativeCpuShares) {
  Json c = kGoodCluster;
  c["Nodes"][0]["NodeResources"]["Cpu"]["CpuShares"] = -5;
  NomadInput in = LoadNomad("prod-cluster.json", c.dump(), "job.json", kGoodJob.dump());
  EXPECT_FALSE(in.ok());
  EXPECT_TRUE(HasError(in.errors, {"prod-cluster.json", "Nodes[0]", "NodeResources.Cpu.CpuShares"}));
}

TEST(NomadInputErrors, NonIntegerCpuShares) {
  for (const Json& bad : {Json(1500.5), Json("1500")}) {
    Json c = kGoodCluster;
    c["Nodes"][0]["NodeResources"]["Cpu"]["CpuShares"] = bad;
    NomadInput in = LoadNomad("cluster.json", c.dump(), "job.json", kGoodJob.dump());
    EXPECT_FALSE(in.ok()) << bad.dump();
    EXPECT_TRUE(HasError(in.errors, {"cluster.json", "Nodes[0]", "NodeResources.Cpu.CpuShares"})) << bad.dump();
  }
}

TEST(NomadInputErrors, AllocationOnUnknownNode) {
  Json c = kGoodCluster;
  c["Allocations"][0]["NodeID"] = "ghost";
  NomadInput in = LoadNomad("cluster.json", c.dump(), "job.json", kGoodJob.dump());
  EXPECT_FALSE(in.ok());
  EXPECT_TRUE(HasError(in.errors, {"cluster.json", "Allocations[0]", "NodeID", "ghost"}));
}

TEST(NomadInputErrors, UnknownJobType) {
  Json j = kGoodJob;
  j["Job"]["Type"] = "daemon";
  NomadInput in = LoadNomad("cluster.json", kGoodCluster.dump(), "web-job.json", j.dump());
  EXPECT_FALSE(in.ok());
  EXPECT_TRUE(HasError(in.errors, {"web-job.json", "Type", "daemon"}));
}

TEST(NomadInputErrors, NumberBeyondDoubleIsAnInputErrorNotACrash) {
  NomadInput bad_cluster = LoadNomad("cluster.json", "[1e400]", "job.json", kGoodJob.dump());
  EXPECT_FALSE(bad_cluster.ok());
  EXPECT_TRUE(HasError(bad_cluster.errors, {"cluster.json", "not valid JSON", "1e400"}));
  NomadInput bad_job = LoadNomad("cluster.json", kGoodCluster.dump(), "job.json", R"({"Job": {"ID": "j", "Priority": 1e400}})");
  EXPECT_FALSE(bad_job.ok());
  EXPECT_TRUE(HasError(bad_job.errors, {"job.json", "not valid JSON"}));
}

TEST(NomadInputErrors, AnObjectGivenAsAnotherTypeIsReportedNotDefaulted) {
  // "Resources": "big" used to read as absent, giving the task Nomad's default 100 MHz.
  Json j = kGoodJob;
  j["Job"]["TaskGroups"][0]["Tasks"][0]["Resources"] = "big";
  NomadInput in = LoadNomad("cluster.json", kGoodCluster.dump(), "job.json", j.dump());
  EXPECT_FALSE(in.ok());
  EXPECT_TRUE(HasError(in.errors, {"job.json", "TaskGroups[0]", "Resources: must be an object, not \"big\""}));
  EXPECT_EQ(in.errors.size(), 1u) << JoinErrors(in.errors);  // once, not once per field read below it

  Json c = kGoodCluster;
  c["Nodes"][0]["NodeResources"]["Networks"] = Json::array({5});
  c["Allocations"][0]["AllocatedResources"]["Tasks"] = Json::array();
  in = LoadNomad("cluster.json", c.dump(), "job.json", kGoodJob.dump());
  EXPECT_TRUE(HasError(in.errors, {"Nodes[0]", "NodeResources.Networks[0]: must be an object, not 5"}));
  EXPECT_TRUE(HasError(in.errors, {"Allocations[0]", "AllocatedResources.Tasks: must be an object"}));

  c = kGoodCluster;
  c["Nodes"].push_back("node-2");
  in = LoadNomad("cluster.json", c.dump(), "job.json", kGoodJob.dump());
  EXPECT_TRUE(HasError(in.errors, {"cluster.json: Nodes[1]", "must be an object, not \"node-2\""}));
}

TEST(NomadInputErrors, AllocationStatusesMustBeNomadsValues) {
  Json c = kGoodCluster;
  c["Allocations"][0]["DesiredStatus"] = "banana";
  c["Allocations"][0]["ClientStatus"] = "sleeping";
  NomadInput in = LoadNomad("cluster.json", c.dump(), "job.json", kGoodJob.dump());
  EXPECT_FALSE(in.ok());
  EXPECT_TRUE(HasError(in.errors, {"Allocations[0] (a1)", "DesiredStatus: must be run, stop or evict, not \"banana\""}));
  EXPECT_TRUE(HasError(in.errors, {"Allocations[0] (a1)", "ClientStatus: must be pending, running", "\"sleeping\""}));
  c = kGoodCluster;
  c["Allocations"][0]["Job"]["Type"] = "daemon";
  in = LoadNomad("cluster.json", c.dump(), "job.json", kGoodJob.dump());
  EXPECT_TRUE(HasError(in.errors, {"Allocations[0] (a1)", "Job.Type", "daemon"}));
}

TEST(NomadInputErrors, AllocationWithoutItsJobIsAnInputError) {
  // What `GET /v1/allocations` lists (stubs without the job) cannot say which priority it has.
  Json c = kGoodCluster;
  c["Allocations"][0].erase("Job");
  NomadInput in = LoadNomad("cluster.json", c.dump(), "job.json", kGoodJob.dump());
  EXPECT_FALSE(in.ok());
  EXPECT_TRUE(HasError(in.errors, {"Allocations[0] (a1)", "Job: is required", "GET /v1/allocation/:id"}));
}

TEST(NomadInputErrors, MalformedJson) {
  NomadInput bad_cluster = LoadNomad("cluster.json", "{\"Nodes\": [", "job.json", kGoodJob.dump());
  EXPECT_FALSE(bad_cluster.ok());
  EXPECT_TRUE(HasError(bad_cluster.errors, {"cluster.json", "JSON"}));
  NomadInput bad_job = LoadNomad("cluster.json", kGoodCluster.dump(), "job.json", "{\"Job\": {\"ID\": }");
  EXPECT_FALSE(bad_job.ok());
  EXPECT_TRUE(HasError(bad_job.errors, {"job.json", "JSON"}));
  for (const auto& e : bad_job.errors) EXPECT_EQ(e.find("cluster.json"), std::string::npos) << e;
}

// ---------------------------------------------------------------------------------------------
// 15. The reference's worked checks (§13).

TEST(NomadWorkedChecks, DocsExample) {
  // cache 70 (a6), batch-analytics 50 (a4, a5), email-marketing 20 (a1, a2); no free capacity.
  // webapp (75) needs 2 GB memory and 1 GB disk. 0.8 GB = 819 MB, 0.2 GB = 205 MB.
  const Resources ask{0, 2048, 1024};
  EXPECT_NEAR(ResourceDistance(ask, {0, 512, 819}), 0.78, 0.01);
  EXPECT_NEAR(ResourceDistance(ask, {0, 512, 205}), 1.10, 0.01);
  EXPECT_NEAR(ResourceDistance(ask, {500, 1024, 512}), 0.71, 0.01);
  const Json cluster = ClusterJson(
      {NodeJson("n1", 2000, 5120, 2560)},
      {AllocJson(A{.id = "a6", .job = "cache", .prio = 70, .cpu = 1000, .mem = 2048, .disk = 512}),
       AllocJson(A{.id = "a4", .job = "batch-analytics", .prio = 50, .cpu = 500, .mem = 1024, .disk = 512,
                   .type = "batch", .name = "batch-analytics.web[0]"}),
       AllocJson(A{.id = "a5", .job = "batch-analytics", .prio = 50, .cpu = 500, .mem = 1024, .disk = 512,
                   .type = "batch", .name = "batch-analytics.web[1]"}),
       AllocJson(A{.id = "a1", .job = "email-marketing", .prio = 20, .cpu = 0, .mem = 512, .disk = 819,
                   .type = "batch", .name = "email-marketing.web[0]"}),
       AllocJson(A{.id = "a2", .job = "email-marketing", .prio = 20, .cpu = 0, .mem = 512, .disk = 205,
                   .type = "batch", .name = "email-marketing.web[1]"})});
  Outcome r = Plan(cluster, JobJson("webapp", "service", 75, {G{.cpu = 0, .mem = 2048, .disk = 1024}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  const Ids v = r.Victims();
  EXPECT_EQ(v.size(), 3u);
  EXPECT_TRUE(v.count("a1"));
  EXPECT_TRUE(v.count("a2"));
  EXPECT_EQ(v.count("a4") + v.count("a5"), 1u);  // a tie: either may stand in
  EXPECT_FALSE(v.count("a6"));
}

TEST(NomadWorkedChecks, ServiceSchedPreemption) {
  // Usable 950 CPU / 1792 MB (node 1000/2048 less 50/256 reserved). job1 (30; 500/1024) and
  // job2 (50; 350/512); the priority-100 job asks 900/1700. The priority-30 bucket alone gives
  // 600 CPU; both are needed.
  const Resources ask{900, 1700, 150};
  EXPECT_NEAR(ResourceDistance(ask, {350, 512, 150}), 0.93, 0.01);
  EXPECT_NEAR(ResourceDistance(ask, {500, 1024, 150}), 0.60, 0.01);
  Json node = NodeJson("small", 1000, 2048, 102400);
  node["ReservedResources"]["Cpu"]["CpuShares"] = 50;
  node["ReservedResources"]["Memory"]["MemoryMB"] = 256;
  node["ReservedResources"]["Disk"]["DiskMB"] = 4096;
  const Json cluster = ClusterJson(
      {node}, {AllocJson(A{.id = "job1-alloc", .job = "job1", .prio = 30, .node = "small", .cpu = 500, .mem = 1024,
                           .disk = 150}),
               AllocJson(A{.id = "job2-alloc", .job = "job2", .prio = 50, .node = "small", .cpu = 350, .mem = 512,
                           .disk = 150})},
      Preemption(true, false, false, true));
  Outcome r = Plan(cluster, JobJson("job3", "service", 100, {G{.cpu = 900, .mem = 1700, .disk = 150}}));
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.plan.placements[0].node_id, "small");
  EXPECT_EQ(r.Victims(), (Ids{"job1-alloc", "job2-alloc"}));
  EXPECT_EQ(r.plan.desired_updates.at("web").preemptions, 2);
}

// ---------------------------------------------------------------------------------------------
// 16. Determinism.

TEST(NomadDeterminism, SameInputAndSeedGiveSameJson) {
  for (uint64_t seed : {0u, 7u, 12345u}) {
    PlannerOptions opts;
    opts.seed = seed;
    const Json job = JobJson("x", "service", 80, {G{.count = 2, .cpu = 1000, .mem = 500}});
    Outcome a = Plan(PenaltyCluster(1), job, opts);
    Outcome b = Plan(PenaltyCluster(1), job, opts);
    ASSERT_FALSE(a.plan.preempted.empty());
    EXPECT_EQ(a.Rendered(), b.Rendered()) << "seed " << seed;
    EXPECT_EQ(RenderTable(a.in->job, a.plan), RenderTable(b.in->job, b.plan)) << "seed " << seed;
  }
}


// ---------------------------------------------------------------------------------------------
// Details a review of the planner settled.

TEST(NomadNetwork, BandwidthAnEarlierTaskTookCountsWhenPreemptingForTheNext) {
  // eth0 has 1000 Mbit; two priority-20 allocations hold 300 each. The job's two tasks ask 300
  // each: the first fits (900 used); for the second only 100 is left, so one holder must go.
  const Json cluster = ClusterJson({NodeJson("n1", 8000, 16000)},
                                   {AllocJson(A{.id = "bw-1", .job = "low1", .prio = 20, .cpu = 100, .mem = 100,
                                                .networks = Json::array({Net(300)})}),
                                    AllocJson(A{.id = "bw-2", .job = "low2", .prio = 20, .cpu = 100, .mem = 100,
                                                .networks = Json::array({Net(300)})})});
  Json job = JobJson("two", "service", 50, {G{.name = "web", .networks = Json::array({Net(300)})}});
  Json& tasks = job["Job"]["TaskGroups"][0]["Tasks"];
  tasks.push_back(tasks[0]);
  tasks[1]["Name"] = "sidecar";
  Outcome r = Plan(cluster, job);
  ASSERT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.Victims().size(), 1u);
}

TEST(NomadPlanShape, PlaceCountsWhatWasWantedIncludingFailures) {
  // Count 3, room for one, preemption off: Place 3, one placement, two failures (one coalesced).
  const Json cluster = ClusterJson({NodeJson("n1", 1000, 1000)}, {}, Preemption(true, false, false, false));
  Outcome r = Plan(cluster, JobJson("web", "service", 50, {G{.count = 3, .cpu = 600, .mem = 100}}));
  EXPECT_EQ(r.plan.placements.size(), 1u);
  EXPECT_EQ(r.plan.desired_updates.at("web").place, 3);
  ASSERT_EQ(r.plan.failed.count("web"), 1u);
  EXPECT_EQ(r.plan.failed.at("web").coalesced_failures, 1);
}

TEST(NomadInput, TaskGroupWithoutEphemeralDiskAsksNomadsDefault300Mb) {
  Json job = JobJson("web", "service", 50, {G{}});
  job["Job"]["TaskGroups"][0].erase("EphemeralDisk");
  Outcome tight = Plan(ClusterJson({NodeJson("n1", 4000, 4000, /*disk=*/200)}, {}), job);
  ASSERT_EQ(tight.plan.failed.count("web"), 1u);
  EXPECT_EQ(tight.plan.failed.at("web").dimension_exhausted.count("disk"), 1u);
  Outcome roomy = Plan(ClusterJson({NodeJson("n1", 4000, 4000, /*disk=*/400)}, {}), job);
  EXPECT_EQ(roomy.plan.placements.size(), 1u);
}

TEST(NomadInput, DuplicateTaskGroupNamesAreRejected) {
  Json job = JobJson("web", "service", 50, {G{.name = "web"}, G{.name = "web"}});
  NomadInput in = LoadNomad("cluster.json", ClusterJson({NodeJson("n1", 4000, 4000)}, {}).dump(), "job.json", job.dump());
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.errors[0].find("TaskGroups[1] (web): Name: another task group"), std::string::npos) << in.errors[0];
}

}  // namespace
}  // namespace arbiter::nomad
