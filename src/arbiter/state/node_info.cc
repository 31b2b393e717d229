// Incremental maintenance of NodeInfo aggregates.
#include "arbiter/state/node_info.h"

#include <algorithm>
#include <functional>

#include "arbiter/state/resource_fit.h"

namespace arbiter::state {

uint64_t NextGeneration() {
  // One counter for every NodeInfo, so that a generation names one state of one node: a snapshot's
  // private change (a pod assumed in a group cycle) can never share a number with a later change
  // in the cache, and caches keyed by generation never see a stale hit.
  static uint64_t next = 0;
  return ++next;
}

PodInfo::PodInfo(model::Pod p) : pod(std::move(p)) {
  non_zero_cpu = pod.non_zero_milli_cpu;
  non_zero_memory = pod.non_zero_memory;
  const auto& a = pod.affinity;
  has_pod_affinity_terms = !a.pod_affinity.empty() || !a.pod_anti_affinity.empty();
  has_required_anti_affinity = !a.pod_anti_affinity.required.empty();
  uid_hash = std::hash<std::string>{}(pod.uid);
}

void NodeInfo::AddPod(PodInfoPtr pod) {
  requested_.Add(pod->pod.requests);
  non_zero_cpu_ += pod->non_zero_cpu;
  non_zero_memory_ += pod->non_zero_memory;
  for (const auto& hp : pod->pod.host_ports) used_ports_.push_back(hp);
  if (pod->has_pod_affinity_terms) pods_with_affinity_.push_back(pod);
  if (pod->has_required_anti_affinity) pods_with_required_anti_affinity_.push_back(pod);
  const model::Pod& p = pod->pod;
  summaries_.push_back({p.priority, p.start_time.has_value(), p.start_time.value_or(0), p.requests.milli_cpu,
                        p.requests.memory, p.requests.ephemeral_storage, !p.requests.scalars.empty(),
                        !p.pod_group_name.empty()});
  if (!p.pod_group_name.empty()) ++group_members_;
  Share(p, +1);
  pods_.push_back(std::move(pod));
  generation_ = NextGeneration();
}

namespace {
bool EraseByUid(std::vector<PodInfoPtr>& v, const std::string& uid) {
  auto it = std::find_if(v.begin(), v.end(), [&](const PodInfoPtr& p) { return p->uid() == uid; });
  if (it == v.end()) return false;
  v.erase(it);
  return true;
}
}  // namespace

bool NodeInfo::RemovePod(const std::string& uid) {
  auto it = std::find_if(pods_.begin(), pods_.end(), [&](const PodInfoPtr& p) { return p->uid() == uid; });
  if (it == pods_.end()) return false;
  const PodInfoPtr pod = *it;
  summaries_.erase(summaries_.begin() + (it - pods_.begin()));
  pods_.erase(it);
  Forget(*pod);
  generation_ = NextGeneration();
  return true;
}

size_t NodeInfo::RemovePods(std::span<const PodInfo* const> gone) {
  // Most of `gone` are this node's own PodInfos: matching those by address reads no pod. Only
  // when some is not (another PodInfo of the same pod) are the node's pods read for their UIDs.
  size_t by_address = 0;
  for (const PodInfoPtr& p : pods_) by_address += std::find(gone.begin(), gone.end(), p.get()) != gone.end() ? 1 : 0;
  const bool by_uid = by_address < gone.size();
  size_t kept = 0;
  for (size_t i = 0; i < pods_.size(); ++i) {
    const PodInfo& pod = *pods_[i];
    const bool goes =
        std::find(gone.begin(), gone.end(), &pod) != gone.end() ||
        (by_uid && std::any_of(gone.begin(), gone.end(),
                               [&](const PodInfo* g) { return g->uid_hash == pod.uid_hash && g->uid() == pod.uid(); }));
    if (goes) {
      Forget(pod);
      continue;
    }
    if (kept != i) {
      pods_[kept] = std::move(pods_[i]);
      summaries_[kept] = summaries_[i];
    }
    ++kept;
  }
  const size_t removed = pods_.size() - kept;
  if (removed == 0) return 0;
  pods_.resize(kept);
  summaries_.resize(kept);
  generation_ = NextGeneration();
  return removed;
}

void NodeInfo::Forget(const PodInfo& pod) {
  const std::string& uid = pod.uid();
  EraseByUid(pods_with_affinity_, uid);
  EraseByUid(pods_with_required_anti_affinity_, uid);
  if (!pod.pod.pod_group_name.empty()) --group_members_;
  Share(pod.pod, -1);
  requested_.Sub(pod.pod.requests);
  non_zero_cpu_ -= pod.non_zero_cpu;
  non_zero_memory_ -= pod.non_zero_memory;
  for (const auto& hp : pod.pod.host_ports) {
    auto p = std::find_if(used_ports_.begin(), used_ports_.end(), [&](const model::HostPort& u) {
      return u.port == hp.port && u.protocol == hp.protocol && u.host_ip == hp.host_ip;
    });
    if (p != used_ports_.end()) used_ports_.erase(p);
  }
}

bool NodeInfo::CouldMakeRoomFor(const model::Pod& p) const {
  const Room room = RoomBelow(p.priority);
  return static_cast<int64_t>(pods_.size()) - room.pods + 1 <= allocatable_.pods &&
         !ShortOf(p.requests.milli_cpu, allocatable_.milli_cpu, requested_.milli_cpu - room.milli_cpu) &&
         !ShortOf(p.requests.memory, allocatable_.memory, requested_.memory - room.memory) &&
         !ShortOf(p.requests.ephemeral_storage, allocatable_.ephemeral_storage,
                  requested_.ephemeral_storage - room.ephemeral_storage);
}

void NodeInfo::Share(const model::Pod& p, int sign) {
  Room* room = &group_share_;
  if (p.pod_group_name.empty()) {
    auto it = std::lower_bound(shares_.begin(), shares_.end(), p.priority,
                               [](const PriorityShare& s, int32_t prio) { return s.priority < prio; });
    if (it == shares_.end() || it->priority != p.priority) it = shares_.insert(it, PriorityShare{p.priority, {}});
    room = &it->room;
    if (sign < 0 && room->pods == 1) {
      shares_.erase(it);
      return;
    }
  }
  room->milli_cpu += sign * p.requests.milli_cpu;
  room->memory += sign * p.requests.memory;
  room->ephemeral_storage += sign * p.requests.ephemeral_storage;
  room->pods += sign;
}

void NodeInfo::SetNominatedPods(const std::vector<PodInfoPtr>& pods) {
  nominated_pods_.clear();
  for (const auto& p : pods) {
    const model::Resources& r = p->pod.requests;
    nominated_pods_.push_back({p->pod.priority, p->uid_hash, r.milli_cpu, r.memory,
                               r.ephemeral_storage, !r.scalars.empty(), p});
  }
  generation_ = NextGeneration();
}

bool HostPortConflicts(const std::vector<model::HostPort>& used, const model::HostPort& want) {
  for (const auto& u : used) {
    if (u.port != want.port || u.protocol != want.protocol) continue;
    if (u.host_ip == want.host_ip || u.host_ip == "0.0.0.0" || want.host_ip == "0.0.0.0") return true;
  }
  return false;
}

}  // namespace arbiter::state
