// `arbiter bench`: in-process scheduling benchmarks that print one JSON object per run.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace arbiter::cmd {

struct BenchFlags {
  std::string scenario = "SchedulingBasic";
  size_t nodes = 5000;
  size_t initial_pods = 1000;
  size_t measured_pods = 10000;
  int runs = 1;
  uint64_t seed = 0;
  // Gang scenarios (defaults depend on the scenario when unset).
  std::optional<size_t> gangs;
  std::optional<size_t> pods_per_gang;
  std::string mode = "single";
  size_t clusters = 2000;  // DecisionQuality: random clusters to compare
  std::vector<std::string> files;  // scenario files; when given, --scenario is not used
  std::string output = "json";
  std::string label;  // with files: only those carrying this label
  // ApiLoad: the server to load, its bearer token, and the client connections.
  std::string server = "http://127.0.0.1:8080";
  std::string token;
  size_t connections = 8;
  std::vector<std::string> serve_flags;  // Serve scenarios: flags for the server
  double poll_unbound = 0;  // Serve scenarios: seconds between a client's lists of unbound pods (0: none)
  std::vector<std::string> scheduler_flags;  // Schedule scenarios: flags for the scheduler
  std::string kubeconfig;                     // Schedule scenarios: an API server of one's own
  std::string scheduler = "arbiter";          // Schedule scenarios: arbiter or kube
  std::string kube_scheduler = "kube-scheduler";
  double scheduler_qps = -1;                  // Schedule scenarios: < 0: the scheduler's default
  int scheduler_burst = -1;
  std::string dump;  // ModelFootprint: the cluster dump to decode
  // Serve scenarios: the store of the server each run starts (sqlite or etcd), and whether
  // --initial-pods and --connections were given (their defaults are no initial pods and 16 connections).
  std::string store = "sqlite";
  bool initial_pods_given = false;
  bool connections_given = false;  // their default is 16
  bool measured_pods_given = false;  // ServePreemptionBasic: one preemptor per node by default
  // Also write the runs' results as an HTML report (their scale curves) to this file.
  std::string html;
};

int RunBenchCommand(const BenchFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace arbiter::cmd
