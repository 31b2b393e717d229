// Rendering a plan for people (table) and for programs (JSON, YAML), in the shapes that
// README.md documents for `arbiter plan`. Output is a pure function of the PlanResult (and of the cycles,
// with --explain).
//
// PlanWriter writes as the plan is made, so that memory holds one element, never the document:
// with --explain each cycle is written when it ends (JSON and YAML: the `cycles` list, which
// comes right after `kind`; table: the cycle's text), then Finish writes the outcome (pods,
// preemptions, events, ...) element by element.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "arbiter/base/json.h"

#include "arbiter/sim/plan_simulation.h"

namespace arbiter::plan {

enum class Format { kTable, kJson, kYaml };

class PlanWriter {
 public:
  PlanWriter(Format format, bool explain, std::ostream& out);
  ~PlanWriter();
  PlanWriter(const PlanWriter&) = delete;
  PlanWriter& operator=(const PlanWriter&) = delete;

  // One explained cycle, as it ends (only with explain).
  void Cycle(const sched::CycleOutcome& cycle);
  // The rest of the plan. The cycles of `result` are not read: they came through Cycle.
  void Finish(const sim::PlanResult& result);
  // The plan failed after cycles were written: the document is closed with an `error` field
  // (JSON, YAML; a last line in a table), so that what was written still parses.
  void Abort(const std::string& message);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The elements of the JSON and YAML renderings, which the dashboard (src/arbiter/ui) shows too:
// one cycle of `cycles` (with its explanation when it has one), one element of `pods` and of
// `preemptions`.
nlohmann::ordered_json CycleJson(const sched::CycleOutcome& cycle);
nlohmann::ordered_json PodPlanJson(const sim::PodPlan& pod);
nlohmann::ordered_json PreemptionJson(const sim::Preemption& preemption);

// The whole plan as one string (the cycles from `result.cycles`).
std::string Render(const sim::PlanResult& result, Format format, bool explain);

}  // namespace arbiter::plan
