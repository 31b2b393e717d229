// `arbiter serve`: the Kubernetes-compatible control plane (API, durable store, scheduler loop,
// simulated nodes) in one process.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace arbiter::cmd {

struct ServeFlags {
  std::string listen = "127.0.0.1:8080";
  std::string data_dir = "./arbiter-data";
  std::string store = "sqlite";  // sqlite or memory
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string token_auth_file;
  bool no_simulate_nodes = false;
  bool fsync = false;
  uint64_t seed = 0;
  int loop_millis = 100;
};

int RunServeCommand(const ServeFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace arbiter::cmd
