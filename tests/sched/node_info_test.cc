// NodeInfo's aggregates under bulk removal: RemovePods leaves a node as RemovePod of each does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "arbiter/state/node_info.h"

namespace arbiter::state {
namespace {

model::Pod MakePod(const std::string& uid, int32_t priority, int64_t milli_cpu, bool in_group, bool anti_affinity,
                   int32_t host_port) {
  model::Pod p;
  p.ns = "default";
  p.name = uid;
  p.uid = uid;
  p.priority = priority;
  p.requests.milli_cpu = milli_cpu;
  p.requests.memory = milli_cpu * 1024 * 1024;
  p.non_zero_milli_cpu = milli_cpu;
  p.non_zero_memory = p.requests.memory;
  if (in_group) p.pod_group_name = "gang";
  if (anti_affinity) {
    model::PodAffinityTerm t;
    t.topology_key = "kubernetes.io/hostname";
    p.affinity.pod_anti_affinity.required.push_back(t);
  }
  if (host_port > 0) p.host_ports.push_back({host_port, "TCP", "0.0.0.0"});
  p.node_name = "n1";
  return p;
}

// Everything the framework reads of a node, printed, so that two nodes compare in one assertion.
std::string Aggregates(const NodeInfo& n) {
  std::string out;
  for (size_t i = 0; i < n.pods().size(); ++i) {
    const auto& s = n.pod_summaries()[i];
    out += n.pods()[i]->uid() + ":" + std::to_string(s.priority) + ":" + std::to_string(s.milli_cpu) +
           (s.in_group ? "g" : "") + " ";
  }
  out += "| cpu " + std::to_string(n.requested().milli_cpu) + " mem " + std::to_string(n.requested().memory) +
         " nz " + std::to_string(n.non_zero_cpu()) + "/" + std::to_string(n.non_zero_memory());
  out += " | affinity";
  for (const auto& p : n.pods_with_affinity()) out += " " + p->uid();
  out += " | anti";
  for (const auto& p : n.pods_with_required_anti_affinity()) out += " " + p->uid();
  out += " | ports";
  for (const auto& hp : n.used_ports()) out += " " + std::to_string(hp.port);
  out += n.has_group_members() ? " | group members" : " | no group members";
  for (int32_t below : {0, 10, 100, 1000, 2000}) {
    const NodeInfo::Room r = n.RoomBelow(below);
    out += " | below " + std::to_string(below) + ": " + std::to_string(r.pods) + " pods " +
           std::to_string(r.milli_cpu) + "m";
  }
  return out;
}

TEST(NodeInfo, RemovingPodsInOnePassLeavesTheNodeAsRemovingEachInTurn) {
  model::Node node;
  node.name = "n1";
  node.allocatable.milli_cpu = 64000;
  node.allocatable.memory = 256LL << 30;
  node.allocatable.pods = 110;
  NodeInfo one_by_one(std::make_shared<const model::Node>(node));
  std::vector<PodInfoPtr> pods;
  for (int i = 0; i < 12; ++i) {
    pods.push_back(MakePodInfo(MakePod("p" + std::to_string(i), (i % 4) * 100, 100 + 10 * i, i % 5 == 0, i % 3 == 0,
                                       i % 4 == 1 ? 8080 : 0)));
    one_by_one.AddPod(pods.back());
  }
  NodeInfo in_bulk = one_by_one;
  // Every other pod, a group member, a pod with anti-affinity, two sharing a host port, and a pod
  // that is not on the node (removed by neither).
  const PodInfoPtr stranger = MakePodInfo(MakePod("elsewhere", 0, 100, false, false, 0));
  std::vector<const PodInfo*> gone = {pods[9].get(), pods[0].get(), pods[5].get(), pods[3].get(),
                                      pods[1].get(), stranger.get(), pods[11].get()};
  for (const PodInfo* p : gone) one_by_one.RemovePod(p->uid());
  const uint64_t before = in_bulk.generation();
  EXPECT_EQ(in_bulk.RemovePods(gone), 6u);
  EXPECT_NE(in_bulk.generation(), before);
  EXPECT_EQ(Aggregates(in_bulk), Aggregates(one_by_one));

  // Nothing of the list on the node: the node, its generation included, is unchanged.
  const uint64_t unchanged = in_bulk.generation();
  const std::vector<const PodInfo*> none = {stranger.get(), pods[0].get()};
  EXPECT_EQ(in_bulk.RemovePods(none), 0u);
  EXPECT_EQ(in_bulk.generation(), unchanged);
}

}  // namespace
}  // namespace arbiter::state
