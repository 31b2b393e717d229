// `arbiter plan`.
#include "plan_command.h"

#include <algorithm>
#include <new>
#include <optional>
#include <ostream>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/controllers/expand.h"
#include "arbiter/kubeclient/kubeclient.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/model/quantity.h"
#include "arbiter/nomad/input.h"
#include "arbiter/nomad/planner.h"
#include "arbiter/nomad/render.h"
#include "arbiter/plan/render.h"
#include "arbiter/sim/plan_simulation.h"
#include "arbiter/ui/dashboard.h"
#include "html_file.h"

namespace arbiter::cmd {

namespace {

// Reads every input file, within `max_input_size` bytes for all of them together; false (with
// the problems written to `err`) if any cannot be read.
bool ReadInputs(const PlanFlags& flags, std::vector<manifest::InputFile>& files, std::ostream& err) {
  auto limit = model::Quantity::Parse(flags.max_input_size);
  if (!limit.ok() || limit->value() <= 0) {
    err << "arbiter plan: --max-input-size: \"" << flags.max_input_size
        << "\" is not a positive quantity of bytes (e.g. 512Mi, 2Gi)\n";
    return false;
  }
  uint64_t left = static_cast<uint64_t>(limit->value());
  bool ok = true;
  for (const auto& path : flags.files) {
    auto f = manifest::ReadInputFile(path, left);
    if (!f.ok()) {
      err << f.status().message() << "\n";
      ok = false;
      continue;
    }
    left -= f->content.size();
    files.push_back(std::move(*f));
  }
  return ok;
}

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
  if (!flags.html.empty()) {
    err << "arbiter plan --nomad: --html reports Kubernetes plans only\n";
    return kError;
  }
  std::vector<manifest::InputFile> files;
  if (!ReadInputs(flags, files, err)) return kError;
  nomad::NomadInput in = nomad::LoadNomad(files[0].name, files[0].content, files[1].name, files[1].content);
  if (!in.ok()) {
    for (const auto& e : in.errors) err << e << "\n";
    return kError;
  }
  nomad::PlannerOptions options;
  options.seed = flags.seed;
  options.priority_delta = flags.nomad_priority_delta;
  options.plan_applier = flags.nomad_plan_applier;
  options.optimal_victims = flags.nomad_victim_selection == "optimal";
  const nomad::NomadPlan plan = nomad::PlanJob(in.cluster, in.job, options);
  out << (flags.output == "json" ? nomad::RenderJson(in.job, plan) : nomad::RenderTable(in.job, plan));
  // The output is `nomad job plan`'s; what a real submission would do differently goes to stderr.
  for (const std::string& note : nomad::ApplierNotes(plan)) err << "note: " << note << "\n";
  return nomad::ExitCode(plan);
}

// What a live cluster holds that plan reads: each collection, listed as kubectl lists it.
struct LiveCollection {
  const char* path;
  const char* api_version;
  const char* kind;
  bool optional;  // an API server without the Workload API does not serve it
};
constexpr LiveCollection kLiveCollections[] = {
    {"/api/v1/namespaces", "v1", "Namespace", false},
    {"/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1", "PriorityClass", false},
    {"/api/v1/nodes", "v1", "Node", false},
    {"/apis/policy/v1/poddisruptionbudgets", "policy/v1", "PodDisruptionBudget", false},
    {"/apis/scheduling.k8s.io/v1beta1/workloads", "scheduling.k8s.io/v1beta1", "Workload", true},
    {"/apis/scheduling.k8s.io/v1alpha3/compositepodgroups", "scheduling.k8s.io/v1alpha3", "CompositePodGroup", true},
    {"/apis/scheduling.k8s.io/v1beta1/podgroups", "scheduling.k8s.io/v1beta1", "PodGroup", true},
    {"/api/v1/pods", "v1", "Pod", false},
};

// With --server or --kubeconfig: the live cluster's objects, one List text per collection,
// read before the files (nothing is written to the cluster). False (problems in `err`) if the
// cluster cannot be read.
bool ReadLiveCluster(const PlanFlags& flags, std::vector<manifest::InputFile>& files, std::ostream& err) {
  if (flags.server.empty() && flags.kubeconfig.empty()) return true;
  kubeclient::Config config;
  if (!flags.kubeconfig.empty()) {
    auto loaded = kubeclient::LoadKubeconfig(flags.kubeconfig, flags.context);
    if (!loaded.ok()) {
      err << "arbiter plan: " << loaded.status().message() << "\n";
      return false;
    }
    config = *loaded;
  }
  if (!flags.server.empty()) config.server = flags.server;
  if (!flags.token.empty()) config.token = flags.token;
  if (flags.insecure_skip_tls_verify) config.insecure = true;
  auto client = kubeclient::Client::Connect(config);
  if (!client.ok()) {
    err << "arbiter plan: " << client.status().message() << "\n";
    return false;
  }
  const auto limit = model::Quantity::Parse(flags.max_input_size);
  const size_t max_bytes = limit.ok() && limit->value() > 0 ? static_cast<size_t>(limit->value()) : size_t{1} << 30;
  for (const LiveCollection& c : kLiveCollections) {
    auto text = (*client)->ListAll(c.path, c.api_version, c.kind, 500, max_bytes);
    if (!text.ok() && c.optional && text.status().code() == StatusCode::kNotFound) continue;
    if (!text.ok()) {
      err << "arbiter plan: " << text.status().message() << "\n";
      return false;
    }
    files.push_back({config.server + c.path, std::move(*text)});
  }
  return true;
}

int RunKubernetesPlan(const PlanFlags& flags, std::ostream& out, std::ostream& err) {
  std::vector<manifest::InputFile> files;
  if (!ReadLiveCluster(flags, files, err)) return 2;
  if (!ReadInputs(flags, files, err)) return 2;
  manifest::UnknownFields unknown = manifest::UnknownFields::kError;
  if (flags.validate == "warn") {
    unknown = manifest::UnknownFields::kWarn;
  } else if (flags.validate == "ignore" || flags.validate == "false") {
    unknown = manifest::UnknownFields::kIgnore;
  } else if (flags.validate != "strict" && flags.validate != "true") {
    err << "arbiter plan: --validate: \"" << flags.validate << "\" is not one of strict, warn or ignore\n";
    return 2;
  }
  // Workloads become the pods their controllers would create now (controllers/expand.h).
  controllers::Expansion expansion;
  manifest::LoadResult loaded = manifest::Load(files, manifest::TextReader::kFast, unknown, [&](manifest::LoadResult& r) {
    expansion = controllers::ExpandWorkloads(r.objects, flags.seed);
    r.errors.insert(r.errors.end(), expansion.errors.begin(), expansion.errors.end());
  });
  for (const auto& w : loaded.warnings) err << "warning: " << w << "\n";
  std::vector<std::string> errors = loaded.errors;
  if (errors.empty()) errors = admission::AdmitPriorities(loaded.objects);
  if (!errors.empty()) {
    for (const auto& e : errors) err << e << "\n";
    return 2;
  }
  for (const auto& note : expansion.notes) err << "note: " << note << "\n";
  if (!loaded.objects.skipped.empty()) {
    // By kind, in order of first appearance: "3 Services, 1 ConfigMap".
    std::vector<std::pair<std::string, int>> kinds;
    for (const auto& o : loaded.objects.skipped) {
      auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == o.kind; });
      if (it == kinds.end()) {
        kinds.emplace_back(o.kind, 1);
      } else {
        ++it->second;
      }
    }
    std::string list;
    for (const auto& [kind, n] : kinds) list += (list.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
    err << "note: read and skipped what scheduling does not use: " << list << "\n";
  }
  plan::Format format = plan::Format::kTable;
  if (flags.output == "json") format = plan::Format::kJson;
  if (flags.output == "yaml") format = plan::Format::kYaml;
  sim::PlanOptions options;
  options.seed = flags.seed;
  options.explain = flags.explain || !flags.html.empty();
  options.fast_paths = !flags.no_fast_paths;
  // Written as it is made: the explained cycles as they end, then the outcome. The HTML report
  // needs every cycle at the end, so with --html the cycles are kept (and written with the rest).
  std::optional<plan::PlanWriter> writer;
  auto write = [&]() -> plan::PlanWriter& { return writer ? *writer : writer.emplace(format, flags.explain, out); };
  if (flags.html.empty()) options.on_cycle = [&](const sched::CycleOutcome& c) { write().Cycle(c); };
  auto result = sim::RunPlan(loaded.objects, options);
  if (!result.ok()) {
    const bool input_problem = result.status().code() == StatusCode::kInvalidArgument;
    err << "arbiter plan: " << result.status().message() << "\n";
    if (writer) writer->Abort(result.status().message());  // cycles were written: close the document
    return input_problem ? 2 : 1;
  }
  if (!flags.html.empty()) {
    if (flags.explain) {
      for (const auto& c : result->cycles) write().Cycle(c);
    }
    const ui::Json report = ui::PlanReport(loaded.objects, *result);
    if (Status w = WriteHtml(flags.html, ui::Page(&report)); !w.ok()) {
      const std::string message = "--html " + flags.html + ": " + w.message();
      err << "arbiter plan: " << message << "\n";
      if (writer) writer->Abort(message);  // cycles were written: close the document
      return 1;
    }
    err << "arbiter plan: wrote the report to " << flags.html << "\n";
  }
  write().Finish(*result);
  return 0;
}

}  // namespace

int RunPlanCommand(const PlanFlags& flags, std::ostream& out, std::ostream& err) {
  if (!flags.nomad && !flags.nomad_victim_selection.empty()) {
    err << "arbiter plan: --victim-selection is for --nomad; a Kubernetes plan takes DefaultPreemption's "
           "victimSelection from the KubeSchedulerConfiguration in its input\n";
    return 2;  // invalid input, as Kubernetes plans exit
  }
  try {
    return flags.nomad ? RunNomadPlan(flags, out, err) : RunKubernetesPlan(flags, out, err);
  } catch (const std::bad_alloc&) {
    // The decoded model of a large input can outgrow the machine: say so instead of aborting.
    err << "arbiter plan: out of memory while planning the input; give it less input (--max-input-size "
           "bounds what is read) or run it where more memory is available\n";
    return flags.nomad ? 255 : 1;
  }
}

}  // namespace arbiter::cmd
