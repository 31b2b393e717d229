#include "arbiter/store/group_commit.h"

#include <algorithm>
#include <exception>
#include <utility>

namespace arbiter::store {

GroupCommit::GroupCommit(std::unique_ptr<Store> backing, size_t max_group)
    : backing_(std::move(backing)), max_group_(std::max<size_t>(1, max_group)) {}

namespace {

WriteOp Op(WriteOp::Kind kind, const std::string& resource, const std::string& ns, const std::string& name, Json body,
           int64_t expected_revision) {
  WriteOp op;
  op.kind = kind;
  op.resource = resource;
  op.ns = ns;
  op.name = name;
  op.body = std::move(body);
  op.expected_revision = expected_revision;
  return op;
}

// A caller's own copy of its result (the stored object is shared with its watch event), made on
// the caller's thread and outside the lock.
StatusOr<Object> Answer(const StatusOr<ObjectPtr>& r) {
  if (!r.ok()) return r.status();
  return **r;
}

}  // namespace

StatusOr<Object> GroupCommit::Create(const std::string& resource, const std::string& ns, const std::string& name,
                                     Json body) {
  return Submit(Op(WriteOp::Kind::kCreate, resource, ns, name, std::move(body), 0));
}

StatusOr<Object> GroupCommit::Update(const std::string& resource, const std::string& ns, const std::string& name,
                                     Json body, int64_t expected_revision) {
  return Submit(Op(WriteOp::Kind::kUpdate, resource, ns, name, std::move(body), expected_revision));
}

StatusOr<Object> GroupCommit::Delete(const std::string& resource, const std::string& ns, const std::string& name,
                                     int64_t expected_revision) {
  return Submit(Op(WriteOp::Kind::kDelete, resource, ns, name, nullptr, expected_revision));
}

StatusOr<Object> GroupCommit::Submit(WriteOp op) {
  Waiting me{std::move(op), nullptr};
  std::unique_lock<std::mutex> lk(mu_);
  queue_.push_back(&me);
  done_.wait(lk, [&] { return me.result != nullptr || !committing_; });
  if (me.result != nullptr) {  // committed by another caller's group
    lk.unlock();               // the result is this caller's alone now: copy it outside the lock
    return Answer(*me.result);
  }
  // This caller commits the group: the oldest writes queued, its own among them.
  committing_ = true;
  std::vector<Waiting*> group;
  size_t taken = 0;
  bool mine = false;
  while (taken < queue_.size() && (group.size() < max_group_ || !mine)) {
    Waiting* w = queue_[taken++];
    mine = mine || w == &me;
    group.push_back(w);
  }
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(taken));
  lk.unlock();
  std::vector<WriteOp> ops;
  ops.reserve(group.size());
  for (Waiting* w : group) ops.push_back(std::move(w->op));
  // Whatever happens, the group's callers get an answer and the next group can start.
  std::vector<StatusOr<ObjectPtr>> results;
  try {
    results = backing_->Apply(std::move(ops));
  } catch (const std::exception& e) {
    results.assign(group.size(), Internal(std::string("the store failed: ") + e.what()));
  }
  lk.lock();
  for (size_t i = 0; i < group.size(); ++i) {
    group[i]->result = std::make_unique<StatusOr<ObjectPtr>>(
        i < results.size() ? std::move(results[i])
                           : StatusOr<ObjectPtr>(Internal("the store returned too few results")));
  }
  ++groups_;
  grouped_writes_ += group.size();
  committing_ = false;
  lk.unlock();
  done_.notify_all();  // the group's callers, and one of the queued to commit the next group
  return Answer(*me.result);
}

size_t GroupCommit::groups() const {
  std::lock_guard<std::mutex> lk(mu_);
  return groups_;
}

size_t GroupCommit::grouped_writes() const {
  std::lock_guard<std::mutex> lk(mu_);
  return grouped_writes_;
}

size_t GroupCommit::queued() const {
  std::lock_guard<std::mutex> lk(mu_);
  return queue_.size();
}

}  // namespace arbiter::store
