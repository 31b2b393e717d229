#include "arbiter/controlplane/metrics.h"

#include <cstdio>

#include "arbiter/base/heap.h"
#include "arbiter/base/time.h"
#include "arbiter/store/body.h"

namespace arbiter::controlplane {

std::string SchedulerMetricsText(const LoopMetrics& m, const LoopCounters& c) {
  std::string t;
  auto counter = [&](const std::string& name, const std::string& help, const std::string& labels, uint64_t v) {
    t += "# HELP " + name + " " + help + "\n# TYPE " + name + " counter\n" + name + labels + " " + std::to_string(v) + "\n";
  };
  t += "# HELP scheduler_schedule_attempts_total Number of attempts to schedule pods, by the result.\n"
       "# TYPE scheduler_schedule_attempts_total counter\n";
  t += "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"scheduled\"} " +
       std::to_string(m.scheduled.load()) + "\n";
  t += "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"unschedulable\"} " +
       std::to_string(m.unschedulable.load()) + "\n";
  t += "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"error\"} " +
       std::to_string(m.errors.load()) + "\n";
  t += "# HELP scheduler_pending_pods Number of pending pods.\n# TYPE scheduler_pending_pods gauge\n"
       "scheduler_pending_pods{queue=\"active\"} " + std::to_string(m.pending.load()) + "\n"
       "scheduler_pending_pods{queue=\"backoff\"} " + std::to_string(m.pending_backoff.load()) + "\n"
       "scheduler_pending_pods{queue=\"unschedulable\"} " + std::to_string(m.pending_unschedulable.load()) + "\n"
       "scheduler_pending_pods{queue=\"gated\"} " + std::to_string(m.pending_gated.load()) + "\n";
  counter("scheduler_preemption_attempts_total", "Total preemption attempts in the cluster till now", "",
          m.preemption_attempts.load());
  t += "# HELP scheduler_preemption_victims Number of selected preemption victims\n"
       "# TYPE scheduler_preemption_victims histogram\n";
  uint64_t cumulative = 0;
  const char* bounds[] = {"1", "2", "4", "8", "16", "32", "64", "+Inf"};
  for (int i = 0; i < 8; ++i) {
    cumulative += m.victim_histogram[i].load();
    t += std::string("scheduler_preemption_victims_bucket{le=\"") + bounds[i] + "\"} " + std::to_string(cumulative) + "\n";
  }
  t += "scheduler_preemption_victims_sum " + std::to_string(m.preemption_victims.load()) + "\n";
  t += "scheduler_preemption_victims_count " + std::to_string(m.preemption_attempts.load()) + "\n";
  t += "# HELP scheduler_pod_scheduling_sli_duration_seconds E2e latency for a pod being scheduled, from the time "
       "the pod was created until it is bound.\n# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram\n";
  cumulative = 0;
  for (int i = 0; i < 16; ++i) {
    cumulative += m.e2e_histogram[i].load();
    char le[32];
    if (i < 15) {
      std::snprintf(le, sizeof le, "%g", 0.01 * static_cast<double>(1 << i));
    } else {
      std::snprintf(le, sizeof le, "+Inf");
    }
    t += std::string("scheduler_pod_scheduling_sli_duration_seconds_bucket{le=\"") + le + "\"} " +
         std::to_string(cumulative) + "\n";
  }
  char sum[64];
  std::snprintf(sum, sizeof sum, "%.6f", static_cast<double>(m.e2e_micros_sum.load()) / kSecond);
  t += std::string("scheduler_pod_scheduling_sli_duration_seconds_sum ") + sum + "\n";
  t += "scheduler_pod_scheduling_sli_duration_seconds_count " + std::to_string(cumulative) + "\n";
  // The process's heap: what the program holds, and what the allocator keeps resident for reuse.
  const HeapStats heap = CurrentHeap();
  auto gauge = [&](const std::string& name, const std::string& help, size_t v) {
    t += "# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n" + name + "{allocator=\"" + heap.allocator +
         "\"} " + std::to_string(v) + "\n";
  };
  gauge("arbiter_heap_in_use_bytes", "Heap bytes the process has allocated and not freed", heap.in_use);
  gauge("arbiter_heap_held_free_bytes", "Heap bytes the allocator keeps for reuse and has not returned to the system",
        heap.held_free);
  // The stored versions' bodies (store/body.h): trees kept, plain texts, texts compressed.
  const store::BodyCacheStats bodies = store::GetBodyCacheStats();
  auto plain_gauge = [&](const std::string& name, const std::string& help, uint64_t v) {
    t += "# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n" + name + " " + std::to_string(v) + "\n";
  };
  plain_gauge("arbiter_body_trees", "JSON trees the tree cache holds over stored versions' text", bodies.trees);
  plain_gauge("arbiter_body_tree_bytes", "The tree cache's estimate of its trees' memory", bodies.bytes);
  plain_gauge("arbiter_body_hot_text_bytes", "Plain text of stored versions that may be compressed once cold",
              bodies.hot_text_bytes);
  counter("arbiter_body_trees_parsed_total", "JSON trees parsed from stored versions' text", "", bodies.parsed);
  counter("arbiter_body_texts_compressed_total", "Stored versions' texts compressed once cold", "", bodies.packed);
  counter("arbiter_body_text_compressed_in_bytes_total", "Plain bytes of the texts compressed", "",
          bodies.packed_bytes_in);
  counter("arbiter_body_text_compressed_out_bytes_total", "Compressed bytes of the texts compressed", "",
          bodies.packed_bytes_out);
  // Arbiter's own: the control loop's store writes and the batches (transactions) they took.
  counter("arbiter_control_loop_store_batches_total", "Store transactions (batches) the control loop committed", "",
          c.batches);
  counter("arbiter_control_loop_store_writes_total", "Objects the control loop wrote (created, updated or deleted)", "",
          c.writes);
  counter("arbiter_control_loop_events_dropped_total",
          "Events not written because too many were waiting to be (the recorder's bound)", "", c.events_dropped);
  return t;
}

}  // namespace arbiter::controlplane
