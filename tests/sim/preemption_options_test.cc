// Arbiter's opt-in preemption options (DefaultPreemptionArgs beyond upstream's): each on a
// cluster where it changes the outcome, beside the outcome upstream's rules give on the same
// cluster (the options off).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/testing/manifest_builders.h"
#include "tests/testing/plan_harness.h"

namespace arbiter::sim::preemption_options {
namespace {

using arbiter::testing::NodeY;
using arbiter::testing::PodOf;
using arbiter::testing::PodY;
using arbiter::testing::VictimNames;

std::string Classes() {
  std::string y;
  for (auto [name, value] : {std::pair{"p50", 50}, std::pair{"p60", 60}, std::pair{"p95", 95}, std::pair{"p100", 100}}) {
    y += "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " + std::string(name) +
         "}\nvalue: " + std::to_string(value) + "\n";
  }
  return y;
}

std::string PreemptionArgs(const std::string& args) {
  return arbiter::testing::ProfileConfig("  pluginConfig:\n  - name: DefaultPreemption\n    args: " + args + "\n");
}

// --- priorityDelta under the Kubernetes policy ---------------------------------------------
// A 4-CPU node runs `mid` (priority 95, 3 CPUs) and `low` (50, 1 CPU); `urgent` (100) needs 3.
std::string DeltaCluster(const std::string& config) {
  return Classes() + NodeY("n1").Cpu("4").Y() + PodY("mid").On("n1").PriorityClass("p95").Cpu("3").Y() +
         PodY("low").On("n1").PriorityClass("p50").Cpu("1").Y() + PodY("urgent").PriorityClass("p100").Cpu("3").Y() +
         config;
}

TEST(PreemptionOptions, UpstreamPreemptsAPodOnePriorityBelow) {
  // Both lower pods go, `mid` cannot come back (3 + 3 > 4), `low` can: `mid` is the victim.
  auto r = arbiter::testing::Plan(DeltaCluster(""));
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/mid"}));
  EXPECT_TRUE(PodOf(r, "default/urgent").scheduled);
}

TEST(PreemptionOptions, PriorityDeltaSparesPodsCloseInPriority) {
  // With a delta of 10, `mid` (5 below) may not go and `low` alone frees too little: no candidate.
  auto r = arbiter::testing::Plan(DeltaCluster(PreemptionArgs("{priorityDelta: 10}")));
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_FALSE(PodOf(r, "default/urgent").scheduled);
  // The dry run without `low` still finds too little CPU, and says so as upstream's would.
  EXPECT_EQ(PodOf(r, "default/urgent").message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Insufficient cpu.");
  // A delta of 5 still allows `mid`.
  auto five = arbiter::testing::Plan(DeltaCluster(PreemptionArgs("{priorityDelta: 5}")));
  EXPECT_EQ(VictimNames(five), (std::set<std::string>{"default/mid"}));
}

// --- pdbPolicy ---------------------------------------------------------------------------------
// A 4-CPU node runs web-0 and web-1 (priority 50, 2 CPUs, app: web) under a budget of
// minAvailable 2 (no disruption allowed); `urgent` (100) needs 2 CPUs.
std::string BudgetCluster(const std::string& config, const std::string& budget = "minAvailable: 2") {
  return Classes() + NodeY("n1").Cpu("4").Y() +
         PodY("web-0").On("n1").Labels("{app: web}").PriorityClass("p50").Cpu("2").Y() +
         PodY("web-1").On("n1").Labels("{app: web}").PriorityClass("p50").Cpu("2").Y() +
         "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web-pdb, namespace: default}\n"
         "spec:\n  " +
         budget + "\n  selector: {matchLabels: {app: web}}\n" + PodY("urgent").PriorityClass("p100").Cpu("2").Y() +
         config;
}

TEST(PreemptionOptions, UpstreamViolatesABudgetWhenNoOtherCandidateExists) {
  auto r = arbiter::testing::Plan(BudgetCluster(""));
  ASSERT_EQ(r.preemptions.size(), 1u);
  ASSERT_EQ(r.preemptions[0].victims.size(), 1u);
  EXPECT_TRUE(r.preemptions[0].victims[0].violates_pdb);
  EXPECT_TRUE(PodOf(r, "default/urgent").scheduled);
}

TEST(PreemptionOptions, StrictBudgetsLeaveThePodPendingAndNameTheBudget) {
  auto r = arbiter::testing::Plan(BudgetCluster(PreemptionArgs("{pdbPolicy: Strict}")));
  EXPECT_TRUE(r.preemptions.empty());
  const auto& urgent = PodOf(r, "default/urgent");
  EXPECT_FALSE(urgent.scheduled);
  EXPECT_NE(urgent.message.find("Preemption would violate PodDisruptionBudget default/web-pdb (pdbPolicy: Strict)"),
            std::string::npos)
      << urgent.message;
}

TEST(PreemptionOptions, StrictBudgetsKeepAVictimSetWithinTheBudget) {
  // maxUnavailable 1 allows one disruption. web-0 (priority 60, 1 CPU) is more important than
  // web-1 (50, 3 CPUs), so upstream charges the budget to web-0 first and flags web-1 as
  // violating; the reprieve keeps web-0, and web-1 alone is within the budget: Strict allows it.
  std::string y = Classes() + NodeY("n1").Cpu("4").Y() +
                  PodY("web-0").On("n1").Labels("{app: web}").PriorityClass("p60").Cpu("1").Y() +
                  PodY("web-1").On("n1").Labels("{app: web}").PriorityClass("p50").Cpu("3").Y() +
                  "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web-pdb, namespace: default}\n"
                  "spec:\n  maxUnavailable: 1\n  selector: {matchLabels: {app: web}}\n" +
                  PodY("urgent").PriorityClass("p100").Cpu("3").Y();
  auto upstream = arbiter::testing::Plan(y);
  ASSERT_EQ(upstream.preemptions.size(), 1u);
  ASSERT_EQ(upstream.preemptions[0].victims.size(), 1u);
  EXPECT_EQ(upstream.preemptions[0].victims[0].name, "default/web-1");
  EXPECT_TRUE(upstream.preemptions[0].victims[0].violates_pdb);
  auto strict = arbiter::testing::Plan(y + PreemptionArgs("{pdbPolicy: Strict}"));
  EXPECT_EQ(VictimNames(strict), (std::set<std::string>{"default/web-1"}));
  EXPECT_TRUE(PodOf(strict, "default/urgent").scheduled);
}

TEST(PreemptionOptions, StrictBudgetsPreferAnotherNode) {
  // A second node whose victim no budget covers: upstream prefers it too (fewest violations);
  // Strict reaches the same answer without ever holding the violating candidate.
  std::string y = BudgetCluster(PreemptionArgs("{pdbPolicy: Strict}")) + NodeY("n2").Cpu("2").Y() +
                  PodY("batch").On("n2").PriorityClass("p50").Cpu("2").Y();
  auto r = arbiter::testing::Plan(y);
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/batch"}));
  EXPECT_EQ(PodOf(r, "default/urgent").node, "n2");
}

// --- minRuntimeSeconds -------------------------------------------------------------------------
// A 4-CPU node runs `old` (started 10:00) and `young` (started 10:50), both priority 50 and
// 2 CPUs; `urgent` (100, 2 CPUs) was created at 11:00, which is the plan's now.
std::string RuntimeCluster(const std::string& config) {
  return Classes() + NodeY("n1").Cpu("4").Y() +
         PodY("old").On("n1").PriorityClass("p50").Cpu("2").Status("  startTime: \"2026-01-01T10:00:00Z\"\n").Y() +
         PodY("young").On("n1").PriorityClass("p50").Cpu("2").Status("  startTime: \"2026-01-01T10:50:00Z\"\n").Y() +
         PodY("urgent").Metadata("  creationTimestamp: \"2026-01-01T11:00:00Z\"\n").PriorityClass("p100").Cpu("2").Y() +
         config;
}

TEST(PreemptionOptions, UpstreamPreemptsTheYoungestOfEqualPriority) {
  // The earlier start is the more important: `old` comes back first and `young` goes.
  auto r = arbiter::testing::Plan(RuntimeCluster(""));
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/young"}));
}

TEST(PreemptionOptions, MinRuntimeProtectsPodsThatStartedRecently) {
  // `young` ran 10 minutes, under the 30 required: only `old` may go, and it frees enough.
  auto r = arbiter::testing::Plan(RuntimeCluster(PreemptionArgs("{minRuntimeSeconds: 1800}")));
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/old"}));
  EXPECT_TRUE(PodOf(r, "default/urgent").scheduled);
  // At 2 hours neither may go.
  auto none = arbiter::testing::Plan(RuntimeCluster(PreemptionArgs("{minRuntimeSeconds: 7200}")));
  EXPECT_TRUE(none.preemptions.empty());
  EXPECT_FALSE(PodOf(none, "default/urgent").scheduled);
}

TEST(PreemptionOptions, MinRuntimeAppliesUnderTheNomadPolicyToo) {
  auto r = arbiter::testing::Plan(RuntimeCluster(PreemptionArgs("{victimSelection: Nomad, minRuntimeSeconds: 1800}")));
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/old"}));
}

// --- victimCost --------------------------------------------------------------------------------
// Two full nodes, each with one priority-50 victim that frees room for `urgent` (100, 1 CPU):
// `big` on n1 (4 CPUs, started 10:30: 4 x 1800 = 7200 CPU-seconds lost) and `small` on n2
// (1 CPU, started 10:00: 3600 CPU-seconds). Every rule of upstream before its start-time rule
// ties; `urgent` was created at 11:00, the plan's now.
std::string CostCluster(const std::string& config) {
  return Classes() + NodeY("n1").Cpu("4").Y() + NodeY("n2").Cpu("1").Y() +
         PodY("big").On("n1").PriorityClass("p50").Cpu("4").Status("  startTime: \"2026-01-01T10:30:00Z\"\n").Y() +
         PodY("small").On("n2").PriorityClass("p50").Cpu("1").Status("  startTime: \"2026-01-01T10:00:00Z\"\n").Y() +
         PodY("urgent").Metadata("  creationTimestamp: \"2026-01-01T11:00:00Z\"\n").PriorityClass("p100").Cpu("1").Y() +
         config;
}

TEST(PreemptionOptions, UpstreamPreemptsTheMostRecentlyStartedVictim) {
  auto r = arbiter::testing::Plan(CostCluster(""));
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/big"}));
  EXPECT_EQ(PodOf(r, "default/urgent").node, "n1");
}

TEST(PreemptionOptions, LostWorkCostPreemptsTheVictimThatLosesLeast) {
  auto r = arbiter::testing::Plan(CostCluster(PreemptionArgs("{victimCost: LostWork}")), 0, /*explain=*/true);
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/small"}));
  EXPECT_EQ(PodOf(r, "default/urgent").node, "n2");
  bool said = false;
  for (const auto& c : r.cycles) {
    for (const auto& line : c.post_filter_explanation) said = said || line.find("least work lost (victimCost: LostWork)") != std::string::npos;
  }
  EXPECT_TRUE(said) << "the explanation names the rule that decided";
}

TEST(PreemptionOptions, LostWorkSaturatesInsteadOfOverflowing) {
  // 9 x 10^12 CPUs (absurd, but within what Arbiter accepts) for a year is beyond int64 milli-CPU
  // seconds.
  std::string y = Classes() + NodeY("n1").Cpu("9000000000000").Y() + NodeY("n2").Cpu("1").Y() +
                  PodY("huge").On("n1").PriorityClass("p50").Cpu("9000000000000")
                      .Status("  startTime: \"2025-01-01T00:00:00Z\"\n").Y() +
                  PodY("small").On("n2").PriorityClass("p50").Cpu("1").Status("  startTime: \"2025-01-01T00:00:00Z\"\n").Y() +
                  PodY("urgent").Metadata("  creationTimestamp: \"2026-01-01T11:00:00Z\"\n").PriorityClass("p100").Cpu("1").Y() +
                  PreemptionArgs("{victimCost: LostWork}");
  auto r = arbiter::testing::Plan(y);
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/small"}));
}

// --- victimSelection: Optimal ------------------------------------------------------------------
// A 4-CPU node runs `big` (priority 50, 2 CPUs, started first), `s1` and `s2` (50, 1 CPU each);
// `urgent` (100) needs 2 CPUs. Upstream's reprieve keeps the most important pod first (`big`) and
// so evicts two pods; `big` alone frees as much.
std::string GreedyMissCluster(const std::string& config) {
  return Classes() + NodeY("n1").Cpu("4").Y() +
         PodY("big").On("n1").PriorityClass("p50").Cpu("2").Status("  startTime: \"2026-01-01T09:00:00Z\"\n").Y() +
         PodY("s1").On("n1").PriorityClass("p50").Cpu("1").Status("  startTime: \"2026-01-01T10:00:00Z\"\n").Y() +
         PodY("s2").On("n1").PriorityClass("p50").Cpu("1").Status("  startTime: \"2026-01-01T10:00:00Z\"\n").Y() +
         PodY("urgent").Metadata("  creationTimestamp: \"2026-01-01T11:00:00Z\"\n").PriorityClass("p100").Cpu("2").Y() +
         config;
}

TEST(PreemptionOptions, UpstreamsGreedyReprieveEvictsTwoWhereOneSuffices) {
  auto r = arbiter::testing::Plan(GreedyMissCluster(""));
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/s1", "default/s2"}));
}

TEST(PreemptionOptions, OptimalEvictsTheFewestAndExplainsItsSearch) {
  auto r = arbiter::testing::Plan(GreedyMissCluster(PreemptionArgs("{victimSelection: Optimal}")), 0, /*explain=*/true);
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/big"}));
  EXPECT_TRUE(PodOf(r, "default/urgent").scheduled);
  bool said = false;
  for (const auto& c : r.cycles) {
    for (const auto& line : c.post_filter_explanation) {
      said = said || line.find("victimSelection Optimal searched 1 node(s)") != std::string::npos;
    }
  }
  EXPECT_TRUE(said);
  EXPECT_EQ(r.preemption_metrics.optimal_searches, 1u);
  EXPECT_EQ(r.preemption_metrics.optimal_fallbacks, 0u);
}

TEST(PreemptionOptions, OptimalPrefersALowerTopPriorityOverFewerVictims) {
  // `mid` (95, 2 CPUs) alone would do, but two priority-50 pods rank better: the highest victim
  // priority comes before the count, as in upstream's node choice.
  std::string y = Classes() + NodeY("n1").Cpu("4").Y() + PodY("mid").On("n1").PriorityClass("p95").Cpu("2").Y() +
                  PodY("s1").On("n1").PriorityClass("p50").Cpu("1").Y() +
                  PodY("s2").On("n1").PriorityClass("p50").Cpu("1").Y() +
                  PodY("urgent").PriorityClass("p100").Cpu("2").Y() + PreemptionArgs("{victimSelection: Optimal}");
  auto r = arbiter::testing::Plan(y);
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/s1", "default/s2"}));
}

TEST(PreemptionOptions, OptimalCountsBudgetViolationsAsEvictionsBeyondTheAllowance) {
  // A budget over `big` and `s1` allows one disruption. Upstream flags `s1` (after `big` took the
  // allowance) and evicts s1 and s2: one flagged violation. Optimal finds `big` alone, which stays
  // within the budget.
  std::string y = GreedyMissCluster(PreemptionArgs("{victimSelection: Optimal}"));
  y += "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: guard, namespace: default}\n"
       "spec:\n  maxUnavailable: 1\n  selector: {matchLabels: {guarded: \"yes\"}}\n";
  // Label big and s1 (the builder's pods carry {} labels): rewrite their label maps.
  for (const char* name : {"name: big\n", "name: s1\n"}) {
    const size_t at = y.find(name);
    ASSERT_NE(at, std::string::npos);
    const size_t labels = y.find("labels: {}", at);
    y.replace(labels, std::string("labels: {}").size(), "labels: {guarded: \"yes\"}");
  }
  auto r = arbiter::testing::Plan(y);
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/big"}));
  EXPECT_FALSE(r.preemptions[0].victims[0].violates_pdb);
}

TEST(PreemptionOptions, OptimalKeepsUpstreamsAnswerWhenItIsAlreadyBest) {
  // Every lower pod must go (the delta cluster's upstream answer is already the only set).
  auto upstream = arbiter::testing::Plan(DeltaCluster(""));
  auto optimal = arbiter::testing::Plan(DeltaCluster(PreemptionArgs("{victimSelection: Optimal}")));
  EXPECT_EQ(VictimNames(optimal), VictimNames(upstream));
  EXPECT_EQ(PodOf(optimal, "default/urgent").node, PodOf(upstream, "default/urgent").node);
}

// --- victimSelection Optimal for a pod group: alternative placements by topology domain -----
// Zone a: a1, a2 of 2 CPUs, each running a priority-50 pod of 1 CPU. Zone b: b1, b2 of 4 CPUs,
// each running a priority-95 pod of 3 CPUs. A gang of two (priority 100) needs 2 CPUs a pod. With
// every lower pod removed, the roomier zone-b nodes score best, so upstream places the gang there
// and evicts both priority-95 pods; preempting within zone a evicts two priority-50 pods instead.
std::string GangZonesCluster(const std::string& config) {
  std::string y = Classes();
  for (const char* n : {"a1", "a2"}) y += NodeY(n).Cpu("2").Labels("{topology.kubernetes.io/zone: a}").Y();
  for (const char* n : {"b1", "b2"}) y += NodeY(n).Cpu("4").Labels("{topology.kubernetes.io/zone: b}").Y();
  y += PodY("cheap-1").On("a1").PriorityClass("p50").Cpu("1").Y() + PodY("cheap-2").On("a2").PriorityClass("p50").Cpu("1").Y();
  y += PodY("dear-1").On("b1").PriorityClass("p95").Cpu("3").Y() + PodY("dear-2").On("b2").PriorityClass("p95").Cpu("3").Y();
  y += "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: train, namespace: default}\n"
       "spec:\n  schedulingPolicy: {gang: {minCount: 2}}\n  priorityClassName: p100\n";
  for (const char* n : {"train-0", "train-1"}) {
    y += PodY(n).PriorityClass("p100").Cpu("2").Spec("  schedulingGroup: {podGroupName: train}\n").Y();
  }
  return y + config;
}

TEST(PreemptionOptions, UpstreamPlacesAGangWhereTheRoomIsAndEvictsDearerPods) {
  auto r = arbiter::testing::Plan(GangZonesCluster(""));
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/dear-1", "default/dear-2"}));
  EXPECT_EQ(PodOf(r, "default/train-0").node.substr(0, 1), "b");
}

TEST(PreemptionOptions, OptimalTriesAGangPerTopologyDomainAndKeepsTheCheapestVictims) {
  auto r = arbiter::testing::Plan(GangZonesCluster(PreemptionArgs("{victimSelection: Optimal}")), 0, /*explain=*/true);
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/cheap-1", "default/cheap-2"}));
  EXPECT_TRUE(PodOf(r, "default/train-0").scheduled);
  EXPECT_EQ(PodOf(r, "default/train-0").node.substr(0, 1), "a");
  EXPECT_EQ(PodOf(r, "default/train-1").node.substr(0, 1), "a");
  bool said = false;
  for (const auto& c : r.cycles) {
    for (const auto& m : c.members) {
      for (const auto& line : m.post_filter_explanation) {
        said = said || line.find("preempting within topology.kubernetes.io/zone=a, 2 victim(s), ranks best") != std::string::npos;
      }
    }
  }
  EXPECT_TRUE(said);
}

TEST(PreemptionOptions, OptimalKeepsUpstreamsGangPlacementWhenNoDomainDoesBetter) {
  // Make zone a's pods as dear as zone b's: every attempt evicts two priority-95 pods, and the
  // upstream attempt comes first.
  std::string y = GangZonesCluster(PreemptionArgs("{victimSelection: Optimal}"));
  for (const char* name : {"name: cheap-1\n", "name: cheap-2\n"}) {
    const size_t at = y.find(name);
    ASSERT_NE(at, std::string::npos);
    const size_t pc = y.find("priorityClassName: p50", at);
    y.replace(pc, std::string("priorityClassName: p50").size(), "priorityClassName: p95");
  }
  auto r = arbiter::testing::Plan(y);
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/dear-1", "default/dear-2"}));
}

// --- the thrash guard: maxPreemptionsPerPod within preemptionWindowSeconds ---------------------
// A ReplicaSet `web` (uid rs-1) whose pods were preempted at 10:20 and 10:40 (its annotation, as a
// live scheduler writes it) runs `web-0` (priority 50, 2 CPUs, started 10:30) beside `batch`
// (50, 2 CPUs, started 10:00, no controller) on a 4-CPU node; `urgent` (100, 2 CPUs) was created
// at 11:00, the plan's now.
std::string ThrashCluster(const std::string& config) {
  return Classes() + NodeY("n1").Cpu("4").Y() +
         "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: web\n  namespace: default\n  uid: rs-1\n"
         "  annotations:\n    arbiter.dev/preemptions: '[\"2026-01-01T10:20:00Z\",\"2026-01-01T10:40:00Z\"]'\n"
         "spec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
         "    spec:\n      priorityClassName: p50\n      containers: [{name: c, image: x, resources: {requests: {cpu: \"2\"}}}]\n" +
         PodY("web-0")
             .On("n1")
             .Labels("{app: web}")
             .Metadata("  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: rs-1, controller: true}]\n")
             .PriorityClass("p50")
             .Cpu("2")
             .Status("  startTime: \"2026-01-01T10:30:00Z\"\n")
             .Y() +
         PodY("batch").On("n1").PriorityClass("p50").Cpu("2").Status("  startTime: \"2026-01-01T10:00:00Z\"\n").Y() +
         PodY("urgent").Metadata("  creationTimestamp: \"2026-01-01T11:00:00Z\"\n").PriorityClass("p100").Cpu("2").Y() +
         config;
}

TEST(PreemptionOptions, UpstreamPreemptsAPodWhateverItsLineageSuffered) {
  auto r = arbiter::testing::Plan(ThrashCluster(""));
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/web-0"}));
}

TEST(PreemptionOptions, TheThrashGuardSparesALineagePreemptedTooOftenInTheWindow) {
  // Two preemptions within the hour: web-0's lineage has had its share; `batch` goes instead.
  auto r = arbiter::testing::Plan(
      ThrashCluster(PreemptionArgs("{maxPreemptionsPerPod: 2, preemptionWindowSeconds: 3600}")));
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/batch"}));
  // Within 10 minutes (after 10:50) none counts: the guard does not apply.
  auto recent = arbiter::testing::Plan(
      ThrashCluster(PreemptionArgs("{maxPreemptionsPerPod: 2, preemptionWindowSeconds: 600}")));
  EXPECT_EQ(VictimNames(recent), (std::set<std::string>{"default/web-0"}));
}

TEST(PreemptionOptions, TheThrashGuardCountsEveryVictimOfOneDecision) {
  // Two replicas evicted by one decision share a time: the annotation holds it twice, and both
  // count.
  std::string y = ThrashCluster(PreemptionArgs("{maxPreemptionsPerPod: 2, preemptionWindowSeconds: 3600}"));
  const std::string two = "'[\"2026-01-01T10:20:00Z\",\"2026-01-01T10:40:00Z\"]'";
  y.replace(y.find(two), two.size(), "'[\"2026-01-01T10:40:00Z\",\"2026-01-01T10:40:00Z\"]'");
  auto r = arbiter::testing::Plan(y);
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/batch"}));
}

TEST(PreemptionOptions, TheThrashGuardCountsThePlansOwnPreemptions) {
  // Two 2-CPU nodes run one replica of `web` each (priority 50), a third runs `svc` (60); two
  // urgent pods need a node each. Upstream evicts both replicas (the lower priority); with one
  // preemption allowed per lineage, the second urgent pod takes `svc`'s node.
  std::string y = Classes() + NodeY("n1").Cpu("2").Y() + NodeY("n2").Cpu("2").Y() + NodeY("n3").Cpu("2").Y();
  for (const char* pod : {"web-0", "web-1"}) {
    y += PodY(pod)
             .On(std::string(pod) == "web-0" ? "n1" : "n2")
             .Metadata("  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: rs-1, controller: true}]\n")
             .PriorityClass("p50")
             .Cpu("2")
             .Y();
  }
  y += PodY("svc").On("n3").PriorityClass("p60").Cpu("2").Y() + PodY("urgent-a").PriorityClass("p100").Cpu("2").Y() +
       PodY("urgent-b").PriorityClass("p100").Cpu("2").Y();
  auto upstream = arbiter::testing::Plan(y);
  EXPECT_EQ(VictimNames(upstream), (std::set<std::string>{"default/web-0", "default/web-1"}));
  auto guarded = arbiter::testing::Plan(y + PreemptionArgs("{maxPreemptionsPerPod: 1, preemptionWindowSeconds: 3600}"));
  const auto victims = VictimNames(guarded);
  EXPECT_EQ(victims.size(), 2u);
  EXPECT_TRUE(victims.count("default/svc"));
}

TEST(PreemptionOptions, ABadPreemptionsAnnotationIsAnInputErrorNamingTheObject) {
  std::string y = ThrashCluster(PreemptionArgs("{maxPreemptionsPerPod: 2, preemptionWindowSeconds: 3600}"));
  const std::string good = "'[\"2026-01-01T10:20:00Z\",\"2026-01-01T10:40:00Z\"]'";
  y.replace(y.find(good), good.size(), "'[\"yesterday\"]'");
  manifest::LoadResult loaded = manifest::Load({{"test.yaml", y}});
  ASSERT_TRUE(loaded.ok());
  ASSERT_TRUE(admission::AdmitPriorities(loaded.objects).empty());
  auto r = sim::RunPlan(loaded.objects, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ReplicaSet default/web: metadata.annotations.arbiter.dev/preemptions"),
            std::string::npos)
      << r.status().message();
}

// --- crossNodePreemption ------------------------------------------------------------------------
// Zone a: n1 (4 CPUs, empty) and n2 (2 CPUs: `db-old`, priority 50, 1 CPU, app=db, beside `keep`,
// 200, 1 CPU); zone b: n3, full with a priority-200 pod. `db-new` (100, 2 CPUs, app=db) may not
// share a zone with another app=db pod. Only n1 has room, but `db-old` on n2 rejects it there.
std::string AntiAffinityCluster(const std::string& config) {
  return Classes() + "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: p200}\nvalue: 200\n" +
         NodeY("n1").Labels("{topology.kubernetes.io/zone: a}").Cpu("4").Y() +
         NodeY("n2").Labels("{topology.kubernetes.io/zone: a}").Cpu("2").Y() +
         NodeY("n3").Labels("{topology.kubernetes.io/zone: b}").Cpu("4").Y() +
         PodY("db-old").On("n2").Labels("{app: db}").PriorityClass("p50").Cpu("1").Y() +
         PodY("keep").On("n2").PriorityClass("p200").Cpu("1").Y() + PodY("big").On("n3").PriorityClass("p200").Cpu("4").Y() +
         PodY("db-new")
             .Labels("{app: db}")
             .PriorityClass("p100")
             .Cpu("2")
             .Spec(arbiter::testing::RequiredPodTerm("podAntiAffinity", "{app: db}", "topology.kubernetes.io/zone"))
             .Y() +
         config;
}

TEST(PreemptionOptions, UpstreamCannotHelpAPodRejectedByAPodOnAnotherNode) {
  auto r = arbiter::testing::Plan(AntiAffinityCluster(""));
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_FALSE(PodOf(r, "default/db-new").scheduled);
}

TEST(PreemptionOptions, CrossNodePreemptionEvictsTheRejectingPodOnAnotherNode) {
  auto r = arbiter::testing::Plan(AntiAffinityCluster(PreemptionArgs("{crossNodePreemption: true}")), 0,
                                  /*explain=*/true);
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/db-old"}));
  EXPECT_EQ(r.preemptions[0].victims[0].node, "n2");
  const auto& db = PodOf(r, "default/db-new");
  EXPECT_TRUE(db.scheduled);
  EXPECT_EQ(db.node, "n1");
  bool said = false;
  for (const auto& c : r.cycles) {
    for (const auto& line : c.post_filter_explanation) said = said || line.find("crossNodePreemption") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

TEST(PreemptionOptions, CrossNodePreemptionTakesOnlyWhatRejectsThePod) {
  // A second app=db pod in zone a: both must go, and nothing else of the zone.
  std::string y = AntiAffinityCluster(PreemptionArgs("{crossNodePreemption: true}"));
  y += PodY("db-older").On("n1").Labels("{app: db}").PriorityClass("p50").Cpu("1").Y();
  y += PodY("web").On("n1").Labels("{app: web}").PriorityClass("p50").Cpu("1").Y();
  auto r = arbiter::testing::Plan(y);
  EXPECT_EQ(VictimNames(r), (std::set<std::string>{"default/db-old", "default/db-older"}));
  EXPECT_EQ(PodOf(r, "default/db-new").node, "n1");
}

// --- decoding ----------------------------------------------------------------------------------
TEST(PreemptionOptions, BadValuesAreInputErrorsNamingTheField) {
  auto errors = arbiter::testing::LoadErrors(DeltaCluster(PreemptionArgs("{pdbPolicy: Never}")));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("args.pdbPolicy: must be BestEffort or Strict, not \"Never\""), std::string::npos) << errors[0];
  errors = arbiter::testing::LoadErrors(DeltaCluster(PreemptionArgs("{minRuntimeSeconds: -1}")));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("args.minRuntimeSeconds"), std::string::npos) << errors[0];
  errors = arbiter::testing::LoadErrors(DeltaCluster(PreemptionArgs("{minRuntimeSecond: 60}")));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("minRuntimeSecond"), std::string::npos) << errors[0];
  errors = arbiter::testing::LoadErrors(DeltaCluster(PreemptionArgs("{victimCost: Cheapest}")));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("args.victimCost: must be None or LostWork, not \"Cheapest\""), std::string::npos) << errors[0];
  errors = arbiter::testing::LoadErrors(DeltaCluster(PreemptionArgs("{maxPreemptionsPerPod: 3}")));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("maxPreemptionsPerPod and preemptionWindowSeconds must be set together"), std::string::npos)
      << errors[0];
  errors = arbiter::testing::LoadErrors(DeltaCluster(PreemptionArgs("{maxPreemptionsPerPod: 65, preemptionWindowSeconds: 60}")));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("args.maxPreemptionsPerPod"), std::string::npos) << errors[0];
  errors = arbiter::testing::LoadErrors(DeltaCluster(PreemptionArgs("{crossNodePreemption: sometimes}")));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("args.crossNodePreemption"), std::string::npos) << errors[0];
  errors = arbiter::testing::LoadErrors(DeltaCluster(PreemptionArgs("{priorityDelta: 0}")));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("args.priorityDelta"), std::string::npos) << errors[0];
}

}  // namespace
}  // namespace arbiter::sim::preemption_options
