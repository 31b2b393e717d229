// `arbiter plan`: load manifests, admit, simulate, render. Exit 0 on a computed plan, 2 on
// invalid input (one line per problem on stderr, nothing on stdout), 1 on an internal error.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "arbiter/model/best_fit_victims.h"

namespace arbiter::cmd {

struct PlanFlags {
  std::vector<std::string> files;
  std::string output = "table";
  uint64_t seed = 0;
  bool explain = false;
  bool nomad = false;
  int32_t nomad_priority_delta = model::kNomadPriorityDelta;  // a victim's job is at least this much lower
  std::string nomad_victim_selection;  // Nomad mode: "nomad" (default) or "optimal" 
  bool nomad_plan_applier = false;    // refuse placements the plan applier would (not `nomad job plan`'s output)
  bool no_fast_paths = false;
  std::string max_input_size = "1Gi";  // all input files together (a Kubernetes quantity)
  // Planning against a live cluster: its API server (or a kubeconfig and context) and token.
  std::string server, token, kubeconfig, context;
  bool insecure_skip_tls_verify = false;
  // Also write the plan as one self-contained HTML report (the dashboard's views) to this file.
  std::string html;
  // What an unknown field in the input does, as kubectl's --validate: strict (an error, the
  // default), warn (a warning; planned without it) or ignore. true and false mean strict and ignore.
  std::string validate = "strict";
};

int RunPlanCommand(const PlanFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace arbiter::cmd
