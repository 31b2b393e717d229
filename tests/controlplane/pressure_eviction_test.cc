// The simulated kubelets' node-pressure evictions on a memory store and a virtual clock: the pod
// the kubelet ranks first is failed as the kubelet fails it, with its event, once.
#include "arbiter/controlplane/pressure_eviction.h"

#include <gtest/gtest.h>

#include "arbiter/controlplane/pod_json.h"

namespace arbiter::controlplane {
namespace {

using Json = nlohmann::json;
constexpr Timestamp kT0PressureEviction = 1'800'000'000LL * kSecond;

struct Kubelets {
  std::unique_ptr<store::Store> store = store::NewMemoryStore();
  VirtualClock clock{kT0PressureEviction};
  WriteBatch batch{*store};
  EventRecorder events{*store, clock};
  std::map<std::pair<std::string, int64_t>, manifest::LoadResult> decoded;
  std::vector<std::string> log;
  PressureEviction eviction{batch, events, clock, model::KubeletConfig::Defaults(),
                            [this](const store::Object& o) -> const manifest::LoadResult& {
                              return decoded[{o.resource + "/" + o.ns + "/" + o.name, o.revision}] =
                                         manifest::DecodeJson(o.resource + "/" + o.name, *o.body.tree());
                            },
                            [this](const std::string& msg, const std::string& kv) { log.push_back(msg + " " + kv); }};
  store::Informer nodes{*store, "nodes"}, pods{*store, "pods"}, metrics{*store, "podmetrics.metrics.k8s.io"};

  void Pass() {
    for (store::Informer* i : {&nodes, &pods, &metrics}) ASSERT_TRUE(i->Sync().ok());
    eviction.Run(nodes, pods, metrics);
    Status st = batch.Flush();
    ASSERT_TRUE(st.ok()) << st.message();
    st = events.Flush();
    ASSERT_TRUE(st.ok()) << st.message();
  }
  void Pod(const std::string& name, const std::string& memory, int priority) {
    Json p = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
              {"spec", {{"nodeName", "n1"}, {"priority", priority},
                        {"containers", Json::array({{{"name", "app"}, {"image", "x"},
                                                      {"resources", {{"requests", {{"memory", memory}}}}}}})}}},
              {"status", {{"phase", "Running"},
                          {"containerStatuses", Json::array({{{"name", "app"}, {"ready", true},
                                                              {"state", {{"running", Json::object()}}}}})}}}};
    ASSERT_TRUE(store->Create("pods", "default", name, p).ok());
  }
  void Usage(const std::string& name, const std::string& memory) {
    Json m = {{"apiVersion", "metrics.k8s.io/v1beta1"},
              {"kind", "PodMetrics"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"containers", Json::array({{{"name", "app"}, {"usage", {{"cpu", "10m"}, {"memory", memory}}}}})}};
    ASSERT_TRUE(store->Create("podmetrics.metrics.k8s.io", "default", name, m).ok());
  }
  Json Get(const std::string& name) { return store->Get("pods", "default", name).value().body.Copy(); }
  int Evictions() {
    auto list = store->List("events", "default");
    EXPECT_TRUE(list.ok());
    int n = 0;
    if (list.ok()) {
      for (const auto& e : list->items) n += e.body->value("reason", "") == "Evicted";
    }
    return n;
  }
};

TEST(PressureEviction, ThePodAboveItsRequestGoesFirstEvenAtHigherPriority) {
  Kubelets k;
  Json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}},
               {"status", {{"capacity", {{"cpu", "8"}, {"memory", "1Gi"}, {"pods", "110"}}}}}};
  ASSERT_TRUE(k.store->Create("nodes", "", "n1", node).ok());
  k.Pod("greedy-high", "100Mi", 1000);
  k.Pod("modest-low", "600Mi", 0);
  k.Pass();  // no metrics yet: nothing to go on
  EXPECT_EQ(std::string(StringAt(k.Get("greedy-high"), "status", "phase")), "Running");
  // 400Mi + 550Mi used of 1Gi leaves 74Mi, under the kubelet's default 100Mi threshold.
  k.Usage("greedy-high", "400Mi");
  k.Usage("modest-low", "550Mi");
  k.Pass();
  const Json evicted = k.Get("greedy-high");
  EXPECT_EQ(evicted["status"]["phase"], "Failed");
  EXPECT_EQ(evicted["status"]["reason"], "Evicted");
  EXPECT_EQ(evicted["status"]["message"],
            "The node was low on resource: memory. Threshold quantity: 100Mi, available: 74Mi. "
            "Container app was using 400Mi, request is 100Mi, has larger consumption of memory. ");
  EXPECT_TRUE(evicted["status"]["containerStatuses"][0]["state"].contains("terminated"));
  EXPECT_EQ(evicted["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 137);
  bool disrupted = false;
  for (const Json& c : evicted["status"]["conditions"]) {
    disrupted |= c["type"] == "DisruptionTarget" && c["reason"] == "TerminationByKubelet" && c["status"] == "True";
  }
  EXPECT_TRUE(disrupted);
  EXPECT_EQ(std::string(StringAt(k.Get("modest-low"), "status", "phase")), "Running");
  EXPECT_EQ(k.Evictions(), 1);
  EXPECT_EQ(k.log.size(), 1u);
  // A failed pod is not evicted again.
  k.clock.Advance(10 * kSecond);
  k.Pass();
  EXPECT_EQ(k.Evictions(), 1);
}

}  // namespace
}  // namespace arbiter::controlplane
