// A store that answers reads of some resources from informers kept in memory, as the admission
// plugins of kube-apiserver read namespaces, priority classes and quotas through their listers
// instead of asking etcd on every request. Everything else (writes, watches, reads of the other
// resources) goes to the backing store.
//
// Reads are as fresh as the informer after a sync, which each read does first: with the
// in-process backends that is every write acknowledged so far; with etcd, whose watch streams
// arrive on their own, a write may be a few milliseconds late. Get of a name the cache does not
// hold asks the backing store, so that an object written a moment ago is never reported
// missing (kube-apiserver's namespace lifecycle plugin does the same live lookup on a miss).
// Thread-safe: each cached resource has its own lock.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "arbiter/store/informer.h"
#include "arbiter/store/store.h"

namespace arbiter::store {

class ReadCache final : public Store {
 public:
  ReadCache(Store& backing, const std::set<std::string>& cached_resources);
  // The same, owning its backing store.
  ReadCache(std::unique_ptr<Store> backing, const std::set<std::string>& cached_resources);

  StatusOr<Object> Get(const std::string& resource, const std::string& ns, const std::string& name) override;
  StatusOr<ListResult> List(const std::string& resource, const std::string& ns) override;

  std::vector<StatusOr<ObjectPtr>> Apply(std::vector<WriteOp> ops) override { return backing_.Apply(std::move(ops)); }
  StatusOr<Object> Create(const std::string& resource, const std::string& ns, const std::string& name,
                          Json body) override {
    return backing_.Create(resource, ns, name, std::move(body));
  }
  StatusOr<Object> Update(const std::string& resource, const std::string& ns, const std::string& name, Json body,
                          int64_t expected_revision) override {
    return backing_.Update(resource, ns, name, std::move(body), expected_revision);
  }
  StatusOr<Object> Delete(const std::string& resource, const std::string& ns, const std::string& name,
                          int64_t expected_revision) override {
    return backing_.Delete(resource, ns, name, expected_revision);
  }
  StatusOr<std::unique_ptr<Watch>> WatchFrom(const std::string& resource, const std::string& ns,
                                             int64_t from_revision, WatchOptions options = {}) override {
    return backing_.WatchFrom(resource, ns, from_revision, options);
  }
  StatusOr<int64_t> Revision() override { return backing_.Revision(); }
  Status Compact(int64_t revision) override { return backing_.Compact(revision); }
  bool WatchIsSynchronous() const override { return backing_.WatchIsSynchronous(); }

 private:
  struct Cached {
    std::mutex mu;
    Informer informer;
    Cached(Store& store, const std::string& resource) : informer(store, resource) {}
  };
  std::unique_ptr<Store> owned_;  // before the informers, which watch it
  Store& backing_;
  std::map<std::string, std::unique_ptr<Cached>> cached_;  // fixed after construction
};

}  // namespace arbiter::store
