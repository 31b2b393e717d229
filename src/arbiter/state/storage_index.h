// StorageIndex: the scheduler's view of the storage objects (claims, volumes, classes, CSI
// nodes) that the volume plugins read, by the keys they look them up with. Not thread-safe: the
// scheduling loop owns it, as it owns the cluster cache.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/model/storage.h"

namespace arbiter::state {

class StorageIndex {
 public:
  void SetClaim(model::PersistentVolumeClaim c);
  void RemoveClaim(const std::string& key);  // namespace/name
  void SetVolume(model::PersistentVolume v);
  void RemoveVolume(const std::string& name);
  void SetClass(model::StorageClass c);
  void RemoveClass(const std::string& name);
  void SetCsiNode(model::CsiNode n);
  void RemoveCsiNode(const std::string& name);

  const model::PersistentVolumeClaim* Claim(std::string_view ns, std::string_view name) const;
  const model::PersistentVolume* Volume(std::string_view name) const;
  const model::StorageClass* Class(std::string_view name) const;
  const model::CsiNode* CsiNode(std::string_view node) const;
  // The class a claim names; a claim that names none (the field absent, not "") takes the
  // default class, as the DefaultStorageClass admission plugin sets it at creation.
  std::string ClassNameOf(const model::PersistentVolumeClaim& c) const;
  // The volumes of a class, in name order.
  const std::vector<const model::PersistentVolume*>& VolumesOfClass(const std::string& cls) const;
  bool empty() const { return claims_.empty() && volumes_.empty() && classes_.empty() && csi_nodes_.empty(); }

 private:
  std::map<std::string, model::PersistentVolumeClaim, std::less<>> claims_;  // by namespace/name
  std::map<std::string, model::PersistentVolume, std::less<>> volumes_;
  std::map<std::string, model::StorageClass, std::less<>> classes_;
  std::map<std::string, model::CsiNode, std::less<>> csi_nodes_;
  mutable std::map<std::string, std::vector<const model::PersistentVolume*>> by_class_;  // rebuilt when stale
  mutable bool by_class_stale_ = true;
};

}  // namespace arbiter::state
