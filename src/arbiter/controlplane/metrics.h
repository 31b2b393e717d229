// The control loop's counters, read by /metrics from the HTTP threads (hence atomics).
#pragma once

#include <atomic>
#include <cstdint>

namespace arbiter::controlplane {

struct LoopMetrics {
  std::atomic<uint64_t> scheduled{0};
  std::atomic<uint64_t> unschedulable{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> preemption_attempts{0};
  std::atomic<uint64_t> preemption_victims{0};
  // Pending pods by queue, as kube-scheduler's scheduler_pending_pods splits them (a pod group
  // waiting in the queue counts once).
  std::atomic<uint64_t> pending{0};  // activeQ
  std::atomic<uint64_t> pending_backoff{0};
  std::atomic<uint64_t> pending_unschedulable{0};
  std::atomic<uint64_t> victim_histogram[8] = {};  // buckets 1,2,4,...,64,+Inf
  // Creation to binding, in seconds: buckets 0.01 * 2^i for i < 15, then +Inf.
  std::atomic<uint64_t> e2e_histogram[16] = {};
  std::atomic<uint64_t> e2e_micros_sum{0};
};

}  // namespace arbiter::controlplane
