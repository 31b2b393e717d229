// A store that passes every call to another: the base of test doubles that change one or two
// calls (a store that loses races, one that goes down) and forward the rest unchanged.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "arbiter/store/store.h"

namespace arbiter::test_support {

class ForwardingStore : public store::Store {
 public:
  explicit ForwardingStore(store::Store& inner) : inner_(inner) {}
  StatusOr<store::Object> Create(const std::string& r, const std::string& ns, const std::string& n,
                                 nlohmann::json b) override {
    return inner_.Create(r, ns, n, std::move(b));
  }
  StatusOr<store::Object> Get(const std::string& r, const std::string& ns, const std::string& n) override {
    return inner_.Get(r, ns, n);
  }
  StatusOr<store::Object> Update(const std::string& r, const std::string& ns, const std::string& n, nlohmann::json b,
                                 int64_t rev) override {
    return inner_.Update(r, ns, n, std::move(b), rev);
  }
  StatusOr<store::Object> Delete(const std::string& r, const std::string& ns, const std::string& n, int64_t rev) override {
    return inner_.Delete(r, ns, n, rev);
  }
  StatusOr<store::ListResult> List(const std::string& r, const std::string& ns) override { return inner_.List(r, ns); }
  StatusOr<std::unique_ptr<store::Watch>> WatchFrom(const std::string& r, const std::string& ns, int64_t from,
                                                    store::WatchOptions o) override {
    return inner_.WatchFrom(r, ns, from, o);
  }
  StatusOr<int64_t> Revision() override { return inner_.Revision(); }
  Status Compact(int64_t rev) override { return inner_.Compact(rev); }
  bool WatchIsSynchronous() const override { return inner_.WatchIsSynchronous(); }

 protected:
  store::Store& inner_;
};

namespace internal {
// Holds the store a ForwardingMemoryStore forwards to (a base, so that it is made first).
struct OwnedStore {
  std::unique_ptr<store::Store> owned;
};
}  // namespace internal

// A memory store of its own behind a ForwardingStore that forwards batches (Apply) to it whole as
// well: the base of doubles that count, hold back or fail batches or watches.
class ForwardingMemoryStore : private internal::OwnedStore, public ForwardingStore {
 public:
  ForwardingMemoryStore() : internal::OwnedStore{store::NewMemoryStore()}, ForwardingStore(*owned) {}
  std::vector<StatusOr<store::ObjectPtr>> Apply(std::vector<store::WriteOp> ops) override {
    return inner_.Apply(std::move(ops));
  }
  store::Store& inner() { return inner_; }
};

}  // namespace arbiter::test_support
