// The control loop's events (core/v1 Event objects about pods), written as client-go's event
// recorder writes them:
//   * correlation: an event identical to one recorded before (same object, type, reason,
//     message and source) is the same event happening again, so its count goes up and its
//     lastTimestamp moves instead of a new object being created. The most recent 4,096 are
//     remembered, as the correlator's LRU cache does; one that expired or was deleted meanwhile
//     starts afresh;
//   * the TTL: events are deleted once they last happened longer ago than the TTL
//     (kube-apiserver's --event-ttl, 1 h by default); the sweep runs at most once a minute.
//
// Writes are queued in the WriteBatch (flushed by the caller) with the other writes due
// together. The recorder remembers of each event only its name, revision, count and first
// time: a repeat's body is built again from what makes the event the same.
//
// Not thread-safe: the control loop's thread drives it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "arbiter/base/time.h"
#include "arbiter/controlplane/write_batch.h"
#include "arbiter/store/store.h"

namespace arbiter::controlplane {

// One event about a pod.
struct PodEvent {
  std::string ns, pod, uid;
  std::string type;  // Normal or Warning
  std::string reason, message;
  std::string component = "default-scheduler";  // source.component and reportingComponent
  std::string host;                             // source.host (a kubelet's node), may be empty
};

class EventRecorder {
 public:
  static constexpr size_t kCorrelated = 4096;

  // `store` is read by the TTL sweep; writes go to `batch`.
  EventRecorder(store::Store& store, WriteBatch& batch, const Clock& clock, Duration ttl = 60 * kMinute);

  // Queues the event's creation, or its repeat.
  void Record(const PodEvent& e);
  // Deletes the events older than the TTL, at most once a minute of the clock.
  Status ExpireOld();
  size_t remembered() const { return correlated_.size(); }

 private:
  struct Seen {
    std::string name;
    int64_t revision = 0;  // 0 while its creation is queued
    int64_t count = 1;
    std::string first;  // firstTimestamp
  };
  nlohmann::json Body(const PodEvent& e, const std::string& name, const Seen& seen, const std::string& now) const;
  // The completion of a queued write of the event `key`.
  WriteBatch::Done Settle(const std::string& key);

  store::Store& store_;
  WriteBatch& batch_;
  const Clock& clock_;
  Duration ttl_;
  uint64_t seq_ = 0;
  Timestamp swept_at_ = 0;
  std::map<std::string, Seen> correlated_;  // by what makes two events the same
  std::deque<std::string> order_;           // oldest first
};

}  // namespace arbiter::controlplane
