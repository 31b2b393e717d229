// A watch cache: one resource of a store held in memory, kept by listing once and applying the
// store's watch events, that answers lists without touching the store, as kube-apiserver's
// cacher answers them without reading etcd.
//
// What it offers over an Informer:
// * Lists at a revision that a paged list pinned. A page with more to come pins the revision it
//   was read at for `history` (5 minutes, as etcd keeps history for kube-apiserver), and while
//   any revision is pinned the cache keeps the versions (and deletions) written since the oldest
//   one, so that the later pages (`limit`/`continue`) and exact reads see the state at that
//   revision. A revision older than that is Gone (the API's 410 Expired). With nothing pinned
//   the cache holds each object's current version only: old versions cost memory only while
//   someone pages.
// * Pages: items from a key on, at most `limit` of them, and whether any object follows (matching
//   or not, as kube-apiserver's cacher decides whether to hand out a continue token).
// * Indexes: a named function of an object gives the values it is found under (a pod's node
//   name, its phase, its labels as "key=value"); a list at the latest revision that names one
//   reads only the objects under that value instead of scanning all of them. What to index is
//   the caller's policy (the API registers the selectors clients use); the cache knows no kinds.
//
// Consistency: a list at the latest revision first applies every event the store has published,
// which on a backend whose acknowledged writes are in its watch at once (memory, SQLite:
// Store::WatchIsSynchronous) is every write acknowledged before the list began. On another
// (etcd) a resource's watch cannot tell that it has caught up with the store's revision (other
// resources advance it), so the cache refuses to serve (FailedPrecondition) and the caller lists
// the store itself (PageOf pages such a list the same way).
//
// Thread-safety: every method may be called from any thread. One lock guards the cache; a list
// holds it while it picks its items (pointers to immutable objects shared with the watch
// history), never while its answer is encoded.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "arbiter/base/status.h"
#include "arbiter/store/store.h"

namespace arbiter::store {

class Pager;  // fills a page (watch_cache.cc)

class WatchCache {
 public:
  using Key = std::pair<std::string, std::string>;  // (namespace, name)
  // The values an object is indexed under (none: it is in no entry of this index).
  using IndexFunc = std::function<std::vector<std::string>(const Object&)>;

  struct Options {
    // How long a paged list's revision stays readable (etcd compacts history older than 5
    // minutes for kube-apiserver, which bounds its continue tokens the same way).
    std::chrono::milliseconds history = std::chrono::minutes(5);
    // At most this many old versions are kept: beyond, the oldest pins are released early (their
    // continue tokens expire), so that a client paging without end cannot grow the cache.
    size_t max_old_versions = 100000;
    // Steady time in milliseconds; tests inject one.
    std::function<int64_t()> now_millis;
  };

  WatchCache(Store& store, std::string resource, Options options);
  WatchCache(Store& store, std::string resource);
  ~WatchCache();
  WatchCache(const WatchCache&) = delete;
  WatchCache& operator=(const WatchCache&) = delete;

  // Adds an index before the first list (InvalidArgument afterwards, or for a name in use).
  Status AddIndex(const std::string& name, IndexFunc values);

  struct Query {
    std::string ns;  // empty: every namespace
    // 0: the latest revision. Otherwise the list as it was at this revision: Gone when it is
    // older than the kept history, OutOfRange when the store has not reached it.
    int64_t revision = 0;
    // The latest revision, but not older than this one (kube-apiserver's resourceVersionMatch
    // NotOlderThan): OutOfRange when the store has not reached it.
    int64_t min_revision = 0;
    // Only keys at or after this one (a continue token's start: the last key it saw with a
    // '\0' appended to the name).
    std::optional<Key> from;
    size_t limit = 0;  // 0: no limit
    // Candidates are read from this index entry (name, value) when the list is at the latest
    // revision; `match` must still imply it, since a list at an earlier revision scans.
    std::optional<std::pair<std::string, std::string>> index;
    // The index entry is the whole selector: its candidates match without `match` being asked
    // (which would read each object's tree).
    bool index_decides = false;
    // Which objects the list returns (null: all).
    std::function<bool(const Object&)> match;
  };

  struct Page {
    std::vector<ObjectPtr> items;  // by (namespace, name)
    int64_t revision = 0;          // the revision the list was read at
    // Set when `items` holds `limit` objects and another object (matching or not) follows.
    bool more = false;
    // How many objects follow the last item, counted only for a list without `match` (the API's
    // remainingItemCount, which upstream gives only for a list without selectors).
    int64_t remaining = 0;
  };

  // FailedPrecondition when the store's watch is not synchronous (see above).
  StatusOr<Page> List(const Query& query);

  // The object under `key` as of every write acknowledged before the call (consistent as a list
  // at the latest revision is); NotFound when there is none, FailedPrecondition as for List. A
  // server reads single objects here too, so that a GET never waits on the store's writes.
  StatusOr<ObjectPtr> Get(const Key& key);

  // Applies what the store's watch has delivered (a list does so first anyway). A server calls it
  // when the notifier says there is news, so that the cache keeps up between lists: its versions
  // age from when they arrive, and a cache left alone too long falls behind the store's history
  // and must list the store again.
  Status Sync();
  // Calls `notify` (from a writer's thread: it must only schedule work) when the watch may have
  // news for Sync; kept across relists. Set before the first list or Sync.
  void SetNotifier(std::function<void()> notify);

  // The latest revision the cache has applied (after applying what is available).
  StatusOr<int64_t> Revision();
  // The oldest revision a list may still ask for (the oldest pinned one, or the latest).
  int64_t horizon() const;
  // How many keys and versions are held (diagnostics and tests).
  size_t keys() const;
  size_t versions() const;

 private:
  struct Version {
    int64_t revision = 0;
    ObjectPtr object;  // null: deleted at `revision`
  };
  // Index entries point at the keys of versions_ (a std::map: they stay put), a pointer each
  // rather than a copy of the namespace and name.
  struct KeyPtrLess {
    using is_transparent = void;
    bool operator()(const Key* a, const Key* b) const { return *a < *b; }
    bool operator()(const Key* a, const Key& b) const { return *a < b; }
    bool operator()(const Key& a, const Key* b) const { return a < *b; }
  };
  struct Index {
    IndexFunc values;
    std::map<std::string, std::set<const Key*, KeyPtrLess>> entries;  // value → keys whose current version has it
    // Each key's values (its current version's), so that a change need not read the old version.
    std::map<const Key*, std::vector<std::string>, KeyPtrLess> current;
  };

  // Applies what the watch has (lists afresh on the first call and when the watch is gone).
  // Requires mu_.
  Status SyncLocked();
  Status RelistLocked();
  void ApplyLocked(const EventPtr& event);
  // `key` is the one versions_ holds.
  void IndexLocked(const Key& key, const Object* before, const Object* after);
  // Releases expired pins (and the oldest beyond max_old_versions), moves the horizon, and
  // drops the versions no list can ask for any more.
  void PruneLocked();
  void Pin(int64_t revision);
  // The page `pager` made, read at `at`; pins `at` when more is to come.
  Page FinishLocked(Pager& pager, int64_t at);
  int64_t Now() const;

  Store& store_;
  const std::string resource_;
  Options options_;
  const bool synchronous_;

  mutable std::mutex mu_;
  std::unique_ptr<Watch> watch_;
  std::function<void()> notify_;
  bool listed_ = false;
  int64_t revision_ = 0;  // the latest revision applied
  int64_t horizon_ = 0;   // the oldest revision lists may ask for
  // Every key's versions, oldest first: the newest at or before horizon_ and every later one
  // (only the current one while nothing is pinned).
  std::map<Key, std::vector<Version>> versions_;
  size_t version_count_ = 0;
  std::map<std::string, Index> indexes_;
  // Pinned revisions and when each is released (steady milliseconds), oldest revision first.
  std::map<int64_t, int64_t> pins_;
  // Keys that gained an old version, by the revision of the write that superseded it, for pruning.
  std::deque<std::pair<int64_t, Key>> superseded_;
};

// Pages `items` (sorted by namespace, then name, all of one namespace when query.ns is set) as
// WatchCache::List pages its own: from query.from, what query.match selects, up to
// query.limit. The query's revisions and index are not looked at.
WatchCache::Page PageOf(const std::vector<ObjectPtr>& items, int64_t revision, const WatchCache::Query& query);

}  // namespace arbiter::store
