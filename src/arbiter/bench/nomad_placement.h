// A Nomad placement benchmark in the spirit of Nomad's C2M run, with preemption on every
// placement: `nodes` nodes of 4000 MHz / 8192 MB, each full with four allocations (1000 MHz /
// 2048 MB) of priority-20 batch jobs; then one priority-80 service job (service preemption on)
// whose Count is one allocation per node of 1500 MHz / 1024 MB. Every placement runs the generic
// scheduler's pass without preemption, then the pass with it, and evicts two allocations.
#pragma once

#include <functional>
#include <string>

#include "arbiter/base/status.h"

namespace arbiter::bench {

struct NomadBenchResult {
  std::string name;
  size_t nodes = 0;
  size_t placements = 0;
  size_t preempted = 0;
  size_t failed = 0;
  double seconds = 0;
  double placements_per_second = 0;
  long peak_rss_kib = 0;
  double calibration_ms = 0;
};

StatusOr<NomadBenchResult> RunNomadPlacement(size_t nodes, uint64_t seed);

}  // namespace arbiter::bench
