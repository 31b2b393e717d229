// The HTTP(S) edge of `arbiter serve`: an event-driven server (Boost.Beast over Asio, C++20
// coroutines) that turns HTTP requests into api::Request, streams watches as chunked JSON lines,
// authenticates bearer tokens from a kube-apiserver token file, authorises every request, and
// serves /healthz, /livez, /readyz and /metrics.
//
// No connection holds a thread: a few I/O threads multiplex every connection, idle keep-alive
// connections and open watches cost only memory, and the API's handlers (which may wait on the
// store) run on a separate worker pool. Every read has a deadline (headers, body, idle
// keep-alive), bodies are bounded on the wire and again after gzip inflation, and the listen
// backlog is the system's maximum.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "arbiter/api/authn.h"
#include "arbiter/api/authz.h"
#include "arbiter/api/server.h"
#include "arbiter/base/status.h"

namespace arbiter::api {

// Writes a self-signed serving certificate for `host` (and localhost, 127.0.0.1), valid for a
// year, and its key (PEM, mode 0600), as kube-scheduler makes one for its secure port when it
// is given none.
Status WriteSelfSignedCertificate(const std::string& host, const std::string& cert_path, const std::string& key_path);


struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string tls_cert_file;  // both set: HTTPS
  std::string tls_key_file;
  std::map<std::string, TokenUser> tokens;  // empty: no authentication (loopback only)
  Authorizer* authorizer = nullptr;         // with tokens: RBAC for every request
  size_t io_threads = 2;                    // multiplex every connection
  size_t worker_threads = 16;               // run the API's handlers
  // Lists, watch starts and the chunks of long answers run in this many fair seats, apart from
  // the workers (fair_seats.h); queued per client, 429 when a client has this many waiting.
  size_t list_seats = 0;  // 0: half the machine's cores, at least 1
  size_t list_queue_per_client = 256;
  size_t max_header_bytes = 64 * 1024;
  size_t max_body_bytes = 3 * 1024 * 1024;  // on the wire and after inflation (413 above)
  std::chrono::milliseconds header_timeout{10000};   // a request's headers, from its first byte
  std::chrono::milliseconds body_timeout{60000};     // its body
  std::chrono::milliseconds idle_timeout{120000};    // between keep-alive requests
  std::chrono::milliseconds watch_poll{25};          // how often an idle watch looks for events
  // A line per rejected request (status 400 and above): message, then key="value" pairs.
  std::function<void(const std::string& msg, const std::string& kv)> log;
};

class HttpServer {
 public:
  HttpServer(ApiServer& api, HttpOptions options);
  // The operations endpoints only (/healthz, /livez, /readyz, /metrics), as a component such as
  // `arbiter schedule` serves them; every other path is 404.
  explicit HttpServer(HttpOptions options);
  ~HttpServer();
  // Health checks beyond ping (e.g. "scheduler": the loop is running); false fails /readyz, and
  // /healthz too unless `healthz` is false (kube-scheduler's sched-handler-sync is /readyz's).
  void AddReadyCheck(std::string name, std::function<bool()> check, bool healthz = true);
  // Prometheus text appended to /metrics.
  void SetMetrics(std::function<std::string()> metrics);
  // Serves GET requests whose path is `prefix` or starts with it (the dashboard's page
  // and its endpoints), or with `exact` is `prefix` alone, with `handler`, after authentication
  // and authorisation like any API request, on the worker pool. Routes are tried in the order
  // added, before the API.
  using RouteHandler = std::function<Response(const Request&)>;
  void AddRoute(std::string prefix, RouteHandler handler, bool exact = false);
  // Binds the port; then Serve() blocks until Stop().
  Status Bind();
  int port() const;
  void Serve();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace arbiter::api
