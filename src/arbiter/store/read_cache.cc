#include "arbiter/store/read_cache.h"

namespace arbiter::store {

ReadCache::ReadCache(Store& backing, const std::set<std::string>& cached_resources) : backing_(backing) {
  for (const std::string& r : cached_resources) cached_.emplace(r, std::make_unique<Cached>(backing, r));
}

ReadCache::ReadCache(std::unique_ptr<Store> backing, const std::set<std::string>& cached_resources)
    : owned_(std::move(backing)), backing_(*owned_) {
  for (const std::string& r : cached_resources) cached_.emplace(r, std::make_unique<Cached>(backing_, r));
}

StatusOr<Object> ReadCache::Get(const std::string& resource, const std::string& ns, const std::string& name) {
  auto it = cached_.find(resource);
  if (it != cached_.end()) {
    Cached& c = *it->second;
    std::lock_guard<std::mutex> lk(c.mu);
    // A store error leaves the last copy in place; the miss below then asks the store itself.
    if (c.informer.Sync().ok()) {
      if (const Object* o = c.informer.Find({ns, name})) return *o;
    }
  }
  return backing_.Get(resource, ns, name);
}

StatusOr<ListResult> ReadCache::List(const std::string& resource, const std::string& ns) {
  auto it = cached_.find(resource);
  if (it == cached_.end()) return backing_.List(resource, ns);
  Cached& c = *it->second;
  std::lock_guard<std::mutex> lk(c.mu);
  if (Status st = c.informer.Sync(); !st.ok()) return st;
  ListResult r;
  r.revision = c.informer.revision();
  const auto& objects = c.informer.objects();
  // Sorted by namespace, then name: the objects of `ns` are one range.
  auto from = ns.empty() ? objects.begin() : objects.lower_bound({ns, ""});
  for (auto o = from; o != objects.end() && (ns.empty() || o->first.first == ns); ++o) r.items.push_back(*o->second);
  return r;
}

}  // namespace arbiter::store
