// A Nomad plan as `nomad job plan` shows it: `-o json` prints the plan response's shape
// (Annotations.DesiredTGUpdates and PreemptedAllocs, FailedTGAllocs, plus Arbiter's Placements,
// where PlanApplierWouldRefuse names the dimension a placement's node still lacks);
// the table mirrors the CLI's text, with its Preemptions table. ExitCode is the CLI's: 0 when
// the job needs no change, 1 when allocations would be created or destroyed.
#pragma once

#include <string>
#include <vector>

#include "arbiter/nomad/model.h"
#include "arbiter/nomad/planner.h"

namespace arbiter::nomad {

std::string RenderJson(const Job& job, const NomadPlan& plan);
std::string RenderTable(const Job& job, const NomadPlan& plan);
// One line per placement that a real submission's plan applier would refuse (Placement::overflow),
// saying why; `nomad job plan` prints none of them, so the CLI writes them to stderr.
std::vector<std::string> ApplierNotes(const NomadPlan& plan);
int ExitCode(const NomadPlan& plan);

}  // namespace arbiter::nomad
