// Scenario tests for the in-tree filter plugins, run through the whole plan pipeline: each test
// writes a small cluster as YAML, plans it, and checks where the pending pods land and, when they
// cannot, the exact FailedScheduling message kube-scheduler would give.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testing/manifest_builders.h"
#include "testing/plan_harness.h"

namespace arbiter::sched {
namespace {

using arbiter::testing::HostLabels;
using arbiter::testing::kZone;
using arbiter::testing::NodeY;
using arbiter::testing::Plan;
using arbiter::testing::PodOf;
using arbiter::testing::PodY;
using arbiter::testing::RequiredPodTerm;
using arbiter::testing::SpreadWeb;
using arbiter::testing::WebPodsOn;
using arbiter::testing::ZoneLabels;

// ---------------------------------------------------------------------------------------------
// Pod-spec fragments only these tests use (the shared builders are in testing/manifest_builders.h).

std::string Toleration(const std::string& flow_map) { return "  tolerations:\n  - " + flow_map + "\n"; }

// A required node affinity with one term per entry; each entry is a flow sequence of
// matchExpressions, e.g. "[{key: zone, operator: In, values: [a]}]".
std::string RequiredNodeTerms(const std::vector<std::string>& terms) {
  std::string s =
      "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "        nodeSelectorTerms:\n";
  for (const auto& t : terms) s += "        - matchExpressions: " + t + "\n";
  return s;
}

// A required node affinity whose single term has only these matchFields.
std::string RequiredNodeFields(const std::string& fields) {
  return "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
         "        nodeSelectorTerms:\n        - matchFields: " +
         fields + "\n";
}

// The cycle that explained the last attempt of `pod`.
const Explanation* LastExplain(const sim::PlanResult& r, const std::string& pod) {
  const Explanation* e = nullptr;
  for (const auto& c : r.cycles) {
    if (c.pod->pod.Key() == pod && c.explain) e = &*c.explain;
  }
  return e;
}

// The status `plugin` gave `node` in an explained cycle.
const Status* FilterVerdict(const Explanation& e, const std::string& node, const std::string& plugin) {
  for (const auto& v : e.nodes) {
    if (v.node != node) continue;
    for (const auto& s : v.filters) {
      if (s.plugin() == plugin) return &s;
    }
  }
  return nullptr;
}

void ExpectScheduledOn(const sim::PlanResult& r, const std::string& pod, const std::string& node) {
  const sim::PodPlan p = PodOf(r, pod);
  EXPECT_TRUE(p.scheduled) << pod << ": " << p.message;
  EXPECT_EQ(p.node, node) << pod;
}

// The filtering part of a FailedScheduling message: what precedes DefaultPreemption's
// " preemption: ..." suffix (the preemption tests check that part).
std::string FilterPart(const std::string& message) {
  const auto at = message.find(" preemption: ");
  return at == std::string::npos ? message : message.substr(0, at);
}

void ExpectPending(const sim::PlanResult& r, const std::string& pod, const std::string& message) {
  const sim::PodPlan p = PodOf(r, pod);
  EXPECT_FALSE(p.scheduled) << pod << " landed on " << p.node;
  EXPECT_EQ(FilterPart(p.message), message) << pod << ": " << p.message;
}

// ---------------------------------------------------------------------------------------------
// NodeUnschedulable

TEST(NodeUnschedulableFilter, SkipsCordonedNode) {
  auto r = Plan(NodeY("cordoned").Cordon().Y() + NodeY("open").Y() + PodY("p").Y());
  ExpectScheduledOn(r, "default/p", "open");
}

TEST(NodeUnschedulableFilter, RejectsPodWhenEveryNodeIsCordoned) {
  auto r = Plan(NodeY("n1").Cordon().Y() + NodeY("n2").Cordon().Y() + PodY("p").Y());
  ExpectPending(r, "default/p", "0/2 nodes are available: 2 node(s) were unschedulable.");
}

TEST(NodeUnschedulableFilter, AdmitsPodToleratingTheUnschedulableTaint) {
  auto r = Plan(NodeY("n1").Cordon().Y() +
                PodY("p").Spec(Toleration("{key: node.kubernetes.io/unschedulable, operator: Exists, "
                                          "effect: NoSchedule}"))
                    .Y());
  ExpectScheduledOn(r, "default/p", "n1");
}

TEST(NodeUnschedulableFilter, NoExecuteTolerationDoesNotCoverACordon) {
  auto r = Plan(NodeY("n1").Cordon().Y() +
                PodY("p").Spec(Toleration("{key: node.kubernetes.io/unschedulable, operator: Exists, "
                                          "effect: NoExecute}"))
                    .Y());
  ExpectPending(r, "default/p", "0/1 nodes are available: 1 node(s) were unschedulable.");
}

// ---------------------------------------------------------------------------------------------
// TaintToleration

TEST(TaintTolerationFilter, RejectsNodeWithUntoleratedNoScheduleTaint) {
  auto r = Plan(NodeY("gpu").Taint("dedicated", "gpu", "NoSchedule").Y() + NodeY("small").Cpu("1").Y() +
                PodY("p").Cpu("2").Y());
  ExpectPending(r, "default/p",
                "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s).");
}

TEST(TaintTolerationFilter, AvoidsTaintedNodeWhenAnotherFits) {
  auto r = Plan(NodeY("gpu").Taint("dedicated", "gpu", "NoSchedule").Y() + NodeY("plain").Y() + PodY("p").Y());
  ExpectScheduledOn(r, "default/p", "plain");
}

TEST(TaintTolerationFilter, RejectsNoExecuteTaintAndPrintsAnEmptyValue) {
  auto r = Plan(NodeY("n1").Taint("maintenance", "", "NoExecute").Y() + PodY("p").Y());
  ExpectPending(r, "default/p", "0/1 nodes are available: 1 node(s) had untolerated taint(s).");
}

TEST(TaintTolerationFilter, ReportsTheFirstUntoleratedHardTaintInNodeOrder) {
  // "a" is tolerated and "b" only prefers; "c" is the first that blocks, "d" is never reached.
  auto r = Plan(NodeY("n1")
                    .Taint("a", "1", "NoSchedule")
                    .Taint("b", "2", "PreferNoSchedule")
                    .Taint("c", "3", "NoExecute")
                    .Taint("d", "4", "NoSchedule")
                    .Y() +
                PodY("p").Spec(Toleration("{key: a, operator: Equal, value: \"1\"}")).Y());
  ExpectPending(r, "default/p", "0/1 nodes are available: 1 node(s) had untolerated taint(s).");
}

TEST(TaintTolerationFilter, PreferNoScheduleTaintDoesNotFilter) {
  auto r = Plan(NodeY("n1").Taint("spot", "true", "PreferNoSchedule").Y() + PodY("p").Y());
  ExpectScheduledOn(r, "default/p", "n1");
}

TEST(TaintTolerationFilter, EqualTolerationNeedsTheSameValue) {
  auto r = Plan(NodeY("n1").Taint("dedicated", "gpu", "NoSchedule").Y() +
                PodY("other-value").Spec(Toleration("{key: dedicated, operator: Equal, value: ml}")).Y() +
                PodY("same-value").Spec(Toleration("{key: dedicated, operator: Equal, value: gpu}")).Y() +
                PodY("no-operator").Spec(Toleration("{key: dedicated, value: gpu}")).Y());
  ExpectPending(r, "default/other-value",
                "0/1 nodes are available: 1 node(s) had untolerated taint(s).");
  ExpectScheduledOn(r, "default/same-value", "n1");
  ExpectScheduledOn(r, "default/no-operator", "n1");  // the operator defaults to Equal
}

TEST(TaintTolerationFilter, ExistsTolerationMatchesAnyValueOfItsKeyOnly) {
  auto r = Plan(NodeY("n1").Taint("dedicated", "gpu", "NoSchedule").Y() +
                PodY("same-key").Spec(Toleration("{key: dedicated, operator: Exists}")).Y() +
                PodY("other-key").Spec(Toleration("{key: team, operator: Exists}")).Y());
  ExpectScheduledOn(r, "default/same-key", "n1");
  ExpectPending(r, "default/other-key", "0/1 nodes are available: 1 node(s) had untolerated taint(s).");
}

TEST(TaintTolerationFilter, EmptyKeyExistsToleratesEveryTaint) {
  auto r = Plan(NodeY("n1")
                    .Taint("dedicated", "gpu", "NoSchedule")
                    .Taint("maintenance", "", "NoExecute")
                    .Taint("spot", "true", "PreferNoSchedule")
                    .Y() +
                PodY("p").Spec(Toleration("{operator: Exists}")).Y());
  ExpectScheduledOn(r, "default/p", "n1");
}

TEST(TaintTolerationFilter, TolerationWithAnEffectCoversOnlyThatEffect) {
  auto r = Plan(NodeY("n1").Taint("dedicated", "gpu", "NoExecute").Y() +
                PodY("noschedule-only")
                    .Spec(Toleration("{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}"))
                    .Y() +
                PodY("noexecute")
                    .Spec(Toleration("{key: dedicated, operator: Equal, value: gpu, effect: NoExecute}"))
                    .Y() +
                PodY("any-effect").Spec(Toleration("{key: dedicated, operator: Equal, value: gpu}")).Y());
  ExpectPending(r, "default/noschedule-only",
                "0/1 nodes are available: 1 node(s) had untolerated taint(s).");
  ExpectScheduledOn(r, "default/noexecute", "n1");
  ExpectScheduledOn(r, "default/any-effect", "n1");
}

// ---------------------------------------------------------------------------------------------
// NodeAffinity

TEST(NodeAffinityFilter, NodeSelectorPicksTheLabelledNode) {
  auto r = Plan(NodeY("hdd").Labels("{disk: hdd}").Y() + NodeY("ssd").Labels("{disk: ssd}").Y() +
                PodY("p").Spec("  nodeSelector: {disk: ssd}\n").Y());
  ExpectScheduledOn(r, "default/p", "ssd");
}

TEST(NodeAffinityFilter, RejectsWhenNoNodeMatchesTheNodeSelector) {
  auto r = Plan(NodeY("hdd").Labels("{disk: hdd}").Y() + NodeY("ssd").Labels("{disk: ssd}").Y() +
                PodY("p").Spec("  nodeSelector: {disk: nvme}\n").Y());
  ExpectPending(r, "default/p", "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.");
}

TEST(NodeAffinityFilter, NodeSelectorAndRequiredAffinityMustBothHold) {
  auto r = Plan(NodeY("ssd-a").Labels("{disk: ssd, zone: a}").Y() + NodeY("hdd-b").Labels("{disk: hdd, zone: b}").Y() +
                NodeY("ssd-b").Labels("{disk: ssd, zone: b}").Y() +
                PodY("p")
                    .Spec("  nodeSelector: {disk: ssd}\n" +
                          RequiredNodeTerms({"[{key: zone, operator: In, values: [b]}]"}))
                    .Y());
  ExpectScheduledOn(r, "default/p", "ssd-b");
}

TEST(NodeAffinityFilter, RequiredTermsAreOred) {
  auto r = Plan(NodeY("in-a").Labels("{zone: a}").Y() + NodeY("in-b").Labels("{zone: b}").Y() +
                PodY("p")
                    .Spec(RequiredNodeTerms({"[{key: zone, operator: In, values: [x]}]",
                                             "[{key: zone, operator: In, values: [b]}]"}))
                    .Y());
  ExpectScheduledOn(r, "default/p", "in-b");
}

TEST(NodeAffinityFilter, ExpressionsWithinATermAreAnded) {
  auto r = Plan(NodeY("a-hdd").Labels("{zone: a, disk: hdd}").Y() + NodeY("b-ssd").Labels("{zone: b, disk: ssd}").Y() +
                NodeY("c-ssd").Labels("{zone: c, disk: ssd}").Y() +
                PodY("p")
                    .Spec(RequiredNodeTerms(
                        {"[{key: zone, operator: In, values: [a, b]}, {key: disk, operator: In, values: [ssd]}]"}))
                    .Y());
  ExpectScheduledOn(r, "default/p", "b-ssd");
}

TEST(NodeAffinityFilter, NotInExcludesListedValuesButMatchesAMissingKey) {
  auto r = Plan(NodeY("in-a").Labels("{zone: a}").Y() + NodeY("unlabelled").Y() +
                PodY("p").Spec(RequiredNodeTerms({"[{key: zone, operator: NotIn, values: [a]}]"})).Y());
  ExpectScheduledOn(r, "default/p", "unlabelled");
}

TEST(NodeAffinityFilter, ExistsAndDoesNotExistTestOnlyKeyPresence) {
  auto r = Plan(NodeY("gpu").Labels("{gpu: nvidia}").Y() + NodeY("plain").Labels("{cpu-only: \"yes\"}").Y() +
                PodY("wants-gpu").Spec(RequiredNodeTerms({"[{key: gpu, operator: Exists}]"})).Y() +
                PodY("avoids-gpu").Spec(RequiredNodeTerms({"[{key: gpu, operator: DoesNotExist}]"})).Y());
  ExpectScheduledOn(r, "default/wants-gpu", "gpu");
  ExpectScheduledOn(r, "default/avoids-gpu", "plain");
}

TEST(NodeAffinityFilter, GtAndLtCompareLabelValuesAsIntegers) {
  auto r = Plan(NodeY("c8").Labels("{cores: \"8\"}").Y() + NodeY("c16").Labels("{cores: \"16\"}").Y() +
                NodeY("c32").Labels("{cores: \"32\"}").Y() + NodeY("odd").Labels("{cores: many}").Y() +
                PodY("mid").Spec(RequiredNodeTerms(
                                     {"[{key: cores, operator: Gt, values: [\"8\"]}, {key: cores, operator: Lt, "
                                      "values: [\"32\"]}]"}))
                    .Y() +
                PodY("huge").Spec(RequiredNodeTerms({"[{key: cores, operator: Gt, values: [\"100\"]}]"})).Y());
  ExpectScheduledOn(r, "default/mid", "c16");
  ExpectPending(r, "default/huge", "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector.");
}

TEST(NodeAffinityFilter, MatchFieldsOnMetadataNameSelectsByNodeName) {
  auto r = Plan(NodeY("n1").Y() + NodeY("n2").Y() + NodeY("n3").Y() +
                PodY("pinned").Spec(RequiredNodeFields("[{key: metadata.name, operator: In, values: [n3]}]")).Y() +
                PodY("not-n1-n3")
                    .Spec(RequiredNodeFields("[{key: metadata.name, operator: NotIn, values: [n1, n3]}]"))
                    .Y());
  ExpectScheduledOn(r, "default/pinned", "n3");
  ExpectScheduledOn(r, "default/not-n1-n3", "n2");
}

TEST(NodeAffinityFilter, NodesOutsideANamePinCountAsNotSatisfyingThePlugin) {
  auto r = Plan(NodeY("pinned").Cpu("1").Y() + NodeY("other").Y() +
                PodY("p").Cpu("2").Spec(RequiredNodeFields("[{key: metadata.name, operator: In, values: [pinned]}]")).Y());
  ExpectPending(r, "default/p",
                "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [NodeAffinity].");
}

TEST(NodeAffinityFilter, NamePinsWithinOneTermIntersect) {
  // {n1, n2} and {n2, n3} leave n2 alone to be filtered; n1 is outside the pin like any other.
  auto r = Plan(NodeY("n1").Y() + NodeY("n2").Cpu("1").Y() +
                PodY("p")
                    .Cpu("2")
                    .Spec(RequiredNodeFields("[{key: metadata.name, operator: In, values: [n1, n2]}, "
                                             "{key: metadata.name, operator: In, values: [n2, n3]}]"))
                    .Y());
  ExpectPending(r, "default/p",
                "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [NodeAffinity].");
}

TEST(NodeAffinityFilter, DisjointNamePinsInATermConflict) {
  auto r = Plan(NodeY("n1").Y() + NodeY("n2").Y() +
                PodY("p")
                    .Spec(RequiredNodeFields("[{key: metadata.name, operator: In, values: [n1]}, "
                                             "{key: metadata.name, operator: In, values: [n2]}]"))
                    .Y());
  ExpectPending(r, "default/p", "0/2 nodes are available: pod affinity terms conflict.");
}

TEST(NodeAffinityFilter, NamePinToAnUnknownNodeLeavesNothingToFilter) {
  auto r = Plan(NodeY("n1").Y() + NodeY("n2").Y() +
                PodY("p").Spec(RequiredNodeFields("[{key: metadata.name, operator: In, values: [ghost]}]")).Y());
  ExpectPending(r, "default/p", "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity].");
}

// ---------------------------------------------------------------------------------------------
// NodePorts

TEST(NodePortsFilter, AvoidsNodeWhoseHostPortIsTaken) {
  auto r = Plan(NodeY("n1").Y() + NodeY("n2").Y() + PodY("running").On("n1").HostPort(8080).Y() +
                PodY("p").HostPort(8080).Y());
  ExpectScheduledOn(r, "default/p", "n2");
}

TEST(NodePortsFilter, RejectsWhenThePortIsTakenEverywhere) {
  auto r = Plan(NodeY("n1").Y() + PodY("running").On("n1").HostPort(8080).Y() + PodY("p").HostPort(8080).Y());
  ExpectPending(r, "default/p",
                "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.");
}

TEST(NodePortsFilter, SamePortUnderAnotherProtocolFits) {
  auto r = Plan(NodeY("n1").Y() + PodY("dns").On("n1").HostPort(53, "UDP").Y() + PodY("tcp").HostPort(53, "TCP").Y() +
                PodY("udp").HostPort(53, "UDP").Y());
  ExpectScheduledOn(r, "default/tcp", "n1");
  ExpectPending(r, "default/udp",
                "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.");
}

TEST(NodePortsFilter, DistinctHostIPsShareAPortButTheWildcardDoesNot) {
  const std::string msg = "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.";
  auto r = Plan(NodeY("n1").Y() + PodY("running").On("n1").HostPort(8080, "TCP", "10.0.0.1").Y() +
                PodY("other-ip").HostPort(8080, "TCP", "10.0.0.2").Y() +
                PodY("same-ip").HostPort(8080, "TCP", "10.0.0.1").Y() + PodY("wildcard").HostPort(8080).Y());
  ExpectScheduledOn(r, "default/other-ip", "n1");
  ExpectPending(r, "default/same-ip", msg);
  ExpectPending(r, "default/wildcard", msg);
}

TEST(NodePortsFilter, WildcardOnTheNodeBlocksEverySpecificIP) {
  auto r = Plan(NodeY("n1").Y() + PodY("running").On("n1").HostPort(8080).Y() +
                PodY("p").HostPort(8080, "TCP", "10.0.0.2").Y());
  ExpectPending(r, "default/p",
                "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.");
}

// ---------------------------------------------------------------------------------------------
// NodeResourcesFit

TEST(NodeResourcesFitFilter, RejectsNodeAtItsPodLimitEvenForAPodWithoutRequests) {
  auto r = Plan(NodeY("n1").MaxPods("1").Y() + PodY("running").On("n1").Y() + PodY("p").NoRequests().Y());
  ExpectPending(r, "default/p", "0/1 nodes are available: 1 Too many pods.");
}

TEST(NodeResourcesFitFilter, ReportsEveryInsufficientResourceOfANode) {
  auto r = Plan(NodeY("n1")
                    .Memory("8Gi")
                    .Allocatable("ephemeral-storage", "20Gi")
                    .Allocatable("example.com/gpu", "2")
                    .Y() +
                PodY("running")
                    .On("n1")
                    .Cpu("3")
                    .Request("memory", "6Gi")
                    .Request("ephemeral-storage", "15Gi")
                    .Request("example.com/gpu", "2")
                    .Y() +
                PodY("p")
                    .Cpu("2")
                    .Request("memory", "4Gi")
                    .Request("ephemeral-storage", "10Gi")
                    .Request("example.com/gpu", "1")
                    .Y());
  ExpectPending(r, "default/p",
                "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient ephemeral-storage, "
                "1 Insufficient example.com/gpu, 1 Insufficient memory.");
}

TEST(NodeResourcesFitFilter, TooManyPodsComesWithTheResourceReasons) {
  auto r = Plan(NodeY("n1").MaxPods("1").Cpu("1").Y() + PodY("running").On("n1").Y() + PodY("p").Cpu("2").Y());
  ExpectPending(r, "default/p", "0/1 nodes are available: 1 Insufficient cpu, 1 Too many pods.");
}

TEST(NodeResourcesFitFilter, CountsEachReasonOncePerNode) {
  auto r = Plan(NodeY("cpu-short").Cpu("1").Y() + NodeY("both-short").Cpu("1").Memory("1Gi").Y() +
                PodY("p").Cpu("2").Request("memory", "2Gi").Y());
  // Sorted as strings, the memory count comes first.
  ExpectPending(r, "default/p", "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.");
}

TEST(NodeResourcesFitFilter, ExtendedResourceGoesWhereTheNodeHasIt) {
  auto r = Plan(NodeY("plain").Y() + NodeY("fpga").Allocatable("example.com/fpga", "1").Y() +
                PodY("p").Cpu("1").Request("example.com/fpga", "1").Y());
  ExpectScheduledOn(r, "default/p", "fpga");
}

TEST(NodeResourcesFitFilter, FitsExactlyTheRemainingCapacity) {
  auto r = Plan(NodeY("n1").Y() + PodY("running").On("n1").Cpu("2").Y() + PodY("p").Cpu("2").Y());
  ExpectScheduledOn(r, "default/p", "n1");
}

TEST(NodeResourcesFitFilter, InitContainerLargerThanTheContainersSetsTheRequest) {
  const std::string cluster = NodeY("n1").Y() + PodY("running").On("n1").Cpu("2").Y();
  auto too_big = Plan(cluster + PodY("p").Cpu("1").InitContainer("3").Y());
  ExpectPending(too_big, "default/p", "0/1 nodes are available: 1 Insufficient cpu.");
  auto fits = Plan(cluster + PodY("p").Cpu("1").InitContainer("2").Y());
  ExpectScheduledOn(fits, "default/p", "n1");
}

TEST(NodeResourcesFitFilter, SidecarInitContainerAddsToTheContainers) {
  const std::string cluster = NodeY("n1").Y() + PodY("running").On("n1").Cpu("2").Y();
  auto too_big = Plan(cluster + PodY("p").Cpu("1500m").InitContainer("1", /*sidecar=*/true).Y());
  ExpectPending(too_big, "default/p", "0/1 nodes are available: 1 Insufficient cpu.");
  auto fits = Plan(cluster + PodY("p").Cpu("1").InitContainer("1", /*sidecar=*/true).Y());
  ExpectScheduledOn(fits, "default/p", "n1");
}

TEST(NodeResourcesFitFilter, PodOverheadIsCounted) {
  const std::string cluster = NodeY("n1").Y() + PodY("running").On("n1").Cpu("2").Y();
  auto with_overhead = Plan(cluster + PodY("p").Cpu("1500m").OverheadCpu("1").Y());
  ExpectPending(with_overhead, "default/p", "0/1 nodes are available: 1 Insufficient cpu.");
  auto without = Plan(cluster + PodY("p").Cpu("1500m").Y());
  ExpectScheduledOn(without, "default/p", "n1");
}

TEST(NodeResourcesFitFilter, RequestAboveTotalAllocatableIsReportedAndUnresolvable) {
  // Both nodes lack CPU, but only "busy" could ever make room by losing pods.
  auto r = Plan(NodeY("small").Cpu("2").Y() + NodeY("busy").Y() + PodY("running").On("busy").Cpu("3").Y() +
                    PodY("p").Cpu("3").Y(),
                0, /*explain=*/true);
  ExpectPending(r, "default/p", "0/2 nodes are available: 2 Insufficient cpu.");
  const Explanation* e = LastExplain(r, "default/p");
  ASSERT_NE(e, nullptr);
  const Status* small = FilterVerdict(*e, "small", "NodeResourcesFit");
  const Status* busy = FilterVerdict(*e, "busy", "NodeResourcesFit");
  ASSERT_NE(small, nullptr);
  ASSERT_NE(busy, nullptr);
  EXPECT_EQ(small->code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(busy->code(), Code::kUnschedulable);
}

// ---------------------------------------------------------------------------------------------
// InterPodAffinity

TEST(InterPodAffinityFilter, RequiredAffinityFollowsAnExistingPodIntoItsZone) {
  auto r = Plan(NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("a2").Labels(ZoneLabels("a")).Y() +
                NodeY("b1").Labels(ZoneLabels("b")).Y() + NodeY("b2").Labels(ZoneLabels("b")).Y() +
                PodY("db").On("b1").Labels("{app: db}").Y() +
                PodY("p").Labels("{app: web}").Spec(RequiredPodTerm("podAffinity", "{app: db}", kZone)).Y());
  const sim::PodPlan p = PodOf(r, "default/p");
  ASSERT_TRUE(p.scheduled) << p.message;
  EXPECT_TRUE(p.node == "b1" || p.node == "b2") << p.node;
}

TEST(InterPodAffinityFilter, RejectsWhenNoPodMatchesAndThePodDoesNotMatchItself) {
  auto r = Plan(NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("b1").Labels(ZoneLabels("b")).Y() +
                PodY("p").Labels("{app: web}").Spec(RequiredPodTerm("podAffinity", "{app: db}", kZone)).Y());
  ExpectPending(r, "default/p", "0/2 nodes are available: 2 node(s) didn't match pod affinity rules.");
}

TEST(InterPodAffinityFilter, FirstPodOfASelfAffineGroupLandsAndTheRestFollow) {
  const std::string spec = RequiredPodTerm("podAffinity", "{app: web}", kZone);
  auto r = Plan(NodeY("bare").Y() + NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("a2").Labels(ZoneLabels("a")).Y() +
                NodeY("b1").Labels(ZoneLabels("b")).Y() + NodeY("b2").Labels(ZoneLabels("b")).Y() +
                PodY("web-0").Labels("{app: web}").Spec(spec).Y() + PodY("web-1").Labels("{app: web}").Spec(spec).Y() +
                PodY("web-2").Labels("{app: web}").Spec(spec).Y());
  const sim::PodPlan first = PodOf(r, "default/web-0");
  ASSERT_TRUE(first.scheduled) << first.message;
  ASSERT_NE(first.node, "bare");  // the topology key is still required
  for (const char* pod : {"default/web-1", "default/web-2"}) {
    const sim::PodPlan p = PodOf(r, pod);
    ASSERT_TRUE(p.scheduled) << pod << ": " << p.message;
    EXPECT_EQ(p.node.substr(0, 1), first.node.substr(0, 1)) << pod << " left the zone of web-0";
  }
}

TEST(InterPodAffinityFilter, SelfMatchDoesNotApplyOnceAMatchingPodExists) {
  // A web pod already runs in zone b, whose only node is full: the new web pod may not start a
  // second group in zone a.
  auto r = Plan(NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("b1").Labels(ZoneLabels("b")).Cpu("1").Y() +
                PodY("web-old").On("b1").Labels("{app: web}").Y() +
                PodY("p").Cpu("2").Labels("{app: web}").Spec(RequiredPodTerm("podAffinity", "{app: web}", kZone)).Y());
  ExpectPending(r, "default/p",
                "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod affinity rules.");
}

TEST(InterPodAffinityFilter, RequiredAntiAffinityOnHostnameAvoidsTheMatchingPod) {
  auto r = Plan(NodeY("n1").Labels(HostLabels("n1")).Y() + NodeY("n2").Labels(HostLabels("n2")).Y() +
                PodY("cache").On("n1").Labels("{app: cache}").Y() +
                PodY("p").Spec(RequiredPodTerm("podAntiAffinity", "{app: cache}", "kubernetes.io/hostname")).Y());
  ExpectScheduledOn(r, "default/p", "n2");
}

TEST(InterPodAffinityFilter, RejectsWhenEveryNodeHostsAPodItAvoids) {
  auto r = Plan(NodeY("n1").Labels(HostLabels("n1")).Y() + PodY("cache").On("n1").Labels("{app: cache}").Y() +
                PodY("p").Spec(RequiredPodTerm("podAntiAffinity", "{app: cache}", "kubernetes.io/hostname")).Y());
  ExpectPending(r, "default/p", "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules.");
}

TEST(InterPodAffinityFilter, ExistingPodsAntiAffinityKeepsTheIncomingPodAway) {
  const std::string loner = PodY("loner")
                                .On("n1")
                                .Labels("{app: loner}")
                                .Spec(RequiredPodTerm("podAntiAffinity", "{app: web}", "kubernetes.io/hostname"))
                                .Y();
  auto moved = Plan(NodeY("n1").Labels(HostLabels("n1")).Y() + NodeY("n2").Labels(HostLabels("n2")).Y() + loner +
                    PodY("web").Labels("{app: web}").Y());
  ExpectScheduledOn(moved, "default/web", "n2");
  auto stuck = Plan(NodeY("n1").Labels(HostLabels("n1")).Y() + NodeY("n2").Labels(HostLabels("n2")).Cpu("1").Y() +
                    loner + PodY("web").Cpu("2").Labels("{app: web}").Y());
  ExpectPending(stuck, "default/web",
                "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy existing pods anti-affinity "
                "rules.");
}

TEST(InterPodAffinityFilter, ExistingAntiAffinityIgnoresPodsOfOtherNamespaces) {
  // The loner's term has no namespaces, so it only repels pods of its own namespace.
  auto r = Plan(NodeY("n1").Labels(HostLabels("n1")).Y() +
                PodY("loner")
                    .Ns("batch")
                    .On("n1")
                    .Spec(RequiredPodTerm("podAntiAffinity", "{app: web}", "kubernetes.io/hostname"))
                    .Y() +
                PodY("web").Labels("{app: web}").Y());
  ExpectScheduledOn(r, "default/web", "n1");
}

// A cluster with a db pod in namespace "data" on b1, and a pending pod in "default" that wants to
// be in the db's zone through `term_extra`.
sim::PlanResult PlanWithDbInDataNamespace(const std::string& term_extra, const std::string& ns_labels = "{}") {
  return Plan("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: data\n  labels: " + ns_labels + "\n" +
              NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("b1").Labels(ZoneLabels("b")).Y() +
              PodY("db").Ns("data").On("b1").Labels("{app: db}").Y() +
              PodY("p").Labels("{app: web}").Spec(RequiredPodTerm("podAffinity", "{app: db}", kZone, term_extra)).Y());
}

TEST(InterPodAffinityFilter, TermsDefaultToThePodsOwnNamespace) {
  auto r = PlanWithDbInDataNamespace("");
  ExpectPending(r, "default/p", "0/2 nodes are available: 2 node(s) didn't match pod affinity rules.");
}

TEST(InterPodAffinityFilter, TermNamespacesReachAnotherNamespace) {
  auto r = PlanWithDbInDataNamespace("        namespaces: [data]\n");
  ExpectScheduledOn(r, "default/p", "b1");
}

TEST(InterPodAffinityFilter, NamespaceSelectorMatchesNamespaceLabels) {
  auto matching = PlanWithDbInDataNamespace("        namespaceSelector: {matchLabels: {team: storage}}\n",
                                            "{team: storage}");
  ExpectScheduledOn(matching, "default/p", "b1");
  auto other = PlanWithDbInDataNamespace("        namespaceSelector: {matchLabels: {team: frontend}}\n",
                                         "{team: storage}");
  ExpectPending(other, "default/p", "0/2 nodes are available: 2 node(s) didn't match pod affinity rules.");
}

TEST(InterPodAffinityFilter, NamespaceSelectorSeesTheImplicitNameLabel) {
  auto r = PlanWithDbInDataNamespace(
      "        namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: data}}\n");
  ExpectScheduledOn(r, "default/p", "b1");
}

TEST(InterPodAffinityFilter, EmptyNamespaceSelectorMatchesEveryNamespace) {
  auto r = PlanWithDbInDataNamespace("        namespaceSelector: {}\n");
  ExpectScheduledOn(r, "default/p", "b1");
}

// ---------------------------------------------------------------------------------------------
// PodTopologySpread

TEST(PodTopologySpreadFilter, PlacesThePodInTheZoneThatKeepsTheSkew) {
  auto r = Plan(NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("b1").Labels(ZoneLabels("b")).Y() + WebPodsOn("a1", 2) +
                PodY("p").Labels("{app: web}").Spec(SpreadWeb(1, kZone)).Y());
  ExpectScheduledOn(r, "default/p", "b1");
}

TEST(PodTopologySpreadFilter, RejectsNodeThatWouldExceedMaxSkew) {
  auto r = Plan(NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("b1").Labels(ZoneLabels("b")).Cpu("1").Y() +
                WebPodsOn("a1", 2) + PodY("p").Cpu("2").Labels("{app: web}").Spec(SpreadWeb(1, kZone)).Y());
  ExpectPending(r, "default/p",
                "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread "
                "constraints.");
}

TEST(PodTopologySpreadFilter, LargerMaxSkewAdmitsTheLoadedZone) {
  // 2 matching pods + the pod itself - 0 in zone b = 3, which a maxSkew of 3 allows.
  auto r = Plan(NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("b1").Labels(ZoneLabels("b")).Cpu("1").Y() +
                WebPodsOn("a1", 2) + PodY("p").Cpu("2").Labels("{app: web}").Spec(SpreadWeb(3, kZone)).Y());
  ExpectScheduledOn(r, "default/p", "a1");
}

TEST(PodTopologySpreadFilter, NodeWithoutTheTopologyLabelHasItsOwnReason) {
  auto r = Plan(NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("b1").Labels(ZoneLabels("b")).Cordon().Y() +
                NodeY("bare").Y() + WebPodsOn("a1", 2) + PodY("p").Labels("{app: web}").Spec(SpreadWeb(1, kZone)).Y());
  ExpectPending(r, "default/p",
                "0/3 nodes are available: 1 node(s) didn't match pod topology spread constraints, "
                "1 node(s) didn't match pod topology spread constraints (missing required label), "
                "1 node(s) were unschedulable.");
}

TEST(PodTopologySpreadFilter, PodOutsideItsOwnSelectorDoesNotCountItself) {
  // One web pod in zone a and none in b (whose node is full): a batch pod spreading web pods adds
  // nothing to the skew, a web pod would make it 2.
  const std::string cluster = NodeY("a1").Labels(ZoneLabels("a")).Y() +
                              NodeY("b1").Labels(ZoneLabels("b")).Cpu("1").Y() + WebPodsOn("a1", 1);
  auto batch = Plan(cluster + PodY("p").Cpu("2").Labels("{app: batch}").Spec(SpreadWeb(1, kZone)).Y());
  ExpectScheduledOn(batch, "default/p", "a1");
  auto web = Plan(cluster + PodY("p").Cpu("2").Labels("{app: web}").Spec(SpreadWeb(1, kZone)).Y());
  ExpectPending(web, "default/p",
                "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread "
                "constraints.");
}

TEST(PodTopologySpreadFilter, MinDomainsTreatsTheGlobalMinimumAsZero) {
  const std::string cluster = NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("b1").Labels(ZoneLabels("b")).Y() +
                              WebPodsOn("a1", 1) + WebPodsOn("b1", 1);
  auto three = Plan(cluster + PodY("p").Labels("{app: web}").Spec(SpreadWeb(1, kZone, "    minDomains: 3\n")).Y());
  ExpectPending(three, "default/p", "0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints.");
  auto two = Plan(cluster + PodY("p").Labels("{app: web}").Spec(SpreadWeb(1, kZone, "    minDomains: 2\n")).Y());
  EXPECT_TRUE(PodOf(two, "default/p").scheduled) << PodOf(two, "default/p").message;
}

// Zones a and c hold pool-x nodes with one web pod each; zone b holds an empty pool-y node.
std::string PoolCluster() {
  return NodeY("a1").Labels(ZoneLabels("a", "pool: x")).Y() + NodeY("b1").Labels(ZoneLabels("b", "pool: y")).Y() +
         NodeY("c1").Labels(ZoneLabels("c", "pool: x")).Y() + WebPodsOn("a1", 1) + WebPodsOn("c1", 1);
}

TEST(PodTopologySpreadFilter, NodeAffinityPolicyHonorCountsOnlyNodesThePodMayUse) {
  auto r = Plan(PoolCluster() + PodY("p")
                                    .Labels("{app: web}")
                                    .Spec("  nodeSelector: {pool: x}\n" + SpreadWeb(1, kZone))
                                    .Y());
  const sim::PodPlan p = PodOf(r, "default/p");
  ASSERT_TRUE(p.scheduled) << p.message;
  EXPECT_TRUE(p.node == "a1" || p.node == "c1") << p.node;
}

TEST(PodTopologySpreadFilter, NodeAffinityPolicyIgnoreCountsTheExcludedZone) {
  auto r = Plan(PoolCluster() + PodY("p")
                                    .Labels("{app: web}")
                                    .Spec("  nodeSelector: {pool: x}\n" +
                                          SpreadWeb(1, kZone, "    nodeAffinityPolicy: Ignore\n"))
                                    .Y());
  ExpectPending(r, "default/p",
                "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
                "2 node(s) didn't match pod topology spread constraints.");
}

TEST(PodTopologySpreadFilter, NodeTaintsPolicyHonorLeavesUntoleratedNodesOut) {
  const std::string cluster = NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("c1").Labels(ZoneLabels("c")).Y() +
                              NodeY("b1").Labels(ZoneLabels("b")).Taint("dedicated", "infra", "NoSchedule").Y() +
                              WebPodsOn("a1", 1) + WebPodsOn("c1", 1);
  auto honor = Plan(cluster +
                    PodY("p").Labels("{app: web}").Spec(SpreadWeb(1, kZone, "    nodeTaintsPolicy: Honor\n")).Y());
  EXPECT_TRUE(PodOf(honor, "default/p").scheduled) << PodOf(honor, "default/p").message;
  auto ignore = Plan(cluster + PodY("p").Labels("{app: web}").Spec(SpreadWeb(1, kZone)).Y());
  ExpectPending(ignore, "default/p",
                "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
                "2 node(s) didn't match pod topology spread constraints.");
}

TEST(PodTopologySpreadFilter, MatchLabelKeysCountOnlyPodsWithTheSameValues) {
  // Two v1 web pods fill zone a; b1 is cordoned. A v2 pod that spreads per version is alone.
  const std::string cluster = NodeY("a1").Labels(ZoneLabels("a")).Y() +
                              NodeY("b1").Labels(ZoneLabels("b")).Cordon().Y() +
                              WebPodsOn("a1", 2, "{app: web, version: v1}");
  auto per_version = Plan(cluster + PodY("p")
                                        .Labels("{app: web, version: v2}")
                                        .Spec(SpreadWeb(1, kZone, "    matchLabelKeys: [version]\n"))
                                        .Y());
  ExpectScheduledOn(per_version, "default/p", "a1");
  auto all_versions = Plan(cluster + PodY("p").Labels("{app: web, version: v2}").Spec(SpreadWeb(1, kZone)).Y());
  ExpectPending(all_versions, "default/p",
                "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, "
                "1 node(s) were unschedulable.");
}

TEST(PodTopologySpreadFilter, CountsOnlyPodsOfThePodsNamespace) {
  // The two web pods in zone a belong to another namespace, so zone a looks empty.
  auto r = Plan(NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("b1").Labels(ZoneLabels("b")).Cordon().Y() +
                PodY("w0").Ns("other").On("a1").Labels("{app: web}").Y() +
                PodY("w1").Ns("other").On("a1").Labels("{app: web}").Y() +
                PodY("p").Labels("{app: web}").Spec(SpreadWeb(1, kZone)).Y());
  ExpectScheduledOn(r, "default/p", "a1");
}

// ---------------------------------------------------------------------------------------------
// The FailedScheduling message

TEST(FilterMessage, SortsCountedReasonsAsStrings) {
  // 1 cordoned, 10 short of CPU, 2 tainted: as strings "1 n…" < "10 …" < "2 …".
  std::string yaml = NodeY("cordoned").Cordon().Y();
  for (int i = 0; i < 10; ++i) yaml += NodeY("small-" + std::to_string(i)).Cpu("1").Y();
  for (int i = 0; i < 2; ++i) yaml += NodeY("infra-" + std::to_string(i)).Taint("team", "infra", "NoSchedule").Y();
  auto r = Plan(yaml + PodY("p").Cpu("2").Y());
  ExpectPending(r, "default/p",
                "0/13 nodes are available: 1 node(s) were unschedulable, 10 Insufficient cpu, "
                "2 node(s) had untolerated taint(s).");
}

TEST(FilterMessage, NamesOnlyTheFirstFailingPluginOfEachNode) {
  // Filters run NodeUnschedulable, TaintToleration, ..., NodeResourcesFit; a node reports the
  // first that rejects it.
  auto r = Plan(NodeY("all-three").Cordon().Taint("team", "infra", "NoSchedule").Cpu("1").Y() +
                NodeY("taint-and-cpu").Taint("team", "infra", "NoSchedule").Cpu("1").Y() +
                NodeY("cpu-only").Cpu("1").Y() + PodY("p").Cpu("2").Y());
  ExpectPending(r, "default/p",
                "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s), "
                "1 node(s) were unschedulable.");
}

// ---------------------------------------------------------------------------------------------
// Pods bound earlier in the same plan are seen by the later ones.

TEST(FilterPendingPods, AntiAffinityBetweenPendingPodsSeparatesThem) {
  const std::string anti = RequiredPodTerm("podAntiAffinity", "{app: web}", "kubernetes.io/hostname");
  auto r = Plan(NodeY("n1").Labels(HostLabels("n1")).Y() + NodeY("n2").Labels(HostLabels("n2")).Y() +
                PodY("web-0").Labels("{app: web}").Spec(anti).Y() + PodY("web-1").Labels("{app: web}").Spec(anti).Y() +
                PodY("web-2").Labels("{app: web}").Spec(anti).Y());
  const sim::PodPlan a = PodOf(r, "default/web-0");
  const sim::PodPlan b = PodOf(r, "default/web-1");
  ASSERT_TRUE(a.scheduled && b.scheduled) << a.message << " / " << b.message;
  EXPECT_NE(a.node, b.node);
  ExpectPending(r, "default/web-2", "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules.");
}

TEST(FilterPendingPods, ResourcesTakenByEarlierPendingPodsAreSeen) {
  auto r = Plan(NodeY("n1").Y() + PodY("first").Cpu("3").Y() + PodY("second").Cpu("3").Y());
  ExpectScheduledOn(r, "default/first", "n1");
  ExpectPending(r, "default/second", "0/1 nodes are available: 1 Insufficient cpu.");
}

TEST(FilterPendingPods, HostPortTakenByAnEarlierPendingPodIsSeen) {
  auto r = Plan(NodeY("n1").Y() + PodY("first").HostPort(9000).Y() + PodY("second").HostPort(9000).Y());
  ExpectScheduledOn(r, "default/first", "n1");
  ExpectPending(r, "default/second",
                "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.");
}

TEST(FilterPendingPods, SpreadCountsPodsPlacedEarlierInThePlan) {
  const std::string spread = SpreadWeb(1, kZone);
  std::string yaml = NodeY("a1").Labels(ZoneLabels("a")).Y() + NodeY("a2").Labels(ZoneLabels("a")).Y() +
                     NodeY("b1").Labels(ZoneLabels("b")).Y();
  for (int i = 0; i < 4; ++i) yaml += PodY("web-" + std::to_string(i)).Labels("{app: web}").Spec(spread).Y();
  auto r = Plan(yaml);
  int in_a = 0;
  int in_b = 0;
  for (int i = 0; i < 4; ++i) {
    const sim::PodPlan p = PodOf(r, "default/web-" + std::to_string(i));
    ASSERT_TRUE(p.scheduled) << p.name << ": " << p.message;
    (p.node[0] == 'a' ? in_a : in_b)++;
  }
  EXPECT_EQ(in_a, 2);
  EXPECT_EQ(in_b, 2);
}

}  // namespace
}  // namespace arbiter::sched
