#include "arbiter/controlplane/write_batch.h"

#include <utility>

namespace arbiter::controlplane {

const store::Object* WriteBatch::Pending(const std::string& resource, const std::string& ns,
                                         const std::string& name) const {
  auto it = index_.find({resource, ns, name});
  if (it == index_.end()) return nullptr;
  const Queued& q = ops_[it->second];
  return q.op.kind == store::WriteOp::Kind::kDelete ? nullptr : &q.view;
}

void WriteBatch::Create(const std::string& resource, const std::string& ns, const std::string& name,
                        nlohmann::json body, Done done) {
  store::Object base;
  base.resource = resource;
  base.ns = ns;
  base.name = name;
  Queue(store::WriteOp::Kind::kCreate, base, std::move(body), std::move(done));
}

void WriteBatch::Update(const store::Object& base, nlohmann::json next, Done done) {
  Queue(store::WriteOp::Kind::kUpdate, base, std::move(next), std::move(done));
}

void WriteBatch::Delete(const store::Object& base, Done done) {
  Queue(store::WriteOp::Kind::kDelete, base, nullptr, std::move(done));
}

void WriteBatch::Queue(store::WriteOp::Kind kind, const store::Object& base, nlohmann::json body, Done done) {
  const Key key{base.resource, base.ns, base.name};
  if (auto it = index_.find(key); it != index_.end()) {
    // Made on the queued body: it replaces that write, under the first one's precondition. A
    // create followed by an update is still a create; anything followed by a delete is a delete
    // (of a queued create: nothing is written, and the completions see NotFound).
    Queued& q = ops_[it->second];
    if (q.op.kind == store::WriteOp::Kind::kDelete) {
      // Already being deleted: nothing more is written (the completion sees the deletion).
    } else if (kind == store::WriteOp::Kind::kDelete) {
      q.op.kind = store::WriteOp::Kind::kDelete;
      q.view.body = nullptr;  // the stored body is not the queued one: the store reads it
    } else {
      q.view.body = std::move(body);
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
  q.view.resource = base.resource;
  q.view.ns = base.ns;
  q.view.name = base.name;
  q.view.revision = base.revision;
  if (kind != store::WriteOp::Kind::kDelete) {
    q.view.body = std::move(body);  // moved to op.body at the flush
  } else if (base.revision > 0) {
    q.view.body = base.body;  // the body being deleted, which spares the store reading it
  }
  if (done) q.done.push_back(std::move(done));
  index_.emplace(key, ops_.size());
  ops_.push_back(std::move(q));
}

Status WriteBatch::Flush() {
  Status first = Status::Ok();
  // Completions may queue more (bounded: an event after a write queues no further write).
  for (int round = 0; round < 8 && !ops_.empty(); ++round) {
    std::vector<Queued> taken = std::exchange(ops_, {});
    index_.clear();
    std::vector<store::WriteOp> ops;
    ops.reserve(taken.size());
    std::vector<bool> skipped(taken.size(), false);
    for (size_t i = 0; i < taken.size(); ++i) {
      // A create that a delete in the same batch took back writes nothing.
      if (taken[i].op.kind == store::WriteOp::Kind::kDelete && taken[i].op.expected_revision == 0 &&
          taken[i].view.revision == 0) {
        skipped[i] = true;
        continue;
      }
      taken[i].op.body = std::move(taken[i].view.body);
      ops.push_back(std::move(taken[i].op));
    }
    std::vector<StatusOr<store::Object>> results = store_.Apply(std::move(ops));
    applies_.fetch_add(1, std::memory_order_relaxed);
    writes_.fetch_add(results.size(), std::memory_order_relaxed);
    size_t r = 0;
    for (size_t i = 0; i < taken.size(); ++i) {
      const StatusOr<store::Object> result =
          skipped[i] ? StatusOr<store::Object>(NotFound("created and deleted in one batch")) : std::move(results[r++]);
      for (const Done& done : taken[i].done) {
        Status st = done(result);
        if (!st.ok() && first.ok()) first = st;
      }
    }
  }
  return first;
}

}  // namespace arbiter::controlplane
