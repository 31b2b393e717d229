// The volume plugins of kube-scheduler's default profile, reading the claims, volumes, classes
// and CSI nodes of Handle::storage(). Each skips (PreFilter Skip) a pod without claims, so pods
// without volumes cost nothing and keep every fast path. Reasons and messages are upstream's,
// word for word.
//
//   VolumeRestrictions  a ReadWriteOncePod claim already used by a pod anywhere in the cluster:
//                       Unschedulable on every node (so preemption may evict its holder; the
//                       PreFilter extensions count the holder out on a dry run).
//   NodeVolumeLimits    the node's CSI attach limits (CSINode spec.drivers[].allocatable.count):
//                       the pod's new volumes of a driver, plus those the node's pods hold,
//                       within the limit. Unschedulable.
//   VolumeBinding       bound claims follow their volume's node affinity; unbound
//                       WaitForFirstConsumer claims need, per node, a matching available volume
//                       (smallest first) or a class that can provision there; an unbound claim
//                       of an Immediate class keeps the pod pending. UnschedulableAndUnresolvable.
//                       Reserve records the choice (a static binding, or the node selected for
//                       provisioning) in the storage index, as the scheduler's assume cache does.
//   VolumeZone          a bound volume's zone and region labels must match the node's.
//                       UnschedulableAndUnresolvable.
//
// Not modelled: inline cloud disks (VolumeRestrictions' disk conflicts), CSIStorageCapacity
// (a class's provisioner is taken to have room, as upstream does without a CSIDriver object),
// in-tree volume migration, and VolumeBinding's capacity scoring (off by default upstream).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "arbiter/sched/framework/interfaces.h"

namespace arbiter::sched::plugins {

class VolumeRestrictions final : public PreFilterPlugin, public FilterPlugin, public PreFilterExtensions {
 public:
  static constexpr std::string_view kName = "VolumeRestrictions";
  static constexpr std::string_view kReadWriteOncePodConflict =
      "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";
  explicit VolumeRestrictions(const Handle* handle) : handle_(handle) {}
  std::string_view Name() const override { return kName; }
  PreFilterResult PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes) const override;
  const PreFilterExtensions* Extensions() const override { return this; }
  Status AddPod(CycleState& state, const PodInfo& to_schedule, const PodInfo& to_add, const NodeInfo& node) const override;
  Status RemovePod(CycleState& state, const PodInfo& to_schedule, const PodInfo& to_remove,
                   const NodeInfo& node) const override;
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;

 private:
  const Handle* handle_;
};

class NodeVolumeLimits final : public PreFilterPlugin, public FilterPlugin {
 public:
  static constexpr std::string_view kName = "NodeVolumeLimits";
  static constexpr std::string_view kMaxVolumeCountExceeded = "node(s) exceed max volume count";
  explicit NodeVolumeLimits(const Handle* handle) : handle_(handle) {}
  std::string_view Name() const override { return kName; }
  PreFilterResult PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes) const override;
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;

 private:
  const Handle* handle_;
};

class VolumeBinding final : public PreFilterPlugin, public FilterPlugin, public ReservePlugin {
 public:
  static constexpr std::string_view kName = "VolumeBinding";
  static constexpr std::string_view kBindConflict = "node(s) didn't find available persistent volumes to bind";
  static constexpr std::string_view kNodeConflict = "node(s) didn't match PersistentVolume's node affinity";  // 1.37's wording
  static constexpr std::string_view kNotEnoughSpace = "node(s) did not have enough free storage";
  static constexpr std::string_view kPvNotExist =
      "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
  static constexpr std::string_view kUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims";
  // `storage` is the scheduler's index, which Reserve and Unreserve change.
  VolumeBinding(const Handle* handle, state::StorageIndex* storage) : handle_(handle), storage_(storage) {}
  std::string_view Name() const override { return kName; }
  PreFilterResult PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes) const override;
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  bool ReadsNodePods() const override { return false; }
  Status Reserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void Unreserve(CycleState& state, const PodInfo& pod, const std::string& node) override;

 private:
  const Handle* handle_;
  state::StorageIndex* storage_;
  // What Reserve changed per pod UID (the objects as they were), for Unreserve.
  struct Undo {
    std::vector<model::PersistentVolumeClaim> claims;
    std::vector<model::PersistentVolume> volumes;
  };
  std::map<std::string, Undo> reserved_;
};

class VolumeZone final : public PreFilterPlugin, public FilterPlugin {
 public:
  static constexpr std::string_view kName = "VolumeZone";
  static constexpr std::string_view kConflict = "node(s) had no available volume zone";
  explicit VolumeZone(const Handle* handle) : handle_(handle) {}
  std::string_view Name() const override { return kName; }
  PreFilterResult PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes) const override;
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  bool ReadsNodePods() const override { return false; }

 private:
  const Handle* handle_;
};

}  // namespace arbiter::sched::plugins
