// The watch machinery both store backends share (a bounded, revision-ordered event history that
// watches read from), and the small checks and messages the backends have in common.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "arbiter/base/reaper.h"
#include "arbiter/base/status.h"
#include "arbiter/store/store.h"

namespace arbiter::store {

// How much history a hub keeps: the oldest events go once any bound is passed. Counting events
// alone is not enough (400 copies of a 2.5 MB object are 1 GB), so the bodies' bytes and the
// events' age bound it too; etcd, for comparison, compacts history older than 5 minutes.
struct WatchHubLimits {
  size_t max_events = kDefaultWatchHistory;
  size_t max_bytes = size_t{128} << 20;
  std::chrono::milliseconds max_age = std::chrono::minutes(5);
  // An old version (one a later write of the same object superseded, or a deletion) is kept as
  // its JSON text from this long after it became old: a watch that is up to date has taken it by
  // then, and only a watch that resumes from further back reads it again (parsing it anew). The
  // text is about a fifth of the tree's memory (docs/benchmarks.md). Zero: old versions are kept
  // as they were written.
  std::chrono::milliseconds compact_after = std::chrono::milliseconds(1000);
  // The clock that ages events (steady time in milliseconds); tests inject one.
  std::function<int64_t()> now_millis;
};

// An estimate of the memory a JSON value holds: its strings and numbers and a per-node overhead.
size_t ApproximateBytes(const Json& j);

// Keeps the last events in revision order, within WatchHubLimits, and hands out watches over them.
//
// A backend calls Publish under its write lock after each successful write, so events arrive in
// strictly increasing revision order. Everything up to the "horizon" revision is no longer kept
// (evicted by the bound, dropped by Compact, or from before the hub existed): a watch that needs
// an event at or before the horizon gets Gone. Watches pull from the shared history with their
// own cursor, so a slow watcher costs nothing until it asks.
//
// The newest version of each object is kept as written, shared with whoever else holds it (the
// informers and list caches hold the same event). Old versions, which only the history holds,
// are turned into their JSON text by a thread of the hub's own once they are
// `compact_after` old (WatchHubLimits), and counted at the text's size; a watch that reads one
// gets an event parsed from it, equal to the one published. Thread-safe.
class WatchHub {
 public:
  // `start_revision` is the store's revision when the hub is created: history before it is not
  // available. A `capacity` of 0 is taken as 1.
  explicit WatchHub(size_t capacity = kDefaultWatchHistory, int64_t start_revision = 0);
  WatchHub(WatchHubLimits limits, int64_t start_revision);
  // Watches still open report Unavailable from then on.
  ~WatchHub();
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // Appends an event (its revision must exceed every earlier one) and wakes blocked watchers.
  // Returns the event as the watches share it (a backend's write result may alias its object).
  // `bytes` estimates the memory the event holds, for the history's byte bound; 0: the hub
  // estimates it from the body (ApproximateBytes), which walks the tree.
  EventPtr Publish(Event event, size_t bytes = 0);
  // Drops the history up to and including `revision`.
  void Compact(int64_t revision);
  // A watch of `resource` (and `ns` when not empty) delivering events after `from_revision`.
  // Gone when events after `from_revision` are no longer all kept; InvalidArgument for an
  // empty resource or a negative revision.
  StatusOr<std::unique_ptr<Watch>> WatchFrom(const std::string& resource, const std::string& ns,
                                             int64_t from_revision);

  // The revision up to which history is no longer kept.
  int64_t horizon() const;
  // How many events are kept, and how many watches are open (for diagnostics and tests).
  size_t size() const;
  size_t bytes() const;  // ApproximateBytes of the kept events' bodies (the text's size once compacted)
  size_t watchers() const;
  size_t compacted() const;  // how many kept events are held as their JSON text
  // Turns every old version whose time has come (by the hub's clock) into its text now, and
  // returns how many it turned. The hub's thread calls it several times a second; with an
  // injected clock (WatchHubLimits::now_millis) there is no such thread and the caller calls it.
  size_t CompactOld();

  struct State;  // shared with the watches, which may outlive the hub (watch_hub.cc)

 private:
  void CompactorLoop();

  std::shared_ptr<State> state_;
  // Events that leave the history are released here, off the writer's thread and outside the
  // hub's lock: the last reference to an old version frees its whole body.
  std::unique_ptr<Reaper> reaper_;
  std::thread compactor_;  // runs CompactOld (when limits.compact_after > 0)
};

// ---- Helpers shared by the backends (implemented in store.cc) ----

// How messages name an object: `pods "default/web-1"`, `nodes "n1"`.
std::string DescribeKey(const std::string& resource, const std::string& ns, const std::string& name);
// InvalidArgument when `resource` or `name` is empty.
Status ValidateKey(const std::string& resource, const std::string& ns, const std::string& name);
// InvalidArgument unless `body` is a JSON object whose metadata, if present, is an object.
Status ValidateBody(const std::string& resource, const std::string& ns, const std::string& name,
                    const Json& body);
// Sets metadata.resourceVersion to the decimal `revision` (the body must have passed
// ValidateBody).
void StampRevision(Json& body, int64_t revision);
// The same for a version already made (a deletion's): a new version, made from its text when it
// has one (the revision spliced in, no tree), else from its tree (moved out when this Body is the
// version's only holder, copied otherwise).
void StampRevision(::arbiter::store::Body& body, int64_t revision);
// Conflict when `expected_revision` > 0 and `current` is at another revision; `op` is the
// verb for the message ("update", "delete").
Status CheckExpectedRevision(const char* op, const Object& current, int64_t expected_revision);
// The error of Compact for a revision outside [0, latest]; OK otherwise.
Status ValidateCompact(int64_t revision, int64_t latest);

}  // namespace arbiter::store
