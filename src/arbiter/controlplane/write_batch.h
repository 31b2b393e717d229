// The control loop's writes that are due together, committed in one Store::Apply (one SQLite
// transaction) instead of one transaction each, as kube-scheduler's API dispatcher takes its
// calls out of the scheduling cycle: a cycle queues its binding, conditions, nominations and
// events and goes on; the batch is flushed at the end of the pass (or when it is full), and each
// write's completion then sees how it went (a binding the store refused sends its pod back to
// the queue).
//
// Every write keeps its own precondition (the revision it was made on) and yields its own watch
// event. A second write to an object already queued merges into the first: it is made on the
// queued body (see Pending), keeps the first one's precondition, and both completions see the
// one result. Completions may queue further writes (an event after a binding); Flush applies
// until nothing is left.
//
// Not thread-safe: the control loop's thread drives it.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "arbiter/base/status.h"
#include "arbiter/store/store.h"

namespace arbiter::controlplane {

class WriteBatch {
 public:
  // A write's completion: its result (the stored object, or why not). An error it returns stops
  // the flush and is reported by Flush.
  using Done = std::function<Status(const StatusOr<store::Object>&)>;

  explicit WriteBatch(store::Store& store, size_t max_ops = 512) : store_(store), max_ops_(max_ops) {}

  // The object as the queued write leaves it (revision: the precondition it was made on), or
  // nullptr when no write to it is queued. Valid until the next call that queues or flushes.
  const store::Object* Pending(const std::string& resource, const std::string& ns, const std::string& name) const;

  void Create(const std::string& resource, const std::string& ns, const std::string& name, nlohmann::json body,
              Done done = nullptr);
  // Replaces `base` (conditional on base.revision) with `next`.
  void Update(const store::Object& base, nlohmann::json next, Done done = nullptr);
  // Deletes `base` (conditional on base.revision).
  void Delete(const store::Object& base, Done done = nullptr);

  size_t size() const { return ops_.size(); }
  bool full() const { return ops_.size() >= max_ops_; }
  // Applies what is queued, in order, then runs the completions in order; again while they
  // queue more. Returns the first error a completion returned.
  Status Flush();
  // How many Store::Apply calls and writes have been made (metrics, tests; safe to read from
  // another thread).
  size_t applies() const { return applies_.load(std::memory_order_relaxed); }
  size_t writes() const { return writes_.load(std::memory_order_relaxed); }

 private:
  using Key = std::tuple<std::string, std::string, std::string>;
  struct Queued {
    store::WriteOp op;   // its body is view's, moved in at the flush
    store::Object view;  // what Pending returns
    std::vector<Done> done;
  };
  void Queue(store::WriteOp::Kind kind, const store::Object& base, nlohmann::json body, Done done);

  store::Store& store_;
  size_t max_ops_;
  std::vector<Queued> ops_;
  std::map<Key, size_t> index_;  // queued writes by object
  std::atomic<size_t> applies_{0};
  std::atomic<size_t> writes_{0};
};

}  // namespace arbiter::controlplane
