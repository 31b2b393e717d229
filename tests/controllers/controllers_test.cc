// The controllers of `arbiter serve` (src/arbiter/controllers), end to end inside one process: a
// memory store, the API (with its admission), the control loop with simulated nodes and the
// scheduler, and the controller manager, on a virtual clock. Objects are made and read through
// the API as kubectl would.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arbiter/api/admission.h"
#include "arbiter/api/container_logs.h"
#include "arbiter/api/server.h"
#include "arbiter/controllers/controller_manager.h"
#include "arbiter/controllers/cron_schedule.h"
#include "arbiter/controllers/expand.h"
#include "arbiter/controllers/object_json.h"
#include "arbiter/controllers/pod_control.h"
#include "arbiter/controllers/podgc.h"
#include "arbiter/controlplane/control_loop.h"

namespace arbiter::controllers {
namespace {

constexpr Timestamp kT0 = 1'800'000'000LL * kSecond;

class Cluster {
 public:
  // `add` chooses the controllers (all of kube-controller-manager's defaults unless given).
  explicit Cluster(bool controllers = true, Duration default_run = 0,
                   const std::function<void(ControllerManager&)>& add = AddDefaultControllers)
      : store_(store::NewMemoryStore()), clock_(kT0), server_(*store_, clock_, 7, {}), client_(server_, "test") {
    api::InstallAdmission(server_);
    EXPECT_TRUE(api::EnsureBootstrapObjects(server_).ok());
    controlplane::LoopOptions o;
    o.seed = 1;
    o.nodes.default_run_duration = default_run;
    o.nodes.logs = &logs_;
    server_.SetContainerLogs(&logs_);
    if (controllers) {
      add(manager_);
      o.controllers = &manager_;
    }
    loop_ = std::make_unique<controlplane::ControlLoop>(*store_, clock_, o);
  }

  api::Response Call(const std::string& method, const std::string& path, const Json& body = nullptr,
                     const std::string& content_type = "application/json") {
    api::Request r;
    r.method = method;
    r.path = path.substr(0, path.find('?'));
    if (const size_t q = path.find('?'); q != std::string::npos) {
      std::string rest = path.substr(q + 1);
      while (!rest.empty()) {
        const std::string pair = rest.substr(0, rest.find('&'));
        rest = pair.size() < rest.size() ? rest.substr(pair.size() + 1) : "";
        const size_t eq = pair.find('=');
        r.query[pair.substr(0, eq)] = eq == std::string::npos ? "" : pair.substr(eq + 1);
      }
    }
    if (!body.is_null()) {
      r.body = body.dump();
      r.headers["content-type"] = content_type;
    }
    return server_.Handle(r);
  }
  Json Must(const std::string& method, const std::string& path, const Json& body = nullptr,
            const std::string& content_type = "application/json") {
    api::Response r = Call(method, path, body, content_type);
    EXPECT_GE(r.code, 200) << method << " " << path << ": " << r.body;
    EXPECT_LT(r.code, 300) << method << " " << path << ": " << r.body;
    return Json::parse(r.body, nullptr, false);
  }
  void Node(const std::string& name, const std::string& cpu = "4") {
    Must("POST", "/api/v1/nodes",
         {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}}},
          {"status", {{"allocatable", {{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}}},
                      {"capacity", {{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}}}}}});
  }
  // Runs passes, moving the clock a second each, until `done` or `passes` ran.
  bool RunUntil(const std::function<bool()>& done, int passes = 60) {
    for (int i = 0; i < passes; ++i) {
      Status s = loop_->RunOnce();
      EXPECT_TRUE(s.ok()) << s.message();
      if (!s.ok()) return false;
      if (done()) return true;
      clock_.Advance(kSecond);
    }
    return done();
  }
  void Run(int passes) {
    RunUntil([] { return false; }, passes);
  }
  std::vector<Json> List(const std::string& path) {
    Json list = Must("GET", path);
    std::vector<Json> out;
    for (const Json& i : list["items"]) out.push_back(i);
    return out;
  }
  std::vector<Json> Pods(const std::string& ns = "default") { return List("/api/v1/namespaces/" + ns + "/pods"); }
  std::vector<Json> ActivePods(const std::string& ns = "default") {
    std::vector<Json> out;
    for (const Json& p : Pods(ns)) {
      if (PodActive(p)) out.push_back(p);
    }
    return out;
  }
  int Running(const std::string& ns = "default") {
    int n = 0;
    for (const Json& p : ActivePods(ns)) n += StringAt(p, {"status", "phase"}) == "Running";
    return n;
  }
  std::vector<Json> Events(const std::string& reason, const std::string& ns = "default") {
    std::vector<Json> out;
    for (const Json& e : List("/api/v1/namespaces/" + ns + "/events")) {
      if (e.value("reason", "") == reason) out.push_back(e);
    }
    return out;
  }
  VirtualClock& clock() { return clock_; }
  ControllerManager& manager() { return manager_; }

 private:
  api::ContainerLogs logs_;  // before the server and the loop that use it
  std::unique_ptr<store::Store> store_;
  VirtualClock clock_;
  api::ApiServer server_;
  ApiClient client_;
  ControllerManager manager_{clock_, client_, nullptr};
  std::unique_ptr<controlplane::ControlLoop> loop_;
};

Json PodTemplate(const std::map<std::string, std::string>& labels, const std::string& image = "app:1",
                 const std::string& cpu = "100m") {
  Json l = Json::object();
  for (const auto& [k, v] : labels) l[k] = v;
  return {{"metadata", {{"labels", l}}},
          {"spec",
           {{"containers", Json::array({{{"name", "c"}, {"image", image},
                                         {"resources", {{"requests", {{"cpu", cpu}}}}}}})}}}};
}

Json ReplicaSet(const std::string& name, int replicas, const std::string& app) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "ReplicaSet"},
          {"metadata", {{"name", name}}},
          {"spec", {{"replicas", replicas}, {"selector", {{"matchLabels", {{"app", app}}}}}, {"template", PodTemplate({{"app", app}})}}}};
}

Json Deployment(const std::string& name, int replicas, const std::string& image, const std::string& strategy = "RollingUpdate") {
  Json d = {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", {{"name", name}}},
            {"spec", {{"replicas", replicas},
                      {"selector", {{"matchLabels", {{"app", name}}}}},
                      {"template", PodTemplate({{"app", name}}, image)},
                      {"strategy", {{"type", strategy}}}}}};
  return d;
}

const std::string kRs = "/apis/apps/v1/namespaces/default/replicasets";
const std::string kDeploy = "/apis/apps/v1/namespaces/default/deployments";

TEST(KeysByGroup, AKeyMovesBetweenGroupsAndAnEmptyGroupTakesItOut) {
  KeysByGroup<Key> index;
  index.Set({"default", "a"}, "n1");
  index.Set({"default", "b"}, "n1");
  index.Set({"default", "a"}, "n2");
  EXPECT_EQ(index.Of("n1"), (std::set<Key>{{"default", "b"}}));
  EXPECT_EQ(index.Of("n2"), (std::set<Key>{{"default", "a"}}));
  index.Set({"default", "b"}, "");
  EXPECT_TRUE(index.Of("n1").empty());
  EXPECT_EQ(index.groups().size(), 1u) << "a group without keys is gone";
  index.Clear();
  EXPECT_TRUE(index.groups().empty());
}

TEST(ReplicaSetController, CreatesTheMissingPodsAsOwnedGenerateNamedPodsAndReportsThemReady) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", kRs, ReplicaSet("web", 3, "web"));
  ASSERT_TRUE(c.RunUntil([&] {
    Json rs = c.Must("GET", kRs + "/web");
    return IntAt(rs, {"status", "readyReplicas"}, 0) == 3 && IntAt(rs, {"status", "availableReplicas"}, 0) == 3;
  }));
  const auto pods = c.ActivePods();
  ASSERT_EQ(pods.size(), 3u);
  for (const Json& p : pods) {
    EXPECT_TRUE(NameOf(p).starts_with("web-")) << NameOf(p);
    EXPECT_EQ(NameOf(p).size(), 9u) << "web- and five characters";
    const Json* ref = ControllerRef(p);
    ASSERT_NE(ref, nullptr);
    EXPECT_EQ(ref->value("kind", ""), "ReplicaSet");
    EXPECT_EQ(ref->value("blockOwnerDeletion", false), true);
    EXPECT_EQ(StringAt(p, {"status", "phase"}), "Running");
  }
  EXPECT_EQ(c.Events("SuccessfulCreate").size(), 3u);
  Json rs = c.Must("GET", kRs + "/web");
  EXPECT_EQ(IntAt(rs, {"status", "replicas"}, 0), 3);
  EXPECT_EQ(IntAt(rs, {"status", "fullyLabeledReplicas"}, 0), 3);
  EXPECT_EQ(IntAt(rs, {"status", "observedGeneration"}, 0), 1);
}

TEST(ReplicaSetController, ReplacesADeletedPodAndScalesDownTheUnscheduledPodsFirst) {
  Cluster c;
  c.Node("n1", "1");  // room for 10 pods of 100m
  c.Must("POST", kRs, ReplicaSet("web", 10, "web"));
  ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 10; }));
  const std::string victim = NameOf(c.ActivePods()[0]);
  c.Must("DELETE", "/api/v1/namespaces/default/pods/" + victim, {{"gracePeriodSeconds", 0}});
  ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 10; }));
  for (const Json& p : c.ActivePods()) EXPECT_NE(NameOf(p), victim);
  // 12 replicas on a node with room for 10: two pods stay Pending; scaling back to 10 deletes
  // exactly those (unassigned pods go first).
  c.Must("PATCH", kRs + "/web/scale", {{"spec", {{"replicas", 12}}}}, "application/merge-patch+json");
  ASSERT_TRUE(c.RunUntil([&] { return c.ActivePods().size() == 12; }));
  c.Run(3);
  std::vector<std::string> pending;
  for (const Json& p : c.ActivePods()) {
    if (StringAt(p, {"spec", "nodeName"}).empty()) pending.push_back(NameOf(p));
  }
  ASSERT_EQ(pending.size(), 2u);
  c.Must("PATCH", kRs + "/web/scale", {{"spec", {{"replicas", 10}}}}, "application/merge-patch+json");
  ASSERT_TRUE(c.RunUntil([&] { return c.ActivePods().size() == 10; }));
  for (const Json& p : c.ActivePods()) {
    EXPECT_FALSE(StringAt(p, {"spec", "nodeName"}).empty()) << NameOf(p) << " should have been deleted first";
  }
  Json scale = c.Must("GET", kRs + "/web/scale");
  EXPECT_EQ(scale["kind"], "Scale");
  EXPECT_EQ(scale["spec"]["replicas"], 10);
  EXPECT_EQ(scale["status"]["selector"], "app=web");
}

TEST(ReplicaSetController, AdoptsAMatchingOrphanAndReleasesAPodThatNoLongerMatches) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", "/api/v1/namespaces/default/pods",
         {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "stray"}, {"labels", {{"app", "web"}}}}},
          {"spec", PodTemplate({{"app", "web"}})["spec"]}});
  c.Must("POST", kRs, ReplicaSet("web", 2, "web"));
  ASSERT_TRUE(c.RunUntil([&] { return c.ActivePods().size() == 2 && c.Running() == 2; }));
  Json stray = c.Must("GET", "/api/v1/namespaces/default/pods/stray");
  ASSERT_NE(ControllerRef(stray), nullptr) << "the orphan is adopted and counts as a replica";
  // Relabelled, it leaves the ReplicaSet, which makes another.
  c.Must("PATCH", "/api/v1/namespaces/default/pods/stray", {{"metadata", {{"labels", {{"app", "other"}}}}}},
         "application/merge-patch+json");
  ASSERT_TRUE(c.RunUntil([&] {
    Json p = c.Must("GET", "/api/v1/namespaces/default/pods/stray");
    return ControllerRef(p) == nullptr && c.ActivePods().size() == 3;
  }));
}

TEST(DeploymentController, RollsOutANewTemplateWithinSurgeAndUnavailabilityAndRecordsRevisions) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", kDeploy, Deployment("web", 4, "app:1"));
  ASSERT_TRUE(c.RunUntil([&] {
    Json d = c.Must("GET", kDeploy + "/web");
    return IntAt(d, {"status", "availableReplicas"}, 0) == 4 && IntAt(d, {"status", "updatedReplicas"}, 0) == 4;
  }));
  auto sets = c.List(kRs);
  ASSERT_EQ(sets.size(), 1u);
  const std::string first = NameOf(sets[0]);
  EXPECT_EQ(StringAt(sets[0], {"metadata", "annotations", "deployment.kubernetes.io/revision"}), "1");
  const std::string hash = StringAt(sets[0], {"metadata", "labels", "pod-template-hash"});
  EXPECT_EQ(first, "web-" + hash);
  Json d = c.Must("GET", kDeploy + "/web");
  EXPECT_EQ(StringAt(d, {"metadata", "annotations", "deployment.kubernetes.io/revision"}), "1");
  const Json* progressing = GetCondition(d["status"], "Progressing");
  ASSERT_NE(progressing, nullptr);
  EXPECT_EQ(progressing->value("reason", ""), "NewReplicaSetAvailable");
  EXPECT_EQ(progressing->value("message", ""), "ReplicaSet \"" + first + "\" has successfully progressed.");
  EXPECT_EQ(GetCondition(d["status"], "Available")->value("reason", ""), "MinimumReplicasAvailable");

  // A new image: during the rollout the total never exceeds 4 + 1 (25% of 4 rounded up) and the
  // available never drops below 4 - 1.
  c.Must("PATCH", kDeploy + "/web", {{"spec", {{"template", PodTemplate({{"app", "web"}}, "app:2")}}}},
         "application/merge-patch+json");
  int most = 0;
  ASSERT_TRUE(c.RunUntil([&] {
    most = std::max(most, static_cast<int>(c.ActivePods().size()));
    int available_now = 0;
    for (const Json& p : c.ActivePods()) available_now += PodReady(p);
    EXPECT_GE(available_now, 3);
    Json now = c.Must("GET", kDeploy + "/web");
    const Json* p = GetCondition(now["status"], "Progressing");
    return IntAt(now, {"status", "updatedReplicas"}, 0) == 4 && IntAt(now, {"status", "replicas"}, 0) == 4 &&
           IntAt(now, {"status", "availableReplicas"}, 0) == 4 && p != nullptr &&
           p->value("reason", "") == "NewReplicaSetAvailable";
  }));
  EXPECT_LE(most, 5);
  sets = c.List(kRs);
  ASSERT_EQ(sets.size(), 2u);
  for (const Json& rs : sets) {
    const bool old = NameOf(rs) == first;
    EXPECT_EQ(IntAt(rs, {"spec", "replicas"}, -1), old ? 0 : 4);
    EXPECT_EQ(StringAt(rs, {"metadata", "annotations", "deployment.kubernetes.io/revision"}), old ? "1" : "2");
  }
  for (const Json& p : c.ActivePods()) EXPECT_EQ(p["spec"]["containers"][0]["image"], "app:2");
  EXPECT_FALSE(c.Events("ScalingReplicaSet").empty());

  // Undo, as kubectl does it: the old template comes back; its ReplicaSet is the new one again,
  // with revision 3 and its old number in the history.
  Json old_template = PodTemplate({{"app", "web"}}, "app:1");
  c.Must("PATCH", kDeploy + "/web", {{"spec", {{"template", old_template}}}}, "application/merge-patch+json");
  ASSERT_TRUE(c.RunUntil([&] {
    Json rs = c.Must("GET", kRs + "/" + first);
    return IntAt(rs, {"status", "availableReplicas"}, 0) == 4 && c.ActivePods().size() == 4;
  }));
  Json back = c.Must("GET", kRs + "/" + first);
  EXPECT_EQ(StringAt(back, {"metadata", "annotations", "deployment.kubernetes.io/revision"}), "3");
  EXPECT_EQ(StringAt(back, {"metadata", "annotations", "deployment.kubernetes.io/revision-history"}), "1");
}

TEST(DeploymentController, RecreateStartsNewPodsOnlyOnceTheOldOnesAreGone) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", kDeploy, Deployment("db", 2, "db:1", "Recreate"));
  ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 2; }));
  c.Must("PATCH", kDeploy + "/db", {{"spec", {{"template", PodTemplate({{"app", "db"}}, "db:2")}}}},
         "application/merge-patch+json");
  bool mixed = false;
  ASSERT_TRUE(c.RunUntil([&] {
    bool old_running = false, new_running = false;
    for (const Json& p : c.Pods()) {
      if (PodTerminal(p)) continue;
      const bool is_new = p["spec"]["containers"][0]["image"] == "db:2";
      (is_new ? new_running : old_running) = true;
    }
    mixed = mixed || (old_running && new_running);
    int updated = 0;
    for (const Json& p : c.ActivePods()) updated += p["spec"]["containers"][0]["image"] == "db:2" && PodReady(p);
    return updated == 2 && c.Pods().size() == 2;
  }, 120));
  EXPECT_FALSE(mixed) << "an old and a new pod existed at once";

}

TEST(DeploymentController, AChangeOfReplicasScalesTheReplicaSetsWithoutARollout) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", kDeploy, Deployment("web", 2, "app:1"));
  ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 2; }));
  c.Must("PATCH", kDeploy + "/web/scale", {{"spec", {{"replicas", 5}}}}, "application/merge-patch+json");
  ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 5; }));
  auto sets = c.List(kRs);
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(StringAt(sets[0], {"metadata", "annotations", "deployment.kubernetes.io/desired-replicas"}), "5");
  EXPECT_EQ(StringAt(sets[0], {"metadata", "annotations", "deployment.kubernetes.io/revision"}), "1");
}

TEST(GarbageCollector, BackgroundDeletionTakesTheReplicaSetsAndPodsAfterTheDeployment) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", kDeploy, Deployment("web", 3, "app:1"));
  ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 3; }));
  c.Must("DELETE", kDeploy + "/web", {{"propagationPolicy", "Background"}});
  EXPECT_EQ(c.Call("GET", kDeploy + "/web").code, 404) << "background: the owner goes at once";
  ASSERT_TRUE(c.RunUntil([&] { return c.List(kRs).empty() && c.Pods().empty(); }, 120));
}

TEST(GarbageCollector, ForegroundDeletionKeepsTheOwnerUntilItsDependentsAreGone) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", kRs, ReplicaSet("web", 2, "web"));
  ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 2; }));
  Json marked = c.Must("DELETE", kRs + "/web", {{"propagationPolicy", "Foreground"}});
  EXPECT_TRUE(BeingDeleted(marked));
  EXPECT_EQ(marked["metadata"]["finalizers"], Json::array({"foregroundDeletion"}));
  c.Run(2);
  Json still = c.Must("GET", kRs + "/web");
  EXPECT_TRUE(BeingDeleted(still)) << "the ReplicaSet waits while its pods terminate";
  ASSERT_TRUE(c.RunUntil([&] { return c.Call("GET", kRs + "/web").code == 404; }, 120));
  EXPECT_TRUE(c.Pods().empty());
}

TEST(GarbageCollector, OrphanDeletionLeavesThePodsWithoutTheirOwner) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", kRs, ReplicaSet("web", 2, "web"));
  ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 2; }));
  c.Must("DELETE", kRs + "/web", {{"propagationPolicy", "Orphan"}});
  ASSERT_TRUE(c.RunUntil([&] { return c.Call("GET", kRs + "/web").code == 404; }));
  c.Run(3);
  const auto pods = c.ActivePods();
  ASSERT_EQ(pods.size(), 2u);
  for (const Json& p : pods) EXPECT_EQ(Find(p, {"metadata", "ownerReferences"}), nullptr) << p.dump();
}

TEST(GarbageCollector, AnOwnerReferenceIntoAnotherNamespaceNeitherBlocksNorKeepsTheOwner) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", kRs, ReplicaSet("web", 1, "web"));
  ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 1; }));
  const std::string uid = c.Must("GET", kRs + "/web")["metadata"]["uid"];
  // In another namespace, a pod that claims the ReplicaSet as an owner that blocks its deletion,
  // and holds a finalizer so that it cannot go.
  c.Must("POST", "/api/v1/namespaces", {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team-q"}}}});
  c.Must("POST", "/api/v1/namespaces/team-q/pods",
         {{"apiVersion", "v1"}, {"kind", "Pod"},
          {"metadata", {{"name", "claimant"}, {"finalizers", {"example.com/hold"}},
                        {"ownerReferences", Json::array({{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", "web"},
                                                          {"uid", uid}, {"blockOwnerDeletion", true}}})}}},
          {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}}});
  c.Must("DELETE", kRs + "/web", {{"propagationPolicy", "Foreground"}});
  // The ReplicaSet goes once its own pod has; the other namespace's claimant does not hold it.
  ASSERT_TRUE(c.RunUntil([&] { return c.Call("GET", kRs + "/web").code == 404; }, 120));
  // And the claimant's owner counts as absent: it is collected (marked, its finalizer holding it).
  ASSERT_TRUE(c.RunUntil([&] { return BeingDeleted(c.Must("GET", "/api/v1/namespaces/team-q/pods/claimant")); }, 60));
}

TEST(ClusterRoleAggregation, AnAggregatedRolesStoredRulesAreWhatItsSelectorsGatherAndFollowChanges) {
  Cluster c;
  const std::string roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
  auto rules_of = [&](const std::string& name) { return c.Must("GET", roles + "/" + name)["rules"]; };
  auto holds = [](const Json& rules, const Json& rule) {
    return rules.is_array() && std::find(rules.begin(), rules.end(), rule) != rules.end();
  };
  // view gathers system:aggregate-to-view's rules; edit gathers view's (once view holds them) and
  // its own part; admin gathers edit's: the chain settles over passes.
  const Json view_part = rules_of("system:aggregate-to-view");
  ASSERT_FALSE(view_part.empty());
  ASSERT_TRUE(c.RunUntil([&] { return holds(rules_of("admin"), view_part[0]); }, 30));
  for (const Json& r : view_part) {
    EXPECT_TRUE(holds(rules_of("view"), r)) << r.dump();
    EXPECT_TRUE(holds(rules_of("edit"), r)) << r.dump();
  }
  for (const Json& r : rules_of("system:aggregate-to-edit")) EXPECT_TRUE(holds(rules_of("admin"), r)) << r.dump();
  // A new role labelled into view reaches view, edit and admin; relabelled away, it leaves them.
  const Json widget = {{"apiGroups", {"example.com"}}, {"resources", {"widgets"}}, {"verbs", {"get", "list"}}};
  c.Must("POST", roles,
         {{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "ClusterRole"},
          {"metadata", {{"name", "widget-viewer"}, {"labels", {{"rbac.authorization.k8s.io/aggregate-to-view", "true"}}}}},
          {"rules", Json::array({widget})}});
  ASSERT_TRUE(c.RunUntil([&] { return holds(rules_of("admin"), widget); }, 30));
  EXPECT_TRUE(holds(rules_of("view"), widget));
  EXPECT_TRUE(holds(rules_of("edit"), widget));
  c.Must("PATCH", roles + "/widget-viewer", {{"metadata", {{"labels", {{"rbac.authorization.k8s.io/aggregate-to-view", nullptr}}}}}},
         "application/merge-patch+json");
  ASSERT_TRUE(c.RunUntil([&] { return !holds(rules_of("admin"), widget); }, 30));
  EXPECT_FALSE(holds(rules_of("view"), widget));
  // Rules written by hand into an aggregated role are replaced, as upstream's controller does.
  Json view = c.Must("GET", roles + "/view");
  view["rules"].push_back(widget);
  c.Must("PUT", roles + "/view", view);
  ASSERT_TRUE(c.RunUntil([&] { return !holds(rules_of("view"), widget); }, 30));
}

TEST(NamespaceController, DeletingANamespaceEmptiesItRefusesNewContentAndThenRemovesIt) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", "/api/v1/namespaces", {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team-q"}}}});
  c.Must("POST", "/apis/apps/v1/namespaces/team-q/replicasets", ReplicaSet("web", 2, "web"));
  c.Must("POST", "/api/v1/namespaces/team-q/configmaps",
         {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "settings"}}}, {"data", {{"a", "b"}}}});
  ASSERT_TRUE(c.RunUntil([&] { return c.Running("team-q") == 2; }));
  Json ns = c.Must("DELETE", "/api/v1/namespaces/team-q");
  EXPECT_EQ(StringAt(ns, {"status", "phase"}), "Terminating");
  api::Response refused = c.Call("POST", "/api/v1/namespaces/team-q/configmaps",
                                 {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "late"}}}});
  EXPECT_EQ(refused.code, 403);
  EXPECT_NE(refused.body.find("unable to create new content in namespace team-q because it is being terminated"),
            std::string::npos);
  ASSERT_TRUE(c.RunUntil([&] { return c.Call("GET", "/api/v1/namespaces/team-q").code == 404; }, 120));
  EXPECT_TRUE(c.Pods("team-q").empty());
}

TEST(SimulatedWork, APodWithARunDurationSucceedsOrFailsWithItsExitCodeAndAnAlwaysPodRestarts) {
  Cluster c;
  c.Node("n1");
  auto pod = [](const std::string& name, const std::string& policy, const std::string& code) {
    Json p = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"annotations", {{"arbiter.dev/run-duration", "5s"}}}}},
              {"spec", PodTemplate({})["spec"]}};
    p["spec"]["restartPolicy"] = policy;
    if (!code.empty()) p["metadata"]["annotations"]["arbiter.dev/exit-code"] = code;
    return p;
  };
  c.Must("POST", "/api/v1/namespaces/default/pods", pod("ok", "Never", ""));
  c.Must("POST", "/api/v1/namespaces/default/pods", pod("bad", "Never", "3"));
  c.Must("POST", "/api/v1/namespaces/default/pods", pod("server", "Always", ""));
  ASSERT_TRUE(c.RunUntil([&] {
    return StringAt(c.Must("GET", "/api/v1/namespaces/default/pods/ok"), {"status", "phase"}) == "Succeeded" &&
           StringAt(c.Must("GET", "/api/v1/namespaces/default/pods/bad"), {"status", "phase"}) == "Failed";
  }));
  Json bad = c.Must("GET", "/api/v1/namespaces/default/pods/bad");
  EXPECT_EQ(bad["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 3);
  EXPECT_EQ(GetCondition(bad["status"], "Ready")->value("reason", ""), "PodCompleted");
  Json server = c.Must("GET", "/api/v1/namespaces/default/pods/server");
  EXPECT_EQ(StringAt(server, {"status", "phase"}), "Running");
  EXPECT_GE(server["status"]["containerStatuses"][0].value("restartCount", 0), 1);
}

TEST(SimulatedContainers, LogsTellTheLifeOfEachContainerWithTailPreviousAndTimestamps) {
  Cluster c;
  c.Node("n1");
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "loop"}, {"annotations", {{"arbiter.dev/run-duration", "2s"}, {"arbiter.dev/exit-code", "1"}}}}},
              {"spec", PodTemplate({}, "loop:1")["spec"]}};
  pod["spec"]["restartPolicy"] = "OnFailure";
  c.Must("POST", "/api/v1/namespaces/default/pods", pod);
  const std::string path = "/api/v1/namespaces/default/pods/loop";
  ASSERT_TRUE(c.RunUntil([&] {
    const Json p = c.Must("GET", path);
    return p["status"].contains("containerStatuses") && p["status"]["containerStatuses"][0].value("restartCount", 0) >= 1;
  }));
  api::Response log = c.Call("GET", path + "/log");
  EXPECT_EQ(log.code, 200) << log.body;
  EXPECT_EQ(log.content_type, "text/plain");
  EXPECT_EQ(log.body, "restarted (restartPolicy OnFailure; restart 1)\nsimulated work: running for 2s, then exiting\n");
  api::Response prev = c.Call("GET", path + "/log?previous=true");
  EXPECT_EQ(prev.body,
            "started on simulated node n1 (image loop:1)\nsimulated work: running for 2s, then exiting\n"
            "simulated work done: exiting with code 1\n");
  EXPECT_EQ(c.Call("GET", path + "/log?previous=true&tailLines=1").body, "simulated work done: exiting with code 1\n");
  EXPECT_TRUE(c.Call("GET", path + "/log?timestamps=true").body.starts_with("20")) << "an RFC 3339 time first";
  EXPECT_EQ(c.Call("GET", path + "/log?limitBytes=9").body, "restarted");
  // follow: the log so far, then what comes, until the pod goes.
  api::Response follow = c.Call("GET", path + "/log?follow=true&tailLines=1");
  ASSERT_NE(follow.stream, nullptr);
  EXPECT_EQ(follow.body, "simulated work: running for 2s, then exiting\n");
  EXPECT_EQ(follow.stream->next(), std::optional<std::string>(""));  // nothing new yet
  c.Run(3);  // the run ends again, the container restarts
  const std::optional<std::string> more = follow.stream->next();
  ASSERT_TRUE(more.has_value());
  EXPECT_NE(more->find("simulated work done: exiting with code 1\n"), std::string::npos) << *more;
  EXPECT_NE(more->find("restarted (restartPolicy OnFailure; restart 2)\n"), std::string::npos) << *more;
  // Deleted: SIGTERM with its grace period goes to the log before the pod goes.
  c.Must("DELETE", path, {{"gracePeriodSeconds", 30}});
  c.Run(1);
  EXPECT_NE(c.Call("GET", path + "/log").body.find("received SIGTERM: the pod is being deleted; 30s to exit before SIGKILL"),
            std::string::npos);
  EXPECT_NE(follow.stream->next().value_or("").find("received SIGTERM"), std::string::npos);
  // Errors, as kube-apiserver words them.
  EXPECT_EQ(c.Call("GET", path + "/log?container=nope").body.find("container nope is not valid for pod loop") == std::string::npos,
            false);
  EXPECT_EQ(c.Call("GET", path + "/log?tailLines=-1").code, 400);
  EXPECT_EQ(c.Call("GET", "/api/v1/namespaces/default/pods/absent/log").code, 404);
  c.Run(35);  // the grace period ends: the pod goes, and so does the stream
  EXPECT_EQ(follow.stream->next(), std::nullopt);
}

TEST(SimulatedContainers, ExecAttachAndPortForwardSayTheNodeIsSimulatedAndEphemeralContainersAreAccepted) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", "/api/v1/namespaces/default/pods",
         {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "web"}}}, {"spec", PodTemplate({})["spec"]}});
  c.Run(2);
  for (const char* sub : {"exec", "attach", "portforward"}) {
    api::Response r = c.Call("POST", std::string("/api/v1/namespaces/default/pods/web/") + sub);
    EXPECT_EQ(r.code, 400) << sub;
    Json status = Json::parse(r.body);
    EXPECT_NE(status["message"].get<std::string>().find("a node Arbiter simulates"), std::string::npos) << r.body;
    EXPECT_EQ(status["details"]["name"], "web") << r.body;
    EXPECT_EQ(status["details"]["kind"], "pods") << r.body;
  }
  // kubectl debug adds an ephemeral container through its subresource: only that field changes.
  Json patched = c.Must("PATCH", "/api/v1/namespaces/default/pods/web/ephemeralcontainers",
                        {{"spec", {{"ephemeralContainers", Json::array({{{"name", "debugger"}, {"image", "busybox"}}})},
                                   {"nodeName", "elsewhere"}}},
                         {"metadata", {{"labels", {{"x", "y"}}}}}},
                        "application/strategic-merge-patch+json");
  EXPECT_EQ(patched["spec"]["ephemeralContainers"][0]["name"], "debugger");
  EXPECT_EQ(patched["spec"]["nodeName"], "n1");
  EXPECT_FALSE(patched["metadata"].contains("labels"));
  // A subresource that does not exist names the object, so that clients can read the Status.
  Json missing = Json::parse(c.Call("GET", "/api/v1/namespaces/default/pods/web/nothing").body);
  EXPECT_EQ(missing["details"]["name"], "web");
}

TEST(PodsToDelete, UnassignedPendingNotReadyCheaperDoubledUpAndNewerGoFirst) {
  const Timestamp now = kT0;
  auto pod = [&](const std::string& uid, const std::string& node, const std::string& phase, bool ready,
                 Timestamp created) {
    Json p = {{"metadata", {{"uid", uid}, {"name", uid}, {"creationTimestamp", FormatRfc3339(created)}}},
              {"spec", {{"nodeName", node}}},
              {"status", {{"phase", phase}}}};
    if (ready) {
      p["status"]["conditions"] = Json::array(
          {{{"type", "Ready"}, {"status", "True"}, {"lastTransitionTime", FormatRfc3339(created)}}});
    }
    return p;
  };
  std::vector<Json> pods = {
      pod("old-ready", "b", "Running", true, now - 1000 * kSecond),
      pod("new-ready", "b", "Running", true, now - 10 * kSecond),
      pod("doubled", "c", "Running", true, now - 1000 * kSecond),
      pod("not-ready", "a", "Running", false, now - 1000 * kSecond),
      pod("pending", "a", "Pending", false, now - 1000 * kSecond),
      pod("unassigned", "", "Pending", false, now - 1000 * kSecond),
  };
  std::vector<const Json*> order;
  for (const Json& p : pods) order.push_back(&p);
  SortPodsToDelete(order, {{"a", 3}, {"b", 1}, {"c", 5}}, now);
  std::vector<std::string> names;
  for (const Json* p : order) names.push_back(NameOf(*p));
  EXPECT_EQ(names, (std::vector<std::string>{"unassigned", "pending", "not-ready", "doubled", "new-ready", "old-ready"}));
}

}  // namespace
}  // namespace arbiter::controllers

namespace arbiter::controllers {
namespace {

const std::string kJobs = "/apis/batch/v1/namespaces/default/jobs";

Json Job(const std::string& name, int completions, int parallelism, const std::string& run, int backoff_limit = 6,
         const std::string& priority_class = "") {
  Json spec = PodTemplate({}, "worker:1", "1")["spec"];
  spec["restartPolicy"] = "Never";
  spec["terminationGracePeriodSeconds"] = 1;
  if (!priority_class.empty()) spec["priorityClassName"] = priority_class;
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", name}}},
          {"spec", {{"completions", completions},
                    {"parallelism", parallelism},
                    {"backoffLimit", backoff_limit},
                    {"template", {{"metadata", {{"annotations", {{"arbiter.dev/run-duration", run}}}}}, {"spec", spec}}}}}};
}

bool HasCondition(const Json& o, const std::string& type) {
  const Json* status = Find(o, {"status"});
  const Json* c = status != nullptr ? GetCondition(*status, type) : nullptr;
  return c != nullptr && c->value("status", "") == "True";
}

TEST(SimulatedWork, APodThatDoesNotRestartRunsTheDefaultRunTimeUnlessItsAnnotationSaysOtherwise) {
  Cluster c(true, 3 * kSecond);
  c.Node("n1");
  auto pod = [](const std::string& name, const std::string& policy, const std::string& run) {
    Json p = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}}}, {"spec", PodTemplate({})["spec"]}};
    p["spec"]["restartPolicy"] = policy;
    if (!run.empty()) p["metadata"]["annotations"]["arbiter.dev/run-duration"] = run;
    return p;
  };
  c.Must("POST", "/api/v1/namespaces/default/pods", pod("echo", "Never", ""));
  c.Must("POST", "/api/v1/namespaces/default/pods", pod("retry", "OnFailure", ""));
  c.Must("POST", "/api/v1/namespaces/default/pods", pod("long", "Never", "1h"));
  c.Must("POST", "/api/v1/namespaces/default/pods", pod("server", "Always", ""));
  auto phase = [&](const std::string& name) {
    return StringAt(c.Must("GET", "/api/v1/namespaces/default/pods/" + name), {"status", "phase"});
  };
  ASSERT_TRUE(c.RunUntil([&] { return phase("echo") == "Succeeded" && phase("retry") == "Succeeded"; }, 30));
  c.Run(10);
  EXPECT_EQ(phase("long"), "Running");
  EXPECT_EQ(phase("server"), "Running");
  // A Job without annotations completes.
  Json job = Job("once", 2, 2, "");
  job["spec"]["template"]["metadata"].erase("annotations");
  c.Must("POST", kJobs, job);
  EXPECT_TRUE(c.RunUntil([&] { return HasCondition(c.Must("GET", kJobs + "/once"), "Complete"); }, 30));
}

TEST(JobController, RunsCompletionsAtMostParallelismAtATimeAndCompletes) {
  Cluster c;
  c.Node("n1");
  Json created = c.Must("POST", kJobs, Job("crunch", 5, 2, "3s"));
  EXPECT_EQ(StringAt(created, {"spec", "selector", "matchLabels", "batch.kubernetes.io/controller-uid"}), Uid(created));
  int most = 0;
  ASSERT_TRUE(c.RunUntil([&] {
    most = std::max(most, static_cast<int>(c.ActivePods().size()));
    return HasCondition(c.Must("GET", kJobs + "/crunch"), "Complete");
  }, 120));
  EXPECT_LE(most, 2);
  Json job = c.Must("GET", kJobs + "/crunch");
  EXPECT_EQ(IntAt(job, {"status", "succeeded"}, 0), 5);
  EXPECT_TRUE(HasCondition(job, "SuccessCriteriaMet"));
  EXPECT_FALSE(StringAt(job, {"status", "completionTime"}).empty());
  for (const Json& p : c.Pods()) {
    EXPECT_EQ(StringAt(p, {"status", "phase"}), "Succeeded");
    EXPECT_EQ(Find(p, {"metadata", "finalizers"}), nullptr) << "the tracking finalizer is removed once counted";
  }
  EXPECT_EQ(c.Events("Completed").size(), 1u);
}

TEST(JobController, AFailureBeyondTheBackoffLimitFailsTheJobAndAFailJobRuleFailsItAtOnce) {
  Cluster c;
  c.Node("n1");
  Json flaky = Job("flaky", 1, 1, "1s", /*backoff_limit=*/1);
  flaky["spec"]["template"]["metadata"]["annotations"]["arbiter.dev/exit-code"] = "1";
  c.Must("POST", kJobs, flaky);
  ASSERT_TRUE(c.RunUntil([&] { return HasCondition(c.Must("GET", kJobs + "/flaky"), "Failed"); }, 120));
  Json job = c.Must("GET", kJobs + "/flaky");
  EXPECT_EQ(IntAt(job, {"status", "failed"}, 0), 2) << "one retry (backoffLimit 1), after the 10 s backoff";
  EXPECT_EQ(GetCondition(job["status"], "Failed")->value("reason", ""), "BackoffLimitExceeded");

  Json fatal = Job("fatal", 1, 1, "1s");
  fatal["spec"]["template"]["metadata"]["annotations"]["arbiter.dev/exit-code"] = "42";
  fatal["spec"]["podFailurePolicy"] = {
      {"rules", Json::array({{{"action", "FailJob"}, {"onExitCodes", {{"operator", "In"}, {"values", {42}}}}}})}};
  c.Must("POST", kJobs, fatal);
  ASSERT_TRUE(c.RunUntil([&] { return HasCondition(c.Must("GET", kJobs + "/fatal"), "Failed"); }, 60));
  job = c.Must("GET", kJobs + "/fatal");
  const Json* failed = GetCondition(job["status"], "Failed");
  EXPECT_EQ(failed->value("reason", ""), "PodFailurePolicy");
  EXPECT_NE(failed->value("message", "").find("failed with exit code 42 matching FailJob rule at index 0"), std::string::npos)
      << failed->dump();
}

// A pod of the Job preempted by a higher-priority pod carries DisruptionTarget; with the rule
// that ignores it, the Job does not count the failure (backoffLimit 0 would fail it otherwise)
// and runs a replacement.
TEST(JobController, APreemptedPodIgnoredByThePodFailurePolicyIsNotCountedAndIsReplaced) {
  for (const bool with_policy : {true, false}) {
    SCOPED_TRACE(with_policy ? "with the Ignore rule" : "without a policy");
    Cluster c;
    c.Node("n1", "1");
    c.Must("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
           {{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"}, {"metadata", {{"name", "low"}}}, {"value", 10}});
    c.Must("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
           {{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"}, {"metadata", {{"name", "high"}}}, {"value", 1000}});
    Json batch = Job("batch", 1, 1, "60s", /*backoff_limit=*/0, "low");
    if (with_policy) {
      batch["spec"]["podFailurePolicy"] = {
          {"rules", Json::array({{{"action", "Ignore"}, {"onPodConditions", Json::array({{{"type", "DisruptionTarget"}}})}}})}};
    }
    c.Must("POST", kJobs, batch);
    ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 1; }));
    const std::string first = NameOf(c.ActivePods()[0]);
    Json urgent = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "urgent"}}},
                   {"spec", PodTemplate({}, "x", "1")["spec"]}};
    urgent["spec"]["priorityClassName"] = "high";
    urgent["spec"]["terminationGracePeriodSeconds"] = 1;
    c.Must("POST", "/api/v1/namespaces/default/pods", urgent);
    ASSERT_TRUE(c.RunUntil([&] {
      Json u = c.Must("GET", "/api/v1/namespaces/default/pods/urgent");
      return StringAt(u, {"status", "phase"}) == "Running";
    }, 60));
    c.Run(5);
    Json job = c.Must("GET", kJobs + "/batch");
    if (with_policy) {
      EXPECT_FALSE(HasCondition(job, "Failed")) << job.dump();
      EXPECT_EQ(IntAt(job, {"status", "failed"}, 0), 0);
      bool replacement = false;
      for (const Json& p : c.ActivePods()) replacement = replacement || (NameOf(p) != first && NameOf(p) != "urgent");
      EXPECT_TRUE(replacement) << "a replacement pod waits for room";
    } else {
      EXPECT_TRUE(HasCondition(job, "Failed")) << job.dump();
      EXPECT_EQ(GetCondition(job["status"], "Failed")->value("reason", ""), "BackoffLimitExceeded");
    }
  }
}

TEST(JobController, AnIndexedJobRunsEachIndexOnceAndReportsTheCompletedIndexes) {
  Cluster c;
  c.Node("n1");
  Json indexed = Job("shards", 4, 4, "2s");
  indexed["spec"]["completionMode"] = "Indexed";
  c.Must("POST", kJobs, indexed);
  std::set<std::string> indexes;
  ASSERT_TRUE(c.RunUntil([&] {
    for (const Json& p : c.Pods()) indexes.insert(StringAt(p, {"metadata", "annotations", "batch.kubernetes.io/job-completion-index"}));
    return HasCondition(c.Must("GET", kJobs + "/shards"), "Complete");
  }, 60));
  EXPECT_EQ(indexes, (std::set<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(StringAt(c.Must("GET", kJobs + "/shards"), {"status", "completedIndexes"}), "0-3");
  for (const Json& p : c.Pods()) {
    const std::string i = StringAt(p, {"metadata", "annotations", "batch.kubernetes.io/job-completion-index"});
    EXPECT_TRUE(NameOf(p).starts_with("shards-" + i + "-")) << NameOf(p);
  }
}

}  // namespace
}  // namespace arbiter::controllers

namespace arbiter::controllers {
namespace {

TEST(DisruptionController, ComputesTheBudgetFromTheDeploymentsScaleAndEvictionsSpendIt) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", kDeploy, Deployment("web", 3, "app:1"));
  c.Must("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
         {{"apiVersion", "policy/v1"},
          {"kind", "PodDisruptionBudget"},
          {"metadata", {{"name", "web"}}},
          {"spec", {{"maxUnavailable", 1}, {"selector", {{"matchLabels", {{"app", "web"}}}}}}}});
  const std::string path = "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web";
  ASSERT_TRUE(c.RunUntil([&] { return IntAt(c.Must("GET", path), {"status", "currentHealthy"}, 0) == 3; }));
  Json pdb = c.Must("GET", path);
  EXPECT_EQ(IntAt(pdb, {"status", "expectedPods"}, -1), 3);
  EXPECT_EQ(IntAt(pdb, {"status", "desiredHealthy"}, -1), 2);
  EXPECT_EQ(IntAt(pdb, {"status", "disruptionsAllowed"}, -1), 1);
  EXPECT_EQ(GetCondition(pdb["status"], "DisruptionAllowed")->value("reason", ""), "SufficientPods");
  // One eviction spends the budget; the next is refused until the replacement is Ready.
  auto pods = c.ActivePods();
  ASSERT_EQ(pods.size(), 3u);
  auto evict = [&](const Json& p) {
    return c.Call("POST", "/api/v1/namespaces/default/pods/" + NameOf(p) + "/eviction",
                  {{"apiVersion", "policy/v1"}, {"kind", "Eviction"}, {"metadata", {{"name", NameOf(p)}}}});
  };
  EXPECT_EQ(evict(pods[0]).code, 201);
  api::Response refused = evict(pods[1]);
  EXPECT_EQ(refused.code, 429);
  EXPECT_NE(refused.body.find("The disruption budget web needs 2 healthy pods and has"), std::string::npos) << refused.body;
  ASSERT_TRUE(c.RunUntil([&] { return IntAt(c.Must("GET", path), {"status", "disruptionsAllowed"}, 0) == 1; }, 90));
  EXPECT_EQ(evict(c.ActivePods()[1]).code, 201);
}

}  // namespace
}  // namespace arbiter::controllers

namespace arbiter::controllers {
namespace {

Json PlainPod(const std::string& name, const Json& tolerations = Json::array()) {
  Json p = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}}}, {"spec", PodTemplate({})["spec"]}};
  p["spec"]["terminationGracePeriodSeconds"] = 0;
  if (!tolerations.empty()) p["spec"]["tolerations"] = tolerations;
  return p;
}

TEST(TaintEviction, ANoExecuteTaintEvictsAtOnceAfterTolerationSecondsOrNeverByToleration) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", "/api/v1/namespaces/default/pods", PlainPod("plain"));
  c.Must("POST", "/api/v1/namespaces/default/pods",
         PlainPod("patient", Json::array({{{"key", "maintenance"}, {"operator", "Exists"}, {"effect", "NoExecute"},
                                           {"tolerationSeconds", 30}}})));
  c.Must("POST", "/api/v1/namespaces/default/pods",
         PlainPod("stubborn", Json::array({{{"key", "maintenance"}, {"operator", "Exists"}, {"effect", "NoExecute"}}})));
  ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 3; }));
  c.Must("PATCH", "/api/v1/nodes/n1",
         {{"spec", {{"taints", Json::array({{{"key", "maintenance"}, {"value", "now"}, {"effect", "NoExecute"}}})}}}},
         "application/merge-patch+json");
  auto exists = [&](const std::string& name) { return c.Call("GET", "/api/v1/namespaces/default/pods/" + name).code == 200; };
  ASSERT_TRUE(c.RunUntil([&] { return !exists("plain"); }, 5));
  EXPECT_TRUE(exists("patient"));
  ASSERT_TRUE(c.RunUntil([&] { return !exists("patient"); }, 40));
  c.Run(30);
  EXPECT_TRUE(exists("stubborn"));
  EXPECT_EQ(c.Events("TaintManagerEviction").size(), 2u);
}

TEST(TaintEviction, OtherChangesOfTheNodeLeaveTheEvictionTimeAloneAndATaintRemovedInTimeCancelsIt) {
  Cluster c;
  c.Node("n1");
  c.Node("n2");
  const Json patient = Json::array({{{"key", "maintenance"}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 30}}});
  Json first = PlainPod("first", patient), second = PlainPod("second", patient);
  first["spec"]["nodeName"] = "n1";
  second["spec"]["nodeName"] = "n2";
  c.Must("POST", "/api/v1/namespaces/default/pods", first);
  c.Must("POST", "/api/v1/namespaces/default/pods", second);
  ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 2; }));
  const Json taint = {{"spec", {{"taints", Json::array({{{"key", "maintenance"}, {"effect", "NoExecute"}}})}}}};
  c.Must("PATCH", "/api/v1/nodes/n1", taint, "application/merge-patch+json");
  c.Must("PATCH", "/api/v1/nodes/n2", taint, "application/merge-patch+json");
  auto exists = [&](const std::string& name) { return c.Call("GET", "/api/v1/namespaces/default/pods/" + name).code == 200; };
  c.Run(10);
  for (int i = 0; i < 3; ++i) {  // the node changes, its NoExecute taints do not
    c.Must("PATCH", "/api/v1/nodes/n1", {{"metadata", {{"labels", {{"touched", std::to_string(i)}}}}}},
           "application/merge-patch+json");
    c.Run(5);
  }
  c.Must("PATCH", "/api/v1/nodes/n2", {{"spec", {{"taints", nullptr}}}}, "application/merge-patch+json");
  EXPECT_TRUE(exists("first"));
  ASSERT_TRUE(c.RunUntil([&] { return !exists("first"); }, 10)) << "30 s after the taint, not after the last change";
  c.Run(40);
  EXPECT_TRUE(exists("second")) << "its taint was removed in time";
}

TEST(PodGarbageCollector, APodBoundToANodeThatDoesNotExistIsDeletedAfterTheQuarantine) {
  Cluster c;
  c.Node("n1");
  Json ghost = PlainPod("ghost");
  ghost["spec"]["nodeName"] = "ghost-node";
  c.Must("POST", "/api/v1/namespaces/default/pods", ghost);
  c.Run(30);
  EXPECT_EQ(c.Call("GET", "/api/v1/namespaces/default/pods/ghost").code, 200) << "still in quarantine";
  ASSERT_TRUE(c.RunUntil([&] { return c.Call("GET", "/api/v1/namespaces/default/pods/ghost").code == 404; }, 60));
}

TEST(PodGarbageCollector, TheOldestTerminatedPodsBeyondTheThresholdGoIncludingThoseThatEndedBetweenChecks) {
  Cluster c(true, 0, [](ControllerManager& m) { m.Add(std::make_unique<PodGarbageCollector>(2)); });
  c.Node("n1");
  auto run_for = [&](const std::string& name, const std::string& seconds) {
    Json p = PlainPod(name);
    p["spec"]["restartPolicy"] = "Never";
    p["metadata"]["annotations"] = {{"arbiter.dev/run-duration", seconds}};
    c.Must("POST", "/api/v1/namespaces/default/pods", p);
    c.Run(2);  // one creation second each
  };
  auto names = [&] {
    std::vector<std::string> out;
    for (const Json& p : c.Pods()) out.push_back(StringAt(p, {"metadata", "name"}));
    return out;
  };
  run_for("oldest", "1s");
  run_for("old", "1s");
  run_for("late", "60s");  // ends long after the first checks
  run_for("new", "1s");
  // Three ended, two are kept: the oldest goes.
  ASSERT_TRUE(c.RunUntil([&] { return names() == std::vector<std::string>{"late", "new", "old"}; }, 40));
  // "late" ends long after: three again, and the oldest of them goes, by creation time.
  ASSERT_TRUE(c.RunUntil([&] { return names() == std::vector<std::string>{"late", "new"}; }, 90));
  run_for("newest", "1s");
  ASSERT_TRUE(c.RunUntil([&] { return names() == std::vector<std::string>{"new", "newest"}; }, 90));
}

}  // namespace
}  // namespace arbiter::controllers

namespace arbiter::controllers {
namespace {

// A Job paired with a Workload and its PodGroup, as v1.37 pairs them: the Workload names the Job
// as its controller, the PodGroup is made from one of the Workload's templates, and the Job's pod
// template joins the group through spec.schedulingGroup. The Job controller copies the template,
// so its pods form a gang: none binds until all four fit.
TEST(JobController, AJobWhosePodsJoinAGangPodGroupIsScheduledAllOrNothing) {
  Cluster c;
  c.Node("n1", "3");
  c.Must("POST", "/apis/scheduling.k8s.io/v1beta1/namespaces/default/workloads",
         {{"apiVersion", "scheduling.k8s.io/v1beta1"},
          {"kind", "Workload"},
          {"metadata", {{"name", "sweep"}}},
          {"spec", {{"controllerRef", {{"apiGroup", "batch"}, {"kind", "Job"}, {"name", "sweep"}}},
                    {"podGroupTemplates", Json::array({{{"name", "actor"}, {"schedulingPolicy", {{"gang", {{"minCount", 4}}}}}}})}}}});
  c.Must("POST", "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups",
         {{"apiVersion", "scheduling.k8s.io/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "sweep-actor"}}},
          {"spec", {{"workloadRef", {{"workloadName", "sweep"}, {"templateName", "actor"}}},
                    {"schedulingPolicy", {{"gang", {{"minCount", 4}}}}}}}});
  Json job = Job("sweep", 4, 4, "5s");
  job["spec"]["template"]["spec"]["schedulingGroup"] = {{"podGroupName", "sweep-actor"}};
  c.Must("POST", kJobs, job);
  c.Run(10);
  ASSERT_EQ(c.ActivePods().size(), 4u);
  for (const Json& p : c.ActivePods()) EXPECT_EQ(StringAt(p, {"spec", "nodeName"}), "") << "a gang of 4 does not fit in 3 CPUs";
  c.Node("n2", "3");
  ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 4; }, 30));
  ASSERT_TRUE(c.RunUntil([&] { return HasCondition(c.Must("GET", kJobs + "/sweep"), "Complete"); }, 30));
}

}  // namespace
}  // namespace arbiter::controllers

namespace arbiter::controllers {
namespace {

TEST(StatefulSetController, CreatesPodsInOrderWithTheirClaimsAndRemovesThemHighestFirst) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", "/apis/storage.k8s.io/v1/storageclasses",
         {{"apiVersion", "storage.k8s.io/v1"}, {"kind", "StorageClass"}, {"metadata", {{"name", "local"}}},
          {"provisioner", "kubernetes.io/no-provisioner"}, {"volumeBindingMode", "WaitForFirstConsumer"}});
  for (int i = 0; i < 3; ++i) {
    c.Must("POST", "/api/v1/persistentvolumes",
           {{"apiVersion", "v1"},
            {"kind", "PersistentVolume"},
            {"metadata", {{"name", "disk-" + std::to_string(i)}}},
            {"spec", {{"storageClassName", "local"},
                      {"accessModes", {"ReadWriteOnce"}},
                      {"capacity", {{"storage", "10Gi"}}},
                      {"local", {{"path", "/mnt/" + std::to_string(i)}}},
                      {"nodeAffinity", {{"required", {{"nodeSelectorTerms", Json::array({{{"matchFields",
                          Json::array({{{"key", "metadata.name"}, {"operator", "In"}, {"values", {"n1"}}}})}}})}}}}}}}});
  }
  Json sts = {{"apiVersion", "apps/v1"},
              {"kind", "StatefulSet"},
              {"metadata", {{"name", "db"}}},
              {"spec", {{"replicas", 3},
                        {"serviceName", "db"},
                        {"selector", {{"matchLabels", {{"app", "db"}}}}},
                        {"template", PodTemplate({{"app", "db"}}, "db:1")},
                        {"volumeClaimTemplates", Json::array({{{"metadata", {{"name", "data"}}},
                                                               {"spec", {{"storageClassName", "local"},
                                                                         {"accessModes", {"ReadWriteOnce"}},
                                                                         {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}}})}}}};
  sts["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 0;
  c.Must("POST", "/apis/apps/v1/namespaces/default/statefulsets", sts);
  // OrderedReady: db-1 exists only once db-0 runs and is Ready, and so on.
  bool out_of_order = false;
  ASSERT_TRUE(c.RunUntil([&] {
    std::map<std::string, bool> ready;
    for (const Json& p : c.ActivePods()) ready[NameOf(p)] = PodReady(p);
    if (ready.contains("db-1") && !ready["db-0"]) out_of_order = true;
    if (ready.contains("db-2") && !ready["db-1"]) out_of_order = true;
    return c.Running() == 3;
  }));
  EXPECT_FALSE(out_of_order);
  for (int i = 0; i < 3; ++i) {
    const std::string pod = "db-" + std::to_string(i);
    Json p = c.Must("GET", "/api/v1/namespaces/default/pods/" + pod);
    EXPECT_EQ(StringAt(p, {"spec", "hostname"}), pod);
    EXPECT_EQ(StringAt(p, {"spec", "subdomain"}), "db");
    EXPECT_EQ(StringAt(p, {"metadata", "labels", "apps.kubernetes.io/pod-index"}), std::to_string(i));
    Json claim = c.Must("GET", "/api/v1/namespaces/default/persistentvolumeclaims/data-" + pod);
    EXPECT_EQ(StringAt(claim, {"status", "phase"}), "Bound");
  }
  Json set = c.Must("GET", "/apis/apps/v1/namespaces/default/statefulsets/db");
  EXPECT_EQ(IntAt(set, {"status", "readyReplicas"}, 0), 3);
  EXPECT_FALSE(StringAt(set, {"status", "updateRevision"}).empty());
  // Scaling to 1 removes db-2, then db-1; the claims stay.
  c.Must("PATCH", "/apis/apps/v1/namespaces/default/statefulsets/db/scale", {{"spec", {{"replicas", 1}}}},
         "application/merge-patch+json");
  ASSERT_TRUE(c.RunUntil([&] { return c.Pods().size() == 1; }));
  EXPECT_EQ(NameOf(c.Pods()[0]), "db-0");
  EXPECT_EQ(c.Call("GET", "/api/v1/namespaces/default/persistentvolumeclaims/data-db-2").code, 200);
}

}  // namespace
}  // namespace arbiter::controllers

namespace arbiter::controllers {
namespace {

TEST(NodeLifecycle, AStoppedNodeBecomesUnreachableAndItsPodsAreEvictedAfterTheDefaultTolerationSeconds) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", "/api/v1/namespaces/default/pods", PlainPod("p"));
  ASSERT_TRUE(c.RunUntil([&] { return c.Running() == 1; }));
  Json pod = c.Must("GET", "/api/v1/namespaces/default/pods/p");
  int defaults = 0;
  for (const Json& t : pod["spec"]["tolerations"]) defaults += t.value("tolerationSeconds", 0) == 300;
  EXPECT_EQ(defaults, 2) << "DefaultTolerationSeconds: not-ready and unreachable, 300 s";
  c.Must("PATCH", "/api/v1/nodes/n1", {{"metadata", {{"annotations", {{"arbiter.dev/stopped", "true"}}}}}},
         "application/merge-patch+json");
  auto unreachable = [&] {
    Json node = c.Must("GET", "/api/v1/nodes/n1");
    bool tainted = false;
    for (const Json& t : node["spec"].value("taints", Json::array())) {
      tainted = tainted || (t.value("key", "") == "node.kubernetes.io/unreachable" && t.value("effect", "") == "NoExecute");
    }
    return tainted && GetCondition(node["status"], "Ready")->value("status", "") == "Unknown";
  };
  c.Run(40);
  EXPECT_FALSE(unreachable()) << "within the grace period";
  ASSERT_TRUE(c.RunUntil(unreachable, 30));
  // Evicted (its grace period is 0: deleted at once) only once 300 s have passed.
  auto evicted = [&] {
    api::Response r = c.Call("GET", "/api/v1/namespaces/default/pods/p");
    return r.code == 404 || BeingDeleted(Json::parse(r.body));
  };
  c.Run(250);
  EXPECT_FALSE(evicted()) << "tolerated for 300 s";
  ASSERT_TRUE(c.RunUntil(evicted, 80));
  // Switched on again, the node loses the taints.
  c.Must("PATCH", "/api/v1/nodes/n1", {{"metadata", {{"annotations", {{"arbiter.dev/stopped", nullptr}}}}}},
         "application/merge-patch+json");
  ASSERT_TRUE(c.RunUntil([&] { return c.Must("GET", "/api/v1/nodes/n1")["spec"].value("taints", Json::array()).empty(); }, 30));
}

}  // namespace
}  // namespace arbiter::controllers

namespace arbiter::controllers {
namespace {

TEST(CronSchedule, FieldsRangesStepsNamesAndMacrosGiveTheNextTime) {
  // 2027-01-15T08:00:00Z is a Friday.
  const Timestamp friday = kT0;
  auto next = [&](const std::string& spec, Timestamp from) {
    auto s = CronSchedule::Parse(spec);
    EXPECT_TRUE(s.ok()) << spec << ": " << s.status().message();
    auto t = s.ok() ? s->Next(from) : std::nullopt;
    return t ? FormatRfc3339(*t) : std::string("never");
  };
  EXPECT_EQ(next("*/15 * * * *", friday), "2027-01-15T08:15:00Z");
  EXPECT_EQ(next("30 9-17/4 * * *", friday), "2027-01-15T09:30:00Z");
  EXPECT_EQ(next("0 0 * * mon", friday), "2027-01-18T00:00:00Z");
  EXPECT_EQ(next("0 12 1 feb *", friday), "2027-02-01T12:00:00Z");
  EXPECT_EQ(next("@daily", friday), "2027-01-16T00:00:00Z");
  EXPECT_EQ(next("0 0 13 * 5", friday), "2027-01-22T00:00:00Z") << "both day fields: either matches";
  EXPECT_EQ(next("0 0 30 2 *", friday), "never");
  EXPECT_FALSE(CronSchedule::Parse("61 * * * *").ok());
  EXPECT_FALSE(CronSchedule::Parse("* * * *").ok());
  EXPECT_EQ(CronSchedule::Parse("* * * *").status().message(), "expected exactly 5 fields, found 4: * * * *");
}

TEST(CronJobController, RunsAJobEachScheduledMinuteAndKeepsTheHistoryLimit) {
  Cluster c;
  c.Node("n1");
  Json job_spec = Job("unused", 1, 1, "5s")["spec"];
  c.Must("POST", "/apis/batch/v1/namespaces/default/cronjobs",
         {{"apiVersion", "batch/v1"},
          {"kind", "CronJob"},
          {"metadata", {{"name", "tick"}}},
          {"spec", {{"schedule", "* * * * *"}, {"successfulJobsHistoryLimit", 2}, {"jobTemplate", {{"spec", job_spec}}}}}});
  c.Run(5 * 60 + 30);
  std::vector<Json> jobs = c.List(kJobs);
  ASSERT_EQ(jobs.size(), 2u) << "five runs, the last two kept";
  for (const Json& j : jobs) {
    EXPECT_TRUE(HasCondition(j, "Complete")) << j.dump();
    EXPECT_TRUE(NameOf(j).starts_with("tick-"));
  }
  Json cj = c.Must("GET", "/apis/batch/v1/namespaces/default/cronjobs/tick");
  EXPECT_EQ(StringAt(cj, {"status", "lastScheduleTime"}), FormatRfc3339(kT0 + 5 * kMinute));
  EXPECT_FALSE(StringAt(cj, {"status", "lastSuccessfulTime"}).empty());
  EXPECT_EQ(c.Events("SuccessfulCreate").size() >= 5, true);
}

}  // namespace
}  // namespace arbiter::controllers

namespace arbiter::controllers {
namespace {

TEST(ResourceQuotaController, ReportsWhatTheNamespaceUsesAsAdmissionCountsIt) {
  Cluster c;
  c.Node("n1");
  c.Must("POST", "/api/v1/namespaces/default/resourcequotas",
         {{"apiVersion", "v1"}, {"kind", "ResourceQuota"}, {"metadata", {{"name", "q"}}},
          {"spec", {{"hard", {{"pods", "3"}, {"requests.cpu", "1"}, {"requests.memory", "1Gi"}}}}}});
  for (const char* name : {"a", "b"}) {
    Json p = PlainPod(name);
    p["spec"]["containers"][0]["resources"]["requests"] = {{"cpu", "250m"}, {"memory", "64Mi"}};
    c.Must("POST", "/api/v1/namespaces/default/pods", p);
  }
  const std::string path = "/api/v1/namespaces/default/resourcequotas/q";
  ASSERT_TRUE(c.RunUntil([&] { return StringAt(c.Must("GET", path), {"status", "used", "pods"}) == "2"; }));
  Json q = c.Must("GET", path);
  EXPECT_EQ(q["status"]["used"], (Json{{"pods", "2"}, {"requests.cpu", "500m"}, {"requests.memory", "128Mi"}}));
  EXPECT_EQ(q["status"]["hard"], q["spec"]["hard"]);
}

}  // namespace
}  // namespace arbiter::controllers

// `plan`'s expansion of workloads (expand.h) against serve's controllers: the same objects,
// applied to the API and expanded from a file, make pods with the same names (up to a
// generateName's suffix), labels, annotations and owners.
namespace arbiter::controllers {
namespace {

struct MadePod {
  std::string name;  // a generated name's suffix replaced by "*"
  std::map<std::string, std::string> labels;
  std::string owner;  // "Kind/name"
  bool operator==(const MadePod&) const = default;
  bool operator<(const MadePod& o) const { return std::tie(name, labels, owner) < std::tie(o.name, o.labels, o.owner); }
};

std::ostream& operator<<(std::ostream& os, const MadePod& p) {
  os << p.name << " of " << p.owner << " {";
  for (const auto& [k, v] : p.labels) os << k << "=" << v << " ";
  return os << "}";
}

// "web-7d4b9c-x2x9z" → "web-7d4b9c-*" when the name was generated.
std::string Unsuffixed(const std::string& name, bool generated) {
  return generated ? name.substr(0, name.size() - 5) + "*" : name;
}

std::multiset<MadePod> ServeMakes(const std::vector<std::pair<std::string, Json>>& objects) {
  Cluster c;
  c.Node("n1");
  c.Node("n2");
  for (const auto& [path, o] : objects) c.Must("POST", path, o);
  c.Run(3);
  std::multiset<MadePod> out;
  for (const Json& p : c.Pods()) {
    const Json* ref = ControllerRef(p);
    std::string owner = ref != nullptr ? ref->value("kind", "") + "/" + ref->value("name", "") : "";
    if (owner.starts_with("ReplicaSet/")) {
      // The ReplicaSet of a Deployment: named for its template's hash, which both must agree on.
      owner = "ReplicaSet/" + ref->value("name", "");
    }
    MadePod m{Unsuffixed(NameOf(p), !StringAt(p, {"metadata", "generateName"}).empty()), {}, owner};
    if (const Json* l = Find(p, {"metadata", "labels"})) {
      for (const auto& [k, v] : l->items()) m.labels[k] = v.get<std::string>();
    }
    // The uid of a Job differs between the two (the API draws it); its labels carry it.
    for (const char* k : {"batch.kubernetes.io/controller-uid", "controller-uid"}) {
      if (m.labels.contains(k)) m.labels[k] = "<uid>";
    }
    out.insert(std::move(m));
  }
  return out;
}

std::multiset<MadePod> PlanMakes(const std::vector<std::pair<std::string, Json>>& objects, std::vector<std::string>* notes) {
  std::string text;
  for (const auto& [path, o] : objects) text += o.dump() + "\n";
  text += R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4"}}}
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}, "status": {"allocatable": {"cpu": "4"}}})";
  Expansion e;
  manifest::LoadResult r = manifest::Load({{"workloads.json", text}}, manifest::TextReader::kFast,
                                          manifest::UnknownFields::kError,
                                          [&](manifest::LoadResult& l) { e = ExpandWorkloads(l.objects, 3); });
  EXPECT_TRUE(r.ok()) << ::testing::PrintToString(r.errors);
  EXPECT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors);
  if (notes != nullptr) *notes = e.notes;
  std::multiset<MadePod> out;
  for (const auto& p : r.objects.pods) {
    const auto& ref = r.objects.pod_controllers.at(p.object.Key());
    const bool generated = ref.kind != "StatefulSet";
    MadePod m{Unsuffixed(p.object.name, generated), {}, ref.kind + "/" + ref.name};
    for (const auto& [k, v] : p.object.labels) m.labels[k] = v;
    for (const char* k : {"batch.kubernetes.io/controller-uid", "controller-uid"}) {
      if (m.labels.contains(k)) m.labels[k] = "<uid>";
    }
    out.insert(std::move(m));
  }
  return out;
}

TEST(PlanExpansion, MakesThePodsServesControllersMakeForADeploymentAStatefulSetAndAnIndexedJob) {
  Json sts = {{"apiVersion", "apps/v1"},
              {"kind", "StatefulSet"},
              {"metadata", {{"name", "db"}, {"namespace", "default"}}},
              {"spec", {{"replicas", 2},
                        {"serviceName", "db"},
                        {"podManagementPolicy", "Parallel"},
                        {"selector", {{"matchLabels", {{"app", "db"}}}}},
                        {"template", PodTemplate({{"app", "db"}}, "db:1")}}}};
  Json job = Job("shards", 5, 2, "60s");
  job["spec"]["completionMode"] = "Indexed";
  Json web = Deployment("web", 3, "web:1");
  web["metadata"]["namespace"] = "default";
  job["metadata"]["namespace"] = "default";
  const std::vector<std::pair<std::string, Json>> objects = {
      {kDeploy, web}, {"/apis/apps/v1/namespaces/default/statefulsets", sts}, {kJobs, job}};
  std::vector<std::string> notes;
  const std::multiset<MadePod> planned = PlanMakes(objects, &notes);
  EXPECT_EQ(planned.size(), 3u + 2u + 2u);
  EXPECT_EQ(planned, ServeMakes(objects));
  EXPECT_EQ(notes.size(), 4u) << ::testing::PrintToString(notes);
}

TEST(PlanExpansion, PodsAWorkloadAlreadyHasInTheInputAreNotMadeAgain) {
  // A dump: the ReplicaSet of 3 with one of its pods, and a pod of the StatefulSet's ordinal 0.
  const std::string text = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4"}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-abc, namespace: default, uid: rs-1}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: web}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: web-abc-xxxxx
  namespace: default
  labels: {app: web}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: rs-1, controller: true}]
spec: {nodeName: n1, containers: [{name: c, image: web}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: db}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: db-0
  namespace: default
  labels: {app: db}
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: db, uid: other, controller: true}]
spec: {nodeName: n1, containers: [{name: c, image: db}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {nodeSelector: {disk: ssd}, containers: [{name: c, image: agent}]}
)";
  Expansion e;
  manifest::LoadResult r = manifest::Load({{"dump.yaml", text}}, manifest::TextReader::kFast, manifest::UnknownFields::kError,
                                          [&](manifest::LoadResult& l) { e = ExpandWorkloads(l.objects, 1); });
  ASSERT_TRUE(r.ok()) << ::testing::PrintToString(r.errors);
  std::vector<std::string> names;
  for (const auto& p : r.objects.pods) names.push_back(p.object.name);
  ASSERT_EQ(names.size(), 2u + 2u + 1u) << ::testing::PrintToString(names);
  EXPECT_TRUE(names[2].starts_with("db-1")) << names[2];  // the StatefulSet first: input order
  EXPECT_TRUE(names[3].starts_with("web-abc-")) << names[3];
  EXPECT_TRUE(names[4].starts_with("web-abc-")) << names[4];
  EXPECT_EQ(e.notes, (std::vector<std::string>{
                         "StatefulSet default/db: 1 pod of 2 in ordinal order",
                         "DaemonSet default/agent: 0 pods, one per eligible node (1 node its selector, affinity or taints exclude)",
                         "ReplicaSet default/web-abc: 2 pods of 3 (1 in the input)"}));
}

TEST(PlanExpansion, AWorkloadTheApiWouldRefuseIsAnErrorNamingItsFileAndField) {
  const std::string text = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec: {restartPolicy: Always, containers: [{name: c, image: x}]}
)";
  Expansion e;
  manifest::LoadResult r = manifest::Load({{"job.yaml", text}}, manifest::TextReader::kFast, manifest::UnknownFields::kError,
                                          [&](manifest::LoadResult& l) { e = ExpandWorkloads(l.objects, 1); });
  ASSERT_EQ(e.errors.size(), 1u);
  EXPECT_EQ(e.errors[0], "job.yaml: document 1: Job default/j: Job.batch \"j\" is invalid: spec.template.spec.restartPolicy: "
                         "Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\"");
}

}  // namespace
}  // namespace arbiter::controllers
