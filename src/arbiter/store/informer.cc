// The informer: list, then watch.
#include "arbiter/store/informer.h"

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
  while (true) {
    auto events = watch_->Next(std::chrono::milliseconds(0));
    if (!events.ok()) {
      // Fell behind (Gone), or the watch broke for good (Unavailable): start over from a list;
      // if the store is unreachable, the list says so and the next Sync tries again.
      return Relist();
    }
    if (events->empty()) return Status::Ok();
    for (EventPtr& e : *events) {
      auto key = std::make_pair(e->object.ns, e->object.name);
      revision_ = std::max(revision_, e->object.revision);
      Changed(key);
      if (e->type == EventType::kDeleted) {
        objects_.erase(key);
      } else {
        const Object* o = &e->object;
        pinned_.push_back(o->body.tree());
        objects_[key] = ObjectPtr(std::move(e), o);  // shares the event
      }
    }
  }
}

}  // namespace arbiter::store
