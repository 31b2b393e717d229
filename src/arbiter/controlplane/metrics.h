// The control loop's counters, read by /metrics from the HTTP threads (hence atomics), and
// their Prometheus text.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

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
  std::atomic<uint64_t> pending_gated{0};
  std::atomic<uint64_t> victim_histogram[8] = {};  // buckets 1,2,4,...,64,+Inf
  // Creation to binding, in seconds: buckets 0.01 * 2^i for i < 15, then +Inf.
  std::atomic<uint64_t> e2e_histogram[16] = {};
  std::atomic<uint64_t> e2e_micros_sum{0};
};

// Arbiter's own counters of the control loop: its store transactions (batches), the objects
// they wrote, and the events the recorder dropped because too many were waiting.
struct LoopCounters {
  uint64_t batches = 0, writes = 0, events_dropped = 0;
};

// The Prometheus text exposition of `m` under kube-scheduler's metric names
// (scheduler_schedule_attempts_total by result, scheduler_pending_pods by queue,
// scheduler_preemption_attempts_total, scheduler_preemption_victims,
// scheduler_pod_scheduling_sli_duration_seconds), and of `c` (arbiter_control_loop_*).
std::string SchedulerMetricsText(const LoopMetrics& m, const LoopCounters& c);

}  // namespace arbiter::controlplane
