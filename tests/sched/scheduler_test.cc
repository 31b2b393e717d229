// The scheduling cycle: how many nodes are filtered, where filtering starts, nominated nodes,
// nominated pods' reservations, the FailedScheduling message, and requeueing on events.
#include "arbiter/sched/cycle/scheduler.h"

#include <gtest/gtest.h>

#include "arbiter/sched/framework/fit_error.h"
#include "testing/plan_harness.h"

namespace arbiter::sched {
namespace {

using arbiter::testing::Node;
using arbiter::testing::Plan;
using arbiter::testing::Pod;
using arbiter::testing::PodOf;

TEST(NumFeasibleNodesToFind, FollowsTheAdaptivePercentage) {
  VirtualClock clock(0);
  Scheduler s(model::SchedulerConfig{}, &clock, {});
  EXPECT_EQ(s.NumFeasibleNodesToFind(50), 50u);      // under 100: every node
  EXPECT_EQ(s.NumFeasibleNodesToFind(100), 100u);    // 50% of 100 is below the floor of 100
  EXPECT_EQ(s.NumFeasibleNodesToFind(1000), 420u);   // 50 - 1000/125 = 42%
  EXPECT_EQ(s.NumFeasibleNodesToFind(5000), 500u);   // 10%
  EXPECT_EQ(s.NumFeasibleNodesToFind(6000), 300u);   // 2% is raised to the 5% minimum
  EXPECT_EQ(s.NumFeasibleNodesToFind(50000), 2500u);
}

TEST(NumFeasibleNodesToFind, HonoursAConfiguredPercentage) {
  VirtualClock clock(0);
  model::SchedulerConfig cfg;
  cfg.percentage_of_nodes_to_score = 20;
  Scheduler s(cfg, &clock, {});
  EXPECT_EQ(s.NumFeasibleNodesToFind(1000), 200u);
  EXPECT_EQ(s.NumFeasibleNodesToFind(300), 100u);  // never below 100
}

TEST(FitErrorMessage, CountsReasonsAndSortsThemAsStrings) {
  Diagnosis d;
  for (int i = 0; i < 10; ++i) d.node_to_status.statuses.push_back({nullptr, Status(Code::kUnschedulable, "Insufficient cpu")});
  for (int i = 0; i < 2; ++i) {
    d.node_to_status.statuses.push_back(
        {nullptr, Status(Code::kUnschedulable, std::vector<std::string>{"Insufficient cpu", "Insufficient memory"})});
  }
  EXPECT_EQ(FitErrorMessage(12, d), "0/12 nodes are available: 12 Insufficient cpu, 2 Insufficient memory.");
  d.node_to_status.statuses.resize(9);
  // Nodes without an entry take the absent status.
  d.node_to_status.absent = Status(Code::kUnschedulableAndUnresolvable, "node(s) didn't satisfy plugin NodeAffinity");
  EXPECT_EQ(FitErrorMessage(12, d),
            "0/12 nodes are available: 3 node(s) didn't satisfy plugin NodeAffinity, 9 Insufficient cpu.");
}

TEST(FitErrorMessage, PreFilterMessageReplacesTheHistogramAndPostFilterFollows) {
  Diagnosis d;
  d.node_to_status.statuses.push_back({nullptr, Status(Code::kUnschedulable, "Insufficient cpu")});
  d.pre_filter_message = "pod affinity terms conflict";
  d.post_filter_message = "preemption: not eligible due to preemptionPolicy=Never.";
  EXPECT_EQ(FitErrorMessage(3, d),
            "0/3 nodes are available: pod affinity terms conflict. preemption: not eligible due to "
            "preemptionPolicy=Never.");
}

std::string Nodes(int n, const std::string& cpu = "4") {
  std::string s;
  for (int i = 0; i < n; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "n%03d", i);
    s += Node(name, cpu, "32Gi", "110", std::string("{kubernetes.io/hostname: ") + name + "}");
  }
  return s;
}

TEST(Scheduler, FiltersOnlyAsManyNodesAsItNeedsAndRotatesTheStart) {
  // 200 nodes: the adaptive rule looks for 100 feasible nodes; the second pod starts where the
  // first stopped.
  auto r = Plan(Nodes(200) + Pod("a") + Pod("b"), 0, true);
  ASSERT_EQ(r.cycles.size(), 2u);
  ASSERT_EQ(r.cycles[0].explain->nodes.size(), 100u);
  EXPECT_EQ(r.cycles[0].explain->nodes.front().node, "n000");
  EXPECT_EQ(r.cycles[1].explain->nodes.front().node, "n100");
}

TEST(Scheduler, EvaluatesTheNominatedNodeAloneFirst) {
  // n1 is busier, so scoring would prefer n2; the pod's nomination sends it to n1.
  std::string yaml = Node("n1") + Node("n2") + Pod("busy", "3", "n1") +
                     "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                     "  - name: c\n    resources: {requests: {cpu: 500m}}\nstatus: {nominatedNodeName: n1}\n";
  auto r = Plan(yaml, 0, true);
  ASSERT_EQ(r.cycles.size(), 1u);
  EXPECT_TRUE(r.cycles[0].explain->nominated_node_first);
  EXPECT_EQ(r.cycles[0].explain->nodes.size(), 1u);
  EXPECT_EQ(PodOf(r, "default/p").node, "n1");
}

std::string Prio(const std::string& name, int value) {
  return "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " + name +
         "}\nvalue: " + std::to_string(value) + "\n";
}

std::string PendingPod(const std::string& name, const std::string& cls, const std::string& created,
                       const std::string& nominated = "") {
  std::string s = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", creationTimestamp: \"" +
                  created + "\"}\nspec:\n  priorityClassName: " + cls +
                  "\n  containers:\n  - name: c\n    resources: {requests: {cpu: \"1\"}}\n";
  if (!nominated.empty()) s += "status: {nominatedNodeName: " + nominated + "}\n";
  return s;
}

TEST(Scheduler, NominatedPodOfEqualPriorityKeepsItsRoom) {
  // `early` is popped first (earlier queue time) but must leave n1's last CPU to `nominee`.
  std::string yaml = Prio("p10", 10) + Node("n1", "1") + Node("n2", "1") +
                     PendingPod("nominee", "p10", "2026-01-01T00:00:10Z", "n1") +
                     PendingPod("early", "p10", "2026-01-01T00:00:00Z");
  auto r = Plan(yaml);
  ASSERT_EQ(r.pods.size(), 2u);
  EXPECT_EQ(r.pods[0].name, "default/early");
  EXPECT_EQ(PodOf(r, "default/early").node, "n2");
  EXPECT_EQ(PodOf(r, "default/nominee").node, "n1");
}

TEST(Scheduler, NominatedPodOfLowerPriorityDoesNotBlock) {
  std::string yaml = Prio("p10", 10) + Prio("p20", 20) + Node("n1", "1") +
                     PendingPod("nominee", "p10", "2026-01-01T00:00:00Z", "n1") +
                     PendingPod("urgent", "p20", "2026-01-01T00:00:10Z");
  auto r = Plan(yaml);
  EXPECT_EQ(PodOf(r, "default/urgent").node, "n1");
  EXPECT_FALSE(PodOf(r, "default/nominee").scheduled);
  // `urgent` is bound and holds the node; `nominee` is of lower priority than no one there.
  EXPECT_EQ(PodOf(r, "default/nominee").message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption "
            "victims found for incoming pod.");
}

TEST(Scheduler, PodWaitingOnAffinityIsRetriedWhenItsPartnerBinds) {
  // `web` (high priority) needs a `db` pod in its zone; `db` is pending too and is popped later.
  std::string yaml =
      Prio("high", 100) + Node("n1", "4", "32Gi", "110", "{topology.kubernetes.io/zone: z1}") +
      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  priorityClassName: high\n"
      "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "      - labelSelector: {matchLabels: {app: db}}\n        topologyKey: topology.kubernetes.io/zone\n"
      "  containers:\n  - name: c\n" +
      Pod("db", "100m", "", "{app: db}");
  auto r = Plan(yaml);
  ASSERT_EQ(r.pods.size(), 2u);
  EXPECT_EQ(r.pods[0].name, "default/web");
  EXPECT_EQ(PodOf(r, "default/web").node, "n1");
  EXPECT_EQ(PodOf(r, "default/web").attempts, 2);
  EXPECT_EQ(PodOf(r, "default/db").node, "n1");
}

TEST(Scheduler, PendingPodStaysPendingWithTheLastMessage) {
  auto r = Plan(Node("n1", "1") + Node("n2", "1", "32Gi", "110", "{}",
                                       "  taints:\n  - {key: dedicated, value: infra, effect: NoSchedule}\n") +
                Pod("big", "2"));
  auto p = PodOf(r, "default/big");
  EXPECT_FALSE(p.scheduled);
  EXPECT_EQ(p.message,
            "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). "
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
  EXPECT_EQ(p.attempts, 1);
}

TEST(Scheduler, NoNodesMeansNoPlacement) {
  auto r = Plan(Pod("lonely"));
  EXPECT_FALSE(PodOf(r, "default/lonely").scheduled);
  EXPECT_EQ(PodOf(r, "default/lonely").message, "no nodes available to schedule pods");
}

}  // namespace
}  // namespace arbiter::sched
