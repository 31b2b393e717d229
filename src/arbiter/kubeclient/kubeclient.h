// A client of a Kubernetes API server: where the server is and who the client is (flags, a
// kubeconfig and its current context as kubectl reads them, or a pod's service account as
// client-go's in-cluster configuration reads it); collections listed page by page (`limit` /
// `continue`) as kubectl lists them (`arbiter plan --server`); single requests and streamed
// responses (watches) under client-go's client-side rate limit (`arbiter schedule`).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "arbiter/base/status.h"

namespace arbiter::kubeclient {

struct Config {
  std::string server;  // http(s)://host[:port]
  std::string token;   // a bearer token, or empty
  std::string ca_pem;  // the certificate authorities to trust (PEM), or empty: the system's
  std::string client_cert_pem, client_key_pem;  // a client certificate, or empty
  bool insecure = false;                        // skip the server certificate's verification
  // A file the token is re-read from once a minute (a pod's service account token, which the
  // kubelet rotates), as client-go's in-cluster configuration re-reads it; empty: `token` stays.
  std::string token_file;
};

// The cluster and user of `context` (empty: the current context) in the kubeconfig at `path`.
// Certificate and key files named in it are read (relative to the kubeconfig's folder).
StatusOr<Config> LoadKubeconfig(const std::string& path, const std::string& context = "");
// The configuration of a client running in a pod (client-go's rest.InClusterConfig): the server
// from KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, the service account's token and CA
// from /var/run/secrets/kubernetes.io/serviceaccount (`secrets_dir` in tests).
StatusOr<Config> InClusterConfig(const std::string& secrets_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// `s` percent-encoded for a path segment or a query value (unreserved characters kept).
std::string PercentEncode(const std::string& s);

// client-go's token bucket (flowcontrol.NewTokenBucketRateLimiter): `burst` requests may go at
// once, then `qps` a second; a request waits for its token. Shared by the connections of one
// client set. qps <= 0: unlimited. Thread-safe.
class RateLimiter {
 public:
  RateLimiter(double qps, int burst);
  // Waits for a token (returns at once when unlimited).
  void Wait();
  double qps() const { return qps_; }

 private:
  const double qps_;
  const double burst_;
  std::mutex mu_;
  double tokens_;
  std::chrono::steady_clock::time_point last_;
};

struct Response {
  int status = 0;
  std::string body;
  std::string content_type;
  int retry_after = -1;  // the Retry-After header's seconds, -1 when absent
};

struct ClientOptions {
  std::shared_ptr<RateLimiter> limiter;  // null: unlimited
  std::string user_agent = "arbiter";
  // The Accept header of reads and streams (the server picks one of the types listed).
  std::string accept = "application/json";
  // Called before each request is sent (method, then path and query); may be empty.
  std::function<void(const std::string& method, const std::string& target, const std::string& body)> on_request;
  // A request's answer must arrive within this (a stream's data: between chunks).
  std::chrono::seconds timeout{60};
  // The largest response body read (a stream's: each call's data is not bounded here).
  size_t max_response_bytes = size_t{64} << 20;
};

class Client {
 public:
  static StatusOr<std::unique_ptr<Client>> Connect(const Config& config, ClientOptions options = {});
  virtual ~Client() = default;

  // One request on this client's connection (kept alive), after its token. `content_type`
  // names the body's type when there is one. Unavailable, naming the server, when it cannot be
  // reached or answers too slowly or too much; any HTTP status is a Response. An answer of 429,
  // or of 5xx with a Retry-After header, is tried again after the time it asks for (at most 10
  // s, 10 times), as client-go does. One request at a time per client.
  virtual StatusOr<Response> Send(const std::string& method, const std::string& target, const std::string& body = "",
                                  const std::string& content_type = "application/json") = 0;
  // GET `target`, handing a 200 response's body to `on_data` as it arrives (with the response's
  // content type) until it returns false, the server ends it, or Cancel is called; a response
  // with another status is returned whole (bounded). Unavailable when the server cannot be
  // reached.
  using OnData = std::function<bool(std::string_view data, const std::string& content_type)>;
  virtual StatusOr<Response> Stream(const std::string& target, const OnData& on_data) = 0;
  // From another thread: ends a Stream or request in progress.
  virtual void Cancel() = 0;
  virtual const std::string& server() const = 0;

  // Every object of the collection at `path` (such as "/api/v1/pods"), read `page` at a time, as
  // one JSON `kind: List` text whose items carry `api_version` and `kind` (the API server leaves
  // them out of a list's items). NotFound when the server does not serve the collection.
  // Refuses a listing larger than `max_bytes` in total.
  virtual StatusOr<std::string> ListAll(const std::string& path, const std::string& api_version,
                                        const std::string& kind, size_t page, size_t max_bytes) = 0;
};

}  // namespace arbiter::kubeclient
