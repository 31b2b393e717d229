// The scheduler cache, NodeTree ordering and incremental snapshots.
#include "arbiter/state/cluster_cache.h"

#include <algorithm>

namespace arbiter::state {

std::string ZoneKey(const model::Node& node) {
  const std::string* zone = node.labels.Find("topology.kubernetes.io/zone");
  if (zone == nullptr) zone = node.labels.Find("failure-domain.beta.kubernetes.io/zone");
  const std::string* region = node.labels.Find("topology.kubernetes.io/region");
  if (region == nullptr) region = node.labels.Find("failure-domain.beta.kubernetes.io/region");
  if (zone == nullptr && region == nullptr) return "";
  return (region ? *region : "") + ":\x00:" + (zone ? *zone : "");
}

const NodeInfo* Snapshot::Get(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &infos_[it->second];
}

const model::LabelMap* Snapshot::NamespaceLabels(std::string_view ns) const {
  auto it = namespace_labels_.find(ns);
  return it == namespace_labels_.end() ? nullptr : &it->second;
}

int32_t Snapshot::ImageNodeCount(std::string_view name) const {
  if (!images_) return 0;
  auto it = images_->find(name);
  return it == images_->end() ? 0 : it->second.nodes;
}

int64_t Snapshot::ImageSize(std::string_view name) const {
  if (!images_) return 0;
  auto it = images_->find(name);
  return it == images_->end() ? 0 : it->second.size_bytes;
}

int32_t Snapshot::ClaimUsers(std::string_view claim_key) const {
  if (!claim_users_) return 0;
  auto it = claim_users_->find(claim_key);
  return it == claim_users_->end() ? 0 : it->second;
}

void ClusterCache::CountClaims(const model::Pod& pod, int delta) {
  if (pod.volumes.empty()) return;
  if (claim_users_.use_count() > 1) claim_users_ = std::make_shared<ClaimCounts>(*claim_users_);
  for (const auto& v : pod.volumes) {
    auto it = claim_users_->try_emplace(pod.ns + "/" + v.claim_name, 0).first;
    it->second += delta;
    if (it->second <= 0) claim_users_->erase(it);
  }
}

void ClusterCache::CountImages(const model::Node& node, int delta) {
  if (node.images.empty()) return;
  // Each name once per node, with the size of the node's first entry listing it.
  std::vector<std::pair<std::string_view, int64_t>> names;
  for (const auto& img : node.images) {
    for (const auto& n : img.names) names.emplace_back(n, img.size_bytes);
  }
  std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  names.erase(std::unique(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
              names.end());
  if (images_.use_count() > 1) images_ = std::make_shared<ImageCounts>(*images_);
  for (const auto& [n, size] : names) {
    auto [it, added] = images_->try_emplace(std::string(n), ImageSummary{0, size});
    it->second.nodes += delta;
    if (it->second.nodes <= 0) images_->erase(it);
  }
}

void Snapshot::RebuildAffinityLists() const {
  affinity_stale_ = false;
  with_affinity_.clear();
  with_required_anti_affinity_.clear();
  for (const NodeInfo* n : list_) {
    if (!n->pods_with_affinity().empty()) with_affinity_.push_back(n);
    if (!n->pods_with_required_anti_affinity().empty()) with_required_anti_affinity_.push_back(n);
  }
}

NodeInfo* ClusterCache::Mutable(std::string_view name) {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : infos_[it->second].get();
}

const NodeInfo* ClusterCache::GetNode(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : infos_[it->second].get();
}

std::vector<const NodeInfo*> ClusterCache::Nodes() const {
  EnsureOrder();
  std::vector<const NodeInfo*> out;
  out.reserve(order_.size());
  for (size_t i : order_) out.push_back(infos_[i].get());
  return out;
}

void ClusterCache::MarkDirty(size_t index) {
  if (!is_dirty_[index]) {
    is_dirty_[index] = true;
    dirty_.push_back(index);
  }
}

void ClusterCache::RebuildZones() {
  zones_.clear();
  by_zone_.clear();
  for (size_t i = 0; i < infos_.size(); ++i) {
    std::string z = ZoneKey(infos_[i]->node());
    auto& v = by_zone_[z];
    if (v.empty()) zones_.push_back(z);
    v.push_back(i);
  }
  order_stale_ = true;
  ++structure_version_;
}

void ClusterCache::EnsureOrder() const {
  if (!order_stale_) return;
  // NodeTree.list(): the i-th node of every zone in turn (round-robin), skipping zones that have
  // run out.
  order_.clear();
  order_.reserve(infos_.size());
  for (size_t round = 0; order_.size() < infos_.size(); ++round) {
    for (const auto& z : zones_) {
      const auto& v = by_zone_.at(z);
      if (round < v.size()) order_.push_back(v[round]);
    }
  }
  position_.assign(order_.size(), 0);
  for (size_t at = 0; at < order_.size(); ++at) position_[order_[at]] = at;
  order_stale_ = false;
}

Status ClusterCache::AddNode(model::Node node) {
  if (index_.count(node.name)) return AlreadyExists("node \"" + node.name + "\" already exists");
  const std::string name = node.name;
  index_[name] = infos_.size();
  CountImages(node, +1);
  infos_.push_back(std::make_unique<NodeInfo>(std::make_shared<const model::Node>(std::move(node))));
  is_dirty_.push_back(false);
  const std::string z = ZoneKey(infos_.back()->node());
  auto& members = by_zone_[z];
  if (members.empty()) zones_.push_back(z);
  members.push_back(infos_.size() - 1);
  order_stale_ = true;
  ++structure_version_;
  return Status::Ok();
}

Status ClusterCache::UpdateNode(model::Node node) {
  auto it = index_.find(node.name);
  if (it == index_.end()) return NotFound("node \"" + node.name + "\" not found");
  const bool zone_changed = ZoneKey(infos_[it->second]->node()) != ZoneKey(node);
  const model::Node& before = infos_[it->second]->node();
  const bool images_changed =
      before.images.size() != node.images.size() ||
      !std::equal(before.images.begin(), before.images.end(), node.images.begin(),
                  [](const model::ContainerImage& a, const model::ContainerImage& b) {
                    return a.names == b.names && a.size_bytes == b.size_bytes;
                  });
  if (images_changed) {
    CountImages(before, -1);
    CountImages(node, +1);
  }
  infos_[it->second]->set_node(std::make_shared<const model::Node>(std::move(node)));
  MarkDirty(it->second);
  if (zone_changed) RebuildZones();
  return Status::Ok();
}

Status ClusterCache::RemoveNode(const std::string& name) {
  auto it = index_.find(name);
  if (it == index_.end()) return NotFound("node \"" + name + "\" not found");
  const size_t idx = it->second;
  CountImages(infos_[idx]->node(), -1);
  for (const auto& p : infos_[idx]->pods()) {
    CountClaims(p->pod, -1);
    pods_.erase(p->uid());
    if (observer_) observer_(&p->pod, nullptr);
  }
  infos_.erase(infos_.begin() + static_cast<long>(idx));
  is_dirty_.erase(is_dirty_.begin() + static_cast<long>(idx));
  index_.clear();
  for (size_t i = 0; i < infos_.size(); ++i) index_[infos_[i]->name()] = i;
  dirty_.clear();
  std::fill(is_dirty_.begin(), is_dirty_.end(), false);
  RebuildZones();
  return Status::Ok();
}

Status ClusterCache::AddPod(PodInfoPtr pod) {
  const std::string& node_name = pod->pod.node_name;
  auto it = index_.find(node_name);
  if (it == index_.end()) {
    return NotFound("pod " + pod->pod.Key() + " is bound to node \"" + node_name +
                    "\", which does not exist");
  }
  if (pods_.count(pod->uid())) return AlreadyExists("pod " + pod->pod.Key() + " is already bound");
  pods_[pod->uid()] = pod;
  CountClaims(pod->pod, +1);
  if (observer_) observer_(nullptr, &pod->pod);
  infos_[it->second]->AddPod(std::move(pod));
  MarkDirty(it->second);
  return Status::Ok();
}

Status ClusterCache::UpdatePod(PodInfoPtr pod) {
  auto old = pods_.find(pod->uid());
  if (old == pods_.end()) return NotFound("pod " + pod->pod.Key() + " is not bound");
  if (old->second->pod.node_name != pod->pod.node_name) {
    return FailedPrecondition("pod " + pod->pod.Key() + " cannot move between nodes");
  }
  const size_t idx = index_.at(pod->pod.node_name);
  infos_[idx]->RemovePod(pod->uid());
  infos_[idx]->AddPod(pod);
  CountClaims(old->second->pod, -1);
  CountClaims(pod->pod, +1);
  if (observer_) observer_(&old->second->pod, &pod->pod);
  old->second = std::move(pod);
  MarkDirty(idx);
  return Status::Ok();
}

Status ClusterCache::RemovePod(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return NotFound("pod with uid " + uid + " is not bound");
  const size_t idx = index_.at(it->second->pod.node_name);
  infos_[idx]->RemovePod(uid);
  CountClaims(it->second->pod, -1);
  if (observer_) observer_(&it->second->pod, nullptr);
  pods_.erase(it);
  MarkDirty(idx);
  return Status::Ok();
}

Status ClusterCache::SetNominatedPods(const std::string& node, const std::vector<PodInfoPtr>& pods) {
  auto it = index_.find(node);
  if (it == index_.end()) return NotFound("node \"" + node + "\" not found");
  infos_[it->second]->SetNominatedPods(pods);
  MarkDirty(it->second);
  return Status::Ok();
}

PodInfoPtr ClusterCache::FindPod(const std::string& uid) const {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : it->second;
}

void ClusterCache::UpdateSnapshot(Snapshot& s) {
  if (s.namespace_labels_ != namespace_labels_) s.namespace_labels_ = namespace_labels_;
  s.images_ = images_;
  s.claim_users_ = claim_users_;
  if (s.structure_version_ != structure_version_) {
    EnsureOrder();
    s.infos_.clear();
    s.list_.clear();
    s.index_.clear();
    s.infos_.reserve(order_.size());
    for (size_t i : order_) {
      s.index_[infos_[i]->name()] = s.infos_.size();
      s.infos_.push_back(*infos_[i]);
    }
    for (const NodeInfo& n : s.infos_) s.list_.push_back(&n);
    s.structure_version_ = structure_version_;
    s.changes_base_ += s.changes_.size();  // positions changed: no reader may go on from here
    s.changes_.clear();
    s.RebuildAffinityLists();
  } else {
    // The node set is the snapshot's: its positions are the NodeTree order's (order_, position_).
    bool affinity_changed = false;
    for (size_t at : s.touched_) {
      NodeInfo& dst = s.infos_[at];
      const NodeInfo* src = infos_[order_[at]].get();
      affinity_changed |= !dst.pods_with_affinity().empty() || !src->pods_with_affinity().empty();
      dst = *src;
      s.LogChange(at);
    }
    for (size_t i : dirty_) {
      const size_t at = position_[i];
      NodeInfo& dst = s.infos_[at];
      affinity_changed |= !dst.pods_with_affinity().empty() ||
                          !infos_[i]->pods_with_affinity().empty();
      dst = *infos_[i];
      s.LogChange(at);
    }
    if (affinity_changed) s.RebuildAffinityLists();
  }
  s.touched_.clear();
  s.is_touched_.assign(s.infos_.size(), false);
  for (size_t i : dirty_) is_dirty_[i] = false;
  dirty_.clear();
}

void Snapshot::LogChange(size_t at) {
  if (changes_.size() >= 16 * infos_.size() + 4096) {  // keep the newer half
    const size_t drop = changes_.size() / 2;
    changes_.erase(changes_.begin(), changes_.begin() + static_cast<std::ptrdiff_t>(drop));
    changes_base_ += drop;
  }
  changes_.push_back(static_cast<uint32_t>(at));
}

void Snapshot::Touch(size_t at) {
  LogChange(at);  // every private change, so that a reader sees each one
  if (is_touched_.size() != infos_.size()) is_touched_.assign(infos_.size(), false);
  if (is_touched_[at]) return;
  is_touched_[at] = true;
  touched_.push_back(at);
}

bool Snapshot::DropNominatedPod(const std::string& node, const std::string& uid) {
  auto it = index_.find(node);
  if (it == index_.end()) return false;
  NodeInfo& n = infos_[it->second];
  std::vector<PodInfoPtr> keep;
  bool found = false;
  for (const auto& np : n.nominated_pods()) {
    if (np.pod->uid() == uid) {
      found = true;
    } else {
      keep.push_back(np.pod);
    }
  }
  if (!found) return false;
  n.SetNominatedPods(keep);
  Touch(it->second);
  return true;
}

bool Snapshot::AddPod(PodInfoPtr pod) {
  auto it = index_.find(pod->pod.node_name);
  if (it == index_.end()) return false;
  affinity_stale_ |= pod->has_pod_affinity_terms;
  infos_[it->second].AddPod(std::move(pod));
  Touch(it->second);
  return true;
}

size_t Snapshot::RemovePodsAt(size_t position, std::span<const PodInfo* const> pods) {
  if (position >= infos_.size()) return 0;
  NodeInfo& n = infos_[position];
  const size_t with_affinity = n.pods_with_affinity().size();
  const size_t removed = n.RemovePods(pods);
  if (removed == 0) return 0;
  Touch(position);
  affinity_stale_ |= with_affinity != n.pods_with_affinity().size();
  return removed;
}

bool Snapshot::RemovePod(const std::string& node, const std::string& uid) {
  auto it = index_.find(node);
  if (it == index_.end()) return false;
  NodeInfo& n = infos_[it->second];
  const size_t with_affinity = n.pods_with_affinity().size();
  if (!n.RemovePod(uid)) return false;
  Touch(it->second);
  affinity_stale_ |= with_affinity != n.pods_with_affinity().size();
  return true;
}

}  // namespace arbiter::state
