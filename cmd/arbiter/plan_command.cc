// `arbiter plan`.
#include "plan_command.h"

#include <ostream>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/nomad/input.h"
#include "arbiter/nomad/planner.h"
#include "arbiter/nomad/render.h"
#include "arbiter/plan/render.h"
#include "arbiter/sim/plan_simulation.h"

namespace arbiter::cmd {

namespace {

// `arbiter plan --nomad -f CLUSTER.json -f JOB.json`: exit codes as `nomad job plan` (0 no
// change, 1 allocations created or destroyed, 255 an error).
int RunNomadPlan(const PlanFlags& flags, std::ostream& out, std::ostream& err) {
  constexpr int kError = 255;
  if (flags.files.size() != 2) {
    err << "arbiter plan --nomad: give the cluster file and then the job file: -f CLUSTER.json -f JOB.json\n";
    return kError;
  }
  if (flags.output == "yaml") {
    err << "arbiter plan --nomad: -o must be table or json\n";
    return kError;
  }
  std::vector<manifest::InputFile> files;
  for (const auto& path : flags.files) {
    auto f = manifest::ReadInputFile(path);
    if (!f.ok()) {
      err << f.status().message() << "\n";
      return kError;
    }
    files.push_back(std::move(*f));
  }
  nomad::NomadInput in = nomad::LoadNomad(files[0].name, files[0].content, files[1].name, files[1].content);
  if (!in.ok()) {
    for (const auto& e : in.errors) err << e << "\n";
    return kError;
  }
  nomad::PlannerOptions options;
  options.seed = flags.seed;
  options.priority_delta = flags.nomad_priority_delta;
  const nomad::NomadPlan plan = nomad::PlanJob(in.cluster, in.job, options);
  out << (flags.output == "json" ? nomad::RenderJson(in.job, plan) : nomad::RenderTable(in.job, plan));
  return nomad::ExitCode(plan);
}

}  // namespace

int RunPlanCommand(const PlanFlags& flags, std::ostream& out, std::ostream& err) {
  if (flags.nomad) return RunNomadPlan(flags, out, err);
  std::vector<manifest::InputFile> files;
  bool read_failed = false;
  for (const auto& path : flags.files) {
    auto f = manifest::ReadInputFile(path);
    if (!f.ok()) {
      err << f.status().message() << "\n";
      read_failed = true;
      continue;
    }
    files.push_back(std::move(*f));
  }
  if (read_failed) return 2;
  manifest::LoadResult loaded = manifest::Load(files);
  std::vector<std::string> errors = loaded.errors;
  if (errors.empty()) errors = admission::AdmitPriorities(loaded.objects);
  if (!errors.empty()) {
    for (const auto& e : errors) err << e << "\n";
    return 2;
  }
  plan::Format format = plan::Format::kTable;
  if (flags.output == "json") format = plan::Format::kJson;
  if (flags.output == "yaml") format = plan::Format::kYaml;
  sim::PlanOptions options;
  options.seed = flags.seed;
  options.explain = flags.explain;
  options.fast_paths = !flags.no_fast_paths;
  auto result = sim::RunPlan(loaded.objects, options);
  if (!result.ok()) {
    const bool input_problem = result.status().code() == StatusCode::kInvalidArgument;
    err << "arbiter plan: " << result.status().message() << "\n";
    return input_problem ? 2 : 1;
  }
  out << plan::Render(*result, format, flags.explain);
  return 0;
}

}  // namespace arbiter::cmd
