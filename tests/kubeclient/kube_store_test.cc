// The store backend over a Kubernetes API server, against Arbiter's own API served over HTTP on a
// memory store: what it reads, how its watches resume and end, and which call each write becomes.
#include "arbiter/kubeclient/kube_store.h"

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include "arbiter/api/admission.h"
#include "arbiter/api/http.h"
#include "arbiter/api/server.h"

namespace arbiter::kubeclient {
namespace {

using Json = nlohmann::json;

// `arbiter serve`'s API on a memory store, over HTTP on a free loopback port.
class ApiServerOverHttp {
 public:
  explicit ApiServerOverHttp(size_t watch_history = store::kDefaultWatchHistory)
      : store_(store::NewMemoryStore(watch_history)), api_(*store_, clock_, 1, api::ApiServer::Options{}) {
    api::InstallAdmission(api_);
    api::HttpOptions o;
    o.port = 0;
    o.worker_threads = 2;
    http_ = std::make_unique<api::HttpServer>(api_, o);
    EXPECT_TRUE(http_->Bind().ok());
    thread_ = std::thread([this] { http_->Serve(); });
    EXPECT_EQ(Call("POST", "/api/v1/namespaces", {{"metadata", {{"name", "default"}}}}).code, 201);
  }
  ~ApiServerOverHttp() {
    http_->Stop();
    thread_.join();
  }
  api::Response Call(const std::string& method, const std::string& path, const Json& body = nullptr) {
    api::Request r;
    r.method = method;
    r.path = path;
    if (!body.is_null()) r.body = body.dump();
    r.headers["content-type"] = "application/json";
    return api_.Handle(r);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(http_->port()); }
  store::Store& store() { return *store_; }

 private:
  SystemClock clock_;
  std::unique_ptr<store::Store> store_;
  api::ApiServer api_;
  std::unique_ptr<api::HttpServer> http_;
  std::thread thread_;
};

Json PodJson(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}}};
}

struct Opened {
  std::unique_ptr<store::Store> store;
  std::vector<std::string> requests;
  std::mutex mu;
};

std::unique_ptr<Opened> Open(const ApiServerOverHttp& s, size_t page = 500, bool protobuf = false) {
  auto o = std::make_unique<Opened>();
  KubeStoreOptions ko;
  ko.config.server = s.url();
  ko.qps = 0;
  ko.page = page;
  ko.protobuf = protobuf;
  Opened* raw = o.get();
  ko.on_request = [raw](const std::string& method, const std::string& target, const std::string&) {
    std::lock_guard<std::mutex> lock(raw->mu);
    raw->requests.push_back(method + " " + target);
  };
  auto st = OpenKubeStore(ko);
  EXPECT_TRUE(st.ok()) << st.status().message();
  if (st.ok()) o->store = std::move(*st);
  return o;
}

// Waits up to 5 s for `n` events.
std::vector<store::EventPtr> Collect(store::Watch& w, size_t n) {
  std::vector<store::EventPtr> got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (got.size() < n && std::chrono::steady_clock::now() < deadline) {
    auto next = w.Next(std::chrono::milliseconds(100));
    if (!next.ok()) break;
    got.insert(got.end(), next->begin(), next->end());
  }
  return got;
}

TEST(KubeStore, ListsPageByPageAtOneRevisionAndWatchesFromIt) {
  ApiServerOverHttp server;
  for (int i = 0; i < 5; ++i) ASSERT_EQ(server.Call("POST", "/api/v1/namespaces/default/pods", PodJson("p" + std::to_string(i))).code, 201);
  auto o = Open(server, 2);
  auto list = o->store->List("pods", "");
  ASSERT_TRUE(list.ok()) << list.status().message();
  ASSERT_EQ(list->items.size(), 5u);
  EXPECT_EQ(list->items[4].name, "p4");
  EXPECT_EQ((*list->items[4].body.tree())["kind"], "Pod");  // filled in, as the server leaves it out of items
  // Three pages of two, the later ones by the continue token of the one before.
  std::vector<std::string> lists;
  for (const std::string& r : o->requests) {
    if (r.rfind("GET /api/v1/pods?limit=2", 0) == 0) lists.push_back(r);
  }
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_EQ(lists[0], "GET /api/v1/pods?limit=2");
  EXPECT_NE(lists[1].find("&continue="), std::string::npos);
  EXPECT_NE(lists[2].find("&continue="), std::string::npos);
  auto w = o->store->WatchFrom("pods", "", list->revision);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(server.Call("POST", "/api/v1/namespaces/default/pods", PodJson("p5")).code, 201);
  ASSERT_EQ(server.Call("DELETE", "/api/v1/namespaces/default/pods/p0", Json{{"gracePeriodSeconds", 0}}).code, 200);
  auto events = Collect(**w, 2);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0]->type, store::EventType::kAdded);
  EXPECT_EQ(events[0]->object.name, "p5");
  EXPECT_GT(events[0]->object.revision, list->revision);
  EXPECT_EQ(events.back()->type, store::EventType::kDeleted);
  (*w)->Stop();
  EXPECT_FALSE((*w)->Next(std::chrono::milliseconds(0)).ok());
}

TEST(KubeStore, AWatchFromForgottenHistoryIsGone) {
  ApiServerOverHttp server(/*watch_history=*/2);
  auto o = Open(server);
  auto list = o->store->List("pods", "");
  ASSERT_TRUE(list.ok());
  for (int i = 0; i < 5; ++i) ASSERT_EQ(server.Call("POST", "/api/v1/namespaces/default/pods", PodJson("p" + std::to_string(i))).code, 201);
  auto w = o->store->WatchFrom("pods", "", list->revision);
  ASSERT_TRUE(w.ok());
  StatusOr<std::vector<store::EventPtr>> next = std::vector<store::EventPtr>{};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (next.ok() && std::chrono::steady_clock::now() < deadline) next = (*w)->Next(std::chrono::milliseconds(100));
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().code(), StatusCode::kGone) << next.status().message();
}

// An update of `pod` as the write batch hands it over: its base and body the stored one (the
// caller changes the body), conditional on its revision.
store::WriteOp PodUpdate(const store::Object& pod, store::WriteOp::Intent intent = store::WriteOp::Intent::kReplace) {
  store::WriteOp op;
  op.resource = "pods";
  op.ns = pod.ns;
  op.name = pod.name;
  op.base = *pod.body.tree();
  op.body = op.base;
  op.expected_revision = pod.revision;
  op.intent = intent;
  return op;
}

TEST(KubeStore, WritesBecomeKubeSchedulersCalls) {
  ApiServerOverHttp server;
  ASSERT_EQ(server.Call("POST", "/api/v1/nodes", {{"metadata", {{"name", "n1"}}}}).code, 201);
  for (const char* name : {"a", "b"}) ASSERT_EQ(server.Call("POST", "/api/v1/namespaces/default/pods", PodJson(name)).code, 201);
  auto o = Open(server);
  auto a = o->store->Get("pods", "default", "a");
  auto b = o->store->Get("pods", "default", "b");
  ASSERT_TRUE(a.ok() && b.ok());
  o->requests.clear();

  // A binding, a status change and a graceful deletion, in one batch.
  std::vector<store::WriteOp> ops = {PodUpdate(*a, store::WriteOp::Intent::kBind), PodUpdate(*b)};
  ops[0].body["spec"]["nodeName"] = "n1";
  ops[0].body["status"]["nominatedNodeName"] = "ignored";  // the server's to write on a binding
  ops[1].body["status"]["conditions"] = Json::array({{{"type", "DisruptionTarget"}, {"status", "True"},
                                                      {"reason", "PreemptionByScheduler"}, {"message", "m"}}});
  ops[1].body["metadata"]["deletionTimestamp"] = "2026-12-03T10:00:00Z";
  auto results = o->store->Apply(ops);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[0].ok()) << results[0].status().message();
  ASSERT_TRUE(results[1].ok()) << results[1].status().message();
  EXPECT_EQ(o->requests, (std::vector<std::string>{"POST /api/v1/namespaces/default/pods/a/binding",
                                                   "PATCH /api/v1/namespaces/default/pods/b/status",
                                                   "DELETE /api/v1/namespaces/default/pods/b"}));
  const Json bound = Json::parse(server.Call("GET", "/api/v1/namespaces/default/pods/a").body);
  EXPECT_EQ(bound["spec"]["nodeName"], "n1");
  EXPECT_FALSE(bound["status"].contains("nominatedNodeName"));
  // Pod b had no node: deleted at once, with its condition.
  EXPECT_EQ(server.Call("GET", "/api/v1/namespaces/default/pods/b").code, 404);
  EXPECT_EQ((*results[1])->body.Copy()["status"]["conditions"][0]["type"], "DisruptionTarget");

  // A second binding of the same pod is refused by the server: a Conflict, never a double bind.
  store::WriteOp again = ops[0];
  again.body["spec"]["nodeName"] = "n2";
  auto refused = o->store->Apply({again});
  ASSERT_FALSE(refused[0].ok());
  EXPECT_EQ(refused[0].status().code(), StatusCode::kConflict) << refused[0].status().message();
}

// Typed writes are the calls they name, whatever else the bodies would suggest: a status write is
// a status patch, an eviction a status patch and then a graceful DELETE.
TEST(KubeStore, TypedStatusAndEvictionWritesAreTheirCalls) {
  ApiServerOverHttp server;
  ASSERT_EQ(server.Call("POST", "/api/v1/nodes", {{"metadata", {{"name", "n1"}}}}).code, 201);
  for (const char* name : {"a", "b"}) ASSERT_EQ(server.Call("POST", "/api/v1/namespaces/default/pods", PodJson(name)).code, 201);
  ASSERT_EQ(server.Call("POST", "/api/v1/namespaces/default/pods/b/binding",
                        {{"metadata", {{"name", "b"}}}, {"target", {{"kind", "Node"}, {"name", "n1"}}}}).code, 201);
  auto o = Open(server);
  auto a = o->store->Get("pods", "default", "a");
  auto b = o->store->Get("pods", "default", "b");
  ASSERT_TRUE(a.ok() && b.ok());
  o->requests.clear();
  std::vector<store::WriteOp> ops = {PodUpdate(*a, store::WriteOp::Intent::kStatus),
                                     PodUpdate(*b, store::WriteOp::Intent::kEvict)};
  ops[0].body["status"]["nominatedNodeName"] = "n1";
  ops[1].body["status"]["conditions"] = Json::array({{{"type", "DisruptionTarget"}, {"status", "True"},
                                                      {"reason", "PreemptionByScheduler"}, {"message", "m"}}});
  ops[1].body["metadata"]["deletionTimestamp"] = "2026-12-03T10:00:30Z";
  ops[1].body["metadata"]["deletionGracePeriodSeconds"] = 30;
  auto results = o->store->Apply(ops);
  ASSERT_TRUE(results[0].ok()) << results[0].status().message();
  ASSERT_TRUE(results[1].ok()) << results[1].status().message();
  EXPECT_EQ(o->requests, (std::vector<std::string>{"PATCH /api/v1/namespaces/default/pods/a/status",
                                                   "PATCH /api/v1/namespaces/default/pods/b/status",
                                                   "DELETE /api/v1/namespaces/default/pods/b"}));
  EXPECT_EQ(Json::parse(server.Call("GET", "/api/v1/namespaces/default/pods/a").body)["status"]["nominatedNodeName"], "n1");
  const Json evicted = Json::parse(server.Call("GET", "/api/v1/namespaces/default/pods/b").body);
  EXPECT_TRUE(evicted["metadata"].contains("deletionTimestamp"));  // on a node: its grace period runs
  EXPECT_EQ(evicted["status"]["conditions"].back()["type"], "DisruptionTarget") << evicted["status"].dump();
}

// A pod that is already terminating leaves at once when the store deletes it (the kubelet's
// status manager ends a graceful deletion with gracePeriodSeconds 0); a plain DELETE would only
// start its grace period again.
TEST(KubeStore, DeletingATerminatingPodEndsItsGracePeriod) {
  ApiServerOverHttp server;
  ASSERT_EQ(server.Call("POST", "/api/v1/nodes", {{"metadata", {{"name", "n1"}}}}).code, 201);
  ASSERT_EQ(server.Call("POST", "/api/v1/namespaces/default/pods", PodJson("c")).code, 201);
  ASSERT_EQ(server.Call("POST", "/api/v1/namespaces/default/pods/c/binding",
                        {{"metadata", {{"name", "c"}}}, {"target", {{"kind", "Node"}, {"name", "n1"}}}}).code, 201);
  ASSERT_EQ(server.Call("DELETE", "/api/v1/namespaces/default/pods/c").code, 200);
  auto o = Open(server);
  auto c = o->store->Get("pods", "default", "c");
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c->body.tree())["metadata"].contains("deletionTimestamp"));  // terminating, for 30 s
  store::WriteOp del;
  del.kind = store::WriteOp::Kind::kDelete;
  del.resource = "pods";
  del.ns = "default";
  del.name = "c";
  del.known = c->body;
  del.expected_revision = c->revision;
  auto results = o->store->Apply({del});
  ASSERT_TRUE(results[0].ok()) << results[0].status().message();
  EXPECT_EQ(server.Call("GET", "/api/v1/namespaces/default/pods/c").code, 404);
}

TEST(KubeStore, ListsFollowContinueTokensAndAnUnservedCollectionIsEmpty) {
  // A server of an older version: /version, and nothing of the Workload API.
  httplib::Server old;
  old.Get("/version", [](const httplib::Request&, httplib::Response& res) { res.set_content("{}", "application/json"); });
  // Nodes in pages of `limit`, at the revision of the first page.
  old.Get("/api/v1/nodes", [](const httplib::Request& req, httplib::Response& res) {
    const size_t limit = std::stoul(req.get_param_value("limit"));
    const size_t from = req.has_param("continue") ? std::stoul(req.get_param_value("continue")) : 0;
    Json list = {{"kind", "NodeList"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", "42"}}}, {"items", Json::array()}};
    for (size_t i = from; i < std::min<size_t>(from + limit, 5); ++i) {
      list["items"].push_back({{"metadata", {{"name", "n" + std::to_string(i)}, {"resourceVersion", std::to_string(10 + i)}}}});
    }
    if (from + limit < 5) list["metadata"]["continue"] = std::to_string(from + limit);
    res.set_content(list.dump(), "application/json");
  });
  const int port = old.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { old.listen_after_bind(); });
  while (!old.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  KubeStoreOptions ko;
  ko.config.server = "http://127.0.0.1:" + std::to_string(port);
  ko.page = 2;
  std::vector<std::string> logged;
  ko.log = [&](const std::string& line) { logged.push_back(line); };
  auto st = OpenKubeStore(ko);
  ASSERT_TRUE(st.ok()) << st.status().message();
  auto nodes = (*st)->List("nodes", "");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->items.size(), 5u);
  EXPECT_EQ(nodes->revision, 42);
  EXPECT_EQ(nodes->items[4].revision, 14);
  EXPECT_EQ((*nodes->items[4].body.tree())["kind"], "Node");
  auto groups = (*st)->List("podgroups", "");
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  EXPECT_TRUE(groups->items.empty());
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("/apis/scheduling.k8s.io/v1beta1/podgroups is not served"), std::string::npos) << logged[0];
  auto w = (*st)->WatchFrom("podgroups", "", 0);
  ASSERT_TRUE(w.ok());
  auto next = (*w)->Next(std::chrono::milliseconds(10));
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next->empty());
  // A resource outside the API has no route.
  EXPECT_EQ((*st)->List("widgets", "").status().code(), StatusCode::kInvalidArgument);
  (*w)->Stop();
  st->reset();  // its keep-alive connections close, so that the server stops at once
  old.stop();
  serving.join();
}

TEST(KubeStore, EventsGoToEventsV1WithTheRecordersFields) {
  const Json core = {{"apiVersion", "v1"},
                     {"kind", "Event"},
                     {"metadata", {{"name", "web.1"}, {"namespace", "default"}, {"creationTimestamp", "2026-12-03T10:00:00Z"}}},
                     {"involvedObject", {{"kind", "Pod"}, {"name", "web"}}},
                     {"reason", "FailedScheduling"},
                     {"message", "0/1 nodes are available"},
                     {"type", "Warning"},
                     {"source", {{"component", "default-scheduler"}}},
                     {"reportingComponent", "default-scheduler"},
                     {"firstTimestamp", "2026-12-03T10:00:00Z"},
                     {"lastTimestamp", "2026-12-03T10:00:05Z"},
                     {"count", 2}};
  const Json e = EventsV1Event(core);
  EXPECT_EQ(e["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ(e["action"], "Scheduling");
  EXPECT_EQ(e["note"], "0/1 nodes are available");
  EXPECT_EQ(e["regarding"]["name"], "web");
  EXPECT_EQ(e["eventTime"], "2026-12-03T10:00:00.000000Z");
  EXPECT_EQ(e["series"], (Json{{"count", 2}, {"lastObservedTime", "2026-12-03T10:00:05.000000Z"}}));
  EXPECT_EQ(e["reportingController"], "default-scheduler");
  EXPECT_EQ(e["reportingInstance"].get<std::string>().rfind("default-scheduler-", 0), 0u);
  for (const char* gone : {"deprecatedSource", "deprecatedCount", "deprecatedFirstTimestamp", "deprecatedLastTimestamp"}) {
    EXPECT_FALSE(e.contains(gone)) << gone;
  }
  EXPECT_FALSE(e["metadata"].contains("creationTimestamp"));

  ApiServerOverHttp server;
  auto o = Open(server);
  o->requests.clear();
  Json first = core;
  first["count"] = 1;
  ASSERT_TRUE(o->store->Create("events", "default", "web.1", first).ok());
  ASSERT_TRUE(o->store->Update("events", "default", "web.1", core, 0).ok());
  EXPECT_EQ(o->requests, (std::vector<std::string>{"POST /apis/events.k8s.io/v1/namespaces/default/events",
                                                   "PATCH /apis/events.k8s.io/v1/namespaces/default/events/web.1"}));
  const Json stored = Json::parse(server.Call("GET", "/api/v1/namespaces/default/events/web.1").body);
  EXPECT_EQ(stored["series"]["count"], 2);
}

TEST(KubeStore, InProtobufListsWatchesAndBindingsGoAsInJson) {
  ApiServerOverHttp server;
  ASSERT_EQ(server.Call("POST", "/api/v1/nodes", {{"metadata", {{"name", "n1"}}}}).code, 201);
  ASSERT_EQ(server.Call("POST", "/api/v1/namespaces/default/pods", PodJson("a")).code, 201);
  auto o = Open(server, 500, /*protobuf=*/true);
  auto list = o->store->List("pods", "");
  ASSERT_TRUE(list.ok()) << list.status().message();
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ((*list->items[0].body.tree())["spec"]["containers"][0]["image"], "x");
  EXPECT_EQ((*list->items[0].body.tree())["kind"], "Pod");
  auto w = o->store->WatchFrom("pods", "", list->revision);
  ASSERT_TRUE(w.ok());
  store::WriteOp bind = PodUpdate(list->items[0], store::WriteOp::Intent::kBind);
  bind.body["spec"]["nodeName"] = "n1";
  auto r = o->store->Apply({bind});
  ASSERT_TRUE(r[0].ok()) << r[0].status().message();
  auto events = Collect(**w, 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]->type, store::EventType::kModified);
  EXPECT_EQ((*events[0]->object.body.tree())["spec"]["nodeName"], "n1");
  EXPECT_GT(events[0]->object.revision, list->revision);
  (*w)->Stop();
}

TEST(RateLimiter, ABurstGoesAtOnceThenTheRateHolds) {
  RateLimiter limiter(100, 5);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) limiter.Wait();
  const auto burst = std::chrono::steady_clock::now() - start;
  for (int i = 0; i < 10; ++i) limiter.Wait();
  const auto total = std::chrono::steady_clock::now() - start;
  // Five tokens were there; ten more at 100 a second take at least ~100 ms.
  EXPECT_LT(burst, std::chrono::milliseconds(50));
  EXPECT_GE(total, std::chrono::milliseconds(90));
  RateLimiter unlimited(0, 1);
  for (int i = 0; i < 1000; ++i) unlimited.Wait();
}

}  // namespace
}  // namespace arbiter::kubeclient
