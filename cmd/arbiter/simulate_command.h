// `arbiter simulate`: what a preemption policy does to a cluster over time (simulate/). Exit 0
// with a report, 2 on invalid input (one line per problem on stderr), 1 on an internal error.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace arbiter::cmd {

struct SimulateFlags {
  std::vector<std::string> files;  // the cluster: nodes, PriorityClasses, configuration
  std::string workload;            // JSON Lines of arrivals
  std::string generate;            // borg or alibaba, when no workload is given
  int64_t nodes = 1000;            // generated nodes, when the files hold none
  int64_t pods = 10000;            // generated pods
  std::string duration = "24h";
  uint64_t seed = 1;
  std::string compare;             // another KubeSchedulerConfiguration to simulate beside
  std::string output = "table";    // table, json or html
  std::string output_file;
  bool progress = false;           // force the progress line even when stderr is not a terminal
};

int RunSimulateCommand(const SimulateFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace arbiter::cmd
