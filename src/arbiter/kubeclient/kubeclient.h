// A client of a Kubernetes API server, as `arbiter plan --server` reads a live cluster: where the
// server is and who the client is (flags, or a kubeconfig and its current context, as kubectl
// reads them), and collections listed page by page (`limit` / `continue`), as kubectl lists them.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "arbiter/base/status.h"

namespace arbiter::kubeclient {

struct Config {
  std::string server;  // http(s)://host[:port]
  std::string token;   // a bearer token, or empty
  std::string ca_pem;  // the certificate authorities to trust (PEM), or empty: the system's
  std::string client_cert_pem, client_key_pem;  // a client certificate, or empty
  bool insecure = false;                        // skip the server certificate's verification
};

// The cluster and user of `context` (empty: the current context) in the kubeconfig at `path`.
// Certificate and key files named in it are read (relative to the kubeconfig's folder).
StatusOr<Config> LoadKubeconfig(const std::string& path, const std::string& context = "");

class Client {
 public:
  static StatusOr<std::unique_ptr<Client>> Connect(const Config& config);
  virtual ~Client() = default;

  // Every object of the collection at `path` (such as "/api/v1/pods"), read `page` at a time, as
  // one JSON `kind: List` text whose items carry `api_version` and `kind` (the API server leaves
  // them out of a list's items). NotFound when the server does not serve the collection.
  // Refuses a listing larger than `max_bytes` in total.
  virtual StatusOr<std::string> ListAll(const std::string& path, const std::string& api_version,
                                        const std::string& kind, size_t page, size_t max_bytes) = 0;
};

}  // namespace arbiter::kubeclient
