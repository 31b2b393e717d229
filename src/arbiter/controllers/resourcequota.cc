// The resource quota controller.
#include "arbiter/controllers/resourcequota.h"

#include <set>

#include "arbiter/api/admission.h"
#include "arbiter/controllers/object_json.h"

namespace arbiter::controllers {

Status ResourceQuotaController::Sync(Context& ctx, const Changes& changed) {
  const Timestamp now = ctx.now();
  for (const Key& key : changed.at("resourcequotas")) queue_.Add(key, now);
  std::set<std::string> namespaces;
  for (const Key& key : changed.at("pods")) namespaces.insert(key.first);
  const auto& quotas = ctx.informer("resourcequotas").objects();
  for (const std::string& ns : namespaces) {
    for (auto it = quotas.lower_bound({ns, ""}); it != quotas.end() && it->first.first == ns; ++it) queue_.Add(it->first, now);
  }
  return queue_.ProcessDue(
      now, [&](const Key& key) { return SyncQuota(ctx, key); },
      [](const Key& key) { return "resourcequota " + key.first + "/" + key.second; });
}

Status ResourceQuotaController::SyncQuota(Context& ctx, const Key& key) {
  const store::Object* object = ctx.informer("resourcequotas").Find(key);
  if (object == nullptr) return Status::Ok();
  const store::Body::Tree quota_tree = object->body.tree();
  const Json& quota = *quota_tree;
  std::vector<const Json*> pods;
  std::vector<store::Body::Tree> pod_trees;  // pins what `pods` points into
  const auto& all = ctx.informer("pods").objects();
  for (auto it = all.lower_bound({key.first, ""}); it != all.end() && it->first.first == key.first; ++it) {
    pods.push_back(pod_trees.emplace_back(it->second->body.tree()).get());
  }
  Json status = StatusOf(quota);
  Json next = status;
  const Json* hard = Find(quota, {"spec", "hard"});
  next["hard"] = hard != nullptr ? *hard : Json::object();
  Json used = Json::object();
  for (const auto& [k, amount] : api::QuotaUsage(quota, pods)) used[k] = api::QuotaAmount(k, amount);
  next["used"] = used;
  if (next == status) return Status::Ok();
  Json body = quota;
  body["status"] = next;
  auto r = ctx.api().Update(ObjectPath(Resource("", "v1", "resourcequotas"), key.first, key.second, "status"), body);
  if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
  return Status::Ok();
}

}  // namespace arbiter::controllers
