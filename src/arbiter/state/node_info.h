// PodInfo and NodeInfo: the per-pod and per-node aggregates the scheduling framework reads.
//
// A PodInfo is immutable once built and shared by pointer between the cache, snapshots and
// preemption dry runs; a change to a pod (a nomination, a deletion timestamp) makes a new one.
// A NodeInfo is a value: copying it is how snapshots and dry runs get a private view, and its
// aggregates are kept up to date incrementally by AddPod and RemovePod.
//
// Invariants of NodeInfo:
//   1. `requested` is the sum of `requests` of `pods`; `non_zero_*` the same with the
//      scheduler's defaults for pods that request no CPU or memory.
//   2. `pods_with_affinity` ⊆ `pods` holds the pods with any pod affinity or anti-affinity term;
//      `pods_with_required_anti_affinity` ⊆ that, those with a required anti-affinity term.
//   3. `used_ports` holds the host ports of `pods`, one entry per pod and port.
//   4. `generation` changes on every change, to a number no NodeInfo has had (NextGeneration).
//   5. `shares` holds, per priority in increasing order, the requests and the number of the pods
//      of that priority in no pod group (no entry with no pod); `group_share` the same for the pod
//      group members, whatever their priority.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "arbiter/model/objects.h"

namespace arbiter::state {

// A fresh generation number, unique across all NodeInfos of the process.
uint64_t NextGeneration();

struct PodInfo {
  model::Pod pod;
  // Requests that scoring uses: a pod without a CPU or memory request counts the defaults.
  int64_t non_zero_cpu = 0;
  int64_t non_zero_memory = 0;
  bool has_pod_affinity_terms = false;
  bool has_required_anti_affinity = false;
  uint64_t uid_hash = 0;  // std::hash of the UID, to tell pods apart without comparing strings

  explicit PodInfo(model::Pod p);
  const std::string& uid() const { return pod.uid; }
};
using PodInfoPtr = std::shared_ptr<const PodInfo>;

inline PodInfoPtr MakePodInfo(model::Pod pod) { return std::make_shared<const PodInfo>(std::move(pod)); }

class NodeInfo {
 public:
  NodeInfo() = default;
  explicit NodeInfo(std::shared_ptr<const model::Node> node) { set_node(std::move(node)); }

  const model::Node& node() const { return *node_; }
  const std::shared_ptr<const model::Node>& node_ptr() const { return node_; }
  void set_node(std::shared_ptr<const model::Node> node) {
    node_ = std::move(node);
    allocatable_ = node_->allocatable;
    unschedulable_ = node_->unschedulable;
    has_taints_ = !node_->taints.empty();
    generation_ = NextGeneration();
  }
  const std::string& name() const { return node_->name; }
  // Copies of the node's fields that every Filter and Score reads, kept beside the aggregates
  // so the hot loop touches one object per node.
  const model::Resources& allocatable() const { return allocatable_; }
  bool unschedulable() const { return unschedulable_; }
  bool has_taints() const { return has_taints_; }

  const std::vector<PodInfoPtr>& pods() const { return pods_; }
  // What preemption's resource-only dry run reads of each pod, parallel to pods(): kept inline
  // so that looking at a node's pods costs no visit to each pod.
  struct PodSummary {
    int32_t priority = 0;
    bool has_start = false;
    Timestamp start = 0;
    int64_t milli_cpu = 0;
    int64_t memory = 0;
    int64_t ephemeral_storage = 0;
    bool has_scalars = false;
    bool in_group = false;  // spec.schedulingGroup names a PodGroup: its effective priority may not be its own
  };
  const std::vector<PodSummary>& pod_summaries() const { return summaries_; }
  // What a preemptor of `priority` could at most make room for by evicting pods of this node:
  // the requests and the number of every pod of lower priority and of every pod group member
  // (whose effective priority is its group's, which the node does not know). Every victim rule
  // takes pods of strictly lower (effective) priority only, so no victim set frees more.
  struct Room {
    int64_t milli_cpu = 0;
    int64_t memory = 0;
    int64_t ephemeral_storage = 0;
    int64_t pods = 0;
  };
  Room RoomBelow(int32_t priority) const {
    Room r = group_share_;
    for (const PriorityShare& s : shares_) {
      if (s.priority >= priority) break;
      r.milli_cpu += s.room.milli_cpu;
      r.memory += s.room.memory;
      r.ephemeral_storage += s.room.ephemeral_storage;
      r.pods += s.room.pods;
    }
    return r;
  }
  // Whether `pod` could fit by CPU, memory, ephemeral storage and pod count with every pod that
  // could be its victim gone (state::FitsResources over what RoomBelow frees; extended resources
  // are not looked at, which only says yes more often). No: no victim set of this node makes room.
  bool CouldMakeRoomFor(const model::Pod& pod) const;
  // True if some pod on the node belongs to a pod group (spec.schedulingGroup).
  bool has_group_members() const { return group_members_ > 0; }
  const std::vector<PodInfoPtr>& pods_with_affinity() const { return pods_with_affinity_; }
  const std::vector<PodInfoPtr>& pods_with_required_anti_affinity() const {
    return pods_with_required_anti_affinity_;
  }
  const model::Resources& requested() const { return requested_; }
  int64_t non_zero_cpu() const { return non_zero_cpu_; }
  int64_t non_zero_memory() const { return non_zero_memory_; }
  const std::vector<model::HostPort>& used_ports() const { return used_ports_; }
  uint64_t generation() const { return generation_; }
  // A pending pod nominated to this node, with the fields filtering compares kept inline so
  // that skipping it costs no visit to the pod.
  struct Nominated {
    int32_t priority = 0;
    uint64_t uid_hash = 0;
    int64_t milli_cpu = 0;
    int64_t memory = 0;
    int64_t ephemeral_storage = 0;
    bool has_scalars = false;
    PodInfoPtr pod;
  };
  // Pods nominated to this node, in nomination order (a mirror of the Nominator, kept here so
  // that filtering reads it without a lookup).
  const std::vector<Nominated>& nominated_pods() const { return nominated_pods_; }
  void SetNominatedPods(const std::vector<PodInfoPtr>& pods);
  // The nominated pods with priority >= the pod's, other than the pod itself, appended to `out`
  // (a caller's scratch buffer, so that the common case allocates nothing).
  template <typename Out>
  void NominatedAtLeast(const PodInfo& pod, Out& out) const {
    for (const auto& n : nominated_pods_) {
      if (n.priority < pod.pod.priority) continue;
      if (n.uid_hash == pod.uid_hash && n.pod->uid() == pod.uid()) continue;  // the pod itself
      out.push_back(&n);
    }
  }

  void AddPod(PodInfoPtr pod);
  // Removes the pod with this UID; returns false if it is not on the node.
  bool RemovePod(const std::string& uid);
  // Removes each pod of `gone` that is on the node (by UID), in one pass over the node's
  // pods: the node is as RemovePod of each in turn leaves it. Returns how many were removed.
  size_t RemovePods(std::span<const PodInfo* const> gone);

 private:
  model::Resources requested_;
  model::Resources allocatable_;
  int64_t non_zero_cpu_ = 0;
  int64_t non_zero_memory_ = 0;
  bool unschedulable_ = false;
  bool has_taints_ = false;
  std::shared_ptr<const model::Node> node_;
  std::vector<PodInfoPtr> pods_;
  std::vector<PodSummary> summaries_;
  std::vector<PodInfoPtr> pods_with_affinity_;
  std::vector<PodInfoPtr> pods_with_required_anti_affinity_;
  std::vector<model::HostPort> used_ports_;
  std::vector<Nominated> nominated_pods_;
  uint32_t group_members_ = 0;
  struct PriorityShare {
    int32_t priority = 0;
    Room room;
  };
  std::vector<PriorityShare> shares_;  // invariant 5
  Room group_share_;
  // Takes `pod` out of every aggregate but `pods` and `summaries` (RemovePod's bookkeeping).
  void Forget(const PodInfo& pod);
  // Counts `p` in (sign +1) or out of (-1) the shares.
  void Share(const model::Pod& p, int sign);
  uint64_t generation_ = 0;
};

// True if `want` conflicts with a port in `used` (same protocol and port, and the same host IP
// or either one is the wildcard 0.0.0.0), as NodePorts checks.
bool HostPortConflicts(const std::vector<model::HostPort>& used, const model::HostPort& want);

}  // namespace arbiter::state
