// Expectations, pods from templates, the scale-down order and slow-start batches.
#include "arbiter/controllers/pod_control.h"

#include <algorithm>
#include <cmath>

#include "arbiter/controllers/object_json.h"

namespace arbiter::controllers {

void Expectations::Expect(const Key& key, int64_t adds, const std::set<Key>& deletes, Timestamp now) {
  Entry& e = by_key_[key];
  e.adds = adds;
  e.deletes = deletes;
  e.at = now;
}

void Expectations::CreationObserved(const Key& key) {
  auto it = by_key_.find(key);
  if (it != by_key_.end() && it->second.adds > 0) --it->second.adds;
}

void Expectations::DeletionObserved(const Key& key, const Key& pod) {
  auto it = by_key_.find(key);
  if (it != by_key_.end()) it->second.deletes.erase(pod);
}

bool Expectations::Satisfied(const Key& key, Timestamp now) const {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return true;
  const Entry& e = it->second;
  return (e.adds <= 0 && e.deletes.empty()) || now - e.at > kTimeout;
}

Status ClaimObjects(ApiClient& api, const api::ResourceInfo& info, const store::Informer& informer,
                    const std::string& ns, const Json& owner, std::string_view owner_api_version,
                    std::string_view owner_kind, const std::optional<model::LabelSelector>& selector,
                    const std::function<bool(const Json&)>& consider, const std::function<void(const Json&)>& own) {
  const std::string uid = Uid(owner);
  const bool deleting = BeingDeleted(owner);
  Status first = Status::Ok();
  auto patch_refs = [&](const store::Object& o, Json refs) -> StatusOr<Json> {
    return api.MergePatch(ObjectPath(info, ns, o.name),
                          {{"metadata", {{"ownerReferences", refs.empty() ? Json(nullptr) : std::move(refs)},
                                         {"resourceVersion", std::to_string(o.revision)}}}});
  };
  const auto& objects = informer.objects();
  for (auto it = objects.lower_bound({ns, ""}); it != objects.end() && it->first.first == ns; ++it) {
    const store::Object& o = *it->second;
    if (!consider(*o.body.tree())) continue;
    const store::Body::Tree o_pinned = o.body.tree();
    const Json* ref = ControllerRef(*o_pinned);
    const bool matches = selector && selector->Matches(LabelsOf(*o.body.tree()));
    if (ref != nullptr) {
      if (ref->value("uid", "") != uid) continue;
      if (matches) {
        own(*o.body.tree());
        continue;
      }
      if (deleting) continue;
      Json refs = Json::array();
      const store::Body::Tree o_tree = o.body.tree();
      for (const Json& r : *Find(*o_tree, {"metadata", "ownerReferences"})) {
        if (r.value("uid", "") != uid) refs.push_back(r);
      }
      auto released = patch_refs(o, std::move(refs));
      if (!released.ok() && released.status().code() != StatusCode::kNotFound && first.ok()) first = released.status();
      continue;
    }
    if (deleting || !matches || BeingDeleted(*o.body.tree())) continue;
    Json refs = Json::array();
    if (const Json* existing = Find(*o_pinned, {"metadata", "ownerReferences"}); existing != nullptr && existing->is_array()) {
      refs = *existing;
    }
    refs.push_back(NewControllerRef(owner, owner_api_version, owner_kind));
    auto adopted = patch_refs(o, std::move(refs));
    if (adopted.ok()) {
      own(*adopted);
    } else if (first.ok()) {
      first = adopted.status();
    }
  }
  return first;
}

std::vector<Key> FollowOwnedPods(const std::set<Key>& changed, const store::Informer& pods, std::string_view owner_kind,
                                 std::map<Key, Key>& owner_of, Expectations& expectations, WorkQueue& queue,
                                 Timestamp now) {
  std::vector<Key> orphans;
  for (const Key& pod_key : changed) {
    const store::Object* o = pods.Find(pod_key);
    auto prev = owner_of.find(pod_key);
    if (o == nullptr) {
      if (prev != owner_of.end()) {
        expectations.DeletionObserved(prev->second, pod_key);
        queue.Add(prev->second, now);
        owner_of.erase(prev);
      }
      continue;
    }
    const store::Body::Tree o_pinned = o->body.tree();
    const Json* ref = ControllerRef(*o_pinned);
    if (ref != nullptr && ref->value("kind", "") == owner_kind) {
      const Key owner{pod_key.first, ref->value("name", "")};
      if (prev == owner_of.end()) {
        expectations.CreationObserved(owner);
      } else if (prev->second != owner) {
        queue.Add(prev->second, now);
      }
      owner_of[pod_key] = owner;
      if (BeingDeleted(*o->body.tree())) expectations.DeletionObserved(owner, pod_key);
      queue.Add(owner, now);
      continue;
    }
    if (prev != owner_of.end()) {  // released, or taken by another kind of controller
      queue.Add(prev->second, now);
      owner_of.erase(prev);
    }
    if (ref == nullptr && PodActive(*o->body.tree())) orphans.push_back(pod_key);
  }
  return orphans;
}


namespace {

int PhaseOrdinal(const Json& pod) {
  const std::string phase = StringAt(pod, {"status", "phase"});
  if (phase == "Unknown") return 1;
  if (phase == "Running") return 2;
  return 0;  // Pending, and phases the order does not name
}

int64_t DeletionCost(const Json& pod) {
  const std::string v = StringAt(pod, {"metadata", "annotations", "controller.kubernetes.io/pod-deletion-cost"});
  if (v.empty()) return 0;
  char* end = nullptr;
  const long long cost = std::strtoll(v.c_str(), &end, 10);
  // An invalid cost counts as 0, as upstream's GetDeletionCostFromPodAnnotations error path.
  if (end == nullptr || *end != '\0' || cost < INT32_MIN || cost > INT32_MAX) return 0;
  return cost;
}

std::optional<Timestamp> ReadySince(const Json& pod) {
  const Json* status = Find(pod, {"status"});
  const Json* c = status != nullptr ? GetCondition(*status, "Ready") : nullptr;
  return c != nullptr ? TimeAt(*c, {"lastTransitionTime"}) : std::nullopt;
}

int64_t MaxRestarts(const Json& pod) {
  int64_t most = 0;
  if (const Json* cs = Find(pod, {"status", "containerStatuses"}); cs != nullptr && cs->is_array()) {
    for (const Json& c : *cs) most = std::max(most, c.is_object() ? c.value("restartCount", int64_t{0}) : 0);
  }
  return most;
}

// floor(log2(age in nanoseconds)), -1 for no age: upstream's logarithmicRankDiff buckets.
int64_t AgeBucket(Timestamp t, Timestamp now) {
  const double ns = static_cast<double>(now - t) * (1e9 / static_cast<double>(kSecond));
  return ns > 0 ? static_cast<int64_t>(std::log2(ns)) : -1;
}

}  // namespace

void SortPodsToDelete(std::vector<const Json*>& pods, const std::map<std::string, int64_t>& pods_per_node,
                      Timestamp now) {
  struct Keyed {
    const Json* pod;
    std::string node, uid;
    int phase;
    bool ready;
    int64_t cost, rank, restarts;
    std::optional<Timestamp> ready_since, created;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(pods.size());
  for (const Json* p : pods) {
    Keyed k{p, StringAt(*p, {"spec", "nodeName"}), Uid(*p), PhaseOrdinal(*p), PodReady(*p), DeletionCost(*p), 0,
            MaxRestarts(*p), ReadySince(*p), TimeAt(*p, {"metadata", "creationTimestamp"})};
    if (!k.node.empty()) {
      auto it = pods_per_node.find(k.node);
      k.rank = it != pods_per_node.end() ? it->second : 0;
    }
    keyed.push_back(std::move(k));
  }
  // afterOrZero: a missing time first, else the later one first.
  auto after_or_zero = [](const std::optional<Timestamp>& a, const std::optional<Timestamp>& b) {
    if (!a || !b) return !a;
    return *a > *b;
  };
  // Times compared on the logarithmic scale; equal buckets fall to the uid.
  auto by_age = [&](const std::optional<Timestamp>& a, const std::optional<Timestamp>& b, const Keyed& x,
                    const Keyed& y) -> std::optional<bool> {
    if (a == b) return std::nullopt;
    if (!a || !b) return after_or_zero(a, b);
    const int64_t diff = AgeBucket(*a, now) - AgeBucket(*b, now);
    if (diff == 0) return x.uid < y.uid;
    return diff < 0;
  };
  std::stable_sort(keyed.begin(), keyed.end(), [&](const Keyed& x, const Keyed& y) {
    if (x.node != y.node && (x.node.empty() || y.node.empty())) return x.node.empty();  // 1. unassigned
    if (x.phase != y.phase) return x.phase < y.phase;                                    // 2. phase
    if (x.ready != y.ready) return !x.ready;                                             // 3. not ready
    if (x.cost != y.cost) return x.cost < y.cost;                                        // 4. deletion cost
    if (x.rank != y.rank) return x.rank > y.rank;                                        // 5. doubled up
    if (x.ready && y.ready) {                                                            // 6. ready for less time
      if (auto r = by_age(x.ready_since, y.ready_since, x, y)) return *r;
    }
    if (x.restarts != y.restarts) return x.restarts > y.restarts;                        // 7. restarts
    if (auto r = by_age(x.created, y.created, x, y)) return *r;                           // 8. newer
    return x.uid < y.uid;  // a total order (upstream leaves the rest to its sort)
  });
  for (size_t i = 0; i < keyed.size(); ++i) pods[i] = keyed[i].pod;
}

std::pair<int64_t, Status> SlowStartBatch(int64_t count, const std::function<Status(int64_t)>& create) {
  int64_t done = 0;
  int64_t batch = 1;
  while (done < count) {
    const int64_t n = std::min(batch, count - done);
    Status first = Status::Ok();
    int64_t ok = 0;
    for (int64_t i = 0; i < n; ++i) {
      Status s = create(done + i);
      if (s.ok()) {
        ++ok;
      } else if (first.ok()) {
        first = s;
      }
    }
    done += n;
    if (!first.ok()) return {done - (n - ok), first};
    batch *= 2;
  }
  return {done, Status::Ok()};
}

}  // namespace arbiter::controllers
