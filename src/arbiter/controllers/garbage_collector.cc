// The garbage collector.
#include "arbiter/controllers/garbage_collector.h"

#include <algorithm>

#include "arbiter/controllers/object_json.h"

namespace arbiter::controllers {

namespace {

// The resources whose objects own or are owned in the graph. Owners of other resources are
// looked up through the API.
constexpr const char* kGraphResources[] = {
    "pods",      "replicasets", "deployments", "statefulsets", "controllerrevisions", "jobs",      "cronjobs",
    "persistentvolumeclaims", "podgroups", "workloads", "services", "configmaps", "secrets", "serviceaccounts"};

std::vector<std::string> Finalizers(const Json& o) {
  std::vector<std::string> out;
  const Json* f = Find(o, {"metadata", "finalizers"});
  if (f == nullptr || !f->is_array()) return out;
  for (const Json& x : *f) {
    if (x.is_string()) out.push_back(x.get<std::string>());
  }
  return out;
}

// The served resource whose store key is `resource`.
const api::ResourceInfo* InfoOf(const std::string& resource) {
  for (const auto& r : api::Resources()) {
    if (r.StoreKey() == resource) return &r;
  }
  return nullptr;
}

bool HasFinalizer(const Json& o, std::string_view f) {
  const auto all = Finalizers(o);
  return std::find(all.begin(), all.end(), f) != all.end();
}

}  // namespace

std::vector<std::string> GarbageCollector::Watches() const {
  return std::vector<std::string>(std::begin(kGraphResources), std::end(kGraphResources));
}

void GarbageCollector::Reset() {
  by_uid_.clear();
  nodes_.clear();
  dependents_.clear();
  queue_.Clear();
}

void GarbageCollector::Observe(const std::string& resource, const Key& key, const store::Object* o, Timestamp now) {
  const Ref ref{resource, key};
  // Forget what the graph knew of it.
  if (auto it = nodes_.find(ref); it != nodes_.end()) {
    for (const std::string& owner : it->second.owners) {
      auto d = dependents_.find(owner);
      if (d != dependents_.end()) {
        d->second.erase(ref);
        if (d->second.empty()) dependents_.erase(d);
      }
    }
    if (auto u = by_uid_.find(it->second.uid); u != by_uid_.end() && u->second == ref) by_uid_.erase(u);
    nodes_.erase(it);
  }
  if (o == nullptr) {
    // Gone: its dependents may now have no owner left.
    return;
  }
  const std::string uid = Uid(*o->body.tree());
  Node node{resource, key, uid, {}};
  const store::Body::Tree o_pinned = o->body.tree();
  if (const Json* refs = Find(*o_pinned, {"metadata", "ownerReferences"}); refs != nullptr && refs->is_array()) {
    for (const Json& r : *refs) {
      const std::string owner = r.is_object() ? r.value("uid", "") : "";
      if (owner.empty()) continue;
      node.owners.push_back(owner);
      dependents_[owner].insert(ref);
    }
  }
  if (!uid.empty()) by_uid_[uid] = ref;
  if (!node.owners.empty()) queue_.Add(ref, now);
  // An owner being deleted with the garbage collector's finalizer has work to do.
  if (BeingDeleted(*o->body.tree()) && (HasFinalizer(*o->body.tree(), "orphan") || HasFinalizer(*o->body.tree(), "foregroundDeletion"))) {
    queue_.Add(ref, now);
  }
  nodes_.emplace(ref, std::move(node));
}

bool GarbageCollector::OwnerMayOwn(const Ref& owner, const std::string& dependent_ns) {
  return owner.second.first.empty() || owner.second.first == dependent_ns;
}

const store::Object* GarbageCollector::Lookup(Context& ctx, const Ref& ref) const {
  return ctx.informer(ref.first).Find(ref.second);
}

StatusOr<bool> GarbageCollector::OwnerGone(Context& ctx, const Json& owner_ref, const std::string& ns) const {
  const std::string uid = owner_ref.value("uid", "");
  if (auto found = by_uid_.find(uid); found != by_uid_.end()) {
    // A namespaced dependent's owner is in its namespace or cluster-scoped: a uid that names an
    // object of another namespace is an absent owner (upstream's OwnerRefInvalidNamespace), so
    // that no one reaches across namespaces through an owner reference.
    return !OwnerMayOwn(found->second, ns);
  }
  // Not in the graph: ask the API (an owner of a resource the graph does not hold, or one the
  // informers have not seen yet).
  const api::ResourceInfo* info = api::FindKind(owner_ref.value("apiVersion", ""), owner_ref.value("kind", ""));
  if (info == nullptr) return false;  // an owner of a kind Arbiter does not serve: never collected
  auto got = ctx.api().Get(ObjectPath(*info, info->namespaced ? ns : "", owner_ref.value("name", "")));
  if (!got.ok()) {
    if (got.status().code() == StatusCode::kNotFound) return true;
    return got.status();
  }
  return Uid(*got) != uid;
}

Status GarbageCollector::Process(Context& ctx, const Ref& ref) {
  const store::Object* o = Lookup(ctx, ref);
  if (o == nullptr) return Status::Ok();
  const store::Body::Tree obj_tree = o->body.tree();
  const Json& obj = *obj_tree;
  const api::ResourceInfo* info = InfoOf(ref.first);
  if (info == nullptr) return Status::Ok();
  const std::string path = ObjectPath(*info, ref.second.first, ref.second.second);
  const std::string rv = std::to_string(o->revision);
  const std::string uid = Uid(obj);

  // An owner with the garbage collector's finalizers.
  if (BeingDeleted(obj) && HasFinalizer(obj, "orphan")) {
    auto deps = dependents_.find(uid);
    if (deps != dependents_.end()) {
      for (const Ref& dep : std::set<Ref>(deps->second)) {
        if (!OwnerMayOwn(ref, dep.second.first)) continue;  // not its dependent (see OwnerGone)
        const store::Object* d = Lookup(ctx, dep);
        if (d == nullptr) continue;
        Json refs = Json::array();
        const store::Body::Tree d_tree = d->body.tree();
        for (const Json& r : *Find(*d_tree, {"metadata", "ownerReferences"})) {
          if (r.value("uid", "") != uid) refs.push_back(r);
        }
        const api::ResourceInfo* di = InfoOf(dep.first);
        if (di == nullptr) continue;
        auto patched = ctx.api().MergePatch(ObjectPath(*di, dep.second.first, dep.second.second),
                                            {{"metadata", {{"ownerReferences", refs.empty() ? Json(nullptr) : refs},
                                                           {"resourceVersion", std::to_string(d->revision)}}}});
        if (!patched.ok() && patched.status().code() != StatusCode::kNotFound) return patched.status();
      }
    }
    std::vector<std::string> rest = Finalizers(obj);
    std::erase(rest, "orphan");
    auto r = ctx.api().MergePatch(path, {{"metadata", {{"finalizers", rest.empty() ? Json(nullptr) : Json(rest)},
                                                       {"resourceVersion", rv}}}});
    if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
    return Status::Ok();
  }
  if (BeingDeleted(obj) && HasFinalizer(obj, "foregroundDeletion")) {
    bool blocked = false;
    auto deps = dependents_.find(uid);
    if (deps != dependents_.end()) {
      for (const Ref& dep : std::set<Ref>(deps->second)) {
        if (!OwnerMayOwn(ref, dep.second.first)) continue;  // neither blocks nor follows it
        const store::Object* d = Lookup(ctx, dep);
        if (d == nullptr) continue;
        bool blocks = false;
        const store::Body::Tree d_tree = d->body.tree();
        for (const Json& r : *Find(*d_tree, {"metadata", "ownerReferences"})) {
          if (r.value("uid", "") == uid && r.value("blockOwnerDeletion", false)) blocks = true;
        }
        if (blocks) blocked = true;
        if (BeingDeleted(*d->body.tree())) continue;
        // Dependents of a foreground deletion go in the foreground themselves when they own
        // objects in turn, so the whole tree goes before the owner.
        const auto dep_uid = Uid(*d->body.tree());
        const std::string policy = dependents_.contains(dep_uid) ? "Foreground" : "Background";
        const api::ResourceInfo* di = InfoOf(dep.first);
        if (di == nullptr) continue;
        auto deleted = ctx.api().Delete(ObjectPath(*di, dep.second.first, dep.second.second),
                                        {{"propagationPolicy", policy}, {"preconditions", {{"uid", dep_uid}}}});
        if (!deleted.ok() && deleted.status().code() != StatusCode::kNotFound &&
            deleted.status().code() != StatusCode::kConflict) {
          return deleted.status();
        }
      }
    }
    if (blocked) return Status::Ok();  // the dependents' deletions wake it again
    std::vector<std::string> rest = Finalizers(obj);
    std::erase(rest, "foregroundDeletion");
    auto r = ctx.api().MergePatch(path, {{"metadata", {{"finalizers", rest.empty() ? Json(nullptr) : Json(rest)},
                                                       {"resourceVersion", rv}}}});
    if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
    return Status::Ok();
  }

  // A dependent: is any owner still there?
  const Json* refs = Find(obj, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->is_array() || refs->empty()) return Status::Ok();
  std::vector<const Json*> solid, dangling, waiting;
  for (const Json& r : *refs) {
    if (!r.is_object()) continue;
    ARBITER_ASSIGN_OR_RETURN(gone, OwnerGone(ctx, r, ref.second.first));
    if (gone) {
      dangling.push_back(&r);
      continue;
    }
    auto owner = by_uid_.find(r.value("uid", ""));
    const store::Object* owner_obj = owner != by_uid_.end() ? Lookup(ctx, owner->second) : nullptr;
    if (owner_obj != nullptr && BeingDeleted(*owner_obj->body.tree()) && HasFinalizer(*owner_obj->body.tree(), "foregroundDeletion")) {
      waiting.push_back(&r);
    } else {
      solid.push_back(&r);
    }
  }
  if (!solid.empty()) {
    if (dangling.empty() && waiting.empty()) return Status::Ok();
    // Keep the live owners only.
    Json kept = Json::array();
    for (const Json* r : solid) kept.push_back(*r);
    auto patched = ctx.api().MergePatch(path, {{"metadata", {{"ownerReferences", kept}, {"resourceVersion", rv}}}});
    if (!patched.ok() && patched.status().code() != StatusCode::kNotFound && patched.status().code() != StatusCode::kConflict) {
      return patched.status();
    }
    return Status::Ok();
  }
  if (BeingDeleted(obj)) return Status::Ok();
  const std::string policy = !waiting.empty() && dependents_.contains(uid) ? "Foreground" : "Background";
  auto deleted = ctx.api().Delete(path, {{"propagationPolicy", policy}, {"preconditions", {{"uid", uid}}}});
  if (!deleted.ok() && deleted.status().code() != StatusCode::kNotFound && deleted.status().code() != StatusCode::kConflict) {
    return deleted.status();
  }
  return Status::Ok();
}

Status GarbageCollector::Sync(Context& ctx, const Changes& changed) {
  const Timestamp now = ctx.now();
  for (const auto& [resource, keys] : changed) {
    const store::Informer& informer = ctx.informer(resource);
    for (const Key& key : keys) {
      const Ref ref{resource, key};
      // The uid it had: its dependents and the owners it waited on look again.
      std::string old_uid;
      const store::Object* o = informer.Find(key);
      if (auto it = nodes_.find(ref); it != nodes_.end()) {
        old_uid = it->second.uid;
        for (const std::string& owner : it->second.owners) {
          if (auto w = by_uid_.find(owner); w != by_uid_.end()) queue_.Add(w->second, now);
        }
      }
      Observe(resource, key, o, now);
      if (!old_uid.empty()) {
        if (auto d = dependents_.find(old_uid); d != dependents_.end()) {
          for (const Ref& dep : d->second) queue_.Add(dep, now);
        }
      }
    }
  }
  return queue_.ProcessDue(
      now, [&](const Ref& ref) { return Process(ctx, ref); },
      [](const Ref& ref) { return ref.first + " " + ref.second.first + "/" + ref.second.second; });
}

}  // namespace arbiter::controllers
