// The state store of `arbiter serve`: versioned objects by resource, namespace and name, with
// conditional writes and watches that resume from a revision.
//
// The store knows nothing of Kubernetes kinds: an object is a JSON body under a key. Every
// write advances one store-wide revision; an object's revision is that of its last write and is
// what the API serves as metadata.resourceVersion (the store writes it into the body). This is
// etcd's model, so that an etcd backend can implement the interface directly.
//
// Errors (base::Status codes): NotFound, AlreadyExists, Conflict (an expected revision did not
// match), Gone (a watch asked for history that is no longer kept), Unavailable (the backend
// could not be reached), InvalidArgument (an empty resource or name), Internal.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "arbiter/base/json.h"

#include "arbiter/base/status.h"
#include "arbiter/store/body.h"

namespace arbiter::store {

using Json = nlohmann::json;

struct Object {
  std::string resource;  // plural, lower case: "pods", "nodes", "priorityclasses"
  std::string ns;        // empty for cluster-scoped objects
  std::string name;
  int64_t revision = 0;  // the revision of the object's last write
  Body body;             // with metadata.resourceVersion = the decimal revision (body.h)
};

enum class EventType { kAdded, kModified, kDeleted };
const char* EventTypeName(EventType t);  // "ADDED", "MODIFIED", "DELETED"

struct Event {
  EventType type = EventType::kAdded;
  // For kDeleted: the object as last stored, with `revision` (and the body's resourceVersion)
  // set to the revision of the deletion.
  Object object;
};

// Events are immutable once written and shared by every watch that delivers them (and by the
// informers that keep their objects), so a change costs one copy of its body however many
// watchers read it.
using EventPtr = std::shared_ptr<const Event>;

// An object as a batched write stored it. Backends that publish their own events share it with
// the event (an aliasing pointer into it), so a write's result costs no copy of its body.
using ObjectPtr = std::shared_ptr<const Object>;
// A single write's result as Apply returns it (the object moved into a pointer of its own).
StatusOr<ObjectPtr> Shared(StatusOr<Object> r);

struct ListResult {
  std::vector<Object> items;  // sorted by namespace, then name
  int64_t revision = 0;       // the store revision the list was read at
};

// What a watcher needs of its events.
struct WatchOptions {
  // A deletion's event carries the object as it last was, as kube-apiserver's DELETED events do.
  // A watcher that only needs to know what went (an informer drops it by key) may waive that; a
  // backend may then send deletions with an empty body. On etcd it spares the previous value
  // (prev_kv) that would otherwise come with every event of the stream, changes included; the
  // in-process backends, whose events carry the body anyway, ignore it.
  bool deleted_bodies = true;
};

// A stream of events after a revision, in revision order, for one resource (and namespace).
class Watch {
 public:
  virtual ~Watch() = default;
  // Waits up to `timeout` for events and returns the ones available (none on timeout).
  // Gone when the watcher fell behind the kept history; FailedPrecondition after Stop.
  virtual StatusOr<std::vector<EventPtr>> Next(std::chrono::milliseconds timeout) = 0;
  // Ends the stream; a Next blocked in another thread returns at once. Safe to call twice.
  virtual void Stop() = 0;
  // Asks to be called (from the writer's thread, so it must only schedule work and return) when
  // events may be available, so that an event-driven reader need not poll; an empty function
  // removes it. False when the backend cannot notify: the reader polls Next(0) instead.
  virtual bool SetNotifier(std::function<void()> notify) {
    (void)notify;
    return false;
  }
};

// One write of a batch (Store::Apply).
struct WriteOp {
  enum class Kind { kCreate, kUpdate, kDelete };
  Kind kind = Kind::kUpdate;
  std::string resource, ns, name;
  // Create, update: the new body.
  Json body;
  // Delete: the object's body at expected_revision as the caller holds it, the version itself
  // (shared, not copied: bodies at a revision never change), which a backend may use for the
  // deletion's event instead of reading the stored one; null otherwise (and for an unconditional
  // delete, which it would not describe).
  Body known;
  int64_t expected_revision = 0;   // update, delete: as for Update and Delete
  // What an update is, when its writer says (a typed write): a backend that turns writes into API
  // calls makes that call instead of telling it from the bodies; the others write the body.
  //   * kReplace: any change (the backend may compare `base` and `body`);
  //   * kBind: the pod's binding to spec.nodeName of `body` (rules::BindPod made it), which the
  //     API's pods/binding subresource makes;
  //   * kStatus: only the status changed (conditions, the nomination): the status subresource;
  //   * kEvict: the status changed and the object is being deleted gracefully (the deletion
  //     timestamp and grace period set): the status subresource, then a DELETE.
  enum class Intent { kReplace, kBind, kStatus, kEvict };
  Intent intent = Intent::kReplace;
  // Update: the body at expected_revision that `body` was made from, given only to a backend
  // that asks for it (Store::WantsUpdateBase): one that turns writes into API calls chooses the
  // call by what changed. Null otherwise.
  Json base;
};

// Thread safety: every backend is safe to call from any number of threads at once. Each write is
// atomic, and all writes take their revisions in one total order; a read sees a write entirely or
// not at all. Watches are owned by one reader each, but Stop may be called from
// any thread. Objects and events a store hands out are immutable and may be shared freely.
class Store {
 public:
  virtual ~Store() = default;

  // Applies `ops` in order, each on its own terms: an op whose precondition fails (NotFound,
  // AlreadyExists, Conflict, InvalidArgument) fails alone, exactly as the single call would, and
  // the others still apply. Every op that succeeds yields one watch event, in order. Backends
  // commit the batch together where they can (SQLite: one transaction, one commit), but every op
  // has a revision of its own on every backend (etcd: a transaction per op), so that a watch
  // resumed from any event's revision misses nothing. When the backend itself fails
  // (Unavailable, Internal), the ops not yet committed fail with that error. One result per op:
  // the object as stored (for a delete: as it was, at the deletion's revision).
  virtual std::vector<StatusOr<ObjectPtr>> Apply(std::vector<WriteOp> ops);
  // Whether Apply wants each update's base body (WriteOp::base); copying it costs the other
  // backends for nothing.
  virtual bool WantsUpdateBase() const { return false; }
  // Whether every write is in the store's watches by the time it is acknowledged, so that a
  // reader that applies all events available (Watch::Next(0)) has seen every write acknowledged
  // before it began (the in-process backends publish under their write lock). On etcd, whose
  // streams arrive on their own, a caught-up reader cannot know it is.
  virtual bool WatchIsSynchronous() const { return false; }

  // Stores a new object at a new revision. AlreadyExists if the key is taken.
  virtual StatusOr<Object> Create(const std::string& resource, const std::string& ns, const std::string& name,
                                  Json body) = 0;
  virtual StatusOr<Object> Get(const std::string& resource, const std::string& ns, const std::string& name) = 0;
  // Replaces the body at a new revision. With expected_revision > 0, only if the object's
  // revision is still that one (else Conflict). NotFound if absent.
  virtual StatusOr<Object> Update(const std::string& resource, const std::string& ns, const std::string& name,
                                  Json body, int64_t expected_revision) = 0;
  // Removes the object (with expected_revision > 0, only if unchanged); returns it as it was,
  // with `revision` set to the deletion's revision.
  virtual StatusOr<Object> Delete(const std::string& resource, const std::string& ns, const std::string& name,
                                  int64_t expected_revision) = 0;
  // Every object of `resource` in namespace `ns` (all namespaces when empty).
  virtual StatusOr<ListResult> List(const std::string& resource, const std::string& ns) = 0;
  // Events of `resource` (in `ns` when not empty) with revision > from_revision. Gone when
  // from_revision is older than the kept history (see Compact).
  virtual StatusOr<std::unique_ptr<Watch>> WatchFrom(const std::string& resource, const std::string& ns,
                                                     int64_t from_revision, WatchOptions options = {}) = 0;
  // The latest revision (0 for an empty store).
  virtual StatusOr<int64_t> Revision() = 0;
  // Forgets the history up to and including `revision`: watches from before it get Gone.
  // OutOfRange when `revision` is negative or later than the latest revision.
  virtual Status Compact(int64_t revision) = 0;
};

// How many events a store keeps for watches unless told otherwise. A watch that asks for older
// history, or falls further behind than this, gets Gone.
inline constexpr size_t kDefaultWatchHistory = 100000;

// An in-memory store (no durability), for tests and `arbiter serve --store memory`.
std::unique_ptr<Store> NewMemoryStore();
// The same, keeping the last `watch_history` events for watches (at least 1); tests use a small
// bound to exercise Gone.
std::unique_ptr<Store> NewMemoryStore(size_t watch_history);

// A SQLite store in `path` (created if absent; WAL journal). Writes are durable once they
// return: an acknowledged write survives the process being killed. With `fsync_every_commit`
// also a power loss (synchronous=FULL; slower). Revisions continue across restarts; the watch
// history starts empty at each open, so a watch from before the revision at open gets Gone.
// `watch_history` bounds the watch history as for NewMemoryStore. Errors name `path`:
// Unavailable when the file cannot be opened or is busy, Internal when it is not a usable
// Arbiter database.
StatusOr<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path, bool fsync_every_commit = false,
                                                 size_t watch_history = kDefaultWatchHistory);

// Where and how OpenEtcdStore reaches etcd.
struct EtcdOptions {
  // Client URLs such as "http://127.0.0.1:2379"; with several (a cluster), a request that cannot
  // reach one endpoint is tried on the next.
  std::vector<std::string> endpoints;
  // Keys are PREFIX/RESOURCE/NAMESPACE/NAME (NAMESPACE empty for cluster-scoped objects).
  std::string prefix = "/arbiter";
  // Bounds every request to one endpoint (connecting, sending, waiting for the answer).
  std::chrono::milliseconds request_timeout{5000};
  // Called with one line per reconnect, failover or timeout (also from the threads that read
  // watch streams, one call at a time); may be empty.
  std::function<void(const std::string&)> log;
};

// A store in etcd (3.4 or later, through its v3 JSON gateway). Revisions are etcd's: an
// object's revision is its mod_revision and Revision() is etcd's header revision, which other
// writers to the same etcd advance too (a fresh etcd starts at 1, not 0). The watch history is
// etcd's own: Compact compacts etcd (physically) and watches from before etcd's compaction get
// Gone; the process keeps no history, and events that etcd already streamed to an open watch
// stay deliverable after a compaction. A watch whose stream breaks resumes after its last event
// (on the next endpoint), and ends with Unavailable when it could not for 30 s. Resources and
// namespaces must not contain '/'. Fails with Unavailable, naming the endpoints, when no
// endpoint answers at open.
StatusOr<std::unique_ptr<Store>> OpenEtcdStore(const EtcdOptions& options);

}  // namespace arbiter::store
