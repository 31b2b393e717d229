// `arbiter simulate`: what a preemption policy does to a cluster over time (simulate/). Exit 0
// with a report, 2 on invalid input (one line per problem on stderr), 1 on an internal error.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "arbiter/model/best_fit_victims.h"

namespace arbiter::cmd {

struct SimulateFlags {
  std::vector<std::string> files;  // the cluster: nodes, PriorityClasses, configuration
  std::string workload;            // JSON Lines of arrivals
  std::string generate;            // borg or alibaba, when no workload is given
  int64_t nodes = 1000;            // generated nodes, when the files hold none
  int64_t pods = 10000;            // generated pods
  double load = 0.8;               // the generated work over what the cluster can run in the duration
  std::string duration = "24h";
  double node_failures = 0;          // per node per day
  std::string node_repair = "1h";
  uint64_t seed = 1;
  std::string compare;             // another KubeSchedulerConfiguration to simulate beside
  std::string output = "table";    // table, json or html
  std::string output_file;
  bool progress = false;           // force the progress line even when stderr is not a terminal
  bool nomad = false;              // Nomad's semantics
  std::string nomad_preemption = "system";   // job types whose scheduler may preempt
  std::string compare_nomad_preemption;      // another such list to simulate beside
  int32_t nomad_priority_delta = model::kNomadPriorityDelta;
};

// `arbiter simulate convert --from FORMAT INPUT... -o FILE.jsonl`.
struct ConvertFlags {
  std::string from;  // borg2019 or alibaba2018
  std::vector<std::string> inputs;
  std::string output;
  std::string machine_cpu = "4";        // what a normalised 1.0 of CPU is
  std::string machine_memory = "16Gi";  // what a normalised 1.0 (or 100%) of memory is
};

int RunConvertCommand(const ConvertFlags& flags, std::ostream& out, std::ostream& err);

int RunSimulateCommand(const SimulateFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace arbiter::cmd
