// Node-pressure eviction in `arbiter plan`: usage (PodMetrics) and thresholds
// (KubeletConfiguration) in the input; the kubelet's ranking for the starved resource.
#include <gtest/gtest.h>

#include "arbiter/plan/render.h"
#include "testing/plan_harness.h"

namespace arbiter {
namespace {

using testing::Plan;

std::string NodeYaml(const std::string& name, const std::string& memory, const std::string& storage = "") {
  std::string s = "---\napiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\nstatus:\n  capacity: {cpu: \"8\", memory: " +
                  memory + ", pods: \"110\"";
  if (!storage.empty()) s += ", ephemeral-storage: " + storage;
  return s + "}\n";
}

std::string ClassYaml(const std::string& name, int value) {
  return "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " + name +
         "}\nvalue: " + std::to_string(value) + "\n";
}

// A pod running on `node` that requests `request` of `resource` in its one container "app".
std::string RunningPod(const std::string& name, const std::string& node, const std::string& request,
                       const std::string& cls = "", const std::string& resource = "memory") {
  std::string s = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n  nodeName: " + node + "\n";
  if (!cls.empty()) s += "  priorityClassName: " + cls + "\n";
  return s + "  containers:\n  - name: app\n    image: x\n    resources: {requests: {" + resource + ": " + request + "}}\n";
}

std::string Usage(const std::string& pod, const std::string& amount, const std::string& resource = "memory") {
  return "---\napiVersion: metrics.k8s.io/v1beta1\nkind: PodMetrics\nmetadata: {name: " + pod +
         "}\ncontainers:\n- name: app\n  usage: {cpu: 10m, " + resource + ": " + amount + "}\n";
}

std::vector<std::string> Evicted(const sim::PlanResult& r) {
  std::vector<std::string> out;
  for (const auto& e : r.evictions) out.push_back(e.name);
  return out;
}

TEST(NodePressure, UsageAboveRequestsIsEvictedBeforeLowerPriority) {
  // 1Gi node, default threshold 100Mi: 400 + 550 used leaves 74Mi. The high-priority pod uses 4x
  // its request; the low-priority pod stays within its request and outlives it.
  auto r = Plan(NodeYaml("n1", "1Gi") + ClassYaml("high", 1000) + RunningPod("greedy-high", "n1", "100Mi", "high") +
                RunningPod("modest-low", "n1", "600Mi") + Usage("greedy-high", "400Mi") + Usage("modest-low", "550Mi"));
  EXPECT_EQ(Evicted(r), (std::vector<std::string>{"default/greedy-high"}));
  ASSERT_EQ(r.evictions.size(), 1u);
  EXPECT_EQ(r.evictions[0].signal, "memory.available");
  EXPECT_EQ(r.evictions[0].reason, "Evicted");
  EXPECT_EQ(r.evictions[0].message,
            "The node was low on resource: memory. Threshold quantity: 100Mi, available: 74Mi. Container app was "
            "using 400Mi, request is 100Mi, has larger consumption of memory. ");
}

TEST(NodePressure, AmongPodsAboveTheirRequestsLowerPriorityGoesFirst) {
  // Both exceed their requests; the lower priority is evicted even though it exceeds by less.
  auto r = Plan(NodeYaml("n1", "1Gi") + ClassYaml("high", 1000) + ClassYaml("low", 10) +
                RunningPod("a-high", "n1", "100Mi", "high") + RunningPod("b-low", "n1", "300Mi", "low") +
                Usage("a-high", "600Mi") + Usage("b-low", "350Mi"));
  EXPECT_EQ(Evicted(r), (std::vector<std::string>{"default/b-low"}));
}

TEST(NodePressure, AtEqualPriorityTheLargerExcessOverRequestGoesFirst) {
  // Same priority, both above requests: x exceeds by 150Mi, y by 300Mi though it uses less.
  auto r = Plan(NodeYaml("n1", "1Gi") + RunningPod("x", "n1", "450Mi") + RunningPod("y", "n1", "50Mi") +
                Usage("x", "600Mi") + Usage("y", "350Mi"));
  EXPECT_EQ(Evicted(r), (std::vector<std::string>{"default/y"}));
}

TEST(NodePressure, EvictsUntilTheSignalIsBackAboveTheThreshold) {
  // 1000Mi used of 1Gi: 24Mi left. Evicting the first-ranked pod (60Mi over its request, using
  // 70Mi) leaves 94Mi, still under 100Mi, so the next-ranked one (40Mi over) goes too; the third,
  // within its request, is left alone.
  auto r = Plan(NodeYaml("n1", "1Gi") + RunningPod("p1", "n1", "10Mi") + RunningPod("p2", "n1", "20Mi") +
                RunningPod("p3", "n1", "900Mi") + Usage("p1", "70Mi") + Usage("p2", "60Mi") + Usage("p3", "870Mi"));
  EXPECT_EQ(Evicted(r), (std::vector<std::string>{"default/p1", "default/p2"}));
}

TEST(NodePressure, NoEvictionWhileAvailableMemoryIsAboveTheThreshold) {
  auto r = Plan(NodeYaml("n1", "1Gi") + RunningPod("p", "n1", "100Mi") + Usage("p", "900Mi"));
  EXPECT_TRUE(r.evictions.empty());  // 124Mi available > 100Mi
  auto tight = Plan(NodeYaml("n1", "1Gi") + RunningPod("p", "n1", "100Mi") + Usage("p", "950Mi"));
  EXPECT_EQ(Evicted(tight), (std::vector<std::string>{"default/p"}));
}

TEST(NodePressure, EphemeralStorageUnderTheNodefsPercentageThreshold) {
  // nodefs.available < 10% by default: 10Gi disk, 9.5Gi used. Memory is fine.
  const std::string storage = "ephemeral-storage";
  auto r = Plan(NodeYaml("n1", "8Gi", "10Gi") + RunningPod("writer", "n1", "1Gi", "", storage) +
                RunningPod("quiet", "n1", "8Gi", "", storage) + Usage("writer", "6Gi", storage) +
                Usage("quiet", "3584Mi", storage));
  ASSERT_EQ(Evicted(r), (std::vector<std::string>{"default/writer"}));
  EXPECT_EQ(r.evictions[0].signal, "nodefs.available");
  EXPECT_NE(r.evictions[0].message.find("The node was low on resource: ephemeral-storage."), std::string::npos);
  EXPECT_NE(r.evictions[0].message.find("Threshold quantity: 1Gi"), std::string::npos) << r.evictions[0].message;
}

TEST(NodePressure, EvictionHardOfAKubeletConfigurationReplacesTheDefaults) {
  const std::string config =
      "---\napiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard:\n"
      "  memory.available: 300Mi\n";
  // 200Mi available: fine by the default 100Mi, under a 300Mi threshold.
  const std::string cluster = NodeYaml("n1", "1Gi") + RunningPod("p", "n1", "100Mi") + Usage("p", "824Mi");
  EXPECT_TRUE(Plan(cluster).evictions.empty());
  auto r = Plan(cluster + config);
  EXPECT_EQ(Evicted(r), (std::vector<std::string>{"default/p"}));
}

TEST(NodePressure, EvictedPodsAreTerminalAndTheirRoomGoesToPendingPods) {
  // The evicted pod is not rescheduled; a pending pod that needed its memory now fits.
  auto r = Plan(NodeYaml("n1", "1Gi") + RunningPod("greedy", "n1", "700Mi") + Usage("greedy", "950Mi") +
                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: waiting}\nspec:\n  containers:\n  - name: app\n"
                "    image: x\n    resources: {requests: {memory: 500Mi}}\n");
  EXPECT_EQ(Evicted(r), (std::vector<std::string>{"default/greedy"}));
  ASSERT_EQ(r.pods.size(), 1u);  // only the pending pod is planned; the evicted one is not queued
  EXPECT_EQ(r.pods[0].name, "default/waiting");
  EXPECT_TRUE(r.pods[0].scheduled);
  bool event = false;
  for (const auto& e : r.events) event = event || (e.reason == "Evicted" && e.object == "Pod default/greedy" && e.type == "Warning");
  EXPECT_TRUE(event);
}

TEST(NodePressure, PlanPrintsAnEvictionsTableAndJsonList) {
  auto r = Plan(NodeYaml("n1", "1Gi") + RunningPod("p", "n1", "100Mi") + Usage("p", "950Mi"));
  const std::string table = plan::Render(r, plan::Format::kTable, false);
  EXPECT_NE(table.find("Evictions:\nPOD         NODE   REASON    SIGNAL\ndefault/p   n1     Evicted   memory.available"),
            std::string::npos)
      << table;
  const std::string json = plan::Render(r, plan::Format::kJson, false);
  EXPECT_NE(json.find("\"evictions\": ["), std::string::npos) << json;
  EXPECT_NE(json.find("\"signal\": \"memory.available\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"message\": \"The node was low on resource: memory."), std::string::npos) << json;
}

TEST(NodePressure, MetricsOfAPodNotInTheInputAreAnInputError) {
  auto errors = testing::LoadErrors(NodeYaml("n1", "1Gi") + Usage("ghost", "10Mi"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("PodMetrics default/ghost: metadata.name: no pod default/ghost in the input"), std::string::npos)
      << errors[0];
}

TEST(NodePressure, AnUnknownSignalIsAnInputError) {
  auto errors = testing::LoadErrors(
      "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard: {memory.free: 1Gi}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("evictionHard.memory.free: unknown eviction signal"), std::string::npos) << errors[0];
}

}  // namespace
}  // namespace arbiter
