// The watch cache: a versioned in-memory copy of one resource, paged lists read from it.
#include "arbiter/store/watch_cache.h"

#include "arbiter/store/watch_hub.h"  // DescribeKey

#include <algorithm>

namespace arbiter::store {

// Fills a page from objects offered in key order: up to the limit of what matches, then
// whether any object follows (and, for a list without a filter, how many do).
class Pager {
 public:
  explicit Pager(const WatchCache::Query& query) : query_(query) {}
  // False once the page is decided and nothing more need be offered.
  bool Offer(const ObjectPtr& object) {
    if (query_.limit == 0 || page_.items.size() < query_.limit) {
      if (!query_.match || query_.match(*object)) page_.items.push_back(object);
      return true;
    }
    page_.more = true;
    if (query_.match) return false;
    ++page_.remaining;
    return true;
  }
  WatchCache::Page Take(int64_t revision) {
    if (!page_.more) page_.remaining = 0;
    page_.revision = revision;
    return std::move(page_);
  }

 private:
  const WatchCache::Query& query_;
  WatchCache::Page page_;
};

namespace {

// Where a scan of keys in (namespace, name) order starts, given the query's namespace and start.
WatchCache::Key FirstKey(const WatchCache::Query& q) {
  WatchCache::Key first{q.ns, ""};
  if (q.from && *q.from > first) first = *q.from;
  return first;
}

bool InNamespace(const WatchCache::Query& q, const WatchCache::Key& key) { return q.ns.empty() || key.first == q.ns; }

}  // namespace

WatchCache::Page PageOf(const std::vector<ObjectPtr>& items, int64_t revision, const WatchCache::Query& query) {
  Pager pager(query);
  const WatchCache::Key first = FirstKey(query);
  auto it = std::lower_bound(items.begin(), items.end(), first, [](const ObjectPtr& o, const WatchCache::Key& k) {
    return std::tie(o->ns, o->name) < std::tie(k.first, k.second);
  });
  for (; it != items.end(); ++it) {
    if (!InNamespace(query, {(*it)->ns, (*it)->name})) break;
    if (!pager.Offer(*it)) break;
  }
  return pager.Take(revision);
}

WatchCache::WatchCache(Store& store, std::string resource, Options options)
    : store_(store), resource_(std::move(resource)), options_(std::move(options)),
      synchronous_(store.WatchIsSynchronous()) {
  if (!options_.now_millis) {
    options_.now_millis = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
}

WatchCache::WatchCache(Store& store, std::string resource) : WatchCache(store, std::move(resource), Options{}) {}

WatchCache::~WatchCache() {
  if (watch_) watch_->Stop();
}

int64_t WatchCache::Now() const { return options_.now_millis(); }

Status WatchCache::AddIndex(const std::string& name, IndexFunc values) {
  std::lock_guard<std::mutex> lock(mu_);
  if (listed_) return InvalidArgument("the watch cache of " + resource_ + " is in use: index " + name + " comes too late");
  if (!values || indexes_.count(name) != 0) {
    return InvalidArgument("the watch cache of " + resource_ + " cannot add index " + name + " (empty, or named twice)");
  }
  indexes_[name].values = std::move(values);
  return Status::Ok();
}

void WatchCache::IndexLocked(const Key& key, const Object* before, const Object* after) {
  (void)before;  // its values are kept (Index::current)
  for (auto& [name, index] : indexes_) {
    std::vector<std::string> new_values = after ? index.values(*after) : std::vector<std::string>{};
    auto cur = index.current.find(&key);
    static const std::vector<std::string> kNone;
    const std::vector<std::string>& old_values = cur != index.current.end() ? cur->second : kNone;
    if (old_values == new_values) continue;
    for (const std::string& v : old_values) {
      auto it = index.entries.find(v);
      if (it == index.entries.end()) continue;
      it->second.erase(&key);
      if (it->second.empty()) index.entries.erase(it);
    }
    for (const std::string& v : new_values) index.entries[v].insert(&key);
    if (new_values.empty()) {
      if (cur != index.current.end()) index.current.erase(cur);
    } else if (cur != index.current.end()) {
      cur->second = std::move(new_values);
    } else {
      index.current.emplace(&key, std::move(new_values));
    }
  }
}

Status WatchCache::RelistLocked() {
  if (watch_) watch_->Stop();
  watch_.reset();
  auto listed = store_.List(resource_, "");
  if (!listed.ok()) return listed.status();
  ListResult& list = *listed;
  versions_.clear();
  version_count_ = 0;
  for (auto& [name, index] : indexes_) {
    index.entries.clear();
    index.current.clear();
  }
  pins_.clear();
  superseded_.clear();
  for (Object& o : list.items) {
    Key key{o.ns, o.name};
    auto object = std::make_shared<const Object>(std::move(o));
    auto it = versions_.try_emplace(std::move(key)).first;
    IndexLocked(it->first, nullptr, object.get());
    it->second.push_back(Version{object->revision, std::move(object)});
    ++version_count_;
  }
  revision_ = list.revision;
  horizon_ = list.revision;  // what came before the list is not known
  // A deletion is applied by its key: the cache holds the last body already.
  WatchOptions watch_options;
  watch_options.deleted_bodies = false;
  auto watch = store_.WatchFrom(resource_, "", revision_, watch_options);
  if (!watch.ok()) return watch.status();
  watch_ = std::move(*watch);
  if (notify_) watch_->SetNotifier(notify_);
  listed_ = true;
  return Status::Ok();
}

void WatchCache::ApplyLocked(const EventPtr& event) {
  const Object& o = event->object;
  Key key{o.ns, o.name};
  auto it = versions_.try_emplace(std::move(key)).first;
  std::vector<Version>& vs = it->second;
  const Object* before = vs.empty() ? nullptr : vs.back().object.get();
  ObjectPtr after = event->type == EventType::kDeleted ? nullptr : ObjectPtr(event, &o);
  IndexLocked(it->first, before, after.get());
  revision_ = std::max(revision_, o.revision);
  if (pins_.empty()) {
    // Nothing pinned: no list can ask for the old version.
    version_count_ -= vs.size();
    vs.clear();
    if (!after) {
      versions_.erase(it);
      return;
    }
    vs.push_back(Version{o.revision, std::move(after)});
    ++version_count_;
    return;
  }
  // The key now has a version a later prune may drop (or, deleted, may go altogether).
  if (!vs.empty() || !after) superseded_.emplace_back(o.revision, it->first);
  vs.push_back(Version{o.revision, std::move(after)});
  ++version_count_;
}

void WatchCache::Pin(int64_t revision) {
  const int64_t until = Now() + options_.history.count();
  auto [it, added] = pins_.emplace(revision, until);
  if (!added) it->second = std::max(it->second, until);
  horizon_ = std::min(horizon_, pins_.begin()->first);
}

void WatchCache::PruneLocked() {
  const int64_t now = Now();
  for (auto it = pins_.begin(); it != pins_.end();) it = it->second <= now ? pins_.erase(it) : std::next(it);
  // Too many old versions: every pin goes (their continue tokens expire) and with them the
  // versions they held.
  if (version_count_ > versions_.size() + options_.max_old_versions) pins_.clear();
  horizon_ = pins_.empty() ? revision_ : pins_.begin()->first;
  while (!superseded_.empty() && (pins_.empty() || superseded_.front().first <= horizon_)) {
    auto it = versions_.find(superseded_.front().second);
    superseded_.pop_front();
    if (it == versions_.end()) continue;
    std::vector<Version>& vs = it->second;
    // Keep the newest version at or before the horizon (what a list at the horizon reads) and
    // every later one.
    size_t keep_from = 0;
    while (keep_from + 1 < vs.size() && vs[keep_from + 1].revision <= horizon_) ++keep_from;
    if (keep_from > 0) {
      vs.erase(vs.begin(), vs.begin() + static_cast<std::ptrdiff_t>(keep_from));
      version_count_ -= keep_from;
    }
    if (vs.size() == 1 && !vs.front().object && vs.front().revision <= horizon_) {
      versions_.erase(it);
      --version_count_;
    }
  }
}

Status WatchCache::SyncLocked() {
  if (!watch_) return RelistLocked();
  while (true) {
    auto events = watch_->Next(std::chrono::milliseconds(0));
    if (!events.ok()) {
      // Fell behind the store's history (Gone) or the watch broke: start over from a list.
      ARBITER_RETURN_IF_ERROR(RelistLocked());
      break;
    }
    if (events->empty()) break;
    for (const EventPtr& e : *events) ApplyLocked(e);
  }
  PruneLocked();
  return Status::Ok();
}

WatchCache::Page WatchCache::FinishLocked(Pager& pager, int64_t at) {
  Page page = pager.Take(at);
  // More to come: the next pages read at this revision, which stays readable for a while.
  if (page.more) Pin(at);
  return page;
}

StatusOr<WatchCache::Page> WatchCache::List(const Query& query) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!synchronous_) {
    return FailedPrecondition("the watch cache of " + resource_ +
                              " needs a store whose watch has every acknowledged write at once");
  }
  // The store's revision before the sync: every write up to it is then applied, and the state
  // of this resource holds from its own last write until that revision (other resources' writes
  // advance the store's revision too), so that is the revision the list is read at.
  ARBITER_ASSIGN_OR_RETURN(store_revision, store_.Revision());
  ARBITER_RETURN_IF_ERROR(SyncLocked());
  const int64_t latest = std::max(revision_, store_revision);
  int64_t at = latest;
  if (query.revision > 0) {
    if (query.revision < horizon_) {
      return Gone("revision " + std::to_string(query.revision) + " of " + resource_ +
                  " is older than the cache keeps (from " + std::to_string(horizon_) + ")");
    }
    if (query.revision > latest) {
      return OutOfRange("revision " + std::to_string(query.revision) + " of " + resource_ +
                        " is later than the store's " + std::to_string(latest));
    }
    at = query.revision;
  }
  if (query.min_revision > latest) {
    return OutOfRange("revision " + std::to_string(query.min_revision) + " of " + resource_ +
                      " is later than the store's " + std::to_string(latest));
  }
  Pager pager(query);
  const Key first = FirstKey(query);
  auto version_at = [&](const std::vector<Version>& vs) -> const ObjectPtr* {
    if (at >= revision_) return &vs.back().object;
    for (auto v = vs.rbegin(); v != vs.rend(); ++v) {
      if (v->revision <= at) return &v->object;
    }
    return nullptr;  // created after `at`
  };
  if (query.index && at >= revision_) {
    auto index = indexes_.find(query.index->first);
    if (index == indexes_.end()) return InvalidArgument("the watch cache of " + resource_ + " has no index " + query.index->first);
    Query unfiltered;  // the index entry is the selector: every candidate matches
    if (query.index_decides) {
      unfiltered = query;
      unfiltered.match = nullptr;
    }
    Pager indexed(query.index_decides ? unfiltered : query);
    auto entry = index->second.entries.find(query.index->second);
    if (entry != index->second.entries.end()) {
      for (auto key = entry->second.lower_bound(first); key != entry->second.end(); ++key) {
        if (!InNamespace(query, **key)) break;
        const ObjectPtr& object = versions_.at(**key).back().object;
        if (object && !indexed.Offer(object)) break;
      }
    }
    Page page = FinishLocked(indexed, at);
    if (query.index_decides) page.remaining = 0;  // counted only for lists without a filter
    return page;
  }
  for (auto it = versions_.lower_bound(first); it != versions_.end(); ++it) {
    if (!InNamespace(query, it->first)) break;
    const ObjectPtr* object = version_at(it->second);
    if (object == nullptr || !*object) continue;
    if (!pager.Offer(*object)) break;
  }
  return FinishLocked(pager, at);
}

StatusOr<ObjectPtr> WatchCache::Get(const Key& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!synchronous_) {
    return FailedPrecondition("the watch cache of " + resource_ + " needs a store whose watch has every acknowledged write at once");
  }
  ARBITER_RETURN_IF_ERROR(SyncLocked());
  auto it = versions_.find(key);
  if (it == versions_.end() || !it->second.back().object) return NotFound(DescribeKey(resource_, key.first, key.second) + " not found");
  return it->second.back().object;
}

Status WatchCache::Sync() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!synchronous_) return Status::Ok();
  return SyncLocked();
}

void WatchCache::SetNotifier(std::function<void()> notify) {
  std::lock_guard<std::mutex> lock(mu_);
  notify_ = std::move(notify);
  if (watch_) watch_->SetNotifier(notify_);
}

StatusOr<int64_t> WatchCache::Revision() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!synchronous_) return store_.Revision();
  ARBITER_RETURN_IF_ERROR(SyncLocked());
  return revision_;
}

int64_t WatchCache::horizon() const {
  std::lock_guard<std::mutex> lock(mu_);
  return horizon_;
}

size_t WatchCache::keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return versions_.size();
}

size_t WatchCache::versions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return version_count_;
}

}  // namespace arbiter::store
