// The scheduler metrics' Prometheus text: kube-scheduler's names, labels and histogram shapes.
#include "arbiter/controlplane/metrics.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

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

TEST(SchedulerMetrics, TheHeapIsReportedAsItsAllocatorCountsIt) {
  // A test binary's allocator is glibc's (or the sanitizers'); the arbiter executable's is
  // jemalloc. Whichever it is, it is named, and a live block shows in the bytes in use.
  auto block = std::make_unique<std::vector<char>>(size_t{8} << 20, 'x');
  const std::string t = SchedulerMetricsText(LoopMetrics{}, {});
  const auto at = t.find("\narbiter_heap_in_use_bytes{allocator=\"");
  ASSERT_NE(at, std::string::npos) << t;
  const auto value = t.find("} ", at);
  ASSERT_NE(value, std::string::npos);
  EXPECT_GE(std::stoull(t.substr(value + 2)), size_t{8} << 20);
  EXPECT_NE(t.find("# TYPE arbiter_heap_held_free_bytes gauge\narbiter_heap_held_free_bytes{allocator=\""), std::string::npos);
  EXPECT_EQ((*block)[0], 'x');
}

}  // namespace
}  // namespace arbiter::controlplane
