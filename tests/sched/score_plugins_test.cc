// Scenario tests for the in-tree score plugins, run through the whole plan pipeline. Each test
// builds two or three nodes that differ in one respect, checks which node the pod goes to, and
// reads the per-plugin normalised scores the cycle explains. Expected values are worked out by
// hand from kube-scheduler's formulas (integer arithmetic truncates unless a comment says
// otherwise).
#include <cstdio>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "arbiter/sched/plugins/imagelocality.h"
#include "testing/manifest_builders.h"
#include "testing/plan_harness.h"

namespace arbiter::sched {
namespace {

using arbiter::testing::Config;
using arbiter::testing::kZone;
using arbiter::testing::NodeY;
using arbiter::testing::Plan;
using arbiter::testing::PodOf;
using arbiter::testing::PodY;
using arbiter::testing::ProfileConfig;
using arbiter::testing::RequiredPodTerm;
using arbiter::testing::SoftSpreadWeb;
using arbiter::testing::WebPodsOn;
using arbiter::testing::ZoneLabels;

constexpr char kFit[] = "NodeResourcesFit";
constexpr char kBalanced[] = "NodeResourcesBalancedAllocation";
constexpr char kTaint[] = "TaintToleration";
constexpr char kNodeAffinity[] = "NodeAffinity";
constexpr char kPodAffinity[] = "InterPodAffinity";
constexpr char kSpread[] = "PodTopologySpread";

// ---------------------------------------------------------------------------------------------
// Manifests only these tests use (the shared builders are in testing/manifest_builders.h).

// A configuration that sets NodeResourcesFit's scoringStrategy; `strategy` holds its fields as
// lines indented by eight spaces.
std::string FitStrategy(const std::string& strategy) {
  return ProfileConfig("  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n" + strategy);
}

std::string ScoredNodes(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "n%03d", i);
    s += NodeY(name).Y();
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Reading explained cycles.

// The explanation of the first cycle of `pod`; fails the test if there is none.
const Explanation* FirstExplain(const sim::PlanResult& r, const std::string& pod) {
  for (const auto& c : r.cycles) {
    if (c.pod->pod.Key() == pod && c.explain) return &*c.explain;
  }
  ADD_FAILURE() << "no explained cycle for " << pod;
  return nullptr;
}

const ScoreTable* Table(const Explanation* e) {
  if (e == nullptr) return nullptr;
  if (!e->scores) {
    ADD_FAILURE() << "the cycle scored no nodes (" << e->why << ")";
    return nullptr;
  }
  return &*e->scores;
}

std::optional<size_t> PluginColumn(const ScoreTable& t, std::string_view plugin) {
  for (size_t k = 0; k < t.plugins.size(); ++k) {
    if (t.plugins[k] == plugin) return k;
  }
  return std::nullopt;
}

bool Scored(const Explanation& e, std::string_view plugin) {
  return e.scores && PluginColumn(*e.scores, plugin).has_value();
}

std::optional<size_t> NodeRow(const Explanation& e, const std::string& node) {
  for (size_t i = 0; i < e.score_nodes.size(); ++i) {
    if (e.score_nodes[i] == node) return i;
  }
  return std::nullopt;
}

// The normalised score `plugin` gave `node`; -1 (and a test failure) if it is not in the table.
int64_t ScoreOf(const Explanation& e, std::string_view plugin, const std::string& node) {
  if (!e.scores) {
    ADD_FAILURE() << "the cycle scored no nodes";
    return -1;
  }
  auto k = PluginColumn(*e.scores, plugin);
  auto i = NodeRow(e, node);
  if (!k || !i) {
    ADD_FAILURE() << "no score of " << plugin << " for " << node;
    return -1;
  }
  return e.scores->score(*i, *k);
}

int64_t TotalOf(const Explanation& e, const std::string& node) {
  auto i = NodeRow(e, node);
  if (!e.scores || !i) {
    ADD_FAILURE() << "no total for " << node;
    return -1;
  }
  return e.scores->totals[*i];
}

int32_t WeightOf(const ScoreTable& t, std::string_view plugin) {
  auto k = PluginColumn(t, plugin);
  if (!k) {
    ADD_FAILURE() << plugin << " did not score";
    return -1;
  }
  return t.weights[*k];
}

std::string ChosenNode(const sim::PlanResult& r, const std::string& pod) {
  const sim::PodPlan p = PodOf(r, pod);
  EXPECT_TRUE(p.scheduled) << pod << ": " << p.message;
  return p.node;
}

// ---------------------------------------------------------------------------------------------
// NodeResourcesFit: LeastAllocated (the default)

// Two 4-CPU / 8Gi nodes, "busy" already running 2 CPU / 4Gi, and a pending 1 CPU / 2Gi pod.
std::string HalfBusyPair() {
  return NodeY("free").Memory("8Gi").Y() + NodeY("busy").Memory("8Gi").Y() +
         PodY("running").On("busy").Cpu("2").Memory("4Gi").Y() + PodY("p").Cpu("1").Memory("2Gi").Y();
}

TEST(LeastAllocatedScore, PrefersTheEmptierNodeWithExactScores) {
  auto r = Plan(HalfBusyPair(), 0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "free");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // free: cpu (4000-1000)*100/4000 = 75, memory (8Gi-2Gi)*100/8Gi = 75, mean 75.
  // busy: cpu (4000-3000)*100/4000 = 25, memory (8Gi-6Gi)*100/8Gi = 25, mean 25.
  EXPECT_EQ(ScoreOf(*e, kFit, "free"), 75);
  EXPECT_EQ(ScoreOf(*e, kFit, "busy"), 25);
  // Both nodes are evenly used before and after, and nothing is tainted: balance 75 on each.
  EXPECT_EQ(ScoreOf(*e, kBalanced, "free"), 75);
  EXPECT_EQ(ScoreOf(*e, kBalanced, "busy"), 75);
  EXPECT_EQ(TotalOf(*e, "free"), 3 * 100 + 75 + 75);
  EXPECT_EQ(TotalOf(*e, "busy"), 3 * 100 + 25 + 75);
}

TEST(LeastAllocatedScore, TruncatesEachResourceAndTheirMean) {
  auto r = Plan(NodeY("free").Cpu("3").Memory("7Gi").Y() + NodeY("busy").Cpu("3").Memory("7Gi").Y() +
                    PodY("running").On("busy").Cpu("1").Memory("1Gi").Y() + PodY("p").Cpu("1").Memory("1Gi").Y(),
                0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "free");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // free: cpu 2000*100/3000 = 66, memory 6Gi*100/7Gi = 85, (66+85)/2 = 75 (not 76 from exact means).
  // busy: cpu 1000*100/3000 = 33, memory 5Gi*100/7Gi = 71, (33+71)/2 = 52.
  EXPECT_EQ(ScoreOf(*e, kFit, "free"), 75);
  EXPECT_EQ(ScoreOf(*e, kFit, "busy"), 52);
}

TEST(LeastAllocatedScore, CountsDefaultRequestsForContainersWithoutThem) {
  // Neither pod states a request, so each counts 100m CPU and 200Mi memory for scoring.
  auto r = Plan(NodeY("free").Cpu("1").Memory("2000Mi").Y() + NodeY("busy").Cpu("1").Memory("2000Mi").Y() +
                    PodY("running").On("busy").NoRequests().Y() + PodY("p").NoRequests().Y(),
                0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "free");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // free: (1000-100)*100/1000 = 90 and (2000Mi-200Mi)*100/2000Mi = 90.
  // busy: (1000-200)*100/1000 = 80 and (2000Mi-400Mi)*100/2000Mi = 80.
  EXPECT_EQ(ScoreOf(*e, kFit, "free"), 90);
  EXPECT_EQ(ScoreOf(*e, kFit, "busy"), 80);
}

TEST(LeastAllocatedScore, ScoresTheIncomingPodByItsContainersNotItsPodLevelRequest) {
  // Upstream's NodeResourcesFit scorer is built without the PodLevelResources flag (v1.37.2
  // NewFit), so the pending pod counts its containers' 1 CPU, not its pod-level 3; the filter
  // and NodeResourcesBalancedAllocation count the pod level. The running pod counts its pod
  // level (2 CPU) on its node, as the cache holds it.
  auto r = Plan(NodeY("free").Cpu("8").Memory("8Gi").Y() + NodeY("busy").Cpu("8").Memory("8Gi").Y() +
                    PodY("running").On("busy").Cpu("1").Memory("4Gi").Spec("  resources: {requests: {cpu: \"2\"}}\n").Y() +
                    PodY("p").Cpu("1").Memory("2Gi").Spec("  resources: {requests: {cpu: \"3\"}}\n").Y(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // free: cpu (8000-1000)*100/8000 = 87 (62 with the pod level), memory 6Gi/8Gi = 75: 81.
  // busy: cpu (8000-2000-1000)*100/8000 = 62, memory 2Gi/8Gi = 25: 43.
  EXPECT_EQ(ScoreOf(*e, kFit, "free"), 81);
  EXPECT_EQ(ScoreOf(*e, kFit, "busy"), 43);
  EXPECT_EQ(ChosenNode(r, "default/p"), "free");
}

TEST(LeastAllocatedScore, ExplicitZeroRequestIsNotReplacedByTheDefault) {
  auto r = Plan(NodeY("n1").Cpu("1").Memory("4Gi").Y() + NodeY("n2").Cpu("1").Memory("4Gi").Y() +
                    PodY("p").Cpu("0").Memory("1Gi").Y(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // cpu (1000-0)*100/1000 = 100, memory 3Gi*100/4Gi = 75, (100+75)/2 = 87. With the 100m default
  // the CPU part would be 90 and the mean 82.
  EXPECT_EQ(ScoreOf(*e, kFit, "n1"), 87);
  EXPECT_EQ(ScoreOf(*e, kFit, "n2"), 87);
}

// ---------------------------------------------------------------------------------------------
// NodeResourcesFit: MostAllocated and RequestedToCapacityRatio

TEST(MostAllocatedScore, PrefersTheFullerNode) {
  auto r = Plan(FitStrategy("        type: MostAllocated\n") + HalfBusyPair(), 0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "busy");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // free: 1000*100/4000 = 25 for both resources; busy: 3000*100/4000 = 75.
  EXPECT_EQ(ScoreOf(*e, kFit, "free"), 25);
  EXPECT_EQ(ScoreOf(*e, kFit, "busy"), 75);
  EXPECT_EQ(TotalOf(*e, "busy") - TotalOf(*e, "free"), 50);
}

TEST(MostAllocatedScore, WeighsResourcesAsConfigured) {
  auto r = Plan(FitStrategy("        type: MostAllocated\n        resources:\n"
                            "        - {name: cpu, weight: 3}\n        - {name: memory, weight: 1}\n") +
                    NodeY("small").Memory("8Gi").Y() + NodeY("wide").Cpu("8").Memory("8Gi").Y() +
                    PodY("p").Cpu("1").Memory("4Gi").Y(),
                0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "small");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // small: cpu 25, memory 50 -> (3*25 + 50)/4 = 31. wide: cpu 1000*100/8000 = 12 -> (36+50)/4 = 21.
  EXPECT_EQ(ScoreOf(*e, kFit, "small"), 31);
  EXPECT_EQ(ScoreOf(*e, kFit, "wide"), 21);
}

TEST(RequestedToCapacityRatioScore, FollowsTheConfiguredShape) {
  // The shape peaks at 50% utilisation, so the half-busy node wins where LeastAllocated would
  // pick the free one.
  const std::string shape =
      "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n          shape:\n"
      "          - {utilization: 0, score: 0}\n          - {utilization: 50, score: 10}\n"
      "          - {utilization: 100, score: 0}\n";
  auto r = Plan(FitStrategy(shape) + NodeY("free").Memory("8Gi").Y() + NodeY("quarter").Memory("8Gi").Y() +
                    PodY("running").On("quarter").Cpu("1").Memory("2Gi").Y() + PodY("p").Cpu("1").Memory("2Gi").Y(),
                0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "quarter");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // free: 25% on the 0->100 slope to 50% gives 50; quarter: 50% gives the peak, 100.
  EXPECT_EQ(ScoreOf(*e, kFit, "free"), 50);
  EXPECT_EQ(ScoreOf(*e, kFit, "quarter"), 100);
}

TEST(RequestedToCapacityRatioScore, RoundsTheMeanHalfAwayFromZero) {
  const std::string linear =
      "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n          shape:\n"
      "          - {utilization: 0, score: 0}\n          - {utilization: 100, score: 10}\n";
  auto r = Plan(FitStrategy(linear) + NodeY("small").Memory("10Gi").Y() + NodeY("large").Cpu("8").Memory("20Gi").Y() +
                    PodY("p").Cpu("1").Memory("3Gi").Y(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // small: cpu 25%, memory 30% -> 27.5 -> 28. large: cpu 12% (12.5 truncated), memory 15% -> 13.5 -> 14.
  EXPECT_EQ(ScoreOf(*e, kFit, "small"), 28);
  EXPECT_EQ(ScoreOf(*e, kFit, "large"), 14);
  EXPECT_EQ(ChosenNode(r, "default/p"), "small");
}

TEST(RequestedToCapacityRatioScore, LeavesZeroScoringResourcesOutOfTheMean) {
  const std::string linear =
      "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n          shape:\n"
      "          - {utilization: 0, score: 0}\n          - {utilization: 100, score: 10}\n";
  // The pod's memory (the 200Mi default) is under 1% of 32Gi and scores 0, so only CPU counts.
  auto r = Plan(FitStrategy(linear) + NodeY("n4").Y() + NodeY("n8").Cpu("8").Y() + PodY("p").Cpu("2").Y(), 0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_EQ(ScoreOf(*e, kFit, "n4"), 50);
  EXPECT_EQ(ScoreOf(*e, kFit, "n8"), 25);
}

// ---------------------------------------------------------------------------------------------
// NodeResourcesBalancedAllocation

TEST(BalancedAllocationScore, ScoresTheChangeThePodMakesToTheSpreadOfTheFractions) {
  // kube-scheduler >= 1.37: 50 + (50 + balance with the pod - balance without) / 2, balance
  // being 100 * (1 - std-dev of the fractions). Both nodes are empty (balance 100 without).
  auto r = Plan(NodeY("lopsided").Memory("8Gi").Y() + NodeY("even").Memory("16Gi").Y() +
                    PodY("p").Cpu("1").Memory("4Gi").Y(),
                0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "even");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // lopsided: cpu 1/4 = 0.25, memory 4/8 = 0.5, std 0.125 -> 87; 50 + (50 + 87 - 100) / 2 = 68.
  // even: 0.25 and 0.25 -> 100; 50 + (50 + 100 - 100) / 2 = 75.
  EXPECT_EQ(ScoreOf(*e, kBalanced, "lopsided"), 68);
  EXPECT_EQ(ScoreOf(*e, kBalanced, "even"), 75);
}

TEST(BalancedAllocationScore, PrefersTheNodeThePodRebalances) {
  // "busy" runs a CPU-only pod (cpu 0.5, memory 0: balance 75). A memory-only pod brings it
  // to 0.5 / 0.5 (balance 100): 50 + (50 + 25) / 2 = 87. On "idle" it unbalances an empty
  // node (100 -> 75): 50 + (50 - 25) / 2 = 62. Found by scripts/upstream-diff.sh (the score
  // before 1.37 was the balance with the pod alone, which favoured neither).
  auto r = Plan(NodeY("busy").Cpu("4").Memory("8Gi").Y() + NodeY("idle").Cpu("4").Memory("8Gi").Y() +
                    PodY("hog").On("busy").Cpu("2").Y() + PodY("p").Memory("4Gi").Y(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_EQ(ScoreOf(*e, kBalanced, "busy"), 87);
  EXPECT_EQ(ScoreOf(*e, kBalanced, "idle"), 62);
}

TEST(BalancedAllocationScore, CountsActualRequestsWithoutTheDefaults) {
  // "idle" runs a pod without requests. Fit counts it as 100m / 200Mi, balance as nothing: the
  // new pod's 0.5 CPU and 0.5 memory stay perfectly balanced (with the defaults CPU would be 0.6).
  auto r = Plan(NodeY("idle").Cpu("1").Y() + NodeY("empty").Cpu("1").Y() + PodY("sleeper").On("idle").NoRequests().Y() +
                    PodY("p").Cpu("500m").Memory("16Gi").Y(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_EQ(ScoreOf(*e, kBalanced, "idle"), 75);
  EXPECT_EQ(ScoreOf(*e, kBalanced, "empty"), 75);
  EXPECT_LT(ScoreOf(*e, kFit, "idle"), ScoreOf(*e, kFit, "empty"));
}

TEST(BalancedAllocationScore, IsSkippedForAPodWithoutRequests) {
  auto r = Plan(NodeY("n1").Y() + NodeY("n2").Y() + PodY("p").NoRequests().Y(), 0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_FALSE(Scored(*e, kBalanced));
  EXPECT_TRUE(Scored(*e, kFit));
  EXPECT_TRUE(PodOf(r, "default/p").scheduled);
}

// ---------------------------------------------------------------------------------------------
// TaintToleration

TEST(TaintTolerationScore, FewerUntoleratedPreferNoScheduleTaintsScoreHigher) {
  auto r = Plan(NodeY("two").Taint("spot", "PreferNoSchedule").Taint("old", "PreferNoSchedule").Y() +
                    NodeY("one").Taint("spot", "PreferNoSchedule").Y() + NodeY("none").Y() + PodY("p").Y(),
                0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "none");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // Counts 2, 1, 0 reversed against the maximum: 100 - 100*count/2.
  EXPECT_EQ(ScoreOf(*e, kTaint, "two"), 0);
  EXPECT_EQ(ScoreOf(*e, kTaint, "one"), 50);
  EXPECT_EQ(ScoreOf(*e, kTaint, "none"), 100);
}

TEST(TaintTolerationScore, OnlyTolerationsThatCoverPreferNoScheduleCount) {
  // The pod tolerates "spot" for PreferNoSchedule, but "old" only for NoSchedule.
  auto r = Plan(NodeY("spot").Taint("spot", "PreferNoSchedule").Y() + NodeY("old").Taint("old", "PreferNoSchedule").Y() +
                    PodY("p")
                        .Spec("  tolerations:\n  - {key: spot, operator: Exists, effect: PreferNoSchedule}\n"
                              "  - {key: old, operator: Exists, effect: NoSchedule}\n")
                        .Y(),
                0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "spot");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_EQ(ScoreOf(*e, kTaint, "spot"), 100);
  EXPECT_EQ(ScoreOf(*e, kTaint, "old"), 0);
}

TEST(TaintTolerationScore, UntaintedNodesAllScoreTheMaximum) {
  auto r = Plan(NodeY("n1").Y() + NodeY("n2").Y() + PodY("p").Y(), 0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_EQ(ScoreOf(*e, kTaint, "n1"), 100);
  EXPECT_EQ(ScoreOf(*e, kTaint, "n2"), 100);
}

// ---------------------------------------------------------------------------------------------
// NodeAffinity

TEST(NodeAffinityScore, SumsPreferredWeightsAndScalesToTheBestNode) {
  const std::string preferred =
      "  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
      "      - weight: 20\n        preference: {matchExpressions: [{key: disk, operator: In, values: [ssd]}]}\n"
      "      - weight: 60\n        preference: {matchExpressions: [{key: zone, operator: In, values: [a]}]}\n";
  auto r = Plan(NodeY("ssd").Labels("{disk: ssd}").Y() + NodeY("ssd-a").Labels("{disk: ssd, zone: a}").Y() +
                    NodeY("plain").Y() + PodY("p").Spec(preferred).Y(),
                0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "ssd-a");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // Raw 20, 80, 0 scaled by 100/80.
  EXPECT_EQ(ScoreOf(*e, kNodeAffinity, "ssd"), 25);
  EXPECT_EQ(ScoreOf(*e, kNodeAffinity, "ssd-a"), 100);
  EXPECT_EQ(ScoreOf(*e, kNodeAffinity, "plain"), 0);
}

TEST(NodeAffinityScore, IsSkippedWithoutPreferredTerms) {
  auto r = Plan(NodeY("n1").Labels("{disk: ssd}").Y() + NodeY("n2").Labels("{disk: ssd}").Y() +
                    PodY("p").Spec("  nodeSelector: {disk: ssd}\n").Y(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_FALSE(Scored(*e, kNodeAffinity));
}

// ---------------------------------------------------------------------------------------------
// InterPodAffinity

// Zones a, b and c with one node each; a cache pod in a and a noisy pod in b.
std::string ZonesWithCacheAndNoisy() {
  return NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("b1").Labels(ZoneLabels("b")).Y() +
         NodeY("c1").Labels(ZoneLabels("c")).Y() + PodY("cache").On("a1").Labels("{app: cache}").Y() +
         PodY("noisy").On("b1").Labels("{app: noisy}").Y();
}

std::string PreferredPodTerm(const std::string& kind, int weight, const std::string& match_labels) {
  return "    " + kind + ":\n      preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: " +
         std::to_string(weight) + "\n        podAffinityTerm:\n          labelSelector: {matchLabels: " +
         match_labels + "}\n          topologyKey: " + kZone + "\n";
}

TEST(InterPodAffinityScore, PreferredTermsAreScaledBetweenMinimumAndMaximum) {
  auto r = Plan(ZonesWithCacheAndNoisy() + PodY("p")
                                               .Spec("  affinity:\n" + PreferredPodTerm("podAffinity", 50, "{app: cache}") +
                                                     PreferredPodTerm("podAntiAffinity", 30, "{app: noisy}"))
                                               .Y(),
                0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "a1");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // Raw a +50, b -30, c 0; 100*(s-min)/(max-min) with min -30 and max 50.
  EXPECT_EQ(ScoreOf(*e, kPodAffinity, "a1"), 100);
  EXPECT_EQ(ScoreOf(*e, kPodAffinity, "b1"), 0);
  EXPECT_EQ(ScoreOf(*e, kPodAffinity, "c1"), 37);  // 37.5 truncated
}

TEST(InterPodAffinityScore, ExistingPodsRequiredAffinityAttractsWithTheHardWeight) {
  // c1 runs a pod that must be near web pods; a new web pod is drawn to it even though c1 is the
  // busier node.
  const std::string cluster =
      NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("b1").Labels(ZoneLabels("b")).Y() +
      NodeY("c1").Labels(ZoneLabels("c")).Y() +
      PodY("follower")
          .On("c1")
          .Spec(RequiredPodTerm("podAffinity", "{app: web}", kZone))
          .Y() +
      PodY("p").Labels("{app: web}").Y();
  auto r = Plan(cluster, 0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "c1");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_EQ(ScoreOf(*e, kPodAffinity, "c1"), 100);
  EXPECT_EQ(ScoreOf(*e, kPodAffinity, "a1"), 0);

  // With hardPodAffinityWeight 0 the pull is gone and the emptier nodes win.
  auto off = Plan(Config("profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
                         "      hardPodAffinityWeight: 0\n") +
                      cluster,
                  0, true);
  EXPECT_NE(ChosenNode(off, "default/p"), "c1");
  const Explanation* e_off = FirstExplain(off, "default/p");
  ASSERT_NE(Table(e_off), nullptr);
  EXPECT_FALSE(Scored(*e_off, kPodAffinity));
}

TEST(InterPodAffinityScore, TermsThatCancelOutStillTakePart) {
  // The pod both prefers and avoids the cache pod with the same weight: the domain's sum is 0,
  // but kube-scheduler still scores (every node 0) instead of skipping the plugin.
  auto r = Plan(ZonesWithCacheAndNoisy() + PodY("p")
                                               .Spec("  affinity:\n" + PreferredPodTerm("podAffinity", 10, "{app: cache}") +
                                                     PreferredPodTerm("podAntiAffinity", 10, "{app: cache}"))
                                               .Y(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  ASSERT_TRUE(Scored(*e, kPodAffinity));
  for (const char* node : {"a1", "b1", "c1"}) EXPECT_EQ(ScoreOf(*e, kPodAffinity, node), 0) << node;
}

TEST(InterPodAffinityScore, IsSkippedWhenNoTermConcernsThePod) {
  auto r = Plan(ZonesWithCacheAndNoisy() + PodY("p").Y(), 0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_FALSE(Scored(*e, kPodAffinity));
}

// ---------------------------------------------------------------------------------------------
// PodTopologySpread

TEST(PodTopologySpreadScore, ScheduleAnywayPrefersTheEmptierZone) {
  auto r = Plan(NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("b1").Labels(ZoneLabels("b")).Y() + WebPodsOn("a1", 2) +
                    PodY("p").Labels("{app: web}").Spec(SoftSpreadWeb(1, kZone)).Y(),
                0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "b1");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // Raw a: 2*ln(2+2) = 2.77 -> 3, b: 0. Normalised 100*(max+min-s)/max.
  EXPECT_EQ(ScoreOf(*e, kSpread, "a1"), 0);
  EXPECT_EQ(ScoreOf(*e, kSpread, "b1"), 100);
}

TEST(PodTopologySpreadScore, WeighsCountsByTheNumberOfDomains) {
  auto r = Plan(NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("b1").Labels(ZoneLabels("b")).Y() +
                    NodeY("c1").Labels(ZoneLabels("c")).Y() + WebPodsOn("a1", 3) + WebPodsOn("b1", 1) +
                    PodY("p").Labels("{app: web}").Spec(SoftSpreadWeb(2, kZone)).Y(),
                0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "c1");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  // Weight ln(3+2); raw a 3*1.609+1 = 5.83 -> 6, b 1.609+1 = 2.61 -> 3, c 0+1 = 1.
  // Normalised 100*(6+1-s)/6: a 16, b 66, c 100.
  EXPECT_EQ(ScoreOf(*e, kSpread, "a1"), 16);
  EXPECT_EQ(ScoreOf(*e, kSpread, "b1"), 66);
  EXPECT_EQ(ScoreOf(*e, kSpread, "c1"), 100);
}

TEST(PodTopologySpreadScore, NodesWithoutTheTopologyKeyScoreZero) {
  auto r = Plan(NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("bare").Y() + WebPodsOn("a1", 1) +
                    PodY("p").Labels("{app: web}").Spec(SoftSpreadWeb(1, kZone)).Y(),
                0, true);
  EXPECT_EQ(ChosenNode(r, "default/p"), "a1");
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_EQ(ScoreOf(*e, kSpread, "a1"), 100);
  EXPECT_EQ(ScoreOf(*e, kSpread, "bare"), 0);
}

// ---------------------------------------------------------------------------------------------
// Weights

TEST(ScoreWeights, DefaultProfileWeighsEachPluginAsKubeScheduler) {
  // A pod that gives every score plugin something to do.
  const std::string spec =
      "  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
      "      - weight: 10\n        preference: {matchExpressions: [{key: disk, operator: In, values: [ssd]}]}\n" +
      PreferredPodTerm("podAffinity", 10, "{app: cache}") + SoftSpreadWeb(1, kZone);
  auto r = Plan(NodeY("a1").Labels(std::string("{disk: ssd, ") + kZone + ": a}").Y() +
                    NodeY("b1").Labels(ZoneLabels("b")).Taint("spot", "PreferNoSchedule").Y() +
                    PodY("cache").On("b1").Labels("{app: cache}").Y() +
                    PodY("p").Labels("{app: web}").Cpu("1").Memory("1Gi").Spec(spec).Y(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  const ScoreTable* t = Table(e);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->plugins.size(), 6u);
  EXPECT_EQ(WeightOf(*t, kTaint), 3);
  EXPECT_EQ(WeightOf(*t, kNodeAffinity), 2);
  EXPECT_EQ(WeightOf(*t, kSpread), 2);
  EXPECT_EQ(WeightOf(*t, kPodAffinity), 2);
  EXPECT_EQ(WeightOf(*t, kFit), 1);
  EXPECT_EQ(WeightOf(*t, kBalanced), 1);
  for (const char* node : {"a1", "b1"}) {
    int64_t sum = 0;
    for (size_t k = 0; k < t->plugins.size(); ++k) sum += t->weights[k] * ScoreOf(*e, t->plugins[k], node);
    EXPECT_EQ(TotalOf(*e, node), sum) << node;
  }
}

TEST(ScoreWeights, ConfiguredWeightReplacesTheDefault) {
  auto r = Plan(Config("profiles:\n- plugins:\n    score:\n      enabled:\n      - {name: NodeResourcesFit, weight: 5}\n") +
                    HalfBusyPair(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  const ScoreTable* t = Table(e);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(WeightOf(*t, kFit), 5);
  EXPECT_EQ(TotalOf(*e, "free"), 3 * 100 + 5 * 75 + 75);
}

TEST(ScoreWeights, DisabledScorePluginLeavesTheTable) {
  auto r = Plan(Config("profiles:\n- plugins:\n    score:\n      disabled:\n      - name: TaintToleration\n") +
                    HalfBusyPair(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_FALSE(Scored(*e, kTaint));
  EXPECT_EQ(TotalOf(*e, "free"), 75 + 75);
}

// ---------------------------------------------------------------------------------------------
// percentageOfNodesToScore

size_t ScoredNodeCount(const std::string& yaml) {
  auto r = Plan(yaml + PodY("p").Y(), 0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  if (e == nullptr) return 0;
  EXPECT_EQ(e->nodes.size(), e->score_nodes.size()) << "every filtered node here is feasible";
  return e->score_nodes.size();
}

TEST(ScoreNodeSampling, EveryNodeIsScoredInClustersBelowOneHundredNodes) {
  EXPECT_EQ(ScoredNodeCount(ScoredNodes(99)), 99u);
}

TEST(ScoreNodeSampling, AdaptivePercentageNeverScoresFewerThanOneHundredNodes) {
  // 200 nodes: 50 - 200/125 = 49%, i.e. 98 nodes, raised to the floor of 100.
  EXPECT_EQ(ScoredNodeCount(ScoredNodes(200)), 100u);
}

TEST(ScoreNodeSampling, AdaptivePercentageShrinksAsTheClusterGrows) {
  // 500 nodes: 50 - 500/125 = 46%, i.e. 230 nodes.
  EXPECT_EQ(ScoredNodeCount(ScoredNodes(500)), 230u);
}

TEST(ScoreNodeSampling, ConfiguredPercentageOfNodesToScore) {
  EXPECT_EQ(ScoredNodeCount(Config("percentageOfNodesToScore: 70\n") + ScoredNodes(200)), 140u);
  // A percentage that gives fewer than 100 nodes is raised to 100.
  EXPECT_EQ(ScoredNodeCount(Config("percentageOfNodesToScore: 10\n") + ScoredNodes(200)), 100u);
}

// ---------------------------------------------------------------------------------------------
// Reproducibility and ties

TEST(ScoreTieBreak, SameInputAndSeedGiveTheSamePlan) {
  std::string yaml = ScoredNodes(4);
  for (int i = 0; i < 8; ++i) yaml += PodY("p" + std::to_string(i)).Y();
  for (uint64_t seed : {0u, 1u, 42u}) {
    auto a = Plan(yaml, seed);
    auto b = Plan(yaml, seed);
    ASSERT_EQ(a.pods.size(), 8u);
    ASSERT_EQ(b.pods.size(), a.pods.size());
    for (size_t i = 0; i < a.pods.size(); ++i) {
      EXPECT_EQ(a.pods[i].name, b.pods[i].name);
      EXPECT_EQ(a.pods[i].node, b.pods[i].node) << a.pods[i].name << " with seed " << seed;
      EXPECT_EQ(a.pods[i].message, b.pods[i].message);
    }
  }
}

TEST(ScoreTieBreak, SeedChoosesOnlyAmongEqualTopNodes) {
  // Two busy nodes score lower; the two free ones tie for the top.
  const std::string yaml = NodeY("busy-1").Y() + NodeY("free-1").Y() + NodeY("busy-2").Y() + NodeY("free-2").Y() +
                           PodY("r1").On("busy-1").Cpu("2").Y() + PodY("r2").On("busy-2").Cpu("2").Y() +
                           PodY("p").Y();
  std::set<std::string> chosen;
  for (uint64_t seed = 0; seed < 24; ++seed) {
    auto r = Plan(yaml, seed, true);
    const std::string node = ChosenNode(r, "default/p");
    EXPECT_TRUE(node == "free-1" || node == "free-2") << "seed " << seed << " chose " << node;
    chosen.insert(node);
    const Explanation* e = FirstExplain(r, "default/p");
    ASSERT_NE(Table(e), nullptr);
    EXPECT_EQ(TotalOf(*e, "free-1"), TotalOf(*e, "free-2"));
    EXPECT_GT(TotalOf(*e, "free-1"), TotalOf(*e, "busy-1"));
  }
  EXPECT_EQ(chosen.size(), 2u) << "the seed never changed the choice between equal nodes";
}

TEST(ScoreTieBreak, ClearWinnerDoesNotDependOnTheSeed) {
  const std::string yaml = NodeY("busy-1").Y() + NodeY("free").Y() + NodeY("busy-2").Y() +
                           PodY("r1").On("busy-1").Cpu("1").Y() + PodY("r2").On("busy-2").Cpu("1").Y() + PodY("p").Y();
  for (uint64_t seed = 0; seed < 16; ++seed) {
    EXPECT_EQ(ChosenNode(Plan(yaml, seed), "default/p"), "free") << "seed " << seed;
  }
}

}  // namespace
}  // namespace arbiter::sched

namespace arbiter::sched {
namespace {

// Where every pod of `yaml` ends, with fast paths (verdicts and raw scores remembered for
// equivalent pods on unchanged nodes) or without (every node filtered and scored afresh).
std::string Placements(const std::string& yaml, bool fast_paths) {
  manifest::LoadResult r = manifest::Load({{"test.yaml", yaml}});
  if (!r.ok()) return "load failed";
  if (!admission::AdmitPriorities(r.objects).empty()) return "admission failed";
  sim::PlanOptions o;
  o.seed = 5;
  o.fast_paths = fast_paths;
  auto result = sim::RunPlan(r.objects, o);
  if (!result.ok()) return "plan failed: " + result.status().message();
  std::string out;
  for (const auto& p : result->pods) out += p.name + "=" + p.node + " ";
  return out;
}

// Pods of a few shapes that share requests but not everything the scores read: tolerations of
// PreferNoSchedule taints, and a second container without requests (which the resource scores
// count at the default 100m / 200Mi). Nodes differ in size and taints, and fill up as pods land,
// so remembered scores must be dropped as nodes change and never shared across such pods.
TEST(ScoreMemo, ChoosesExactlyAsScoringEveryNodeAfresh) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int cluster = 0; cluster < 40; ++cluster) {
    std::string yaml;
    const int nodes = pick(3, 30);
    for (int i = 0; i < nodes; ++i) {
      std::string taints;
      if (pick(0, 2) == 0) {
        taints = "  taints:\n  - {key: dedicated, value: batch, effect: PreferNoSchedule}\n";
        if (pick(0, 1) == 0) taints += "  - {key: slow, effect: PreferNoSchedule}\n";
      }
      yaml += arbiter::testing::Node("n" + std::to_string(i), std::to_string(pick(2, 8)),
                                     std::to_string(pick(4, 32)) + "Gi", "110", "{}", taints);
    }
    const int pods = pick(10, 120);
    for (int i = 0; i < pods; ++i) {
      std::string spec;
      const int shape = pick(0, 3);
      if (shape == 1) spec = "  tolerations:\n  - {key: dedicated, operator: Exists}\n";
      if (shape == 2) spec = "  tolerations:\n  - {operator: Exists, effect: PreferNoSchedule}\n";
      std::string pod = arbiter::testing::Pod("p" + std::to_string(i), pick(0, 1) ? "250m" : "500m", "", "{}", spec);
      if (shape == 3) pod += "  - name: sidecar\n    image: x\n";
      yaml += pod;
    }
    const std::string fast = Placements(yaml, true);
    const std::string general = Placements(yaml, false);
    ASSERT_EQ(fast, general) << "cluster #" << cluster << "\n" << yaml;
    ASSERT_EQ(fast.find("failed"), std::string::npos) << fast;
  }
}


// ---------------------------------------------------------------------------------------------
// ImageLocality (upstream's TestImageLocalityPriority and TestNormalizedImageName, with Arbiter's
// own images). Scores: size * (nodes holding it / all nodes) summed per container, clamped to
// [23 MiB, 1000 MiB * containers], then 100 * (sum - 23 MiB) / (max - 23 MiB), truncated.

constexpr char kImage[] = "ImageLocality";
constexpr int64_t kMiB = 1024 * 1024;

TEST(ImageLocalityScore, NormalisesAnUntaggedImageToLatest) {
  using plugins::ImageLocality;
  EXPECT_EQ(ImageLocality::NormalizedImageName("app"), "app:latest");
  EXPECT_EQ(ImageLocality::NormalizedImageName("registry.example:5000/team/app"), "registry.example:5000/team/app:latest");
  EXPECT_EQ(ImageLocality::NormalizedImageName("app:1.2"), "app:1.2");
  EXPECT_EQ(ImageLocality::NormalizedImageName("registry.example:5000/app@sha256:00ff"), "registry.example:5000/app@sha256:00ff");
}

TEST(ImageLocalityScore, ClampsTheSumBetweenTheThresholds) {
  using plugins::ImageLocality;
  EXPECT_EQ(ImageLocality::CalculatePriority(0, 1), 0);
  EXPECT_EQ(ImageLocality::CalculatePriority(23 * kMiB, 1), 0);
  EXPECT_EQ(ImageLocality::CalculatePriority(5000 * kMiB, 1), 100);
  EXPECT_EQ(ImageLocality::CalculatePriority(5000 * kMiB, 3), 100);
  EXPECT_EQ(ImageLocality::CalculatePriority(1000 * kMiB, 2), 100 * (1000 - 23) / (2000 - 23));
}

TEST(ImageLocalityScore, ALargerImageOnOneOfTwoNodesScoresByItsSpread) {
  // Each image is on one of the two nodes (spread 1/2). "small": 48 MiB / 2 = 24 MiB, just over
  // the minimum: 100 * 1 / 1977 = 0. "large": 260 MiB / 2 = 130 MiB: 100 * 107 / 1977 = 5.
  auto r = Plan(NodeY("small").Image("tools/lint:3", 48 * kMiB).Y() + NodeY("large").Image("tools/build:3", 260 * kMiB).Y() +
                    PodY("p").Image("tools/lint:3").Image("tools/build:3").Y(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_EQ(ScoreOf(*e, kImage, "small"), 0);
  EXPECT_EQ(ScoreOf(*e, kImage, "large"), 5);
  EXPECT_EQ(WeightOf(*e->scores, kImage), 1);
  EXPECT_EQ(ChosenNode(r, "default/p"), "large");
}

TEST(ImageLocalityScore, ImagesOfInitContainersCountAndTagsAreNormalised) {
  // The init container's untagged "warmup" is the node's "warmup:latest" (600 MiB, spread 1/2 ->
  // 300 MiB); two containers: 100 * (300 - 23) / (2000 - 23) = 14.
  const std::string init = "  initContainers:\n  - name: i\n    image: warmup\n";
  auto r = Plan(NodeY("warm").Image("warmup:latest", 600 * kMiB).Y() + NodeY("cold").Y() +
                    PodY("p").Image("server:1").Spec(init).Y(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_EQ(ScoreOf(*e, kImage, "warm"), 14);
  EXPECT_EQ(ScoreOf(*e, kImage, "cold"), 0);
}

TEST(ImageLocalityScore, ThreeContainersAndANodeWithoutImages) {
  // All three images on "full" only, of three nodes: (300 + 600 + 900) MiB / 3 = 600 MiB over a
  // 3000 MiB maximum: 100 * 577 / 2977 = 19.
  auto r = Plan(NodeY("full").Image("a:1", 300 * kMiB).Image("b:1", 600 * kMiB).Image("c:1", 900 * kMiB).Y() +
                    NodeY("other").Image("d:1", 900 * kMiB).Y() + NodeY("bare").Y() +
                    PodY("p").Image("a:1").Image("b:1").Image("c:1").Y(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_EQ(ScoreOf(*e, kImage, "full"), 19);
  EXPECT_EQ(ScoreOf(*e, kImage, "other"), 0);
  EXPECT_EQ(ScoreOf(*e, kImage, "bare"), 0);
}

TEST(ImageLocalityScore, TheNodeHoldingALargeImageWinsATieWhateverTheSeed) {
  // Equal nodes but for an 800 MiB image on "cached" (spread 1/2: 400 MiB -> 19).
  const std::string cluster = NodeY("plain").Y() + NodeY("cached").Image("ml/trainer:7", 800 * kMiB).Y() +
                              PodY("p").Image("ml/trainer:7").Y();
  for (uint64_t seed = 0; seed < 8; ++seed) {
    auto r = Plan(cluster, seed);
    EXPECT_EQ(ChosenNode(r, "default/p"), "cached") << "seed " << seed;
  }
}

TEST(ImageLocalityScore, AnImageIsScoredAtTheSizeTheFirstNodeListingItGave) {
  // kube-scheduler keeps one size per image name, from the first node that listed it: "first"
  // reports 200 MiB, "second" 900 MiB for the same name, so both score 200 MiB * 2/3 = 133 MiB:
  // 100 * (133 - 23) / (1000 - 23) = 11. (With each node's own size "second" would score 59.)
  // Found by scripts/upstream-diff.sh.
  auto r = Plan(NodeY("first").Image("ml/trainer:7", 200 * kMiB).Y() + NodeY("second").Image("ml/trainer:7", 900 * kMiB).Y() +
                    NodeY("bare").Y() + PodY("p").Image("ml/trainer:7").Y(),
                0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_EQ(ScoreOf(*e, kImage, "first"), 11);
  EXPECT_EQ(ScoreOf(*e, kImage, "second"), 11);
  EXPECT_EQ(ScoreOf(*e, kImage, "bare"), 0);
}

TEST(ImageLocalityScore, APodWhoseImagesNoNodeHoldsIsNotScoredByIt) {
  auto r = Plan(NodeY("n1").Image("x:1", 500 * kMiB).Y() + NodeY("n2").Y() + PodY("p").Image("y:1").Y(), 0, true);
  const Explanation* e = FirstExplain(r, "default/p");
  ASSERT_NE(Table(e), nullptr);
  EXPECT_FALSE(Scored(*e, kImage));
}

}  // namespace
}  // namespace arbiter::sched
