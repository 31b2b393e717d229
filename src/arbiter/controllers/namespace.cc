// The namespace controller.
#include "arbiter/controllers/namespace.h"

#include "arbiter/controllers/object_json.h"

namespace arbiter::controllers {

Status NamespaceController::Sync(Context& ctx, const Changes& changed) {
  const Timestamp now = ctx.now();
  for (const Key& key : changed.at("namespaces")) {
    const store::Object* o = ctx.informer("namespaces").Find(key);
    if (o != nullptr && BeingDeleted(*o->body.tree())) queue_.Add(key, now);
  }
  return queue_.ProcessDue(
      now, [&](const Key& key) { return Finalize(ctx, key); }, [](const Key& key) { return "namespace " + key.second; });
}

Status NamespaceController::Finalize(Context& ctx, const Key& key) {
  const store::Object* o = ctx.informer("namespaces").Find(key);
  if (o == nullptr || !BeingDeleted(*o->body.tree())) return Status::Ok();
  const std::string ns = key.second;
  int64_t remaining = 0;
  for (const api::ResourceInfo& info : api::Resources()) {
    if (!info.namespaced || info.review || info.AnotherVersion() || info.StoreKey() == "podmetrics.metrics.k8s.io") {
      continue;
    }
    ARBITER_ASSIGN_OR_RETURN(list, ctx.api().Get(CollectionPath(info, ns)));
    const Json* items = Find(list, {"items"});
    if (items == nullptr || !items->is_array()) continue;
    for (const Json& item : *items) {
      ++remaining;
      if (BeingDeleted(item)) continue;
      auto r = ctx.api().Delete(ObjectPath(info, ns, NameOf(item)),
                                {{"propagationPolicy", "Background"}, {"preconditions", {{"uid", Uid(item)}}}});
      if (!r.ok() && r.status().code() != StatusCode::kNotFound && r.status().code() != StatusCode::kConflict) {
        return r.status();
      }
    }
  }
  if (remaining > 0) {
    queue_.AddAfter(key, ctx.now() + kRecheck);
    return Status::Ok();
  }
  Json body = o->body.Copy();
  Json finalizers = Json::array();
  if (const Json* f = Find(body, {"spec", "finalizers"}); f != nullptr && f->is_array()) {
    for (const Json& x : *f) {
      if (x != "kubernetes") finalizers.push_back(x);
    }
  }
  body["spec"]["finalizers"] = finalizers;
  auto r = ctx.api().Update(ObjectPath(Resource("", "v1", "namespaces"), "", ns, "finalize"), body);
  if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
  return Status::Ok();
}

}  // namespace arbiter::controllers
