// Scenario tests for gang scheduling (PodGroup, CompositePodGroup) and workload-aware preemption
// (WAP), run through the whole `arbiter plan` pipeline (load, admission, simulation) on inline
// YAML. The rules are upstream's (docs/upstream-rules.md Part B §3-§7).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arbiter/sim/plan_simulation.h"
#include "testing/manifest_builders.h"
#include "testing/plan_harness.h"

namespace arbiter::sim {
namespace {

using arbiter::testing::Config;
using arbiter::testing::LoadErrors;
using arbiter::testing::NodeY;
using arbiter::testing::Plan;
using arbiter::testing::PodOf;
using arbiter::testing::PodY;

// ---- YAML for the Workload API objects -------------------------------------------------------

std::string PriorityClass(const std::string& name, int value, const std::string& policy = "") {
  std::string s = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " + name +
                  "}\nvalue: " + std::to_string(value) + "\n";
  if (!policy.empty()) s += "preemptionPolicy: " + policy + "\n";
  return s;
}

// The classes every scenario uses: low 10 < mid 50 < high 100 < keep 500.
std::string Classes() {
  return PriorityClass("low", 10) + PriorityClass("mid", 50) + PriorityClass("high", 100) + PriorityClass("keep", 500);
}

// `policy` is the schedulingPolicy flow map body, e.g. "gang: {minCount: 3}" or "basic: {}";
// `mode` is single or all. A `parent` needs a workloadRef, which is then written too.
std::string PodGroup(const std::string& name, const std::string& policy, const std::string& mode,
                     const std::string& priority_class, const std::string& parent = "") {
  std::string s = "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: " + name +
                  ", namespace: default}\nspec:\n  schedulingPolicy: {" + policy + "}\n  disruptionMode: {" + mode +
                  ": {}}\n  priorityClassName: " + priority_class + "\n";
  if (!parent.empty()) {
    s += "  parentCompositePodGroupName: " + parent + "\n  workloadRef: {workloadName: job, templateName: " + name +
         "}\n";
  }
  return s;
}

std::string Gang(const std::string& name, int min_count, const std::string& priority_class,
                 const std::string& mode = "single", const std::string& parent = "") {
  return PodGroup(name, "gang: {minCount: " + std::to_string(min_count) + "}", mode, priority_class, parent);
}

// `policy` as for PodGroup, with minGroupCount for a gang.
std::string Composite(const std::string& name, const std::string& policy, const std::string& mode,
                      const std::string& priority_class, const std::string& parent = "") {
  std::string s = "---\napiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {name: " + name +
                  ", namespace: default}\nspec:\n  workloadRef: {workloadName: job, templateName: " + name +
                  "}\n  schedulingPolicy: {" + policy + "}\n  disruptionMode: {" + mode +
                  ": {}}\n  priorityClassName: " + priority_class + "\n";
  if (!parent.empty()) s += "  parentCompositePodGroupName: " + parent + "\n";
  return s;
}

// A pod of `group` (empty: a lone pod) with class `pc` requesting `cpu`.
PodY Member(const std::string& name, const std::string& group, const std::string& pc, const std::string& cpu) {
  PodY p(name);
  p.PriorityClass(pc).Cpu(cpu);
  if (!group.empty()) p.Spec("  schedulingGroup: {podGroupName: " + group + "}\n");
  return p;
}

// A pending member.
std::string Pending(const std::string& name, const std::string& group, const std::string& pc, const std::string& cpu) {
  return Member(name, group, pc, cpu).Y();
}

// A member running on `node` since second `second` of 2026-01-01.
std::string Running(const std::string& name, const std::string& group, const std::string& pc, const std::string& cpu,
                    const std::string& node, int second) {
  char t[64];
  std::snprintf(t, sizeof t, "  startTime: '2026-01-01T00:%02d:%02dZ'\n", second / 60, second % 60);
  return Member(name, group, pc, cpu).On(node).Status(t).Y();
}

std::string NodeWithCpu(const std::string& name, const std::string& cpu = "4") { return NodeY(name).Cpu(cpu).Y(); }

// ---- Result helpers -------------------------------------------------------------------------

std::set<std::string> AllVictims(const PlanResult& r) {
  std::set<std::string> s;
  for (const auto& p : r.preemptions) {
    for (const auto& v : p.victims) s.insert(v.name);
  }
  return s;
}

const Victim* FindVictim(const PlanResult& r, const std::string& name) {
  for (const auto& p : r.preemptions) {
    for (const auto& v : p.victims) {
      if (v.name == name) return &v;
    }
  }
  return nullptr;
}

const GroupPlan* FindGroup(const PlanResult& r, const std::string& name) {
  for (const auto& g : r.groups) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

// Index of the first event with `reason` on pod `name` ("namespace/name"), or -1.
int EventIndex(const PlanResult& r, const std::string& reason, const std::string& name) {
  for (size_t i = 0; i < r.events.size(); ++i) {
    if (r.events[i].reason == reason && r.events[i].object == "Pod " + name) return static_cast<int>(i);
  }
  return -1;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

bool AnyContains(const std::vector<std::string>& lines, const std::string& a, const std::string& b = "") {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return Contains(l, a) && (b.empty() || Contains(l, b)); });
}

std::string Join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// ---- 1, 2: all or nothing -------------------------------------------------------------------

TEST(GangScheduling, NoMemberBindsWhenOnlyPartOfTheGangFits) {
  // Room for two 1-CPU pods; the gang needs all three.
  std::string yaml = Classes() + NodeWithCpu("n1", "2") + Gang("pg", 3, "high");
  for (const char* p : {"g-1", "g-2", "g-3"}) yaml += Pending(p, "pg", "high", "1");
  auto r = Plan(yaml);
  ASSERT_EQ(r.pods.size(), 3u);
  for (const auto& p : r.pods) {
    EXPECT_FALSE(p.scheduled) << p.name;
    EXPECT_EQ(p.node, "") << p.name;
    EXPECT_EQ(p.pod_group, "default/pg");
  }
  EXPECT_TRUE(r.preemptions.empty());
  const GroupPlan* g = FindGroup(r, "default/pg");
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->initially_scheduled);
}

TEST(GangScheduling, VictimsThatCannotMakeRoomForTheWholeGangAreNotEvicted) {
  // Each node: a priority-500 keeper (not a victim) and a priority-10 pod. Evicting both low
  // pods frees room for only two of the three gang members, so nothing is evicted.
  std::string yaml = Classes() + NodeWithCpu("n1", "2") + NodeWithCpu("n2", "2") + Gang("pg", 3, "high") +
                     Running("keep-1", "", "keep", "1", "n1", 1) + Running("low-1", "", "low", "1", "n1", 2) +
                     Running("keep-2", "", "keep", "1", "n2", 3) + Running("low-2", "", "low", "1", "n2", 4);
  for (const char* p : {"g-1", "g-2", "g-3"}) yaml += Pending(p, "pg", "high", "1");
  auto r = Plan(yaml);
  ASSERT_EQ(r.pods.size(), 3u);
  for (const auto& p : r.pods) {
    EXPECT_FALSE(p.scheduled) << p.name;
    EXPECT_FALSE(p.nominated_node.has_value()) << p.name;
  }
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_TRUE(AllVictims(r).empty());
}

TEST(GangScheduling, GangThatFitsBindsEveryMemberInItsFirstCycle) {
  std::string yaml = Classes() + NodeWithCpu("n1", "2") + NodeWithCpu("n2", "2") + Gang("pg", 3, "high");
  for (const char* p : {"g-1", "g-2", "g-3"}) yaml += Pending(p, "pg", "high", "1");
  auto r = Plan(yaml);
  ASSERT_EQ(r.pods.size(), 3u);
  for (const auto& p : r.pods) {
    EXPECT_TRUE(p.scheduled) << p.name << ": " << p.message;
    EXPECT_NE(p.node, "");
    EXPECT_EQ(p.attempts, r.pods[0].attempts) << "all members were bound by the same cycle";
    EXPECT_FALSE(p.nominated_node.has_value());
  }
  // Every Scheduled event happened at the same virtual time, before any FailedScheduling.
  int scheduled = 0;
  for (const auto& e : r.events) {
    EXPECT_NE(e.reason, "FailedScheduling") << e.object << ": " << e.message;
    if (e.reason == "Scheduled") {
      ++scheduled;
      EXPECT_EQ(e.time, r.start);
    }
  }
  EXPECT_EQ(scheduled, 3);
  EXPECT_TRUE(r.preemptions.empty());
  const GroupPlan* g = FindGroup(r, "default/pg");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->kind, "PodGroup");
  EXPECT_TRUE(g->initially_scheduled);
}

// ---- 3, 4: quorum ---------------------------------------------------------------------------

TEST(GangScheduling, MembersAlreadyRunningCountTowardMinCount) {
  // minCount 3: two members run, the third is pending and fits on its own.
  std::string yaml = Classes() + NodeWithCpu("n1", "4") + Gang("pg", 3, "high") +
                     Running("g-1", "pg", "high", "1", "n1", 1) + Running("g-2", "pg", "high", "1", "n1", 2) +
                     Pending("g-3", "pg", "high", "1");
  auto r = Plan(yaml);
  ASSERT_EQ(r.pods.size(), 1u);
  auto p = PodOf(r, "default/g-3");
  EXPECT_TRUE(p.scheduled) << p.message;
  EXPECT_EQ(p.node, "n1");
  EXPECT_TRUE(r.preemptions.empty());
}

TEST(GangScheduling, GroupBelowQuorumIsNeverTried) {
  // minCount 3 but only two pods exist: the group never enters a cycle, even with room to spare.
  std::string yaml = Classes() + NodeWithCpu("n1", "8") + Gang("pg", 3, "high") + Pending("g-1", "pg", "high", "1") +
                     Pending("g-2", "pg", "high", "1");
  auto r = Plan(yaml);
  ASSERT_EQ(r.pods.size(), 2u);
  for (const auto& p : r.pods) {
    EXPECT_FALSE(p.scheduled) << p.name;
    EXPECT_EQ(p.attempts, 0) << p.name;
    EXPECT_EQ(p.pod_group, "default/pg");
    EXPECT_TRUE(Contains(p.message, "waiting for")) << p.message;
    EXPECT_TRUE(Contains(p.message, "members")) << p.message;
  }
  EXPECT_EQ(FindGroup(r, "default/pg"), nullptr) << "the group had no cycle";
  for (const auto& e : r.events) EXPECT_NE(e.reason, "Scheduled") << e.object;
  EXPECT_TRUE(r.preemptions.empty());
}

TEST(GangScheduling, MembersTriedTogetherGoInNameOrderNextTime) {
  // Upstream orders a group's queued members by priority, attempts, queue timestamp, then name;
  // a failed cycle renews every member's timestamp, so the next cycle takes them by name, where
  // "t-10" sorts before "t-7". The gang (minCount 2, three members of 1.6 CPU, created t-7, t-8,
  // t-10) needs n0's low-priority pod gone: the first cycle, in creation order, preempts it and
  // nominates t-7 to n1 and t-8 to n0. The next, in name order, tries t-10 first (n1, the emptier
  // node), then t-7 (n1 is full now: n0), then t-8 (no room): the gang binds t-10 and t-7, and
  // t-8 waits, keeping its nomination (a member that does not fit is handed no nomination
  // change). Checked against kube-scheduler v1.37.2 (upstream/cmd/kube-reference).
  std::string yaml = Classes() + NodeWithCpu("n0", "2") + NodeWithCpu("n1", "3") + Gang("old", 3, "low") +
                     Running("o-1", "old", "low", "600m", "n0", 1);
  yaml += Gang("pg", 2, "high");
  int second = 7;
  for (const char* p : {"t-7", "t-8", "t-10"}) {
    char created[64];
    std::snprintf(created, sizeof created, "  creationTimestamp: '2026-01-01T00:00:%02dZ'\n", second++);
    yaml += Member(p, "pg", "high", "1600m").Metadata(created).Y();
  }
  auto r = Plan(yaml);
  EXPECT_EQ(AllVictims(r), std::set<std::string>{"default/o-1"});
  auto t7 = PodOf(r, "default/t-7"), t8 = PodOf(r, "default/t-8"), t10 = PodOf(r, "default/t-10");
  EXPECT_EQ(t10.node, "n1");
  EXPECT_EQ(t7.node, "n0");
  EXPECT_FALSE(t8.scheduled);
  EXPECT_EQ(t8.nominated_node.value_or(""), "n0");
}

TEST(GangScheduling, AFailedGangBacksOffAndIsRetriedOnItsOwnClockNotOnEvents) {
  // Upstream requeues a failed pod group naming no rejecting plugin, so it backs off (1, 2, 4,
  // 8, then 10 s) and is tried at each expiry, event or not; a pod rejected by a plugin waits
  // for an event. Here `big-1` binds and `big-2` preempts `victim` (30 s of grace). The gang
  // (three of 300m) fails while the room is reserved for `big-2`, and retries on its own clock.
  // When `victim` goes, `big-2` takes most of the room and the event moves `late` (300m) at
  // once, while the gang is in the middle of a 10 s backoff: `late` takes the rest and the gang
  // stays pending. Checked against kube-scheduler v1.37.2.
  std::string yaml = Classes() + NodeWithCpu("n0", "5") + Running("victim", "", "mid", "1400m", "n0", 2);
  yaml += Gang("trio", 3, "mid") + Gang("pair", 1, "high");
  int second = 3;
  auto created = [&second]() {
    char t[64];
    std::snprintf(t, sizeof t, "  creationTimestamp: '2026-01-01T00:00:%02dZ'\n", second++);
    return std::string(t);
  };
  for (const char* p : {"t-1", "t-2", "t-3"}) yaml += Member(p, "trio", "mid", "300m").Metadata(created()).Y();
  for (const char* p : {"big-1", "big-2"}) yaml += Member(p, "pair", "high", "2").Metadata(created()).Y();
  yaml += Member("late", "", "mid", "300m").Metadata(created()).Y();
  auto r = Plan(yaml);
  EXPECT_EQ(AllVictims(r), std::set<std::string>{"default/victim"});
  EXPECT_EQ(PodOf(r, "default/big-2").node, "n0");
  EXPECT_EQ(PodOf(r, "default/late").node, "n0");
  for (const char* p : {"default/t-1", "default/t-2", "default/t-3"}) EXPECT_FALSE(PodOf(r, p).scheduled) << p;
}

TEST(GangScheduling, PlanRejectsAPodNamingAPodGroupMissingFromTheInput) {
  // `plan` reads a closed world: a PodGroup that no document defines is a mistake in the input
  // (a typo, a forgotten file), reported with the pod and the field rather than planned.
  const std::string yaml = Classes() + NodeWithCpu("n1", "4") + Pending("orphan", "nope", "high", "1");
  const auto errors = LoadErrors(yaml);
  ASSERT_EQ(errors.size(), 1u) << Join(errors);
  EXPECT_TRUE(Contains(errors[0], "Pod default/orphan")) << errors[0];
  EXPECT_TRUE(Contains(errors[0], "spec.schedulingGroup.podGroupName")) << errors[0];
}

// A node of 4 CPUs and 8Gi for the tests that drive a ClusterSimulation directly.
model::Node FourCpuNode(const std::string& name) {
  model::Node n;
  n.name = name;
  n.allocatable.milli_cpu = 4000;
  n.allocatable.memory = int64_t{8} << 30;
  n.allocatable.pods = 110;
  return n;
}

TEST(GangScheduling, PodWhosePodGroupDoesNotExistYetWaitsInTheScheduler) {
  // The engine as upstream (§1.3): a pod that names a PodGroup the scheduler has not seen waits,
  // never tried, and says so; a lone pod beside it is scheduled.
  ClusterSimulation sim(model::SchedulerConfig{}, 0, SimulationOptions{});
  ASSERT_TRUE(sim.Init().ok());
  ASSERT_TRUE(sim.AddNode(FourCpuNode("n1")).ok());
  model::Pod orphan;
  orphan.name = "orphan";
  orphan.uid = "uid-orphan";
  orphan.requests.milli_cpu = 1000;
  orphan.pod_group_name = "nope";
  model::Pod lone = orphan;
  lone.name = "lone";
  lone.uid = "uid-lone";
  lone.pod_group_name.clear();
  sim.AddPendingPod(orphan);
  sim.AddPendingPod(lone);
  ASSERT_TRUE(sim.RunUntilIdle().ok());
  const PlanResult& r = sim.result();
  auto o = PodOf(r, "default/orphan");
  EXPECT_FALSE(o.scheduled);
  EXPECT_EQ(o.attempts, 0);
  EXPECT_TRUE(Contains(o.message, "default/nope")) << o.message;
  EXPECT_TRUE(Contains(o.message, "does not exist")) << o.message;
  EXPECT_TRUE(PodOf(r, "default/lone").scheduled);
}

// ---- 5, 6: disruption modes -----------------------------------------------------------------

TEST(WorkloadPreemption, SingleModeGroupLosesOnlyThePodsNeededEvenBelowItsMinCount) {
  // A priority-10 single-mode gang (minCount 3) fills n1 with three 1-CPU pods. A priority-100
  // gang of one 2-CPU pod needs two of them: the two latest started go, the third keeps
  // running although its group drops below minCount.
  std::string yaml = Classes() + NodeWithCpu("n1", "3") + Gang("old", 3, "low", "single") + Gang("pg", 1, "high") +
                     Running("old-1", "old", "low", "1", "n1", 1) + Running("old-2", "old", "low", "1", "n1", 2) +
                     Running("old-3", "old", "low", "1", "n1", 3) + Pending("big", "pg", "high", "2");
  auto r = Plan(yaml);
  auto big = PodOf(r, "default/big");
  EXPECT_TRUE(big.scheduled) << big.message;
  EXPECT_EQ(big.node, "n1");
  EXPECT_EQ(AllVictims(r), (std::set<std::string>{"default/old-2", "default/old-3"}));
  for (const auto& p : r.preemptions) {
    for (const auto& v : p.victims) {
      EXPECT_EQ(v.priority, 10);
      EXPECT_EQ(v.node, "n1");
      EXPECT_FALSE(v.violates_pdb);
    }
  }
  EXPECT_EQ(EventIndex(r, "Preempted", "default/old-1"), -1);
  EXPECT_EQ(EventIndex(r, "Killing", "default/old-1"), -1);
}

TEST(WorkloadPreemption, AllModeGroupIsEvictedWholeIncludingPodsOnOtherNodes) {
  // A priority-10 all-mode group: two pods on n1, one on n2. n2 also holds a priority-500 pod,
  // so the 2-CPU preemptor can only go to n1; the group's pod on n2 is evicted all the same.
  std::string yaml = Classes() + NodeWithCpu("n1", "2") + NodeWithCpu("n2", "2") + Gang("team", 1, "low", "all") +
                     Gang("pg", 1, "high") + Running("team-1", "team", "low", "1", "n1", 1) +
                     Running("team-2", "team", "low", "1", "n1", 2) + Running("team-3", "team", "low", "1", "n2", 3) +
                     Running("keeper", "", "keep", "1", "n2", 4) + Pending("big", "pg", "high", "2");
  auto r = Plan(yaml);
  auto big = PodOf(r, "default/big");
  EXPECT_TRUE(big.scheduled) << big.message;
  EXPECT_EQ(big.node, "n1");
  EXPECT_EQ(AllVictims(r), (std::set<std::string>{"default/team-1", "default/team-2", "default/team-3"}));
  const Victim* far = FindVictim(r, "default/team-3");
  ASSERT_NE(far, nullptr);
  EXPECT_EQ(far->node, "n2");
  EXPECT_EQ(far->priority, 10);
  EXPECT_EQ(FindVictim(r, "default/keeper"), nullptr);
}

TEST(WorkloadPreemption, AllModeGroupIsEvictedWholeEvenWhenOnePodWouldDo) {
  std::string yaml = Classes() + NodeWithCpu("n1", "3") + Gang("team", 3, "low", "all") + Gang("pg", 1, "high") +
                     Running("team-1", "team", "low", "1", "n1", 1) + Running("team-2", "team", "low", "1", "n1", 2) +
                     Running("team-3", "team", "low", "1", "n1", 3) + Pending("small", "pg", "high", "1");
  auto r = Plan(yaml);
  EXPECT_TRUE(PodOf(r, "default/small").scheduled);
  EXPECT_EQ(AllVictims(r), (std::set<std::string>{"default/team-1", "default/team-2", "default/team-3"}));
}

// ---- 7: hierarchies -------------------------------------------------------------------------

TEST(WorkloadPreemption, AllModeRootCompositeOverridesSingleModeChildren) {
  // root (CPG, all) > a (PG, single: a-1 on n1, a-2 on n2), b (PG, single: b-1 on n2). The
  // preemptor needs one pod's room on n1; every pod under the root goes.
  std::string yaml = Classes() + NodeWithCpu("n1", "1") + NodeWithCpu("n2", "2") +
                     Composite("root", "basic: {}", "all", "low") + PodGroup("a", "basic: {}", "single", "low", "root") +
                     PodGroup("b", "basic: {}", "single", "low", "root") + Gang("pg", 1, "high") +
                     Running("a-1", "a", "low", "1", "n1", 1) + Running("a-2", "a", "low", "1", "n2", 2) +
                     Running("b-1", "b", "low", "1", "n2", 3) + Pending("p", "pg", "high", "1");
  auto r = Plan(yaml);
  auto p = PodOf(r, "default/p");
  EXPECT_TRUE(p.scheduled) << p.message;
  EXPECT_EQ(AllVictims(r), (std::set<std::string>{"default/a-1", "default/a-2", "default/b-1"}));
  for (const auto& pr : r.preemptions) {
    EXPECT_EQ(pr.preemptor, "default/pg");
    EXPECT_EQ(pr.preemptor_kind, "PodGroup");
  }
}

TEST(WorkloadPreemption, AllModeChildOfSingleRootGoesAloneAndSiblingsStay) {
  // root (CPG, single) > x (PG, all: x-1 on n1, x-2 on n2), y (PG, single: y-1 on n1, y-2 on n2).
  // The preemptor needs 2 CPUs; only x-1's room makes that on a node, so x goes whole (x-2 on n2
  // too) and y's pods stay.
  std::string yaml = Classes() + NodeWithCpu("n1", "3") + NodeWithCpu("n2", "3") +
                     Composite("root", "basic: {}", "single", "low") + PodGroup("x", "basic: {}", "all", "low", "root") +
                     PodGroup("y", "basic: {}", "single", "low", "root") + Gang("pg", 1, "high") +
                     Running("x-1", "x", "low", "2", "n1", 1) + Running("x-2", "x", "low", "2", "n2", 2) +
                     Running("y-1", "y", "low", "1", "n1", 3) + Running("y-2", "y", "low", "1", "n2", 4) +
                     Pending("p", "pg", "high", "2");
  auto r = Plan(yaml);
  auto p = PodOf(r, "default/p");
  EXPECT_TRUE(p.scheduled) << p.message;
  EXPECT_EQ(AllVictims(r), (std::set<std::string>{"default/x-1", "default/x-2"}));
  EXPECT_EQ(FindVictim(r, "default/y-1"), nullptr);
  EXPECT_EQ(FindVictim(r, "default/y-2"), nullptr);
}

// ---- 8, 9: reprieval order ------------------------------------------------------------------

std::string PdbProtected(const std::string& status) {
  std::string s =
      "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: guard, namespace: default}\n"
      "spec:\n  minAvailable: 1\n  selector: {matchLabels: {app: protected}}\n";
  if (!status.empty()) s += "status:\n" + status;
  return s;
}

void ExpectPdbProtectsLowerPriorityPod(const std::string& pdb) {
  // n1: a priority-10 pod under a PDB with no disruption left, and an unprotected priority-50
  // pod. The priority-100 gang needs one pod's room: the unprotected, more important pod goes.
  std::string yaml = Classes() + NodeWithCpu("n1", "2") + pdb + Gang("pg", 1, "high") +
                     Member("guarded", "", "low", "1").On("n1").Labels("{app: protected}").Y() +
                     Running("free", "", "mid", "1", "n1", 2) + Pending("p", "pg", "high", "1");
  auto r = Plan(yaml);
  auto p = PodOf(r, "default/p");
  EXPECT_TRUE(p.scheduled) << p.message;
  EXPECT_EQ(AllVictims(r), (std::set<std::string>{"default/free"}));
  const Victim* v = FindVictim(r, "default/free");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->priority, 50);
  EXPECT_FALSE(v->violates_pdb);
}

TEST(WorkloadPreemption, PdbProtectedLowerPriorityPodIsReprievedBeforeUnprotectedHigherPriorityPod) {
  ExpectPdbProtectsLowerPriorityPod(PdbProtected("  disruptionsAllowed: 0\n"));
}

TEST(WorkloadPreemption, PdbWithComputedStatusProtectsLowerPriorityPod) {
  // minAvailable 1 over the one matching pod: disruptionsAllowed computes to 0.
  ExpectPdbProtectsLowerPriorityPod(PdbProtected(""));
}

TEST(WorkloadPreemption, EqualPriorityStandalonePodGoesBeforePodGroupMember) {
  // Same priority; the lone pod started earlier, yet a PodGroup member (rank PodGroup, even in
  // single mode) is more important than a standalone pod.
  std::string yaml = Classes() + NodeWithCpu("n1", "2") + PodGroup("other", "basic: {}", "single", "low") +
                     Gang("pg", 1, "high") + Running("lone", "", "low", "1", "n1", 1) +
                     Running("member", "other", "low", "1", "n1", 2) + Pending("p", "pg", "high", "1");
  auto r = Plan(yaml);
  EXPECT_TRUE(PodOf(r, "default/p").scheduled);
  EXPECT_EQ(AllVictims(r), (std::set<std::string>{"default/lone"}));
}

TEST(WorkloadPreemption, UnitWithMoreRunningPodsIsMoreImportant) {
  // Two priority-10 all-mode groups; the one-pod group started first, but the two-pod group is
  // more important, so the one-pod group is evicted.
  std::string yaml = Classes() + NodeWithCpu("n1", "3") + Gang("small", 1, "low", "all") +
                     Gang("large", 1, "low", "all") + Gang("pg", 1, "high") +
                     Running("small-1", "small", "low", "1", "n1", 1) + Running("large-1", "large", "low", "1", "n1", 2) +
                     Running("large-2", "large", "low", "1", "n1", 3) + Pending("p", "pg", "high", "1");
  auto r = Plan(yaml);
  EXPECT_TRUE(PodOf(r, "default/p").scheduled);
  EXPECT_EQ(AllVictims(r), (std::set<std::string>{"default/small-1"}));
}

TEST(WorkloadPreemption, LatestStartedPodsAreTheVictims) {
  // Four equal lone pods, listed in the reverse of their start order (and so the reverse of
  // their name/UID order): the two that started last go.
  std::string yaml = Classes() + NodeWithCpu("n1", "4") + Gang("pg", 1, "high") +
                     Running("a", "", "low", "1", "n1", 4) + Running("b", "", "low", "1", "n1", 3) +
                     Running("c", "", "low", "1", "n1", 2) + Running("d", "", "low", "1", "n1", 1) +
                     Pending("p", "pg", "high", "2");
  auto r = Plan(yaml);
  auto p = PodOf(r, "default/p");
  EXPECT_TRUE(p.scheduled) << p.message;
  EXPECT_EQ(AllVictims(r), (std::set<std::string>{"default/a", "default/b"}));
}

// ---- 10, 11: how much a gang preempts, and whether it may -------------------------------------

TEST(WorkloadPreemption, GangMakesRoomForEveryMemberNotJustMinCount) {
  // minCount 2, four members, n1 full of four priority-10 pods: WAP places all four, so all four
  // low pods are evicted.
  std::string yaml = Classes() + NodeWithCpu("n1", "4") + Gang("pg", 2, "high");
  for (int i = 1; i <= 4; ++i) yaml += Running("low-" + std::to_string(i), "", "low", "1", "n1", i);
  for (int i = 1; i <= 4; ++i) yaml += Pending("g-" + std::to_string(i), "pg", "high", "1");
  auto r = Plan(yaml);
  EXPECT_EQ(AllVictims(r).size(), 4u);
  for (int i = 1; i <= 4; ++i) {
    auto p = PodOf(r, "default/g-" + std::to_string(i));
    EXPECT_TRUE(p.scheduled) << p.name << ": " << p.message;
    EXPECT_EQ(p.node, "n1");
  }
}

TEST(WorkloadPreemption, GroupWhosePriorityClassSaysNeverDoesNotPreempt) {
  std::string yaml = Classes() + PriorityClass("polite", 100, "Never") + NodeWithCpu("n1", "2") +
                     Gang("pg", 2, "polite") + Running("low-1", "", "low", "1", "n1", 1) +
                     Running("low-2", "", "low", "1", "n1", 2) + Pending("g-1", "pg", "polite", "1") +
                     Pending("g-2", "pg", "polite", "1");
  auto r = Plan(yaml);
  ASSERT_EQ(r.pods.size(), 2u);
  for (const auto& p : r.pods) {
    EXPECT_FALSE(p.scheduled) << p.name;
    EXPECT_FALSE(p.nominated_node.has_value()) << p.name;
    EXPECT_TRUE(Contains(p.message, "preemptionPolicy=Never")) << p.message;
  }
  EXPECT_TRUE(r.preemptions.empty());
}

// ---- 12, 13: preemption entries -------------------------------------------------------------

TEST(WorkloadPreemption, LonePodEvictsAllModeGroupOnEveryNode) {
  // The 2-CPU lone pod fits only on n1 (n2 holds a priority-500 pod). One victim there belongs
  // to an all-mode group that also runs on n2: every member goes.
  std::string yaml = Classes() + NodeWithCpu("n1", "2") + NodeWithCpu("n2", "2") + Gang("team", 1, "low", "all") +
                     Running("team-1", "team", "low", "1", "n1", 1) + Running("team-2", "team", "low", "1", "n1", 2) +
                     Running("team-3", "team", "low", "1", "n2", 3) + Running("keeper", "", "keep", "1", "n2", 4) +
                     Pending("lone", "", "high", "2");
  auto r = Plan(yaml);
  auto lone = PodOf(r, "default/lone");
  EXPECT_TRUE(lone.scheduled) << lone.message;
  EXPECT_EQ(lone.node, "n1");
  EXPECT_EQ(lone.pod_group, "");
  EXPECT_EQ(AllVictims(r), (std::set<std::string>{"default/team-1", "default/team-2", "default/team-3"}));
  ASSERT_FALSE(r.preemptions.empty());
  for (const auto& pr : r.preemptions) {
    EXPECT_EQ(pr.preemptor, "default/lone");
    EXPECT_EQ(pr.preemptor_kind, "Pod");
    EXPECT_EQ(pr.node, std::optional<std::string>("n1"));
  }
  const Victim* far = FindVictim(r, "default/team-3");
  ASSERT_NE(far, nullptr);
  EXPECT_EQ(far->node, "n2");
}

TEST(WorkloadPreemption, PodGroupPreemptionEntryNamesTheGroupAndNominatesItsMembers) {
  std::string yaml = Classes() + NodeWithCpu("n1", "2") + Gang("pg", 2, "high") +
                     Running("low-1", "", "low", "1", "n1", 1) + Running("low-2", "", "low", "1", "n1", 2) +
                     Pending("g-1", "pg", "high", "1") + Pending("g-2", "pg", "high", "1");
  auto r = Plan(yaml);
  ASSERT_FALSE(r.preemptions.empty());
  for (const auto& pr : r.preemptions) {
    EXPECT_EQ(pr.preemptor, "default/pg");
    EXPECT_EQ(pr.preemptor_kind, "PodGroup");
    EXPECT_FALSE(pr.node.has_value());
  }
  EXPECT_EQ(AllVictims(r), (std::set<std::string>{"default/low-1", "default/low-2"}));
  for (const char* name : {"default/g-1", "default/g-2"}) {
    auto p = PodOf(r, name);
    EXPECT_TRUE(p.scheduled) << name << ": " << p.message;
    EXPECT_EQ(p.node, "n1");
    EXPECT_EQ(p.nominated_node, std::optional<std::string>("n1")) << name;
    // Bound only after both victims were gone.
    const int bound = EventIndex(r, "Scheduled", name);
    ASSERT_GE(bound, 0);
    for (const char* v : {"default/low-1", "default/low-2"}) {
      const int killed = EventIndex(r, "Killing", v);
      ASSERT_GE(killed, 0) << v;
      EXPECT_LT(killed, bound) << name << " bound before " << v << " terminated";
    }
  }
  const GroupPlan* g = FindGroup(r, "default/pg");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->initially_scheduled);
}

TEST(WorkloadPreemption, CompositeRootIsThePreemptor) {
  // root (CPG, gang minGroupCount 1) > w (PG, gang minCount 2). The whole tree preempts as the
  // root.
  std::string yaml = Classes() + NodeWithCpu("n1", "2") + Composite("root", "gang: {minGroupCount: 1}", "single", "high") +
                     Gang("w", 2, "high", "single", "root") + Running("low-1", "", "low", "1", "n1", 1) +
                     Running("low-2", "", "low", "1", "n1", 2) + Pending("w-1", "w", "high", "1") +
                     Pending("w-2", "w", "high", "1");
  auto r = Plan(yaml);
  ASSERT_FALSE(r.preemptions.empty());
  for (const auto& pr : r.preemptions) {
    EXPECT_EQ(pr.preemptor, "default/root");
    EXPECT_EQ(pr.preemptor_kind, "CompositePodGroup");
    EXPECT_FALSE(pr.node.has_value());
  }
  EXPECT_EQ(AllVictims(r), (std::set<std::string>{"default/low-1", "default/low-2"}));
  for (const char* name : {"default/w-1", "default/w-2"}) {
    auto p = PodOf(r, name);
    EXPECT_TRUE(p.scheduled) << name << ": " << p.message;
    EXPECT_EQ(p.pod_group, "default/w");
    EXPECT_EQ(p.nominated_node, std::optional<std::string>("n1")) << name;
  }
  const GroupPlan* g = FindGroup(r, "default/root");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->kind, "CompositePodGroup");
  EXPECT_TRUE(g->initially_scheduled);
}

// ---- 14, 15 ---------------------------------------------------------------------------------

TEST(WorkloadPreemption, FittingMemberBindsBeforeTheGroupPreemptsForTheOther) {
  // minCount 1, two members; n1 has room for one. The one that fits is bound first; the other
  // gets its room by preemption in a later cycle.
  std::string yaml = Classes() + NodeWithCpu("n1", "2") + Gang("pg", 1, "high") +
                     Running("low-1", "", "low", "1", "n1", 1) + Pending("g-1", "pg", "high", "1") +
                     Pending("g-2", "pg", "high", "1");
  auto r = Plan(yaml);
  auto g1 = PodOf(r, "default/g-1");
  auto g2 = PodOf(r, "default/g-2");
  EXPECT_TRUE(g1.scheduled) << g1.message;
  EXPECT_TRUE(g2.scheduled) << g2.message;
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].preemptor, "default/pg");
  EXPECT_EQ(r.preemptions[0].preemptor_kind, "PodGroup");
  EXPECT_EQ(AllVictims(r), (std::set<std::string>{"default/low-1"}));
  // Exactly one member was bound without a nomination, before anything was preempted.
  const bool first_is_g1 = !g1.nominated_node.has_value();
  const std::string first = first_is_g1 ? "default/g-1" : "default/g-2";
  const std::string second = first_is_g1 ? "default/g-2" : "default/g-1";
  EXPECT_FALSE(PodOf(r, first).nominated_node.has_value());
  EXPECT_EQ(PodOf(r, second).nominated_node, std::optional<std::string>("n1"));
  const int bound_first = EventIndex(r, "Scheduled", first);
  const int preempted = EventIndex(r, "Preempted", "default/low-1");
  const int bound_second = EventIndex(r, "Scheduled", second);
  ASSERT_GE(bound_first, 0);
  ASSERT_GE(preempted, 0);
  ASSERT_GE(bound_second, 0);
  EXPECT_LT(bound_first, preempted);
  EXPECT_LT(preempted, bound_second);
}

TEST(GangScheduling, CompositeGangBindsNothingWhenOnlyOneChildGangCanBePlaced) {
  // root (CPG, gang minGroupCount 2) > a, b (PG, gang minCount 2, 1-CPU pods). Room for three
  // pods: one child gang completes, the other cannot, so no pod binds.
  std::string yaml = Classes() + NodeWithCpu("n1", "3") + Composite("root", "gang: {minGroupCount: 2}", "single", "high") +
                     Gang("a", 2, "high", "single", "root") + Gang("b", 2, "high", "single", "root");
  for (const char* p : {"a-1", "a-2"}) yaml += Pending(p, "a", "high", "1");
  for (const char* p : {"b-1", "b-2"}) yaml += Pending(p, "b", "high", "1");
  auto r = Plan(yaml);
  ASSERT_EQ(r.pods.size(), 4u);
  for (const auto& p : r.pods) {
    EXPECT_FALSE(p.scheduled) << p.name;
    EXPECT_EQ(p.node, "");
  }
  for (const auto& e : r.events) EXPECT_NE(e.reason, "Scheduled") << e.object;
  EXPECT_TRUE(r.preemptions.empty());
  const GroupPlan* g = FindGroup(r, "default/root");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->kind, "CompositePodGroup");
  EXPECT_FALSE(g->initially_scheduled);
}

TEST(GangScheduling, CompositeGangBindsWhenEveryChildGangFits) {
  // The same tree with room for all four pods binds them all at once.
  std::string yaml = Classes() + NodeWithCpu("n1", "4") + Composite("root", "gang: {minGroupCount: 2}", "single", "high") +
                     Gang("a", 2, "high", "single", "root") + Gang("b", 2, "high", "single", "root");
  for (const char* p : {"a-1", "a-2"}) yaml += Pending(p, "a", "high", "1");
  for (const char* p : {"b-1", "b-2"}) yaml += Pending(p, "b", "high", "1");
  auto r = Plan(yaml);
  ASSERT_EQ(r.pods.size(), 4u);
  for (const auto& p : r.pods) EXPECT_TRUE(p.scheduled) << p.name << ": " << p.message;
  const GroupPlan* g = FindGroup(r, "default/root");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->initially_scheduled);
}

TEST(GangScheduling, CompositeRootWaitsUntilEveryGangInItHasItsMembers) {
  // A basic root over two gangs: b has one of the two members its minCount asks for, so the
  // whole tree waits (no pod is tried), although gang a alone would fit.
  std::string yaml = Classes() + NodeWithCpu("n1", "8") + Composite("root", "basic: {}", "single", "high") +
                     Gang("a", 2, "high", "single", "root") + Gang("b", 2, "high", "single", "root");
  for (const char* p : {"a-1", "a-2"}) yaml += Pending(p, "a", "high", "1");
  yaml += Pending("b-1", "b", "high", "1");
  auto r = Plan(yaml);
  ASSERT_EQ(r.pods.size(), 3u);
  for (const auto& p : r.pods) {
    EXPECT_FALSE(p.scheduled) << p.name;
    EXPECT_EQ(p.attempts, 0) << p.name;
    EXPECT_TRUE(Contains(p.message, "waiting for the members")) << p.message;
  }
}

TEST(GangScheduling, ChildGangShortOfItsMinCountBindsNothingUnderABasicRoot) {
  // Room for three 1-CPU pods: gang a (2) fits whole, gang b gets one of its two. The basic root
  // is satisfied by a alone, but b must not run below its own minCount.
  std::string yaml = Classes() + NodeWithCpu("n1", "3") + Composite("root", "basic: {}", "single", "high") +
                     Gang("a", 2, "high", "single", "root") + Gang("b", 2, "high", "single", "root");
  for (const char* p : {"a-1", "a-2"}) yaml += Pending(p, "a", "high", "1");
  for (const char* p : {"b-1", "b-2"}) yaml += Pending(p, "b", "high", "1");
  auto r = Plan(yaml);
  EXPECT_TRUE(PodOf(r, "default/a-1").scheduled);
  EXPECT_TRUE(PodOf(r, "default/a-2").scheduled);
  EXPECT_FALSE(PodOf(r, "default/b-1").scheduled);
  EXPECT_FALSE(PodOf(r, "default/b-2").scheduled);
}

TEST(DefaultPreemptionWithGroups, VictimsAreScoredByTheirRootsPriority) {
  // n1 runs a member of PodGroup child (priority 50) under a root of priority 10; n2 runs a
  // standalone pod of priority 40. Judged by its root, the member is the cheaper victim.
  std::string yaml = Classes() + PriorityClass("forty", 40) + NodeWithCpu("n1", "2") + NodeWithCpu("n2", "2") +
                     Composite("root", "basic: {}", "single", "low") + Gang("child", 1, "mid", "single", "root") +
                     Running("member", "child", "mid", "2", "n1", 1) + Running("solo", "", "forty", "2", "n2", 2) +
                     Pending("urgent", "", "high", "2");
  auto r = Plan(yaml);
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].node, std::optional<std::string>("n1"));
  ASSERT_EQ(r.preemptions[0].victims.size(), 1u);
  EXPECT_EQ(r.preemptions[0].victims[0].name, "default/member");
  EXPECT_EQ(r.preemptions[0].victims[0].priority, 10);
  EXPECT_TRUE(PodOf(r, "default/urgent").scheduled);
}

// ---- 16: admission ---------------------------------------------------------------------------

TEST(WorkloadAdmission, PodGroupWhoseParentCompositeIsMissingIsRejected) {
  const std::string yaml = Classes() + NodeWithCpu("n1") + Gang("w", 1, "high", "single", "ghost");
  const auto errors = LoadErrors(yaml);
  ASSERT_FALSE(errors.empty());
  EXPECT_TRUE(AnyContains(errors, "PodGroup default/w", "spec.parentCompositePodGroupName")) << Join(errors);
  EXPECT_TRUE(AnyContains(errors, "spec.parentCompositePodGroupName", "ghost")) << Join(errors);
}

TEST(WorkloadAdmission, CompositePodGroupsThatAreEachOthersParentAreRejected) {
  const std::string yaml = Classes() + NodeWithCpu("n1") + Composite("c1", "basic: {}", "single", "high", "c2") +
                           Composite("c2", "basic: {}", "single", "high", "c1");
  const auto errors = LoadErrors(yaml);
  ASSERT_FALSE(errors.empty());
  EXPECT_TRUE(AnyContains(errors, "CompositePodGroup default/c", "spec.parentCompositePodGroupName")) << Join(errors);
  EXPECT_TRUE(AnyContains(errors, "spec.parentCompositePodGroupName", "cycle")) << Join(errors);
}

TEST(WorkloadAdmission, HierarchyDeeperThanFourLevelsIsRejected) {
  // leaf > c4 > c3 > c2 > c1: five levels.
  const std::string yaml = Classes() + NodeWithCpu("n1") + Composite("c1", "basic: {}", "single", "high") +
                           Composite("c2", "basic: {}", "single", "high", "c1") +
                           Composite("c3", "basic: {}", "single", "high", "c2") +
                           Composite("c4", "basic: {}", "single", "high", "c3") +
                           Gang("leaf", 1, "high", "single", "c4");
  const auto errors = LoadErrors(yaml);
  ASSERT_FALSE(errors.empty());
  EXPECT_TRUE(AnyContains(errors, "default/leaf", "spec.parentCompositePodGroupName")) << Join(errors);
}

TEST(WorkloadAdmission, HierarchyOfFourLevelsIsAccepted) {
  const std::string yaml = Classes() + NodeWithCpu("n1") + Composite("c1", "basic: {}", "single", "high") +
                           Composite("c2", "basic: {}", "single", "high", "c1") +
                           Composite("c3", "basic: {}", "single", "high", "c2") +
                           Gang("leaf", 1, "high", "single", "c3") + Pending("p", "leaf", "high", "1");
  const auto errors = LoadErrors(yaml);
  EXPECT_TRUE(errors.empty()) << Join(errors);
}

TEST(WorkloadAdmission, MembersNamingDifferentSchedulersAreRejected) {
  const std::string yaml = Classes() + NodeWithCpu("n1") + Gang("pg", 2, "high") + Pending("g-1", "pg", "high", "1") +
                           Member("g-2", "pg", "high", "1").Spec("  schedulerName: other-scheduler\n").Y();
  const auto errors = LoadErrors(yaml);
  ASSERT_FALSE(errors.empty());
  EXPECT_TRUE(AnyContains(errors, "Pod default/g-2", "spec.schedulerName")) << Join(errors);
}

TEST(WorkloadAdmission, MemberWhosePriorityDiffersFromItsGroupIsRejected) {
  const std::string yaml = Classes() + NodeWithCpu("n1") + Gang("pg", 2, "high") + Pending("g-1", "pg", "high", "1") +
                           Pending("g-2", "pg", "mid", "1");
  const auto errors = LoadErrors(yaml);
  ASSERT_FALSE(errors.empty());
  EXPECT_TRUE(AnyContains(errors, "Pod default/g-2", "spec.priority")) << Join(errors);
  EXPECT_FALSE(AnyContains(errors, "Pod default/g-1")) << Join(errors);
}

// ---- 17, 18 ---------------------------------------------------------------------------------

TEST(GangScheduling, WithGenericWorkloadOffMembersAreScheduledOneByOne) {
  std::string yaml = Config("featureGates: {GenericWorkload: false}\n") + Classes() + NodeWithCpu("n1", "2") +
                     Gang("pg", 3, "high");
  for (const char* p : {"g-1", "g-2", "g-3"}) yaml += Pending(p, "pg", "high", "1");
  auto r = Plan(yaml);
  ASSERT_EQ(r.pods.size(), 3u);
  int scheduled = 0;
  for (const auto& p : r.pods) scheduled += p.scheduled ? 1 : 0;
  EXPECT_EQ(scheduled, 2);
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_TRUE(r.groups.empty());
}

TEST(WorkloadPreemption, SameInputAndSeedGiveTheSamePlan) {
  std::string yaml = Classes() + NodeWithCpu("n1", "2") + NodeWithCpu("n2", "2") + NodeWithCpu("n3", "2") +
                     Gang("team", 1, "low", "all") + Gang("pg", 3, "high");
  for (int i = 1; i <= 6; ++i) {
    const std::string node = "n" + std::to_string((i + 1) / 2);
    yaml += i % 2 ? Running("low-" + std::to_string(i), "", "low", "1", node, i)
                  : Running("team-" + std::to_string(i), "team", "low", "1", node, i);
  }
  for (int i = 1; i <= 3; ++i) yaml += Pending("g-" + std::to_string(i), "pg", "high", "1");
  yaml += Pending("lone", "", "mid", "1");
  const auto a = Plan(yaml, 11);
  const auto b = Plan(yaml, 11);
  ASSERT_FALSE(a.preemptions.empty());
  ASSERT_EQ(a.pods.size(), b.pods.size());
  for (size_t i = 0; i < a.pods.size(); ++i) {
    EXPECT_EQ(a.pods[i].name, b.pods[i].name);
    EXPECT_EQ(a.pods[i].pod_group, b.pods[i].pod_group);
    EXPECT_EQ(a.pods[i].scheduled, b.pods[i].scheduled);
    EXPECT_EQ(a.pods[i].node, b.pods[i].node);
    EXPECT_EQ(a.pods[i].nominated_node, b.pods[i].nominated_node);
    EXPECT_EQ(a.pods[i].message, b.pods[i].message);
  }
  ASSERT_EQ(a.preemptions.size(), b.preemptions.size());
  for (size_t i = 0; i < a.preemptions.size(); ++i) {
    EXPECT_EQ(a.preemptions[i].preemptor, b.preemptions[i].preemptor);
    EXPECT_EQ(a.preemptions[i].preemptor_kind, b.preemptions[i].preemptor_kind);
    EXPECT_EQ(a.preemptions[i].node, b.preemptions[i].node);
    ASSERT_EQ(a.preemptions[i].victims.size(), b.preemptions[i].victims.size());
    for (size_t j = 0; j < a.preemptions[i].victims.size(); ++j) {
      EXPECT_EQ(a.preemptions[i].victims[j].name, b.preemptions[i].victims[j].name);
      EXPECT_EQ(a.preemptions[i].victims[j].node, b.preemptions[i].victims[j].node);
      EXPECT_EQ(a.preemptions[i].victims[j].priority, b.preemptions[i].victims[j].priority);
      EXPECT_EQ(a.preemptions[i].victims[j].violates_pdb, b.preemptions[i].victims[j].violates_pdb);
    }
  }
  EXPECT_EQ(a.end, b.end);
}


// A gang retried while its victims still terminate starts no second preemption: it keeps the
// nominations of the first and waits (workload notes §4 step 0).
TEST(WorkloadPreemption, GroupRetriedWhileItsVictimsTerminateWaitsWithoutPreemptingAgain) {
  ClusterSimulation sim(model::SchedulerConfig{}, 0, SimulationOptions{});
  ASSERT_TRUE(sim.Init().ok());
  ASSERT_TRUE(sim.AddNode(FourCpuNode("n1")).ok());
  model::PodGroup g;
  g.name = "gang";
  g.policy = model::GroupPolicy::kGang;
  g.min_count = 2;
  g.priority.priority = 100;
  sim.AddPodGroup(g);
  for (int i = 0; i < 2; ++i) {
    model::Pod low;
    low.name = "low-" + std::to_string(i);
    low.uid = "uid-low-" + std::to_string(i);
    low.requests.milli_cpu = 2000;
    low.node_name = "n1";
    low.start_time = 0;
    low.termination_grace_period_seconds = 60;
    ASSERT_TRUE(sim.AddRunningPod(low).ok());
  }
  for (int i = 0; i < 2; ++i) {
    model::Pod m;
    m.name = "m-" + std::to_string(i);
    m.uid = "uid-m-" + std::to_string(i);
    m.requests.milli_cpu = 2000;
    m.priority = 100;
    m.pod_group_name = "gang";
    sim.AddPendingPod(m);
  }
  bool idle = false;
  auto first = sim.Step(&idle);
  ASSERT_TRUE(first.ok() && *first);
  ASSERT_EQ(sim.result().preemptions.size(), 1u);
  ASSERT_EQ(sim.result().preemptions[0].victims.size(), 2u);
  // Something wakes the group before the victims are gone (say, a node changed).
  sim.scheduler().queue().MoveOnEvent(sched::ClusterEvent::kNodeUpdate);
  sim.clock().AdvanceTo(sim.clock().Now() + 2 * kSecond);  // past the first backoff, well within the grace period
  auto second = sim.Step(&idle);
  ASSERT_TRUE(second.ok() && *second);
  ASSERT_FALSE((*second)->members.empty());
  EXPECT_NE((*second)->members[0].message.find("waiting for podgroup preemption to complete"), std::string::npos)
      << (*second)->members[0].message;
  EXPECT_EQ(sim.result().preemptions.size(), 1u);
  EXPECT_EQ(sim.scheduler().nominator().NominatedNode("uid-m-0"), "n1");
  EXPECT_EQ(sim.scheduler().nominator().NominatedNode("uid-m-1"), "n1");
  ASSERT_TRUE(sim.RunUntilIdle().ok());
  EXPECT_TRUE(PodOf(sim.result(), "default/m-0").scheduled);
  EXPECT_TRUE(PodOf(sim.result(), "default/m-1").scheduled);
  EXPECT_EQ(sim.result().preemptions.size(), 1u);
}


// The scheduler keeps a pod that arrives before its PodGroup (and before that group's parent)
// waiting, then schedules it with its root once the groups exist.
TEST(GangScheduling, PodThatArrivesBeforeItsGroupsJoinsItsRootWhenTheyAppear) {
  ClusterSimulation sim(model::SchedulerConfig{}, 0, SimulationOptions{});
  ASSERT_TRUE(sim.Init().ok());
  ASSERT_TRUE(sim.AddNode(FourCpuNode("n1")).ok());
  for (int i = 0; i < 2; ++i) {
    model::Pod m;
    m.name = "w-" + std::to_string(i);
    m.uid = "uid-w-" + std::to_string(i);
    m.requests.milli_cpu = 1000;
    m.priority = 7;
    m.pod_group_name = "workers";
    sim.AddPendingPod(m);
  }
  bool idle = false;
  auto none = sim.Step(&idle);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none) << "no group yet: nothing to try";
  model::PodGroup g;
  g.name = "workers";
  g.parent = "job";
  g.policy = model::GroupPolicy::kGang;
  g.min_count = 2;
  g.priority.priority = 7;
  sim.AddPodGroup(g);  // its parent is still missing: the hierarchy is not valid yet
  model::CompositePodGroup root;
  root.name = "job";
  root.policy = model::GroupPolicy::kBasic;
  root.priority.priority = 7;
  sim.AddCompositePodGroup(root);
  ASSERT_TRUE(sim.RunUntilIdle().ok());
  const PlanResult& r = sim.result();
  EXPECT_TRUE(PodOf(r, "default/w-0").scheduled);
  EXPECT_TRUE(PodOf(r, "default/w-1").scheduled);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].name, "default/job");
  EXPECT_EQ(r.groups[0].kind, "CompositePodGroup");
}

}  // namespace
}  // namespace arbiter::sim
