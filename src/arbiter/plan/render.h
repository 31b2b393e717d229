// Rendering a plan for people (table) and for programs (JSON, YAML), in the shapes that
// ../shared/spec/plan.md fixes. Output is a pure function of the PlanResult.
#pragma once

#include <string>

#include "arbiter/sim/plan_simulation.h"

namespace arbiter::plan {

enum class Format { kTable, kJson, kYaml };

std::string Render(const sim::PlanResult& result, Format format, bool explain);

}  // namespace arbiter::plan
