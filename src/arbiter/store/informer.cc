// The informer: list, then watch.
#include "arbiter/store/informer.h"

#include <algorithm>

namespace arbiter::store {

Informer::Informer(Store& store, std::string resource) : store_(store), resource_(std::move(resource)) {}

Status Informer::Relist() {
  if (watch_) watch_->Stop();
  watch_.reset();
  ARBITER_ASSIGN_OR_RETURN(list, store_.List(resource_, ""));
  for (const auto& [key, o] : objects_) Changed(key);  // some may be gone now
  objects_.clear();
  for (auto& o : list.items) {
    auto key = std::make_pair(o.ns, o.name);
    Changed(key);
    objects_.emplace(std::move(key), std::make_shared<const Object>(std::move(o)));
  }
  revision_ = list.revision;
  // A deletion removes the object by its key: its last body is not needed.
  WatchOptions options;
  options.deleted_bodies = false;
  auto w = store_.WatchFrom(resource_, "", revision_, options);
  if (!w.ok()) return w.status();
  watch_ = std::move(*w);
  if (notify_) watch_->SetNotifier(notify_);
  return Status::Ok();
}

void Informer::Pause() {
  if (watch_) watch_->Stop();
  watch_.reset();
}

void Informer::SetNotifier(std::function<void()> notify) {
  notify_ = std::move(notify);
  if (watch_) watch_->SetNotifier(notify_);
}

Status Informer::Sync() {
  pinned_.clear();  // the last pass has read what changed in it
  if (!watch_) return Relist();
  // What this Sync changed, pinned once each at its latest version when it ends: a version that a
  // later event of the same Sync replaced is read by nobody, so its tree is not made (if the tree
  // cache had dropped it, pinning it would parse it for nothing).
  std::vector<Key> touched;
  while (true) {
    auto events = watch_->Next(std::chrono::milliseconds(0));
    if (!events.ok()) {
      // Fell behind (Gone), or the watch broke for good (Unavailable): start over from a list;
      // if the store is unreachable, the list says so and the next Sync tries again.
      return Relist();
    }
    if (events->empty()) break;
    for (EventPtr& e : *events) {
      auto key = std::make_pair(e->object.ns, e->object.name);
      revision_ = std::max(revision_, e->object.revision);
      Changed(key);
      if (e->type == EventType::kDeleted) {
        objects_.erase(key);
        continue;
      }
      const Object* o = &e->object;
      touched.push_back(key);
      objects_[std::move(key)] = ObjectPtr(std::move(e), o);  // shares the event
    }
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (const Key& key : touched) {
    auto it = objects_.find(key);  // gone if a later event of this Sync deleted it
    if (it != objects_.end()) pinned_.push_back(it->second->body.tree());
  }
  return Status::Ok();
}

}  // namespace arbiter::store
