// Scenario tests for the parts of kube-scheduler's default profile that act before or around the
// filters: SchedulingGates (PreEnqueue), pod-level resources (PodLevelResources) and the feature
// gates that drop the fields they govern. Cases follow upstream's test tables, in Arbiter's own
// words and data.
#include <string>

#include <gtest/gtest.h>

#include "arbiter/manifest/loader.h"
#include "arbiter/model/feature_gates.h"
#include "arbiter/sched/plugins/simple_plugins.h"
#include "arbiter/sched/queue/scheduling_queue.h"
#include "testing/manifest_builders.h"
#include "testing/plan_harness.h"

namespace arbiter::sched {
namespace {

using arbiter::testing::Config;
using arbiter::testing::LoadErrors;
using arbiter::testing::NodeY;
using arbiter::testing::Plan;
using arbiter::testing::PodOf;
using arbiter::testing::PodY;

std::string Class(const std::string& name, int value) {
  return "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " + name +
         "}\nvalue: " + std::to_string(value) + "\n";
}

std::string Gates(const std::string& names) {
  std::string s = "  schedulingGates:\n";
  size_t start = 0;
  while (start <= names.size()) {
    size_t comma = names.find(',', start);
    if (comma == std::string::npos) comma = names.size();
    s += "  - name: " + names.substr(start, comma - start) + "\n";
    start = comma + 1;
  }
  return s;
}

model::Pod LoadOnePod(const std::string& yaml) {
  manifest::LoadResult r = manifest::Load({{"test.yaml", yaml}});
  EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0]);
  for (const auto& p : r.objects.pods) {
    if (p.object.node_name.empty()) return p.object;
  }
  ADD_FAILURE() << "no pending pod";
  return {};
}

// ---------------------------------------------------------------------------------------------
// SchedulingGates

TEST(SchedulingGates, PreEnqueueRejectsAGatedPodNamingItsGatesInOrder) {
  plugins::SchedulingGates plugin;
  model::Pod pod;
  pod.name = "p";
  EXPECT_TRUE(plugin.PreEnqueue(state::PodInfo(pod)).IsSuccess());
  pod.scheduling_gates = {"foo", "bar"};
  Status s = plugin.PreEnqueue(state::PodInfo(pod));
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "waiting for scheduling gates: [foo bar]");
}

TEST(SchedulingGates, AGatedPodIsPendingWithTheApiServersConditionMessageAndIsNeverTried) {
  auto r = Plan(NodeY("n1").Y() + PodY("gated").Spec(Gates("example.com/quota")).Y() + PodY("free").Y());
  const sim::PodPlan gated = PodOf(r, "default/gated");
  EXPECT_FALSE(gated.scheduled);
  EXPECT_EQ(gated.message, "Scheduling is blocked due to non-empty scheduling gates");
  EXPECT_EQ(gated.attempts, 0);
  EXPECT_TRUE(PodOf(r, "default/free").scheduled);
}

TEST(SchedulingGates, AGatedHighPriorityPodNeverPreempts) {
  auto r = Plan(Class("high", 1000) + NodeY("n1").Cpu("1").Y() + PodY("low").On("n1").Cpu("1").Y() +
                PodY("urgent").PriorityClass("high").Cpu("1").Spec(Gates("hold")).Y());
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_FALSE(PodOf(r, "default/urgent").scheduled);
  EXPECT_EQ(r.preemption_metrics.attempts, 0u);
}

TEST(SchedulingGates, AGatedGangMemberKeepsItsGroupShortOfItsQuorum) {
  const std::string group =
      "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
      "spec:\n  schedulingPolicy:\n    gang: {minCount: 2}\n";
  const std::string member = "  schedulingGroup: {podGroupName: g}\n";
  auto r = Plan(NodeY("n1").Y() + group + PodY("m0").Spec(member).Y() + PodY("m1").Spec(member + Gates("hold")).Y());
  EXPECT_FALSE(PodOf(r, "default/m0").scheduled);
  EXPECT_EQ(PodOf(r, "default/m1").message, "Scheduling is blocked due to non-empty scheduling gates");
}

TEST(SchedulingGates, TheInputRefusesDuplicateGatesAndAGatedPodWithANodeName) {
  auto dup = LoadErrors(NodeY("n1").Y() + PodY("p").Spec(Gates("a,a")).Y());
  ASSERT_EQ(dup.size(), 1u);
  EXPECT_NE(dup[0].find("spec.schedulingGates[1].name: Duplicate value: \"a\""), std::string::npos) << dup[0];
  auto bound = LoadErrors(NodeY("n1").Y() + PodY("p").On("n1").Spec(Gates("a")).Y());
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_NE(bound[0].find("spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"),
            std::string::npos)
      << bound[0];
}

class GatedQueueTest : public ::testing::Test {
 protected:
  GatedQueueTest()
      : clock_(1000 * kSecond),
        framework_({PluginEntry{std::make_shared<plugins::SchedulingGates>(), 0},
                    PluginEntry{std::make_shared<plugins::PrioritySort>(), 0}}),
        queue_(&framework_, &clock_, QueueOptions{}) {}

  PodInfoPtr MakePod(const std::string& name, std::vector<std::string> gates) {
    model::Pod p;
    p.name = name;
    p.uid = "default/" + name;
    p.scheduling_gates = std::move(gates);
    return state::MakePodInfo(std::move(p));
  }

  VirtualClock clock_;
  Framework framework_;
  SchedulingQueue queue_;
};

TEST_F(GatedQueueTest, AGatedPodWaitsOutsideActiveQThroughEventsAndFlushesUntilItsLastGateGoes) {
  queue_.Add(MakePod("p", {"a", "b"}));
  EXPECT_EQ(queue_.gated_size(), 1u);
  EXPECT_EQ(queue_.active_size(), 0u);
  EXPECT_FALSE(queue_.Pop());
  // No cluster event and no leftover flush moves it.
  for (size_t k = 0; k < kClusterEventKinds; ++k) queue_.MoveOnEvent(static_cast<ClusterEvent>(k));
  clock_.Advance(10 * kMinute);
  queue_.Flush();
  EXPECT_FALSE(queue_.Pop());
  EXPECT_FALSE(queue_.NextWakeup());
  // Removing one gate is not enough; removing the last one queues it with its first timestamp.
  queue_.Update(MakePod("p", {"b"}));
  EXPECT_EQ(queue_.gated_size(), 1u);
  queue_.Update(MakePod("p", {}));
  EXPECT_EQ(queue_.gated_size(), 0u);
  auto popped = queue_.Pop();
  ASSERT_TRUE(popped);
  EXPECT_EQ(popped->pod->pod.name, "p");
  EXPECT_EQ(popped->timestamp, 1000 * kSecond);
  EXPECT_EQ(popped->attempts, 1);
}

TEST_F(GatedQueueTest, AGatedGroupMemberJoinsItsGroupOnceUngated) {
  queue_.AddGroupMember(MakePod("m0", {"hold"}), "default/g", 5);
  EXPECT_EQ(queue_.gated_size(), 1u);
  queue_.Delete("default/m0");
  EXPECT_EQ(queue_.gated_size(), 0u);
  EXPECT_FALSE(queue_.Contains("default/m0"));
  queue_.AddGroupMember(MakePod("m1", {"hold"}), "default/g", 5);
  queue_.Update(MakePod("m1", {}));
  auto popped = queue_.Pop();
  ASSERT_TRUE(popped);
  EXPECT_EQ(popped->group, "default/g");
  EXPECT_EQ(popped->priority, 5);
  ASSERT_EQ(popped->members.size(), 1u);
  EXPECT_EQ(popped->members[0]->pod.name, "m1");
}

// ---------------------------------------------------------------------------------------------
// Pod-level resources (resourcehelper.PodRequests with PodLevelResources)

std::string PodLevel(const std::string& cpu) {
  return "  resources:\n    requests:\n      cpu: \"" + cpu + "\"\n";
}

TEST(PodLevelResources, APodLevelRequestReplacesTheContainersSumAndOverheadIsAddedOnTop) {
  model::Pod p = LoadOnePod(PodY("p").Cpu("100m").Image("a").Spec(PodLevel("3")).OverheadCpu("500m").Y());
  EXPECT_EQ(p.requests.milli_cpu, 3500);
  EXPECT_EQ(p.non_zero_milli_cpu, 3500);
  // Memory is not set at pod level: the containers' (none) stands, and scoring's default
  // applies because neither level states it.
  EXPECT_EQ(p.requests.memory, 0);
  EXPECT_EQ(p.non_zero_memory, model::kDefaultMemoryRequest);
}

TEST(PodLevelResources, PodLevelLimitsDefaultTheRequests) {
  model::Pod p = LoadOnePod(PodY("p").Cpu("100m").Spec("  resources:\n    limits:\n      memory: 1Gi\n").Y());
  EXPECT_EQ(p.requests.memory, int64_t{1} << 30);
  EXPECT_EQ(p.requests.milli_cpu, 100);
}

TEST(PodLevelResources, ScoringDefaultsApplyOnlyToResourcesNoLevelStates) {
  // Two containers, one stating cpu: with pod-level requests, the other container gets no
  // 100m default (getNonMissingContainerRequests), unlike a pod without them.
  const std::string two = PodY("p").Cpu("300m").Image("a").Image("b").Spec(
                                       "  resources:\n    requests:\n      memory: 1Gi\n")
                              .Y();
  model::Pod p = LoadOnePod(two);
  EXPECT_EQ(p.non_zero_milli_cpu, 300);
  EXPECT_EQ(p.non_zero_memory, int64_t{1} << 30);
  model::Pod plain = LoadOnePod(PodY("q").Cpu("300m").Image("a").Image("b").Y());
  EXPECT_EQ(plain.non_zero_milli_cpu, 400);
}

TEST(PodLevelResources, OnlyCpuMemoryAndHugepagesMayBeSetAtPodLevel) {
  auto errors = LoadErrors(NodeY("n1").Y() + PodY("p").Spec("  resources:\n    requests:\n      ephemeral-storage: 1Gi\n").Y());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("spec.resources.requests.ephemeral-storage: unsupported pod-level resource"),
            std::string::npos)
      << errors[0];
}

TEST(PodLevelResources, FitAndPreemptionCountThePodLevelRequest) {
  // The running pod's containers ask 100m but the pod 3 CPUs: a 2-CPU pod does not fit beside it
  // and, with higher priority, preempts it.
  auto r = Plan(Class("high", 1000) + NodeY("n1").Cpu("4").Y() + PodY("big").On("n1").Spec(PodLevel("3")).Y() +
                PodY("p").Cpu("2").PriorityClass("high").Y());
  ASSERT_EQ(r.preemptions.size(), 1u);
  ASSERT_EQ(r.preemptions[0].victims.size(), 1u);
  EXPECT_EQ(r.preemptions[0].victims[0].name, "default/big");
}

TEST(PodLevelResources, WithTheGateOffTheFieldIsDroppedAndTheContainersCount) {
  const std::string pod = PodY("p").Cpu("100m").Spec(PodLevel("3")).OverheadCpu("500m").Y();
  model::Pod on = LoadOnePod(pod);
  EXPECT_EQ(on.requests.milli_cpu, 3500);
  model::Pod off = LoadOnePod(Config("featureGates:\n  PodLevelResources: false\n") + pod);
  EXPECT_EQ(off.requests.milli_cpu, 600);
  EXPECT_EQ(off.non_zero_milli_cpu, 600);
  EXPECT_FALSE(off.pod_level_resources);
}

// ---------------------------------------------------------------------------------------------
// Feature gates drop their fields

TEST(FeatureGates, WithGenericWorkloadOffASchedulingGroupIsDroppedAndThePodPreemptsAlone) {
  // The PodGroup it names does not exist: with the gate on that is an input error; with it off
  // the API server would have dropped the field, and the pod is an ordinary preemptor.
  const std::string pods = Class("high", 1000) + NodeY("n1").Cpu("1").Y() + PodY("low").On("n1").Cpu("1").Y() +
                           PodY("p").Cpu("1").PriorityClass("high").Spec("  schedulingGroup: {podGroupName: missing}\n").Y();
  auto errors = LoadErrors(pods);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("PodGroup \"default/missing\" is not in the input"), std::string::npos) << errors[0];
  auto r = Plan(Config("featureGates:\n  GenericWorkload: false\n") + pods);
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].preemptor, "default/p");
  EXPECT_EQ(r.preemptions[0].preemptor_kind, "Pod");
  EXPECT_TRUE(PodOf(r, "default/p").scheduled);
}

TEST(FeatureGates, EveryGateArbiterReadsIsOnUnlessTurnedOff) {
  model::SchedulerConfig c;
  for (auto g : {model::kGateGenericWorkload, model::kGateCompositePodGroup, model::kGatePodLevelResources}) {
    EXPECT_TRUE(model::FeatureEnabled(c, g)) << g;
  }
  c.feature_gates["PodLevelResources"] = false;
  EXPECT_FALSE(model::FeatureEnabled(c, model::kGatePodLevelResources));
}

}  // namespace
}  // namespace arbiter::sched
