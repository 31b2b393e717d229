// An informer: a local, up-to-date copy of one resource of a store, kept by listing once and
// then applying the store's watch events (relisting when the watch expires). Readers of many
// objects per pass (the control loop) read this copy instead of listing the store each time.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>
#include <string>
#include <tuple>
#include <utility>

#include "arbiter/store/store.h"

namespace arbiter::store {

class Informer {
 public:
  Informer(Store& store, std::string resource);
  // Applies every event available now (lists afresh on the first call and after Gone).
  Status Sync();
  // Stops the watch (its events would pile up unread while nobody syncs, as on a replica that
  // lost leadership); the objects stay, and the next Sync lists afresh.
  void Pause();
  using Key = std::pair<std::string, std::string>;  // (namespace, name)
  // An object as the last event delivered it: shared with the watch history, never copied.
  using ObjectPtr = std::shared_ptr<const Object>;
  // Objects by (namespace, name), in that order.
  const std::map<Key, ObjectPtr>& objects() const { return objects_; }
  // The object under `key`, or nullptr.
  const Object* Find(const Key& key) const {
    auto it = objects_.find(key);
    return it == objects_.end() ? nullptr : it->second.get();
  }
  // The store revision the copy reflects.
  int64_t revision() const { return revision_; }

  // The keys of the objects added, changed or deleted since the last call (after a relist:
  // every key before and after it), for a consumer that reconciles each against objects().
  // Each consumer has its own record: consumer 0 always exists; AddConsumer makes another.
  size_t AddConsumer() {
    changed_.emplace_back();
    return changed_.size() - 1;
  }
  std::set<Key> TakeChanged(size_t consumer = 0) { return std::exchange(changed_.at(consumer), {}); }
  // Calls `notify` (from a writer's thread: it must only schedule work) when events may be
  // waiting for Sync, so that a consumer can sleep until there is news. Kept across relists.
  // Backends that cannot notify never call it; the consumer's timeout covers them.
  void SetNotifier(std::function<void()> notify);

 private:
  Status Relist();
  Store& store_;
  std::string resource_;
  std::unique_ptr<Watch> watch_;
  std::map<Key, ObjectPtr> objects_;
  int64_t revision_ = 0;
  void Changed(const Key& key) {
    for (auto& c : changed_) c.insert(key);
  }
  std::vector<std::set<Key>> changed_ = std::vector<std::set<Key>>(1);  // by consumer
  std::function<void()> notify_;
  // The trees of the objects the last Sync changed (their latest versions), held until the next: the consumers of a
  // pass read each of them, so the tree cache (body.h) must not make each consumer parse it.
  std::vector<Body::Tree> pinned_;
};

}  // namespace arbiter::store
