// The encodings of object versions, made once and shared while clients keep asking for them.
//
// A client that polls a list (a controller's resync, a dashboard, `kubectl get -w` falling back
// to lists) gets the same versions time after time: the pending pods of a cluster under
// preemption, say, every 100 ms. Encoding each of them again is most of such a list's cost. A
// version's body never changes, so its encoding is keyed by (resource, namespace, name,
// revision) and kept, within a byte bound, the least recently used going first.
//
// Thread-safe. Encodings are handed out as shared strings, so one evicted while a response still
// writes it stays valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "arbiter/store/store.h"

namespace arbiter::api {

class EncodingCache {
 public:
  // `max_bytes` bounds the encodings kept (0: none is kept; every call encodes).
  explicit EncodingCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  // The encoding of `object` that `encode` appends to a string: the kept one, or made now and
  // kept. `form` tells apart encodings of the same version (a list item, an events.k8s.io/v1
  // item, ...); `encode` must depend on nothing but the object and the form.
  std::shared_ptr<const std::string> Get(const store::Object& object, int form,
                                         const std::function<void(std::string&)>& encode);

  struct Stats {
    uint64_t hits = 0, misses = 0;
    size_t entries = 0, bytes = 0;
  };
  Stats stats() const;

 private:
  using Key = std::tuple<int64_t, int, std::string, std::string, std::string>;  // revision first
  struct Entry {
    std::shared_ptr<const std::string> text;
    std::list<Key>::iterator lru;
  };
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::map<Key, Entry> entries_;
  std::list<Key> lru_;  // most recently used first
  size_t bytes_ = 0;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace arbiter::api
