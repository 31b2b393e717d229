// The control loop as a whole, on a memory store and a virtual clock: its jobs in one pass.
#include "arbiter/controlplane/control_loop.h"

#include "arbiter/controlplane/pod_json.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace arbiter::controlplane {
namespace {

using Json = nlohmann::json;
constexpr Timestamp kT0 = 1'800'000'000LL * kSecond;

TEST(ControlLoop, ARepeatedFailureCountsUpOnOneEventAsTheEventRecorderDoes) {
  auto store = store::NewMemoryStore();
  VirtualClock clock(kT0);
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
      if (e.body.value("reason", "") == "FailedScheduling") out.push_back(e.body);
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
  EXPECT_EQ(after[0]["lastTimestamp"], FormatRfc3339(kT0 + 6 * kMinute));
  EXPECT_EQ(after[0]["firstTimestamp"], FormatRfc3339(kT0));
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
    return n.ok() && !StringAt(n->body, "spec", "podCIDR").empty();
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
    return p.ok() && StringAt(p->body, "status", "phase") == "Running";
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!running() && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(loop.RunOnce().ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(ready());
  EXPECT_TRUE(running());
  EXPECT_EQ(NodeOf(store->Get("pods", "default", "p")->body), "n1");
}

}  // namespace
}  // namespace arbiter::controlplane
