// Where `arbiter serve` listens and how clients find it: the --listen address (IPv4, IPv6 in
// brackets, or a host name), whether it is loopback, and the kubeconfig a server writes for its
// own clients.
#pragma once

#include <string>

#include "arbiter/base/status.h"

namespace arbiter::api {

struct ListenAddress {
  std::string host;  // without brackets: "127.0.0.1", "::1", "localhost", "0.0.0.0"
  int port = 0;      // 0: any free port
  // "host:port", with brackets around an IPv6 host, as a URL authority.
  std::string Authority() const;
  std::string AuthorityWithPort(int bound_port) const;
};

// Parses HOST:PORT, [IPV6]:PORT; the port must be 0..65535. Errors name the flag's value.
StatusOr<ListenAddress> ParseListenAddress(const std::string& value);

// Whether a host is a loopback address: 127.0.0.0/8, ::1, ::ffff:127.x.y.z, or "localhost".
bool IsLoopbackHost(const std::string& host);

// Whether a host listens on every address (0.0.0.0, ::, or empty).
bool IsWildcardHost(const std::string& host);

struct KubeconfigOptions {
  std::string server;       // https://127.0.0.1:8080
  std::string ca_file;      // with TLS: the certificate clients trust (absolute path); may be empty
  std::string token;        // with authentication: the bearer token; may be empty
  std::string name = "arbiter";  // of the cluster, user and context
};

// A kubeconfig (clientcmd v1 Config) that points kubectl at this server and nothing else.
std::string KubeconfigYaml(const KubeconfigOptions& o);

// Writes `text` to `path` atomically (a sibling temporary file renamed over it), readable by the
// owner only (a kubeconfig can hold a token).
Status WritePrivateFile(const std::string& path, const std::string& text);

}  // namespace arbiter::api
