// Scenario tests for the volume plugins of the default profile (VolumeBinding, VolumeZone,
// VolumeRestrictions, NodeVolumeLimits), through the whole plan pipeline. Cases follow
// upstream's test tables (volume_binding_test.go, volume_zone_test.go,
// volume_restrictions_test.go, csi_test.go) in Arbiter's own words and data; the reasons are
// upstream's, word for word.
#include <string>

#include <gtest/gtest.h>

#include "testing/manifest_builders.h"
#include "testing/plan_harness.h"

namespace arbiter::sched {
namespace {

using arbiter::testing::LoadErrors;
using arbiter::testing::NodeY;
using arbiter::testing::Plan;
using arbiter::testing::PodOf;
using arbiter::testing::PodY;

std::string Class(const std::string& name, const std::string& provisioner, const std::string& mode,
                  const std::string& extra = "") {
  return "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: " + name + "}\nprovisioner: " +
         provisioner + "\nvolumeBindingMode: " + mode + "\n" + extra;
}

// A claim; `volume` set makes it bound to that volume (with the PV controller's annotation).
std::string Claim(const std::string& name, const std::string& cls, const std::string& size,
                  const std::string& volume = "", const std::string& mode = "ReadWriteOnce") {
  std::string s = "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: " + name + "\n";
  if (!volume.empty()) s += "  annotations: {pv.kubernetes.io/bind-completed: \"yes\"}\n";
  s += "spec:\n  storageClassName: " + cls + "\n  accessModes: [" + mode + "]\n  resources:\n    requests: {storage: " +
       size + "}\n";
  if (!volume.empty()) s += "  volumeName: " + volume + "\nstatus: {phase: Bound}\n";
  return s;
}

// A volume; `node` set gives it a required node affinity to that hostname; `labels` a flow map.
std::string Volume(const std::string& name, const std::string& cls, const std::string& size,
                   const std::string& node = "", const std::string& labels = "{}", const std::string& claim = "",
                   const std::string& csi_driver = "") {
  std::string s = "---\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: " + name + "\n  labels: " + labels +
                  "\nspec:\n  storageClassName: " + cls + "\n  accessModes: [ReadWriteOnce]\n  capacity: {storage: " +
                  size + "}\n";
  if (!node.empty()) {
    s += "  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n      - matchExpressions:\n"
         "        - {key: kubernetes.io/hostname, operator: In, values: [" + node + "]}\n";
  }
  if (!claim.empty()) s += "  claimRef: {namespace: default, name: " + claim + "}\n";
  if (!csi_driver.empty()) s += "  csi: {driver: " + csi_driver + ", volumeHandle: " + name + "-handle}\n";
  s += std::string("status: {phase: ") + (claim.empty() ? "Available" : "Bound") + "}\n";
  return s;
}

std::string Mount(const std::string& claim, const std::string& volume = "data") {
  return "  volumes:\n  - name: " + volume + "\n    persistentVolumeClaim: {claimName: " + claim + "}\n";
}

std::string Host(const std::string& name, const std::string& zone = "") {
  return "{kubernetes.io/hostname: " + name + (zone.empty() ? "" : ", topology.kubernetes.io/zone: " + zone) + "}";
}

std::string PriorityClass(const std::string& name, int value) {
  return "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " + name +
         "}\nvalue: " + std::to_string(value) + "\n";
}

bool TextContains(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

// ---------------------------------------------------------------------------------------------
// VolumeBinding

TEST(VolumeBinding, AMissingClaimKeepsThePodPendingWithTheListersError) {
  auto r = Plan(NodeY("n1").Y() + PodY("p").Spec(Mount("data")).Y());
  const sim::PodPlan p = PodOf(r, "default/p");
  EXPECT_FALSE(p.scheduled);
  EXPECT_TRUE(TextContains(p.message, "0/1 nodes are available: persistentvolumeclaim \"data\" not found.")) << p.message;
}

TEST(VolumeBinding, AnEphemeralVolumesClaimNotYetMadeIsWaitedFor) {
  const std::string eph = "  volumes:\n  - name: scratch\n    ephemeral: {volumeClaimTemplate: {spec: {}}}\n";
  auto r = Plan(NodeY("n1").Y() + PodY("p").Spec(eph).Y());
  EXPECT_TRUE(TextContains(PodOf(r, "default/p").message,
                       "waiting for ephemeral volume controller to create the persistentvolumeclaim \"p-scratch\""))
      << PodOf(r, "default/p").message;
}

TEST(VolumeBinding, AnUnboundImmediateClaimKeepsThePodPending) {
  auto r = Plan(Class("fast", "csi.example.com", "Immediate") + Claim("data", "fast", "1Gi") + NodeY("n1").Y() +
                PodY("p").Spec(Mount("data")).Y());
  EXPECT_TRUE(TextContains(PodOf(r, "default/p").message, "pod has unbound immediate PersistentVolumeClaims"))
      << PodOf(r, "default/p").message;
}

TEST(VolumeBinding, ABoundClaimFollowsItsVolumesNodeAffinity) {
  // n1 is emptier, but the local volume lives on n2.
  auto r = Plan(Class("local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer") +
                Volume("pv-a", "local", "10Gi", "n2", "{}", "data") + Claim("data", "local", "5Gi", "pv-a") +
                NodeY("n1").Labels(Host("n1")).Y() + NodeY("n2").Labels(Host("n2")).Y() +
                PodY("busy").On("n2").Cpu("3").Y() + PodY("p").Spec(Mount("data")).Y());
  const sim::PodPlan p = PodOf(r, "default/p");
  EXPECT_TRUE(p.scheduled) << p.message;
  EXPECT_EQ(p.node, "n2");
}

TEST(VolumeBinding, ANodeOutsideTheBoundVolumesAffinityIsNamedAsKubeSchedulerNamesIt) {
  // The volume lives on n2 only; n2 is cordoned. 1.37's reason for n1 is ErrReasonNodeConflict's
  // wording (found by scripts/upstream-diff.sh).
  auto r = Plan(Class("local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer") +
                Volume("pv-a", "local", "10Gi", "n2", "{}", "data") + Claim("data", "local", "5Gi", "pv-a") +
                NodeY("n1").Labels(Host("n1")).Y() + PodY("p").Spec(Mount("data")).Y());
  const sim::PodPlan p = PodOf(r, "default/p");
  EXPECT_FALSE(p.scheduled);
  EXPECT_TRUE(TextContains(p.message, "0/1 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity."))
      << p.message;
}

TEST(VolumeBinding, AClaimBoundToAMissingVolumeIsRefusedEverywhere) {
  // VolumeZone's PreFilter looks the volume up first and stops the cycle, as upstream's does.
  const std::string cluster = Class("local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer") +
                              Claim("data", "local", "5Gi", "gone") + NodeY("n1").Y() + PodY("p").Spec(Mount("data")).Y();
  auto r = Plan(cluster);
  EXPECT_TRUE(TextContains(PodOf(r, "default/p").message, "0/1 nodes are available: persistentvolume \"gone\" not found."))
      << PodOf(r, "default/p").message;
  // Without VolumeZone, VolumeBinding's filter gives its own reason.
  auto without_zone = Plan(arbiter::testing::ProfileConfig("  plugins:\n    filter:\n      disabled:\n      - name: VolumeZone\n") +
                           cluster);
  EXPECT_TRUE(TextContains(PodOf(without_zone, "default/p").message,
                       "1 node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"))
      << PodOf(without_zone, "default/p").message;
}

TEST(VolumeBinding, AWaitForFirstConsumerClaimTakesTheSmallestMatchingVolumeAndOnlyOnce) {
  // Two local volumes on n1 (20Gi and 8Gi) and none elsewhere: "a" (5Gi) takes the 8Gi one, "b"
  // (10Gi) the 20Gi one, and "c" finds none left and cannot be provisioned (no provisioner).
  auto r = Plan(Class("local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer") +
                Volume("big", "local", "20Gi", "n1") + Volume("small", "local", "8Gi", "n1") +
                Claim("a", "local", "5Gi") + Claim("b", "local", "10Gi") + Claim("c", "local", "1Gi") +
                NodeY("n1").Labels(Host("n1")).Y() + NodeY("n2").Labels(Host("n2")).Y() +
                PodY("pa").Spec(Mount("a")).Y() + PodY("pb").Spec(Mount("b")).Y() + PodY("pc").Spec(Mount("c")).Y());
  EXPECT_EQ(PodOf(r, "default/pa").node, "n1");
  EXPECT_EQ(PodOf(r, "default/pb").node, "n1");
  const sim::PodPlan c = PodOf(r, "default/pc");
  EXPECT_FALSE(c.scheduled);
  EXPECT_TRUE(TextContains(c.message, "2 node(s) didn't find available persistent volumes to bind")) << c.message;
}

TEST(VolumeBinding, AProvisionableClaimGoesWhereTheClassAllowsIt) {
  const std::string zone_a =
      "allowedTopologies:\n- matchLabelExpressions:\n  - {key: topology.kubernetes.io/zone, values: [a]}\n";
  auto r = Plan(Class("zonal", "csi.example.com", "WaitForFirstConsumer", zone_a) + Claim("data", "zonal", "1Gi") +
                NodeY("in-b").Labels(Host("in-b", "b")).Y() + NodeY("in-a").Labels(Host("in-a", "a")).Y() +
                PodY("busy").On("in-a").Cpu("3").Y() + PodY("p").Spec(Mount("data")).Y());
  EXPECT_EQ(PodOf(r, "default/p").node, "in-a");
}

// ---------------------------------------------------------------------------------------------
// VolumeZone

TEST(VolumeZone, ABoundVolumesZoneLabelMustMatchTheNodes) {
  auto r = Plan(Class("disk", "csi.example.com", "WaitForFirstConsumer") +
                Volume("pv-b", "disk", "10Gi", "", "{topology.kubernetes.io/zone: b}", "data") +
                Claim("data", "disk", "5Gi", "pv-b") + NodeY("in-a").Labels(Host("in-a", "a")).Y() +
                NodeY("in-b").Labels(Host("in-b", "b")).Y() + PodY("busy").On("in-b").Cpu("3").Y() +
                PodY("p").Spec(Mount("data")).Y() + PodY("q").Cpu("4").Spec("  nodeSelector: {kubernetes.io/hostname: in-a}\n").Y());
  EXPECT_EQ(PodOf(r, "default/p").node, "in-b");
}

TEST(VolumeZone, AMismatchedZoneIsUnresolvableAndANodeWithoutZonesPasses) {
  const std::string storage = Class("disk", "csi.example.com", "WaitForFirstConsumer") +
                              Volume("pv-b", "disk", "10Gi", "", "{topology.kubernetes.io/zone: b__c}", "data") +
                              Claim("data", "disk", "5Gi", "pv-b");
  auto wrong = Plan(storage + NodeY("in-a").Labels(Host("in-a", "a")).Y() + PodY("p").Spec(Mount("data")).Y());
  EXPECT_TRUE(TextContains(PodOf(wrong, "default/p").message, "1 node(s) had no available volume zone"))
      << PodOf(wrong, "default/p").message;
  // "b__c" allows either zone; a node with no zone labels at all is a single-zone cluster.
  auto c = Plan(storage + NodeY("in-c").Labels(Host("in-c", "c")).Y() + PodY("p").Spec(Mount("data")).Y());
  EXPECT_EQ(PodOf(c, "default/p").node, "in-c");
  auto plain = Plan(storage + NodeY("bare").Y() + PodY("p").Spec(Mount("data")).Y());
  EXPECT_EQ(PodOf(plain, "default/p").node, "bare");
}

// ---------------------------------------------------------------------------------------------
// VolumeRestrictions

std::string ReadWriteOncePodCluster() {
  return Class("disk", "csi.example.com", "WaitForFirstConsumer") + Volume("pv-x", "disk", "10Gi", "", "{}", "solo") +
         Claim("solo", "disk", "1Gi", "pv-x", "ReadWriteOncePod") + NodeY("n1").Y() + NodeY("n2").Y() +
         PodY("holder").On("n1").Spec(Mount("solo")).Y();
}

TEST(VolumeRestrictions, AReadWriteOncePodClaimInUseRefusesEveryNode) {
  auto r = Plan(ReadWriteOncePodCluster() + PodY("p").Spec(Mount("solo")).Y());
  const sim::PodPlan p = PodOf(r, "default/p");
  EXPECT_FALSE(p.scheduled);
  EXPECT_TRUE(TextContains(p.message,
                       "2 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
                       "access mode"))
      << p.message;
  EXPECT_TRUE(r.preemptions.empty());  // the holder's priority is not lower
}

TEST(VolumeRestrictions, AHigherPriorityPodPreemptsTheHolderOfItsClaim) {
  auto r = Plan(PriorityClass("high", 1000) + ReadWriteOncePodCluster() +
                PodY("p").PriorityClass("high").Spec(Mount("solo")).Y());
  ASSERT_EQ(r.preemptions.size(), 1u);
  ASSERT_EQ(r.preemptions[0].victims.size(), 1u);
  EXPECT_EQ(r.preemptions[0].victims[0].name, "default/holder");
  EXPECT_EQ(r.preemptions[0].node, "n1");  // only there does evicting a pod free the claim
  EXPECT_TRUE(PodOf(r, "default/p").scheduled);
}

// ---------------------------------------------------------------------------------------------
// NodeVolumeLimits

TEST(NodeVolumeLimits, TheNodesCsiAttachLimitCountsTheVolumesItsPodsHold) {
  const std::string csi_n1 =
      "---\napiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\nspec:\n  drivers:\n"
      "  - {name: csi.example.com, nodeID: n1, allocatable: {count: 1}}\n";
  const std::string storage = Class("disk", "csi.example.com", "WaitForFirstConsumer") +
                              Volume("pv-1", "disk", "10Gi", "", "{}", "one", "csi.example.com") +
                              Claim("one", "disk", "1Gi", "pv-1") +
                              Volume("pv-2", "disk", "10Gi", "", "{}", "two", "csi.example.com") +
                              Claim("two", "disk", "1Gi", "pv-2") + csi_n1 +
                              PodY("holder").On("n1").Spec(Mount("one")).Y();
  auto only_n1 = Plan(storage + NodeY("n1").Y() + PodY("p").Spec(Mount("two")).Y());
  EXPECT_TRUE(TextContains(PodOf(only_n1, "default/p").message, "1 node(s) exceed max volume count"))
      << PodOf(only_n1, "default/p").message;
  // The same volume as the holder's is attached already and counts once.
  auto same = Plan(storage + NodeY("n1").Y() + PodY("p").Spec(Mount("one")).Y());
  EXPECT_EQ(PodOf(same, "default/p").node, "n1");
  auto two_nodes = Plan(storage + NodeY("n1").Y() + NodeY("n2").Y() + PodY("p").Spec(Mount("two")).Y());
  EXPECT_EQ(PodOf(two_nodes, "default/p").node, "n2");
}

// ---------------------------------------------------------------------------------------------
// Input

TEST(StorageInput, BadClaimsAndClassesAreReportedByField) {
  auto errors = LoadErrors("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\n"
                           "spec:\n  accessModes: [ReadWriteSometimes]\n" +
                           Class("odd", "csi.example.com", "Eventually"));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_TRUE(TextContains(errors[0], "PersistentVolumeClaim default/c: spec.accessModes[0]: unsupported value "
                                  "\"ReadWriteSometimes\"")) << errors[0];
  EXPECT_TRUE(TextContains(errors[1], "StorageClass odd: volumeBindingMode: unsupported value \"Eventually\"")) << errors[1];
}

}  // namespace
}  // namespace arbiter::sched
