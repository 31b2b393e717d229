// The SchedulingBasic benchmark shape of kube-scheduler's scheduler_perf, run through the engine
// in process: N nodes of 4 CPU / 32Gi / 110 pods, a number of initial pods scheduled first
// (not measured), then the measured pods; every pod requests 100m CPU and 500Mi.
// The scheduler runs on a virtual clock; the wall time of the measured phase gives pods/s.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "arbiter/base/status.h"

namespace arbiter::bench {

struct SchedulingBasicOptions {
  size_t nodes = 5000;
  size_t initial_pods = 1000;
  size_t measured_pods = 10000;
  uint64_t seed = 0;
};

struct BenchResult {
  std::string name;
  size_t nodes = 0;
  size_t measured_pods = 0;
  size_t scheduled = 0;
  double seconds = 0;
  double pods_per_second = 0;
  double attempt_p50_us = 0;
  double attempt_p90_us = 0;
  double attempt_p99_us = 0;
  long peak_rss_kib = 0;
  // Wall time of a fixed reference workload run just before the measured phase, in the same
  // process: a slow machine shows up here too, so results can be compared across runs.
  double calibration_ms = 0;
};


// `progress` is called now and then with (pods done, pods total).
StatusOr<BenchResult> RunSchedulingBasic(const SchedulingBasicOptions& options,
                                         const std::function<void(size_t, size_t)>& progress);

}  // namespace arbiter::bench
