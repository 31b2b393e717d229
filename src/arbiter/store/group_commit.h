// Group commit: the single writes (Create, Update, Delete) of concurrent callers committed
// together in one Store::Apply of the backing store, as databases commit concurrent
// transactions in one log write. With 16 API connections creating pods at once, SQLite takes
// one transaction for each group instead of one per write. (`serve` on etcd goes without it:
// etcd gives each write a transaction and a revision of its own.)
//
// Each write keeps its own terms exactly (Apply's contract: its own precondition, its own
// result, its own watch event), so a caller cannot tell a grouped write from a lone one, except
// that it may share the transaction. No thread of its own: the first caller to find no commit
// in progress commits everything queued so far (its own write included) while the callers that
// arrive meanwhile queue theirs for the next group. A lone writer is committed at once.
//
// Apply (already a batch), reads, watches and the rest go straight to the backing store.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "arbiter/store/store.h"

namespace arbiter::store {

class GroupCommit final : public Store {
 public:
  // At most `max_group` writes per Apply of the backing store.
  explicit GroupCommit(std::unique_ptr<Store> backing, size_t max_group = 256);

  StatusOr<Object> Create(const std::string& resource, const std::string& ns, const std::string& name,
                          Json body) override;
  StatusOr<Object> Update(const std::string& resource, const std::string& ns, const std::string& name, Json body,
                          int64_t expected_revision) override;
  StatusOr<Object> Delete(const std::string& resource, const std::string& ns, const std::string& name,
                          int64_t expected_revision) override;

  std::vector<StatusOr<ObjectPtr>> Apply(std::vector<WriteOp> ops) override { return backing_->Apply(std::move(ops)); }
  StatusOr<Object> Get(const std::string& resource, const std::string& ns, const std::string& name) override {
    return backing_->Get(resource, ns, name);
  }
  StatusOr<ListResult> List(const std::string& resource, const std::string& ns) override {
    return backing_->List(resource, ns);
  }
  StatusOr<std::unique_ptr<Watch>> WatchFrom(const std::string& resource, const std::string& ns,
                                             int64_t from_revision, WatchOptions options = {}) override {
    return backing_->WatchFrom(resource, ns, from_revision, options);
  }
  StatusOr<int64_t> Revision() override { return backing_->Revision(); }
  Status Compact(int64_t revision) override { return backing_->Compact(revision); }
  bool WatchIsSynchronous() const override { return backing_->WatchIsSynchronous(); }

  // How many groups were committed, and how many writes they held; how many wait for the next
  // group now (tests, metrics).
  size_t groups() const;
  size_t grouped_writes() const;
  size_t queued() const;

 private:
  struct Waiting {
    WriteOp op;
    std::unique_ptr<StatusOr<ObjectPtr>> result;  // set by the committer
  };
  StatusOr<Object> Submit(WriteOp op);

  std::unique_ptr<Store> backing_;
  const size_t max_group_;
  mutable std::mutex mu_;
  std::condition_variable done_;
  std::vector<Waiting*> queue_;  // guarded by mu_, oldest first
  bool committing_ = false;      // guarded by mu_
  size_t groups_ = 0, grouped_writes_ = 0;  // guarded by mu_
};

}  // namespace arbiter::store
