// What every benchmark scenario shares: scheduler_perf's default node (4 CPU, 32Gi, 110 pods),
// pods of a given CPU request and 500Mi, percentiles, peak RSS, and the same-process calibration
// workload whose time is reported beside each result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arbiter/model/objects.h"

namespace arbiter::bench {

// "node-<i>", 4 CPU / 32Gi / 110 pods, labelled with its hostname.
model::Node DefaultNode(size_t i);
// A pod in `default` requesting `milli_cpu` and 500Mi, with the given priority and grace period.
model::Pod BenchPod(const std::string& name, int64_t milli_cpu, int32_t priority = 0,
                    int64_t grace_period_seconds = model::kDefaultTerminationGracePeriodSeconds);
// The q-quantile (0..1) of `v`; 0 for an empty list.
double Percentile(std::vector<double> v, double q);
// Peak resident set size of this process, in KiB.
long PeakRssKib();
// Runs the fixed reference workload (sorting 2^18 pseudo-random keys) and returns its wall time
// in milliseconds: a slow machine shows up here too, so runs can be compared.
double CalibrationMillis();

}  // namespace arbiter::bench
