// Tests of the transport-independent Kubernetes-compatible API (src/arbiter/api): an ApiServer
// over an in-memory store and a virtual clock, with the admission of `arbiter serve`, driven by
// api::Request values and checked through api::Response (code, JSON body, watch).
#include <chrono>
#include <cstdint>
#include <exception>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arbiter/base/base64.h"
#include "testing/forwarding_store.h"
#include "arbiter/base/json.h"
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>

#include "arbiter/api/admission.h"
#include "arbiter/api/authn.h"
#include "arbiter/api/authz.h"
#include "arbiter/api/patch.h"
#include "arbiter/api/protobuf_codec.h"
#include "arbiter/api/server.h"
#include "arbiter/api/tables.h"
#include "arbiter/base/time.h"
#include "arbiter/store/store.h"

namespace arbiter::api {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;
using Strings = std::map<std::string, std::string>;
using Names = std::vector<std::string>;

const std::string kPods = "/api/v1/namespaces/default/pods";
const std::string kNodes = "/api/v1/nodes";
const std::string kNamespaces = "/api/v1/namespaces";
const std::string kClasses = "/apis/scheduling.k8s.io/v1/priorityclasses";
const std::string kPdbs = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";
const std::string kQuotas = "/api/v1/namespaces/default/resourcequotas";
const std::string kTableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

Timestamp Start() { return ParseRfc3339("2025-03-01T10:00:00Z").value(); }

Json Parse(const Response& r) { return Json::parse(r.body, nullptr, /*allow_exceptions=*/false); }

// Checks that `r` is an error with `code` and a Kubernetes Status body (kind Status, status
// Failure, the same code, a reason; `reason` when given).
testing::AssertionResult IsStatus(const Response& r, int code, const std::string& reason = "") {
  if (r.code != code) return testing::AssertionFailure() << "code " << r.code << ", want " << code << ": " << r.body;
  if (r.watch) return testing::AssertionFailure() << "an error response carries a watch";
  Json b = Parse(r);
  if (!b.is_object()) return testing::AssertionFailure() << "the body is not a JSON object: " << r.body;
  if (b["kind"] != "Status") return testing::AssertionFailure() << "kind is not Status: " << r.body;
  if (b["apiVersion"] != "v1") return testing::AssertionFailure() << "apiVersion is not v1: " << r.body;
  if (b["status"] != "Failure") return testing::AssertionFailure() << "status is not Failure: " << r.body;
  if (b["code"] != code) return testing::AssertionFailure() << "code in the body is not " << code << ": " << r.body;
  if (!b["reason"].is_string() || b["reason"].get<std::string>().empty()) {
    return testing::AssertionFailure() << "no reason: " << r.body;
  }
  if (!reason.empty() && b["reason"] != reason) {
    return testing::AssertionFailure() << "reason " << b["reason"] << ", want " << reason << ": " << r.body;
  }
  if (!b["message"].is_string()) return testing::AssertionFailure() << "no message: " << r.body;
  return testing::AssertionSuccess();
}

std::string MessageOf(const Response& r) {
  Json b = Parse(r);
  return b.is_object() && b["message"].is_string() ? b["message"].get<std::string>() : "";
}

Json NamespaceJson(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
}

Json PodJson(const std::string& name, const Json& labels = Json::object()) {
  Json container = {{"name", "app"},
                    {"image", "nginx:1.25"},
                    {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "64Mi"}}}}}};
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}}},
              {"spec", {{"containers", Json::array({container})}}}};
  if (!labels.empty()) pod["metadata"]["labels"] = labels;
  return pod;
}

Json NodeJson(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
          {"status", {{"allocatable", {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}}}}}};
}

Json ClassJson(const std::string& name, int64_t value) {
  return {{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"}, {"metadata", {{"name", name}}},
          {"value", value}};
}

Json BindingJson(const std::string& pod, const std::string& node) {
  return {{"apiVersion", "v1"},
          {"kind", "Binding"},
          {"metadata", {{"name", pod}}},
          {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
}

Json EvictionJson(const std::string& pod) {
  return {{"apiVersion", "policy/v1"}, {"kind", "Eviction"}, {"metadata", {{"name", pod}, {"namespace", "default"}}}};
}

Json PdbJson(const std::string& name, const Json& selector, int64_t min_available) {
  return {{"apiVersion", "policy/v1"},
          {"kind", "PodDisruptionBudget"},
          {"metadata", {{"name", name}}},
          {"spec", {{"selector", selector}, {"minAvailable", min_available}}}};
}

// The names of a list body's items, in order.
Names ItemNames(const Json& list) {
  Names out;
  if (!list.contains("items") || !list["items"].is_array()) return out;
  for (const Json& i : list["items"]) out.push_back(i["metadata"].value("name", ""));
  return out;
}

class ApiServerTest : public testing::Test {
 protected:
  ApiServerTest()
      : store_(store::NewMemoryStore()), clock_(Start()), server_(*store_, clock_, 7, ApiServer::Options{}) {
    InstallAdmission(server_);
  }

  void SetUp() override {
    Response r = Post(kNamespaces, NamespaceJson("default"));
    ASSERT_EQ(r.code, 201) << r.body;
  }

  // Handles `r` on `server`; an exception escaping the server is a failure (the server answers
  // every request with a response), reported as code 0.
  static Response Call(ApiServer& server, const Request& r) {
    try {
      Response out = server.Handle(r);
      // A long list is written a chunk at a time: read it whole, as a client does.
      if (out.stream && out.stream->keep_alive) {
        while (auto chunk = out.stream->next()) out.body += *chunk;
        out.stream.reset();
      }
      return out;
    } catch (const std::exception& e) {
      ADD_FAILURE() << r.method << " " << r.path << " threw instead of answering: " << e.what();
      Response out;
      out.code = 0;
      out.body = std::string("exception: ") + e.what();
      return out;
    }
  }

  Response Do(const std::string& method, const std::string& path, const std::string& body = "",
              const Strings& query = {}, const Strings& headers = {}) {
    Request r;
    r.method = method;
    r.path = path;
    r.query = query;
    r.headers = headers;
    r.body = body;
    return Call(server_, r);
  }
  Response Get(const std::string& path, const Strings& query = {}, const Strings& headers = {}) {
    return Do("GET", path, "", query, headers);
  }
  Response Post(const std::string& path, const Json& body) { return Do("POST", path, body.dump()); }
  Response Put(const std::string& path, const Json& body) { return Do("PUT", path, body.dump()); }
  Response PatchAs(const std::string& path, const std::string& content_type, const Json& body) {
    return Do("PATCH", path, body.dump(), {}, {{"content-type", content_type}});
  }
  Response Delete(const std::string& path, const Strings& query = {}, const std::string& body = "") {
    return Do("DELETE", path, body, query);
  }

  // GET that must succeed; the parsed body.
  Json MustGet(const std::string& path, const Strings& query = {}) {
    Response r = Get(path, query);
    EXPECT_EQ(r.code, 200) << "GET " << path << ": " << r.body;
    return Parse(r);
  }
  Names List(const std::string& path, const Strings& query = {}) { return ItemNames(MustGet(path, query)); }

  Json MustCreate(const std::string& collection, const Json& object) {
    Response r = Post(collection, object);
    EXPECT_EQ(r.code, 201) << "POST " << collection << ": " << r.body;
    return Parse(r);
  }
  Json CreatePod(const std::string& name, const Json& labels = Json::object()) {
    return MustCreate(kPods, PodJson(name, labels));
  }
  void BindPod(const std::string& pod, const std::string& node) {
    Response r = Post(kPods + "/" + pod + "/binding", BindingJson(pod, node));
    EXPECT_EQ(r.code, 201) << "binding " << pod << ": " << r.body;
  }
  // Replaces the pod's status through the status subresource.
  void SetStatus(const std::string& pod, const Json& status) {
    Json p = MustGet(kPods + "/" + pod);
    p["status"] = status;
    Response r = Put(kPods + "/" + pod + "/status", p);
    EXPECT_EQ(r.code, 200) << "status of " << pod << ": " << r.body;
  }
  // A bound, Running pod.
  void RunningPod(const std::string& name, const Json& labels, const std::string& node = "n1") {
    CreatePod(name, labels);
    BindPod(name, node);
    Json status = MustGet(kPods + "/" + name)["status"];
    status["phase"] = "Running";
    SetStatus(name, status);
  }

  int64_t Revision() { return store_->Revision().value(); }

  std::unique_ptr<store::Store> store_;
  VirtualClock clock_;
  ApiServer server_;
};

// Reads events from the watch until `n` arrived or 5 s passed.
std::vector<store::Event> NextEvents(WatchStream& w, size_t n) {
  std::vector<store::Event> out;
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
    auto events = w.watch->Next(200ms);
    EXPECT_TRUE(events.ok()) << events.status().message();
    if (!events.ok()) break;
    for (const auto& e : *events) out.push_back(*e);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Discovery

TEST_F(ApiServerTest, WatchLinesOfObjectsWrittenAtOneRevisionAreTheirOwn) {
  // On etcd the writes of one transaction share its revision; each keeps its own line.
  WatchStream w;
  w.resource = "pods";
  store::Event a{store::EventType::kModified, {"pods", "default", "a", 7, Json{{"metadata", {{"name", "a"}}}}}};
  store::Event b{store::EventType::kModified, {"pods", "default", "b", 7, Json{{"metadata", {{"name", "b"}}}}}};
  const std::string la = server_.WatchLine(w, a), lb = server_.WatchLine(w, b);
  EXPECT_NE(la.find("\"a\""), std::string::npos) << la;
  EXPECT_NE(lb.find("\"b\""), std::string::npos) << lb;
  EXPECT_EQ(server_.WatchLine(w, a), la);
}

TEST_F(ApiServerTest, CoreApiListsVersionV1) {
  Json b = MustGet("/api");
  EXPECT_EQ(b["kind"], "APIVersions");
  EXPECT_EQ(b["versions"], Json::array({"v1"}));
}

TEST_F(ApiServerTest, ApisListsEveryGroupWithItsPreferredVersion) {
  Json b = MustGet("/apis");
  EXPECT_EQ(b["kind"], "APIGroupList");
  std::map<std::string, Json> groups;
  for (const Json& g : b["groups"]) groups[g["name"].get<std::string>()] = g;
  ASSERT_TRUE(groups.count("scheduling.k8s.io"));
  ASSERT_TRUE(groups.count("policy"));
  ASSERT_TRUE(groups.count("coordination.k8s.io"));
  EXPECT_EQ(groups["scheduling.k8s.io"]["preferredVersion"]["groupVersion"], "scheduling.k8s.io/v1");
  Names versions;
  for (const Json& v : groups["scheduling.k8s.io"]["versions"]) versions.push_back(v["version"].get<std::string>());
  EXPECT_EQ(versions, (Names{"v1", "v1beta1", "v1alpha3"}));
  EXPECT_EQ(groups["policy"]["preferredVersion"]["version"], "v1");
}

TEST_F(ApiServerTest, CoreResourceListHasPodsWithShortNameAndSubresources) {
  Json b = MustGet("/api/v1");
  EXPECT_EQ(b["kind"], "APIResourceList");
  EXPECT_EQ(b["groupVersion"], "v1");
  std::map<std::string, Json> resources;
  for (const Json& r : b["resources"]) resources[r["name"].get<std::string>()] = r;
  ASSERT_TRUE(resources.count("pods"));
  EXPECT_EQ(resources["pods"]["shortNames"], Json::array({"po"}));
  EXPECT_EQ(resources["pods"]["kind"], "Pod");
  EXPECT_EQ(resources["pods"]["namespaced"], true);
  EXPECT_EQ(resources["pods"]["singularName"], "pod");
  EXPECT_EQ(resources["pods"]["verbs"], Json::array({"create", "delete", "get", "list", "patch", "update", "watch"}));
  ASSERT_TRUE(resources.count("pods/status"));
  ASSERT_TRUE(resources.count("pods/binding"));
  ASSERT_TRUE(resources.count("pods/eviction"));
  EXPECT_EQ(resources["pods/binding"]["kind"], "Binding");
  EXPECT_EQ(resources["pods/binding"]["verbs"], Json::array({"create"}));
  EXPECT_EQ(resources["pods/eviction"]["kind"], "Eviction");
  EXPECT_EQ(resources["pods/eviction"]["group"], "policy");
  EXPECT_EQ(resources["pods/status"]["verbs"], Json::array({"get", "patch", "update"}));
  ASSERT_TRUE(resources.count("nodes"));
  EXPECT_EQ(resources["nodes"]["namespaced"], false);
  EXPECT_EQ(resources["nodes"]["shortNames"], Json::array({"no"}));
  ASSERT_TRUE(resources.count("namespaces"));
  EXPECT_FALSE(resources.count("priorityclasses")) << "priorityclasses belong to scheduling.k8s.io";
}

TEST_F(ApiServerTest, SchedulingGroupVersionListsClusterScopedPriorityClasses) {
  Json b = MustGet("/apis/scheduling.k8s.io/v1");
  EXPECT_EQ(b["kind"], "APIResourceList");
  EXPECT_EQ(b["groupVersion"], "scheduling.k8s.io/v1");
  ASSERT_EQ(b["resources"].size(), 1u) << b.dump();
  const Json& pc = b["resources"][0];
  EXPECT_EQ(pc["name"], "priorityclasses");
  EXPECT_EQ(pc["kind"], "PriorityClass");
  EXPECT_EQ(pc["namespaced"], false);
  EXPECT_EQ(pc["shortNames"], Json::array({"pc"}));
}

TEST_F(ApiServerTest, VersionReportsTheConfiguredGitVersion) {
  Json b = MustGet("/version");
  EXPECT_EQ(b["major"], "1");
  EXPECT_EQ(b["minor"], "32");
  EXPECT_EQ(b["gitVersion"], "v1.32.0-arbiter");
}

TEST_F(ApiServerTest, OpenApiIndexListsEveryGroupVersion) {
  Json b = MustGet("/openapi/v3");
  ASSERT_TRUE(b["paths"].is_object());
  for (const char* gv : {"api/v1", "apis/scheduling.k8s.io/v1", "apis/scheduling.k8s.io/v1beta1", "apis/policy/v1",
                         "apis/coordination.k8s.io/v1"}) {
    EXPECT_TRUE(b["paths"].contains(gv)) << gv;
  }
  EXPECT_TRUE(b["paths"]["api/v1"]["serverRelativeURL"].get<std::string>().starts_with("/openapi/v3/api/v1"));
}

TEST_F(ApiServerTest, OpenApiGroupDocumentNamesEachKind) {
  Json b = MustGet("/openapi/v3/apis/scheduling.k8s.io/v1");
  EXPECT_EQ(b["openapi"], "3.0.0");
  bool found = false;
  for (const auto& [name, schema] : b["components"]["schemas"].items()) {
    for (const Json& gvk : schema["x-kubernetes-group-version-kind"]) {
      if (gvk["kind"] == "PriorityClass" && gvk["group"] == "scheduling.k8s.io" && gvk["version"] == "v1") found = true;
    }
  }
  EXPECT_TRUE(found) << b.dump();
  EXPECT_TRUE(b["paths"].contains("/apis/scheduling.k8s.io/v1/priorityclasses"));
  Json core = MustGet("/openapi/v3/api/v1");
  EXPECT_TRUE(core["paths"].contains("/api/v1/namespaces/{namespace}/pods/{name}"));
}

TEST_F(ApiServerTest, GroupDocumentDescribesTheGroup) {
  Json b = MustGet("/apis/scheduling.k8s.io");
  EXPECT_EQ(b["kind"], "APIGroup");
  EXPECT_EQ(b["name"], "scheduling.k8s.io");
  EXPECT_EQ(b["preferredVersion"]["version"], "v1");
}

TEST_F(ApiServerTest, UnknownGroupVersionIsNotFoundWithStatusBody) {
  EXPECT_TRUE(IsStatus(Get("/apis/example.com/v1"), 404, "NotFound"));
  EXPECT_TRUE(IsStatus(Get("/apis/scheduling.k8s.io/v9"), 404, "NotFound"));
  EXPECT_TRUE(IsStatus(Get("/apis/example.com"), 404, "NotFound"));
  EXPECT_TRUE(IsStatus(Get("/openapi/v3/apis/example.com/v1"), 404, "NotFound"));
}

// ---------------------------------------------------------------------------------------------
// Create, get, list, update, delete

TEST_F(ApiServerTest, CreatePodSetsUidCreationTimestampAndResourceVersion) {
  Response r = Post(kPods, PodJson("web"));
  ASSERT_EQ(r.code, 201) << r.body;
  Json p = Parse(r);
  EXPECT_EQ(p["kind"], "Pod");
  EXPECT_EQ(p["apiVersion"], "v1");
  EXPECT_EQ(p["metadata"]["name"], "web");
  EXPECT_EQ(p["metadata"]["namespace"], "default");
  ASSERT_TRUE(p["metadata"]["uid"].is_string());
  EXPECT_EQ(p["metadata"]["uid"].get<std::string>().size(), 36u) << p["metadata"]["uid"];
  EXPECT_EQ(p["metadata"]["creationTimestamp"], FormatRfc3339(Start()));
  ASSERT_TRUE(p["metadata"]["resourceVersion"].is_string());
  EXPECT_EQ(p["metadata"]["resourceVersion"], std::to_string(Revision()));
  EXPECT_EQ(p["metadata"]["generation"], 1);
  EXPECT_EQ(p["status"]["phase"], "Pending");
  EXPECT_EQ(p["spec"]["schedulerName"], "default-scheduler");
  EXPECT_EQ(p["spec"]["terminationGracePeriodSeconds"], 30);
}

TEST_F(ApiServerTest, CreateStartsEveryPodPendingWhateverStatusItCarries) {
  Json quota = {{"apiVersion", "v1"},
                {"kind", "ResourceQuota"},
                {"metadata", {{"name", "one"}}},
                {"spec", {{"hard", {{"pods", "1"}}}}}};
  MustCreate(kQuotas, quota);
  Json p = PodJson("web");
  p["status"] = {{"phase", "Succeeded"}, {"podIP", "10.9.9.9"}};
  Response r = Post(kPods, p);
  ASSERT_EQ(r.code, 201) << r.body;
  Json created = Parse(r);
  EXPECT_EQ(created["status"]["phase"], "Pending");
  EXPECT_FALSE(created["status"].contains("podIP"));
  EXPECT_TRUE(IsStatus(Post(kPods, PodJson("second")), 403, "Forbidden")) << "the first pod counts against the quota";
}

TEST_F(ApiServerTest, CreatedObjectsGetDistinctUids) {
  Json a = CreatePod("a");
  Json b = CreatePod("b");
  EXPECT_NE(a["metadata"]["uid"], b["metadata"]["uid"]);
}

TEST_F(ApiServerTest, GetReturnsTheStoredPod) {
  Json created = CreatePod("web");
  Json got = MustGet(kPods + "/web");
  EXPECT_EQ(got, created);
}

TEST_F(ApiServerTest, GetOfAMissingPodIsNotFoundNamingIt) {
  Response r = Get(kPods + "/nope");
  ASSERT_TRUE(IsStatus(r, 404, "NotFound"));
  Json b = Parse(r);
  EXPECT_EQ(b["details"]["name"], "nope");
  EXPECT_EQ(b["details"]["kind"], "pods");
  EXPECT_NE(MessageOf(r).find("nope"), std::string::npos);
}

TEST_F(ApiServerTest, ListReturnsAPodListSortedByNameAtTheStoreRevision) {
  CreatePod("b");
  CreatePod("a");
  Json l = MustGet(kPods);
  EXPECT_EQ(l["kind"], "PodList");
  EXPECT_EQ(l["apiVersion"], "v1");
  EXPECT_EQ(l["metadata"]["resourceVersion"], std::to_string(Revision()));
  EXPECT_EQ(ItemNames(l), (Names{"a", "b"}));
}

TEST_F(ApiServerTest, ListAcrossNamespacesAndWithinOne) {
  MustCreate(kNamespaces, NamespaceJson("other"));
  CreatePod("a");
  MustCreate("/api/v1/namespaces/other/pods", PodJson("b"));
  EXPECT_EQ(List("/api/v1/pods"), (Names{"a", "b"}));
  EXPECT_EQ(List(kPods), (Names{"a"}));
  EXPECT_EQ(List("/api/v1/namespaces/other/pods"), (Names{"b"}));
  EXPECT_EQ(MustGet("/api/v1/namespaces/other/pods/b")["metadata"]["namespace"], "other");
}

TEST_F(ApiServerTest, UpdateOfAPodChangesLabelsAndBumpsResourceVersion) {
  Json p = CreatePod("web");
  const std::string rv = p["metadata"]["resourceVersion"];
  p["metadata"]["labels"] = {{"app", "web"}};
  Response r = Put(kPods + "/web", p);
  ASSERT_EQ(r.code, 200) << r.body;
  Json u = Parse(r);
  EXPECT_EQ(u["metadata"]["labels"]["app"], "web");
  EXPECT_NE(u["metadata"]["resourceVersion"], rv);
  EXPECT_EQ(u["metadata"]["uid"], p["metadata"]["uid"]);
  EXPECT_EQ(MustGet(kPods + "/web")["metadata"]["labels"]["app"], "web");
}

TEST_F(ApiServerTest, UpdateOfTheSpecBumpsGeneration) {
  Json p = CreatePod("web");
  p["spec"]["containers"][0]["image"] = "nginx:1.26";
  Json u = Parse(Put(kPods + "/web", p));
  EXPECT_EQ(u["metadata"]["generation"], 2);
  u["metadata"]["labels"] = {{"x", "y"}};
  Json v = Parse(Put(kPods + "/web", u));
  EXPECT_EQ(v["metadata"]["generation"], 2) << "a metadata-only change keeps the generation";
}

TEST_F(ApiServerTest, UpdateCannotChangeServerOwnedMetadata) {
  Json p = CreatePod("web");
  Json changed = p;
  changed["metadata"]["uid"] = "forged";
  changed["metadata"]["creationTimestamp"] = "2000-01-01T00:00:00Z";
  Response r = Put(kPods + "/web", changed);
  ASSERT_EQ(r.code, 200) << r.body;
  Json u = Parse(r);
  EXPECT_EQ(u["metadata"]["uid"], p["metadata"]["uid"]);
  EXPECT_EQ(u["metadata"]["creationTimestamp"], p["metadata"]["creationTimestamp"]);
}

TEST_F(ApiServerTest, DeleteOfAnUnboundPodRemovesItAtOnce) {
  CreatePod("web");
  Response r = Delete(kPods + "/web");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Parse(r)["metadata"]["name"], "web");
  EXPECT_TRUE(IsStatus(Get(kPods + "/web"), 404, "NotFound"));
  EXPECT_TRUE(List(kPods).empty());
}

TEST_F(ApiServerTest, DeleteOfAMissingPodIsNotFound) {
  EXPECT_TRUE(IsStatus(Delete(kPods + "/nope"), 404, "NotFound"));
}

TEST_F(ApiServerTest, NodesCanBeCreatedReadListedUpdatedAndDeleted) {
  Json n = MustCreate(kNodes, NodeJson("n1"));
  EXPECT_EQ(n["kind"], "Node");
  EXPECT_FALSE(n["metadata"].contains("namespace"));
  EXPECT_TRUE(n["metadata"]["uid"].is_string());
  EXPECT_EQ(n["metadata"]["creationTimestamp"], FormatRfc3339(Start()));
  MustCreate(kNodes, NodeJson("n2"));
  Json l = MustGet(kNodes);
  EXPECT_EQ(l["kind"], "NodeList");
  EXPECT_EQ(ItemNames(l), (Names{"n1", "n2"}));
  EXPECT_EQ(MustGet(kNodes + "/n1")["status"]["allocatable"]["cpu"], "4");

  n["spec"] = {{"unschedulable", true}};
  Response u = Put(kNodes + "/n1", n);
  ASSERT_EQ(u.code, 200) << u.body;
  EXPECT_EQ(MustGet(kNodes + "/n1")["spec"]["unschedulable"], true);

  ASSERT_EQ(Delete(kNodes + "/n1").code, 200);
  EXPECT_TRUE(IsStatus(Get(kNodes + "/n1"), 404, "NotFound"));
  EXPECT_EQ(List(kNodes), (Names{"n2"}));
}

TEST_F(ApiServerTest, NodesCreatedInANamespacePathAreNotFound) {
  EXPECT_TRUE(IsStatus(Post("/api/v1/namespaces/default/nodes", NodeJson("n1")), 404, "NotFound"));
  EXPECT_TRUE(List(kNodes).empty());
}

TEST_F(ApiServerTest, PriorityClassesCanBeCreatedReadListedUpdatedAndDeleted) {
  Json pc = MustCreate(kClasses, ClassJson("high", 1000));
  EXPECT_EQ(pc["kind"], "PriorityClass");
  EXPECT_EQ(pc["apiVersion"], "scheduling.k8s.io/v1");
  EXPECT_EQ(pc["preemptionPolicy"], "PreemptLowerPriority");
  EXPECT_TRUE(pc["metadata"]["uid"].is_string());
  MustCreate(kClasses, ClassJson("low", 10));
  Json l = MustGet(kClasses);
  EXPECT_EQ(l["kind"], "PriorityClassList");
  EXPECT_EQ(l["apiVersion"], "scheduling.k8s.io/v1");
  EXPECT_EQ(ItemNames(l), (Names{"high", "low"}));

  pc["description"] = "for the important things";
  Response u = Put(kClasses + "/high", pc);
  ASSERT_EQ(u.code, 200) << u.body;
  EXPECT_EQ(MustGet(kClasses + "/high")["description"], "for the important things");

  ASSERT_EQ(Delete(kClasses + "/high").code, 200);
  EXPECT_TRUE(IsStatus(Get(kClasses + "/high"), 404, "NotFound"));
  EXPECT_EQ(List(kClasses), (Names{"low"}));
}

TEST_F(ApiServerTest, GenerateNameMakesAUniqueNameWithThePrefix) {
  Json p = PodJson("");
  p["metadata"].erase("name");
  p["metadata"]["generateName"] = "worker-";
  Json a = MustCreate(kPods, p);
  Json b = MustCreate(kPods, p);
  const std::string an = a["metadata"]["name"], bn = b["metadata"]["name"];
  EXPECT_TRUE(an.starts_with("worker-")) << an;
  EXPECT_EQ(an.size(), std::string("worker-").size() + 5) << an;
  EXPECT_NE(an, bn);
  EXPECT_EQ(List(kPods).size(), 2u);
  EXPECT_EQ(MustGet(kPods + "/" + an)["metadata"]["generateName"], "worker-");
}

TEST_F(ApiServerTest, CreateWithoutNameOrGenerateNameIsInvalid) {
  Json p = PodJson("");
  p["metadata"].erase("name");
  EXPECT_TRUE(IsStatus(Post(kPods, p), 422, "Invalid"));
  EXPECT_TRUE(List(kPods).empty());
}

TEST_F(ApiServerTest, CreateInAMissingNamespaceIsNotFoundNamingTheNamespace) {
  const int64_t before = Revision();
  Response r = Post("/api/v1/namespaces/nowhere/pods", PodJson("web"));
  ASSERT_TRUE(IsStatus(r, 404, "NotFound"));
  EXPECT_NE(MessageOf(r).find("nowhere"), std::string::npos) << r.body;
  EXPECT_EQ(Parse(r)["details"]["kind"], "namespaces");
  EXPECT_EQ(Revision(), before);
  EXPECT_TRUE(List("/api/v1/pods").empty());
}

TEST_F(ApiServerTest, DuplicateCreateIsAlreadyExists) {
  CreatePod("web");
  const int64_t before = Revision();
  Response r = Post(kPods, PodJson("web"));
  ASSERT_TRUE(IsStatus(r, 409, "AlreadyExists"));
  EXPECT_NE(MessageOf(r).find("already exists"), std::string::npos);
  EXPECT_EQ(Revision(), before);
  MustCreate(kNodes, NodeJson("n1"));
  EXPECT_TRUE(IsStatus(Post(kNodes, NodeJson("n1")), 409, "AlreadyExists"));
}

TEST_F(ApiServerTest, ResourceVersionOnCreateIsInvalid) {
  Json p = PodJson("web");
  p["metadata"]["resourceVersion"] = "5";
  Response r = Post(kPods, p);
  ASSERT_TRUE(IsStatus(r, 422, "Invalid"));
  EXPECT_NE(MessageOf(r).find("metadata.resourceVersion"), std::string::npos) << r.body;
  EXPECT_TRUE(List(kPods).empty());
}

TEST_F(ApiServerTest, NonStringResourceVersionOnCreateIsABadRequestNotACrash) {
  Json p = PodJson("web");
  p["metadata"]["resourceVersion"] = 5;
  Response r = Post(kPods, p);
  EXPECT_TRUE(r.code == 400 || r.code == 422) << r.code << ": " << r.body;
  EXPECT_TRUE(IsStatus(r, r.code));
  EXPECT_TRUE(List(kPods).empty());
}

// ---------------------------------------------------------------------------------------------
// Updates: preconditions and the status subresource

TEST_F(ApiServerTest, UpdateWithAStaleResourceVersionIsAConflict) {
  Json p = CreatePod("web");
  Json first = p;
  first["metadata"]["labels"] = {{"v", "1"}};
  ASSERT_EQ(Put(kPods + "/web", first).code, 200);
  const int64_t before = Revision();
  Json stale = p;  // still carries the creation's resourceVersion
  stale["metadata"]["labels"] = {{"v", "2"}};
  Response r = Put(kPods + "/web", stale);
  ASSERT_TRUE(IsStatus(r, 409, "Conflict"));
  EXPECT_NE(MessageOf(r).find("the object has been modified"), std::string::npos) << r.body;
  EXPECT_EQ(Revision(), before);
  EXPECT_EQ(MustGet(kPods + "/web")["metadata"]["labels"]["v"], "1");
}

TEST_F(ApiServerTest, UpdateWithTheCurrentResourceVersionSucceeds) {
  CreatePod("web");
  Json current = MustGet(kPods + "/web");
  current["metadata"]["labels"] = {{"v", "2"}};
  EXPECT_EQ(Put(kPods + "/web", current).code, 200);
}

TEST_F(ApiServerTest, UnconditionalUpdateWithoutResourceVersionSucceeds) {
  Json p = CreatePod("web");
  Json first = p;
  first["metadata"]["labels"] = {{"v", "1"}};
  ASSERT_EQ(Put(kPods + "/web", first).code, 200);
  Json blind = p;
  blind["metadata"].erase("resourceVersion");
  blind["metadata"]["labels"] = {{"v", "2"}};
  Response r = Put(kPods + "/web", blind);
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(MustGet(kPods + "/web")["metadata"]["labels"]["v"], "2");
}

TEST_F(ApiServerTest, UpdateOfAMissingObjectIsNotFound) {
  EXPECT_TRUE(IsStatus(Put(kPods + "/web", PodJson("web")), 404, "NotFound"));
  EXPECT_TRUE(List(kPods).empty());
}

TEST_F(ApiServerTest, PutToStatusChangesOnlyTheStatus) {
  Json p = CreatePod("web");
  Json next = p;
  next["spec"]["containers"][0]["image"] = "evil:latest";
  next["metadata"]["labels"] = {{"sneaky", "yes"}};
  next["status"] = {{"phase", "Running"}, {"podIP", "10.1.2.3"}};
  Response r = Put(kPods + "/web/status", next);
  ASSERT_EQ(r.code, 200) << r.body;
  Json got = MustGet(kPods + "/web");
  EXPECT_EQ(got["status"]["phase"], "Running");
  EXPECT_EQ(got["status"]["podIP"], "10.1.2.3");
  EXPECT_EQ(got["spec"], p["spec"]);
  EXPECT_FALSE(got["metadata"].contains("labels"));
}

TEST_F(ApiServerTest, PutToTheMainResourceKeepsTheStoredStatus) {
  CreatePod("web");
  SetStatus("web", {{"phase", "Running"}, {"podIP", "10.1.2.3"}});
  Json p = MustGet(kPods + "/web");
  p["status"] = {{"phase", "Failed"}};
  p["metadata"]["labels"] = {{"app", "web"}};
  Response r = Put(kPods + "/web", p);
  ASSERT_EQ(r.code, 200) << r.body;
  Json got = MustGet(kPods + "/web");
  EXPECT_EQ(got["status"]["phase"], "Running");
  EXPECT_EQ(got["status"]["podIP"], "10.1.2.3");
  EXPECT_EQ(got["metadata"]["labels"]["app"], "web");
}

TEST_F(ApiServerTest, PutWithANameThatDiffersFromTheUrlIsABadRequest) {
  Json p = CreatePod("web");
  p["metadata"]["name"] = "other";
  EXPECT_TRUE(IsStatus(Put(kPods + "/web", p), 400, "BadRequest"));
  EXPECT_EQ(List(kPods), (Names{"web"}));
}

// ---------------------------------------------------------------------------------------------
// PATCH

TEST_F(ApiServerTest, MergePatchSetsAndRemovesLabels) {
  CreatePod("web", {{"app", "web"}, {"tier", "frontend"}});
  Response r = PatchAs(kPods + "/web", "application/merge-patch+json",
                       {{"metadata", {{"labels", {{"tier", nullptr}, {"team", "a"}}}}}});
  ASSERT_EQ(r.code, 200) << r.body;
  Json got = MustGet(kPods + "/web");
  EXPECT_EQ(got["metadata"]["labels"], (Json{{"app", "web"}, {"team", "a"}}));
  EXPECT_EQ(got["spec"]["containers"][0]["image"], "nginx:1.25");
}

TEST(PatchTest, MergePatchReplacesListsWhole) {
  Json p = PodJson("web");
  p["spec"]["containers"].push_back({{"name", "sidecar"}, {"image", "envoy:1"}});
  auto got = ApplyPatch(p, {{"spec", {{"containers", Json::array({{{"name", "app"}, {"image", "nginx:2"}}})}}}},
                        PatchType::kMerge);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ((*got)["spec"]["containers"].size(), 1u);
  EXPECT_FALSE((*got)["spec"]["containers"][0].contains("resources"));
}

TEST_F(ApiServerTest, JsonPatchAppliesOperations) {
  CreatePod("web", {{"app", "web"}});
  Json ops = Json::array({{{"op", "replace"}, {"path", "/metadata/labels/app"}, {"value", "api"}},
                          {{"op", "add"}, {"path", "/metadata/annotations"}, {"value", {{"note", "x"}}}},
                          {{"op", "replace"}, {"path", "/spec/containers/0/image"}, {"value", "nginx:2"}}});
  Response r = PatchAs(kPods + "/web", "application/json-patch+json", ops);
  ASSERT_EQ(r.code, 200) << r.body;
  Json got = MustGet(kPods + "/web");
  EXPECT_EQ(got["metadata"]["labels"]["app"], "api");
  EXPECT_EQ(got["metadata"]["annotations"]["note"], "x");
  EXPECT_EQ(got["spec"]["containers"][0]["image"], "nginx:2");
  EXPECT_EQ(got["metadata"]["generation"], 2);
}

TEST_F(ApiServerTest, JsonPatchThatCannotApplyIsInvalidAndChangesNothing) {
  CreatePod("web", {{"app", "web"}});
  const int64_t before = Revision();
  Json ops = Json::array({{{"op", "test"}, {"path", "/metadata/labels/app"}, {"value", "db"}},
                          {{"op", "replace"}, {"path", "/metadata/labels/app"}, {"value", "api"}}});
  EXPECT_TRUE(IsStatus(PatchAs(kPods + "/web", "application/json-patch+json", ops), 422, "Invalid"));
  Json remove_missing = Json::array({{{"op", "remove"}, {"path", "/metadata/nothing/here"}}});
  EXPECT_TRUE(IsStatus(PatchAs(kPods + "/web", "application/json-patch+json", remove_missing), 422, "Invalid"));
  EXPECT_EQ(Revision(), before);
  EXPECT_EQ(MustGet(kPods + "/web")["metadata"]["labels"]["app"], "web");
}

TEST_F(ApiServerTest, StrategicMergePatchMergesContainersByName) {
  Json p = PodJson("web");
  p["spec"]["containers"].push_back({{"name", "sidecar"}, {"image", "envoy:1"}});
  MustCreate(kPods, p);
  Json patch = {{"spec", {{"containers", Json::array({{{"name", "app"}, {"image", "nginx:2"}}})}}}};
  Response r = PatchAs(kPods + "/web", "application/strategic-merge-patch+json", patch);
  ASSERT_EQ(r.code, 200) << r.body;
  Json got = MustGet(kPods + "/web");
  ASSERT_EQ(got["spec"]["containers"].size(), 2u) << got["spec"].dump();
  EXPECT_EQ(got["spec"]["containers"][0]["name"], "app");
  EXPECT_EQ(got["spec"]["containers"][0]["image"], "nginx:2");
  EXPECT_EQ(got["spec"]["containers"][0]["resources"]["requests"]["cpu"], "100m");
  EXPECT_EQ(got["spec"]["containers"][0]["resources"]["requests"]["memory"], "64Mi");
  EXPECT_EQ(got["spec"]["containers"][1]["image"], "envoy:1");
}

TEST(PatchTest, StrategicMergePatchDeletesAContainerWithPatchDelete) {
  Json p = PodJson("web");
  p["spec"]["containers"].push_back({{"name", "sidecar"}, {"image", "envoy:1"}});
  Json patch = {{"spec", {{"containers", Json::array({{{"name", "sidecar"}, {"$patch", "delete"}}})}}}};
  auto got = ApplyPatch(p, patch, PatchType::kStrategic);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ((*got)["spec"]["containers"].size(), 1u);
  EXPECT_EQ((*got)["spec"]["containers"][0]["name"], "app");
}

// After creation a pod's spec changes only as upstream allows (ValidatePodUpdate): images,
// added tolerations, removed scheduling gates; never nodeName or resources.
TEST_F(ApiServerTest, APodsSpecChangesOnlyWhereUpstreamAllows) {
  Json p = PodJson("web");
  p["spec"]["containers"].push_back({{"name", "sidecar"}, {"image", "envoy:1"}});
  p["spec"]["schedulingGates"] = Json::array({{{"name", "a"}}, {{"name", "b"}}});
  MustCreate(kPods, p);
  const int64_t before = Revision();
  auto forbidden = [&](const Json& patch) {
    Response r = PatchAs(kPods + "/web", "application/strategic-merge-patch+json", patch);
    EXPECT_TRUE(IsStatus(r, 422, "Invalid")) << patch.dump();
    EXPECT_EQ(Parse(r)["details"]["causes"][0]["field"], "spec") << r.body;
    EXPECT_EQ(Parse(r)["details"]["causes"][0]["reason"], "FieldValueForbidden") << r.body;
  };
  forbidden({{"spec", {{"containers", Json::array({{{"name", "sidecar"}, {"$patch", "delete"}}})}}}});
  forbidden({{"spec", {{"nodeName", "n2"}}}});
  forbidden({{"spec", {{"containers", Json::array({{{"name", "app"}, {"resources", {{"requests", {{"cpu", "64"}}}}}}})}}}});
  // A new gate is refused by validateOnlyDeletedSchedulingGates, naming the gate's index.
  Response added = PatchAs(kPods + "/web", "application/strategic-merge-patch+json",
                           {{"spec", {{"schedulingGates", Json::array({{{"name", "a"}}, {{"name", "b"}}, {{"name", "c"}}})}}}});
  EXPECT_TRUE(IsStatus(added, 422, "Invalid")) << added.body;
  EXPECT_EQ(Parse(added)["message"],
            "Pod \"web\" is invalid: spec.schedulingGates[2].name: Forbidden: only deletion is allowed, but found new "
            "scheduling gate 'c'");
  EXPECT_EQ(Parse(added)["details"]["causes"][0]["field"], "spec.schedulingGates[2].name");
  EXPECT_EQ(Revision(), before);
  auto allowed = [&](const Json& patch) {
    Response r = PatchAs(kPods + "/web", "application/merge-patch+json", patch);
    EXPECT_EQ(r.code, 200) << patch.dump() << ": " << r.body;
  };
  Json images = MustGet(kPods + "/web")["spec"]["containers"];
  images[0]["image"] = "nginx:2";
  allowed({{"spec", {{"containers", images}}}});
  // A toleration added to those the pod has (DefaultTolerationSeconds gave it two).
  Json tolerations = MustGet(kPods + "/web")["spec"]["tolerations"];
  EXPECT_EQ(tolerations.size(), 2u);
  tolerations.push_back({{"key", "k"}, {"operator", "Exists"}});
  allowed({{"spec", {{"tolerations", tolerations}}}});
  allowed({{"spec", {{"schedulingGates", Json::array({{{"name", "b"}}})}}}});
  allowed({{"spec", {{"activeDeadlineSeconds", 600}}}});
  allowed({{"metadata", {{"labels", {{"tier", "1"}}}}}});
  const Json got = MustGet(kPods + "/web");
  EXPECT_EQ(got["spec"]["containers"][0]["image"], "nginx:2");
  EXPECT_EQ(got["spec"]["schedulingGates"], Json::array({{{"name", "b"}}}));
  // Raising the deadline again is not an allowed change.
  forbidden({{"spec", {{"activeDeadlineSeconds", 900}}}});
}

TEST_F(ApiServerTest, PatchWithAnUnsupportedContentTypeIsUnsupportedMediaType) {
  CreatePod("web");
  const int64_t before = Revision();
  EXPECT_TRUE(IsStatus(PatchAs(kPods + "/web", "application/json", {{"metadata", {{"labels", {{"a", "b"}}}}}}), 415,
                       "UnsupportedMediaType"));
  EXPECT_TRUE(IsStatus(PatchAs(kPods + "/web", "text/plain", {{"metadata", {{"labels", {{"a", "b"}}}}}}), 415,
                       "UnsupportedMediaType"));
  EXPECT_TRUE(IsStatus(Do("PATCH", kPods + "/web", "{}"), 415, "UnsupportedMediaType"));
  EXPECT_EQ(Revision(), before);
}

TEST_F(ApiServerTest, PatchOfAMissingObjectIsNotFound) {
  EXPECT_TRUE(IsStatus(PatchAs(kPods + "/nope", "application/merge-patch+json", Json::object()), 404, "NotFound"));
}

TEST_F(ApiServerTest, PatchWithAStaleResourceVersionIsAConflict) {
  Json p = CreatePod("web");
  ASSERT_EQ(PatchAs(kPods + "/web", "application/merge-patch+json", {{"metadata", {{"labels", {{"v", "1"}}}}}}).code,
            200);
  Response r = PatchAs(kPods + "/web", "application/merge-patch+json",
                       {{"metadata",
                         {{"resourceVersion", p["metadata"]["resourceVersion"]}, {"labels", {{"v", "2"}}}}}});
  EXPECT_TRUE(IsStatus(r, 409, "Conflict"));
  EXPECT_EQ(MustGet(kPods + "/web")["metadata"]["labels"]["v"], "1");
}

TEST_F(ApiServerTest, PatchOfTheMainResourceKeepsTheStatusAndPatchOfStatusKeepsTheSpec) {
  CreatePod("web");
  Response s = PatchAs(kPods + "/web/status", "application/merge-patch+json",
                       {{"status", {{"phase", "Running"}}}, {"spec", {{"nodeName", "n9"}}}});
  ASSERT_EQ(s.code, 200) << s.body;
  Json got = MustGet(kPods + "/web");
  EXPECT_EQ(got["status"]["phase"], "Running");
  EXPECT_FALSE(got["spec"].contains("nodeName"));
  Response m = PatchAs(kPods + "/web", "application/merge-patch+json", {{"status", {{"phase", "Failed"}}}});
  ASSERT_EQ(m.code, 200) << m.body;
  EXPECT_EQ(MustGet(kPods + "/web")["status"]["phase"], "Running");
}

// ---------------------------------------------------------------------------------------------
// Selectors

class SelectorTest : public ApiServerTest {
 protected:
  void SetUp() override {
    ApiServerTest::SetUp();
    CreatePod("a", {{"app", "web"}, {"tier", "frontend"}});
    CreatePod("b", {{"app", "web"}, {"tier", "backend"}});
    CreatePod("c", {{"app", "db"}});
    CreatePod("d");
    BindPod("a", "n1");
    SetStatus("c", {{"phase", "Running"}});
  }
  Names Labels(const std::string& selector) { return List(kPods, {{"labelSelector", selector}}); }
  Names Fields(const std::string& selector) { return List(kPods, {{"fieldSelector", selector}}); }
};

TEST_F(SelectorTest, EqualityLabelSelectors) {
  EXPECT_EQ(Labels("app=web"), (Names{"a", "b"}));
  EXPECT_EQ(Labels("app==db"), (Names{"c"}));
  EXPECT_EQ(Labels("app=web,tier=backend"), (Names{"b"}));
  EXPECT_EQ(Labels("app=none"), Names{});
}

TEST_F(SelectorTest, InequalityMatchesObjectsWithoutTheLabel) {
  EXPECT_EQ(Labels("app!=web"), (Names{"c", "d"}));
}

TEST_F(SelectorTest, SetBasedLabelSelectors) {
  EXPECT_EQ(Labels("app in (web,db)"), (Names{"a", "b", "c"}));
  EXPECT_EQ(Labels("app in (db)"), (Names{"c"}));
  EXPECT_EQ(Labels("app notin (web)"), (Names{"c", "d"}));
  EXPECT_EQ(Labels("tier notin (frontend, backend)"), (Names{"c", "d"}));
}

TEST_F(SelectorTest, ExistenceLabelSelectors) {
  EXPECT_EQ(Labels("tier"), (Names{"a", "b"}));
  EXPECT_EQ(Labels("!tier"), (Names{"c", "d"}));
  EXPECT_EQ(Labels("app,!tier"), (Names{"c"}));
}

TEST_F(SelectorTest, MalformedLabelSelectorIsABadRequest) {
  EXPECT_TRUE(IsStatus(Get(kPods, {{"labelSelector", "app in (web"}}), 400, "BadRequest"));
  EXPECT_TRUE(IsStatus(Get(kPods, {{"labelSelector", "app=web,,tier"}}), 400, "BadRequest"));
  EXPECT_TRUE(IsStatus(Get(kPods, {{"labelSelector", "bad key!=x y"}}), 400, "BadRequest"));
}

TEST_F(SelectorTest, FieldSelectorOnNodeName) {
  EXPECT_EQ(Fields("spec.nodeName=n1"), (Names{"a"}));
  EXPECT_EQ(Fields("spec.nodeName="), (Names{"b", "c", "d"}));
  EXPECT_EQ(Fields("spec.nodeName!="), (Names{"a"}));
}

TEST_F(SelectorTest, FieldSelectorOnPhase) {
  EXPECT_EQ(Fields("status.phase!=Running"), (Names{"a", "b", "d"}));
  EXPECT_EQ(Fields("status.phase=Running"), (Names{"c"}));
  EXPECT_EQ(Fields("status.phase==Pending"), (Names{"a", "b", "d"}));
}

TEST_F(SelectorTest, FieldSelectorOnName) {
  EXPECT_EQ(Fields("metadata.name=c"), (Names{"c"}));
  EXPECT_EQ(Fields("metadata.name!=c,metadata.namespace=default"), (Names{"a", "b", "d"}));
}

TEST_F(SelectorTest, LabelAndFieldSelectorsCombine) {
  EXPECT_EQ(List(kPods, {{"labelSelector", "app=web"}, {"fieldSelector", "spec.nodeName="}}), (Names{"b"}));
}

TEST_F(SelectorTest, UnsupportedFieldIsABadRequest) {
  Response r = Get(kPods, {{"fieldSelector", "spec.priority=5"}});
  ASSERT_TRUE(IsStatus(r, 400, "BadRequest"));
  EXPECT_NE(MessageOf(r).find("spec.priority"), std::string::npos) << r.body;
  EXPECT_TRUE(IsStatus(Get(kPods, {{"fieldSelector", "spec.nodeName"}}), 400, "BadRequest"));
  EXPECT_TRUE(IsStatus(Get(kNodes, {{"fieldSelector", "spec.nodeName=n1"}}), 400, "BadRequest"));
}

TEST_F(SelectorTest, NodeFieldSelectorTreatsAbsentUnschedulableAsFalse) {
  MustCreate(kNodes, NodeJson("n1"));
  Json cordoned = NodeJson("n2");
  cordoned["spec"] = {{"unschedulable", true}};
  MustCreate(kNodes, cordoned);
  EXPECT_EQ(List(kNodes, {{"fieldSelector", "spec.unschedulable=false"}}), (Names{"n1"}));
  EXPECT_EQ(List(kNodes, {{"fieldSelector", "spec.unschedulable=true"}}), (Names{"n2"}));
}

// ---------------------------------------------------------------------------------------------
// Scheduling gates as kube-apiserver handles them: the SchedulingGated condition at creation
// (which kubectl shows as the status), no nodeName beside gates, no binding while gated, and
// the scheduling directives a queue controller may narrow while the pod is gated.
TEST_F(ApiServerTest, AGatedPodIsMarkedSchedulingGatedAndCannotBeBoundUntilItsGatesGo) {
  Json p = PodJson("job-0");
  p["spec"]["schedulingGates"] = Json::array({{{"name", "example.com/quota"}}});
  Json created = MustCreate(kPods, p);
  ASSERT_EQ(created["status"]["conditions"].size(), 1u);
  const Json& c = created["status"]["conditions"][0];
  EXPECT_EQ(c["type"], "PodScheduled");
  EXPECT_EQ(c["status"], "False");
  EXPECT_EQ(c["reason"], "SchedulingGated");
  EXPECT_EQ(c["message"], "Scheduling is blocked due to non-empty scheduling gates");
  Response table = Get(kPods, {}, {{"accept", kTableAccept}});
  ASSERT_EQ(table.code, 200) << table.body;
  EXPECT_EQ(Parse(table)["rows"][0]["cells"][2], "SchedulingGated");

  Response bind = Post(kPods + "/job-0/binding", BindingJson("job-0", "n1"));
  EXPECT_EQ(bind.code, 409) << bind.body;
  EXPECT_EQ(Parse(bind)["message"],
            "Operation cannot be fulfilled on pods/binding \"job-0\": pod job-0 has non-empty .spec.schedulingGates");

  // While gated, nodeSelector entries may be added (none changed), and a required node
  // affinity set where there was none.
  Response narrowed = PatchAs(kPods + "/job-0", "application/merge-patch+json",
                              {{"spec", {{"nodeSelector", {{"pool", "batch"}}}}}});
  EXPECT_EQ(narrowed.code, 200) << narrowed.body;
  Response changed = PatchAs(kPods + "/job-0", "application/merge-patch+json",
                             {{"spec", {{"nodeSelector", {{"pool", "web"}}}}}});
  EXPECT_EQ(changed.code, 422) << changed.body;
  Json required = {{"nodeSelectorTerms", Json::array({{{"matchExpressions",
                                                        Json::array({{{"key", "zone"}, {"operator", "In"},
                                                                      {"values", Json::array({"a"})}}})}}})}};
  Response affinity = PatchAs(kPods + "/job-0", "application/merge-patch+json",
                              {{"spec", {{"affinity", {{"nodeAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution", required}}}}}}}});
  EXPECT_EQ(affinity.code, 200) << affinity.body;

  // The gate goes; the pod is bound, and its directives are fixed again.
  Response ungated = PatchAs(kPods + "/job-0", "application/merge-patch+json", {{"spec", {{"schedulingGates", nullptr}}}});
  ASSERT_EQ(ungated.code, 200) << ungated.body;
  Response later = PatchAs(kPods + "/job-0", "application/merge-patch+json",
                           {{"spec", {{"nodeSelector", {{"pool", "batch"}, {"disk", "ssd"}}}}}});
  EXPECT_EQ(later.code, 422) << later.body;
  BindPod("job-0", "n1");
  EXPECT_EQ(MustGet(kPods + "/job-0")["spec"]["nodeName"], "n1");
}

TEST_F(ApiServerTest, APodCreatedWithANodeNameAndGatesIsInvalid) {
  Json p = PodJson("pinned");
  p["spec"]["nodeName"] = "n1";
  p["spec"]["schedulingGates"] = Json::array({{{"name", "hold"}}});
  Response r = Post(kPods, p);
  EXPECT_TRUE(IsStatus(r, 422, "Invalid")) << r.body;
  EXPECT_EQ(Parse(r)["message"],
            "Pod \"pinned\" is invalid: spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared");
}

// Table output

TEST_F(ApiServerTest, PodTableHasKubectlColumnsWithWideOnesAtPriorityOne) {
  CreatePod("web");
  Response r = Get(kPods, {}, {{"accept", kTableAccept}});
  ASSERT_EQ(r.code, 200) << r.body;
  Json t = Parse(r);
  EXPECT_EQ(t["kind"], "Table");
  EXPECT_EQ(t["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(t["metadata"]["resourceVersion"], std::to_string(Revision()));
  Names names;
  std::vector<int> priorities;
  for (const Json& c : t["columnDefinitions"]) {
    names.push_back(c["name"].get<std::string>());
    priorities.push_back(c["priority"].get<int>());
  }
  EXPECT_EQ(names, (Names{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node",
                          "Readiness Gates"}));
  EXPECT_EQ(priorities, (std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(t["columnDefinitions"][0]["format"], "name");
  ASSERT_EQ(t["rows"].size(), 1u);
  EXPECT_EQ(t["rows"][0]["object"]["metadata"]["name"], "web");
}

TEST_F(ApiServerTest, PodTableCellsOfABoundRunningPodWithANominatedNode) {
  CreatePod("web");
  BindPod("web", "n1");
  Json status = MustGet(kPods + "/web")["status"];
  status["phase"] = "Running";
  status["podIP"] = "10.0.0.5";
  status["nominatedNodeName"] = "n2";
  status["containerStatuses"] = Json::array({{{"name", "app"}, {"ready", true}, {"restartCount", 2}}});
  SetStatus("web", status);
  clock_.Advance(3 * kMinute + 12 * kSecond);
  Json t = Parse(Get(kPods + "/web", {}, {{"accept", kTableAccept}}));
  ASSERT_EQ(t["kind"], "Table");
  ASSERT_EQ(t["rows"].size(), 1u);
  EXPECT_EQ(t["rows"][0]["cells"],
            Json::array({"web", "1/1", "Running", "2", "3m12s", "10.0.0.5", "n1", "n2", "<none>"}));
}

TEST_F(ApiServerTest, PodTableCellsOfAPendingPod) {
  CreatePod("web");
  clock_.Advance(45 * kSecond);
  Json t = Parse(Get(kPods, {}, {{"accept", kTableAccept}}));
  ASSERT_EQ(t["rows"].size(), 1u);
  EXPECT_EQ(t["rows"][0]["cells"],
            Json::array({"web", "0/1", "Pending", "0", "45s", "<none>", "<none>", "<none>", "<none>"}));
}

TEST_F(ApiServerTest, NodeTableShowsRolesAndAddressesAsKubectlWide) {
  ASSERT_EQ(Post("/api/v1/nodes", {{"apiVersion", "v1"},
                                   {"kind", "Node"},
                                   {"metadata", {{"name", "n9"}, {"labels", {{"node-role.kubernetes.io/worker", ""}}}}},
                                   {"status", {{"addresses", Json::array({{{"type", "Hostname"}, {"address", "n9"}},
                                                                          {{"type", "InternalIP"}, {"address", "10.0.0.9"}}})}}}})
                .code,
            201);
  Json t = Parse(Get("/api/v1/nodes/n9", {}, {{"accept", kTableAccept}}));
  ASSERT_EQ(t["rows"].size(), 1u);
  EXPECT_EQ(t["rows"][0]["cells"][2], "worker");
  EXPECT_EQ(t["rows"][0]["cells"][5], "10.0.0.9");
  EXPECT_EQ(t["rows"][0]["cells"][6], "<none>");
}

TEST_F(ApiServerTest, ServicesGetAClusterIpLowestFreeFirstThatNeverChanges) {
  const std::string path = "/api/v1/namespaces/default/services";
  auto service = [](const std::string& name, const std::string& ip = "") {
    Json s = {{"apiVersion", "v1"}, {"kind", "Service"}, {"metadata", {{"name", name}}},
              {"spec", {{"ports", Json::array({{{"port", 80}}})}}}};
    if (!ip.empty()) s["spec"]["clusterIP"] = ip;
    return s;
  };
  Json a = Parse(Post(path, service("a")));
  EXPECT_EQ(a["spec"]["clusterIP"], "10.96.0.2");
  EXPECT_EQ(a["spec"]["clusterIPs"], Json::array({"10.96.0.2"}));
  EXPECT_EQ(a["spec"]["type"], "ClusterIP");
  EXPECT_EQ(a["spec"]["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(a["spec"]["ports"][0]["targetPort"], 80);
  EXPECT_EQ(Parse(Post(path, service("b")))["spec"]["clusterIP"], "10.96.0.3");
  EXPECT_EQ(Parse(Post(path, service("headless", "None")))["spec"]["clusterIPs"], Json::array({"None"}));
  Response taken = Post(path, service("c", "10.96.0.2"));
  EXPECT_EQ(taken.code, 422);
  EXPECT_NE(taken.body.find("provided IP is already allocated"), std::string::npos) << taken.body;
  EXPECT_EQ(Post(path, service("d", "192.168.0.1")).code, 422);
  EXPECT_EQ(Parse(Post(path, service("e", "10.96.0.9")))["spec"]["clusterIP"], "10.96.0.9");
  // Immutable: an update without it keeps it; one changing it is refused.
  Json keep = service("a");
  keep["metadata"]["labels"] = {{"x", "y"}};
  EXPECT_EQ(Parse(Put(path + "/a", keep))["spec"]["clusterIP"], "10.96.0.2");
  EXPECT_EQ(Put(path + "/a", service("a", "10.96.0.7")).code, 422);
}

TEST_F(ApiServerTest, ServerSideApplyOwnsFieldsRefusesAnotherManagersChangeUnlessForcedAndRemovesWhatItDropped) {
  const std::string path = "/api/v1/namespaces/default/configmaps/cfg";
  auto apply = [&](const std::string& manager, const Json& data, bool force = false) {
    Json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cfg"}}}, {"data", data}};
    Strings q = {{"fieldManager", manager}};
    if (force) q["force"] = "true";
    return Do("PATCH", path, cm.dump(), q, {{"content-type", "application/apply-patch+yaml"}});
  };
  auto owners = [&]() {
    std::map<std::string, Json> out;
    const Json cm = MustGet(path);
    for (const Json& e : cm["metadata"]["managedFields"]) out[e["manager"].get<std::string>() + "/" + e["operation"].get<std::string>()] = e["fieldsV1"];
    return out;
  };
  ASSERT_EQ(apply("alice", {{"a", "1"}, {"b", "2"}}).code, 201);
  EXPECT_EQ(owners()["alice/Apply"], (Json{{"f:data", {{"f:a", Json::object()}, {"f:b", Json::object()}}}}));
  // Bob applies another value of a: a conflict naming alice and the field, nothing written.
  Response conflict = apply("bob", {{"a", "9"}});
  ASSERT_EQ(conflict.code, 409) << conflict.body;
  const Json status = Parse(conflict);
  EXPECT_EQ(status["reason"], "Conflict");
  // An Apply manager is named alone (upstream's printManager: "using V at T" is for Update managers).
  EXPECT_EQ(status["message"], "Apply failed with 1 conflict: conflict with \"alice\": .data.a");
  EXPECT_EQ(status["details"]["causes"][0]["reason"], "FieldManagerConflict");
  EXPECT_EQ(status["details"]["causes"][0]["field"], ".data.a");
  EXPECT_EQ(MustGet(path)["data"]["a"], "1");
  // The same value is shared, not a conflict; forced, a changes hands.
  EXPECT_EQ(apply("bob", {{"b", "2"}}).code, 200);
  EXPECT_EQ(apply("bob", {{"a", "9"}}, /*force=*/true).code, 200);
  EXPECT_EQ(MustGet(path)["data"]["a"], "9");
  EXPECT_EQ(owners()["alice/Apply"], (Json{{"f:data", {{"f:b", Json::object()}}}}));
  EXPECT_EQ(owners()["bob/Apply"], (Json{{"f:data", {{"f:a", Json::object()}}}}));
  // Alice stops applying b: bob no longer holds it either (his last apply was a alone), so it goes.
  EXPECT_EQ(apply("alice", {{"c", "3"}}).code, 200);
  EXPECT_EQ(MustGet(path)["data"], (Json{{"a", "9"}, {"c", "3"}}));
  // An ordinary update makes what it changed its manager's (by User-Agent without fieldManager).
  Json cm = MustGet(path);
  cm["data"]["c"] = "4";
  Response put = Do("PUT", path, cm.dump(), {}, {{"user-agent", "kubectl-edit/v1.32.0 (linux/amd64)"}});
  ASSERT_EQ(put.code, 200) << put.body;
  EXPECT_EQ(owners()["kubectl-edit/Update"], (Json{{"f:data", {{"f:c", Json::object()}}}}));
  EXPECT_EQ(owners().count("alice/Apply"), 0u);  // alice held c alone, and lost it to the edit
  // An apply without fieldManager is refused, as upstream.
  EXPECT_EQ(Do("PATCH", path, cm.dump(), {}, {{"content-type", "application/apply-patch+yaml"}}).code, 422);
}

TEST_F(ApiServerTest, ServerSideApplyNamesListElementsByTheirMergeKey) {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "web"}}},
              {"spec", {{"containers", Json::array({{{"name", "app"}, {"image", "app:1"}}})}}}};
  Response r = Do("PATCH", kPods + "/web", pod.dump(), {{"fieldManager", "deployer"}},
                  {{"content-type", "application/apply-patch+yaml"}});
  ASSERT_EQ(r.code, 201) << r.body;
  const Json fields = Parse(r)["metadata"]["managedFields"][0]["fieldsV1"];
  EXPECT_EQ(fields["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"],
            (Json{{".", Json::object()}, {"f:image", Json::object()}, {"f:name", Json::object()}}))
      << fields.dump();
  pod["spec"]["containers"][0]["image"] = "app:2";
  Response other = Do("PATCH", kPods + "/web", pod.dump(), {{"fieldManager", "someone"}},
                      {{"content-type", "application/apply-patch+yaml"}});
  EXPECT_EQ(other.code, 409);
  EXPECT_NE(other.body.find(".spec.containers[name=\\\"app\\\"].image"), std::string::npos) << other.body;
}

TEST_F(ApiServerTest, PodTableShowsTerminatingPods) {
  CreatePod("web");
  BindPod("web", "n1");
  ASSERT_EQ(Delete(kPods + "/web").code, 200);
  Json t = Parse(Get(kPods, {}, {{"accept", kTableAccept}}));
  ASSERT_EQ(t["rows"].size(), 1u);
  EXPECT_EQ(t["rows"][0]["cells"][2], "Terminating");
}

TEST_F(ApiServerTest, TableRowsFollowTheSelectors) {
  CreatePod("a", {{"app", "web"}});
  CreatePod("b", {{"app", "db"}});
  Json t = Parse(Get(kPods, {{"labelSelector", "app=db"}}, {{"accept", kTableAccept}}));
  ASSERT_EQ(t["rows"].size(), 1u);
  EXPECT_EQ(t["rows"][0]["cells"][0], "b");
}

TEST_F(ApiServerTest, WithoutAsTableTheAcceptHeaderGivesAList) {
  CreatePod("web");
  Json l = Parse(Get(kPods, {}, {{"accept", "application/json"}}));
  EXPECT_EQ(l["kind"], "PodList");
}

TEST_F(ApiServerTest, PriorityClassTableShowsValueAndGlobalDefault) {
  Json pc = ClassJson("high", 1000);
  pc["globalDefault"] = true;
  MustCreate(kClasses, pc);
  Json t = Parse(Get(kClasses, {}, {{"accept", kTableAccept}}));
  ASSERT_EQ(t["rows"].size(), 1u);
  EXPECT_EQ(t["rows"][0]["cells"], Json::array({"high", 1000, true, "0s", "PreemptLowerPriority"}));
}

TEST(HumanDurationTest, FormatsAsKubectlDoes) {
  EXPECT_EQ(HumanDuration(0), "0s");
  EXPECT_EQ(HumanDuration(45 * kSecond), "45s");
  EXPECT_EQ(HumanDuration(119 * kSecond), "119s");
  EXPECT_EQ(HumanDuration(2 * kMinute), "2m");
  EXPECT_EQ(HumanDuration(3 * kMinute + 12 * kSecond), "3m12s");
  EXPECT_EQ(HumanDuration(12 * kMinute), "12m");
  EXPECT_EQ(HumanDuration(12 * kMinute + 30 * kSecond), "12m");
  EXPECT_EQ(HumanDuration(179 * kMinute), "179m");
  EXPECT_EQ(HumanDuration(184 * kMinute), "3h4m");
  EXPECT_EQ(HumanDuration(5 * 60 * kMinute), "5h");
  EXPECT_EQ(HumanDuration(20 * 60 * kMinute), "20h");
  EXPECT_EQ(HumanDuration(51 * 60 * kMinute), "2d3h");
  EXPECT_EQ(HumanDuration(3 * 24 * 60 * kMinute), "3d");
  EXPECT_EQ(HumanDuration(45 * 24 * 60 * kMinute), "45d");
  EXPECT_EQ(HumanDuration((2 * 365 + 10) * 24 * 60 * kMinute), "2y10d");
  EXPECT_EQ(HumanDuration(9 * 365 * 24 * 60 * kMinute), "9y");
  EXPECT_EQ(HumanDuration(-kSecond), "0s");
  EXPECT_EQ(HumanDuration(-5 * kSecond), "<invalid>");
}

// ---------------------------------------------------------------------------------------------
// Watch

TEST_F(ApiServerTest, WatchReturnsAStreamInsteadOfABody) {
  Response r = Get(kPods, {{"watch", "true"}});
  ASSERT_EQ(r.code, 200) << r.body;
  ASSERT_NE(r.watch, nullptr);
  EXPECT_NE(r.watch->watch, nullptr);
  EXPECT_EQ(r.watch->resource, "pods");
  EXPECT_FALSE(r.watch->as_table);
}

TEST_F(ApiServerTest, WatchFromAListRevisionDeliversLaterEventsAsWatchLines) {
  CreatePod("before");
  const std::string rv = MustGet(kPods)["metadata"]["resourceVersion"];
  Response r = Get(kPods, {{"watch", "true"}, {"resourceVersion", rv}});
  ASSERT_EQ(r.code, 200) << r.body;
  ASSERT_NE(r.watch, nullptr);
  EXPECT_TRUE(r.watch->initial.empty());
  CreatePod("after");
  std::vector<store::Event> events = NextEvents(*r.watch, 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, store::EventType::kAdded);
  const std::string line = server_.WatchLine(*r.watch, events[0]);
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  Json j = Json::parse(line);
  EXPECT_EQ(j["type"], "ADDED");
  EXPECT_EQ(j["object"]["metadata"]["name"], "after");
  EXPECT_EQ(j["object"]["kind"], "Pod");
}

TEST_F(ApiServerTest, WatchDeliversModifiedAndDeletedEvents) {
  CreatePod("web");
  const std::string rv = MustGet(kPods)["metadata"]["resourceVersion"];
  Response r = Get(kPods, {{"watch", "1"}, {"resourceVersion", rv}});
  ASSERT_NE(r.watch, nullptr) << r.body;
  ASSERT_EQ(PatchAs(kPods + "/web", "application/merge-patch+json", {{"metadata", {{"labels", {{"a", "b"}}}}}}).code,
            200);
  ASSERT_EQ(Delete(kPods + "/web").code, 200);
  std::vector<store::Event> events = NextEvents(*r.watch, 2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(Json::parse(server_.WatchLine(*r.watch, events[0]))["type"], "MODIFIED");
  Json deleted = Json::parse(server_.WatchLine(*r.watch, events[1]));
  EXPECT_EQ(deleted["type"], "DELETED");
  EXPECT_EQ(deleted["object"]["metadata"]["name"], "web");
}

TEST_F(ApiServerTest, WatchWithoutResourceVersionStartsWithTheCurrentObjects) {
  CreatePod("a");
  CreatePod("b");
  Response r = Get(kPods, {{"watch", "true"}});
  ASSERT_NE(r.watch, nullptr) << r.body;
  ASSERT_EQ(r.watch->initial.size(), 2u);
  EXPECT_EQ(r.watch->initial[0]->name, "a");
  EXPECT_EQ(r.watch->initial[1]->name, "b");
  CreatePod("c");
  std::vector<store::Event> events = NextEvents(*r.watch, 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].object.name, "c");
}

TEST_F(ApiServerTest, WatchPathPrefixIsAWatch) {
  CreatePod("a");
  Response r = Get("/api/v1/watch/namespaces/default/pods");
  ASSERT_EQ(r.code, 200) << r.body;
  ASSERT_NE(r.watch, nullptr);
  EXPECT_EQ(r.watch->initial.size(), 1u);
}

TEST_F(ApiServerTest, WatchSelectorsFilterEventsAndTablesFormatRows) {
  Response r = Get(kPods, {{"watch", "true"}, {"labelSelector", "app=web"}}, {{"accept", kTableAccept}});
  ASSERT_NE(r.watch, nullptr) << r.body;
  EXPECT_TRUE(r.watch->as_table);
  CreatePod("db", {{"app", "db"}});
  CreatePod("web", {{"app", "web"}});
  std::vector<store::Event> events = NextEvents(*r.watch, 2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_FALSE(ApiServer::Selected(*r.watch, *events[0].object.body.tree()));
  EXPECT_TRUE(ApiServer::Selected(*r.watch, *events[1].object.body.tree()));
  Json line = Json::parse(server_.WatchLine(*r.watch, events[1]));
  EXPECT_EQ(line["type"], "ADDED");
  EXPECT_EQ(line["object"]["kind"], "Table");
  EXPECT_EQ(line["object"]["rows"][0]["cells"][0], "web");
}

TEST_F(ApiServerTest, WatchFromACompactedRevisionIsGone) {
  const std::string rv = MustGet(kPods)["metadata"]["resourceVersion"];
  CreatePod("a");
  CreatePod("b");
  ASSERT_TRUE(store_->Compact(Revision()).ok());
  Response r = Get(kPods, {{"watch", "true"}, {"resourceVersion", rv}});
  EXPECT_TRUE(IsStatus(r, 410, "Expired"));
  EXPECT_EQ(r.watch, nullptr);
  Response now = Get(kPods, {{"watch", "true"}, {"resourceVersion", std::to_string(Revision())}});
  EXPECT_EQ(now.code, 200) << now.body;
}

TEST_F(ApiServerTest, WatchWithAMalformedResourceVersionIsABadRequest) {
  EXPECT_TRUE(IsStatus(Get(kPods, {{"watch", "true"}, {"resourceVersion", "abc"}}), 400, "BadRequest"));
  EXPECT_TRUE(IsStatus(Get(kPods, {{"watch", "true"}, {"labelSelector", "a in (b"}}), 400, "BadRequest"));
}

// ---------------------------------------------------------------------------------------------
// Binding

TEST_F(ApiServerTest, BindingSetsNodeNameAndPodScheduled) {
  CreatePod("web");
  Response r = Post(kPods + "/web/binding", BindingJson("web", "n1"));
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_EQ(Parse(r)["status"], "Success");
  Json p = MustGet(kPods + "/web");
  EXPECT_EQ(p["spec"]["nodeName"], "n1");
  bool scheduled = false;
  for (const Json& c : p["status"]["conditions"]) {
    if (c["type"] == "PodScheduled") {
      scheduled = c["status"] == "True";
      EXPECT_EQ(c["lastTransitionTime"], FormatRfc3339(Start()));
    }
  }
  EXPECT_TRUE(scheduled) << p["status"].dump();
}

TEST_F(ApiServerTest, SecondBindingIsAConflict) {
  CreatePod("web");
  BindPod("web", "n1");
  const int64_t before = Revision();
  Response r = Post(kPods + "/web/binding", BindingJson("web", "n2"));
  ASSERT_TRUE(IsStatus(r, 409, "Conflict"));
  EXPECT_NE(MessageOf(r).find("n1"), std::string::npos) << r.body;
  EXPECT_EQ(Revision(), before);
  EXPECT_EQ(MustGet(kPods + "/web")["spec"]["nodeName"], "n1");
}

TEST_F(ApiServerTest, BindingAMissingPodIsNotFound) {
  EXPECT_TRUE(IsStatus(Post(kPods + "/nope/binding", BindingJson("nope", "n1")), 404, "NotFound"));
}

TEST_F(ApiServerTest, BindingWithoutATargetIsInvalid) {
  CreatePod("web");
  Json b = BindingJson("web", "n1");
  b.erase("target");
  EXPECT_TRUE(IsStatus(Post(kPods + "/web/binding", b), 422, "Invalid"));
  EXPECT_FALSE(MustGet(kPods + "/web")["spec"].contains("nodeName"));
}

TEST_F(ApiServerTest, BindingWithAMismatchedUidIsAConflict) {
  CreatePod("web");
  Json b = BindingJson("web", "n1");
  b["metadata"]["uid"] = "not-the-uid";
  EXPECT_TRUE(IsStatus(Post(kPods + "/web/binding", b), 409, "Conflict"));
  EXPECT_FALSE(MustGet(kPods + "/web")["spec"].contains("nodeName"));
}

// kube-apiserver 1.35 and later: a binding clears the nomination (ClearingNominatedNodeName-
// AfterBinding), carries its annotations and labels onto the pod, and PodTopologyLabels admission
// adds the node's zone and region labels to it.
TEST_F(ApiServerTest, BindingClearsTheNominationAndCarriesTheNodesTopologyLabelsAndItsOwnMetadata) {
  Json node = NodeJson("n1");
  node["metadata"]["labels"]["topology.kubernetes.io/zone"] = "z1";
  node["metadata"]["labels"]["topology.kubernetes.io/region"] = "r1";
  node["metadata"]["labels"]["rack"] = "7";  // not a topology label: not copied
  MustCreate("/api/v1/nodes", node);
  CreatePod("web");
  Json status = MustGet(kPods + "/web")["status"];
  status["nominatedNodeName"] = "n2";
  SetStatus("web", status);
  Json b = BindingJson("web", "n1");
  b["metadata"]["annotations"] = {{"note", "from the binding"}};
  b["metadata"]["labels"] = {{"team", "a"}};
  ASSERT_EQ(Post(kPods + "/web/binding", b).code, 201);
  Json p = MustGet(kPods + "/web");
  EXPECT_EQ(p["spec"]["nodeName"], "n1");
  EXPECT_FALSE(p["status"].contains("nominatedNodeName")) << p["status"].dump();
  EXPECT_EQ(p["metadata"]["annotations"]["note"], "from the binding");
  EXPECT_EQ(p["metadata"]["labels"]["team"], "a");
  EXPECT_EQ(p["metadata"]["labels"]["topology.kubernetes.io/zone"], "z1");
  EXPECT_EQ(p["metadata"]["labels"]["topology.kubernetes.io/region"], "r1");
  EXPECT_FALSE(p["metadata"]["labels"].contains("rack"));
}

TEST_F(ApiServerTest, APodCreatedOnANodeTakesTheNodesTopologyLabels) {
  Json node = NodeJson("n1");
  node["metadata"]["labels"]["topology.kubernetes.io/zone"] = "z1";
  MustCreate("/api/v1/nodes", node);
  Json pod = PodJson("direct", {{"app", "a"}});
  pod["spec"]["nodeName"] = "n1";
  Json created = MustCreate(kPods, pod);
  EXPECT_EQ(created["metadata"]["labels"], Json({{"app", "a"}, {"topology.kubernetes.io/zone", "z1"}}));
  // On a node that does not exist (yet): nothing to copy, and no refusal.
  pod = PodJson("elsewhere");
  pod["spec"]["nodeName"] = "n9";
  EXPECT_FALSE(MustCreate(kPods, pod)["metadata"].contains("labels"));
}

// A list item is the stored text less kind and apiVersion, cut without a parse: quotes and
// backslashes inside strings (escaped, in runs) must not end a value early.
TEST_F(ApiServerTest, AListItemIsTheObjectWhateverItsStringsEscape) {
  const std::vector<std::string> values = {"a\"b", "ends with a backslash \\", "\\\\\"", "{[,]}:\"", "\\\"\\"};
  Json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "tricky"}}}, {"data", Json::object()}};
  for (size_t i = 0; i < values.size(); ++i) cm["data"]["k" + std::to_string(i)] = values[i];
  MustCreate("/api/v1/namespaces/default/configmaps", cm);
  Json got = MustGet("/api/v1/namespaces/default/configmaps/tricky");
  Json list = MustGet("/api/v1/namespaces/default/configmaps");
  ASSERT_EQ(list["items"].size(), 1u);
  got.erase("kind");
  got.erase("apiVersion");
  EXPECT_EQ(list["items"][0], got);
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(list["items"][0]["data"]["k" + std::to_string(i)], values[i]);
}

TEST_F(ApiServerTest, BindingAPodBeingDeletedIsAConflictInUpstreamsWords) {
  Json pod = PodJson("web");
  pod["metadata"]["finalizers"] = {"example.com/hold"};
  MustCreate(kPods, pod);
  ASSERT_EQ(Delete(kPods + "/web").code, 200);
  Response r = Post(kPods + "/web/binding", BindingJson("web", "n1"));
  ASSERT_TRUE(IsStatus(r, 409, "Conflict")) << r.body;
  EXPECT_EQ(MessageOf(r), "Operation cannot be fulfilled on pods/binding \"web\": pod web is being deleted, cannot be "
                          "assigned to a host");
}

// BindingREST.Create: the binding names the URL's pod (400 otherwise), and targets a Node.
TEST_F(ApiServerTest, ABindingForAnotherPodOrToSomethingElseThanANodeIsRefused) {
  CreatePod("web");
  Json other = BindingJson("other", "n1");
  Response r = Post(kPods + "/web/binding", other);
  ASSERT_TRUE(IsStatus(r, 400, "BadRequest")) << r.body;
  EXPECT_EQ(MessageOf(r), "name in URL does not match name in Binding object");
  Json unnamed = BindingJson("web", "n1");
  unnamed["metadata"].erase("name");
  EXPECT_TRUE(IsStatus(Post(kPods + "/web/binding", unnamed), 400, "BadRequest"));
  Json to_a_pod = BindingJson("web", "n1");
  to_a_pod["target"]["kind"] = "Pod";
  r = Post(kPods + "/web/binding", to_a_pod);
  ASSERT_TRUE(IsStatus(r, 422, "Invalid")) << r.body;
  EXPECT_NE(MessageOf(r).find("target.kind: Unsupported value: \"Pod\""), std::string::npos) << r.body;
  EXPECT_FALSE(MustGet(kPods + "/web")["spec"].contains("nodeName"));
}

TEST_F(ApiServerTest, BindingWithANonStringTargetNameIsRejectedNotACrash) {
  CreatePod("web");
  Json b = BindingJson("web", "n1");
  b["target"]["name"] = 5;
  Response r = Post(kPods + "/web/binding", b);
  EXPECT_TRUE(r.code == 400 || r.code == 422) << r.code << ": " << r.body;
  EXPECT_FALSE(MustGet(kPods + "/web")["spec"].contains("nodeName"));
}

// ---------------------------------------------------------------------------------------------
// Graceful deletion

TEST_F(ApiServerTest, DeletingABoundPodMarksItTerminatingForItsGracePeriod) {
  Json p = PodJson("web");
  p["spec"]["terminationGracePeriodSeconds"] = 30;
  MustCreate(kPods, p);
  BindPod("web", "n1");
  clock_.Advance(10 * kSecond);
  Response r = Delete(kPods + "/web");
  ASSERT_EQ(r.code, 200) << r.body;
  const std::string want = FormatRfc3339(Start() + 40 * kSecond);
  EXPECT_EQ(Parse(r)["metadata"]["deletionTimestamp"], want);
  Json got = MustGet(kPods + "/web");
  EXPECT_EQ(got["metadata"]["deletionTimestamp"], want);
  EXPECT_EQ(got["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_EQ(List(kPods), (Names{"web"}));
}

TEST_F(ApiServerTest, DeletingATerminatingPodWithAShorterGraceBringsTheDeadlineForward) {
  CreatePod("web");
  BindPod("web", "n1");
  ASSERT_EQ(Delete(kPods + "/web").code, 200);
  ASSERT_EQ(Delete(kPods + "/web", {{"gracePeriodSeconds", "5"}}).code, 200);
  EXPECT_EQ(MustGet(kPods + "/web")["metadata"]["deletionTimestamp"], FormatRfc3339(Start() + 5 * kSecond));
  ASSERT_EQ(Delete(kPods + "/web", {{"gracePeriodSeconds", "20"}}).code, 200);
  EXPECT_EQ(MustGet(kPods + "/web")["metadata"]["deletionTimestamp"], FormatRfc3339(Start() + 5 * kSecond))
      << "a longer grace period never moves the deadline back";
}

TEST_F(ApiServerTest, DeletingAnUnboundPodIsImmediate) {
  Json p = PodJson("web");
  p["spec"]["terminationGracePeriodSeconds"] = 30;
  MustCreate(kPods, p);
  ASSERT_EQ(Delete(kPods + "/web").code, 200);
  EXPECT_TRUE(IsStatus(Get(kPods + "/web"), 404, "NotFound"));
}

TEST_F(ApiServerTest, GracePeriodZeroDeletesABoundPodAtOnce) {
  CreatePod("a");
  CreatePod("b");
  BindPod("a", "n1");
  BindPod("b", "n1");
  ASSERT_EQ(Delete(kPods + "/a", {{"gracePeriodSeconds", "0"}}).code, 200);
  EXPECT_TRUE(IsStatus(Get(kPods + "/a"), 404, "NotFound"));
  ASSERT_EQ(Delete(kPods + "/b", {}, R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})").code,
            200);
  EXPECT_TRUE(IsStatus(Get(kPods + "/b"), 404, "NotFound"));
}

TEST_F(ApiServerTest, MalformedGracePeriodIsABadRequestAndDeletesNothing) {
  CreatePod("web");
  BindPod("web", "n1");
  const int64_t before = Revision();
  EXPECT_TRUE(IsStatus(Delete(kPods + "/web", {{"gracePeriodSeconds", "soon"}}), 400, "BadRequest"));
  EXPECT_EQ(Revision(), before);
  Json got = MustGet(kPods + "/web");
  EXPECT_FALSE(got["metadata"].contains("deletionTimestamp"));
}

TEST_F(ApiServerTest, DeletingATerminalBoundPodIsImmediate) {
  CreatePod("web");
  BindPod("web", "n1");
  SetStatus("web", {{"phase", "Succeeded"}});
  ASSERT_EQ(Delete(kPods + "/web").code, 200);
  EXPECT_TRUE(IsStatus(Get(kPods + "/web"), 404, "NotFound"));
}

TEST_F(ApiServerTest, DeleteWithAStalePreconditionIsAConflict) {
  Json p = CreatePod("web");
  ASSERT_EQ(PatchAs(kPods + "/web", "application/merge-patch+json", {{"metadata", {{"labels", {{"v", "1"}}}}}}).code,
            200);
  Json opts = {{"preconditions", {{"resourceVersion", p["metadata"]["resourceVersion"]}}}};
  EXPECT_TRUE(IsStatus(Delete(kPods + "/web", {}, opts.dump()), 409, "Conflict"));
  EXPECT_EQ(List(kPods), (Names{"web"}));
}

// ---------------------------------------------------------------------------------------------
// Eviction

class EvictionTest : public ApiServerTest {
 protected:
  void SetUp() override {
    ApiServerTest::SetUp();
    RunningPod("web-1", {{"app", "web"}});
    RunningPod("web-2", {{"app", "web"}});
  }
  Response Evict(const std::string& pod) { return Post(kPods + "/" + pod + "/eviction", EvictionJson(pod)); }
};

TEST_F(EvictionTest, ABudgetWithNoDisruptionsLeftAnswersTooManyRequests) {
  MustCreate(kPdbs, PdbJson("web", {{"matchLabels", {{"app", "web"}}}}, 2));
  const int64_t before = Revision();
  Response r = Evict("web-1");
  ASSERT_TRUE(IsStatus(r, 429, "TooManyRequests"));
  EXPECT_NE(MessageOf(r).find("disruption budget"), std::string::npos) << r.body;
  EXPECT_EQ(Revision(), before);
  EXPECT_FALSE(MustGet(kPods + "/web-1")["metadata"].contains("deletionTimestamp"));
}

TEST_F(EvictionTest, WithoutABudgetABoundPodIsMarkedTerminating) {
  Response r = Evict("web-1");
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_EQ(Parse(r)["status"], "Success");
  Json p = MustGet(kPods + "/web-1");
  EXPECT_EQ(p["metadata"]["deletionTimestamp"], FormatRfc3339(Start() + 30 * kSecond));
}

TEST_F(EvictionTest, WithoutABudgetAnUnboundPodIsDeleted) {
  CreatePod("pending", {{"app", "web"}});
  ASSERT_EQ(Evict("pending").code, 201);
  EXPECT_TRUE(IsStatus(Get(kPods + "/pending"), 404, "NotFound"));
}

TEST_F(EvictionTest, ABudgetAllowsDisruptionsUntilItIsUsedUp) {
  MustCreate(kPdbs, PdbJson("web", {{"matchLabels", {{"app", "web"}}}}, 1));
  ASSERT_EQ(Evict("web-1").code, 201);
  EXPECT_TRUE(MustGet(kPods + "/web-1")["metadata"].contains("deletionTimestamp"));
  EXPECT_TRUE(IsStatus(Evict("web-2"), 429, "TooManyRequests"));
}

TEST_F(EvictionTest, ABudgetDoesNotProtectPodsItDoesNotSelect) {
  RunningPod("db-1", {{"app", "db"}});
  MustCreate(kPdbs, PdbJson("web", {{"matchLabels", {{"app", "web"}}}}, 2));
  EXPECT_EQ(Evict("db-1").code, 201);
}

TEST_F(EvictionTest, ABudgetWithMatchExpressionsSelectsOnlyMatchingPods) {
  RunningPod("db-1", {{"app", "db"}});
  Json selector = {{"matchExpressions", Json::array({{{"key", "app"}, {"operator", "In"}, {"values", {"web"}}}})}};
  MustCreate(kPdbs, PdbJson("web", selector, 2));
  // Two Running web pods and minAvailable 2: no web pod may go, the db pod is not covered.
  EXPECT_TRUE(IsStatus(Evict("web-1"), 429, "TooManyRequests"));
  EXPECT_EQ(Evict("db-1").code, 201);
}

TEST_F(EvictionTest, EvictingAMissingPodIsNotFound) {
  EXPECT_TRUE(IsStatus(Evict("nope"), 404, "NotFound"));
}

// ---------------------------------------------------------------------------------------------
// Admission: priority

TEST_F(ApiServerTest, PodNamingAPriorityClassGetsItsPriorityAndPreemptionPolicy) {
  Json pc = ClassJson("high", 1000);
  pc["preemptionPolicy"] = "Never";
  MustCreate(kClasses, pc);
  Json p = PodJson("web");
  p["spec"]["priorityClassName"] = "high";
  Json created = MustCreate(kPods, p);
  EXPECT_EQ(created["spec"]["priority"], 1000);
  EXPECT_EQ(created["spec"]["preemptionPolicy"], "Never");
  EXPECT_EQ(MustGet(kPods + "/web")["spec"]["priority"], 1000);
}

TEST_F(ApiServerTest, PodNamingAnUnknownPriorityClassIsForbidden) {
  Json p = PodJson("web");
  p["spec"]["priorityClassName"] = "nope";
  Response r = Post(kPods, p);
  ASSERT_TRUE(IsStatus(r, 403, "Forbidden"));
  EXPECT_NE(MessageOf(r).find("no PriorityClass with name"), std::string::npos) << r.body;
  EXPECT_TRUE(List(kPods).empty());
}

TEST_F(ApiServerTest, PodPriorityDisagreeingWithItsClassIsForbidden) {
  MustCreate(kClasses, ClassJson("high", 1000));
  Json p = PodJson("web");
  p["spec"]["priorityClassName"] = "high";
  p["spec"]["priority"] = 5;
  ASSERT_TRUE(IsStatus(Post(kPods, p), 403, "Forbidden"));
  EXPECT_TRUE(List(kPods).empty());
  p["spec"]["priority"] = 1000;
  EXPECT_EQ(Post(kPods, p).code, 201) << "a priority equal to the class's is accepted";
}

TEST_F(ApiServerTest, PodPreemptionPolicyDisagreeingWithItsClassIsForbidden) {
  Json pc = ClassJson("batch", 100);
  pc["preemptionPolicy"] = "Never";
  MustCreate(kClasses, pc);
  Json p = PodJson("web");
  p["spec"]["priorityClassName"] = "batch";
  p["spec"]["preemptionPolicy"] = "PreemptLowerPriority";
  Response r = Post(kPods, p);
  ASSERT_TRUE(IsStatus(r, 403, "Forbidden"));
  EXPECT_NE(MessageOf(r).find("PreemptionPolicy"), std::string::npos) << r.body;
  EXPECT_TRUE(List(kPods).empty());
  p["spec"]["preemptionPolicy"] = "Never";
  EXPECT_EQ(Post(kPods, p).code, 201) << "a policy equal to the class's is accepted";
}

TEST_F(ApiServerTest, GlobalDefaultClassAppliesToPodsWithoutAClass) {
  MustCreate(kClasses, ClassJson("other", 50));
  Json def = ClassJson("standard", 100);
  def["globalDefault"] = true;
  MustCreate(kClasses, def);
  Json created = CreatePod("web");
  EXPECT_EQ(created["spec"]["priority"], 100);
  EXPECT_EQ(created["spec"]["priorityClassName"], "standard");
  EXPECT_EQ(created["spec"]["preemptionPolicy"], "PreemptLowerPriority");
}

TEST_F(ApiServerTest, WithoutAnyClassAPodGetsPriorityZero) {
  Json created = CreatePod("web");
  EXPECT_EQ(created["spec"]["priority"], 0);
  EXPECT_FALSE(created["spec"].contains("priorityClassName"));
}

TEST_F(ApiServerTest, SystemCriticalClassesResolveWithoutBeingStored) {
  Json p = PodJson("dns");
  p["spec"]["priorityClassName"] = "system-cluster-critical";
  EXPECT_EQ(MustCreate(kPods, p)["spec"]["priority"], 2000000000);
  Json q = PodJson("proxy");
  q["spec"]["priorityClassName"] = "system-node-critical";
  EXPECT_EQ(MustCreate(kPods, q)["spec"]["priority"], 2000001000);
}

TEST_F(ApiServerTest, PodPriorityIsFixedAtCreation) {
  MustCreate(kClasses, ClassJson("high", 1000));
  Json p = PodJson("web");
  p["spec"]["priorityClassName"] = "high";
  MustCreate(kPods, p);
  ASSERT_EQ(Delete(kClasses + "/high").code, 200);
  EXPECT_EQ(MustGet(kPods + "/web")["spec"]["priority"], 1000);

  Json changed = MustGet(kPods + "/web");
  changed["spec"]["priority"] = 7;
  changed["spec"]["priorityClassName"] = "other";
  changed["metadata"]["labels"] = {{"touched", "yes"}};
  Response r = Put(kPods + "/web", changed);
  EXPECT_TRUE(r.code == 200 || (r.code >= 400 && r.code < 500)) << r.code << ": " << r.body;
  Json got = MustGet(kPods + "/web");
  EXPECT_EQ(got["spec"]["priority"], 1000);
  EXPECT_EQ(got["spec"]["priorityClassName"], "high");

  Response patched =
      PatchAs(kPods + "/web", "application/merge-patch+json",
              {{"spec", {{"priority", 9}, {"preemptionPolicy", "Never"}}}});
  EXPECT_TRUE(patched.code == 200 || (patched.code >= 400 && patched.code < 500)) << patched.body;
  got = MustGet(kPods + "/web");
  EXPECT_EQ(got["spec"]["priority"], 1000);
  EXPECT_EQ(got["spec"]["preemptionPolicy"], "PreemptLowerPriority");
}

TEST_F(ApiServerTest, PriorityClassValueAboveOneBillionIsInvalid) {
  Response r = Post(kClasses, ClassJson("huge", 1000000001));
  ASSERT_TRUE(IsStatus(r, 422, "Invalid"));
  EXPECT_NE(MessageOf(r).find("value"), std::string::npos);
  EXPECT_TRUE(List(kClasses).empty());
  EXPECT_EQ(Post(kClasses, ClassJson("max", 1000000000)).code, 201);
}

TEST_F(ApiServerTest, SecondGlobalDefaultClassIsForbidden) {
  Json a = ClassJson("a", 10);
  a["globalDefault"] = true;
  MustCreate(kClasses, a);
  Json b = ClassJson("b", 20);
  b["globalDefault"] = true;
  Response r = Post(kClasses, b);
  ASSERT_TRUE(IsStatus(r, 403, "Forbidden"));
  EXPECT_NE(MessageOf(r).find("globalDefault"), std::string::npos) << r.body;
  EXPECT_EQ(List(kClasses), (Names{"a"}));
  // Making an existing class the default is refused the same way.
  MustCreate(kClasses, ClassJson("c", 30));
  Json c = MustGet(kClasses + "/c");
  c["globalDefault"] = true;
  EXPECT_TRUE(IsStatus(Put(kClasses + "/c", c), 403, "Forbidden"));
  // Updating the default class itself is fine.
  Json again = MustGet(kClasses + "/a");
  again["description"] = "still the default";
  EXPECT_EQ(Put(kClasses + "/a", again).code, 200);
}

TEST_F(ApiServerTest, ListsAskedAgainServeEachVersionAsItIsNow) {
  // List items are encoded once per version and kept (encoding_cache.h): a list after a change
  // serves the new version, and one without changes the same bytes.
  CreatePod("a", {{"app", "web"}});
  CreatePod("b");
  const Response first = Get(kPods);
  EXPECT_EQ(Get(kPods).body, first.body);
  SetStatus("a", {{"phase", "Running"}});
  const Json again = Parse(Get(kPods));
  ASSERT_EQ(again["items"].size(), 2u);
  EXPECT_EQ(again["items"][0]["status"]["phase"], "Running");
  EXPECT_EQ(again["items"][0]["metadata"]["resourceVersion"], MustGet(kPods + "/a")["metadata"]["resourceVersion"]);
  EXPECT_FALSE(again["items"][1].contains("status") && again["items"][1]["status"].contains("phase") &&
               again["items"][1]["status"]["phase"] == "Running");
}

TEST_F(ApiServerTest, PriorityClassNamesWithTheSystemPrefixAreInvalid) {
  Response r = Post(kClasses, ClassJson("system-mine", 10));
  ASSERT_TRUE(IsStatus(r, 422, "Invalid"));
  // Upstream's words: the Forbidden field error and IsKnownSystemPriorityClass's reason.
  EXPECT_EQ(MessageOf(r),
            "PriorityClass.scheduling.k8s.io \"system-mine\" is invalid: metadata.name: Forbidden: priority class names "
            "with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority "
            "class");
  EXPECT_TRUE(List(kClasses).empty());
}

TEST_F(ApiServerTest, ABuiltInPriorityClassNameIsReservedForItsOwnValue) {
  Response r = Post(kClasses, ClassJson("system-cluster-critical", 5));
  ASSERT_TRUE(IsStatus(r, 422, "Invalid")) << r.body;
  EXPECT_NE(MessageOf(r).find("error: value of system-cluster-critical PriorityClass must be 2000000000"),
            std::string::npos)
      << r.body;
}

TEST_F(ApiServerTest, PriorityClassValueIsImmutable) {
  Json pc = MustCreate(kClasses, ClassJson("high", 1000));
  pc["value"] = 2000;
  Response r = Put(kClasses + "/high", pc);
  ASSERT_TRUE(IsStatus(r, 422, "Invalid"));
  EXPECT_NE(MessageOf(r).find("immutable"), std::string::npos) << r.body;
  EXPECT_EQ(MustGet(kClasses + "/high")["value"], 1000);
  EXPECT_TRUE(IsStatus(PatchAs(kClasses + "/high", "application/merge-patch+json", {{"value", 3}}), 422, "Invalid"));
  EXPECT_EQ(MustGet(kClasses + "/high")["value"], 1000);
}

TEST_F(ApiServerTest, PriorityClassWithAnUnsupportedPreemptionPolicyIsInvalid) {
  Json pc = ClassJson("high", 1000);
  pc["preemptionPolicy"] = "Sometimes";
  EXPECT_TRUE(IsStatus(Post(kClasses, pc), 422, "Invalid"));
  EXPECT_TRUE(List(kClasses).empty());
}

// ---------------------------------------------------------------------------------------------
// Admission: ResourceQuota

TEST_F(ApiServerTest, QuotaScopedToAPriorityClassLimitsOnlyThatClass) {
  MustCreate(kClasses, ClassJson("high", 1000));
  MustCreate(kClasses, ClassJson("low", 10));
  Json quota = {{"apiVersion", "v1"},
                {"kind", "ResourceQuota"},
                {"metadata", {{"name", "high-pods"}}},
                {"spec",
                 {{"hard", {{"pods", "1"}}},
                  {"scopeSelector",
                   {{"matchExpressions",
                     Json::array({{{"scopeName", "PriorityClass"}, {"operator", "In"}, {"values", {"high"}}}})}}}}}};
  MustCreate(kQuotas, quota);
  auto pod = [](const std::string& name, const std::string& cls) {
    Json p = PodJson(name);
    p["spec"]["priorityClassName"] = cls;
    return p;
  };
  ASSERT_EQ(Post(kPods, pod("high-1", "high")).code, 201);
  Response r = Post(kPods, pod("high-2", "high"));
  ASSERT_TRUE(IsStatus(r, 403, "Forbidden"));
  EXPECT_NE(MessageOf(r).find("exceeded quota"), std::string::npos) << r.body;
  EXPECT_NE(MessageOf(r).find("high-pods"), std::string::npos) << r.body;
  EXPECT_EQ(Post(kPods, pod("low-1", "low")).code, 201);
  EXPECT_EQ(Post(kPods, PodJson("none")).code, 201);
  EXPECT_EQ(List(kPods), (Names{"high-1", "low-1", "none"}));
}

TEST_F(ApiServerTest, APodGroupsPriorityIsDecidedByItsClassAndItsMembersMustShareIt) {
  const std::string groups = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups";
  const std::string classes = "/apis/scheduling.k8s.io/v1/priorityclasses";
  auto group = [](const std::string& name) {
    return Json{{"apiVersion", "scheduling.k8s.io/v1beta1"},
                {"kind", "PodGroup"},
                {"metadata", {{"name", name}}},
                {"spec", {{"workloadRef", {{"workloadName", "w"}, {"templateName", "t"}}},
                          {"schedulingPolicy", {{"basic", Json::object()}}}}}};
  };
  // A priority with no class that gives it is refused, as a pod's is.
  Json forged = group("forged");
  forged["spec"]["priority"] = 2000001000;
  Response refused = Post(groups, forged);
  ASSERT_TRUE(IsStatus(refused, 403, "Forbidden")) << refused.body;
  EXPECT_NE(MessageOf(refused).find("must not be provided in PodGroup spec"), std::string::npos) << refused.body;
  // The class decides, and an update cannot change it afterwards.
  MustCreate(classes, ClassJson("high", 1000));
  Json high = group("g");
  high["spec"]["priorityClassName"] = "high";
  MustCreate(groups, high);
  Json stored = MustGet(groups + "/g");
  EXPECT_EQ(stored["spec"]["priority"], 1000);
  EXPECT_EQ(stored["spec"]["preemptionPolicy"], "PreemptLowerPriority");
  stored["spec"]["priority"] = 2000001000;
  stored["spec"].erase("priorityClassName");
  ASSERT_EQ(Put(groups + "/g", stored).code, 200);
  EXPECT_EQ(MustGet(groups + "/g")["spec"]["priority"], 1000);
  // A member without the group's class is refused; with it, admitted.
  Json member = PodJson("m1");
  member["spec"]["schedulingGroup"] = {{"podGroupName", "g"}};
  Response orphan = Post(kPods, member);
  ASSERT_TRUE(IsStatus(orphan, 403, "Forbidden")) << orphan.body;
  EXPECT_NE(MessageOf(orphan).find("differs from its PodGroup \"g\""), std::string::npos) << orphan.body;
  member["spec"]["priorityClassName"] = "high";
  EXPECT_EQ(Post(kPods, member).code, 201);
}

TEST_F(ApiServerTest, MalformedListOptionsAreBadRequestsAndAFutureRevisionTimesOut) {
  EXPECT_TRUE(IsStatus(Get(kPods, {{"limit", "abc"}}), 400, "BadRequest"));
  EXPECT_TRUE(IsStatus(Get(kPods, {{"limit", "-1"}}), 400, "BadRequest"));
  EXPECT_EQ(Get(kPods, {{"limit", "500"}}).code, 200);
  EXPECT_TRUE(IsStatus(Get(kPods, {{"continue", "garbage"}}), 400, "BadRequest"));
  Response future = Get(kPods, {{"resourceVersion", "999999999"}});
  ASSERT_TRUE(IsStatus(future, 504, "Timeout")) << future.body;
  EXPECT_EQ(Parse(future)["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");
  EXPECT_EQ(Get(kPods, {{"resourceVersion", "0"}}).code, 200);
}

TEST_F(ApiServerTest, PagesOfAListCarryContinueTokensAndAreReadAtTheFirstPagesRevision) {
  for (const char* name : {"a", "b", "c", "d", "e"}) CreatePod(name);
  Json page1 = MustGet(kPods, {{"limit", "2"}});
  EXPECT_EQ(ItemNames(page1), (Names{"a", "b"}));
  const std::string token = page1["metadata"].value("continue", "");
  ASSERT_FALSE(token.empty()) << page1["metadata"].dump();
  EXPECT_EQ(page1["metadata"]["remainingItemCount"], 3);
  CreatePod("bb");  // after the first page: not in the later ones
  ASSERT_EQ(Delete(kPods + "/d").code, 200);
  Json page2 = MustGet(kPods, {{"limit", "2"}, {"continue", token}});
  EXPECT_EQ(ItemNames(page2), (Names{"c", "d"}));
  EXPECT_EQ(page2["metadata"]["resourceVersion"], page1["metadata"]["resourceVersion"]);
  Json page3 = MustGet(kPods, {{"limit", "2"}, {"continue", page2["metadata"].value("continue", "")}});
  EXPECT_EQ(ItemNames(page3), (Names{"e"}));
  EXPECT_FALSE(page3["metadata"].contains("continue"));
  EXPECT_FALSE(page3["metadata"].contains("remainingItemCount"));
  // A list of every namespace pages by namespace and name.
  Json all = MustGet("/api/v1/pods", {{"limit", "4"}});
  EXPECT_EQ(ItemNames(all), (Names{"a", "b", "bb", "c"}));
  EXPECT_EQ(ItemNames(MustGet("/api/v1/pods", {{"continue", all["metadata"].value("continue", "")}})), (Names{"e"}));
}

TEST_F(ApiServerTest, AContinueTokenOlderThanTheHistoryIsExpiredWithOneForTheLatestState) {
  for (const char* name : {"a", "b", "c"}) CreatePod(name);
  Json page1 = MustGet(kPods, {{"limit", "1"}});
  CreatePod("z");
  MustGet(kPods);  // the list's cache takes the write in now; ten minutes on, it is history
  clock_.Advance(10 * kMinute);
  Response expired = Get(kPods, {{"limit", "1"}, {"continue", page1["metadata"].value("continue", "")}});
  ASSERT_TRUE(IsStatus(expired, 410, "Expired")) << expired.body;
  EXPECT_NE(MessageOf(expired).find("too old to display a consistent list result"), std::string::npos);
  const std::string latest = Parse(expired)["metadata"].value("continue", "");
  ASSERT_FALSE(latest.empty()) << expired.body;
  EXPECT_EQ(ItemNames(MustGet(kPods, {{"continue", latest}})), (Names{"b", "c", "z"}));
  // The legacy exact read (a revision and a limit) of a revision no longer kept: Expired too.
  EXPECT_TRUE(IsStatus(Get(kPods, {{"limit", "1"}, {"resourceVersion", page1["metadata"]["resourceVersion"]}}), 410,
                       "Expired"));
}

TEST_F(ApiServerTest, ContinueTokensAndListOptionsAreCheckedAsUpstreamChecksThem) {
  CreatePod("a");
  auto token = [](const Json& t) { return base::Base64UrlEncode(t.dump()); };
  Response v2 = Get(kPods, {{"continue", token({{"v", "meta.k8s.io/v2"}, {"rv", 1}, {"start", "a"}})}});
  ASSERT_TRUE(IsStatus(v2, 400, "BadRequest")) << v2.body;
  EXPECT_NE(MessageOf(v2).find("server does not recognize this encoded version"), std::string::npos) << v2.body;
  Response no_rv = Get(kPods, {{"continue", token({{"v", "meta.k8s.io/v1"}, {"start", "a"}})}});
  EXPECT_NE(MessageOf(no_rv).find("incorrect encoded start resourceVersion"), std::string::npos) << no_rv.body;
  Response climbs = Get(kPods, {{"continue", token({{"v", "meta.k8s.io/v1"}, {"rv", 1}, {"start", "../kube-system/x"}})}});
  ASSERT_TRUE(IsStatus(climbs, 400, "BadRequest")) << climbs.body;
  Response match_alone = Get(kPods, {{"resourceVersionMatch", "Exact"}});
  ASSERT_TRUE(IsStatus(match_alone, 422, "Invalid")) << match_alone.body;
  EXPECT_NE(MessageOf(match_alone).find("resourceVersionMatch is forbidden unless resourceVersion is provided"), std::string::npos);
  EXPECT_TRUE(IsStatus(Get(kPods, {{"resourceVersionMatch", "Newest"}, {"resourceVersion", "1"}}), 422, "Invalid"));
  // Exact: the state at that revision (one a paged list read at); NotOlderThan: the latest.
  CreatePod("a2");
  const std::string before = MustGet(kPods, {{"limit", "1"}})["metadata"]["resourceVersion"];
  CreatePod("b");
  EXPECT_EQ(List(kPods, {{"resourceVersion", before}, {"resourceVersionMatch", "Exact"}}), (Names{"a", "a2"}));
  EXPECT_EQ(List(kPods, {{"resourceVersion", before}, {"resourceVersionMatch", "NotOlderThan"}}),
            (Names{"a", "a2", "b"}));
}

TEST_F(ApiServerTest, AFieldSelectedListOfUnboundPodsReadsTheNodeIndex) {
  for (int i = 0; i < 20; ++i) CreatePod("p" + std::to_string(i));
  for (int i = 0; i < 20; i += 2) BindPod("p" + std::to_string(i), "n1");
  EXPECT_EQ(List(kPods, {{"fieldSelector", "spec.nodeName="}}),
            (Names{"p1", "p11", "p13", "p15", "p17", "p19", "p3", "p5", "p7", "p9"}));
  EXPECT_EQ(List(kPods, {{"fieldSelector", "spec.nodeName=n1"}, {"limit", "3"}}), (Names{"p0", "p10", "p12"}));
  EXPECT_EQ(List(kPods, {{"fieldSelector", "spec.nodeName=n1,metadata.name=p2"}}), (Names{"p2"}));
  CreatePod("labelled", {{"app", "web"}});
  EXPECT_EQ(List(kPods, {{"labelSelector", "app=web"}}), (Names{"labelled"}));
  EXPECT_EQ(List(kPods, {{"labelSelector", "app in (web)"}}), (Names{"labelled"}));
}

TEST_F(ApiServerTest, AGetFromTheListCacheSeesEveryWriteAcknowledgedBeforeIt) {
  MustGet(kPods);  // the pods' list cache exists from now on; GETs read it
  CreatePod("fresh", {{"v", "1"}});
  EXPECT_EQ(MustGet(kPods + "/fresh")["metadata"]["labels"]["v"], "1");
  Json pod = MustGet(kPods + "/fresh");
  pod["metadata"]["labels"]["v"] = "2";
  ASSERT_EQ(Put(kPods + "/fresh", pod).code, 200);
  EXPECT_EQ(MustGet(kPods + "/fresh")["metadata"]["labels"]["v"], "2");
  ASSERT_EQ(Delete(kPods + "/fresh").code, 200);
  EXPECT_TRUE(IsStatus(Get(kPods + "/fresh"), 404, "NotFound"));
}

TEST_F(ApiServerTest, AListLongerThanAChunkIsWrittenItemByItemAndReadsWhole) {
  for (int i = 0; i < 700; ++i) {
    ASSERT_TRUE(store_->Create("configmaps", "default", "cm" + std::to_string(1000 + i),
                               {{"apiVersion", "v1"}, {"kind", "ConfigMap"},
                                {"metadata", {{"name", "cm" + std::to_string(1000 + i)}, {"namespace", "default"}}},
                                {"data", {{"k", std::string(600, 'x')}}}})
                    .ok());
  }
  Request r;
  r.method = "GET";
  r.path = "/api/v1/namespaces/default/configmaps";
  Response streamed = server_.Handle(r);
  ASSERT_EQ(streamed.code, 200);
  ASSERT_TRUE(streamed.stream);  // 700 items: more than are written at once
  EXPECT_TRUE(streamed.stream->keep_alive);
  std::string body = streamed.body;
  size_t chunks = 0;
  while (auto chunk = streamed.stream->next()) {
    EXPECT_LE(chunk->size(), size_t{300} << 10);
    body += *chunk;
    ++chunks;
  }
  EXPECT_GT(chunks, 1u);
  const Json list = Json::parse(body);
  EXPECT_EQ(list["kind"], "ConfigMapList");
  ASSERT_EQ(list["items"].size(), 700u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "cm1000");
  EXPECT_FALSE(list["items"][0].contains("kind"));
  // As a Table too.
  Json table = MustGet("/api/v1/namespaces/default/configmaps", {});
  Response rows = Get("/api/v1/namespaces/default/configmaps", {},
                      {{"accept", "application/json;as=Table;v=v1;g=meta.k8s.io"}});
  ASSERT_EQ(rows.code, 200);
  EXPECT_EQ(Parse(rows)["rows"].size(), 700u);
  EXPECT_EQ(Parse(rows)["kind"], "Table");
}

TEST_F(ApiServerTest, AtStartUpStoredGroupsAreAdmittedAgainAndRefusedNamesReported) {
  // Written before the rules held, straight into the store.
  const Json forged = {{"apiVersion", "scheduling.k8s.io/v1beta1"}, {"kind", "PodGroup"},
                       {"metadata", {{"name", "forged"}, {"namespace", "default"}}},
                       {"spec", {{"priority", 2000001000},
                                 {"workloadRef", {{"workloadName", "w"}, {"templateName", "t"}}},
                                 {"schedulingPolicy", {{"basic", Json::object()}}}}}};
  ASSERT_TRUE(store_->Create("podgroups", "default", "forged", forged).ok());
  ASSERT_TRUE(store_->Create("configmaps", "default", "Bad/../Name",
                             {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "Bad/../Name"}, {"namespace", "default"}}}})
                  .ok());
  auto report = AuditStoredObjects(*store_);
  ASSERT_TRUE(report.ok()) << report.status().message();
  std::string all;
  for (const std::string& line : *report) all += line + "\n";
  EXPECT_NE(all.find("PodGroup default/forged: priority decided again by its class (was 2000001000, now 0)"), std::string::npos)
      << all;
  EXPECT_NE(all.find("ConfigMap default/Bad/../Name: stored before the rule held: metadata.name: Invalid value"), std::string::npos)
      << all;
  EXPECT_EQ(store_->Get("podgroups", "default", "forged")->body.Copy()["spec"]["priority"], 0);
  EXPECT_TRUE(store_->Get("configmaps", "default", "Bad/../Name").ok());  // left as it is
  // ... and deletable under its stored name, escaped as clients escape a path segment.
  EXPECT_EQ(Do("GET", "/api/v1/namespaces/default/configmaps/Bad%2F..%2FName").code, 200);
  EXPECT_EQ(Do("DELETE", "/api/v1/namespaces/default/configmaps/Bad%2F..%2FName").code, 200);
  EXPECT_FALSE(store_->Get("configmaps", "default", "Bad/../Name").ok());
}

TEST_F(ApiServerTest, GroupHierarchyAdmissionRejectsCyclesAndDepthButNotAParentYetToCome) {
  const std::string composites = "/apis/scheduling.k8s.io/v1alpha3/namespaces/default/compositepodgroups";
  const std::string groups = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups";
  auto composite = [](const std::string& name, const std::string& parent) {
    Json c = {{"apiVersion", "scheduling.k8s.io/v1alpha3"},
              {"kind", "CompositePodGroup"},
              {"metadata", {{"name", name}}},
              {"spec",
               {{"workloadRef", {{"workloadName", "w"}, {"templateName", "t"}}},
                {"schedulingPolicy", {{"basic", Json::object()}}}}}};
    if (!parent.empty()) c["spec"]["parentCompositePodGroupName"] = parent;
    return c;
  };
  // A parent that does not exist yet is allowed: `kubectl apply -f DIR` creates in any order.
  MustCreate(composites, composite("a", "b"));
  Response cycle = Post(composites, composite("b", "a"));
  ASSERT_TRUE(IsStatus(cycle, 422, "Invalid")) << cycle.body;
  EXPECT_NE(MessageOf(cycle).find("spec.parentCompositePodGroupName: the parent links would form a cycle: "
                                  "default/b -> default/a -> default/b"),
            std::string::npos)
      << cycle.body;
  // A group naming itself, on update.
  MustCreate(composites, composite("b", ""));
  Json self = MustGet(composites + "/b");
  self["spec"]["parentCompositePodGroupName"] = "b";
  EXPECT_TRUE(IsStatus(Put(composites + "/b", self), 422, "Invalid"));
  // b <- a <- c <- d: four levels; a PodGroup under d would be the fifth.
  MustCreate(composites, composite("c", "a"));
  MustCreate(composites, composite("d", "c"));
  Json pg = {{"apiVersion", "scheduling.k8s.io/v1beta1"},
             {"kind", "PodGroup"},
             {"metadata", {{"name", "leaf"}}},
             {"spec",
              {{"workloadRef", {{"workloadName", "w"}, {"templateName", "leaf"}}},
               {"schedulingPolicy", {{"basic", Json::object()}}},
               {"parentCompositePodGroupName", "d"}}}};
  Response deep = Post(groups, pg);
  ASSERT_TRUE(IsStatus(deep, 422, "Invalid")) << deep.body;
  EXPECT_NE(MessageOf(deep).find("the hierarchy would have 5 levels, more than the 4 allowed: "
                                 "default/leaf -> default/d -> default/c -> default/a -> default/b"),
            std::string::npos)
      << deep.body;
  pg["spec"]["parentCompositePodGroupName"] = "c";
  EXPECT_EQ(Post(groups, pg).code, 201);
  // Nothing rejected was stored.
  EXPECT_EQ(List(composites), (Names{"a", "b", "c", "d"}));
  EXPECT_EQ(MustGet(composites + "/b")["spec"].count("parentCompositePodGroupName"), 0u);
}

TEST_F(ApiServerTest, QuotaCountsOnlyPodsThatAreNotFinished) {
  Json quota = {{"apiVersion", "v1"},
                {"kind", "ResourceQuota"},
                {"metadata", {{"name", "two"}}},
                {"spec", {{"hard", {{"pods", "1"}}}}}};
  MustCreate(kQuotas, quota);
  CreatePod("a");
  EXPECT_TRUE(IsStatus(Post(kPods, PodJson("b")), 403, "Forbidden"));
  SetStatus("a", {{"phase", "Succeeded"}});
  EXPECT_EQ(Post(kPods, PodJson("b")).code, 201);
}

TEST_F(ApiServerTest, MalformedResourceQuotaDoesNotBreakPodCreation) {
  Json quota = {{"apiVersion", "v1"}, {"kind", "ResourceQuota"}, {"metadata", {{"name", "bad"}}}, {"spec", "oops"}};
  Response q = Post(kQuotas, quota);
  if (q.code == 201) {
    EXPECT_EQ(Post(kPods, PodJson("web")).code, 201) << "a quota that limits nothing must not block pods";
  } else {
    EXPECT_TRUE(IsStatus(q, q.code));
    EXPECT_TRUE(q.code == 400 || q.code == 422) << q.body;
    EXPECT_EQ(Post(kPods, PodJson("web")).code, 201);
  }
}

// ---------------------------------------------------------------------------------------------
// Bad input changes nothing

class BadInputTest : public ApiServerTest {
 protected:
  void SetUp() override {
    ApiServerTest::SetUp();
    CreatePod("existing");
    MustCreate(kClasses, ClassJson("high", 1000));
    revision_ = Revision();
    pods_ = MustGet(kPods);
    classes_ = MustGet(kClasses);
  }
  void ExpectUnchanged() {
    EXPECT_EQ(Revision(), revision_);
    EXPECT_EQ(MustGet(kPods), pods_);
    EXPECT_EQ(MustGet(kClasses), classes_);
  }
  int64_t revision_ = 0;
  Json pods_, classes_;
};

TEST_F(BadInputTest, MalformedJsonIsABadRequest) {
  EXPECT_TRUE(IsStatus(Do("POST", kPods, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"})"), 400,
                       "BadRequest"));
  EXPECT_TRUE(IsStatus(Do("POST", kPods, ""), 400, "BadRequest"));
  EXPECT_TRUE(IsStatus(Do("PUT", kPods + "/existing", "{not json"), 400, "BadRequest"));
  EXPECT_TRUE(
      IsStatus(Do("PATCH", kPods + "/existing", "{", {}, {{"content-type", "application/merge-patch+json"}}), 400,
               "BadRequest"));
  ExpectUnchanged();
}

TEST_F(BadInputTest, ABodyThatIsAnArrayIsABadRequest) {
  EXPECT_TRUE(IsStatus(Post(kPods, Json::array({PodJson("x")})), 400, "BadRequest"));
  EXPECT_TRUE(IsStatus(Put(kPods + "/existing", Json::array()), 400, "BadRequest"));
  EXPECT_TRUE(IsStatus(Post(kPods, Json("a string")), 400, "BadRequest"));
  ExpectUnchanged();
}

// A value of the wrong JSON type cannot be decoded at all: 400 BadRequest, as kube-apiserver
// answers it ("cannot be handled as a Pod"), naming the field.
TEST_F(BadInputTest, ContainersAsAStringIsABadRequestNamingTheField) {
  Json p = PodJson("x");
  p["spec"]["containers"] = "nginx";
  Response r = Post(kPods, p);
  ASSERT_TRUE(IsStatus(r, 400, "BadRequest"));
  EXPECT_NE(MessageOf(r).find("spec.containers"), std::string::npos) << r.body;
  Json existing = pods_["items"][0];
  existing["spec"]["containers"] = "nginx";
  Response u = Put(kPods + "/existing", existing);
  ASSERT_TRUE(IsStatus(u, 400, "BadRequest"));
  EXPECT_NE(MessageOf(u).find("spec.containers"), std::string::npos) << u.body;
  ExpectUnchanged();
}

TEST_F(BadInputTest, PriorityClassValueAsAStringIsABadRequestNamingTheField) {
  Json pc = ClassJson("x", 0);
  pc["value"] = "abc";
  Response r = Post(kClasses, pc);
  ASSERT_TRUE(IsStatus(r, 400, "BadRequest"));
  EXPECT_NE(MessageOf(r).find("value"), std::string::npos) << r.body;
  ExpectUnchanged();
}

TEST_F(BadInputTest, OtherWrongTypesAreBadRequestsNamingTheField) {
  Json p = PodJson("x");
  p["spec"]["terminationGracePeriodSeconds"] = "thirty";
  Response r = Post(kPods, p);
  ASSERT_TRUE(IsStatus(r, 400, "BadRequest"));
  EXPECT_NE(MessageOf(r).find("spec.terminationGracePeriodSeconds"), std::string::npos) << r.body;
  Json q = PodJson("y");
  q["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots";
  Response s = Post(kPods, q);
  ASSERT_TRUE(IsStatus(s, 422, "Invalid"));  // a string, as a quantity is; not a valid quantity
  EXPECT_NE(MessageOf(s).find("spec.containers[0].resources.requests.cpu"), std::string::npos) << s.body;
  Json n = PodJson("z");
  n["metadata"]["labels"] = "app=web";
  EXPECT_TRUE(IsStatus(Post(kPods, n), 400, "BadRequest"));
  ExpectUnchanged();
}

TEST_F(BadInputTest, NumbersWhereStringsBelongAreBadRequestsNamingTheField) {
  Json p = PodJson("x");
  p["spec"]["nodeName"] = 5;
  Response r = Post(kPods, p);
  ASSERT_TRUE(IsStatus(r, 400, "BadRequest"));
  EXPECT_NE(MessageOf(r).find("spec.nodeName"), std::string::npos) << r.body;
  Json q = PodJson("y");
  q["spec"]["priorityClassName"] = 7;
  Response s = Post(kPods, q);
  ASSERT_TRUE(IsStatus(s, 400, "BadRequest"));
  EXPECT_NE(MessageOf(s).find("spec.priorityClassName"), std::string::npos) << s.body;
  ExpectUnchanged();
}

TEST_F(BadInputTest, BodyLargerThanTheLimitIsTooLarge) {
  ApiServer::Options options;
  options.max_body_bytes = 1024;
  ApiServer small(*store_, clock_, 1, options);
  InstallAdmission(small);
  Json p = PodJson("big");
  p["metadata"]["annotations"] = {{"filler", std::string(2000, 'x')}};
  Request req;
  req.method = "POST";
  req.path = kPods;
  req.body = p.dump();
  EXPECT_TRUE(IsStatus(Call(small, req), 413, "RequestEntityTooLarge"));
  req.method = "PUT";
  req.path = kPods + "/existing";
  EXPECT_TRUE(IsStatus(Call(small, req), 413, "RequestEntityTooLarge"));
  // The default limit is kube-apiserver's 3 MiB.
  p["metadata"]["annotations"]["filler"] = std::string(3 * 1024 * 1024, 'x');
  EXPECT_TRUE(IsStatus(Post(kPods, p), 413, "RequestEntityTooLarge"));
  ExpectUnchanged();
}

TEST_F(BadInputTest, UnknownResourcePathsAreNotFound) {
  EXPECT_TRUE(IsStatus(Get("/api/v1/widgets"), 404, "NotFound"));
  EXPECT_TRUE(IsStatus(Post("/api/v1/namespaces/default/widgets", PodJson("x")), 404, "NotFound"));
  EXPECT_TRUE(IsStatus(Post("/apis/example.com/v1/namespaces/default/pods", PodJson("x")), 404, "NotFound"));
  EXPECT_TRUE(IsStatus(Get("/nothing/here"), 404, "NotFound"));
  EXPECT_TRUE(IsStatus(Get(kPods + "/existing/logs"), 404, "NotFound"));
  EXPECT_TRUE(IsStatus(Post(kPods + "/existing/status/extra", Json::object()), 404, "NotFound"));
  EXPECT_TRUE(IsStatus(Get("/api/v1/pods/existing"), 404, "NotFound"));
  ExpectUnchanged();
}

TEST_F(BadInputTest, KindOrApiVersionNotMatchingTheUrlIsABadRequest) {
  Json wrong_kind = PodJson("x");
  wrong_kind["kind"] = "Node";
  EXPECT_TRUE(IsStatus(Post(kPods, wrong_kind), 400, "BadRequest"));
  Json wrong_version = PodJson("x");
  wrong_version["apiVersion"] = "apps/v1";
  EXPECT_TRUE(IsStatus(Post(kPods, wrong_version), 400, "BadRequest"));
  Json class_as_v1 = ClassJson("x", 1);
  class_as_v1["apiVersion"] = "v1";
  EXPECT_TRUE(IsStatus(Post(kClasses, class_as_v1), 400, "BadRequest"));
  Json existing = pods_["items"][0];
  existing["kind"] = "Namespace";
  EXPECT_TRUE(IsStatus(Put(kPods + "/existing", existing), 400, "BadRequest"));
  ExpectUnchanged();
}

TEST_F(BadInputTest, NamespaceInTheBodyNotMatchingTheUrlIsABadRequest) {
  Json p = PodJson("x");
  p["metadata"]["namespace"] = "elsewhere";
  EXPECT_TRUE(IsStatus(Post(kPods, p), 400, "BadRequest"));
  ExpectUnchanged();
}

TEST_F(BadInputTest, MethodsWithoutAnOperationAreNotAllowed) {
  EXPECT_TRUE(IsStatus(Delete(kPods), 405, "MethodNotAllowed"));
  EXPECT_TRUE(IsStatus(Do("PUT", kPods, PodJson("x").dump()), 405, "MethodNotAllowed"));
  EXPECT_TRUE(IsStatus(Post("/api/v1/pods", PodJson("x")), 405, "MethodNotAllowed"));
  EXPECT_TRUE(IsStatus(Post(kPods + "/existing", PodJson("existing")), 405, "MethodNotAllowed"));
  ExpectUnchanged();
}

TEST_F(BadInputTest, NonStringDeletePreconditionIsRejectedNotACrash) {
  Response r = Delete(kPods + "/existing", {}, R"({"preconditions":{"resourceVersion":5}})");
  EXPECT_TRUE(r.code == 400 || r.code == 422) << r.code << ": " << r.body;
  ExpectUnchanged();
}

TEST_F(BadInputTest, NonIntegerEvictionGracePeriodIsRejectedNotACrash) {
  Json e = EvictionJson("existing");
  e["deleteOptions"] = {{"gracePeriodSeconds", "soon"}};
  Response r = Post(kPods + "/existing/eviction", e);
  EXPECT_TRUE(r.code == 400 || r.code == 422) << r.code << ": " << r.body;
  ExpectUnchanged();
}

// ---------------------------------------------------------------------------------------------
// Every error is a Status

TEST_F(ApiServerTest, EveryErrorBodyIsAStatusWithTheHttpCode) {
  CreatePod("web");
  BindPod("web", "n1");
  MustCreate(kClasses, ClassJson("high", 1));
  Json stale = MustGet(kPods + "/web");
  stale["metadata"]["resourceVersion"] = "1";
  struct Case {
    const char* what;
    Response response;
    int code;
  };
  const std::vector<Case> cases = {
      {"missing object", Get(kPods + "/nope"), 404},
      {"unknown group", Get("/apis/nope.io/v1"), 404},
      {"bad selector", Get(kPods, {{"labelSelector", "a in (b"}}), 400},
      {"malformed body", Do("POST", kPods, "{"), 400},
      {"kind mismatch", Post(kPods, ClassJson("x", 1)), 400},
      {"duplicate", Post(kPods, PodJson("web")), 409},
      {"stale update", Put(kPods + "/web", stale), 409},
      {"second binding", Post(kPods + "/web/binding", BindingJson("web", "n2")), 409},
      {"unknown class", Post(kPods, [] {
         Json p = PodJson("x");
         p["spec"]["priorityClassName"] = "nope";
         return p;
       }()),
       403},
      {"immutable value", PatchAs(kClasses + "/high", "application/merge-patch+json", {{"value", 2}}), 422},
      {"bad patch type", PatchAs(kPods + "/web", "application/xml", Json::object()), 415},
      {"not allowed", Delete(kPods), 405},
      {"too old", [&] {
         CreatePod("filler");
         EXPECT_TRUE(store_->Compact(Revision()).ok());
         return Get(kPods, {{"watch", "true"}, {"resourceVersion", "1"}});
       }(),
       410},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_TRUE(IsStatus(c.response, c.code));
  }
}

TEST(StatusToHttpTest, MapsEveryStatusCode) {
  EXPECT_EQ(StatusToHttp(Status::Ok()), 200);
  EXPECT_EQ(StatusToHttp(InvalidArgument("x")), 422);
  EXPECT_EQ(StatusToHttp(NotFound("x")), 404);
  EXPECT_EQ(StatusToHttp(AlreadyExists("x")), 409);
  EXPECT_EQ(StatusToHttp(Conflict("x")), 409);
  EXPECT_EQ(StatusToHttp(Gone("x")), 410);
  EXPECT_EQ(StatusToHttp(FailedPrecondition("x")), 403);
  EXPECT_EQ(StatusToHttp(OutOfRange("x")), 400);
  EXPECT_EQ(StatusToHttp(Unavailable("x")), 503);
  EXPECT_EQ(StatusToHttp(Internal("x")), 500);
}

// Every object of the shipped examples is accepted by `fieldValidation=Strict`: the schema knows
// every field a valid manifest of a served kind carries.
TEST_F(ApiServerTest, EveryShippedExampleValidatesStrictly) {
  int created = 0;
  for (const char* dir : {"examples/basic", "examples/gang", "examples/node-pressure", "examples/serve"}) {
    std::vector<std::filesystem::path> files;
    // The source tree as tests/testing/paths.h finds it (that header's namespace would hide
    // GoogleTest's here).
    const char* env = std::getenv("ARBITER_SOURCE_DIR");
    const std::string source = env != nullptr && *env != '\0' ? env : ARBITER_SOURCE_DIR_DEFAULT;
    for (const auto& e : std::filesystem::directory_iterator(source + "/" + dir)) {
      if (e.path().extension() == ".yaml") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    ASSERT_FALSE(files.empty()) << dir;
    for (const auto& file : files) {
      for (const YAML::Node& doc : YAML::LoadAllFromFile(file.string())) {
        if (!doc.IsMap()) continue;
        const ResourceInfo* info = FindKind(doc["apiVersion"].as<std::string>(""), doc["kind"].as<std::string>(""));
        if (info == nullptr) continue;  // a kind `plan` reads but the server does not serve
        std::string path = info->group.empty() ? "/api/" : "/apis/" + std::string(info->group) + "/";
        const std::string ns = doc["metadata"]["namespace"].as<std::string>("default");
        if (info->namespaced) Post(kNamespaces, NamespaceJson(ns));  // 409 when it exists
        path += std::string(info->version) + (info->namespaced ? "/namespaces/" + ns + "/" : "/") +
                std::string(info->resource);
        YAML::Emitter out;
        out << doc;
        Response r = Do("POST", path, out.c_str(), {{"fieldValidation", "Strict"}}, {{"content-type", "application/yaml"}});
        // AlreadyExists: a name another example used, after validation passed.
        EXPECT_TRUE(r.code == 201 || (r.code == 409 && r.body.find("AlreadyExists") != std::string::npos))
            << file << ": " << info->kind << ": " << r.body;
        EXPECT_TRUE(r.warnings.empty()) << file;
        ++created;
      }
    }
  }
  EXPECT_GT(created, 10);
}

TEST_F(ApiServerTest, ProtobufBodiesAreReadAndAnswersFollowAccept) {
  const Json ns = NamespaceJson("proto");
  auto bytes = EncodeProtobufObject(ns);
  ASSERT_TRUE(bytes.ok());
  Response r = Do("POST", kNamespaces, *bytes, {},
                  {{"content-type", "application/vnd.kubernetes.protobuf"},
                   {"accept", "application/vnd.kubernetes.protobuf, */*"}});
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_EQ(r.content_type, "application/vnd.kubernetes.protobuf");
  auto back = DecodeProtobufObject(r.body);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ((*back)["metadata"]["name"], "proto");
  EXPECT_FALSE((*back)["metadata"]["uid"].get<std::string>().empty());
  // Errors are Status messages in protobuf too; JSON clients get JSON.
  Response missing = Do("GET", kNamespaces + "/absent", "", {}, {{"accept", "application/vnd.kubernetes.protobuf"}});
  EXPECT_EQ(missing.code, 404);
  auto status = DecodeProtobufObject(missing.body);
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_EQ((*status)["reason"], "NotFound");
  EXPECT_EQ(MustGet(kNamespaces + "/proto")["metadata"]["name"], "proto");
  // A protobuf body that is not an object is a 400 naming the problem; nothing is stored.
  EXPECT_TRUE(IsStatus(Do("POST", kNamespaces, "garbage", {}, {{"content-type", "application/vnd.kubernetes.protobuf"}}), 400,
                       "BadRequest"));
}

TEST_F(ApiServerTest, UnknownFieldsWarnByDefaultFailStrictAndAreNeverStored) {
  Json pod = PodJson("typo");
  pod["spec"]["containers"][0]["imagee"] = "x";
  Response strict = Do("POST", kPods, pod.dump(), {{"fieldValidation", "Strict"}});
  EXPECT_TRUE(IsStatus(strict, 400, "BadRequest"));
  EXPECT_NE(MessageOf(strict).find("unknown field \"spec.containers[0].imagee\""), std::string::npos) << strict.body;
  Response warn = Post(kPods, pod);
  ASSERT_EQ(warn.code, 201) << warn.body;
  EXPECT_EQ(warn.warnings, std::vector<std::string>{"unknown field \"spec.containers[0].imagee\""});
  EXPECT_FALSE(MustGet(kPods + "/typo")["spec"]["containers"][0].contains("imagee"));
  EXPECT_TRUE(IsStatus(Do("POST", kPods, PodJson("x").dump(), {{"fieldValidation", "Loose"}}), 422, "Invalid"));
  Json wrong = PodJson("wrong");
  wrong["spec"]["priority"] = "high";
  Response typed = Post(kPods, wrong);
  EXPECT_TRUE(IsStatus(typed, 400, "BadRequest"));
  EXPECT_NE(MessageOf(typed).find("spec.priority"), std::string::npos) << typed.body;
}

TEST_F(ApiServerTest, AnInvalidPodIsAnsweredWithItsKindAndOneCausePerField) {
  Json pod = PodJson("bad");
  pod["spec"]["containers"][0].erase("image");
  Response r = Post(kPods, pod);
  ASSERT_TRUE(IsStatus(r, 422, "Invalid"));
  const Json b = Parse(r);
  EXPECT_EQ(b["details"]["kind"], "Pod");
  EXPECT_EQ(b["details"]["name"], "bad");
  ASSERT_EQ(b["details"]["causes"].size(), 1u);
  EXPECT_EQ(b["details"]["causes"][0]["field"], "spec.containers[0].image");
  EXPECT_EQ(b["details"]["causes"][0]["reason"], "FieldValueRequired");
  // Admission's own rejections carry their causes too.
  Response pc = Post(kClasses, ClassJson("huge", 2'000'000'000));
  ASSERT_TRUE(IsStatus(pc, 422, "Invalid"));
  EXPECT_EQ(Parse(pc)["details"]["kind"], "PriorityClass");
  EXPECT_EQ(Parse(pc)["details"]["causes"][0]["field"], "value");
}

TEST_F(ApiServerTest, ReviewsAnswerWhatTheCallerMayDoAndWhoItIs) {
  ASSERT_TRUE(EnsureBootstrapObjects(server_).ok());
  Authorizer authorizer(*store_);
  server_.SetAuthorizer(&authorizer);
  const std::string ssar = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
  const Json review = {{"apiVersion", "authorization.k8s.io/v1"},
                       {"kind", "SelfSubjectAccessReview"},
                       {"spec", {{"resourceAttributes", {{"verb", "create"}, {"resource", "pods"}, {"namespace", "team"}}}}}};
  Response open = Post(ssar, review);
  ASSERT_EQ(open.code, 201) << open.body;
  EXPECT_EQ(Parse(open)["status"]["allowed"], true);
  Request alice;
  alice.method = "POST";
  alice.path = ssar;
  alice.body = review.dump();
  alice.user = "alice";
  alice.groups = {"namespace:other", "system:authenticated"};
  alice.authenticated = true;
  Response denied = Call(server_, alice);
  ASSERT_EQ(denied.code, 201) << denied.body;
  EXPECT_EQ(Parse(denied)["status"]["allowed"], false);
  alice.path = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
  alice.body = Json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}}.dump();
  Response who = Call(server_, alice);
  ASSERT_EQ(who.code, 201) << who.body;
  EXPECT_EQ(Parse(who)["status"]["userInfo"]["username"], "alice");
  EXPECT_TRUE(IsStatus(Get(ssar), 405));
}

TEST_F(ApiServerTest, TheBootstrapObjectsIncludeTheBuiltInPriorityClasses) {
  ASSERT_TRUE(EnsureBootstrapObjects(server_).ok());
  const int64_t revision = Revision();
  ASSERT_TRUE(EnsureBootstrapObjects(server_).ok());  // again: nothing changes
  EXPECT_EQ(Revision(), revision);
  EXPECT_EQ(List(kClasses), (Names{"system-cluster-critical", "system-node-critical"}));
  EXPECT_EQ(MustGet(kClasses + "/system-node-critical")["value"], 2000001000);
  EXPECT_FALSE(MustGet(kClasses + "/system-node-critical")["metadata"]["uid"].get<std::string>().empty());
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    EXPECT_EQ(MustGet(kNamespaces + "/" + ns)["status"]["phase"], "Active");
  }
}

// ---- Hostile input: each case a regression test for a defect a campaign against `serve` found.

TEST_F(BadInputTest, YamlAliasesAreRefusedBeforeTheyExpand) {
  // 9 levels of 9 references: a few hundred bytes that would expand to 9^9 strings.
  std::string bomb = "apiVersion: v1\nkind: Pod\nmetadata: {name: bomb}\na0: &a0 [x,x,x,x,x,x,x,x,x]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev + "," + prev + "," + prev + "," + prev + "," +
            prev + "," + prev + "," + prev + "," + prev + "," + prev + "]\n";
  }
  Response r = Do("POST", kPods, bomb, {}, {{"content-type", "application/yaml"}});
  ASSERT_TRUE(IsStatus(r, 400, "BadRequest"));
  EXPECT_NE(MessageOf(r).find("alias"), std::string::npos) << r.body;
  ExpectUnchanged();
}

TEST_F(BadInputTest, DeeplyNestedBodiesAreRefused) {
  const std::string deep_json = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(IsStatus(Do("POST", kPods, deep_json), 400, "BadRequest"));
  const std::string deep_yaml = "a: " + std::string(5000, '[') + std::string(5000, ']');
  EXPECT_TRUE(IsStatus(Do("POST", kPods, deep_yaml, {}, {{"content-type", "application/yaml"}}), 400, "BadRequest"));
  ExpectUnchanged();
}

TEST_F(BadInputTest, YamlThatReadsAsEndlessDocumentsIsAnsweredAtOnce) {
  // Bytes that are not UTF-8 make yaml-cpp report empty documents without end (a fuzzer found it:
  // the request hung its worker); the scan stops at the second document.
  const std::string body =
      ",\"metadata\":\x85\xddoame\"w\x90\xbfmscontainer: v1\nkind: Pod\nmetadata: {name: y}\nspec:\n"
      "  containers:\n  - {name% c, image: x, imagee: y}\n";
  Response r = Do("POST", kPods, body, {}, {{"content-type", "application/yaml"}});
  EXPECT_TRUE(IsStatus(r, 400, "BadRequest")) << r.code << " " << r.body;
  ExpectUnchanged();
}

TEST_F(BadInputTest, RequestsThatWouldOverflowWhenSummedAreInvalid) {
  MustCreate(kQuotas, {{"apiVersion", "v1"}, {"kind", "ResourceQuota"}, {"metadata", {{"name", "q"}}},
                       {"spec", {{"hard", {{"requests.cpu", "1"}}}}}});
  revision_ = Revision();
  pods_ = MustGet(kPods);
  classes_ = MustGet(kClasses);
  Json p = PodJson("huge");
  p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "5000000000000000";
  Json second = p["spec"]["containers"][0];
  second["name"] = "second";
  p["spec"]["containers"].push_back(second);
  Response r = Post(kPods, p);
  ASSERT_TRUE(IsStatus(r, 422, "Invalid"));
  EXPECT_NE(MessageOf(r).find("larger than Arbiter accepts"), std::string::npos) << r.body;
  // Just under the bound each, the sum is still refused by the quota, never wrapped around.
  p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "9000000000";
  p["spec"]["containers"][1]["resources"]["requests"]["cpu"] = "9000000000";
  EXPECT_FALSE(Post(kPods, p).code == 201);
  ExpectUnchanged();
}

TEST_F(BadInputTest, AnnotationsMustBeStringsOfAtMost256KiB) {
  Json p = PodJson("x");
  p["metadata"]["annotations"] = {{"n", 5}};
  EXPECT_TRUE(IsStatus(Post(kPods, p), 400, "BadRequest"));
  p["metadata"]["annotations"] = {{"a", std::string(200 * 1024, 'x')}, {"b", std::string(60 * 1024, 'y')}};
  Response r = Post(kPods, p);
  ASSERT_TRUE(IsStatus(r, 422, "Invalid"));
  EXPECT_EQ(Parse(r)["details"]["causes"][0]["field"], "metadata.annotations");
  ExpectUnchanged();
}

TEST_F(BadInputTest, DryRunsRunEverythingAndStoreNothing) {
  Response create = Do("POST", kPods, PodJson("dry").dump(), {{"dryRun", "All"}});
  ASSERT_EQ(create.code, 201) << create.body;
  EXPECT_EQ(Parse(create)["spec"]["priority"], 0);  // admission ran
  Json invalid = PodJson("dry");
  invalid["spec"]["containers"][0].erase("image");
  EXPECT_TRUE(IsStatus(Do("POST", kPods, invalid.dump(), {{"dryRun", "All"}}), 422, "Invalid"));
  Json label = {{"metadata", {{"labels", {{"dry", "run"}}}}}};
  Response patch = Do("PATCH", kPods + "/existing", label.dump(), {{"dryRun", "All"}},
                      {{"content-type", "application/merge-patch+json"}});
  ASSERT_EQ(patch.code, 200) << patch.body;
  EXPECT_EQ(Parse(patch)["metadata"]["labels"]["dry"], "run");
  Json existing = pods_["items"][0];
  existing["metadata"]["labels"] = {{"dry", "run"}};
  EXPECT_EQ(Do("PUT", kPods + "/existing", existing.dump(), {{"dryRun", "All"}}).code, 200);
  EXPECT_EQ(Do("DELETE", kPods + "/existing", "", {{"dryRun", "All"}}).code, 200);
  EXPECT_EQ(Do("DELETE", kPods + "/existing", R"({"dryRun":["All"]})").code, 200);
  EXPECT_TRUE(IsStatus(Do("POST", kPods, PodJson("x").dump(), {{"dryRun", "Yes"}}), 422, "Invalid"));
  ExpectUnchanged();
}

TEST_F(BadInputTest, DeletePreconditionsOnUidAndGraceAreChecked) {
  Response wrong = Do("DELETE", kPods + "/existing", R"({"preconditions":{"uid":"not-its-uid"}})");
  ASSERT_TRUE(IsStatus(wrong, 409, "Conflict"));
  EXPECT_NE(MessageOf(wrong).find("Precondition failed: UID in precondition: not-its-uid"), std::string::npos) << wrong.body;
  EXPECT_TRUE(IsStatus(Do("DELETE", kPods + "/existing", "", {{"gracePeriodSeconds", "-5"}}), 422, "Invalid"));
  EXPECT_TRUE(IsStatus(Do("DELETE", kPods + "/existing", R"({"gracePeriodSeconds":"soon"})"), 400, "BadRequest"));
  ExpectUnchanged();
  const std::string uid = pods_["items"][0]["metadata"]["uid"];
  EXPECT_EQ(Do("DELETE", kPods + "/existing", R"({"preconditions":{"uid":")" + uid + R"("}})").code, 200);
}

TEST_F(BadInputTest, AHugeGracePeriodEndsInTheYear9999NotBeforeTheEpoch) {
  BindPod("existing", "n1");
  Response r = Do("DELETE", kPods + "/existing", "", {{"gracePeriodSeconds", "9223372036854775807"}});
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(MustGet(kPods + "/existing")["metadata"]["deletionTimestamp"], "9999-12-31T23:59:59Z");
}

TEST_F(BadInputTest, WatchesFromTheFutureOrWithGarbageTimeoutsAreErrors) {
  Response future = Get(kPods, {{"watch", "true"}, {"resourceVersion", std::to_string(Revision() + 100)}});
  EXPECT_TRUE(IsStatus(future, 504, "Timeout"));
  EXPECT_TRUE(IsStatus(Get(kPods, {{"watch", "true"}, {"timeoutSeconds", "soon"}}), 400, "BadRequest"));
  Response huge = Get(kPods, {{"watch", "true"}, {"timeoutSeconds", "99999999999"}});
  ASSERT_NE(huge.watch, nullptr) << huge.body;
  EXPECT_EQ(huge.watch->timeout_seconds, 3600);
}

TEST_F(BadInputTest, AnEvictionMustBeOfThePodItNames) {
  EXPECT_TRUE(IsStatus(Do("POST", kPods + "/existing/eviction", "garbage"), 400, "BadRequest"));
  EXPECT_TRUE(IsStatus(Post(kPods + "/existing/eviction", EvictionJson("another")), 400, "BadRequest"));
  EXPECT_TRUE(IsStatus(Post(kPods + "/existing/eviction", Json::array()), 400, "BadRequest"));
  ExpectUnchanged();
}

// RBAC as Kubernetes users know it: the default roles, bindings of users and groups, the
// namespace-member convention of the token file, and no granting of what one does not hold.
class RbacTest : public ApiServerTest {
 protected:
  void SetUp() override {
    ApiServerTest::SetUp();
    ASSERT_TRUE(EnsureBootstrapObjects(server_).ok());
    server_.SetAuthorizer(&authorizer_);
  }
  static RequestAttributes Attrs(const std::string& verb, const std::string& group, const std::string& resource,
                                 const std::string& ns, const std::string& sub = "") {
    RequestAttributes a;
    a.verb = verb;
    a.api_group = group;
    a.resource = resource;
    a.ns = ns;
    a.subresource = sub;
    return a;
  }
  Response As(const TokenUser& user, const std::string& method, const std::string& path, const Json& body) {
    Request r;
    r.method = method;
    r.path = path;
    r.body = body.dump();
    r.user = user.name;
    r.groups = user.groups;
    r.authenticated = true;
    return Call(server_, r);
  }
  Authorizer authorizer_{*store_};
  const TokenUser admin_{"root", "0", {"system:masters", "system:authenticated"}};
  const TokenUser alice_{"alice", "1", {"namespace:team-a", "system:authenticated"}};
  const TokenUser bob_{"bob", "2", {"system:authenticated"}};
};

TEST_F(RbacTest, ClusterAdminMayDoAnythingAndEveryUserMayAskWhoItIs) {
  EXPECT_TRUE(authorizer_.Allowed(admin_, Attrs("delete", "", "resourcequotas", "team-a")));
  EXPECT_TRUE(authorizer_.Allowed(bob_, Attrs("create", "authorization.k8s.io", "selfsubjectaccessreviews", "")));
  EXPECT_FALSE(authorizer_.Allowed(bob_, Attrs("list", "", "pods", "team-a")));
  RequestAttributes version;
  version.resource_request = false;
  version.verb = "get";
  version.path = "/version";
  EXPECT_TRUE(authorizer_.Allowed(bob_, version));
  version.path = "/metrics";
  EXPECT_FALSE(authorizer_.Allowed(bob_, version));
}

TEST_F(RbacTest, ANamespaceAdminMayNotWriteItsQuotaNorItsNamespace) {
  EXPECT_TRUE(authorizer_.Allowed(alice_, Attrs("create", "", "pods", "team-a")));
  EXPECT_TRUE(authorizer_.Allowed(alice_, Attrs("get", "", "resourcequotas", "team-a")));
  EXPECT_FALSE(authorizer_.Allowed(alice_, Attrs("delete", "", "resourcequotas", "team-a")));
  EXPECT_FALSE(authorizer_.Allowed(alice_, Attrs("update", "", "namespaces", "team-a", "status")));
  EXPECT_FALSE(authorizer_.Allowed(alice_, Attrs("create", "", "pods", "team-b")));
  EXPECT_TRUE(authorizer_.Allowed(alice_, Attrs("list", "", "nodes", "")));
  EXPECT_FALSE(authorizer_.Allowed(alice_, Attrs("delete", "", "nodes", "")));
}

TEST_F(RbacTest, BindingsGrantRolesToUsersAndGroups) {
  MustCreate(kNamespaces, NamespaceJson("team-b"));
  EXPECT_FALSE(authorizer_.Allowed(bob_, Attrs("list", "", "pods", "team-b")));
  MustCreate("/apis/rbac.authorization.k8s.io/v1/namespaces/team-b/rolebindings",
             {{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "RoleBinding"}, {"metadata", {{"name", "bob-views"}}},
              {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "view"}}},
              {"subjects", Json::array({{{"kind", "User"}, {"name", "bob"}, {"apiGroup", "rbac.authorization.k8s.io"}}})}});
  EXPECT_TRUE(authorizer_.Allowed(bob_, Attrs("list", "", "pods", "team-b")));
  EXPECT_FALSE(authorizer_.Allowed(bob_, Attrs("create", "", "pods", "team-b")));
  EXPECT_FALSE(authorizer_.Allowed(bob_, Attrs("list", "", "pods", "team-a")));
}

TEST_F(RbacTest, NoOneGrantsWhatTheyDoNotHold) {
  MustCreate(kNamespaces, NamespaceJson("team-a"));
  const Json escalate = {{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "RoleBinding"},
                         {"metadata", {{"name", "me-admin"}}},
                         {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "cluster-admin"}}},
                         {"subjects", Json::array({{{"kind", "User"}, {"name", "alice"}}})}};
  const std::string bindings = "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings";
  EXPECT_TRUE(IsStatus(As(alice_, "POST", bindings, escalate), 403, "Forbidden"));
  Json quota_role = {{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "Role"}, {"metadata", {{"name", "quota"}}},
                     {"rules", Json::array({{{"apiGroups", {""}}, {"resources", {"resourcequotas"}}, {"verbs", {"delete"}}}})}};
  EXPECT_TRUE(IsStatus(As(alice_, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles", quota_role), 403,
                       "Forbidden"));
  // What alice holds, she may grant: view to bob in her namespace.
  Json view = escalate;
  view["metadata"]["name"] = "bob-views";
  view["roleRef"]["name"] = "view";
  view["subjects"][0]["name"] = "bob";
  EXPECT_EQ(As(alice_, "POST", bindings, view).code, 201);
  EXPECT_TRUE(authorizer_.Allowed(bob_, Attrs("get", "", "pods", "team-a")));
}

TEST_F(RbacTest, ABindingToARoleThatDoesNotExistIsNotFoundUnlessTheGrantorMayBindIt) {
  MustCreate(kNamespaces, NamespaceJson("team-a"));
  const Json future = {{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "RoleBinding"},
                       {"metadata", {{"name", "pre"}}},
                       {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "future-admin"}}},
                       {"subjects", Json::array({{{"kind", "User"}, {"name", "alice"}}})}};
  const std::string bindings = "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings";
  // An empty role would be "covered" by anything: it must not be taken as one.
  EXPECT_TRUE(IsStatus(As(alice_, "POST", bindings, future), 404, "NotFound"));
  EXPECT_FALSE(store_->Get("rolebindings", "team-a", "pre").ok());
  // A superuser may bind a role before it exists, as upstream.
  EXPECT_EQ(As(admin_, "POST", bindings, future).code, 201);
}

TEST_F(RbacTest, OnlyAClusterAdminMaySetKeepOrDropAnAggregationRule) {
  const std::string roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
  auto role = [](const std::string& name, Json rules) {
    return Json{{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "ClusterRole"}, {"metadata", {{"name", name}}},
                {"rules", std::move(rules)}};
  };
  const Json read_pods = {{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"get"}}};
  // bob may write ClusterRoles and read pods, nothing more.
  ASSERT_EQ(As(admin_, "POST", roles,
               role("role-writer", Json::array({{{"apiGroups", {"rbac.authorization.k8s.io"}},
                                                 {"resources", {"clusterroles"}},
                                                 {"verbs", {"create", "update", "get"}}},
                                                read_pods})))
                .code,
            201);
  ASSERT_EQ(As(admin_, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
               {{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "ClusterRoleBinding"},
                {"metadata", {{"name", "bob-writes-roles"}}},
                {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "role-writer"}}},
                {"subjects", Json::array({{{"kind", "User"}, {"name", "bob"}}})}})
                .code,
            201);
  // Rules bob holds he may grant; a selector that would gather the default roles (cluster-admin's
  // among them) he may not, though the role's own rules are covered.
  EXPECT_EQ(As(bob_, "POST", roles, role("pod-reader", Json::array({read_pods}))).code, 201);
  Json gather = role("gather-defaults", Json::array({read_pods}));
  gather["aggregationRule"] = {{"clusterRoleSelectors", Json::array({{{"matchLabels", {{"kubernetes.io/bootstrapping", "rbac-defaults"}}}}})}};
  Response refused = As(bob_, "POST", roles, gather);
  ASSERT_TRUE(IsStatus(refused, 403, "Forbidden")) << refused.body;
  EXPECT_NE(Parse(refused)["message"].get<std::string>().find("must have cluster-admin privileges to use the aggregationRule"),
            std::string::npos);
  EXPECT_FALSE(store_->Get("clusterroles", "", "gather-defaults").ok());
  // Nor may he keep or drop one on an existing role (it can stop a role being tightened).
  gather["metadata"]["name"] = "gathered";
  gather["aggregationRule"] = {{"clusterRoleSelectors", Json::array({{{"matchLabels", {{"example.com/part", "true"}}}}})}};
  ASSERT_EQ(As(admin_, "POST", roles, gather).code, 201);
  auto stored = store_->Get("clusterroles", "", "gathered");
  ASSERT_TRUE(stored.ok());
  Json current = *stored->body.tree();
  current.erase("aggregationRule");
  EXPECT_TRUE(IsStatus(As(bob_, "PUT", roles + "/gathered", current), 403, "Forbidden"));
  // bob still cannot read secrets: nothing was gathered for him.
  EXPECT_FALSE(authorizer_.Allowed(bob_, Attrs("get", "", "secrets", "team-a")));
}

TEST_F(RbacTest, NamesEachKindRefusesAreInvalidWithUpstreamsMessage) {
  MustCreate(kNamespaces, NamespaceJson("team-a"));
  auto post = [&](const std::string& path, const std::string& kind, const std::string& api_version, const std::string& name) {
    return As(admin_, "POST", path, {{"apiVersion", api_version}, {"kind", kind}, {"metadata", {{"name", name}}}});
  };
  const std::string configmaps = "/api/v1/namespaces/team-a/configmaps";
  Response bad = post(configmaps, "ConfigMap", "v1", "Bad/../Name");
  ASSERT_TRUE(IsStatus(bad, 422, "Invalid")) << bad.body;
  EXPECT_NE(Parse(bad)["message"].get<std::string>().find("ConfigMap \"Bad/../Name\" is invalid: metadata.name: Invalid value: "
                                                          "\"Bad/../Name\": a lowercase RFC 1123 subdomain"),
            std::string::npos)
      << bad.body;
  EXPECT_EQ(Parse(bad)["details"]["causes"][0]["field"], "metadata.name");
  EXPECT_TRUE(IsStatus(post(configmaps, "ConfigMap", "v1", std::string(10000, 'a')), 422, "Invalid"));
  EXPECT_TRUE(IsStatus(post(configmaps, "ConfigMap", "v1", "a..b"), 422, "Invalid"));
  EXPECT_EQ(post(configmaps, "ConfigMap", "v1", "a.b-c").code, 201);
  // Services are RFC 1035 labels; RBAC objects path segments.
  EXPECT_TRUE(IsStatus(post("/api/v1/namespaces/team-a/services", "Service", "v1", "1abc"), 422, "Invalid"));
  const std::string bindings = "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings";
  Json rb = {{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "RoleBinding"}, {"metadata", {{"name", "../../x"}}},
             {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "view"}}},
             {"subjects", Json::array({{{"kind", "User"}, {"name", "bob"}}})}};
  EXPECT_TRUE(IsStatus(As(admin_, "POST", bindings, rb), 422, "Invalid"));
  rb["metadata"]["name"] = "Mixed:Case";  // a path segment may hold capitals and colons
  EXPECT_EQ(As(admin_, "POST", bindings, rb).code, 201);
}

TEST_F(RbacTest, LabelsAndAnnotationsBeyondUpstreamsLimitsAreInvalid) {
  MustCreate(kNamespaces, NamespaceJson("team-a"));
  const std::string configmaps = "/api/v1/namespaces/team-a/configmaps";
  auto with_labels = [&](const Json& labels) {
    return As(admin_, "POST", configmaps,
              {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "c"}, {"labels", labels}}}});
  };
  EXPECT_TRUE(IsStatus(with_labels({{"app", std::string(2 << 20, 'v')}}), 422, "Invalid"));
  EXPECT_TRUE(IsStatus(with_labels({{std::string(100000, 'k'), "v"}}), 422, "Invalid"));
  EXPECT_TRUE(IsStatus(with_labels({{"app", "-bad"}}), 422, "Invalid"));
  EXPECT_EQ(with_labels({{"example.com/App_1", "My.Value-2"}}).code, 201);
  Response notes = As(admin_, "POST", configmaps,
                      {{"apiVersion", "v1"}, {"kind", "ConfigMap"},
                       {"metadata", {{"name", "d"}, {"annotations", {{"a", std::string(200 << 10, 'x')}, {"b", std::string(100 << 10, 'y')}}}}}});
  ASSERT_TRUE(IsStatus(notes, 422, "Invalid")) << notes.body.substr(0, 300);
  EXPECT_EQ(Parse(notes)["details"]["causes"][0]["field"], "metadata.annotations");
}

TEST_F(RbacTest, AnEventAboutAnotherNamespacesObjectIsInvalid) {
  MustCreate(kNamespaces, NamespaceJson("team-a"));
  const Json event = {{"apiVersion", "v1"}, {"kind", "Event"}, {"metadata", {{"name", "e1"}}},
                      {"involvedObject", {{"kind", "Pod"}, {"namespace", "team-b"}, {"name", "victim"}}},
                      {"reason", "Killing"}, {"message", "x"}};
  Response r = As(admin_, "POST", "/api/v1/namespaces/team-a/events", event);
  ASSERT_TRUE(IsStatus(r, 422, "Invalid")) << r.body;
  EXPECT_NE(r.body.find("involvedObject.namespace: Invalid value: \\\"team-b\\\": does not match event.namespace"),
            std::string::npos)
      << r.body;
  Json own = event;
  own["involvedObject"]["namespace"] = "team-a";
  EXPECT_EQ(As(admin_, "POST", "/api/v1/namespaces/team-a/events", own).code, 201);
}

TEST_F(RbacTest, ImpersonationRunsAsTheImpersonatedUserOnlyWhenAllowed) {
  MustCreate(kNamespaces, NamespaceJson("team-a"));
  const std::map<std::string, TokenUser> tokens = {{"root-token", admin_}, {"alice-token", alice_}};
  RequestAttributes list_pods = Attrs("list", "", "pods", "team-b");
  // The admin as alice: alice's rights, not the admin's (kubectl --as=alice).
  AuthnOutcome as_alice = AuthenticateRequest({{"authorization", "Bearer root-token"}, {"impersonate-user", "alice"}},
                                              tokens, &authorizer_, list_pods);
  EXPECT_EQ(as_alice.code, 403);
  EXPECT_EQ(as_alice.message,
            "pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \"team-b\"");
  AuthnOutcome allowed = AuthenticateRequest({{"authorization", "Bearer root-token"}, {"impersonate-user", "alice"},
                                              {"impersonate-group", "namespace:team-b"}},
                                             tokens, &authorizer_, list_pods);
  EXPECT_EQ(allowed.code, 0) << allowed.message;
  EXPECT_EQ(allowed.user.name, "alice");
  EXPECT_TRUE(allowed.user.groups.contains("system:authenticated"));
  EXPECT_FALSE(allowed.user.groups.contains("system:masters"));
  // Alice may not impersonate anyone.
  AuthnOutcome refused = AuthenticateRequest({{"authorization", "Bearer alice-token"}, {"impersonate-user", "root"}},
                                             tokens, &authorizer_, Attrs("list", "", "pods", "team-a"));
  EXPECT_EQ(refused.code, 403);
  EXPECT_EQ(refused.message, "users \"root\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API "
                             "group \"\" at the cluster scope");
  // Groups without a user are a bad request.
  EXPECT_EQ(AuthenticateRequest({{"authorization", "Bearer root-token"}, {"impersonate-group", "system:masters"}}, tokens,
                                &authorizer_, list_pods)
                .code,
            400);
}

TEST_F(RbacTest, OneBearerTokenInAnyCaseAndNeverTwoAuthorizationHeaders) {
  const std::map<std::string, TokenUser> tokens = {{"root-token", admin_}, {"alice-token", alice_}};
  const RequestAttributes nodes = Attrs("list", "", "nodes", "");
  EXPECT_EQ(AuthenticateRequest({{"authorization", "bearer root-token"}}, tokens, &authorizer_, nodes).code, 0);
  EXPECT_EQ(AuthenticateRequest({{"authorization", "Basic cm9vdA=="}}, tokens, &authorizer_, nodes).code, 401);
  AuthnOutcome two = AuthenticateRequest({{"authorization", "Bearer alice-token"}, {"authorization", "Bearer root-token"}},
                                         tokens, &authorizer_, nodes);
  EXPECT_EQ(two.code, 400);
  EXPECT_EQ(two.user.name, "");
}

TEST_F(RbacTest, TheDefaultRolesAreUpstreamsAggregatedRoles) {
  MustCreate(kNamespaces, NamespaceJson("team-a"));
  const TokenUser carol{"carol", "3", {"system:authenticated"}};
  auto bind = [&](const std::string& name, const std::string& role) {
    MustCreate("/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings",
               {{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "RoleBinding"}, {"metadata", {{"name", name}}},
                {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}}},
                {"subjects", Json::array({{{"kind", "User"}, {"name", "carol"}, {"apiGroup", "rbac.authorization.k8s.io"}}})}});
  };
  bind("carol-views", "view");
  EXPECT_TRUE(authorizer_.Allowed(carol, Attrs("list", "apps", "deployments", "team-a")));
  EXPECT_TRUE(authorizer_.Allowed(carol, Attrs("get", "", "configmaps", "team-a")));
  EXPECT_FALSE(authorizer_.Allowed(carol, Attrs("get", "", "secrets", "team-a")));  // view never reads secrets
  EXPECT_FALSE(authorizer_.Allowed(carol, Attrs("create", "", "configmaps", "team-a")));
  bind("carol-edits", "edit");
  for (const auto& [group, resource] : std::vector<std::pair<std::string, std::string>>{
           {"", "secrets"}, {"", "configmaps"}, {"", "services"}, {"apps", "deployments"}, {"batch", "jobs"},
           {"scheduling.k8s.io", "podgroups"}}) {
    EXPECT_TRUE(authorizer_.Allowed(carol, Attrs("create", group, resource, "team-a"))) << group << "/" << resource;
  }
  EXPECT_TRUE(authorizer_.Allowed(carol, Attrs("get", "", "pods", "team-a")));  // view's rules, through edit
  EXPECT_FALSE(authorizer_.Allowed(carol, Attrs("create", "rbac.authorization.k8s.io", "rolebindings", "team-a")));
  EXPECT_FALSE(authorizer_.Allowed(carol, Attrs("update", "", "resourcequotas", "team-a")));
  bind("carol-admins", "admin");
  EXPECT_TRUE(authorizer_.Allowed(carol, Attrs("create", "rbac.authorization.k8s.io", "rolebindings", "team-a")));
  EXPECT_TRUE(authorizer_.Allowed(carol, Attrs("get", "", "secrets", "team-a")));  // edit's, through admin
  EXPECT_FALSE(authorizer_.Allowed(carol, Attrs("update", "", "resourcequotas", "team-a")));
  EXPECT_FALSE(authorizer_.Allowed(carol, Attrs("list", "", "pods", "team-b")));
  // The stored roles are upstream's: admin, edit and view hold an aggregation rule, not rules.
  Json edit = MustGet("/apis/rbac.authorization.k8s.io/v1/clusterroles/edit");
  EXPECT_EQ(edit["aggregationRule"]["clusterRoleSelectors"][0]["matchLabels"]["rbac.authorization.k8s.io/aggregate-to-edit"],
            "true");
  EXPECT_EQ(edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-admin"], "true");
}

TEST_F(RbacTest, ASelfSubjectRulesReviewListsWhatTheCallerMayDoInANamespace) {
  MustCreate(kNamespaces, NamespaceJson("team-a"));
  const Json review = {{"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SelfSubjectRulesReview"},
                       {"spec", {{"namespace", "team-a"}}}};
  Response own = As(alice_, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", review);
  ASSERT_EQ(own.code, 201) << own.body;
  const Json status = Parse(own)["status"];
  EXPECT_EQ(status["incomplete"], false);
  bool pods_create = false;
  for (const Json& rule : status["resourceRules"]) {
    const auto has = [&](const char* key, const std::string& v) {
      for (const Json& x : rule[key]) {
        if (x == v || x == "*") return true;
      }
      return false;
    };
    pods_create = pods_create || (has("apiGroups", "") && has("resources", "pods") && has("verbs", "create"));
  }
  EXPECT_TRUE(pods_create) << own.body;
  EXPECT_FALSE(status["nonResourceRules"].empty());
  Json other = review;
  other["spec"]["namespace"] = "team-b";
  Response elsewhere = As(alice_, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", other);
  ASSERT_EQ(elsewhere.code, 201);
  EXPECT_EQ(elsewhere.body.find("\"pods\""), std::string::npos) << elsewhere.body;
}

// The property of issue 35: a user who may edit one namespace sends random requests (every
// verb, resource and subresource served, in its namespace and others, with and without
// impersonation headers); nothing outside what RBAC grants it changes, and no answer reveals
// an object of another namespace. Bounded: a fixed seed and count.
TEST_F(RbacTest, ANamespaceEditorsRandomRequestsChangeAndRevealNothingBeyondItsGrant) {
  for (const char* ns : {"team-a", "team-b"}) MustCreate(kNamespaces, NamespaceJson(ns));
  const std::string marker = "zq-secret-of-team-b";
  MustCreate("/api/v1/namespaces/team-b/secrets",
             {{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", "secret-b"}}}, {"stringData", {{"k", marker}}}});
  MustCreate("/api/v1/namespaces/team-b/configmaps",
             {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cm-b"}, {"labels", {{"tag", marker}}}}}});
  MustCreate("/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings",
             {{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "RoleBinding"}, {"metadata", {{"name", "dave-edits"}}},
              {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "edit"}}},
              {"subjects", Json::array({{{"kind", "User"}, {"name", "dave"}, {"apiGroup", "rbac.authorization.k8s.io"}}})}});
  const std::map<std::string, TokenUser> tokens = {{"dave-token", {"dave", "4", {}}}, {"root-token", admin_}};

  // Everything outside team-a, by resource, key and revision.
  auto outside = [&] {
    std::map<std::string, int64_t> out;
    std::set<std::string> seen;
    for (const ResourceInfo& info : Resources()) {
      if (info.review || info.AnotherVersion() || !seen.insert(info.StoreKey()).second) continue;
      auto list = store_->List(info.StoreKey(), "");
      if (!list.ok()) continue;
      for (const auto& o : list->items) {
        if (o.ns != "team-a") out[info.StoreKey() + "/" + o.ns + "/" + o.name] = o.revision;
      }
    }
    return out;
  };
  const auto before = outside();

  std::mt19937 rng(35);
  auto pick = [&](const auto& v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  std::vector<const ResourceInfo*> infos;
  for (const ResourceInfo& info : Resources()) {
    if (!info.review) infos.push_back(&info);
  }
  const std::vector<std::string> methods = {"GET", "POST", "PUT", "PATCH", "DELETE"};
  const std::vector<std::string> namespaces = {"team-a", "team-b", "kube-system", "default"};
  std::set<std::string> covered;
  int allowed = 0;
  for (int i = 0; i < 4000; ++i) {
    const ResourceInfo& info = *pick(infos);
    const std::string ns = pick(namespaces);
    const std::string method = pick(methods);
    std::vector<std::string> subs = {""};
    for (auto sub : info.subresources) subs.emplace_back(sub);
    const std::string sub = pick(subs);
    const bool named = method != "POST" || !sub.empty() ? std::uniform_int_distribution<int>(0, 3)(rng) != 0 : false;
    const std::string name = pick(std::vector<std::string>{"secret-b", "cm-b", "x" + std::to_string(i % 7), "default"});
    std::string path = info.group.empty() ? "/api/v1" : "/apis/" + std::string(info.group) + "/" + std::string(info.version);
    if (info.namespaced) path += "/namespaces/" + ns;
    path += "/" + std::string(info.resource);
    if (named) path += "/" + name + (sub.empty() ? "" : "/" + sub);
    const bool impersonate = std::uniform_int_distribution<int>(0, 4)(rng) == 0;
    HeaderFields fields = {{"authorization", "Bearer dave-token"}};
    if (impersonate) fields.emplace_back("impersonate-user", pick(std::vector<std::string>{"root", "alice", "system:admin"}));
    if (impersonate && std::uniform_int_distribution<int>(0, 1)(rng)) fields.emplace_back("impersonate-group", "system:masters");
    covered.insert(method + " " + std::string(info.resource) + (sub.empty() ? "" : "/" + sub) + " " +
                   (info.namespaced ? (ns == "team-a" ? "own" : "other") : "cluster") + (impersonate ? " as" : ""));
    const RequestAttributes attrs = AttributesOf(method, path, false);
    AuthnOutcome who = AuthenticateRequest(fields, tokens, &authorizer_, attrs);
    if (who.code != 0) continue;
    ++allowed;
    Json body = {{"apiVersion", info.ApiVersion()}, {"kind", std::string(info.kind)}, {"metadata", {{"name", name}}}};
    Request r;
    r.method = method;
    r.path = path;
    r.body = body.dump();
    if (method == "PATCH") r.headers["content-type"] = "application/merge-patch+json";
    r.user = who.user.name;
    r.groups = who.user.groups;
    r.authenticated = true;
    Response out = Call(server_, r);
    EXPECT_EQ(out.body.find(marker), std::string::npos) << method << " " << path << " revealed: " << out.body.substr(0, 300);
  }
  EXPECT_EQ(outside(), before) << "a request changed an object outside team-a";
  EXPECT_GT(allowed, 100);
  EXPECT_GT(covered.size(), 500u);
  std::cout << "[ property ] " << covered.size() << " verb x resource x subresource x namespace x impersonation cases, "
            << allowed << " of 4000 requests allowed\n";
}

TEST(StatusBodyTest, CarriesDetailsWhenNamed) {
  Json s = StatusBody(404, "NotFound", "pods \"x\" not found", "pods", "x");
  EXPECT_EQ(s["kind"], "Status");
  EXPECT_EQ(s["status"], "Failure");
  EXPECT_EQ(s["code"], 404);
  EXPECT_EQ(s["details"]["name"], "x");
  EXPECT_EQ(s["details"]["kind"], "pods");
  EXPECT_FALSE(StatusBody(400, "BadRequest", "m").contains("details"));
}

}  // namespace
}  // namespace arbiter::api

namespace arbiter::api {
namespace {

TEST(PatchTest, TwoWayStrategicPatchCarriesOnlyWhatChangedAndAppliesBack) {
  const Json before = {{"status",
                        {{"phase", "Pending"},
                         {"nominatedNodeName", "n1"},
                         {"conditions", Json::array({{{"type", "Ready"}, {"status", "False"}},
                                                     {{"type", "PodScheduled"}, {"status", "True"}}})}}}};
  Json after = before;
  after["status"].erase("nominatedNodeName");
  after["status"]["conditions"][1] = {{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"}};
  after["status"]["conditions"].push_back({{"type", "DisruptionTarget"}, {"status", "True"}});
  const Json patch = TwoWayStrategicMergePatch(before, after);
  // The unchanged condition and phase are not sent; the changed one by its key and changed fields.
  EXPECT_EQ(patch, (Json{{"status",
                          {{"nominatedNodeName", nullptr},
                           {"$setElementOrder/conditions",
                            Json::array({{{"type", "Ready"}}, {{"type", "PodScheduled"}}, {{"type", "DisruptionTarget"}}})},
                           {"conditions", Json::array({{{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"}},
                                                       {{"type", "DisruptionTarget"}, {"status", "True"}}})}}}}));
  auto applied = ApplyPatch(before, patch, PatchType::kStrategic);
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  EXPECT_EQ(*applied, after);
  EXPECT_EQ(TwoWayStrategicMergePatch(before, before), Json::object());
  // A removed condition is deleted by its key.
  Json fewer = before;
  fewer["status"]["conditions"].erase(0);
  auto removed = ApplyPatch(before, TwoWayStrategicMergePatch(before, fewer), PatchType::kStrategic);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, fewer);
}

TEST(ProtobufTest, AWatchFrameCarriesTheTypeAndTheEnvelopedObject) {
  auto object = EncodeProtobufObject(PodJson("web"));
  ASSERT_TRUE(object.ok()) << object.status().message();
  const std::string frame = EncodeWatchFrame("MODIFIED", *object);
  const size_t len = (static_cast<unsigned char>(frame[0]) << 24) | (static_cast<unsigned char>(frame[1]) << 16) |
                     (static_cast<unsigned char>(frame[2]) << 8) | static_cast<unsigned char>(frame[3]);
  ASSERT_EQ(len, frame.size() - 4);
  auto decoded = DecodeWatchFrame(std::string_view(frame).substr(4));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->type, "MODIFIED");
  auto pod = DecodeProtobufObject(decoded->object);
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  EXPECT_EQ((*pod)["metadata"]["name"], "web");
  EXPECT_EQ((*pod)["kind"], "Pod");
  EXPECT_FALSE(DecodeWatchFrame("\xff\xff").ok());
}

TEST_F(ApiServerTest, EventsOfEitherVersionAreOneEventReadInBoth) {
  ASSERT_EQ(Post("/api/v1/namespaces", NamespaceJson("team")).code, 201);
  const Json v1 = {{"apiVersion", "events.k8s.io/v1"},
                   {"kind", "Event"},
                   {"metadata", {{"name", "web.1"}, {"namespace", "team"}}},
                   {"eventTime", "2026-12-03T10:00:00.000000Z"},
                   {"reportingController", "default-scheduler"},
                   {"reportingInstance", "default-scheduler-host"},
                   {"action", "Binding"},
                   {"reason", "Scheduled"},
                   {"type", "Normal"},
                   {"note", "Successfully assigned team/web to n1"},
                   {"regarding", {{"kind", "Pod"}, {"namespace", "team"}, {"name", "web"}}}};
  Response created = Post("/apis/events.k8s.io/v1/namespaces/team/events", v1);
  ASSERT_EQ(created.code, 201) << created.body;
  EXPECT_EQ(Parse(created)["note"], v1["note"]);
  // Core v1 (kubectl describe) reads it with its own field names.
  Json core = MustGet("/api/v1/namespaces/team/events/web.1");
  EXPECT_EQ(core["apiVersion"], "v1");
  EXPECT_EQ(core["message"], v1["note"]);
  EXPECT_EQ(core["involvedObject"]["name"], "web");
  EXPECT_EQ(core["reportingComponent"], "default-scheduler");
  EXPECT_FALSE(core.contains("note"));
  // A series patch through the new API; the list and the old API see it.
  Response patched = PatchAs("/apis/events.k8s.io/v1/namespaces/team/events/web.1", "application/strategic-merge-patch+json",
                             {{"series", {{"count", 2}, {"lastObservedTime", "2026-12-03T10:01:00.000000Z"}}}});
  ASSERT_EQ(patched.code, 200) << patched.body;
  EXPECT_EQ(Parse(patched)["regarding"]["name"], "web");
  EXPECT_EQ(MustGet("/api/v1/namespaces/team/events/web.1")["series"]["count"], 2);
  Json list = MustGet("/apis/events.k8s.io/v1/namespaces/team/events");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["apiVersion"], "events.k8s.io/v1");
  EXPECT_TRUE(list["items"][0].contains("regarding"));  // the new version's names
  EXPECT_EQ(list["items"][0]["series"]["count"], 2);
  // A core event is read in the new version with the deprecated names.
  Json old = {{"apiVersion", "v1"}, {"kind", "Event"}, {"metadata", {{"name", "web.2"}, {"namespace", "team"}}},
              {"involvedObject", {{"kind", "Pod"}, {"name", "web"}}}, {"reason", "Killing"}, {"message", "Stopping"},
              {"source", {{"component", "kubelet"}}}, {"count", 3}, {"type", "Normal"}};
  ASSERT_EQ(Post("/api/v1/namespaces/team/events", old).code, 201);
  Json seen = MustGet("/apis/events.k8s.io/v1/namespaces/team/events/web.2");
  EXPECT_EQ(seen["note"], "Stopping");
  EXPECT_EQ(seen["deprecatedSource"]["component"], "kubelet");
  EXPECT_EQ(seen["deprecatedCount"], 3);
  EXPECT_EQ(Do("DELETE", "/apis/events.k8s.io/v1/namespaces/team/events/web.2").code, 200);
  EXPECT_EQ(Get("/api/v1/namespaces/team/events/web.2").code, 404);
}

// ---------------------------------------------------------------------------------------------
// Lost races

// A store on which every conditional delete loses its race `losses` times before it may win, as
// when other clients keep writing the object.
class LosingRacesStore final : public test_support::ForwardingStore {
 public:
  // The first `losses` conditional deletes and `update_losses` conditional updates lose a race.
  LosingRacesStore(store::Store& inner, int losses, int update_losses = 0)
      : ForwardingStore(inner), losses_(losses), update_losses_(update_losses) {}
  StatusOr<store::Object> Update(const std::string& r, const std::string& ns, const std::string& n, Json b,
                                 int64_t rev) override {
    if (rev > 0 && update_losses_ > 0) {
      --update_losses_;
      return Conflict("the object has been modified");
    }
    return inner_.Update(r, ns, n, std::move(b), rev);
  }
  StatusOr<store::Object> Delete(const std::string& r, const std::string& ns, const std::string& n, int64_t rev) override {
    if (rev > 0 && losses_ > 0) {
      --losses_;
      return Conflict("the object has been modified");
    }
    return inner_.Delete(r, ns, n, rev);
  }

 private:
  int losses_;
  int update_losses_;
};

// kube-apiserver's storage retries a delete without preconditions until it wins
// (conditionalDelete); it never answers 409 because others wrote meanwhile. One with a
// resourceVersion precondition that no longer holds is a 409 at once.
TEST(LostRaces, ADeleteWithoutPreconditionsRetriesPastManyLostRacesAndOneWithAPreconditionDoesNot) {
  auto memory = store::NewMemoryStore();
  LosingRacesStore store(*memory, 12);
  VirtualClock clock(Start());
  ApiServer server(store, clock, 7, ApiServer::Options{});
  auto call = [&](const std::string& method, const std::string& path, const std::string& body = "") {
    Request r;
    r.method = method;
    r.path = path;
    r.body = body;
    return server.Handle(r);
  };
  ASSERT_EQ(call("POST", "/api/v1/namespaces", R"({"metadata":{"name":"default"}})").code, 201);
  const std::string cms = "/api/v1/namespaces/default/configmaps";
  ASSERT_EQ(call("POST", cms, R"({"metadata":{"name":"a"},"data":{"k":"v"}})").code, 201);
  Response deleted = call("DELETE", cms + "/a");
  EXPECT_EQ(deleted.code, 200) << deleted.body;
  EXPECT_EQ(call("GET", cms + "/a").code, 404);

  ASSERT_EQ(call("POST", cms, R"({"metadata":{"name":"b"},"data":{"k":"v"}})").code, 201);
  LosingRacesStore again(*memory, 1);
  ApiServer server2(again, clock, 7, ApiServer::Options{});
  Request r;
  r.method = "DELETE";
  r.path = cms + "/b";
  const std::string rv = Json::parse(call("GET", cms + "/b").body)["metadata"]["resourceVersion"];
  r.body = R"({"preconditions":{"resourceVersion":")" + rv + R"("}})";
  EXPECT_EQ(server2.Handle(r).code, 409);
}

// ---- What kube-apiserver fills in, and how it answers, as tests/apidiff compares them ----

TEST_F(ApiServerTest, APodReadsBackWithKubeApiserversDefaultsAndItsQosClass) {
  Json pod = PodJson("limited");
  pod["spec"]["containers"][0]["resources"] = {{"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}};
  pod["spec"]["containers"][0]["ports"] = Json::array({{{"containerPort", 80}}});
  ASSERT_EQ(Post(kPods, pod).code, 201);
  const Json got = MustGet(kPods + "/limited");
  const Json& spec = got["spec"];
  EXPECT_EQ(spec["dnsPolicy"], "ClusterFirst");
  EXPECT_EQ(spec["restartPolicy"], "Always");
  EXPECT_EQ(spec["enableServiceLinks"], true);
  EXPECT_EQ(spec["securityContext"], Json::object());
  EXPECT_EQ(spec["schedulerName"], "default-scheduler");
  EXPECT_EQ(spec["terminationGracePeriodSeconds"], 30);
  const Json& c = spec["containers"][0];
  EXPECT_EQ(c["imagePullPolicy"], "IfNotPresent");  // nginx:1.25: tagged, not latest
  EXPECT_EQ(c["terminationMessagePath"], "/dev/termination-log");
  EXPECT_EQ(c["terminationMessagePolicy"], "File");
  EXPECT_EQ(c["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(c["resources"]["requests"], (Json{{"cpu", "1"}, {"memory", "1Gi"}}));  // requests from limits
  EXPECT_EQ(got["status"]["qosClass"], "Guaranteed");

  Json bare = PodJson("bare");
  bare["spec"]["containers"][0] = {{"name", "app"}, {"image", "registry.local:5000/nginx"}};
  ASSERT_EQ(Post(kPods, bare).code, 201);
  const Json b = MustGet(kPods + "/bare");
  EXPECT_EQ(b["spec"]["containers"][0]["imagePullPolicy"], "Always");  // untagged: latest
  EXPECT_EQ(b["spec"]["containers"][0]["resources"], Json::object());
  EXPECT_EQ(b["status"]["qosClass"], "BestEffort");
  ASSERT_EQ(Post(kPods, PodJson("requests-only")).code, 201);
  EXPECT_EQ(MustGet(kPods + "/requests-only")["status"]["qosClass"], "Burstable");

  // A status written without the class keeps it; the spec's defaults need not be sent again.
  Json status = MustGet(kPods + "/bare");
  status["status"].erase("qosClass");
  status["spec"].erase("dnsPolicy");
  Response put = Do("PUT", kPods + "/bare/status", status.dump());
  ASSERT_EQ(put.code, 200) << put.body;
  EXPECT_EQ(MustGet(kPods + "/bare")["status"]["qosClass"], "BestEffort");
}

TEST_F(ApiServerTest, ATemplateGetsThePodSpecDefaultsButNotThePodsOwn) {
  const Json d = {{"apiVersion", "apps/v1"},
                  {"kind", "Deployment"},
                  {"metadata", {{"name", "web"}}},
                  {"spec",
                   {{"selector", {{"matchLabels", {{"app", "web"}}}}},
                    {"template",
                     {{"metadata", {{"labels", {{"app", "web"}}}}},
                      {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "nginx:latest"},
                                                             {"resources", {{"limits", {{"cpu", "1"}}}}}}})}}}}}}}};
  ASSERT_EQ(Post("/apis/apps/v1/namespaces/default/deployments", d).code, 201);
  const Json t = MustGet("/apis/apps/v1/namespaces/default/deployments/web")["spec"]["template"]["spec"];
  EXPECT_EQ(t["dnsPolicy"], "ClusterFirst");
  EXPECT_EQ(t["containers"][0]["imagePullPolicy"], "Always");
  // SetDefaults_Pod's own (service links, requests from limits) are a pod's, not a template's.
  EXPECT_FALSE(t.contains("enableServiceLinks"));
  EXPECT_FALSE(t["containers"][0]["resources"].contains("requests"));
}

TEST_F(ApiServerTest, TableRowsCarryMetadataByDefaultTheObjectOrNothingWhenAsked) {
  ASSERT_EQ(Post(kPods, PodJson("p")).code, 201);
  const Strings table = {{"accept", "application/json;as=Table;v=v1;g=meta.k8s.io"}};
  auto rows = [&](const Strings& query) { return Parse(Get(kPods, query, table))["rows"]; };
  const Json meta = rows({})[0]["object"];
  EXPECT_EQ(meta["kind"], "PartialObjectMetadata");
  EXPECT_EQ(meta["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(meta["metadata"]["name"], "p");
  EXPECT_FALSE(meta.contains("spec"));
  EXPECT_EQ(rows({{"includeObject", "Object"}})[0]["object"]["kind"], "Pod");
  EXPECT_FALSE(rows({{"includeObject", "None"}})[0].contains("object"));
  EXPECT_TRUE(IsStatus(Get(kPods, {{"includeObject", "Some"}}, table), 400, "BadRequest"));
  // A single object's Table carries its resourceVersion, as a list's carries the list's.
  const Json one = Parse(Get(kPods + "/p", {}, table));
  EXPECT_EQ(one["metadata"]["resourceVersion"], MustGet(kPods + "/p")["metadata"]["resourceVersion"]);
}

TEST_F(ApiServerTest, ASecretsStringDataIsFoldedIntoDataAndNeverStored) {
  const Json s = {{"apiVersion", "v1"},
                  {"kind", "Secret"},
                  {"metadata", {{"name", "s"}}},
                  {"data", {{"kept", "YQ=="}}},
                  {"stringData", {{"password", "hunter2"}}}};
  ASSERT_EQ(Post("/api/v1/namespaces/default/secrets", s).code, 201);
  const Json got = MustGet("/api/v1/namespaces/default/secrets/s");
  EXPECT_EQ(got["data"], (Json{{"kept", "YQ=="}, {"password", "aHVudGVyMg=="}}));
  EXPECT_FALSE(got.contains("stringData"));
  EXPECT_EQ(got["type"], "Opaque");
}

TEST_F(ApiServerTest, ANodeThatStatesOnlyItsCapacityCanAllocateAllOfIt) {
  const Json n = {{"apiVersion", "v1"},
                  {"kind", "Node"},
                  {"metadata", {{"name", "n1"}}},
                  {"status", {{"capacity", {{"cpu", "4"}, {"memory", "8Gi"}}}}}};
  ASSERT_EQ(Post("/api/v1/nodes", n).code, 201);
  const Json got = MustGet("/api/v1/nodes/n1");
  EXPECT_EQ(got["status"]["allocatable"], (Json{{"cpu", "4"}, {"memory", "8Gi"}}));
  EXPECT_EQ(got["spec"], Json::object());
}

TEST_F(ApiServerTest, AnObjectInAnUnknownMediaTypeIsUnsupportedMediaType) {
  EXPECT_TRUE(IsStatus(Do("POST", kPods, PodJson("x").dump(), {}, {{"content-type", "text/plain"}}), 415,
                       "UnsupportedMediaType"));
  EXPECT_EQ(Do("POST", kPods, PodJson("x").dump(), {}, {{"content-type", "application/json; charset=utf-8"}}).code, 201);
}

TEST_F(ApiServerTest, AnInvalidPodsCausesNameTheFieldNotTheObject) {
  Json pod = PodJson("q");
  pod["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "2"}}}, {"limits", {{"cpu", "1"}}}};
  Response r = Post(kPods, pod);
  ASSERT_EQ(r.code, 422) << r.body;
  const Json status = Parse(r);
  ASSERT_FALSE(status["details"]["causes"].empty()) << r.body;
  EXPECT_TRUE(status["details"]["causes"][0]["field"].get<std::string>().starts_with("spec.containers[0].resources"))
      << r.body;
  EXPECT_EQ(status["message"].get<std::string>().find("Pod default/q:"), std::string::npos) << r.body;
}

TEST(LostRaces, AScalePatchRetriesPastLostRacesAndAStaleResourceVersionOfTheClientsIsAConflict) {
  auto memory = store::NewMemoryStore();
  LosingRacesStore store(*memory, 0, 8);  // a controller writes the Deployment's status eight times meanwhile
  VirtualClock clock(Start());
  ApiServer server(store, clock, 7, ApiServer::Options{});
  auto call = [&](const std::string& method, const std::string& path, const std::string& body = "",
                  const std::string& type = "application/json") {
    Request r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.headers["content-type"] = type;
    return server.Handle(r);
  };
  ASSERT_EQ(call("POST", "/api/v1/namespaces", R"({"metadata":{"name":"default"}})").code, 201);
  const std::string deployments = "/apis/apps/v1/namespaces/default/deployments";
  const Json d = {{"metadata", {{"name", "web"}}},
                  {"spec",
                   {{"replicas", 1},
                    {"selector", {{"matchLabels", {{"app", "web"}}}}},
                    {"template",
                     {{"metadata", {{"labels", {{"app", "web"}}}}},
                      {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "nginx:1.25"}}})}}}}}}}};
  ASSERT_EQ(call("POST", deployments, d.dump()).code, 201);
  Response scaled = call("PATCH", deployments + "/web/scale", R"({"spec":{"replicas":3}})", "application/merge-patch+json");
  ASSERT_EQ(scaled.code, 200) << scaled.body;
  EXPECT_EQ(Json::parse(call("GET", deployments + "/web").body)["spec"]["replicas"], 3);
  // A Scale of zero replicas has no spec.replicas (omitempty), as upstream encodes it.
  ASSERT_EQ(call("PATCH", deployments + "/web/scale", R"({"spec":{"replicas":0}})", "application/merge-patch+json").code, 200);
  EXPECT_FALSE(Json::parse(call("GET", deployments + "/web/scale").body)["spec"].contains("replicas"));

  LosingRacesStore again(*memory, 0, 1);
  ApiServer server2(again, clock, 7, ApiServer::Options{});
  const std::string rv = Json::parse(call("GET", deployments + "/web").body)["metadata"]["resourceVersion"];
  Request put;
  put.method = "PUT";
  put.path = deployments + "/web/scale";
  put.body = Json{{"metadata", {{"name", "web"}, {"namespace", "default"}, {"resourceVersion", rv}}}, {"spec", {{"replicas", 2}}}}.dump();
  put.headers["content-type"] = "application/json";
  EXPECT_EQ(server2.Handle(put).code, 409);
}

TEST_F(ApiServerTest, ANamespaceCarriesItsNameAsALabelAndListItemsCarryNoKindOfTheirOwn) {
  ASSERT_EQ(Post("/api/v1/namespaces", Json{{"metadata", {{"name", "team-l"}}}}).code, 201);
  EXPECT_EQ(MustGet("/api/v1/namespaces/team-l")["metadata"]["labels"]["kubernetes.io/metadata.name"], "team-l");
  EXPECT_EQ(List("/api/v1/namespaces", {{"labelSelector", "kubernetes.io/metadata.name=team-l"}}), (Names{"team-l"}));
  const Json list = MustGet("/api/v1/namespaces");
  EXPECT_EQ(list["kind"], "NamespaceList");
  ASSERT_FALSE(list["items"].empty());
  EXPECT_FALSE(list["items"][0].contains("kind"));
  EXPECT_FALSE(list["items"][0].contains("apiVersion"));
}

}  // namespace
}  // namespace arbiter::api
