// The Kubernetes-compatible API of `arbiter serve`, independent of the HTTP transport: a request
// (method, path, query, headers, body) goes in, a response (code, content type, body, or a
// watch to stream) comes out. Wire objects are converted and checked here, at the edge: the
// store below holds them as JSON, the scheduler reads them through its own decoding.
//
// What it does per request: discovery (/api, /apis, group versions, /version); create, get,
// list, update, patch, delete and watch of every resource in resources.h; the pods' status,
// binding and eviction subresources; label and field selectors; resourceVersion preconditions
// (409 Conflict); Table output; graceful deletion of bound pods; admission (see Admission).
// Errors are Kubernetes Status bodies with the matching code.
#pragma once

#include <chrono>
#include <condition_variable>
#include <thread>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "arbiter/api/tables.h"
#include "arbiter/base/json.h"

#include "arbiter/api/authz.h"
#include "arbiter/api/container_logs.h"
#include "arbiter/api/encoding_cache.h"
#include "arbiter/api/resources.h"
#include "arbiter/api/selectors.h"
#include "arbiter/base/rng.h"
#include "arbiter/base/time.h"
#include "arbiter/store/read_cache.h"
#include "arbiter/store/store.h"
#include "arbiter/store/watch_cache.h"

namespace arbiter::api {

struct Request {
  std::string method;  // GET, POST, PUT, PATCH, DELETE
  std::string path;
  std::map<std::string, std::string> query;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string user;  // the authenticated user ("" when authentication is off)
  std::string uid;
  std::set<std::string> groups;  // the user's groups (authentication on)
  bool authenticated = false;    // false: authentication is off, every request may do anything
};

// A watch to stream: events of `resource` after `from_revision`, filtered, each written as
// one JSON line {"type":..., "object":...}.
struct WatchStream {
  std::unique_ptr<store::Watch> watch;
  std::string resource;
  Selector labels;
  Selector fields;
  bool as_table = false;
  TableObject table_object = TableObject::kMetadata;  // with as_table: what each row carries
  bool events_v1 = false;  // events.k8s.io/v1: each stored core Event converted
  // Frames of application/vnd.kubernetes.protobuf;stream=watch (the client asked for protobuf
  // and the kind has a protobuf form) instead of JSON lines.
  bool protobuf = false;
  // Objects to send first as ADDED (a watch without a resourceVersion starts with the state),
  // already selected.
  std::vector<store::ObjectPtr> initial;
  int64_t timeout_seconds = 1800;
};

// A response streamed as it is made (`kubectl logs -f`): the body first, then what `next` gives,
// polled every `poll`, until it says the stream ended (nullopt), `timeout` passes or the client
// goes. `next` runs on an I/O thread: it must not block.
struct TextStream {
  std::function<std::optional<std::string>()> next;
  std::chrono::milliseconds poll{250};
  std::chrono::seconds timeout{3600};
  // The connection stays open for the client's next request once the stream ends (a list written
  // a chunk at a time); a stream without a natural end closes it.
  bool keep_alive = false;
};

struct Response {
  int code = 200;
  std::string content_type = "application/json";
  std::string body;
  std::shared_ptr<WatchStream> watch;  // set for watch requests: stream instead of body
  std::vector<std::string> warnings;    // each sent as a `Warning: 299 - "..."` header
  std::shared_ptr<TextStream> stream;   // set: the body, then this, chunked
};

// A hook that checks or completes an object before it is stored. `old` is null on create.
// Returning a non-OK status rejects the request (InvalidArgument → 422, FailedPrecondition →
// 403 Forbidden, others as mapped by StatusToHttp).
using AdmissionHook = std::function<Status(const ResourceInfo& resource, nlohmann::json& object,
                                           const nlohmann::json* old, store::Store& store)>;

// Thread safety: Handle (and WatchLine, PrepareListCaches) may be called from any number of
// threads at once; the HTTP edge calls Handle from its I/O threads and its fair seats. What
// requests share is guarded inside: the uid source, the cached watch lines and the list caches
// each by a mutex of their own, and the store by its own contract (store.h). The setup calls
// (AddAdmission, SetAuthorizer, SetContainerLogs) are not synchronised: make them before the
// first request.
class ApiServer {
 public:
  struct Options {
    size_t max_body_bytes = 3 * 1024 * 1024;  // kube-apiserver's limit for a request body
    std::string version = "v1.32.0-arbiter";
    // Keeps the watch caches lists read in step with the store from a thread of their own (as
    // `arbiter serve` does), woken by each write; otherwise each list brings its cache up to date
    // first, and only then (tests: deterministic).
    bool sync_list_caches = false;
    // Bounds the list items' encodings kept for the next list that asks for the same versions
    // (encoding_cache.h); 0 keeps none.
    size_t encoding_cache_bytes = size_t{32} << 20;
  };
  ApiServer(store::Store& store, const Clock& clock, uint64_t seed, Options options);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  void AddAdmission(AdmissionHook hook) { admission_.push_back(std::move(hook)); }
  // RBAC for SelfSubjectAccessReview and the escalation check on RBAC writes (authentication on).
  void SetAuthorizer(Authorizer* authorizer) { authorizer_ = authorizer; }
  // The simulated containers' logs pods/log serves (none: pods/log answers that there is none).
  void SetContainerLogs(const ContainerLogs* logs) { logs_ = logs; }
  Response Handle(const Request& request);
  // Makes the list caches of `resources` now (each is otherwise made at its resource's first
  // list), reading the store once; an error names the resource that could not be read.
  Status PrepareListCaches(const std::vector<std::string>& resources);

  // One line of a watch stream for `event` (as a Table row when the watch asked for tables).
  std::string WatchLine(const WatchStream& w, const store::Event& event) const;
  // The same for an object; `shared`: the line is kept for other watchers of the same event (the
  // initial state's lines are one watch's own).
  std::string WatchLine(const WatchStream& w, store::EventType type, const store::Object& object, bool shared) const;
  // The ERROR event that ends a watch with `status` (a Status object), in the stream's encoding.
  static std::string WatchErrorLine(const WatchStream& w, const nlohmann::json& status);
  // Whether `event` passes the watch's selectors.
  static bool Selected(const WatchStream& w, const nlohmann::json& object);
  // The same for a stored version, read as a tree only when the watch has selectors.
  static bool Selected(const WatchStream& w, const store::Object& object);

  store::Store& store() { return store_; }
  const Clock& clock() const { return clock_; }

 public:
  struct Target;  // the parsed path

 private:
  Response HandleUnchecked(const Request& r);
  // The route table (routes.cc): the handler of a parsed request.
  Response Dispatch(const Request& r, const Target& t);
  Response Discovery(const Request& r, bool* handled);
  Response Get(const Request& r, const Target& t);
  // pods/log, from the simulated containers' logs; pods/exec, attach, portforward and proxy,
  // answered with a Status saying what a simulated node cannot do.
  Response PodLog(const Request& r, const Target& t);
  Response SimulatedNode(const Request& r, const Target& t);
  // Lists (list.cc): from the watch cache of the resource, paged, written item by item.
  Response List(const Request& r, const Target& t);
  store::WatchCache& ListCache(const std::string& resource);
  StatusOr<store::WatchCache::Page> ListPage(const std::string& resource, const store::WatchCache::Query& q);
  Response Watch(const Request& r, const Target& t);
  // `applied`: a server-side apply that creates the object (its fields are the manager's Apply).
  Response Create(const Request& r, const Target& t, bool applied = false);
  Response Update(const Request& r, const Target& t);
  Response Patch(const Request& r, const Target& t);
  Response Delete(const Request& r, const Target& t);
  Response Bind(const Request& r, const Target& t);
  Response Evict(const Request& r, const Target& t);
  // The scale subresource (autoscaling/v1 Scale) of an object with spec.replicas.
  Response Scale(const Request& r, const Target& t);
  Response ScaleOnce(const Request& r, const Target& t, bool* raced);
  // A namespace's finalize subresource: only spec.finalizers change.
  Response Finalize(const Request& r, const Target& t);
  // SelfSubjectAccessReview and SelfSubjectReview: what the caller may do, and who it is.
  Response Review(const Request& r, const Target& t);

  // Checks the object's kind/apiVersion/metadata against the target, decodes it with the
  // manifest decoder for modelled kinds, and runs the admission hooks.
  // Server-side field validation against the kind's schema (field_validation.h): unknown fields
  // are dropped (Strict: the request fails), +required fields must be present. A response when
  // the request fails; warnings for Warn.
  // No one grants RBAC permissions they do not hold (403 otherwise); `old` is the object an update
  // replaces (an aggregation rule on either needs cluster-admin's authority).
  std::optional<Response> CheckEscalation(const Request& r, const ResourceInfo& info, const nlohmann::json& object,
                                          const std::string& ns, const nlohmann::json* old = nullptr);
  std::optional<Response> CheckFields(const Request& r, const ResourceInfo& info, nlohmann::json& object,
                                      std::vector<std::string>& warnings);
  Status Validate(const ResourceInfo& info, nlohmann::json& object, const nlohmann::json* old,
                  const std::string& ns, const std::string& name);
  Status RunAdmission(const ResourceInfo& info, nlohmann::json& object, const nlohmann::json* old);
  // Deletes a pod now or, when it is bound and the grace period is positive, marks it
  // terminating (deletionTimestamp = now + grace) for the node to finish.
  // Deletes (or, for a running pod, starts terminating) an object. Preconditions: the object's
  // revision (`expected_revision` > 0) and uid (non-empty `expected_uid`); `dry_run` checks
  // everything and writes nothing, returning the object as it would be.
  // `propagation` (Orphan, Background, Foreground, or "": the object's default) adds the
  // garbage collector's finalizer; an object with finalizers is marked (deletionTimestamp), not
  // deleted, and a namespace starts terminating.
  StatusOr<store::Object> DeleteObject(const ResourceInfo& info, const std::string& ns, const std::string& name,
                                       std::optional<int64_t> grace, int64_t expected_revision,
                                       const std::string& expected_uid = "", bool dry_run = false,
                                       const std::string& propagation = "");
  // Whether a write of `object` is its deletion (an object being deleted whose last finalizer
  // went; see DeletesOnWrite in server.cc), and the write that does either.
  static bool DeletesOnWrite(const ResourceInfo& info, const nlohmann::json& object);
  StatusOr<store::Object> WriteOrDelete(const ResourceInfo& info, const std::string& ns, const std::string& name,
                                        nlohmann::json object, int64_t expected_revision);
  std::string NewUid();
  std::string Now() const;

  store::Store& store_;
  // What admission reads (and a create's namespace check): namespaces, priority classes and
  // quotas from informers, everything else from store_, as kube-apiserver's admission plugins
  // read through listers rather than from etcd on every request.
  store::ReadCache admission_store_{store_, {"namespaces", "priorityclasses", "resourcequotas"}};
  const Clock& clock_;
  Options options_;
  std::mutex rng_mu_;
  Authorizer* authorizer_ = nullptr;
  const ContainerLogs* logs_ = nullptr;
  // The JSON lines of recent events by revision: an event goes to every watcher of its
  // resource, and is serialised once for all of them.
  mutable std::mutex lines_mu_;
  // The oldest go first once there are more than kMaxCachedLines or kMaxCachedLineBytes.
  static constexpr size_t kMaxCachedLines = 4096;
  static constexpr size_t kMaxCachedLineBytes = size_t{16} << 20;
  // By (revision, event type, resource, namespace, name): on etcd, the writes of one transaction
  // share a revision.
  using LineKey = std::tuple<int64_t, int, std::string, std::string, std::string>;
  mutable std::map<LineKey, std::string> lines_;
  mutable size_t lines_bytes_ = 0;
  Rng rng_;
  std::vector<AdmissionHook> admission_;
  EncodingCache encodings_{options_.encoding_cache_bytes};
  // The watch caches lists read, by resource, made at a resource's first list, and the thread that
  // syncs those with news (Options::sync_list_caches). The syncer's state is declared before the
  // caches: a write that notifies while they go finds it still there.
  void SyncListCaches();
  std::mutex syncer_mu_;
  std::condition_variable syncer_cv_;
  std::set<std::string> syncer_pending_;
  bool syncer_stop_ = false;
  std::mutex caches_mu_;
  std::map<std::string, std::unique_ptr<store::WatchCache>> caches_;
  std::thread syncer_;
};

// Whether `r` reads a collection (a list, or a watch, whose start may list): the work the HTTP edge
// runs in a fair seat (fair_seats.h) rather than on a worker of its own.
bool ReadsCollection(const Request& r);

// A query boolean as Go's strconv.ParseBool reads it (clients send true, True and 1).
bool QueryBool(const std::string& v);

// The HTTP status code for a store or validation Status.
int StatusToHttp(const Status& s);
// A Kubernetes Status body (kind Status, status Failure, reason, code, details).
nlohmann::json StatusBody(int code, const std::string& reason, const std::string& message,
                          const std::string& kind = "", const std::string& name = "");

}  // namespace arbiter::api
