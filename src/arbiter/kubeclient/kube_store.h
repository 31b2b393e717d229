// The store interface over a Kubernetes API server, so that the control loop's live scheduler
// runs against any cluster (`arbiter schedule`) exactly as it runs on `arbiter serve`'s own
// store. The backend speaks to the server as kube-scheduler does:
//
//   * List: pages of `limit` objects (`continue`), as client-go's reflector lists; the list's
//     resourceVersion is the revision. Revisions are the server's resourceVersions, which every
//     Kubernetes API server issues as decimal etcd revisions (anything else is an error).
//   * WatchFrom: `?watch=true&allowWatchBookmarks=true&resourceVersion=R&timeoutSeconds=T`,
//     streamed on a connection of its own; a stream that ends (its timeout, a broken connection,
//     the server restarting) resumes from the last event or bookmark, retried with backoff for
//     as long as it takes; `410 Gone` (or an ERROR event with code 410) ends the watch with
//     Gone, and the informer relists.
//   * Writes are chosen by what changed between an update's base and its new body (the store
//     asks for bases, Store::WantsUpdateBase):
//       - a pod that gains spec.nodeName: POST pods/NAME/binding (metadata.uid set: the server
//         refuses a binding to a pod recreated meanwhile, and 409 to a pod already bound);
//       - a pod whose status changed: PATCH pods/NAME/status with the two-way strategic merge
//         patch of the status (conditions merged by type), unconditional as kube-scheduler's;
//       - a pod that gains metadata.deletionTimestamp: its status patch, if any, then DELETE
//         with a uid precondition, the pod's own grace period applying;
//       - any other object: PUT (its /status when only the status changed and the resource has
//         that subresource), conditional on expected_revision through metadata.resourceVersion.
//     A binding's result is the body written at the base's revision (the server answers a
//     binding with a Status, not the pod); the watch brings the pod as bound.
//   * Deletes carry a uid precondition (from the body the caller held); creates POST.
//   * With `protobuf`, reads ask for protobuf and take whichever the server sends (a watch in
//     protobuf is a stream of length-prefixed WatchEvent frames); bodies go in protobuf where
//     the kind has a protobuf form; patches are JSON, as kube-scheduler sends them.
//   * Events go to events.k8s.io/v1 when the server serves it (a core v1 Event written by the
//     recorder is posted as its events.k8s.io form; a repeat PATCHes its series), else to core
//     v1, as client-go's event broadcaster adapter chooses.
//   * A batch's writes are made in its order, except that consecutive bindings go out over
//     several connections at once (parallel_writes), as kube-scheduler binds each pod in a
//     goroutine of its own.
//   * Three rate limits, as kube-scheduler's three client sets: one for the scheduler's reads and
//     writes (its watches and write connections share it), one for events, one for leader
//     election.
//
// HTTP statuses map to store codes: 404 NotFound, 409 AlreadyExists (reason AlreadyExists) or
// Conflict, 410 Gone, 400 and 422 InvalidArgument, 401 and 403 FailedPrecondition, others and
// unreachable servers Unavailable; messages name the method, path and the server's message.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "arbiter/kubeclient/kubeclient.h"
#include "arbiter/store/store.h"

namespace arbiter::kubeclient {

struct KubeStoreOptions {
  Config config;
  // Each client set's limit (kube-scheduler's clientConnection defaults: qps 50, burst 100).
  double qps = 50;
  int burst = 100;
  std::string user_agent = "arbiter-scheduler";
  // Ask for protobuf (`application/vnd.kubernetes.protobuf, application/json`: the server
  // answers in either) and send creates, updates and bindings in it where the kind has a
  // protobuf form, as kube-scheduler does by default. Off: JSON only, which also keeps every
  // field of a newer server that Arbiter's schema does not know.
  bool protobuf = false;
  size_t page = 500;  // objects per list page
  // Connections a run of bindings is spread over.
  size_t parallel_writes = 8;
  // Each watch request asks the server to end it after this long; the stream then resumes.
  std::chrono::seconds watch_timeout{300};
  // How long a plain request may wait for its answer.
  std::chrono::seconds request_timeout{60};
  size_t max_list_bytes = size_t{2} << 30;   // one list, all pages
  size_t max_event_bytes = size_t{16} << 20;  // one watch event
  // Called before each request is sent, from the thread sending it; may be empty.
  std::function<void(const std::string& method, const std::string& target, const std::string& body)> on_request;
  // One line per watch reconnect and failure; may be empty. Called from the watches' threads.
  std::function<void(const std::string& line)> log;
};

// Connects (checking that the server answers /version) and finds whether it serves
// events.k8s.io/v1. Unavailable when the server cannot be reached.
StatusOr<std::unique_ptr<store::Store>> OpenKubeStore(const KubeStoreOptions& options);

// The events.k8s.io/v1 form of a core v1 Event (as the event recorder writes it): regarding,
// note, action (from the reason, as kube-scheduler names its actions), reportingController and
// reportingInstance, eventTime, and series once it repeats.
nlohmann::json EventsV1Event(const nlohmann::json& core);

}  // namespace arbiter::kubeclient
