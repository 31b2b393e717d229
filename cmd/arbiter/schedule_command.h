// `arbiter schedule`: the live scheduler of `arbiter serve`, run against any Kubernetes API
// server (a kubeconfig, or the pod's service account), as kube-scheduler runs: beside the
// default scheduler for the pods that name its profile, or instead of it.
//
// `arbiter nodes`: serve's node simulator run the same way, as KWOK runs beside a real API
// server: every Node is kept Ready with its heartbeats and Lease, and the pods bound to it start,
// run, end and are deleted when their grace period ends (controlplane/node_simulator.h). For
// test clusters with no kubelets (scripts/upstream-cluster.sh): it simulates every Node it sees.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace arbiter::cmd {

struct ScheduleFlags {
  // Off: `arbiter schedule`. On: `arbiter nodes`, the node simulator instead of the scheduler.
  bool simulate_nodes = false;
  std::string default_run_duration = "0";  // nodes: a pod that does not restart runs this long
  std::string kubeconfig;  // empty: --master, else the in-cluster service account
  std::string context;
  std::string master;      // the API server's URL, over the kubeconfig's
  std::string config;      // a KubeSchedulerConfiguration file
  std::string scheduler_name;  // over the profile's schedulerName
  bool leader_elect = true;
  std::string lease_name = "arbiter-scheduler";
  std::string lease_namespace = "kube-system";
  double lease_duration = 15, renew_deadline = 10, retry_period = 2;  // seconds
  std::string identity;  // default: hostname_pid
  double kube_api_qps = 50;
  int kube_api_burst = 100;
  std::string kube_api_content_type = "application/json";
  std::string bind_address = "0.0.0.0";
  int secure_port = 10259;  // 0: no health and metrics endpoint
  std::string tls_cert_file, tls_key_file;
  std::string cert_dir;  // where a self-signed serving certificate is written when none is given
  std::string request_log;  // every request sent, one "METHOD TARGET" line each
  bool request_log_bodies = false;  // and after a tab, each request's body
  uint64_t seed = 0;
  int loop_millis = 100;
};

int RunScheduleCommand(const ScheduleFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace arbiter::cmd
