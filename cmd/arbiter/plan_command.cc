// `arbiter plan`.
#include "plan_command.h"

#include <ostream>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/plan/render.h"
#include "arbiter/sim/plan_simulation.h"

namespace arbiter::cmd {

int RunPlanCommand(const PlanFlags& flags, std::ostream& out, std::ostream& err) {
  if (flags.nomad) {
    err << "arbiter plan: --nomad: Nomad mode is not available in this build yet\n";
    return 2;
  }
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
