// The scheduler metrics' Prometheus text: kube-scheduler's names, labels and histogram shapes.
#include "arbiter/controlplane/metrics.h"

#include <gtest/gtest.h>

namespace arbiter::controlplane {
namespace {

bool Has(const std::string& text, const std::string& line) { return text.find("\n" + line + "\n") != std::string::npos; }

TEST(SchedulerMetrics, AttemptsByResultAndPendingPodsByQueue) {
  LoopMetrics m;
  m.scheduled = 7;
  m.unschedulable = 2;
  m.errors = 1;
  m.pending = 3;
  m.pending_backoff = 4;
  m.pending_unschedulable = 5;
  const std::string t = SchedulerMetricsText(m, {11, 42, 3});
  EXPECT_TRUE(Has(t, "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"scheduled\"} 7"));
  EXPECT_TRUE(Has(t, "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"unschedulable\"} 2"));
  EXPECT_TRUE(Has(t, "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"error\"} 1"));
  EXPECT_TRUE(Has(t, "scheduler_pending_pods{queue=\"active\"} 3"));
  EXPECT_TRUE(Has(t, "scheduler_pending_pods{queue=\"backoff\"} 4"));
  EXPECT_TRUE(Has(t, "scheduler_pending_pods{queue=\"unschedulable\"} 5"));
  EXPECT_TRUE(Has(t, "scheduler_pending_pods{queue=\"gated\"} 0"));
  EXPECT_TRUE(Has(t, "arbiter_control_loop_store_batches_total 11"));
  EXPECT_TRUE(Has(t, "arbiter_control_loop_store_writes_total 42"));
  EXPECT_TRUE(Has(t, "arbiter_control_loop_events_dropped_total 3"));
  EXPECT_TRUE(Has(t, "# TYPE scheduler_pending_pods gauge"));
}

TEST(SchedulerMetrics, HistogramsAreCumulativeWithSumAndCount) {
  LoopMetrics m;
  m.preemption_attempts = 3;
  m.preemption_victims = 9;
  m.victim_histogram[0] = 1;  // one victim
  m.victim_histogram[2] = 2;  // 3 or 4 victims
  m.e2e_histogram[0] = 5;     // within 10 ms
  m.e2e_histogram[15] = 1;    // beyond the last bound
  m.e2e_micros_sum = 2'500'000;
  const std::string t = SchedulerMetricsText(m, {});
  EXPECT_TRUE(Has(t, "scheduler_preemption_victims_bucket{le=\"1\"} 1"));
  EXPECT_TRUE(Has(t, "scheduler_preemption_victims_bucket{le=\"2\"} 1"));
  EXPECT_TRUE(Has(t, "scheduler_preemption_victims_bucket{le=\"4\"} 3"));
  EXPECT_TRUE(Has(t, "scheduler_preemption_victims_bucket{le=\"+Inf\"} 3"));
  EXPECT_TRUE(Has(t, "scheduler_preemption_victims_sum 9"));
  EXPECT_TRUE(Has(t, "scheduler_preemption_victims_count 3"));
  EXPECT_TRUE(Has(t, "scheduler_preemption_attempts_total 3"));
  EXPECT_TRUE(Has(t, "scheduler_pod_scheduling_sli_duration_seconds_bucket{le=\"0.01\"} 5"));
  EXPECT_TRUE(Has(t, "scheduler_pod_scheduling_sli_duration_seconds_bucket{le=\"163.84\"} 5"));
  EXPECT_TRUE(Has(t, "scheduler_pod_scheduling_sli_duration_seconds_bucket{le=\"+Inf\"} 6"));
  EXPECT_TRUE(Has(t, "scheduler_pod_scheduling_sli_duration_seconds_sum 2.500000"));
  EXPECT_TRUE(Has(t, "scheduler_pod_scheduling_sli_duration_seconds_count 6"));
}

}  // namespace
}  // namespace arbiter::controlplane
