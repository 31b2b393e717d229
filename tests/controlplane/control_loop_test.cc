// The control loop as a whole, on a memory store and a virtual clock: its jobs in one pass.
#include "arbiter/controlplane/control_loop.h"

#include "arbiter/controlplane/pod_json.h"
#include "testing/forwarding_store.h"

#include <chrono>
#include <map>
#include <thread>

#include <gtest/gtest.h>

namespace arbiter::controlplane {
namespace {

using Json = nlohmann::json;
constexpr Timestamp kT0ControlLoop = 1'800'000'000LL * kSecond;

TEST(ControlLoop, ARepeatedFailureCountsUpOnOneEventAsTheEventRecorderDoes) {
  auto store = store::NewMemoryStore();
  VirtualClock clock(kT0ControlLoop);
  LoopOptions o;
  o.simulate_nodes = false;
  ControlLoop loop(*store, clock, o);
  Json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}},
               {"status", {{"allocatable", {{"cpu", "1"}, {"memory", "1Gi"}, {"pods", "10"}}}}}};
  ASSERT_TRUE(store->Create("nodes", "", "n1", node).ok());
  Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "default"}, {"uid", "uid-p"}}},
              {"spec", {{"schedulerName", "default-scheduler"},
                        {"containers", Json::array({{{"name", "c"}, {"image", "x"},
                                                      {"resources", {{"requests", {{"cpu", "2"}}}}}}})}}}};
  ASSERT_TRUE(store->Create("pods", "default", "p", pod).ok());
  auto failures = [&] {
    std::vector<Json> out;
    auto list = store->List("events", "default");
    EXPECT_TRUE(list.ok());
    if (!list.ok()) return out;
    for (const auto& e : list->items) {
      if (e.body->value("reason", "") == "FailedScheduling") out.push_back(*e.body.tree());
    }
    return out;
  };
  ASSERT_TRUE(loop.RunOnce().ok());
  ASSERT_EQ(failures().size(), 1u);
  EXPECT_EQ(failures()[0]["count"], 1);
  // The unschedulable pool's flush (5 minutes) retries the pod; it fails the same way again.
  clock.Advance(6 * kMinute);
  ASSERT_TRUE(loop.RunOnce().ok());
  ASSERT_TRUE(loop.RunOnce().ok());
  const auto after = failures();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_GE(after[0]["count"].get<int>(), 2);
  EXPECT_EQ(after[0]["lastTimestamp"], FormatRfc3339(kT0ControlLoop + 6 * kMinute));
  EXPECT_EQ(after[0]["firstTimestamp"], FormatRfc3339(kT0ControlLoop));
}

}  // namespace
}  // namespace arbiter::controlplane

namespace arbiter::controlplane {
namespace {

// The node agents on their own thread: they act only while the loop leads (after a pass, until
// Pause), and the scheduler binds what they report Ready.
TEST(ControlLoop, NodeAgentsOnTheirOwnThreadActOnlyWhileTheLoopLeads) {
  auto store = store::NewMemoryStore();
  SystemClock clock;
  LoopOptions o;
  o.node_thread = true;
  ControlLoop loop(*store, clock, o);
  Json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}, {"uid", "u-n1"}}},
               {"status", {{"allocatable", {{"cpu", "1"}, {"memory", "1Gi"}, {"pods", "10"}}}}}};
  ASSERT_TRUE(store->Create("nodes", "", "n1", node).ok());
  auto ready = [&] {
    auto n = store->Get("nodes", "", "n1");
    return n.ok() && !StringAt(*n->body.tree(), "spec", "podCIDR").empty();
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(ready());  // not leading yet: nothing is simulated
  Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "default"}, {"uid", "uid-p"}}},
              {"spec", {{"schedulerName", "default-scheduler"},
                        {"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}},
              {"status", {{"phase", "Pending"}}}};
  ASSERT_TRUE(store->Create("pods", "default", "p", pod).ok());
  auto running = [&] {
    auto p = store->Get("pods", "default", "p");
    return p.ok() && StringAt(*p->body.tree(), "status", "phase") == "Running";
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!running() && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(loop.RunOnce().ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(ready());
  EXPECT_TRUE(running());
  EXPECT_EQ(NodeOf(store->Get("pods", "default", "p")->body.Copy()), "n1");
}

}  // namespace
}  // namespace arbiter::controlplane

namespace arbiter::controlplane {
namespace {

// Forwards to a memory store and counts the watches opened on each resource.
class WatchCountingStore : public test_support::ForwardingMemoryStore {
 public:
  std::map<std::string, int> watches;

  StatusOr<std::unique_ptr<store::Watch>> WatchFrom(const std::string& r, const std::string& ns, int64_t from,
                                                    store::WatchOptions options = {}) override {
    ++watches[r];
    return ForwardingMemoryStore::WatchFrom(r, ns, from, options);
  }
};

// Inline, the node agents read the loop's own informers: one watch of pods and of nodes (with
// etcd, one stream each instead of two), and a pod the agents start is still scheduled and run.
TEST(ControlLoop, InlineNodeAgentsShareTheLoopsWatchesOfPodsAndNodes) {
  for (bool node_thread : {false, true}) {
    SCOPED_TRACE(node_thread ? "node agents on their own thread" : "node agents inline");
    WatchCountingStore store;
    VirtualClock clock(kT0ControlLoop);
    LoopOptions o;
    o.node_thread = node_thread;
    {
      ControlLoop loop(store, clock, o);
      Json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}},
                   {"status", {{"allocatable", {{"cpu", "4"}, {"memory", "4Gi"}, {"pods", "10"}}}}}};
      ASSERT_TRUE(store.Create("nodes", "", "n1", node).ok());
      Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"},
                  {"metadata", {{"name", "p"}, {"namespace", "default"}, {"uid", "uid-p"}}},
                  {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}},
                  {"status", {{"phase", "Pending"}}}};  // as the API server creates it
      ASSERT_TRUE(store.Create("pods", "default", "p", pod).ok());
      for (int i = 0; i < 50; ++i) {
        ASSERT_TRUE(loop.RunOnce().ok());
        auto p = store.Get("pods", "default", "p");
        ASSERT_TRUE(p.ok());
        if ((*p->body.tree())["status"].value("phase", "") == "Running") break;
        clock.Advance(kSecond);
        if (node_thread) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      auto p = store.Get("pods", "default", "p");
      ASSERT_TRUE(p.ok());
      EXPECT_EQ((*p->body.tree())["spec"].value("nodeName", ""), "n1");
      EXPECT_EQ((*p->body.tree())["status"].value("phase", ""), "Running");
    }
    EXPECT_EQ(store.watches["pods"], node_thread ? 2 : 1);
    EXPECT_EQ(store.watches["nodes"], node_thread ? 2 : 1);
  }
}

}  // namespace
}  // namespace arbiter::controlplane
