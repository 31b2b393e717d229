// Reads Nomad's own JSON: the cluster file (`{"SchedulerConfig", "Nodes", "Allocations"}` in the
// shapes of Nomad's HTTP API) and the job file (`nomad job run -output`). Every problem is one
// line naming the file, the object and the field: `FILE: Nodes[2] (node-x): NodeResources.Cpu.CpuShares: ...`.
#pragma once

#include <string>
#include <vector>

#include "arbiter/nomad/model.h"

namespace arbiter::nomad {

struct NomadInput {
  Cluster cluster;
  Job job;
  std::vector<std::string> errors;
  bool ok() const { return errors.empty(); }
};

// `cluster_text` and `job_text` are the files' contents; the names are for messages.
NomadInput LoadNomad(const std::string& cluster_file, const std::string& cluster_text, const std::string& job_file,
                     const std::string& job_text);

}  // namespace arbiter::nomad
