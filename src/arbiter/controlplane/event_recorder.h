// The control loop's events (core/v1 Event objects about pods and the controllers' objects), written as client-go's event
// recorder writes them:
//   * off the caller's path: Record only queues the event, and the recorder writes the queued
//     events in batches (one Store::Apply each), on a thread of its own in the background mode
//     (client-go's broadcaster is asynchronous too), or when Flush is called. Events are what the
//     scheduler reports, never what it decides from, so they need not be written before its next
//     cycle;
//   * correlation: an event identical to one recorded before (same object, type, reason,
//     message and source) is the same event happening again, so its count goes up and its
//     lastTimestamp moves instead of a new object being created. The most recent 4,096 are
//     remembered, as the correlator's LRU cache does; one that expired or was deleted meanwhile
//     starts afresh. Of each it remembers its name, revision, count and first time: a repeat's
//     body is built again from what makes the event the same;
//   * the TTL: events are deleted once they last happened longer ago than the TTL
//     (kube-apiserver's --event-ttl, 1 h by default); the sweep runs at most once a minute;
//   * a bound: at most kMaxQueued events wait to be written; beyond, new ones are dropped and
//     counted, as client-go drops events when its broadcaster falls behind.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "arbiter/base/time.h"
#include "arbiter/controlplane/write_batch.h"
#include "arbiter/store/store.h"

namespace arbiter::controlplane {

// One event about an object: a pod unless `kind` says otherwise (the controllers' events are
// about ReplicaSets, Deployments, Jobs and the rest).
struct PodEvent {
  std::string ns, pod, uid;  // the object's namespace, name and uid
  std::string type;  // Normal or Warning
  std::string reason, message;
  std::string component = "default-scheduler";  // source.component and reportingComponent
  std::string host;                             // source.host (a kubelet's node), may be empty
  std::string kind = "Pod";
  std::string api_version = "v1";
};

class EventRecorder {
 public:
  static constexpr size_t kCorrelated = 4096;
  static constexpr size_t kMaxQueued = 100000;

  // Writes go to `store`. With `background`, a thread of the recorder's writes what is queued
  // as it comes; otherwise Flush does, on the caller's thread.
  EventRecorder(store::Store& store, const Clock& clock, Duration ttl = 60 * kMinute, bool background = false);
  ~EventRecorder();  // writes what is still queued
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Queues the event (its time is the clock's now).
  void Record(const PodEvent& e);
  // Returns once every event recorded so far is written (or dropped); the first store error.
  Status Flush();
  // Deletes the events older than the TTL, at most once a minute of the clock.
  Status ExpireOld();
  size_t remembered() const;
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  struct Seen {
    std::string name;
    int64_t revision = 0;  // 0 while its creation is queued, -1 once it is known gone
    int64_t count = 1;
    std::string first;  // firstTimestamp
  };
  struct Queued {
    PodEvent event;
    Timestamp at;
  };
  nlohmann::json Body(const PodEvent& e, const std::string& name, const Seen& seen, const std::string& now) const;
  // The completion of a queued write of the event `key`.
  WriteBatch::Done Settle(const std::string& key);
  // Writes `events` in one batch (the writer's side; writer_mu_ held).
  Status Write(std::vector<Queued> events);
  void Run();

  store::Store& store_;
  const Clock& clock_;
  Duration ttl_;
  Timestamp swept_at_ = 0;  // the caller's (ExpireOld)

  std::mutex mu_;  // the queue
  std::condition_variable cv_, idle_;
  std::vector<Queued> queue_;
  uint64_t recorded_ = 0, written_ = 0;  // queued so far, and of those written or dropped
  bool stopping_ = false;
  Status error_ = Status::Ok();  // the first store error of a background write
  std::atomic<uint64_t> dropped_{0};

  // The writer's side: one writer at a time.
  mutable std::mutex writer_mu_;
  WriteBatch batch_;
  uint64_t seq_ = 0;
  std::map<std::string, Seen> correlated_;  // by what makes two events the same
  std::deque<std::string> order_;           // oldest first
  std::thread thread_;
};

}  // namespace arbiter::controlplane
