// Test helpers: run the whole `arbiter plan` pipeline (load, admit, simulate) on inline YAML,
// and look up pods in the result.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/sim/plan_simulation.h"

namespace arbiter::testing {

// Loads and admits `yaml`; returns the errors (empty on success).
inline std::vector<std::string> LoadErrors(const std::string& yaml, const std::string& file = "test.yaml") {
  manifest::LoadResult r = manifest::Load({{file, yaml}});
  if (!r.ok()) return r.errors;
  return admission::AdmitPriorities(r.objects);
}

// Runs a plan over `yaml`. Fails the test (and returns an empty result) on any error.
inline sim::PlanResult Plan(const std::string& yaml, uint64_t seed = 0, bool explain = false) {
  manifest::LoadResult r = manifest::Load({{"test.yaml", yaml}});
  std::vector<std::string> errors = r.errors;
  if (errors.empty()) errors = admission::AdmitPriorities(r.objects);
  for (const auto& e : errors) ADD_FAILURE() << e;
  if (!errors.empty()) return {};
  sim::PlanOptions o;
  o.seed = seed;
  o.explain = explain;
  auto result = sim::RunPlan(r.objects, o);
  if (!result.ok()) {
    ADD_FAILURE() << result.status().message();
    return {};
  }
  return *result;
}

// The plan entry of pending pod `name` ("namespace/name"); a default entry if absent.
inline sim::PodPlan PodOf(const sim::PlanResult& r, const std::string& name) {
  for (const auto& p : r.pods) {
    if (p.name == name) return p;
  }
  ADD_FAILURE() << "pod " << name << " is not in the plan";
  return {};
}

// The names (namespace/name) of every victim of every preemption in the plan.
inline std::set<std::string> VictimNames(const sim::PlanResult& r) {
  std::set<std::string> out;
  for (const auto& p : r.preemptions) {
    for (const auto& v : p.victims) out.insert(v.name);
  }
  return out;
}

// A node manifest with the given allocatable and labels (YAML flow map, e.g. "{zone: a}").
inline std::string Node(const std::string& name, const std::string& cpu = "4", const std::string& memory = "32Gi",
                        const std::string& pods = "110", const std::string& labels = "{}",
                        const std::string& extra_spec = "") {
  return "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name + "\n  labels: " + labels +
         "\nspec:\n  unschedulable: false\n" + extra_spec + "status:\n  allocatable:\n    cpu: \"" + cpu +
         "\"\n    memory: " + memory + "\n    pods: \"" + pods + "\"\n";
}

// A pod manifest; `node` empty = pending. `spec_extra` is indented YAML placed under spec.
inline std::string Pod(const std::string& name, const std::string& cpu = "100m", const std::string& node = "",
                       const std::string& labels = "{}", const std::string& spec_extra = "",
                       const std::string& ns = "default") {
  std::string s = "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
                  "\n  labels: " + labels + "\nspec:\n";
  if (!node.empty()) s += "  nodeName: " + node + "\n";
  s += spec_extra;
  s += "  containers:\n  - name: c\n    resources:\n      requests:\n        cpu: " + cpu + "\n";
  return s;
}

}  // namespace arbiter::testing
