// The manifest loader on valid input: what it reads from YAML and JSON, how it defaults and
// derives values as the API server would, where every object came from, and the exact form of
// its error lines.
#include "arbiter/manifest/loader.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testing/plan_harness.h"

namespace arbiter::manifest {
namespace {

using model::SelectorOp;

constexpr int64_t kMi = 1024 * 1024;
constexpr int64_t kGi = 1024 * kMi;

// Loads `files`, failing the test on any error.
ClusterObjects LoadOk(const std::vector<InputFile>& files) {
  LoadResult r = Load(files);
  for (const auto& e : r.errors) ADD_FAILURE() << e;
  return std::move(r.objects);
}

ClusterObjects LoadOk(const std::string& yaml) { return LoadOk({{"test.yaml", yaml}}); }

// The only pod in `yaml`.
model::Pod OnlyPod(const std::string& yaml) {
  ClusterObjects o = LoadOk(yaml);
  if (o.pods.size() != 1) {
    ADD_FAILURE() << "want one pod, got " << o.pods.size();
    return {};
  }
  return o.pods[0].object;
}

// A pod named p whose spec is `spec` (indented by two spaces).
std::string PodWithSpec(const std::string& spec) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n" + spec;
}

std::vector<std::string> Errors(const std::vector<InputFile>& files) { return Load(files).errors; }

// --- input forms --------------------------------------------------------------------------------

TEST(LoaderTest, LoadsMultiDocumentYamlStream) {
  const std::string yaml = arbiter::testing::Node("n1") + arbiter::testing::Pod("p1", "250m") +
                           "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                           "metadata:\n  name: high\nvalue: 1000\ndescription: batch\n";
  ClusterObjects o = LoadOk(yaml);
  ASSERT_EQ(o.nodes.size(), 1u);
  ASSERT_EQ(o.pods.size(), 1u);
  ASSERT_EQ(o.priority_classes.size(), 1u);

  const model::Node& node = o.nodes[0].object;
  EXPECT_EQ(node.name, "n1");
  EXPECT_EQ(node.allocatable.milli_cpu, 4000);
  EXPECT_EQ(node.allocatable.memory, 32 * kGi);
  EXPECT_EQ(node.allocatable.pods, 110);
  EXPECT_EQ(o.pods[0].object.Key(), "default/p1");
  EXPECT_EQ(o.pods[0].object.requests.milli_cpu, 250);
  EXPECT_EQ(o.priority_classes[0].object.name, "high");
  EXPECT_EQ(o.priority_classes[0].object.value, 1000);
  EXPECT_EQ(o.priority_classes[0].object.description, "batch");

  EXPECT_EQ(o.nodes[0].origin.ToString(), "test.yaml: document 1: Node n1");
  EXPECT_EQ(o.pods[0].origin.ToString(), "test.yaml: document 2: Pod default/p1");
  EXPECT_EQ(o.priority_classes[0].origin.ToString(), "test.yaml: document 3: PriorityClass high");
  EXPECT_FALSE(o.config.has_value());
}

TEST(LoaderTest, LoadsJsonObjectAndJsonList) {
  const std::string node = R"({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "n1", "labels": {"zone": "a"}},
    "status": {"allocatable": {"cpu": 1.5, "memory": "8Gi", "pods": 20, "nvidia.com/gpu": "2"}}
  })";
  const std::string list = R"({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop"},
     "spec": {"priority": 0, "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
     "metadata": {"name": "web", "namespace": "shop"},
     "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
  ]})";
  ClusterObjects o = LoadOk({{"node.json", node}, {"list.json", list}});
  ASSERT_EQ(o.nodes.size(), 1u);
  ASSERT_EQ(o.pods.size(), 1u);
  ASSERT_EQ(o.pdbs.size(), 1u);

  const model::Node& n = o.nodes[0].object;
  EXPECT_EQ(n.allocatable.milli_cpu, 1500);  // a JSON number is a quantity too
  EXPECT_EQ(n.allocatable.memory, 8 * kGi);
  EXPECT_EQ(n.allocatable.pods, 20);
  EXPECT_EQ(n.allocatable.Scalar("nvidia.com/gpu"), 2);
  ASSERT_NE(n.labels.Find("zone"), nullptr);
  EXPECT_EQ(*n.labels.Find("zone"), "a");

  EXPECT_EQ(o.pods[0].object.Key(), "shop/web");
  EXPECT_EQ(o.pods[0].object.spec_priority, 0);
  ASSERT_TRUE(o.pdbs[0].object.max_unavailable.has_value());
  EXPECT_EQ(o.pdbs[0].object.max_unavailable->value, 1);
  EXPECT_FALSE(o.pdbs[0].object.max_unavailable->percent);

  EXPECT_EQ(o.nodes[0].origin.ToString(), "node.json: document 1: Node n1");
  EXPECT_EQ(o.pods[0].origin.ToString(), "list.json: document 1, item 1: Pod shop/web");
  EXPECT_EQ(o.pdbs[0].origin.ToString(), "list.json: document 1, item 2: PodDisruptionBudget shop/web");
}

TEST(LoaderTest, LoadsYamlList) {
  const std::string yaml = "apiVersion: v1\nkind: List\nitems:\n"
                           "- {apiVersion: v1, kind: Namespace, metadata: {name: shop}}\n"
                           "- {apiVersion: v1, kind: Namespace, metadata: {name: ops}}\n";
  ClusterObjects o = LoadOk(yaml);
  ASSERT_EQ(o.namespaces.size(), 2u);
  EXPECT_EQ(o.namespaces[1].object.name, "ops");
  EXPECT_EQ(o.namespaces[1].origin.item, 2);
  EXPECT_EQ(o.namespaces[1].origin.document, 1);
}

TEST(LoaderTest, ConcatenatesSeveralFilesInOrder) {
  const std::string nodes = arbiter::testing::Node("n1") + arbiter::testing::Node("n2");
  const std::string more = R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n3"}})";
  const std::string pods = arbiter::testing::Pod("p2", "100m", "n3") + arbiter::testing::Pod("p1");
  ClusterObjects o = LoadOk({{"nodes.yaml", nodes}, {"more.json", more}, {"pods.yaml", pods}});
  ASSERT_EQ(o.nodes.size(), 3u);
  ASSERT_EQ(o.pods.size(), 2u);
  EXPECT_EQ(o.nodes[0].object.name, "n1");
  EXPECT_EQ(o.nodes[1].object.name, "n2");
  EXPECT_EQ(o.nodes[2].object.name, "n3");
  EXPECT_EQ(o.pods[0].object.name, "p2");
  EXPECT_EQ(o.pods[0].object.node_name, "n3");  // bound to a node from another file
  EXPECT_EQ(o.pods[1].object.name, "p1");
  // Documents are counted per file.
  EXPECT_EQ(o.nodes[2].origin.ToString(), "more.json: document 1: Node n3");
  EXPECT_EQ(o.pods[1].origin.ToString(), "pods.yaml: document 2: Pod default/p1");
}

// Objects decoded one at a time and gathered with Append are what Load reads from the same
// documents in one input, checked by CheckDecoded as Load checks them.
TEST(LoaderTest, ObjectsDecodedOneAtATimeAndAppendedAreWhatLoadReadsAtOnce) {
  const std::vector<std::pair<std::string, std::string>> docs = {
      {"n.json", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"2","pods":"10"}}})"},
      {"pc.json", R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},"value":1000})"},
      {"p.json", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"team"},"spec":{"nodeName":"n1","priorityClassName":"high","containers":[{"name":"c"}]}})"},
      {"q.json", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"c"}]}})"},
  };
  std::vector<InputFile> files;
  LoadResult appended;
  for (const auto& [name, text] : docs) {
    files.push_back({name, text});
    LoadResult one = DecodeJson(name, nlohmann::json::parse(text));
    ASSERT_TRUE(one.ok()) << one.errors.front();
    Append(appended.objects, one.objects);
  }
  CheckDecoded(appended);
  EXPECT_TRUE(appended.ok()) << appended.errors.front();
  const ClusterObjects at_once = LoadOk(files);
  ASSERT_EQ(appended.objects.nodes.size(), 1u);
  ASSERT_EQ(appended.objects.priority_classes.size(), 1u);
  ASSERT_EQ(appended.objects.pods.size(), at_once.pods.size());
  for (size_t i = 0; i < at_once.pods.size(); ++i) {
    EXPECT_EQ(appended.objects.pods[i].object.Key(), at_once.pods[i].object.Key());
    EXPECT_EQ(appended.objects.pods[i].object.node_name, at_once.pods[i].object.node_name);
    EXPECT_EQ(appended.objects.pods[i].object.priority_class_name, at_once.pods[i].object.priority_class_name);
    EXPECT_EQ(appended.objects.pods[i].origin.file, at_once.pods[i].origin.file);
  }

  // The whole-input checks see what was gathered: a pod bound to a node left out is named.
  LoadResult without_node;
  for (size_t i = 1; i < docs.size(); ++i) {
    Append(without_node.objects, DecodeJson(docs[i].first, nlohmann::json::parse(docs[i].second)).objects);
  }
  CheckDecoded(without_node);
  ASSERT_FALSE(without_node.ok());
  EXPECT_TRUE(without_node.errors.front().starts_with("p.json:")) << without_node.errors.front();
}

TEST(LoaderTest, DocumentIndexesSkipEmptyDocuments) {
  const std::string yaml = "---\n"
                           "---\n"
                           "# a document of only comments\n"
                           "---\n" +
                           arbiter::testing::Node("n1") +  // starts with its own "---"
                           "---\n"
                           "\n"
                           "...\n" +
                           arbiter::testing::Pod("p1");
  ClusterObjects o = LoadOk(yaml);
  ASSERT_EQ(o.nodes.size(), 1u);
  ASSERT_EQ(o.pods.size(), 1u);
  EXPECT_EQ(o.nodes[0].origin.document, 1);
  EXPECT_EQ(o.pods[0].origin.document, 2);
}

TEST(LoaderTest, ReadsDocumentStartingOnTheSeparatorLine) {
  ClusterObjects o = LoadOk("--- {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n"
                            "--- {apiVersion: v1, kind: Namespace, metadata: {name: b}}\n");
  ASSERT_EQ(o.namespaces.size(), 2u);
  EXPECT_EQ(o.namespaces[1].object.name, "b");
  EXPECT_EQ(o.namespaces[1].origin.document, 2);
}

TEST(LoaderTest, ReadInputFileReadsAFileAndReportsAMissingOne) {
  const std::filesystem::path path =
      std::filesystem::path(::testing::TempDir()) / "arbiter_loader_test_input.yaml";
  {
    std::ofstream out(path, std::ios::binary);
    out << arbiter::testing::Node("n1");
  }
  auto file = ReadInputFile(path.string());
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->name, path.string());
  EXPECT_EQ(file->content, arbiter::testing::Node("n1"));
  std::filesystem::remove(path);

  auto missing = ReadInputFile(path.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), path.string() + ": cannot open file: No such file or directory");
}

// --- requests -----------------------------------------------------------------------------------

TEST(LoaderTest, LimitsBecomeRequestsWhenRequestsAreAbsent) {
  const model::Pod pod = OnlyPod(PodWithSpec(
      "  containers:\n"
      "  - name: limits-only\n"
      "    resources:\n"
      "      limits: {cpu: \"2\", memory: 1Gi, nvidia.com/gpu: \"1\"}\n"
      "  - name: both\n"
      "    resources:\n"
      "      requests: {cpu: 100m}\n"
      "      limits: {cpu: 500m, memory: 256Mi}\n"));
  // 2 + 100m (the second container's request wins over its limit); memory from both limits.
  EXPECT_EQ(pod.requests.milli_cpu, 2100);
  EXPECT_EQ(pod.requests.memory, 1 * kGi + 256 * kMi);
  EXPECT_EQ(pod.requests.Scalar("nvidia.com/gpu"), 1);
  // Every container states CPU and memory (through its limits), so scoring adds no defaults.
  EXPECT_EQ(pod.non_zero_milli_cpu, 2100);
  EXPECT_EQ(pod.non_zero_memory, 1 * kGi + 256 * kMi);
}

TEST(LoaderTest, InitContainersAndOverheadMakeTheEffectiveRequest) {
  const model::Pod pod = OnlyPod(PodWithSpec(
      "  initContainers:\n"
      "  - name: migrate\n"
      "    resources: {requests: {cpu: \"2\", memory: 128Mi}}\n"
      "  containers:\n"
      "  - name: a\n"
      "    resources: {requests: {cpu: 500m, memory: 256Mi}}\n"
      "  - name: b\n"
      "    resources: {requests: {cpu: 500m, memory: 256Mi}}\n"
      "  overhead: {cpu: 100m, memory: 64Mi}\n"));
  // max(500m + 500m, 2) + 100m; max(256Mi + 256Mi, 128Mi) + 64Mi.
  EXPECT_EQ(pod.requests.milli_cpu, 2100);
  EXPECT_EQ(pod.requests.memory, 576 * kMi);
}

TEST(LoaderTest, SidecarInitContainerCountsWithTheAppAndTheInitContainersAfterIt) {
  const std::string sidecar = "  - name: proxy\n"
                              "    restartPolicy: Always\n"
                              "    resources: {requests: {cpu: 300m, memory: 100Mi}}\n";
  const std::string one_shot = "  - name: migrate\n"
                               "    resources: {requests: {cpu: \"1\", memory: 50Mi}}\n";
  const std::string app = "  containers:\n"
                          "  - name: app\n"
                          "    resources: {requests: {cpu: 500m, memory: 200Mi}}\n";
  // Sidecar first: the one-shot runs next to it, 1 + 300m = 1300m beats 500m + 300m.
  const model::Pod sidecar_first = OnlyPod(PodWithSpec("  initContainers:\n" + sidecar + one_shot + app));
  EXPECT_EQ(sidecar_first.requests.milli_cpu, 1300);
  EXPECT_EQ(sidecar_first.requests.memory, 300 * kMi);
  // One-shot first: it runs alone, 1 beats 500m + 300m = 800m.
  const model::Pod one_shot_first = OnlyPod(PodWithSpec("  initContainers:\n" + one_shot + sidecar + app));
  EXPECT_EQ(one_shot_first.requests.milli_cpu, 1000);
  EXPECT_EQ(one_shot_first.requests.memory, 300 * kMi);
}

TEST(LoaderTest, NonZeroScoringRequestsDefaultPerContainer) {
  const model::Pod pod = OnlyPod(PodWithSpec(
      "  containers:\n"
      "  - name: nothing-stated\n"
      "  - name: cpu-only\n"
      "    resources: {requests: {cpu: 200m}}\n"
      "  - name: explicit-zero\n"
      "    resources: {requests: {cpu: \"0\", memory: \"0\"}}\n"));
  EXPECT_EQ(pod.requests.milli_cpu, 200);
  EXPECT_EQ(pod.requests.memory, 0);
  // 100m and 200Mi for each resource a container does not state; a stated zero stays zero.
  EXPECT_EQ(pod.non_zero_milli_cpu, 100 + 200 + 0);
  EXPECT_EQ(pod.non_zero_memory, 200 * kMi + 200 * kMi + 0);
}

TEST(LoaderTest, NodeUsesCapacityWhenAllocatableIsAbsent) {
  ClusterObjects o = LoadOk(
      "apiVersion: v1\nkind: Node\nmetadata: {name: capacity-only}\n"
      "status:\n  capacity: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n"
      "---\n"
      "apiVersion: v1\nkind: Node\nmetadata: {name: both}\n"
      "status:\n  capacity: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n"
      "  allocatable: {cpu: 7500m, memory: 30Gi, pods: \"100\"}\n");
  ASSERT_EQ(o.nodes.size(), 2u);
  EXPECT_EQ(o.nodes[0].object.allocatable.milli_cpu, 8000);
  EXPECT_EQ(o.nodes[0].object.allocatable.memory, 32 * kGi);
  EXPECT_EQ(o.nodes[0].object.allocatable.pods, 110);
  EXPECT_EQ(o.nodes[1].object.allocatable.milli_cpu, 7500);
  EXPECT_EQ(o.nodes[1].object.allocatable.memory, 30 * kGi);
  EXPECT_EQ(o.nodes[1].object.allocatable.pods, 100);
}

// --- defaults and fields ------------------------------------------------------------------------

TEST(LoaderTest, DefaultsNamespaceAndSchedulerName) {
  ClusterObjects o = LoadOk(
      PodWithSpec("  containers: [{name: c}]\n") +
      "---\n"
      "apiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: batch, uid: 7f3c}\n"
      "spec:\n  schedulerName: gang-scheduler\n  containers: [{name: c}]\n"
      "---\n"
      "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\n"
      "spec: {minAvailable: 1}\n");
  ASSERT_EQ(o.pods.size(), 2u);
  const model::Pod& p = o.pods[0].object;
  EXPECT_EQ(p.ns, "default");
  EXPECT_EQ(p.scheduler_name, "default-scheduler");
  EXPECT_EQ(p.uid, "default/p");  // stable and unique within the input
  EXPECT_EQ(p.termination_grace_period_seconds, 30);
  EXPECT_TRUE(p.priority_class_name.empty());
  EXPECT_FALSE(p.spec_priority.has_value());
  EXPECT_FALSE(p.spec_preemption_policy.has_value());
  EXPECT_TRUE(p.node_name.empty());

  const model::Pod& q = o.pods[1].object;
  EXPECT_EQ(q.Key(), "batch/q");
  EXPECT_EQ(q.scheduler_name, "gang-scheduler");
  EXPECT_EQ(q.uid, "7f3c");

  ASSERT_EQ(o.pdbs.size(), 1u);
  EXPECT_EQ(o.pdbs[0].object.ns, "default");
}

TEST(LoaderTest, ReadsPodPriorityTimestampsPortsAndStatus) {
  const model::Pod pod = OnlyPod(
      "apiVersion: v1\nkind: Pod\n"
      "metadata:\n"
      "  name: p\n"
      "  labels: {app: web, tier: \"\"}\n"
      "  creationTimestamp: \"2024-01-02T03:04:05Z\"\n"
      "  deletionTimestamp: \"2024-01-02T03:04:06.5Z\"\n"
      "spec:\n"
      "  priorityClassName: high\n"
      "  priority: 1000\n"
      "  preemptionPolicy: Never\n"
      "  terminationGracePeriodSeconds: 5\n"
      "  schedulingGroup: {podGroupName: trainers}\n"
      "  containers:\n"
      "  - name: c\n"
      "    ports:\n"
      "    - {containerPort: 80, hostPort: 8080}\n"
      "    - {containerPort: 53, hostPort: 53, protocol: UDP, hostIP: 10.0.0.1}\n"
      "    - {containerPort: 9090}\n"
      "status:\n"
      "  startTime: \"2024-01-02T05:04:05+02:00\"\n"
      "  nominatedNodeName: \"\"\n"
      "---\n"
      "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: trainers}\n"
      "spec: {schedulingPolicy: {basic: {}}}\n");
  constexpr int64_t k20240102T030405 = 1704164645LL * kSecond;
  ASSERT_TRUE(pod.labels.Has("tier"));
  EXPECT_EQ(*pod.labels.Find("tier"), "");
  EXPECT_EQ(pod.creation_timestamp, k20240102T030405);
  EXPECT_EQ(pod.deletion_timestamp, k20240102T030405 + 1500 * kMillisecond);
  EXPECT_EQ(pod.start_time, k20240102T030405);  // 05:04:05+02:00 is 03:04:05Z
  EXPECT_EQ(pod.priority_class_name, "high");
  EXPECT_EQ(pod.spec_priority, 1000);
  EXPECT_EQ(pod.spec_preemption_policy, model::PreemptionPolicy::kNever);
  EXPECT_EQ(pod.termination_grace_period_seconds, 5);
  EXPECT_EQ(pod.pod_group_name, "trainers");
  EXPECT_TRUE(pod.nominated_node_name.empty());
  // Only ports with a hostPort occupy the node.
  ASSERT_EQ(pod.host_ports.size(), 2u);
  EXPECT_EQ(pod.host_ports[0].port, 8080);
  EXPECT_EQ(pod.host_ports[0].protocol, "TCP");
  EXPECT_EQ(pod.host_ports[0].host_ip, "0.0.0.0");
  EXPECT_EQ(pod.host_ports[1].port, 53);
  EXPECT_EQ(pod.host_ports[1].protocol, "UDP");
  EXPECT_EQ(pod.host_ports[1].host_ip, "10.0.0.1");
}

TEST(LoaderTest, ReadsTaintsTolerationsAffinityAndSpread) {
  const std::string node =
      "apiVersion: v1\nkind: Node\n"
      "metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}\n"
      "spec:\n"
      "  unschedulable: true\n"
      "  taints:\n"
      "  - {key: dedicated, value: gpu, effect: NoSchedule}\n"
      "  - {key: example.com/maintenance, effect: NoExecute}\n";
  const std::string pod =
      "---\n" + PodWithSpec(
                    "  nodeSelector: {disktype: ssd}\n"
                    "  tolerations:\n"
                    "  - {key: dedicated, value: gpu, effect: NoSchedule}\n"
                    "  - {operator: Exists}\n"
                    "  - {key: example.com/maintenance, operator: Exists, effect: NoExecute,"
                    " tolerationSeconds: 300}\n"
                    "  affinity:\n"
                    "    nodeAffinity:\n"
                    "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                    "        nodeSelectorTerms:\n"
                    "        - matchExpressions:\n"
                    "          - {key: topology.kubernetes.io/zone, operator: In, values: [a, b]}\n"
                    "          matchFields:\n"
                    "          - {key: metadata.name, operator: NotIn, values: [n3]}\n"
                    "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                    "      - weight: 20\n"
                    "        preference:\n"
                    "          matchExpressions: [{key: cpu-generation, operator: Gt, values: [\"3\"]}]\n"
                    "    podAffinity:\n"
                    "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                    "      - weight: 50\n"
                    "        podAffinityTerm:\n"
                    "          labelSelector: {matchLabels: {app: cache}}\n"
                    "          namespaces: [shop]\n"
                    "          topologyKey: topology.kubernetes.io/zone\n"
                    "    podAntiAffinity:\n"
                    "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                    "      - labelSelector:\n"
                    "          matchExpressions: [{key: app, operator: In, values: [web]}]\n"
                    "        namespaceSelector: {}\n"
                    "        topologyKey: kubernetes.io/hostname\n"
                    "  topologySpreadConstraints:\n"
                    "  - maxSkew: 2\n"
                    "    topologyKey: topology.kubernetes.io/zone\n"
                    "    whenUnsatisfiable: ScheduleAnyway\n"
                    "    labelSelector: {matchLabels: {app: web}}\n"
                    "    nodeTaintsPolicy: Honor\n"
                    "    matchLabelKeys: [pod-template-hash]\n"
                    "  - maxSkew: 1\n"
                    "    minDomains: 3\n"
                    "    topologyKey: kubernetes.io/hostname\n"
                    "    whenUnsatisfiable: DoNotSchedule\n"
                    "  containers: [{name: c}]\n");
  ClusterObjects o = LoadOk(node + pod);
  ASSERT_EQ(o.nodes.size(), 1u);
  ASSERT_EQ(o.pods.size(), 1u);

  const model::Node& n = o.nodes[0].object;
  EXPECT_TRUE(n.unschedulable);
  ASSERT_EQ(n.taints.size(), 2u);
  EXPECT_EQ(n.taints[0].key, "dedicated");
  EXPECT_EQ(n.taints[0].value, "gpu");
  EXPECT_EQ(n.taints[0].effect, model::TaintEffect::kNoSchedule);
  EXPECT_EQ(n.taints[1].key, "example.com/maintenance");
  EXPECT_EQ(n.taints[1].value, "");
  EXPECT_EQ(n.taints[1].effect, model::TaintEffect::kNoExecute);

  const model::Pod& p = o.pods[0].object;
  ASSERT_NE(p.node_selector.Find("disktype"), nullptr);
  EXPECT_EQ(*p.node_selector.Find("disktype"), "ssd");

  ASSERT_EQ(p.tolerations.size(), 3u);
  EXPECT_EQ(p.tolerations[0].op, model::Toleration::Op::kEqual);  // the default operator
  EXPECT_EQ(p.tolerations[0].value, "gpu");
  EXPECT_EQ(p.tolerations[0].effect, model::TaintEffect::kNoSchedule);
  EXPECT_EQ(p.tolerations[1].op, model::Toleration::Op::kExists);
  EXPECT_TRUE(p.tolerations[1].key.empty());
  EXPECT_FALSE(p.tolerations[1].effect.has_value());
  EXPECT_EQ(p.tolerations[2].toleration_seconds, 300);
  EXPECT_TRUE(p.tolerations[2].Tolerates(n.taints[1]));

  const model::NodeAffinity& na = p.affinity.node_affinity;
  ASSERT_TRUE(na.required.has_value());
  ASSERT_EQ(na.required->terms.size(), 1u);
  const model::NodeSelectorTerm& term = na.required->terms[0];
  ASSERT_EQ(term.match_expressions.size(), 1u);
  EXPECT_EQ(term.match_expressions[0].key, "topology.kubernetes.io/zone");
  EXPECT_EQ(term.match_expressions[0].op, SelectorOp::kIn);
  EXPECT_EQ(term.match_expressions[0].values, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(term.match_fields.size(), 1u);
  EXPECT_EQ(term.match_fields[0].op, SelectorOp::kNotIn);
  ASSERT_EQ(na.preferred.size(), 1u);
  EXPECT_EQ(na.preferred[0].weight, 20);
  ASSERT_EQ(na.preferred[0].preference.match_expressions.size(), 1u);
  EXPECT_EQ(na.preferred[0].preference.match_expressions[0].op, SelectorOp::kGt);

  ASSERT_TRUE(p.affinity.pod_affinity.required.empty());
  ASSERT_EQ(p.affinity.pod_affinity.preferred.size(), 1u);
  const model::WeightedPodAffinityTerm& wt = p.affinity.pod_affinity.preferred[0];
  EXPECT_EQ(wt.weight, 50);
  EXPECT_EQ(wt.term.namespaces, std::vector<std::string>{"shop"});
  EXPECT_EQ(wt.term.topology_key, "topology.kubernetes.io/zone");
  ASSERT_TRUE(wt.term.label_selector.has_value());
  ASSERT_EQ(wt.term.label_selector->requirements.size(), 1u);
  EXPECT_EQ(wt.term.label_selector->requirements[0].key, "app");
  EXPECT_FALSE(wt.term.namespace_selector.has_value());  // absent: the pod's own namespace

  ASSERT_EQ(p.affinity.pod_anti_affinity.required.size(), 1u);
  const model::PodAffinityTerm& anti = p.affinity.pod_anti_affinity.required[0];
  EXPECT_EQ(anti.topology_key, "kubernetes.io/hostname");
  ASSERT_TRUE(anti.namespace_selector.has_value());  // {}: every namespace
  EXPECT_TRUE(anti.namespace_selector->empty());
  ASSERT_TRUE(anti.label_selector.has_value());
  EXPECT_EQ(anti.label_selector->requirements[0].op, SelectorOp::kIn);

  ASSERT_EQ(p.topology_spread_constraints.size(), 2u);
  const model::TopologySpreadConstraint& s0 = p.topology_spread_constraints[0];
  EXPECT_EQ(s0.max_skew, 2);
  EXPECT_EQ(s0.topology_key, "topology.kubernetes.io/zone");
  EXPECT_EQ(s0.when_unsatisfiable, model::UnsatisfiableAction::kScheduleAnyway);
  EXPECT_TRUE(s0.label_selector.has_value());
  EXPECT_FALSE(s0.min_domains.has_value());
  EXPECT_EQ(s0.node_affinity_policy, model::NodeInclusionPolicy::kHonor);
  EXPECT_EQ(s0.node_taints_policy, model::NodeInclusionPolicy::kHonor);
  EXPECT_EQ(s0.match_label_keys, std::vector<std::string>{"pod-template-hash"});
  const model::TopologySpreadConstraint& s1 = p.topology_spread_constraints[1];
  EXPECT_EQ(s1.when_unsatisfiable, model::UnsatisfiableAction::kDoNotSchedule);
  EXPECT_EQ(s1.min_domains, 3);
  EXPECT_FALSE(s1.label_selector.has_value());
  EXPECT_EQ(s1.node_taints_policy, model::NodeInclusionPolicy::kIgnore);  // the default
}

TEST(LoaderTest, ReadsKubeSchedulerConfigurationArgs) {
  ClusterObjects o = LoadOk(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "percentageOfNodesToScore: 40\n"
      "podInitialBackoffSeconds: 2\n"
      "podMaxBackoffSeconds: 20\n"
      "featureGates: {GenericWorkload: false}\n"
      "profiles:\n"
      "- schedulerName: my-scheduler\n"
      "  plugins:\n"
      "    score:\n"
      "      enabled: [{name: NodeResourcesFit, weight: 5}]\n"
      "      disabled: [{name: ImageLocality}]\n"
      "    filter:\n"
      "      disabled: [{name: NodePorts}]\n"
      "  pluginConfig:\n"
      "  - name: DefaultPreemption\n"
      "    args: {minCandidateNodesPercentage: 25, minCandidateNodesAbsolute: 50}\n"
      "  - name: NodeResourcesFit\n"
      "    args:\n"
      "      scoringStrategy:\n"
      "        type: RequestedToCapacityRatio\n"
      "        resources: [{name: cpu, weight: 3}, {name: nvidia.com/gpu}]\n"
      "        requestedToCapacityRatio:\n"
      "          shape: [{utilization: 0, score: 10}, {utilization: 100, score: 0}]\n"
      "  - name: InterPodAffinity\n"
      "    args: {hardPodAffinityWeight: 7}\n");
  ASSERT_TRUE(o.config.has_value());
  const model::SchedulerConfig& c = o.config->object;
  EXPECT_EQ(o.config->origin.ToString(), "test.yaml: document 1: KubeSchedulerConfiguration");
  EXPECT_EQ(c.scheduler_name, "my-scheduler");
  EXPECT_EQ(c.percentage_of_nodes_to_score, 40);
  EXPECT_EQ(c.pod_initial_backoff_seconds, 2);
  EXPECT_EQ(c.pod_max_backoff_seconds, 20);
  EXPECT_FALSE(c.feature_gates.at("GenericWorkload"));
  EXPECT_TRUE(c.feature_gates.at("CompositePodGroup"));  // untouched gates keep their default
  EXPECT_EQ(c.score_weights.at("NodeResourcesFit"), 5);
  EXPECT_EQ(c.disabled_plugins, (std::vector<std::string>{"ImageLocality/score", "NodePorts"}));
  EXPECT_EQ(c.min_candidate_nodes_percentage, 25);
  EXPECT_EQ(c.min_candidate_nodes_absolute, 50);
  EXPECT_EQ(c.scoring_strategy, model::ScoringStrategy::kRequestedToCapacityRatio);
  ASSERT_EQ(c.scoring_resources.size(), 2u);
  EXPECT_EQ(c.scoring_resources[0].name, "cpu");
  EXPECT_EQ(c.scoring_resources[0].weight, 3);
  EXPECT_EQ(c.scoring_resources[1].name, "nvidia.com/gpu");
  EXPECT_EQ(c.scoring_resources[1].weight, 1);  // the default weight
  ASSERT_EQ(c.requested_to_capacity_shape.size(), 2u);
  EXPECT_EQ(c.requested_to_capacity_shape[0].score, 10);
  EXPECT_EQ(c.requested_to_capacity_shape[1].utilization, 100);
  EXPECT_EQ(c.hard_pod_affinity_weight, 7);
}

TEST(LoaderTest, SchedulerConfigurationDefaultsMatchKubeScheduler) {
  ClusterObjects o = LoadOk("apiVersion: kubescheduler.config.k8s.io/v1\n"
                            "kind: KubeSchedulerConfiguration\n");
  ASSERT_TRUE(o.config.has_value());
  const model::SchedulerConfig& c = o.config->object;
  EXPECT_EQ(c.scheduler_name, "default-scheduler");
  EXPECT_EQ(c.percentage_of_nodes_to_score, 0);
  EXPECT_EQ(c.pod_initial_backoff_seconds, 1);
  EXPECT_EQ(c.pod_max_backoff_seconds, 10);
  EXPECT_EQ(c.min_candidate_nodes_percentage, 10);
  EXPECT_EQ(c.min_candidate_nodes_absolute, 100);
  EXPECT_EQ(c.scoring_strategy, model::ScoringStrategy::kLeastAllocated);
  EXPECT_TRUE(c.disabled_plugins.empty());
}

TEST(LoaderTest, ReadsPdbAndNamespace) {
  ClusterObjects o = LoadOk(
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {team: payments}}\n"
      "---\n"
      "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
      "metadata: {name: web, namespace: shop}\n"
      "spec:\n"
      "  minAvailable: 50%\n"
      "  selector:\n"
      "    matchLabels: {app: web}\n"
      "    matchExpressions: [{key: tier, operator: NotIn, values: [canary]}]\n"
      "status:\n"
      "  disruptionsAllowed: 1\n"
      "  disruptedPods: {web-1: \"2024-01-02T03:04:05Z\"}\n");
  ASSERT_EQ(o.namespaces.size(), 1u);
  EXPECT_EQ(o.namespaces[0].object.name, "shop");
  ASSERT_NE(o.namespaces[0].object.labels.Find("team"), nullptr);
  EXPECT_EQ(*o.namespaces[0].object.labels.Find("team"), "payments");

  ASSERT_EQ(o.pdbs.size(), 1u);
  const model::PodDisruptionBudget& b = o.pdbs[0].object;
  EXPECT_EQ(b.ns, "shop");
  EXPECT_EQ(b.name, "web");
  ASSERT_TRUE(b.min_available.has_value());
  EXPECT_EQ(b.min_available->value, 50);
  EXPECT_TRUE(b.min_available->percent);
  EXPECT_FALSE(b.max_unavailable.has_value());
  ASSERT_EQ(b.selector.requirements.size(), 2u);
  EXPECT_EQ(b.selector.requirements[0].key, "app");
  EXPECT_EQ(b.selector.requirements[0].op, SelectorOp::kIn);
  EXPECT_EQ(b.selector.requirements[1].op, SelectorOp::kNotIn);
  EXPECT_EQ(b.disruptions_allowed, 1);
  EXPECT_EQ(b.disrupted_pods, std::vector<std::string>{"shop/web-1"});
  EXPECT_EQ(o.pdbs[0].origin.ToString(), "test.yaml: document 2: PodDisruptionBudget shop/web");
}

TEST(LoaderTest, ReadsPodGroupsAsTheWapExamplesWriteThem) {
  ClusterObjects o = LoadOk(
      "apiVersion: scheduling.k8s.io/v1beta1\n"
      "kind: PodGroup\n"
      "metadata:\n"
      "  name: solvers\n"
      "  namespace: sim\n"
      "spec:\n"
      "  schedulingPolicy:\n"
      "    gang:\n"
      "      minCount: 5\n"
      "  disruptionMode:\n"
      "    all: {}\n"
      "  priorityClassName: batch-high\n"
      "  priority: 700\n"
      "  preemptionPolicy: Never\n"
      "---\n"
      "apiVersion: scheduling.k8s.io/v1beta1\n"
      "kind: PodGroup\n"
      "metadata: {name: loaders}\n"
      "spec:\n"
      "  schedulingPolicy: {basic: {}}\n"
      "---\n"
      "apiVersion: v1\nkind: Pod\nmetadata: {name: s-0, namespace: sim}\n"
      "spec:\n"
      "  schedulingGroup: {podGroupName: solvers}\n"
      "  containers: [{name: c}]\n");
  ASSERT_EQ(o.pod_groups.size(), 2u);
  const model::PodGroup& g = o.pod_groups[0].object;
  EXPECT_EQ(g.Key(), "sim/solvers");
  EXPECT_EQ(g.policy, model::GroupPolicy::kGang);
  EXPECT_EQ(g.min_count, 5);
  EXPECT_EQ(g.disruption_mode, model::DisruptionMode::kAll);
  EXPECT_EQ(g.priority.priority_class_name, "batch-high");
  EXPECT_EQ(g.priority.spec_priority, 700);
  EXPECT_EQ(g.priority.spec_preemption_policy, model::PreemptionPolicy::kNever);
  EXPECT_FALSE(g.workload_ref.has_value());
  EXPECT_TRUE(g.parent.empty());
  EXPECT_EQ(o.pod_groups[0].origin.ToString(), "test.yaml: document 1: PodGroup sim/solvers");

  // Defaults: single disruption, no priority fields, the default namespace.
  const model::PodGroup& b = o.pod_groups[1].object;
  EXPECT_EQ(b.Key(), "default/loaders");
  EXPECT_EQ(b.policy, model::GroupPolicy::kBasic);
  EXPECT_EQ(b.min_count, 0);
  EXPECT_EQ(b.disruption_mode, model::DisruptionMode::kSingle);
  EXPECT_TRUE(b.priority.priority_class_name.empty());
  EXPECT_FALSE(b.priority.spec_priority.has_value());
  EXPECT_FALSE(b.priority.spec_preemption_policy.has_value());

  ASSERT_EQ(o.pods.size(), 1u);
  EXPECT_EQ(o.pods[0].object.pod_group_name, "solvers");
}

TEST(LoaderTest, ReadsWorkloadTemplatesAndTheCompositeHierarchy) {
  ClusterObjects o = LoadOk(
      "apiVersion: scheduling.k8s.io/v1beta1\n"
      "kind: Workload\n"
      "metadata: {name: sweep, namespace: lab}\n"
      "spec:\n"
      "  controllerRef: {apiGroup: batch, kind: Job, name: sweep}\n"
      "  podGroupTemplates:\n"
      "  - name: actor\n"
      "    schedulingPolicy: {gang: {minCount: 3}}\n"
      "    disruptionMode: {all: {}}\n"
      "    priorityClassName: lab-high\n"
      "  - name: learner\n"
      "    schedulingPolicy: {basic: {}}\n"
      "    preemptionPolicy: PreemptLowerPriority\n"
      "---\n"
      "apiVersion: scheduling.k8s.io/v1beta1\n"
      "kind: Workload\n"
      "metadata: {name: tiers, namespace: lab}\n"
      "spec:\n"
      "  compositePodGroupTemplates:\n"
      "  - name: top\n"
      "    schedulingPolicy: {gang: {minGroupCount: 2}}\n"
      "    disruptionMode: {all: {}}\n"
      "    compositePodGroupTemplates:\n"
      "    - name: mid\n"
      "      schedulingPolicy: {basic: {}}\n"
      "      podGroupTemplates:\n"
      "      - name: leaf\n"
      "        schedulingPolicy: {gang: {minCount: 2}}\n"
      "---\n"
      "apiVersion: scheduling.k8s.io/v1alpha3\n"
      "kind: CompositePodGroup\n"
      "metadata: {name: tiers-top, namespace: lab}\n"
      "spec:\n"
      "  workloadRef: {workloadName: tiers, templateName: top}\n"
      "  schedulingPolicy: {gang: {minGroupCount: 2}}\n"
      "  disruptionMode: {all: {}}\n"
      "  priorityClassName: lab-high\n"
      "---\n"
      "apiVersion: scheduling.k8s.io/v1alpha3\n"
      "kind: CompositePodGroup\n"
      "metadata: {name: tiers-mid, namespace: lab}\n"
      "spec:\n"
      "  workloadRef: {workloadName: tiers, templateName: mid}\n"
      "  parentCompositePodGroupName: tiers-top\n"
      "  schedulingPolicy: {basic: {}}\n"
      "---\n"
      "apiVersion: scheduling.k8s.io/v1beta1\n"
      "kind: PodGroup\n"
      "metadata: {name: tiers-leaf, namespace: lab}\n"
      "spec:\n"
      "  workloadRef: {workloadName: tiers, templateName: leaf}\n"
      "  parentCompositePodGroupName: tiers-mid\n"
      "  schedulingPolicy: {gang: {minCount: 2}}\n");
  ASSERT_EQ(o.workloads.size(), 2u);
  const model::Workload& w = o.workloads[0].object;
  EXPECT_EQ(w.Key(), "lab/sweep");
  ASSERT_TRUE(w.controller_ref.has_value());
  EXPECT_EQ(w.controller_ref->api_group, "batch");
  EXPECT_EQ(w.controller_ref->kind, "Job");
  EXPECT_EQ(w.controller_ref->name, "sweep");
  ASSERT_EQ(w.pod_group_templates.size(), 2u);
  EXPECT_TRUE(w.composite_pod_group_templates.empty());
  EXPECT_EQ(w.pod_group_templates[0].name, "actor");
  EXPECT_EQ(w.pod_group_templates[0].policy, model::GroupPolicy::kGang);
  EXPECT_EQ(w.pod_group_templates[0].min_count, 3);
  EXPECT_EQ(w.pod_group_templates[0].disruption_mode, model::DisruptionMode::kAll);
  EXPECT_EQ(w.pod_group_templates[0].priority.priority_class_name, "lab-high");
  EXPECT_EQ(w.pod_group_templates[1].policy, model::GroupPolicy::kBasic);
  EXPECT_EQ(w.pod_group_templates[1].disruption_mode, model::DisruptionMode::kSingle);
  EXPECT_EQ(w.pod_group_templates[1].priority.spec_preemption_policy,
            model::PreemptionPolicy::kPreemptLowerPriority);

  const model::Workload& t = o.workloads[1].object;
  EXPECT_TRUE(t.pod_group_templates.empty());
  ASSERT_EQ(t.composite_pod_group_templates.size(), 1u);
  const model::CompositePodGroupTemplate& top = t.composite_pod_group_templates[0];
  EXPECT_EQ(top.name, "top");
  EXPECT_EQ(top.min_group_count, 2);
  EXPECT_EQ(top.disruption_mode, model::DisruptionMode::kAll);
  ASSERT_EQ(top.composite_pod_group_templates.size(), 1u);
  const model::CompositePodGroupTemplate& mid = top.composite_pod_group_templates[0];
  EXPECT_EQ(mid.policy, model::GroupPolicy::kBasic);
  ASSERT_EQ(mid.pod_group_templates.size(), 1u);
  EXPECT_EQ(mid.pod_group_templates[0].name, "leaf");
  EXPECT_EQ(mid.pod_group_templates[0].min_count, 2);

  ASSERT_EQ(o.composite_pod_groups.size(), 2u);
  const model::CompositePodGroup& c = o.composite_pod_groups[0].object;
  EXPECT_EQ(c.Key(), "lab/tiers-top");
  EXPECT_EQ(c.workload_ref.workload_name, "tiers");
  EXPECT_EQ(c.workload_ref.template_name, "top");
  EXPECT_TRUE(c.parent.empty());
  EXPECT_EQ(c.policy, model::GroupPolicy::kGang);
  EXPECT_EQ(c.min_group_count, 2);
  EXPECT_EQ(c.disruption_mode, model::DisruptionMode::kAll);
  EXPECT_EQ(c.priority.priority_class_name, "lab-high");
  EXPECT_EQ(o.composite_pod_groups[1].object.parent, "tiers-top");
  EXPECT_EQ(o.composite_pod_groups[1].origin.ToString(),
            "test.yaml: document 4: CompositePodGroup lab/tiers-mid");

  ASSERT_EQ(o.pod_groups.size(), 1u);
  const model::PodGroup& leaf = o.pod_groups[0].object;
  EXPECT_EQ(leaf.parent, "tiers-mid");
  ASSERT_TRUE(leaf.workload_ref.has_value());
  EXPECT_EQ(leaf.workload_ref->template_name, "leaf");
}

TEST(LoaderTest, GroupErrorsNameTheFieldAndTheChain) {
  const std::string cpg =
      "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\n";
  auto composite = [&](const std::string& name, const std::string& parent) {
    return "---\n" + cpg + "metadata: {name: " + name + "}\nspec:\n"
           "  workloadRef: {workloadName: w, templateName: t}\n"
           "  schedulingPolicy: {basic: {}}\n" +
           (parent.empty() ? "" : "  parentCompositePodGroupName: " + parent + "\n");
  };
  EXPECT_EQ(Errors({{"c.yaml", composite("a", "b") + composite("b", "a")}}),
            std::vector<std::string>{
                "c.yaml: document 1: CompositePodGroup default/a: "
                "spec.parentCompositePodGroupName: the parent links form a cycle: "
                "default/a -> default/b -> default/a"});
  EXPECT_EQ(Errors({{"d.yaml", composite("l1", "") + composite("l2", "l1") + composite("l3", "l2") +
                                   composite("l4", "l3") + composite("l5", "l4") +
                                   composite("l6", "l5")}}),
            std::vector<std::string>{
                "d.yaml: document 5: CompositePodGroup default/l5: "
                "spec.parentCompositePodGroupName: the hierarchy has 5 levels, more than the 4 "
                "allowed: default/l5 -> default/l4 -> default/l3 -> default/l2 -> default/l1"});
  EXPECT_EQ(Errors({{"m.yaml", composite("orphan", "gone")}}),
            std::vector<std::string>{
                "m.yaml: document 1: CompositePodGroup default/orphan: "
                "spec.parentCompositePodGroupName: CompositePodGroup \"default/gone\" is not in "
                "the input"});
  EXPECT_EQ(Errors({{"g.yaml", "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\n"
                               "metadata: {name: pg}\nspec:\n  schedulingPolicy: {gang: {minCount: 0}}\n"}}),
            std::vector<std::string>{"g.yaml: document 1: PodGroup default/pg: "
                                     "spec.schedulingPolicy.gang.minCount: must be at least 1, not 0"});
}

TEST(LoaderTest, JsonNumbersKeepTheTextTheUserWrote) {
  ClusterObjects o = LoadOk({{"n.json", R"({"apiVersion": "v1", "kind": "Node",
      "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": 2E3, "memory": 1e3}}})"}});
  ASSERT_EQ(o.nodes.size(), 1u);
  EXPECT_EQ(o.nodes[0].object.allocatable.milli_cpu, 2000 * 1000);
  EXPECT_EQ(o.nodes[0].object.allocatable.memory, 1000);
}

// --- error lines --------------------------------------------------------------------------------

TEST(LoaderErrorTest, NamesFileDocumentObjectAndField) {
  const std::string yaml = arbiter::testing::Node("n1") +
                           "---\napiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop}\n"
                           "spec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: 1.2.3}}\n";
  EXPECT_EQ(Errors({{"shop.yaml", yaml}}),
            std::vector<std::string>{
                "shop.yaml: document 2: Pod shop/web: spec.containers[0].resources.requests.cpu: "
                "invalid quantity \"1.2.3\": more than one decimal point"});
}

TEST(LoaderErrorTest, NamesTheItemOfAList) {
  const std::string list = R"({"apiVersion": "v1", "kind": "List", "items": [
      {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
      {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"},
       "status": {"allocatable": {"memory": "lots"}}}]})";
  EXPECT_EQ(Errors({{"list.json", list}}),
            std::vector<std::string>{"list.json: document 1, item 2: Node n2: status.allocatable.memory: "
                                     "invalid quantity \"lots\": no digits before the suffix"});
}

TEST(LoaderErrorTest, YamlSyntaxErrorNamesTheLineOfTheFile) {
  // Line 8 of the file is the second document's broken line.
  const std::string yaml = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"
                           "---\n"
                           "apiVersion: v1\nkind: Node\n"
                           "metadata: {name: n2}}\n";
  EXPECT_EQ(Errors({{"s.yaml", yaml}}),
            std::vector<std::string>{"s.yaml: document 2: line 8, column 21: invalid YAML: illegal flow end"});
}

TEST(LoaderErrorTest, KeyGivenTwiceIsAnErrorNotASilentChoice) {
  EXPECT_EQ(Errors({{"d.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  name: n2\n"}}),
            std::vector<std::string>{
                "d.yaml: document 1: line 5, column 3: invalid YAML: mapping key \"name\" already defined "
                "at line 4"});
  EXPECT_EQ(Errors({{"d.json", R"({"apiVersion": "v1", "kind": "List", "items": [
      {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"a": "1", "a": "2"}}}]})"}}),
            std::vector<std::string>{
                "d.json: document 1: invalid JSON: duplicate key \"a\" in items[0].metadata.labels"});
}

TEST(LoaderErrorTest, TabIndentationIsNamed) {
  EXPECT_EQ(Errors({{"t.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n\tname: n1\n"}}),
            std::vector<std::string>{
                "t.yaml: document 1: line 4, column 6: invalid YAML: illegal map value (line 4 is "
                "indented with a tab; YAML indentation must use spaces)"});
}

TEST(LoaderErrorTest, ReportsEveryProblemOfADocumentInOrder) {
  const std::string yaml = "apiVersion: v1\nkind: Node\nmetadata: {name: N1}\n"
                           "spec:\n  unschedulable: maybe\n"
                           "status:\n  allocatable: {cpu: -1}\n";
  EXPECT_EQ(Errors({{"n.yaml", yaml}}),
            (std::vector<std::string>{
                "n.yaml: document 1: Node N1: metadata.name: invalid name \"N1\": a lowercase RFC 1123 "
                "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and "
                "end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "n.yaml: document 1: Node N1: spec.unschedulable: must be true or false",
                "n.yaml: document 1: Node N1: status.allocatable.cpu: must be greater than or equal to 0, not -1",
            }));
}

TEST(LoaderErrorTest, DuplicateAcrossFilesNamesBothPlaces) {
  EXPECT_EQ(Errors({{"a.yaml", arbiter::testing::Node("n1")}, {"b.yaml", arbiter::testing::Node("n1")}}),
            std::vector<std::string>{
                "b.yaml: document 1: Node n1: metadata.name: duplicate object (first defined at "
                "a.yaml: document 1: Node n1)"});
}

TEST(LoaderErrorTest, AdmissionErrorsUseTheSameFormat) {
  EXPECT_EQ(arbiter::testing::LoadErrors(PodWithSpec("  priorityClassName: gold\n  containers: [{name: c}]\n"),
                                         "p.yaml"),
            std::vector<std::string>{
                "p.yaml: document 1: Pod default/p: spec.priorityClassName: no PriorityClass with "
                "name \"gold\" was found"});
}

TEST(LoaderErrorTest, FileWithoutObjectsIsOneWholeFileError) {
  EXPECT_EQ(Errors({{"empty.yaml", ""}}), std::vector<std::string>{"empty.yaml: the file holds no objects"});
  EXPECT_EQ(Errors({{"notes.yaml", "# TODO: add nodes\n---\n"}}),
            std::vector<std::string>{"notes.yaml: the file holds no objects"});
}

}  // namespace
}  // namespace arbiter::manifest

namespace arbiter::manifest {
namespace {

TEST(LoaderPorts, OneShotInitContainersHoldNoHostPorts) {
  const std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
      "  initContainers:\n"
      "  - name: setup\n    ports: [{containerPort: 80, hostPort: 8080}]\n"
      "  - name: proxy\n    restartPolicy: Always\n    ports: [{containerPort: 81, hostPort: 8081}]\n"
      "  containers:\n  - name: app\n    ports: [{containerPort: 82, hostPort: 8082, protocol: UDP}]\n";
  LoadResult r = Load({{"ports.yaml", yaml}});
  ASSERT_TRUE(r.ok()) << r.errors[0];
  const auto& ports = r.objects.pods[0].object.host_ports;
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].port, 8081);
  EXPECT_EQ(ports[1].port, 8082);
  EXPECT_EQ(ports[1].protocol, "UDP");
}

TEST(LoaderConditions, ReadsTheSchedulerPreemptionCondition) {
  const std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, deletionTimestamp: '2026-01-01T00:00:00Z'}\n"
      "spec:\n  nodeName: n1\n  containers:\n  - name: app\n"
      "status:\n  conditions:\n  - {type: DisruptionTarget, status: 'True', reason: PreemptionByScheduler}\n"
      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers:\n  - name: app\n"
      "status:\n  conditions:\n  - {type: DisruptionTarget, status: 'True', reason: TerminationByKubelet}\n";
  LoadResult r = Load({{"c.yaml", yaml}});
  ASSERT_EQ(r.objects.pods.size(), 2u);
  EXPECT_TRUE(r.objects.pods[0].object.preempted_by_scheduler);
  EXPECT_FALSE(r.objects.pods[1].object.preempted_by_scheduler);
}

}  // namespace
}  // namespace arbiter::manifest
