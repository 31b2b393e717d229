// The scheduling queue, as kube-scheduler's PriorityQueue:
//   * activeQ: pods ready to be tried, ordered by the QueueSort plugin (PrioritySort: higher
//     priority first, then earlier queue timestamp, then input order);
//   * backoffQ: pods that may not be retried before their backoff expires — initial * 2^(n-1)
//     after the n-th attempt, capped at max (1 s doubling to 10 s by default); ordered by expiry;
//   * unschedulable pool: pods that plugins rejected, waiting for a cluster event that one of the
//     rejecting plugins cares about, or for the leftover flush after 5 minutes.
// Pop takes the head of activeQ; when activeQ is empty it takes the head of backoffQ even before
// its backoff expires (SchedulerPopFromBackoffQ, on by default since 1.33).
// PreEnqueue plugins gate entry to activeQ: a gated pod waits in the unschedulable pool.
// All ordering is total and independent of hash order. Time comes from the injected Clock.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "arbiter/base/time.h"
#include "arbiter/sched/framework/framework.h"

namespace arbiter::sched {

// Cluster changes that can make unschedulable pods schedulable.
enum class ClusterEvent {
  kAssignedPodAdd,     // a pod was bound
  kAssignedPodDelete,  // a bound pod was deleted
  kAssignedPodUpdate,  // a bound pod changed (labels, termination)
  kNodeAdd,
  kNodeUpdate,
  kPodGroupChange,     // a pod group or its membership changed
};

// Whether a plugin that rejected a pod cares about an event (a coarse form of queueing hints).
bool PluginCaresAbout(std::string_view plugin, ClusterEvent event);

struct QueueOptions {
  Duration initial_backoff = kSecond;
  Duration max_backoff = 10 * kSecond;
  Duration max_in_unschedulable = 5 * kMinute;
};

class SchedulingQueue {
 public:
  SchedulingQueue(const Framework* framework, const Clock* clock, QueueOptions options);

  // Adds a new pending pod. `enqueue_time` is its queue timestamp (defaults to now).
  void Add(PodInfoPtr pod, std::optional<Timestamp> enqueue_time = std::nullopt);
  // The next pod to try, with its attempt count incremented; nullopt if no pod is ready.
  std::optional<QueuedPodInfo> Pop();
  // Returns a pod after a failed attempt. Pods rejected by plugins go to the unschedulable
  // pool; pods that failed with an error (no rejecting plugin) go to backoffQ.
  void AddUnschedulable(QueuedPodInfo info);
  // Replaces the stored pod (same UID), wherever it waits.
  void Update(PodInfoPtr pod);
  void Delete(const std::string& uid);

  // Moves unschedulable pods whose rejecting plugins care about `event` to activeQ, or to
  // backoffQ if they are still backing off.
  void MoveOnEvent(ClusterEvent event);
  // Moves pods whose backoff has expired to activeQ, and pods that have waited in the
  // unschedulable pool longer than the maximum to activeQ or backoffQ.
  void Flush();
  // The earliest time a backed-off pod becomes ready, or a pool pod is due for the leftover
  // flush; nullopt if nothing is waiting on time.
  std::optional<Timestamp> NextWakeup() const;

  size_t active_size() const { return active_.size(); }
  size_t backoff_size() const { return backoff_.size(); }
  size_t unschedulable_size() const { return unschedulable_.size(); }
  bool Contains(const std::string& uid) const { return entries_.count(uid) != 0; }
  Timestamp BackoffExpiry(const QueuedPodInfo& info) const;

 private:
  struct Entry {
    QueuedPodInfo info;
    enum class Where { kActive, kBackoff, kUnschedulable, kInFlight } where = Where::kInFlight;
    Timestamp backoff_expiry = 0;
    Timestamp unschedulable_since = 0;
  };
  struct ActiveLess {
    const SchedulingQueue* q;
    bool operator()(const Entry* a, const Entry* b) const;
  };
  struct BackoffLess {
    const SchedulingQueue* q;
    bool operator()(const Entry* a, const Entry* b) const;
  };

  void ToActiveOrBackoff(Entry* e);
  void PushActive(Entry* e);
  void Detach(Entry* e);

  const Framework* framework_;
  const Clock* clock_;
  QueueOptions options_;
  uint64_t next_sequence_ = 0;
  std::map<std::string, std::unique_ptr<Entry>> entries_;  // by UID
  std::set<Entry*, ActiveLess> active_;
  std::set<Entry*, BackoffLess> backoff_;
  std::set<Entry*, ActiveLess> unschedulable_;  // kept in queue order for deterministic moves
};

}  // namespace arbiter::sched
