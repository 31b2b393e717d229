#include "arbiter/controlplane/write_batch.h"

#include <utility>

namespace arbiter::controlplane {

WriteBatch::WriteBatch(store::Store& store, size_t max_ops, bool asynchronous)
    : store_(store), max_ops_(max_ops), asynchronous_(asynchronous), wants_base_(store.WantsUpdateBase()) {
  if (asynchronous_) writer_ = std::thread([this] { WriterLoop(); });
}

WriteBatch::~WriteBatch() {
  (void)Drain();
  if (writer_.joinable()) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    writer_.join();
  }
}

void WriteBatch::WriterLoop() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [this] { return stopping_ || to_apply_.has_value(); });
    if (!to_apply_) return;  // stopping, nothing left
    std::vector<store::WriteOp> ops = std::move(*to_apply_);
    to_apply_.reset();
    lk.unlock();
    const size_t writes = ops.size();
    std::vector<StatusOr<store::ObjectPtr>> results = store_.Apply(std::move(ops));
    applies_.fetch_add(1, std::memory_order_relaxed);
    writes_.fetch_add(writes, std::memory_order_relaxed);
    lk.lock();
    applied_ = std::move(results);
    cv_.notify_all();
  }
}

const store::Object* WriteBatch::Pending(const std::string& resource, const std::string& ns,
                                         const std::string& name) {
  const Key key{resource, ns, name};
  if (auto it = index_.find(key); it != index_.end()) {
    const Queued& q = ops_[it->second];
    return q.op.kind == store::WriteOp::Kind::kDelete ? nullptr : &q.view;
  }
  auto sent = sent_index_.find(key);
  if (sent == sent_index_.end()) return nullptr;
  // Written by the batch in flight: the object as it was stored, once it was.
  AwaitInFlight();
  const StatusOr<store::ObjectPtr>& r = results_[sent->second];
  if (!r.ok() || sent_[sent->second].op.kind == store::WriteOp::Kind::kDelete) return nullptr;
  return r->get();
}

void WriteBatch::Create(const std::string& resource, const std::string& ns, const std::string& name,
                        nlohmann::json body, Done done) {
  store::Object base;
  base.resource = resource;
  base.ns = ns;
  base.name = name;
  Queue(store::WriteOp::Kind::kCreate, base, std::move(body), std::move(done));
}

void WriteBatch::Update(const store::Object& base, nlohmann::json next, Done done, store::WriteOp::Intent intent) {
  Queue(store::WriteOp::Kind::kUpdate, base, std::move(next), std::move(done), intent);
}

void WriteBatch::Delete(const store::Object& base, Done done) {
  Queue(store::WriteOp::Kind::kDelete, base, nullptr, std::move(done));
}

void WriteBatch::Queue(store::WriteOp::Kind kind, const store::Object& base, nlohmann::json body, Done done,
                       store::WriteOp::Intent intent) {
  const Key key{base.resource, base.ns, base.name};
  if (auto it = index_.find(key); it != index_.end() && &ops_[it->second].view == &base) {
    // Made on the queued body: it replaces that write, under the first one's precondition. A
    // create followed by an update is still a create; anything followed by a delete is a delete
    // (of a queued create: nothing is written, and the completions see NotFound).
    Queued& q = ops_[it->second];
    if (q.op.kind == store::WriteOp::Kind::kDelete) {
      // Already being deleted: nothing more is written (the completion sees the deletion).
    } else if (kind == store::WriteOp::Kind::kDelete) {
      q.op.kind = store::WriteOp::Kind::kDelete;
      q.view.body = store::Body();  // the stored body is not the queued one: the store reads it
    } else {
      q.view.body = std::move(body);
      // Two writes in one: no longer just what either said it was.
      q.op.intent = store::WriteOp::Intent::kReplace;
    }
    if (done) q.done.push_back(std::move(done));
    return;
  }
  Queued q;
  q.op.kind = kind;
  q.op.resource = base.resource;
  q.op.ns = base.ns;
  q.op.name = base.name;
  q.op.expected_revision = kind == store::WriteOp::Kind::kCreate ? 0 : base.revision;
  q.op.intent = intent;
  q.view.resource = base.resource;
  q.view.ns = base.ns;
  q.view.name = base.name;
  q.view.revision = base.revision;
  if (kind == store::WriteOp::Kind::kUpdate && wants_base_) q.op.base = *base.body.tree();
  if (kind != store::WriteOp::Kind::kDelete) {
    q.view.body = std::move(body);  // moved to op.body when taken
  } else if (base.revision > 0) {
    q.view.body = base.body;  // the body being deleted, which spares the store reading it
  }
  if (done) q.done.push_back(std::move(done));
  index_[key] = ops_.size();  // the latest write of the object
  ops_.push_back(std::move(q));
}

std::vector<store::WriteOp> WriteBatch::Take(std::vector<Queued>& taken, std::vector<bool>& skipped) {
  taken = std::exchange(ops_, {});
  index_.clear();
  std::vector<store::WriteOp> ops;
  ops.reserve(taken.size());
  skipped.assign(taken.size(), false);
  for (size_t i = 0; i < taken.size(); ++i) {
    // A create that a delete in the same batch took back writes nothing.
    if (taken[i].op.kind == store::WriteOp::Kind::kDelete && taken[i].op.expected_revision == 0 &&
        taken[i].view.revision == 0) {
      skipped[i] = true;
      continue;
    }
    if (taken[i].op.kind == store::WriteOp::Kind::kDelete) {
      // The version being deleted, shared: the store makes the deletion's event from it (from its
      // text, with no tree copied) instead of reading the row.
      taken[i].op.known = std::move(taken[i].view.body);
    } else {
      taken[i].op.body = std::move(taken[i].view.body).Release();
    }
    ops.push_back(std::move(taken[i].op));
  }
  return ops;
}

std::vector<StatusOr<store::ObjectPtr>> WriteBatch::PerWrite(const std::vector<bool>& skipped,
                                                          std::vector<StatusOr<store::ObjectPtr>> applied) {
  std::vector<StatusOr<store::ObjectPtr>> out;
  out.reserve(skipped.size());
  size_t r = 0;
  for (bool skip : skipped) {
    out.push_back(skip ? StatusOr<store::ObjectPtr>(NotFound("created and deleted in one batch"))
                       : std::move(applied[r++]));
  }
  return out;
}

Status WriteBatch::Complete(std::vector<Queued>& taken, const std::vector<StatusOr<store::ObjectPtr>>& results) {
  Status first = Status::Ok();
  for (size_t i = 0; i < taken.size(); ++i) {
    for (const Done& done : taken[i].done) {
      Status st = done(results[i]);
      if (!st.ok() && first.ok()) first = st;
    }
  }
  return first;
}

void WriteBatch::AwaitInFlight() {
  if (!in_flight_ || !results_.empty() || sent_.empty()) return;
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [this] { return applied_.has_value(); });
  std::vector<StatusOr<store::ObjectPtr>> applied = std::move(*applied_);
  applied_.reset();
  lk.unlock();
  results_ = PerWrite(sent_skipped_, std::move(applied));
}

Status WriteBatch::Collect() {
  if (!in_flight_) return Status::Ok();
  AwaitInFlight();
  std::vector<Queued> sent = std::exchange(sent_, {});
  std::vector<StatusOr<store::ObjectPtr>> results = std::exchange(results_, {});
  sent_index_.clear();
  sent_skipped_.clear();
  in_flight_ = false;
  return Complete(sent, results);
}

Status WriteBatch::Flush() {
  if (asynchronous_) {
    Status st = Collect();
    if (ops_.empty()) return st;
    std::vector<store::WriteOp> ops = Take(sent_, sent_skipped_);
    for (size_t i = 0; i < sent_.size(); ++i) {
      sent_index_[{sent_[i].view.resource, sent_[i].view.ns, sent_[i].view.name}] = i;  // op was moved out
    }
    in_flight_ = true;
    if (ops.empty()) {
      results_ = PerWrite(sent_skipped_, {});  // nothing for the store: completed at the next collect
      return st;
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      to_apply_ = std::move(ops);
    }
    cv_.notify_all();
    return st;
  }
  Status first = Status::Ok();
  // Completions may queue more (bounded: an event after a write queues no further write).
  for (int round = 0; round < 8 && !ops_.empty(); ++round) {
    std::vector<Queued> taken;
    std::vector<bool> skipped;
    std::vector<store::WriteOp> ops = Take(taken, skipped);
    const size_t writes = ops.size();
    std::vector<StatusOr<store::ObjectPtr>> results = PerWrite(skipped, store_.Apply(std::move(ops)));
    applies_.fetch_add(1, std::memory_order_relaxed);
    writes_.fetch_add(writes, std::memory_order_relaxed);
    Status st = Complete(taken, results);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

Status WriteBatch::Drain() {
  if (!asynchronous_) return Flush();
  Status first = Collect();
  for (int round = 0; round < 8 && !ops_.empty(); ++round) {
    Status st = Flush();
    if (st.ok()) st = Collect();
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

}  // namespace arbiter::controlplane
