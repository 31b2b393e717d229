// The encodings of object versions, made once and shared (see encoding_cache.h).
#include "arbiter/api/encoding_cache.h"

namespace arbiter::api {

namespace {

// What an entry holds: its text, its key's strings (twice: the map's and the LRU list's) and the
// nodes.
template <typename Key>
size_t EntryBytes(const Key& key, const std::string& text) {
  return text.size() + 2 * (std::get<2>(key).size() + std::get<3>(key).size() + std::get<4>(key).size()) + 256;
}

}  // namespace

std::shared_ptr<const std::string> EncodingCache::Get(const store::Object& object, int form,
                                                      const std::function<void(std::string&)>& encode) {
  Key key{object.revision, form, object.resource, object.ns, object.name};
  if (max_bytes_ > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      ++hits_;
      return it->second.text;
    }
    ++misses_;
  }
  // Encoded outside the lock: two requests may both encode a version the first time; one of the
  // two is kept.
  auto text = std::make_shared<std::string>();
  encode(*text);
  std::shared_ptr<const std::string> out = std::move(text);
  const size_t bytes = EntryBytes(key, *out);
  if (max_bytes_ == 0 || bytes > max_bytes_ / 4) return out;  // never kept: one would crowd out the rest
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = entries_.try_emplace(std::move(key));
  if (!inserted) return it->second.text;
  lru_.push_front(it->first);
  it->second = Entry{out, lru_.begin()};
  bytes_ += bytes;
  while (bytes_ > max_bytes_ && !lru_.empty()) {
    auto victim = entries_.find(lru_.back());
    bytes_ -= EntryBytes(victim->first, *victim->second.text);
    entries_.erase(victim);
    lru_.pop_back();
  }
  return out;
}

EncodingCache::Stats EncodingCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Stats{hits_, misses_, entries_.size(), bytes_};
}

}  // namespace arbiter::api
