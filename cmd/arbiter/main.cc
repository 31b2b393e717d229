// The `arbiter` binary: parses flags and dispatches to a subcommand. No logic lives here.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "arbiter/bench/model_footprint.h"
#include "bench_command.h"
#include "plan_command.h"
#include "schedule_command.h"
#include "serve_command.h"
#include "simulate_command.h"

namespace {

// How `schedule` and `nodes` reach the cluster: its address, its credentials and the client's rate.
void AddClusterClientFlags(CLI::App* cmd, arbiter::cmd::ScheduleFlags& flags) {
  cmd->add_option("--kubeconfig", flags.kubeconfig,
                  "The cluster of this kubeconfig's current context (default: the pod's service account)");
  cmd->add_option("--context", flags.context, "With --kubeconfig: the context to use instead");
  cmd->add_option("--master", flags.master, "The API server's URL (over the kubeconfig's)");
  cmd->add_option("--kube-api-qps", flags.kube_api_qps, "Requests a second to the API server (0: no limit)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--kube-api-burst", flags.kube_api_burst, "Requests let through at once above the QPS")
      ->check(CLI::Range(1, 1000000));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Arbiter: a cluster scheduler whose heart is priority and preemption"};
  app.require_subcommand(1);
  // Every option's default is shown in --help.
  app.option_defaults()->always_capture_default();

  arbiter::cmd::PlanFlags plan;
  CLI::App* plan_cmd = app.add_subcommand("plan", "Dry-run the scheduler over Kubernetes manifests");
  plan_cmd->add_option("-f,--filename", plan.files, "Manifest file (YAML stream, JSON, or - for stdin)")
      ->required();
  plan_cmd->add_option("-o,--output", plan.output, "Output format")
      ->check(CLI::IsMember({"table", "json", "yaml"}));
  plan_cmd->add_option("--seed", plan.seed, "Seed of the random source (tie-breaks, sampling)");
  plan_cmd->add_flag("--explain", plan.explain, "Show every filter verdict and score of every cycle");
  plan_cmd->add_option("--html", plan.html,
                       "Also write the plan as one self-contained HTML report (cluster, queue, preemptions, "
                       "explanations) to FILE");
  plan_cmd->add_flag("--nomad", plan.nomad, "Read Nomad cluster and job files");
  plan_cmd->add_option("--priority-delta", plan.nomad_priority_delta,
                       "Nomad mode: how much lower a victim's job priority must be (Nomad: 10)")
      ->check(CLI::Range(1, 32766));
  plan_cmd->add_option("--victim-selection", plan.nomad_victim_selection,
                       "Nomad mode: nomad (Nomad's best fit, the default) or optimal (Arbiter's: the fewest and "
                       "lowest-priority allocations that free a task group's CPU, memory and disk)")
      ->check(CLI::IsMember({"nomad", "optimal"}));
  plan_cmd->add_flag("--plan-applier", plan.nomad_plan_applier,
                     "Nomad mode: refuse a placement whose node still overflows after its victims leave, as a real "
                     "submission's plan applier would (nomad job plan shows it)");
  plan_cmd->add_flag("--no-fast-paths", plan.no_fast_paths,
                     "Filter every node and dry-run every candidate afresh (same decisions, slower)");
  plan_cmd->add_option("--max-input-size", plan.max_input_size,
                       "The most bytes read from all input files together (a quantity: 512Mi, 2Gi)");
  plan_cmd->add_option("--server", plan.server,
                       "Plan against the live state of this Kubernetes API server (nothing is written)");
  plan_cmd->add_option("--token", plan.token, "With --server: the bearer token to send");
  plan_cmd->add_flag("--insecure-skip-tls-verify", plan.insecure_skip_tls_verify,
                     "With --server: do not verify the server's certificate");
  plan_cmd->add_option("--kubeconfig", plan.kubeconfig,
                       "Plan against the live state of the cluster of this kubeconfig's current context");
  plan_cmd->add_option("--context", plan.context, "With --kubeconfig: the context to use instead");
  plan_cmd->add_option("--validate", plan.validate,
                       "An unknown field in the input: strict (an error), warn (planned without it) or ignore")
      ->check(CLI::IsMember({"strict", "warn", "ignore", "true", "false"}));

  arbiter::cmd::SimulateFlags simulate;
  CLI::App* simulate_cmd = app.add_subcommand(
      "simulate", "Simulate a cluster over time on a virtual clock: arrivals, runs, preemptions, a report per band");
  simulate_cmd->add_option("-f,--filename", simulate.files,
                           "The cluster: Nodes, PriorityClasses, a KubeSchedulerConfiguration (YAML or JSON)");
  simulate_cmd->add_option("--workload", simulate.workload, "Arrivals as JSON Lines (docs/simulate.md)");
  simulate_cmd->add_option("--generate", simulate.generate,
                           "Without --workload: a seeded workload with a trace's shape")
      ->check(CLI::IsMember({"borg", "alibaba"}));
  simulate_cmd->add_option("--nodes", simulate.nodes, "Generated nodes (4 CPU, 16Gi) when -f gives none")
      ->check(CLI::Range(1, 1000000));
  simulate_cmd->add_option("--pods", simulate.pods, "Pods of the generated workload")->check(CLI::Range(1, 10000000));
  simulate_cmd->add_option("--load", simulate.load,
                           "The generated work over what the cluster can run in the duration (run times are scaled "
                           "to it)")
      ->check(CLI::Range(0.01, 100.0));
  simulate_cmd->add_option("--node-failures", simulate.node_failures,
                           "Node failures per node per day (a Poisson process; 0: none)")
      ->check(CLI::Range(0.0, 1000.0));
  simulate_cmd->add_option("--node-repair", simulate.node_repair, "How long a failed node stays down (a Go duration)");
  simulate_cmd->add_option("--duration", simulate.duration, "Simulated time (a Go duration: 24h, 90m)");
  simulate_cmd->add_option("--seed", simulate.seed, "Seed of the random source (the workload, tie-breaks, names)");
  simulate_cmd->add_option("--compare", simulate.compare,
                           "Also simulate under this KubeSchedulerConfiguration and report both");
  simulate_cmd->add_flag("--nomad", simulate.nomad,
                         "Simulate under Nomad's semantics: jobs of allocations, its eval broker, scheduler and "
                         "preemption (docs/simulate.md)");
  simulate_cmd->add_option("--nomad-preemption", simulate.nomad_preemption,
                           "Nomad mode: the job types whose scheduler may preempt, comma-separated (system, sysbatch, "
                           "batch, service) or none; Nomad's default: system");
  simulate_cmd->add_option("--compare-nomad-preemption", simulate.compare_nomad_preemption,
                           "Nomad mode: also simulate with these job types preempting, and report both");
  simulate_cmd->add_option("--priority-delta", simulate.nomad_priority_delta,
                           "Nomad mode: how far below the placing job a victim's priority must be (Nomad: 10)")
      ->check(CLI::Range(0, 100));
  simulate_cmd->add_option("-o,--output", simulate.output, "Report format")
      ->check(CLI::IsMember({"table", "json", "html"}));
  simulate_cmd->add_option("--output-file", simulate.output_file, "Write the report to FILE instead of stdout");
  simulate_cmd->add_flag("--progress", simulate.progress, "Show progress on stderr even when it is not a terminal");

  arbiter::cmd::ConvertFlags convert;
  CLI::App* convert_cmd =
      simulate_cmd->add_subcommand("convert", "Convert a public cluster trace's tables to a workload file");
  convert_cmd->add_option("--from", convert.from, "The trace: borg2019 (collection_events, instance_events as JSON "
                                                  "Lines) or alibaba2018 (batch_task, container_meta as CSV)")
      ->required()
      ->check(CLI::IsMember({"borg2019", "alibaba2018"}));
  convert_cmd->add_option("input", convert.inputs, "The trace's tables (their names tell which)")->required();
  convert_cmd->add_option("-o,--output", convert.output, "The workload file to write (JSON Lines)")->required();
  convert_cmd->add_option("--machine-cpu", convert.machine_cpu, "What a normalised 1.0 of CPU is (a quantity)");
  convert_cmd->add_option("--machine-memory", convert.machine_memory,
                          "What a normalised 1.0 (Alibaba: 100%) of memory is (a quantity)");

  arbiter::cmd::BenchFlags bench;
  CLI::App* bench_cmd = app.add_subcommand("bench", "Run an in-process scheduling benchmark");
  bench_cmd->add_option("--scenario", bench.scenario, "Scenario name");
  bench_cmd->add_option("--html", bench.html, "Also write the results' scale curves as an HTML report to FILE");
  bench_cmd->add_option("--dump", bench.dump, "ModelFootprint: the cluster dump (kubectl get -o json|yaml) to decode");
  bench_cmd->add_option("--nodes", bench.nodes, "Number of nodes")->check(CLI::Range(1, 1000000));
  bench_cmd->add_option("--initial-pods", bench.initial_pods, "Pods scheduled before measuring");
  bench_cmd->add_option("--pods", bench.measured_pods, "Measured pods")->check(CLI::Range(1, 10000000));
  bench_cmd->add_option("--runs", bench.runs, "Repetitions (a median is printed)")->check(CLI::Range(1, 100));
  bench_cmd->add_option("--seed", bench.seed, "Seed of the random source");
  bench_cmd->add_option("--gangs", bench.gangs, "Gang scenarios: number of (preemptor) gangs")
      ->check(CLI::Range(1, 1000000));
  bench_cmd->add_option("--pods-per-gang", bench.pods_per_gang, "Gang scenarios: pods per gang")
      ->check(CLI::Range(1, 1000000));
  bench_cmd->add_option("--mode", bench.mode, "PreemptionPodGroupDisruptionMode: none, single or all")
      ->check(CLI::IsMember({"none", "single", "all"}));
  bench_cmd->add_option("files", bench.files, "Scenario files (bench/scenarios/*.yaml) to run instead of --scenario");
  bench_cmd->add_option("-o,--output", bench.output, "Output format for scenario files")
      ->check(CLI::IsMember({"json", "table"}));
  bench_cmd->add_option("--label", bench.label, "Run only the scenario files with this label (short, performance)");
  bench_cmd->add_option("--server", bench.server, "ApiLoad: the arbiter serve URL");
  bench_cmd->add_option("--token", bench.token, "ApiLoad: bearer token");
  bench_cmd->add_option("--store", bench.store, "Serve scenarios: the store of the started server")
      ->check(CLI::IsMember({"sqlite", "etcd"}));
  bench_cmd->add_option("--poll-unbound", bench.poll_unbound,
                        "Serve scenarios: while the measured pods are created and bound, a client lists the unbound "
                        "pods (fieldSelector=spec.nodeName=) every SECONDS, as controllers and dashboards do")
      ->check(CLI::Range(0.0, 3600.0));
  bench_cmd->add_option("--serve-flag", bench.serve_flags,
                        "Serve scenarios: a flag for the server, as it is (repeatable), e.g. --serve-flag=--fsync");
  bench_cmd->add_option("--scheduler-flag", bench.scheduler_flags,
                        "Schedule scenarios: a flag for `arbiter schedule`, as it is (repeatable), e.g. "
                        "--scheduler-flag=--kube-api-qps=0");
  bench_cmd->add_option("--kubeconfig", bench.kubeconfig,
                        "Schedule scenarios: load this kubeconfig's API server (one holding none of the run's objects, "
                        "its nodes kept Ready by `arbiter nodes`) instead of a fresh arbiter serve");
  bench_cmd->add_option("--scheduler", bench.scheduler, "Schedule scenarios: the scheduler, arbiter or kube (kube-scheduler)")
      ->check(CLI::IsMember({"arbiter", "kube"}));
  bench_cmd->add_option("--kube-scheduler", bench.kube_scheduler, "With --scheduler kube: the kube-scheduler binary");
  bench_cmd->add_option("--scheduler-qps", bench.scheduler_qps,
                        "Schedule scenarios: the scheduler's requests a second to the API server, either scheduler "
                        "(0: no limit; default: its own, 50)")
      ->check(CLI::Range(0.0, 1e9));
  bench_cmd->add_option("--scheduler-burst", bench.scheduler_burst,
                        "Schedule scenarios: requests let through at once above the QPS (default: its own, 100)")
      ->check(CLI::Range(1, 1000000));
  bench_cmd->add_option("--connections", bench.connections, "ApiLoad, Serve scenarios: client connections")->check(CLI::Range(1, 256));
  bench_cmd->add_option("--clusters", bench.clusters, "DecisionQuality: random clusters to compare")
      ->check(CLI::Range(1, 10000000));

  arbiter::cmd::ServeFlags serve;
  CLI::App* serve_cmd = app.add_subcommand("serve", "Run the control plane: Kubernetes API, store, scheduler");
  serve_cmd->add_option("--listen", serve.listen, "HOST:PORT to serve on");
  serve_cmd->add_option("--data-dir", serve.data_dir, "Directory of the SQLite store");
  serve_cmd->add_option("--store", serve.store, "State store")->check(CLI::IsMember({"sqlite", "memory", "etcd"}));
  serve_cmd->add_option("--etcd-servers", serve.etcd_servers, "With --store etcd: etcd client URLs, comma-separated");
  serve_cmd->add_option("--etcd-prefix", serve.etcd_prefix, "With --store etcd: the key prefix");
  serve_cmd->add_option("--identity", serve.identity, "Leader election identity (default: hostname_pid)");
  serve_cmd->add_option("--leader-elect", serve.leader_elect,
                        "Schedule only while holding the Lease (auto: with --store etcd)")
      ->check(CLI::IsMember({"auto", "true", "false"}));
  serve_cmd->add_option("--tls-cert-file", serve.tls_cert_file, "Serve HTTPS with this certificate (PEM)");
  serve_cmd->add_option("--tls-private-key-file", serve.tls_key_file, "The certificate's private key (PEM)");
  serve_cmd->add_option("--token-auth-file", serve.token_auth_file,
                        "Bearer tokens (token,user,uid,\"groups\" per line); without it, loopback only");
  serve_cmd->add_flag("--no-simulate-nodes", serve.no_simulate_nodes,
                      "Do not simulate nodes (real node agents report pod status)");
  serve_cmd->add_flag("--no-scheduler", serve.no_scheduler,
                      "Do not schedule: pods wait for another scheduler (arbiter schedule, kube-scheduler)");
  serve_cmd->add_flag("--no-controllers", serve.no_controllers,
                      "Do not run the controllers (ReplicaSet, Deployment, garbage collector, namespace)");
  serve_cmd->add_flag("--fsync", serve.fsync, "Sync every commit to disk (survives power loss; slower)");
  serve_cmd->add_option("--seed", serve.seed, "Seed of the scheduler's random source");
  serve_cmd->add_option("--default-run-duration", serve.default_run_duration,
                        "How long a simulated pod that does not restart (a Job's, restartPolicy Never or OnFailure) "
                        "runs without an arbiter.dev/run-duration annotation (0: until deleted)");
  serve_cmd->add_option("--config", serve.config,
                        "A KubeSchedulerConfiguration file: the scheduler's profile (one profile)");
  serve_cmd->add_option("--kubelet-config", serve.kubelet_config,
                        "KubeletConfiguration (evictionHard) of the simulated nodes; default: the kubelet's");
  serve_cmd->add_option("--tree-cache-mib", serve.tree_cache_mib,
                        "Bound of the cache of parsed JSON trees over the stored objects' text, in MiB (0: keep none "
                        "older than --tree-cache-min-age)")
      ->check(CLI::Range(size_t{0}, size_t{1} << 20));
  serve_cmd->add_option("--hot-text-mib", serve.hot_text_mib,
                        "Plain JSON text of the stored objects kept beyond 2 s old, in MiB; the rest is kept "
                        "compressed (zstd) until it is read again")
      ->check(CLI::Range(size_t{0}, size_t{1} << 20));
  serve_cmd->add_option("--tree-cache-min-age", serve.tree_cache_min_age,
                        "How long a parsed JSON tree is kept at least, however full the cache (Go duration; the "
                        "readers of a new version read it within this time, and would parse it again otherwise)");

  arbiter::cmd::ScheduleFlags sched;
  CLI::App* sched_cmd = app.add_subcommand(
      "schedule", "Schedule the pods of an existing Kubernetes cluster (beside kube-scheduler, or instead of it)");
  AddClusterClientFlags(sched_cmd, sched);
  sched_cmd->add_option("--config", sched.config, "A KubeSchedulerConfiguration file (one profile)");
  sched_cmd->add_option("--scheduler-name", sched.scheduler_name,
                        "Schedule the pods whose spec.schedulerName is this (over the profile's; default: "
                        "default-scheduler)");
  sched_cmd->add_option("--leader-elect", sched.leader_elect,
                        "Schedule only while holding the Lease (run several for failover)");
  sched_cmd->add_option("--leader-elect-resource-name", sched.lease_name, "The Lease's name");
  sched_cmd->add_option("--leader-elect-resource-namespace", sched.lease_namespace, "The Lease's namespace");
  sched_cmd->add_option("--leader-elect-lease-duration", sched.lease_duration,
                        "Seconds a candidate waits without renewals before it takes the Lease")
      ->check(CLI::Range(0.1, 3600.0));
  sched_cmd->add_option("--leader-elect-renew-deadline", sched.renew_deadline,
                        "Seconds the leader keeps leading without a renewal")
      ->check(CLI::Range(0.1, 3600.0));
  sched_cmd->add_option("--leader-elect-retry-period", sched.retry_period, "Seconds between tries to take or renew")
      ->check(CLI::Range(0.01, 3600.0));
  sched_cmd->add_option("--identity", sched.identity, "Leader election identity (default: hostname_pid)");
  sched_cmd->add_option("--kube-api-content-type", sched.kube_api_content_type,
                        "application/json, or application/vnd.kubernetes.protobuf (asked for, and sent where the "
                        "kind has a protobuf form; fields this release does not know are not read)")
      ->check(CLI::IsMember({"application/json", "application/vnd.kubernetes.protobuf"}));
  sched_cmd->add_option("--bind-address", sched.bind_address, "Address of /healthz, /readyz and /metrics");
  sched_cmd->add_option("--secure-port", sched.secure_port, "HTTPS port of /healthz, /readyz and /metrics (0: none)")
      ->check(CLI::Range(0, 65535));
  sched_cmd->add_option("--tls-cert-file", sched.tls_cert_file, "The secure port's certificate (PEM)");
  sched_cmd->add_option("--tls-private-key-file", sched.tls_key_file, "The certificate's private key (PEM)");
  sched_cmd->add_option("--cert-dir", sched.cert_dir,
                        "Where a self-signed certificate is written when none is given (default: a temporary folder)");
  sched_cmd->add_option("--request-log", sched.request_log, "Append every request sent (METHOD TARGET) to this file");
  sched_cmd->add_flag("--request-log-bodies", sched.request_log_bodies,
                      "With --request-log: each request's body too, after a tab (JSON as sent)");
  sched_cmd->add_option("--seed", sched.seed, "Seed of the scheduler's random source");

  arbiter::cmd::ScheduleFlags nodes;
  nodes.simulate_nodes = true;
  nodes.lease_name = "arbiter-nodes";
  nodes.secure_port = 0;
  CLI::App* nodes_cmd = app.add_subcommand(
      "nodes", "Simulate the kubelets of an existing cluster's Nodes: Ready, heartbeats, pods run (as KWOK)");
  AddClusterClientFlags(nodes_cmd, nodes);
  nodes_cmd->add_option("--leader-elect", nodes.leader_elect, "Simulate only while holding the Lease");
  nodes_cmd->add_option("--leader-elect-resource-name", nodes.lease_name, "The Lease's name");
  nodes_cmd->add_option("--identity", nodes.identity, "Leader election identity (default: hostname_pid)");
  nodes_cmd->add_option("--default-run-duration", nodes.default_run_duration,
                        "How long a pod that does not restart runs without an arbiter.dev/run-duration annotation "
                        "(0: until deleted)");
  nodes_cmd->add_option("--secure-port", nodes.secure_port, "HTTPS port of /healthz, /readyz and /metrics (0: none)")
      ->check(CLI::Range(0, 65535));
  nodes_cmd->add_option("--bind-address", nodes.bind_address, "Address of /healthz, /readyz and /metrics");
  nodes_cmd->add_option("--cert-dir", nodes.cert_dir, "Where a self-signed certificate is written");
  nodes_cmd->add_option("--request-log", nodes.request_log, "Append every request sent (METHOD TARGET) to this file");

  CLI::App* version_cmd = app.add_subcommand("version", "Print the version");

  // A mistyped command: name it and the closest one, rather than CLI11's "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    const std::string given = argv[1];
    std::string names, closest;
    size_t best = 3;  // suggest within two edits
    for (const CLI::App* sub : app.get_subcommands({})) {
      const std::string& name = sub->get_name();
      if (name == given) {
        best = 0;
        break;
      }
      names += (names.empty() ? "" : ", ") + name;
      // Levenshtein distance.
      std::vector<size_t> row(name.size() + 1);
      for (size_t j = 0; j <= name.size(); ++j) row[j] = j;
      for (size_t i = 1; i <= given.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= name.size(); ++j) {
          const size_t up = row[j];
          row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (given[i - 1] == name[j - 1] ? 0 : 1)});
          diag = up;
        }
      }
      if (row[name.size()] < best) {
        best = row[name.size()];
        closest = name;
      }
    }
    if (best != 0) {
      std::cerr << "arbiter: unknown command \"" << given << "\""
                << (closest.empty() ? "" : " (did you mean \"" + closest + "\"?)") << "; the commands are " << names
                << "\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (plan_cmd->parsed()) return arbiter::cmd::RunPlanCommand(plan, std::cout, std::cerr);
  if (convert_cmd->parsed()) return arbiter::cmd::RunConvertCommand(convert, std::cout, std::cerr);
  if (simulate_cmd->parsed()) return arbiter::cmd::RunSimulateCommand(simulate, std::cout, std::cerr);
  bench.initial_pods_given = bench_cmd->count("--initial-pods") > 0;
  bench.connections_given = bench_cmd->count("--connections") > 0;
  bench.measured_pods_given = bench_cmd->count("--pods") > 0;
  if (bench_cmd->parsed() && bench.scenario == "ModelFootprint") arbiter::bench::ReexecForExactCounts(argv);
  if (bench_cmd->parsed()) return arbiter::cmd::RunBenchCommand(bench, std::cout, std::cerr);
  if (serve_cmd->parsed()) return arbiter::cmd::RunServeCommand(serve, std::cout, std::cerr);
  if (sched_cmd->parsed()) return arbiter::cmd::RunScheduleCommand(sched, std::cout, std::cerr);
  if (nodes_cmd->parsed()) return arbiter::cmd::RunScheduleCommand(nodes, std::cout, std::cerr);
  if (version_cmd->parsed()) {
    std::cout << "arbiter 0.1.0\n";
    return 0;
  }
  return 2;
}
