#include "arbiter/state/storage_index.h"

namespace arbiter::state {

void StorageIndex::SetClaim(model::PersistentVolumeClaim c) {
  std::string key = c.Key();
  claims_.insert_or_assign(std::move(key), std::move(c));
}
void StorageIndex::RemoveClaim(const std::string& key) { claims_.erase(key); }
void StorageIndex::SetVolume(model::PersistentVolume v) {
  std::string key = v.name;
  volumes_.insert_or_assign(std::move(key), std::move(v));
  by_class_stale_ = true;
}
void StorageIndex::RemoveVolume(const std::string& name) {
  volumes_.erase(name);
  by_class_stale_ = true;
}
void StorageIndex::SetClass(model::StorageClass c) {
  std::string key = c.name;
  classes_.insert_or_assign(std::move(key), std::move(c));
}
void StorageIndex::RemoveClass(const std::string& name) { classes_.erase(name); }
void StorageIndex::SetCsiNode(model::CsiNode n) {
  std::string key = n.name;
  csi_nodes_.insert_or_assign(std::move(key), std::move(n));
}
void StorageIndex::RemoveCsiNode(const std::string& name) { csi_nodes_.erase(name); }

const model::PersistentVolumeClaim* StorageIndex::Claim(std::string_view ns, std::string_view name) const {
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append("/").append(name);
  auto it = claims_.find(key);
  return it == claims_.end() ? nullptr : &it->second;
}

const model::PersistentVolume* StorageIndex::Volume(std::string_view name) const {
  auto it = volumes_.find(name);
  return it == volumes_.end() ? nullptr : &it->second;
}

const model::StorageClass* StorageIndex::Class(std::string_view name) const {
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : &it->second;
}

const model::CsiNode* StorageIndex::CsiNode(std::string_view node) const {
  auto it = csi_nodes_.find(node);
  return it == csi_nodes_.end() ? nullptr : &it->second;
}

std::string StorageIndex::ClassNameOf(const model::PersistentVolumeClaim& c) const {
  if (c.storage_class_name) return *c.storage_class_name;
  // DefaultStorageClass: the newest default wins upstream; with no timestamps kept, the first
  // by name (a total order) does.
  for (const auto& [name, cls] : classes_) {
    if (cls.is_default) return name;
  }
  return "";
}

const std::vector<const model::PersistentVolume*>& StorageIndex::VolumesOfClass(const std::string& cls) const {
  if (by_class_stale_) {
    by_class_.clear();
    for (const auto& [name, v] : volumes_) by_class_[v.storage_class_name].push_back(&v);
    by_class_stale_ = false;
  }
  static const std::vector<const model::PersistentVolume*> kNone;
  auto it = by_class_.find(cls);
  return it == by_class_.end() ? kNone : it->second;
}

}  // namespace arbiter::state
