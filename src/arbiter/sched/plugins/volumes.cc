#include "arbiter/sched/plugins/volumes.h"

#include <algorithm>
#include <set>
#include <vector>

namespace arbiter::sched::plugins {

namespace {

using model::PersistentVolume;
using model::PersistentVolumeClaim;

// The NotFound errors of the API's listers, as kube-scheduler passes them on.
std::string ClaimNotFound(std::string_view name) { return "persistentvolumeclaim \"" + std::string(name) + "\" not found"; }

// The storage index, or an empty one when the scheduler keeps none.
const state::StorageIndex& StorageOf(const Handle* handle) {
  static const state::StorageIndex kEmpty;
  const state::StorageIndex* s = handle != nullptr ? handle->storage() : nullptr;
  return s != nullptr ? *s : kEmpty;
}

bool HasClaims(const model::Pod& pod) { return !pod.volumes.empty(); }

// ----- VolumeRestrictions -----

constexpr std::string_view kRestrictionsKey = "PreFilterVolumeRestrictions";

struct RestrictionsState final : StateData {
  std::set<std::string> read_write_once_pod;  // claim keys
  int64_t conflicting = 0;                     // conflictingPVCRefCount
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<RestrictionsState>(*this); }
};

// The other pod's uses of the RWOP claims, +1 or -1 each (upstream's updateWithPod).
void CountUses(RestrictionsState& s, const model::Pod& other, int delta) {
  for (const auto& v : other.volumes) {
    if (v.ephemeral) continue;
    if (s.read_write_once_pod.count(other.ns + "/" + v.claim_name)) s.conflicting += delta;
  }
}

// ----- NodeVolumeLimits -----

constexpr std::string_view kAttachablePrefix = "attachable-volumes-csi-";

// The CSI driver and a volume's unique handle ("" when the volume is not counted), or an error
// for a claim that does not exist.
struct AttachableVolume {
  std::string driver;
  std::string handle;
};

std::optional<AttachableVolume> Attachable(const state::StorageIndex& storage, const model::Pod& pod,
                                           const model::PodVolume& v, std::string* error) {
  const PersistentVolumeClaim* claim = storage.Claim(pod.ns, v.claim_name);
  if (claim == nullptr) {
    if (error != nullptr) *error = "looking up PVC " + pod.ns + "/" + v.claim_name + ": " + ClaimNotFound(v.claim_name);
    return std::nullopt;
  }
  if (!claim->volume_name.empty()) {
    if (const PersistentVolume* pv = storage.Volume(claim->volume_name)) {
      if (pv->csi_driver.empty()) return AttachableVolume{};  // not a CSI volume: not counted
      return AttachableVolume{pv->csi_driver, pv->csi_volume_handle};
    }
  }
  // Unbound (or its volume not yet known): the class's provisioner, one volume per claim.
  const model::StorageClass* cls = storage.Class(storage.ClassNameOf(*claim));
  if (cls == nullptr) return AttachableVolume{};
  return AttachableVolume{cls->provisioner, "claim:" + claim->Key()};
}

// ----- VolumeBinding -----

constexpr std::string_view kBindingKey = "PreFilterVolumeBinding";

struct BindingState final : StateData {
  std::vector<const PersistentVolumeClaim*> bound;
  std::vector<const PersistentVolumeClaim*> delayed;  // unbound, WaitForFirstConsumer
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<BindingState>(*this); }
};

// volume.FindMatchingVolume: a volume pre-bound to the claim if there is one (and it fits the
// node), else the smallest available volume that satisfies the claim on the node.
const PersistentVolume* FindMatchingVolume(const PersistentVolumeClaim& claim, const std::string& cls,
                                           const std::vector<const PersistentVolume*>& volumes,
                                           const model::Node& node, const std::set<const PersistentVolume*>& taken) {
  const PersistentVolume* best = nullptr;
  for (const PersistentVolume* pv : volumes) {
    if (taken.count(pv)) continue;
    if (pv->claim_ref && !(pv->claim_ref->ns == claim.ns && pv->claim_ref->name == claim.name)) continue;
    if (pv->capacity < claim.request || pv->volume_mode != claim.volume_mode || pv->deleting) continue;
    const bool node_ok = !pv->node_affinity || pv->node_affinity->Matches(node.labels, node.name);
    if (pv->claim_ref) return node_ok ? pv : nullptr;  // pre-bound to this claim
    if (pv->phase != "Available") continue;
    if (claim.selector && !claim.selector->Matches(pv->labels)) continue;
    if (pv->storage_class_name != cls) continue;
    if (!node_ok) continue;
    bool modes = true;
    for (const auto& m : claim.access_modes) modes = modes && pv->HasAccessMode(m);
    if (!modes) continue;
    if (best == nullptr || pv->capacity < best->capacity) best = pv;
  }
  return best;
}

// FindPodVolumes for one node: the reasons it fails (empty when it fits), and the choices
// Reserve would make there.
struct NodeVolumes {
  std::vector<std::string> reasons;
  std::vector<std::pair<const PersistentVolumeClaim*, const PersistentVolume*>> static_bindings;
  std::vector<const PersistentVolumeClaim*> provisions;
};

NodeVolumes FindPodVolumes(const state::StorageIndex& storage, const BindingState& s, const model::Node& node) {
  NodeVolumes out;
  // Bound claims: their volume exists and allows the node.
  bool pvs_found = true, bound_ok = true;
  for (const PersistentVolumeClaim* c : s.bound) {
    const PersistentVolume* pv = storage.Volume(c->volume_name);
    if (pv == nullptr) {
      pvs_found = bound_ok = false;
      break;
    }
    if (pv->node_affinity && !pv->node_affinity->Matches(node.labels, node.name)) {
      bound_ok = false;
      break;
    }
  }
  // Unbound WaitForFirstConsumer claims: smallest request first, each takes the smallest
  // matching volume; the rest must be provisionable on the node.
  bool unbound_ok = true;
  std::vector<const PersistentVolumeClaim*> to_match;
  for (const PersistentVolumeClaim* c : s.delayed) {
    if (!c->selected_node.empty()) {
      if (c->selected_node != node.name) {
        unbound_ok = false;
        break;
      }
      out.provisions.push_back(c);
    } else {
      to_match.push_back(c);
    }
  }
  if (unbound_ok) {
    std::stable_sort(to_match.begin(), to_match.end(), [](const PersistentVolumeClaim* a, const PersistentVolumeClaim* b) {
      return a->request < b->request;
    });
    std::set<const PersistentVolume*> taken;
    for (const PersistentVolumeClaim* c : to_match) {
      const std::string cls = storage.ClassNameOf(*c);
      const PersistentVolume* pv = FindMatchingVolume(*c, cls, storage.VolumesOfClass(cls), node, taken);
      if (pv != nullptr) {
        taken.insert(pv);
        out.static_bindings.emplace_back(c, pv);
      } else {
        out.provisions.push_back(c);
      }
    }
    for (const PersistentVolumeClaim* c : out.provisions) {
      const model::StorageClass* cls = storage.Class(storage.ClassNameOf(*c));
      if (cls == nullptr || cls->provisioner.empty() || cls->provisioner == model::kNoProvisioner) {
        unbound_ok = false;
        break;
      }
      if (!cls->allowed_topologies.empty() &&
          std::none_of(cls->allowed_topologies.begin(), cls->allowed_topologies.end(),
                       [&](const model::TopologySelectorTerm& t) { return t.Matches(node.labels); })) {
        unbound_ok = false;
        break;
      }
    }
  }
  if (!bound_ok) out.reasons.emplace_back(pvs_found ? VolumeBinding::kNodeConflict : VolumeBinding::kPvNotExist);
  if (!unbound_ok) out.reasons.emplace_back(VolumeBinding::kBindConflict);
  return out;
}

// ----- VolumeZone -----

constexpr std::string_view kZoneKey = "PreFilterVolumeZone";
constexpr std::string_view kBetaZone = "failure-domain.beta.kubernetes.io/zone";
constexpr std::string_view kBetaRegion = "failure-domain.beta.kubernetes.io/region";
constexpr std::string_view kZone = "topology.kubernetes.io/zone";
constexpr std::string_view kRegion = "topology.kubernetes.io/region";
constexpr std::string_view kTopologyLabels[] = {kBetaZone, kBetaRegion, kZone, kRegion};

struct ZoneState final : StateData {
  std::vector<std::pair<std::string, std::set<std::string>>> topologies;  // label -> allowed values
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<ZoneState>(*this); }
};

// volumehelpers.LabelZonesToSet: values joined by "__".
std::set<std::string> ZonesOf(const std::string& value) {
  std::set<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t sep = value.find("__", start);
    std::string part = value.substr(start, sep == std::string::npos ? std::string::npos : sep - start);
    if (!part.empty()) out.insert(std::move(part));
    if (sep == std::string::npos) break;
    start = sep + 2;
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// VolumeRestrictions

PreFilterResult VolumeRestrictions::PreFilter(CycleState& state, const PodInfo& pod,
                                              std::span<const NodeInfo* const>) const {
  if (!HasClaims(pod.pod)) return {Status(Code::kSkip), std::nullopt};
  const state::StorageIndex& storage = StorageOf(handle_);
  auto s = std::make_unique<RestrictionsState>();
  for (const auto& v : pod.pod.volumes) {
    if (v.ephemeral) continue;
    const PersistentVolumeClaim* c = storage.Claim(pod.pod.ns, v.claim_name);
    if (c == nullptr) return {Status(Code::kUnschedulableAndUnresolvable, ClaimNotFound(v.claim_name)), std::nullopt};
    if (!c->HasAccessMode(model::kReadWriteOncePod)) continue;
    if (s->read_write_once_pod.insert(c->Key()).second && handle_->snapshot().ClaimUsers(c->Key()) > 0) ++s->conflicting;
  }
  if (s->conflicting == 0) return {Status(Code::kSkip), std::nullopt};
  state.Write(kRestrictionsKey, std::move(s));
  return {};
}

Status VolumeRestrictions::AddPod(CycleState& state, const PodInfo&, const PodInfo& to_add, const NodeInfo&) const {
  if (auto* s = state.Read<RestrictionsState>(kRestrictionsKey)) CountUses(*s, to_add.pod, +1);
  return {};
}

Status VolumeRestrictions::RemovePod(CycleState& state, const PodInfo&, const PodInfo& to_remove, const NodeInfo&) const {
  if (auto* s = state.Read<RestrictionsState>(kRestrictionsKey)) CountUses(*s, to_remove.pod, -1);
  return {};
}

Status VolumeRestrictions::Filter(const CycleState& state, const PodInfo&, const NodeInfo&) const {
  const auto* s = state.Read<RestrictionsState>(kRestrictionsKey);
  if (s == nullptr) {
    return Status(Code::kError, "cannot read \"PreFilterVolumeRestrictions\" from cycleState");
  }
  if (s->conflicting > 0) return Status(Code::kUnschedulable, std::string(kReadWriteOncePodConflict));
  return {};
}

// ---------------------------------------------------------------------------------------------
// NodeVolumeLimits

PreFilterResult NodeVolumeLimits::PreFilter(CycleState&, const PodInfo& pod, std::span<const NodeInfo* const>) const {
  if (!HasClaims(pod.pod)) return {Status(Code::kSkip), std::nullopt};
  return {};
}

Status NodeVolumeLimits::Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  const state::StorageIndex& storage = StorageOf(handle_);
  // The pod's volumes, by "driver/handle".
  std::map<std::string, std::string> fresh;  // unique name -> driver
  for (const auto& v : pod.pod.volumes) {
    std::string error;
    auto a = Attachable(storage, pod.pod, v, &error);
    if (!a) return Status(Code::kUnschedulableAndUnresolvable, error);
    if (!a->driver.empty()) fresh.emplace(a->driver + "/" + a->handle, a->driver);
  }
  if (fresh.empty()) return {};
  // The limits: CSINode's allocatable counts over the node's legacy attachable-volumes-csi-*.
  std::map<std::string, int64_t> limits;
  for (const auto& [name, count] : node.allocatable().scalars) {
    if (name.starts_with(kAttachablePrefix)) limits[name.substr(kAttachablePrefix.size())] = count;
  }
  if (const model::CsiNode* csi = storage.CsiNode(node.name())) {
    for (const auto& d : csi->drivers) {
      if (d.allocatable_count) limits[d.name] = *d.allocatable_count;
    }
  }
  if (limits.empty()) return {};
  // What the node's pods hold already (a claim error there is skipped, as upstream does).
  std::map<std::string, std::string> attached;
  for (const auto& p : node.pods()) {
    for (const auto& v : p->pod.volumes) {
      auto a = Attachable(storage, p->pod, v, nullptr);
      if (a && !a->driver.empty()) attached.emplace(a->driver + "/" + a->handle, a->driver);
    }
  }
  std::map<std::string, int64_t> attached_count, new_count;
  for (const auto& [unique, driver] : attached) ++attached_count[driver];
  for (const auto& [unique, driver] : fresh) {
    if (!attached.count(unique)) ++new_count[driver];
  }
  for (const auto& [driver, n] : new_count) {
    auto limit = limits.find(driver);
    if (limit == limits.end()) continue;
    if (attached_count[driver] + n > limit->second) {
      return Status(Code::kUnschedulable, std::string(kMaxVolumeCountExceeded));
    }
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// VolumeBinding

PreFilterResult VolumeBinding::PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const>) const {
  if (!HasClaims(pod.pod)) return {Status(Code::kSkip), std::nullopt};
  const state::StorageIndex& storage = StorageOf(handle_);
  auto s = std::make_unique<BindingState>();
  bool immediate = false;
  for (const auto& v : pod.pod.volumes) {
    const PersistentVolumeClaim* c = storage.Claim(pod.pod.ns, v.claim_name);
    if (c == nullptr) {
      const std::string why = v.ephemeral ? "waiting for ephemeral volume controller to create the persistentvolumeclaim \"" +
                                                v.claim_name + "\""
                                          : ClaimNotFound(v.claim_name);
      return {Status(Code::kUnschedulableAndUnresolvable, why), std::nullopt};
    }
    if (c->deleting) {
      return {Status(Code::kUnschedulableAndUnresolvable, "persistentvolumeclaim \"" + c->name + "\" is being deleted"),
              std::nullopt};
    }
    if (c->phase == "Lost") {
      return {Status(Code::kUnschedulableAndUnresolvable, "persistentvolumeclaim \"" + c->name +
                                                              "\" bound to non-existent persistentvolume \"" +
                                                              c->volume_name + "\""),
              std::nullopt};
    }
    if (c->Bound()) {
      s->bound.push_back(c);
      continue;
    }
    const model::StorageClass* cls = storage.Class(storage.ClassNameOf(*c));
    if (cls != nullptr && cls->binding_mode == model::VolumeBindingMode::kWaitForFirstConsumer && c->volume_name.empty()) {
      s->delayed.push_back(c);
    } else {
      immediate = true;  // pre-bound but not yet bound, or an Immediate class: the PV controller's
    }
  }
  if (immediate) return {Status(Code::kUnschedulableAndUnresolvable, std::string(kUnboundImmediate)), std::nullopt};
  state.Write(kBindingKey, std::move(s));
  return {};
}

Status VolumeBinding::Filter(const CycleState& state, const PodInfo&, const NodeInfo& node) const {
  const auto* s = state.Read<BindingState>(kBindingKey);
  if (s == nullptr) return {};
  NodeVolumes nv = FindPodVolumes(StorageOf(handle_), *s, node.node());
  if (nv.reasons.empty()) return {};
  return Status(Code::kUnschedulableAndUnresolvable, std::move(nv.reasons));
}

Status VolumeBinding::Reserve(CycleState& state, const PodInfo& pod, const std::string& node) {
  const auto* s = state.Read<BindingState>(kBindingKey);
  if (s == nullptr || storage_ == nullptr) return {};
  const NodeInfo* info = handle_->snapshot().Get(node);
  if (info == nullptr) return Status(Code::kError, "node \"" + node + "\" is not in the snapshot");
  NodeVolumes nv = FindPodVolumes(*storage_, *s, info->node());
  if (!nv.reasons.empty()) return Status(Code::kUnschedulable, std::move(nv.reasons));
  // Copy the decisions before changing the index (the pointers are into it).
  std::vector<std::pair<PersistentVolumeClaim, PersistentVolume>> binds;
  for (const auto& [c, pv] : nv.static_bindings) binds.emplace_back(*c, *pv);
  std::vector<PersistentVolumeClaim> provisions;
  for (const PersistentVolumeClaim* c : nv.provisions) provisions.push_back(*c);
  Undo& undo = reserved_[pod.uid()];
  for (auto& [claim, pv] : binds) {
    undo.claims.push_back(claim);
    undo.volumes.push_back(pv);
    // The static binding, as the PV controller completes it once the scheduler asks.
    pv.claim_ref = model::ClaimReference{claim.ns, claim.name, ""};
    pv.phase = "Bound";
    claim.volume_name = pv.name;
    claim.bind_completed = true;
    claim.phase = "Bound";
    storage_->SetVolume(std::move(pv));
    storage_->SetClaim(std::move(claim));
  }
  for (auto& claim : provisions) {
    undo.claims.push_back(claim);
    claim.selected_node = node;  // provisioned for this node
    storage_->SetClaim(std::move(claim));
  }
  return {};
}

void VolumeBinding::Unreserve(CycleState&, const PodInfo& pod, const std::string&) {
  auto it = reserved_.find(pod.uid());
  if (it == reserved_.end() || storage_ == nullptr) return;
  for (auto& c : it->second.claims) storage_->SetClaim(std::move(c));
  for (auto& v : it->second.volumes) storage_->SetVolume(std::move(v));
  reserved_.erase(it);
}

// ---------------------------------------------------------------------------------------------
// VolumeZone

PreFilterResult VolumeZone::PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const>) const {
  if (!HasClaims(pod.pod)) return {Status(Code::kSkip), std::nullopt};
  const state::StorageIndex& storage = StorageOf(handle_);
  auto s = std::make_unique<ZoneState>();
  auto unresolvable = [](std::string why) {
    return PreFilterResult{Status(Code::kUnschedulableAndUnresolvable, std::move(why)), std::nullopt};
  };
  for (const auto& v : pod.pod.volumes) {
    if (v.ephemeral) continue;  // upstream reads persistentVolumeClaim volumes only
    const PersistentVolumeClaim* c = storage.Claim(pod.pod.ns, v.claim_name);
    if (c == nullptr) return unresolvable(ClaimNotFound(v.claim_name));
    if (c->volume_name.empty()) {
      const std::string cls_name = storage.ClassNameOf(*c);
      if (cls_name.empty()) return unresolvable("PersistentVolumeClaim had no pv name and storageClass name");
      const model::StorageClass* cls = storage.Class(cls_name);
      if (cls == nullptr) return unresolvable("storageclass.storage.k8s.io \"" + cls_name + "\" not found");
      if (cls->binding_mode == model::VolumeBindingMode::kWaitForFirstConsumer) continue;  // skip unbound volumes
      return unresolvable("PersistentVolume had no name");
    }
    const PersistentVolume* pv = storage.Volume(c->volume_name);
    if (pv == nullptr) return unresolvable("persistentvolume \"" + c->volume_name + "\" not found");
    for (std::string_view key : kTopologyLabels) {
      const std::string* value = pv->labels.Find(key);
      if (value == nullptr) continue;
      std::set<std::string> zones = ZonesOf(*value);
      if (!zones.empty()) s->topologies.emplace_back(std::string(key), std::move(zones));
    }
  }
  if (s->topologies.empty()) return {Status(Code::kSkip), std::nullopt};
  state.Write(kZoneKey, std::move(s));
  return {};
}

Status VolumeZone::Filter(const CycleState& state, const PodInfo&, const NodeInfo& node) const {
  const auto* s = state.Read<ZoneState>(kZoneKey);
  if (s == nullptr) return {};
  const model::LabelMap& labels = node.node().labels;
  // A node without any zone or region label passes: a single-zone cluster.
  if (std::none_of(std::begin(kTopologyLabels), std::end(kTopologyLabels),
                   [&](std::string_view k) { return labels.Find(k) != nullptr; })) {
    return {};
  }
  for (const auto& [key, values] : s->topologies) {
    const std::string* v = labels.Find(key);
    if (v == nullptr) {
      // A beta label on the volume is matched against the node's GA label.
      if (key == kBetaZone) v = labels.Find(kZone);
      if (key == kBetaRegion) v = labels.Find(kRegion);
    }
    if (v == nullptr || !values.count(*v)) return Status(Code::kUnschedulableAndUnresolvable, std::string(kConflict));
  }
  return {};
}

}  // namespace arbiter::sched::plugins
