// The controller SDK: what kube-controller-manager's controllers are, in Arbiter. A controller
// watches some resources through the control loop's informers, keeps a work queue of the objects
// it must reconcile, and reconciles each against the informers' state, writing through the API
// (api_client.h). The ControllerManager (controller_manager.h) runs them, one pass each per
// control-loop pass, only on the replica that holds the Lease.
//
// Contracts:
//   * Sync is called from the control loop's thread only, with the keys of the watched resources
//     that changed since the controller's last pass (every key on the first pass and after a
//     relist). It reconciles what they touch and whatever its work queue holds due now.
//   * Reconciling reads only the informers (never the store directly) and is idempotent: the
//     informers may lag the controller's own writes (etcd delivers watches asynchronously), which
//     expectations (expectations.h) cover where a lag would make a controller act twice.
//   * A key whose reconcile fails goes back into the queue with exponential backoff (5 ms
//     doubling to 1000 s, client-go's default controller rate limiter); the pass goes on.
//   * Nothing depends on hash-map order: queues hand out keys in (namespace, name) order.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/base/time.h"
#include "arbiter/controllers/api_client.h"
#include "arbiter/controlplane/event_recorder.h"
#include "arbiter/store/informer.h"

namespace arbiter::controllers {

using Key = store::Informer::Key;  // (namespace, name)
using Changes = std::map<std::string, std::set<Key>>;  // by resource

using LogSink = std::function<void(const std::string& msg, const std::string& kv)>;

class Context {
 public:
  Context(const Clock& clock, ApiClient& api, std::map<std::string, store::Informer*> informers,
          controlplane::EventRecorder* events, LogSink log)
      : clock_(clock), api_(api), informers_(std::move(informers)), events_(std::move(events)), log_(std::move(log)) {}

  const Clock& clock() const { return clock_; }
  Timestamp now() const { return clock_.Now(); }
  ApiClient& api() { return api_; }
  // The informer of a resource the controller watches (or another controller does).
  const store::Informer& informer(const std::string& resource) const { return *informers_.at(resource); }
  bool has_informer(const std::string& resource) const { return informers_.contains(resource); }
  // Records an event about `object` (its metadata gives namespace, name and uid).
  void Event(const Json& object, std::string_view kind, std::string_view api_version, std::string_view type,
             std::string reason, std::string message, std::string component);
  void Log(const std::string& msg, const std::string& kv) const {
    if (log_) log_(msg, kv);
  }

 private:
  const Clock& clock_;
  ApiClient& api_;
  std::map<std::string, store::Informer*> informers_;
  controlplane::EventRecorder* events_;
  LogSink log_;
};

class Controller {
 public:
  virtual ~Controller() = default;
  // kube-controller-manager's name for it ("replicaset-controller"), also the events' source.
  virtual std::string_view Name() const = 0;
  // The resources whose changes it is given (store keys: "pods", "replicasets", ...).
  virtual std::vector<std::string> Watches() const = 0;
  // One pass (see the contracts above). Returns the pass's first error; the others are retried.
  virtual Status Sync(Context& ctx, const Changes& changed) = 0;
  // Forgets everything kept between passes (leadership lost; the next pass is a first pass).
  virtual void Reset() = 0;
};

// Keys grouped by one value each (pods by the node they are bound to), kept as the keys' objects
// change: a controller that acts on a group's keys when the group changes finds them here rather
// than by walking every object. Groups and their keys iterate in order.
template <typename K>
class KeysByGroup {
 public:
  // Puts `key` in `group`, out of the one it was in; an empty group takes it out of every group.
  void Set(const K& key, const std::string& group) {
    auto was = group_of_.find(key);
    if (was != group_of_.end()) {
      if (was->second == group) return;
      auto in = keys_.find(was->second);
      in->second.erase(key);
      if (in->second.empty()) keys_.erase(in);
      group_of_.erase(was);
    }
    if (group.empty()) return;
    group_of_.emplace(key, group);
    keys_[group].insert(key);
  }
  // The keys of `group` (none: an empty set).
  const std::set<K>& Of(const std::string& group) const {
    static const std::set<K> kNone;
    auto in = keys_.find(group);
    return in == keys_.end() ? kNone : in->second;
  }
  const std::map<std::string, std::set<K>>& groups() const { return keys_; }
  void Clear() {
    group_of_.clear();
    keys_.clear();
  }

 private:
  std::map<K, std::string> group_of_;
  std::map<std::string, std::set<K>> keys_;
};

// A work queue of keys, each due at a time, with client-go's per-item exponential backoff. Keys
// are handed out in key order, never by hash.
template <typename K>
class BasicWorkQueue {
 public:
  static constexpr Duration kBaseDelay = 5 * kMillisecond;
  static constexpr Duration kMaxDelay = 1000 * kSecond;

  // Due now (or keeps an earlier due time).
  void Add(const K& key, Timestamp now) { AddAfter(key, now); }
  // Due at `when`, unless already due earlier.
  void AddAfter(const K& key, Timestamp when) {
    auto it = due_.find(key);
    if (it != due_.end()) {
      if (it->second <= when) return;
      by_time_.erase({it->second, key});
      it->second = when;
    } else {
      due_.emplace(key, when);
    }
    by_time_.insert({when, key});
  }
  // After a failure: due after 5 ms × 2^(failures so far), at most 1000 s.
  void AddRateLimited(const K& key, Timestamp now) {
    const int failures = failures_[key]++;
    Duration delay = kBaseDelay;
    for (int i = 0; i < failures && delay < kMaxDelay; ++i) delay *= 2;
    AddAfter(key, now + std::min(delay, kMaxDelay));
  }
  // A success: the key's failures are forgotten.
  void Forget(const K& key) { failures_.erase(key); }
  // The keys due at `now`, in key order, removed from the queue.
  std::vector<K> TakeDue(Timestamp now) {
    std::vector<K> out;
    while (!by_time_.empty() && by_time_.begin()->first <= now) {
      out.push_back(by_time_.begin()->second);
      due_.erase(by_time_.begin()->second);
      by_time_.erase(by_time_.begin());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // Runs `reconcile` on every key due at `now`, in key order: a success forgets the key's
  // failures, a failure puts it back with backoff. Returns the first failure other than a
  // conflict (a race with another writer, retried quietly), prefixed with `describe(key)`.
  template <typename Reconcile, typename Describe>
  Status ProcessDue(Timestamp now, Reconcile&& reconcile, Describe&& describe) {
    Status first = Status::Ok();
    for (const K& key : TakeDue(now)) {
      Status s = reconcile(key);
      if (s.ok()) {
        Forget(key);
        continue;
      }
      AddRateLimited(key, now);
      if (s.code() != StatusCode::kConflict && first.ok()) first = Status(s.code(), describe(key) + ": " + s.message());
    }
    return first;
  }
  bool empty() const { return due_.empty(); }
  size_t size() const { return due_.size(); }
  void Clear() {
    due_.clear();
    by_time_.clear();
    failures_.clear();
  }

 private:
  std::map<K, Timestamp> due_;
  std::set<std::pair<Timestamp, K>> by_time_;
  std::map<K, int> failures_;
};

using WorkQueue = BasicWorkQueue<Key>;

}  // namespace arbiter::controllers
