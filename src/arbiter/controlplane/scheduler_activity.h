// What the live scheduler shows the dashboard (docs/dashboard.md): its queue, listed on request,
// and the preemptions it made, kept as they happen.
//
// The scheduler runs on the control loop's thread; readers are the API's worker threads. The queue
// is listed only when a reader asks (Read sets a request and wakes the loop; the next pass
// publishes), so that a scheduler nobody looks at pays nothing for it. Preemptions are few and
// kept in a ring of the most recent `max_preemptions`.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/base/time.h"

namespace arbiter::controlplane {

struct QueuedPodView {
  std::string pod;    // namespace/name
  std::string uid;
  std::string group;  // the root group (namespace/name), "" for a lone pod
  std::string pool;   // active, backoff, unschedulable, gated
  int32_t priority = 0;
  int attempts = 0;
  std::string message;  // the last FailedScheduling message (or why a gated pod waits)
  std::string nominated_node;
  std::optional<Timestamp> backoff_until;  // backoff only
};

struct VictimView {
  std::string pod;  // namespace/name
  std::string uid;
  std::string node;
  int32_t priority = 0;
  bool violates_pdb = false;
  int64_t grace_seconds = 0;
};

struct PreemptionView {
  Timestamp time = 0;
  std::string preemptor;       // namespace/name of the pod or group
  std::string preemptor_kind;  // Pod, PodGroup, CompositePodGroup
  std::string preemptor_uid;   // a pod's
  std::string node;            // a pod preemptor's nominated node; "" for a group
  std::vector<VictimView> victims;
};

class SchedulerActivity {
 public:
  explicit SchedulerActivity(size_t max_preemptions = 1000) : max_preemptions_(max_preemptions) {}

  // Called (without the lock) when a reader asks for the queue: wakes the loop.
  void SetWake(std::function<void()> wake);

  struct View {
    bool running = false;         // a scheduler runs here (this replica leads)
    bool queue_fresh = false;     // the queue was published after this read asked
    std::vector<QueuedPodView> queue;
    std::vector<PreemptionView> preemptions;  // oldest first
  };
  // Asks for the queue and waits up to `wait` for the scheduler to publish it (not at all when no
  // scheduler runs); then returns what there is.
  View Read(std::chrono::milliseconds wait);

  // The scheduler's side.
  void SetRunning(bool running);
  bool QueueWanted() const;
  void PublishQueue(std::vector<QueuedPodView> queue);
  void AddPreemption(PreemptionView p);

 private:
  const size_t max_preemptions_;
  mutable std::mutex mu_;
  std::condition_variable published_cv_;
  std::function<void()> wake_;
  bool running_ = false;
  uint64_t requested_ = 0;  // the latest request's number
  uint64_t published_ = 0;  // the request the queue answers
  std::vector<QueuedPodView> queue_;
  std::deque<PreemptionView> preemptions_;
};

}  // namespace arbiter::controlplane
