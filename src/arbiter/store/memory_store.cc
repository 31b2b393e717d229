// The in-memory state store: an ordered map under one mutex, a revision counter and the shared
// watch history. Nothing survives the process.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "arbiter/store/store.h"
#include "arbiter/store/watch_hub.h"

namespace arbiter::store {
namespace {

// (resource, namespace, name): the map's order is the order List reports.
using Key = std::tuple<std::string, std::string, std::string>;

class MemoryStore : public Store {
 public:
  explicit MemoryStore(size_t watch_history) : hub_(watch_history, 0) {}
  bool WatchIsSynchronous() const override { return true; }  // published under the write lock

  StatusOr<Object> Create(const std::string& resource, const std::string& ns, const std::string& name,
                          Json body) override {
    ARBITER_RETURN_IF_ERROR(ValidateKey(resource, ns, name));
    ARBITER_RETURN_IF_ERROR(ValidateBody(resource, ns, name, body));
    std::lock_guard<std::mutex> lk(mu_);
    Key key{resource, ns, name};
    if (objects_.count(key) != 0) return AlreadyExists(DescribeKey(resource, ns, name) + " already exists");
    StampRevision(body, revision_ + 1);
    Object o{resource, ns, name, revision_ + 1, std::move(body)};
    ++revision_;
    auto& stored = objects_.emplace(std::move(key), std::move(o)).first->second;
    hub_.Publish(Event{EventType::kAdded, stored});
    return stored;
  }

  StatusOr<Object> Get(const std::string& resource, const std::string& ns, const std::string& name) override {
    ARBITER_RETURN_IF_ERROR(ValidateKey(resource, ns, name));
    std::lock_guard<std::mutex> lk(mu_);
    auto it = objects_.find(Key{resource, ns, name});
    if (it == objects_.end()) return NotFound(DescribeKey(resource, ns, name) + " not found");
    return it->second;
  }

  StatusOr<Object> Update(const std::string& resource, const std::string& ns, const std::string& name, Json body,
                          int64_t expected_revision) override {
    ARBITER_RETURN_IF_ERROR(ValidateKey(resource, ns, name));
    ARBITER_RETURN_IF_ERROR(ValidateBody(resource, ns, name, body));
    std::lock_guard<std::mutex> lk(mu_);
    auto it = objects_.find(Key{resource, ns, name});
    if (it == objects_.end()) return NotFound(DescribeKey(resource, ns, name) + " not found");
    ARBITER_RETURN_IF_ERROR(CheckExpectedRevision("update", it->second, expected_revision));
    Object& o = it->second;
    o.revision = ++revision_;
    StampRevision(body, o.revision);
    o.body = std::move(body);
    hub_.Publish(Event{EventType::kModified, o});
    return o;
  }

  StatusOr<Object> Delete(const std::string& resource, const std::string& ns, const std::string& name,
                          int64_t expected_revision) override {
    ARBITER_RETURN_IF_ERROR(ValidateKey(resource, ns, name));
    std::lock_guard<std::mutex> lk(mu_);
    auto it = objects_.find(Key{resource, ns, name});
    if (it == objects_.end()) return NotFound(DescribeKey(resource, ns, name) + " not found");
    ARBITER_RETURN_IF_ERROR(CheckExpectedRevision("delete", it->second, expected_revision));
    Object o = std::move(it->second);
    objects_.erase(it);
    o.revision = ++revision_;
    StampRevision(o.body, o.revision);
    hub_.Publish(Event{EventType::kDeleted, o});
    return o;
  }

  StatusOr<ListResult> List(const std::string& resource, const std::string& ns) override {
    if (resource.empty()) return InvalidArgument("a list needs a resource (such as \"pods\")");
    std::lock_guard<std::mutex> lk(mu_);
    ListResult r;
    r.revision = revision_;
    for (auto it = objects_.lower_bound(Key{resource, ns, ""}); it != objects_.end(); ++it) {
      if (std::get<0>(it->first) != resource || (!ns.empty() && std::get<1>(it->first) != ns)) break;
      r.items.push_back(it->second);
    }
    return r;
  }

  StatusOr<std::unique_ptr<Watch>> WatchFrom(const std::string& resource, const std::string& ns,
                                             int64_t from_revision, WatchOptions /*options*/ = {}) override {
    std::lock_guard<std::mutex> lk(mu_);
    return hub_.WatchFrom(resource, ns, from_revision);
  }

  StatusOr<int64_t> Revision() override {
    std::lock_guard<std::mutex> lk(mu_);
    return revision_;
  }

  Status Compact(int64_t revision) override {
    std::lock_guard<std::mutex> lk(mu_);
    ARBITER_RETURN_IF_ERROR(ValidateCompact(revision, revision_));
    hub_.Compact(revision);
    return Status::Ok();
  }

 private:
  std::mutex mu_;
  std::map<Key, Object> objects_;
  int64_t revision_ = 0;
  WatchHub hub_;
};

}  // namespace

std::unique_ptr<Store> NewMemoryStore() { return NewMemoryStore(kDefaultWatchHistory); }

std::unique_ptr<Store> NewMemoryStore(size_t watch_history) {
  return std::make_unique<MemoryStore>(watch_history);
}

}  // namespace arbiter::store
