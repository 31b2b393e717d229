// ClusterCache holds the scheduler's view of the cluster (nodes and the pods bound or assumed on
// them), and Snapshot is the frozen copy one scheduling cycle reads.
//
// Node order matters for faithfulness: kube-scheduler's snapshot lists nodes by its NodeTree,
// which interleaves zones round-robin (zone = region + zone labels) and keeps insertion order
// within a zone; filtering starts from a rotating index into that list. Both are reproduced here.
//
// UpdateSnapshot copies only the nodes that changed since the previous update (the cache keeps a
// dirty list, as upstream keeps its generation-ordered list), so a cycle after one bind copies one
// NodeInfo. Not thread-safe: the scheduling loop owns both.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "arbiter/base/status.h"
#include "arbiter/state/node_info.h"

namespace arbiter::state {

// Image name -> the number of nodes whose status.images list it (each node once).
// Per image name: how many nodes list it, and its size as the first of them listed it
// (kube-scheduler's cache keeps one ImageStateSummary per name, sized when the name first
// appears, until no node lists it any more).
struct ImageSummary {
  int32_t nodes = 0;
  int64_t size_bytes = 0;
};
using ImageCounts = std::map<std::string, ImageSummary, std::less<>>;
// Claim "namespace/name" -> the number of bound pods whose volumes use it.
using ClaimCounts = std::map<std::string, int32_t, std::less<>>;

class Snapshot {
 public:
  // Nodes in NodeTree order.
  const std::vector<const NodeInfo*>& nodes() const { return list_; }
  size_t size() const { return list_.size(); }
  const NodeInfo* Get(std::string_view name) const;
  // The position of a node of this snapshot in its storage (stable until the node set changes).
  size_t IndexOf(const NodeInfo* node) const { return static_cast<size_t>(node - infos_.data()); }
  // Changes whenever nodes are added or removed (and positions may change).
  uint64_t structure_version() const { return structure_version_; }
  // The change log: the position of every node changed since the node set last changed, in
  // order (an update's copies from the cache and private changes; a node may appear many times).
  // A reader keeps changes_end() and later asks for what changed since: nullopt when the log no
  // longer reaches back that far (it keeps at most 16 times as many entries as nodes).
  uint64_t changes_end() const { return changes_base_ + changes_.size(); }
  std::optional<std::span<const uint32_t>> ChangesSince(uint64_t end) const {
    if (end < changes_base_ || end > changes_end()) return std::nullopt;
    return std::span<const uint32_t>(changes_).subspan(end - changes_base_);
  }
  const std::vector<const NodeInfo*>& have_pods_with_affinity() const {
    if (affinity_stale_) RebuildAffinityLists();
    return with_affinity_;
  }
  const std::vector<const NodeInfo*>& have_pods_with_required_anti_affinity() const {
    if (affinity_stale_) RebuildAffinityLists();
    return with_required_anti_affinity_;
  }
  // Labels of a namespace; nullptr if the input declared no such Namespace.
  const model::LabelMap* NamespaceLabels(std::string_view ns) const;
  // How many nodes list an image under `name` in status.images (ImageLocality's spread), and
  // the size it is scored with (ImageSummary).
  int32_t ImageNodeCount(std::string_view name) const;
  int64_t ImageSize(std::string_view name) const;
  // How many bound pods use the claim "namespace/name" (VolumeRestrictions' IsPVCUsedByPods).
  int32_t ClaimUsers(std::string_view claim_key) const;
  bool HasImages() const { return images_ && !images_->empty(); }

  // Private changes for one cycle (a pod group cycle assumes its placed pods; workload-aware
  // preemption removes its potential victims). The cache never sees them: the next
  // ClusterCache::UpdateSnapshot copies every changed node back from the cache.
  // AddPod places `pod` on `pod->pod.node_name`; both return false for an unknown node or pod.
  bool AddPod(PodInfoPtr pod);
  bool RemovePod(const std::string& node, const std::string& uid);
  // Removes `pods` from the node at `position` (IndexOf) in one pass over its pods, as RemovePod
  // of each would; returns how many were there.
  size_t RemovePodsAt(size_t position, std::span<const PodInfo* const> pods);
  // Takes a pod out of `node`'s nominated pods (a pod group member that the cycle places itself).
  bool DropNominatedPod(const std::string& node, const std::string& uid);

 private:
  void Touch(size_t at);
  void LogChange(size_t at);
  friend class ClusterCache;
  void RebuildAffinityLists() const;

  std::vector<NodeInfo> infos_;  // in NodeTree order, contiguous for locality; never resized
                                 // between full rebuilds, so pointers into it stay valid
  std::vector<const NodeInfo*> list_;
  std::unordered_map<std::string, size_t> index_;  // lookup only; never iterated
  // Rebuilt when first read after a private change (a replay may add and remove many pods).
  mutable std::vector<const NodeInfo*> with_affinity_;
  mutable std::vector<const NodeInfo*> with_required_anti_affinity_;
  mutable bool affinity_stale_ = false;
  std::map<std::string, model::LabelMap, std::less<>> namespace_labels_;
  std::shared_ptr<const ImageCounts> images_;  // shared with the cache; replaced, never changed
  std::shared_ptr<const ClaimCounts> claim_users_;
  uint64_t structure_version_ = 0;
  std::vector<uint32_t> changes_;  // the change log, from position changes_base_
  uint64_t changes_base_ = 0;
  std::vector<size_t> touched_;  // nodes changed privately since the last update
  std::vector<bool> is_touched_;
};

class ClusterCache {
 public:
  Status AddNode(model::Node node);
  Status UpdateNode(model::Node node);
  Status RemoveNode(const std::string& name);

  // Adds a pod bound (or assumed) to `pod->pod.node_name`.
  Status AddPod(PodInfoPtr pod);
  // Replaces the stored pod with the same UID (same node).
  Status UpdatePod(PodInfoPtr pod);
  Status RemovePod(const std::string& uid);
  // Replaces the mirror of the pods nominated to `node`.
  Status SetNominatedPods(const std::string& node, const std::vector<PodInfoPtr>& pods);
  // The bound pod with this UID, or nullptr.
  PodInfoPtr FindPod(const std::string& uid) const;

  // Told of every change to the bound pods, as (before, after), null where there is none: a pod
  // added, replaced, removed, or removed with its node. One observer; an empty one stops it.
  using BoundPodObserver = std::function<void(const model::Pod* before, const model::Pod* after)>;
  void SetBoundPodObserver(BoundPodObserver observer) { observer_ = std::move(observer); }

  void SetNamespace(const model::Namespace& ns) { namespace_labels_[ns.name] = ns.labels; }

  size_t node_count() const { return infos_.size(); }
  const NodeInfo* GetNode(std::string_view name) const;
  // Nodes in NodeTree order.
  std::vector<const NodeInfo*> Nodes() const;

  // Brings `snapshot` up to date, copying only what changed since its last update.
  void UpdateSnapshot(Snapshot& snapshot);

 private:
  NodeInfo* Mutable(std::string_view name);
  void MarkDirty(size_t index);
  // Counts the image names of `node` once more (delta +1) or once less (-1), copying the counts
  // first if a snapshot shares them, so that snapshots keep the ones they were given.
  void CountImages(const model::Node& node, int delta);
  // The same for the claims a bound pod's volumes use.
  void CountClaims(const model::Pod& pod, int delta);
  // Recomputes zones from scratch (after a removal or a zone change).
  void RebuildZones();
  // Brings `order_` up to date with the zones, if a node was added or removed since.
  void EnsureOrder() const;

  std::vector<std::unique_ptr<NodeInfo>> infos_;  // in insertion order
  std::unordered_map<std::string, size_t> index_;  // lookup only
  std::vector<std::string> zones_;                 // in order of first appearance
  std::map<std::string, std::vector<size_t>> by_zone_;  // zone -> indices into infos_
  mutable std::vector<size_t> order_;              // NodeTree order, as indices into infos_
  mutable std::vector<size_t> position_;           // its inverse: a node's position in that order
  mutable bool order_stale_ = false;
  std::unordered_map<std::string, PodInfoPtr> pods_;  // bound pods by UID; lookup only
  BoundPodObserver observer_;
  std::map<std::string, model::LabelMap, std::less<>> namespace_labels_;
  std::shared_ptr<ImageCounts> images_ = std::make_shared<ImageCounts>();  // copied on write while a snapshot shares it
  std::shared_ptr<ClaimCounts> claim_users_ = std::make_shared<ClaimCounts>();  // likewise
  std::vector<size_t> dirty_;
  std::vector<bool> is_dirty_;
  uint64_t structure_version_ = 1;
};

// The NodeTree zone key of a node: region and zone labels joined, as utilnode.GetZoneKey.
std::string ZoneKey(const model::Node& node);

}  // namespace arbiter::state
