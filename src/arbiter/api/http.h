// The HTTP(S) edge of `arbiter serve` (cpp-httplib): turns HTTP requests into api::Request,
// streams watches as chunked JSON lines, authenticates bearer tokens from a kube-apiserver
// token file, authorises by namespace, and serves /healthz, /livez, /readyz and /metrics.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "arbiter/api/authz.h"
#include "arbiter/api/server.h"
#include "arbiter/base/status.h"

namespace httplib {
class Server;
}

namespace arbiter::api {

// Reads a token file; errors name the file and line.
StatusOr<std::map<std::string, TokenUser>> LoadTokenFile(const std::string& path);

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string tls_cert_file;  // both set: HTTPS
  std::string tls_key_file;
  std::map<std::string, TokenUser> tokens;  // empty: no authentication (loopback only)
  size_t threads = 64;                      // each open watch holds one
  // A line per rejected request (status 400 and above): message, then key="value" pairs.
  std::function<void(const std::string& msg, const std::string& kv)> log;
};

class HttpServer {
 public:
  HttpServer(ApiServer& api, HttpOptions options);
  ~HttpServer();
  // Health checks beyond ping (e.g. "scheduler": the loop is running); false fails /readyz.
  void AddReadyCheck(std::string name, std::function<bool()> check);
  // Prometheus text appended to /metrics.
  void SetMetrics(std::function<std::string()> metrics) { metrics_ = std::move(metrics); }
  // Binds the port; then Serve() blocks until Stop().
  Status Bind();
  int port() const { return bound_port_; }
  void Serve();
  void Stop();

 private:
  void Install();
  ApiServer& api_;
  HttpOptions options_;
  std::unique_ptr<httplib::Server> http_;
  std::vector<std::pair<std::string, std::function<bool()>>> ready_checks_;
  std::function<std::string()> metrics_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> requests_{0};
  int bound_port_ = 0;
};

}  // namespace arbiter::api
