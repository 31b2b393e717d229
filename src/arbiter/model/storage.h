// The storage objects the volume plugins read: v1 PersistentVolumeClaim and PersistentVolume,
// storage.k8s.io/v1 StorageClass and CSINode, and a pod's volumes. Validated and defaulted by
// manifest/; only the fields scheduling reads are kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/model/labels.h"

namespace arbiter::model {

// A pod volume that the scheduler looks at: a persistentVolumeClaim, or a generic ephemeral
// volume (whose claim, made by the ephemeral volume controller, is named <pod>-<volume>).
struct PodVolume {
  std::string name;
  std::string claim_name;  // for an ephemeral volume, <pod>-<volume>
  bool ephemeral = false;
  bool read_only = false;
};

inline constexpr std::string_view kReadWriteOncePod = "ReadWriteOncePod";
// The annotation the PV controller puts on a claim once it is bound.
inline constexpr std::string_view kAnnBindCompleted = "pv.kubernetes.io/bind-completed";
// The annotation the scheduler puts on a claim to have it provisioned for a node.
inline constexpr std::string_view kAnnSelectedNode = "volume.kubernetes.io/selected-node";
inline constexpr std::string_view kNoProvisioner = "kubernetes.io/no-provisioner";

struct PersistentVolumeClaim {
  std::string ns = "default";
  std::string name;
  std::optional<std::string> storage_class_name;  // spec.storageClassName; absent != ""
  std::string volume_name;                        // spec.volumeName
  std::vector<std::string> access_modes;
  int64_t request = 0;  // spec.resources.requests.storage, bytes
  std::optional<LabelSelector> selector;
  std::string volume_mode = "Filesystem";
  std::string phase = "Pending";  // status.phase: Pending, Bound, Lost
  bool bind_completed = false;    // the pv.kubernetes.io/bind-completed annotation
  std::string selected_node;      // the volume.kubernetes.io/selected-node annotation
  bool deleting = false;          // metadata.deletionTimestamp set

  std::string Key() const { return ns + "/" + name; }
  bool HasAccessMode(std::string_view m) const;
  // Bound to its volume: the PV controller finished the binding (kube-scheduler's test is the
  // annotation; a claim whose status says Bound is taken as bound too, as a dump may omit it).
  bool Bound() const { return !volume_name.empty() && (bind_completed || phase == "Bound"); }
};

struct ClaimReference {
  std::string ns;
  std::string name;
  std::string uid;
};

struct PersistentVolume {
  std::string name;
  LabelMap labels;
  int64_t capacity = 0;  // spec.capacity.storage, bytes
  std::vector<std::string> access_modes;
  std::string storage_class_name;
  std::string volume_mode = "Filesystem";
  std::optional<NodeSelector> node_affinity;  // spec.nodeAffinity.required
  std::optional<ClaimReference> claim_ref;
  std::string phase = "Available";  // status.phase
  std::string csi_driver;           // spec.csi.driver
  std::string csi_volume_handle;    // spec.csi.volumeHandle
  bool deleting = false;

  bool HasAccessMode(std::string_view m) const;
};

// One term of a StorageClass's allowedTopologies: every expression must match (a label and its
// allowed values).
struct TopologySelectorTerm {
  std::vector<std::pair<std::string, std::vector<std::string>>> match_label_expressions;
  bool Matches(const LabelMap& node_labels) const;
};

enum class VolumeBindingMode { kImmediate, kWaitForFirstConsumer };

struct StorageClass {
  std::string name;
  std::string provisioner;
  VolumeBindingMode binding_mode = VolumeBindingMode::kImmediate;
  std::vector<TopologySelectorTerm> allowed_topologies;  // empty: anywhere
  bool is_default = false;  // storageclass.kubernetes.io/is-default-class: "true"
};

struct CsiNodeDriver {
  std::string name;
  std::optional<int64_t> allocatable_count;  // allocatable.count: the most volumes of this driver
};

struct CsiNode {
  std::string name;  // the node's name
  std::vector<CsiNodeDriver> drivers;
};

}  // namespace arbiter::model
