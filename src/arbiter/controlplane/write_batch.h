// The control loop's writes that are due together, committed in one Store::Apply (one SQLite
// transaction) instead of one transaction each, as kube-scheduler's API dispatcher takes its
// calls out of the scheduling cycle: a cycle queues its binding, conditions, nominations and
// events and goes on; the batch is flushed at the end of the pass (or when it is full), and each
// write's completion then sees how it went (a binding the store refused sends its pod back to
// the queue).
//
// Every write keeps its own precondition (the revision it was made on) and yields its own watch
// event. A write made on the very object Pending returned for a queued write merges into that
// write: it keeps the first one's precondition, and both completions see the one result. A write
// made on another version (an informer's copy) goes after it under its own precondition, and so
// fails as stale if the first succeeds. Completions may queue further writes (an event after a
// binding).
//
// Two modes:
//   * synchronous (the default): Flush applies what is queued and runs the completions, until
//     nothing is left;
//   * asynchronous: a writer thread applies the batches, so that the next pass's scheduling
//     cycles run while the store commits the last pass's writes. Flush waits for the batch in
//     flight, if any, runs its completions (on the caller's thread, so never inside a cycle),
//     then hands what is queued to the writer and returns; at most one batch is in flight.
//     Pending of an object written by the batch in flight waits for that batch and returns the
//     object as stored (a write made on it goes under its new revision). Drain waits until
//     everything is written and completed.
//
// Not thread-safe: the control loop's thread drives it (the writer thread only calls
// Store::Apply).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "arbiter/base/status.h"
#include "arbiter/store/store.h"

namespace arbiter::controlplane {

class WriteBatch {
 public:
  // A write's completion: its result (the stored object, shared with its watch event, or why
  // not). An error it returns stops the flush and is reported by Flush.
  using Done = std::function<Status(const StatusOr<store::ObjectPtr>&)>;

  explicit WriteBatch(store::Store& store, size_t max_ops = 512, bool asynchronous = false);
  ~WriteBatch();  // drains (completion errors are dropped)
  WriteBatch(const WriteBatch&) = delete;
  WriteBatch& operator=(const WriteBatch&) = delete;

  // The object as the queued write leaves it (revision: the precondition it was made on), or as
  // the batch in flight stored it (after waiting for it), or nullptr when no write to it is
  // pending, or the pending write deletes it or failed. Valid until the next call that queues,
  // flushes or drains.
  const store::Object* Pending(const std::string& resource, const std::string& ns, const std::string& name);

  void Create(const std::string& resource, const std::string& ns, const std::string& name, nlohmann::json body,
              Done done = nullptr);
  // Replaces `base` (conditional on base.revision) with `next`. `intent` says what the change is
  // (a typed write: store::WriteOp::Intent, e.g. kBind when `next` is base as rules::BindPod
  // left it); merged into a queued write of base, it is a kReplace like any other.
  void Update(const store::Object& base, nlohmann::json next, Done done = nullptr,
              store::WriteOp::Intent intent = store::WriteOp::Intent::kReplace);
  // Deletes `base` (conditional on base.revision).
  void Delete(const store::Object& base, Done done = nullptr);

  bool asynchronous() const { return asynchronous_; }
  size_t size() const { return ops_.size(); }
  bool full() const { return ops_.size() >= max_ops_; }
  // Synchronous: applies what is queued, in order, then runs the completions in order; again
  // while they queue more. Asynchronous: completes the batch in flight, then sends what is
  // queued. Returns the first error a completion returned.
  Status Flush();
  // Waits until nothing is queued or in flight (every completion run).
  Status Drain();
  // How many Store::Apply calls and writes have been made (metrics, tests; safe to read from
  // another thread).
  size_t applies() const { return applies_.load(std::memory_order_relaxed); }
  size_t writes() const { return writes_.load(std::memory_order_relaxed); }

 private:
  using Key = std::tuple<std::string, std::string, std::string>;
  struct Queued {
    store::WriteOp op;   // its body is view's, moved in when sent
    store::Object view;  // what Pending returns
    std::vector<Done> done;
  };

  void Queue(store::WriteOp::Kind kind, const store::Object& base, nlohmann::json body, Done done,
             store::WriteOp::Intent intent = store::WriteOp::Intent::kReplace);
  // Takes what is queued: the ops to apply (creates a delete took back are left out) and the
  // queued writes they came from.
  std::vector<store::WriteOp> Take(std::vector<Queued>& taken, std::vector<bool>& skipped);
  // The store's results of a batch, one per queued write (a create a delete took back: NotFound).
  static std::vector<StatusOr<store::ObjectPtr>> PerWrite(const std::vector<bool>& skipped,
                                                          std::vector<StatusOr<store::ObjectPtr>> applied);
  // Runs the completions of `taken`, one result each.
  Status Complete(std::vector<Queued>& taken, const std::vector<StatusOr<store::ObjectPtr>>& results);
  // Asynchronous: waits for the writer to finish the batch in flight (if any).
  void AwaitInFlight();
  // Asynchronous: waits for the batch in flight, if any, and runs its completions.
  Status Collect();
  void WriterLoop();

  store::Store& store_;
  size_t max_ops_;
  const bool asynchronous_;
  const bool wants_base_;  // the store asks for each update's base (Store::WantsUpdateBase)
  std::vector<Queued> ops_;
  std::map<Key, size_t> index_;  // the latest queued write of each object
  std::atomic<size_t> applies_{0};
  std::atomic<size_t> writes_{0};

  // The batch in flight (asynchronous mode): the loop thread's half, and the writer's.
  std::vector<Queued> sent_;
  std::vector<bool> sent_skipped_;
  std::map<Key, size_t> sent_index_;  // the objects of the batch in flight
  bool in_flight_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<std::vector<store::WriteOp>> to_apply_;                 // guarded by mu_
  std::optional<std::vector<StatusOr<store::ObjectPtr>>> applied_;      // guarded by mu_
  bool stopping_ = false;                                               // guarded by mu_
  std::vector<StatusOr<store::ObjectPtr>> results_;  // the finished batch's, until it is completed
  std::thread writer_;
};

}  // namespace arbiter::controlplane
