// `arbiter simulate`'s report: JSON for programs, a self-contained HTML page for people.
//
// JSON: {"config", "nodes", "durationSeconds", "arrivals", "cycles", "bands": [BAND...],
// "totals": BAND + {"utilisation", "nodeFailures"}, "samples": [{"seconds", "cpu"}...], "compare": REPORT?}
// where BAND is {"name", "priority", "pods", "scheduled", "completed", "withdrawn",
// "nodeFailureLosses", "runningAtEnd", "pendingAtEnd", "pendingSeconds": {"p50", "p95", "p99"}, "preemptions",
// "preemptionsCaused", "lostCpuSeconds", "cascadeDepth"}. Numbers that are not counts are rounded
// to three decimals. The same inputs and seed give the same text on the same build (the generator
// and the failure times use the C library's exp, log and cos, whose last bits may differ elsewhere).
#pragma once

#include <string>

#include "arbiter/simulate/day_simulation.h"

namespace arbiter::simulate {

// `compare`: the other configuration's report, or null.
std::string ReportJson(const Report& report, const Report* compare);
// Tables per band and SVG plots of utilisation over time and pending time by band, the two
// configurations side by side when comparing; no script, no network.
std::string ReportHtml(const Report& report, const Report* compare);

}  // namespace arbiter::simulate
