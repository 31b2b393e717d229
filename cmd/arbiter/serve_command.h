// `arbiter serve`: the Kubernetes-compatible control plane (API, durable store, scheduler loop,
// simulated nodes) in one process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace arbiter::cmd {

struct ServeFlags {
  std::string listen = "127.0.0.1:8080";
  std::string data_dir = "./arbiter-data";
  std::string store = "sqlite";  // sqlite, memory or etcd
  std::string etcd_servers;      // with --store etcd: URL[,URL...]
  std::string etcd_prefix = "/arbiter";
  std::string identity;          // leader election identity (default: hostname_pid)
  std::string leader_elect = "auto";  // auto (on with etcd), true, false
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string token_auth_file;
  bool no_simulate_nodes = false;
  bool no_controllers = false;
  bool no_scheduler = false;
  bool fsync = false;
  std::string kubelet_config;  // a KubeletConfiguration file for the simulated nodes
  std::string config;          // a KubeSchedulerConfiguration file: the scheduler's profile
  // How long a simulated pod that does not restart (a Job's; restartPolicy Never or OnFailure)
  // runs without an arbiter.dev/run-duration annotation: a Go duration, 0 for until deleted.
  std::string default_run_duration = "5s";
  uint64_t seed = 0;
  int loop_millis = 100;
  // The cache of JSON trees over the stored versions' text (store/body.h): its bound in MiB, and
  // how long a tree is kept at least once made, a Go duration.
  size_t tree_cache_mib = 32;
  std::string tree_cache_min_age = "250ms";
  // The stored versions' plain JSON text kept beyond 2 s old, in MiB; the rest is compressed
  // until read again (store/body.h).
  size_t hot_text_mib = 32;
};

int RunServeCommand(const ServeFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace arbiter::cmd
