// The simulated nodes of `arbiter serve`: pod CIDRs and addresses per node, pod IPs unique on a
// node and freed when the pod ends, node Leases renewed on the clock, Killing events.
#include "arbiter/controlplane/node_simulator.h"

#include <set>

#include <gtest/gtest.h>

namespace arbiter::controlplane {
namespace {

using Json = nlohmann::json;
constexpr Timestamp kT0NodeSimulator = 1'800'000'000LL * kSecond;

struct Sim {
  std::unique_ptr<store::Store> store = store::NewMemoryStore();
  VirtualClock clock{kT0NodeSimulator};
  std::vector<std::string> events;  // "reason pod message"
  WriteBatch batch{*store};
  NodeSimulator sim{batch, clock, NodeSimOptions{},
                    [this](const std::string&, const std::string& pod, const std::string&, const std::string&,
                           const std::string& reason, const std::string& message, const std::string&,
                           const std::string&) {
                      events.push_back(reason + " " + pod + " " + message);
                      return Status::Ok();
                    }};
  store::Informer nodes{*store, "nodes"}, pods{*store, "pods"}, leases{*store, "leases"};

  void Pass() {
    ASSERT_TRUE(nodes.Sync().ok());
    ASSERT_TRUE(pods.Sync().ok());
    ASSERT_TRUE(leases.Sync().ok());
    Status s = sim.Run(nodes, pods, leases);
    ASSERT_TRUE(s.ok()) << s.message();
    s = batch.Flush();
    ASSERT_TRUE(s.ok()) << s.message();
  }
  void Node(const std::string& name) {
    ASSERT_TRUE(store->Create("nodes", "", name, {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}, {"uid", "u-" + name}}}}).ok());
  }
  void Pod(const std::string& name, const std::string& node) {
    Json p = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "p-" + name}}},
              {"spec", {{"nodeName", node}, {"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}},
              {"status", {{"phase", "Pending"}}}};
    ASSERT_TRUE(store->Create("pods", "default", name, p).ok());
  }
  Json Get(const std::string& resource, const std::string& ns, const std::string& name) {
    return store->Get(resource, ns, name).value().body.Copy();
  }
};

TEST(NodeSimulator, NodesGetDistinctPodCidrsAddressesAndReadiness) {
  Sim s;
  for (const char* n : {"a", "b", "c"}) s.Node(n);
  s.Pass();
  std::set<std::string> cidrs, ips;
  for (const char* n : {"a", "b", "c"}) {
    Json node = s.Get("nodes", "", n);
    cidrs.insert(node["spec"]["podCIDR"].get<std::string>());
    for (const Json& a : node["status"]["addresses"]) {
      if (a["type"] == "InternalIP") ips.insert(a["address"].get<std::string>());
    }
    bool ready = false;
    for (const Json& c : node["status"]["conditions"]) {
      EXPECT_EQ(c["lastHeartbeatTime"], FormatRfc3339(kT0NodeSimulator));
      ready = ready || (c["type"] == "Ready" && c["status"] == "True");
    }
    EXPECT_TRUE(ready);
    EXPECT_EQ(node["status"]["nodeInfo"]["operatingSystem"], "linux");
  }
  EXPECT_EQ(cidrs, (std::set<std::string>{"10.64.0.0/24", "10.64.1.0/24", "10.64.2.0/24"}));
  EXPECT_EQ(ips, (std::set<std::string>{"10.0.0.1", "10.0.0.2", "10.0.0.3"}));
}

TEST(NodeSimulator, PodIpsAreUniqueOnANodeAndFreedWhenAPodEnds) {
  Sim s;
  s.Node("a");
  s.Pass();
  for (int i = 0; i < 200; ++i) s.Pod("p" + std::to_string(i), "a");
  s.Pass();
  std::set<std::string> ips;
  for (int i = 0; i < 200; ++i) {
    Json p = s.Get("pods", "default", "p" + std::to_string(i));
    EXPECT_EQ(p["status"]["phase"], "Running");
    EXPECT_EQ(p["status"]["hostIP"], "10.0.0.1");
    ips.insert(p["status"]["podIP"].get<std::string>());
  }
  EXPECT_EQ(ips.size(), 200u);
  EXPECT_TRUE(ips.contains("10.64.0.2"));
  // p0 ends; its address is the lowest free one and goes to the next pod.
  Json p0 = s.Get("pods", "default", "p0");
  const std::string freed = p0["status"]["podIP"];
  ASSERT_TRUE(s.store->Delete("pods", "default", "p0", 0).ok());
  s.Pod("late", "a");
  s.Pass();
  s.Pass();
  EXPECT_EQ(s.Get("pods", "default", "late")["status"]["podIP"], freed);
}

// A pass looks only at the pods that changed; what cannot happen yet is kept for later passes.
TEST(NodeSimulator, APodBoundBeforeItsNodeExistsStartsOnceTheNodeIsThereWithoutChangingItself) {
  Sim s;
  s.Pod("early", "late-node");
  s.Pass();
  EXPECT_EQ(s.Get("pods", "default", "early")["status"]["phase"], "Pending");
  s.Node("late-node");
  s.Pass();  // the node is initialised (pod CIDR, address)
  s.Pass();  // then the pod, unchanged since the first pass, starts
  EXPECT_EQ(s.Get("pods", "default", "early")["status"]["phase"], "Running");
  EXPECT_EQ(s.Get("pods", "default", "early")["status"]["podIP"], "10.64.0.2");
}

// A start that lost a race (the pod changed after the simulator saw it) is made again on the
// pod's new version, and the address it had taken is not leaked.
TEST(NodeSimulator, AStartThatLostARaceIsMadeAgainAndItsAddressIsNotLeaked) {
  Sim s;
  s.Node("a");
  s.Pass();
  s.Pod("p", "a");
  ASSERT_TRUE(s.nodes.Sync().ok());
  ASSERT_TRUE(s.pods.Sync().ok());
  ASSERT_TRUE(s.leases.Sync().ok());
  ASSERT_TRUE(s.sim.Run(s.nodes, s.pods, s.leases).ok());  // queued on the version seen
  Json p = s.Get("pods", "default", "p");
  p["metadata"]["labels"] = {{"changed", "yes"}};
  ASSERT_TRUE(s.store->Update("pods", "default", "p", p, 0).ok());
  ASSERT_TRUE(s.batch.Flush().ok());  // refused as stale
  EXPECT_EQ(s.Get("pods", "default", "p")["status"]["phase"], "Pending");
  s.Pass();
  const Json started = s.Get("pods", "default", "p");
  EXPECT_EQ(started["status"]["phase"], "Running");
  EXPECT_EQ(started["status"]["podIP"], "10.64.0.2");
  EXPECT_EQ(started["metadata"]["labels"]["changed"], "yes");
}

TEST(NodeSimulator, LeasesAreCreatedAndRenewedOnTheClock) {
  Sim s;
  s.Node("a");
  s.Pass();
  s.Pass();
  Json lease = s.Get("leases", "kube-node-lease", "a");
  EXPECT_EQ(lease["spec"]["holderIdentity"], "a");
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"], 40);
  EXPECT_EQ(lease["metadata"]["ownerReferences"][0]["kind"], "Node");
  const std::string first = lease["spec"]["renewTime"];
  s.clock.Advance(5 * kSecond);
  s.Pass();
  EXPECT_EQ(s.Get("leases", "kube-node-lease", "a")["spec"]["renewTime"], first);
  s.clock.Advance(5 * kSecond);
  s.Pass();
  EXPECT_NE(s.Get("leases", "kube-node-lease", "a")["spec"]["renewTime"], first);
  // The status report follows every 5 minutes.
  s.clock.Advance(5 * kMinute);
  s.Pass();
  const Json node = s.Get("nodes", "", "a");  // a range-for over a temporary's member would dangle
  for (const Json& c : node["status"]["conditions"]) {
    EXPECT_EQ(c["lastHeartbeatTime"], FormatRfc3339(s.clock.Now() / kSecond * kSecond));
    EXPECT_EQ(c["lastTransitionTime"], FormatRfc3339(kT0NodeSimulator));
  }
  ASSERT_TRUE(s.store->Delete("nodes", "", "a", 0).ok());
  s.Pass();
  EXPECT_FALSE(s.store->Get("leases", "kube-node-lease", "a").ok());
}

TEST(NodeSimulator, AStoppedNodeRenewsNothingUntilItIsStartedAgain) {
  Sim s;
  s.Node("a");
  s.Node("b");
  s.Pass();
  s.Pass();
  const Json first = s.Get("leases", "kube-node-lease", "a")["spec"]["renewTime"];
  Json node = s.Get("nodes", "", "a");
  node["metadata"]["annotations"] = {{"arbiter.dev/stopped", "true"}};
  ASSERT_TRUE(s.store->Update("nodes", "", "a", node, 0).ok());
  s.clock.Advance(6 * kMinute);
  s.Pass();
  EXPECT_EQ(s.Get("leases", "kube-node-lease", "a")["spec"]["renewTime"], first);
  EXPECT_NE(s.Get("leases", "kube-node-lease", "b")["spec"]["renewTime"], first) << "the running node renews";
  const Json stopped = s.Get("nodes", "", "a");
  for (const Json& c : stopped["status"]["conditions"]) EXPECT_EQ(c["lastHeartbeatTime"], FormatRfc3339(kT0NodeSimulator));
  node = s.Get("nodes", "", "a");
  node["metadata"]["annotations"] = Json::object();
  ASSERT_TRUE(s.store->Update("nodes", "", "a", node, 0).ok());
  s.Pass();
  EXPECT_EQ(s.Get("leases", "kube-node-lease", "a")["spec"]["renewTime"],
            s.Get("leases", "kube-node-lease", "b")["spec"]["renewTime"]);
  const Json started = s.Get("nodes", "", "a");
  for (const Json& c : started["status"]["conditions"]) {
    EXPECT_EQ(c["lastHeartbeatTime"], FormatRfc3339(s.clock.Now() / kSecond * kSecond));
  }
}

TEST(NodeSimulator, ATerminatingPodGetsOneKillingEventPerContainer) {
  Sim s;
  s.Node("a");
  s.Pass();
  s.Pod("p", "a");
  s.Pass();
  Json p = s.Get("pods", "default", "p");
  p["metadata"]["deletionTimestamp"] = FormatRfc3339(kT0NodeSimulator + 30 * kSecond);
  ASSERT_TRUE(s.store->Update("pods", "default", "p", p, 0).ok());
  s.Pass();
  s.Pass();
  EXPECT_EQ(s.events, (std::vector<std::string>{"Killing p Stopping container c"}));
  s.clock.Advance(30 * kSecond);
  s.Pass();
  EXPECT_FALSE(s.store->Get("pods", "default", "p").ok());
}

}  // namespace
}  // namespace arbiter::controlplane
