// The clusterrole-aggregation controller.
#include "arbiter/controllers/clusterrole_aggregation.h"

#include "arbiter/api/authz.h"
#include "arbiter/controllers/object_json.h"

namespace arbiter::controllers {

Status ClusterRoleAggregationController::Sync(Context& ctx, const Changes& changed) {
  const Timestamp now = ctx.now();
  const store::Informer& roles = ctx.informer("clusterroles");
  // Upstream's handler enqueues every aggregated role on any ClusterRole event: a label change on
  // one role can move it into or out of any selector.
  if (!changed.at("clusterroles").empty()) {
    for (const auto& [key, role] : roles.objects()) {
      if (api::HasAggregationRule(*role->body.tree())) queue_.Add(key, now);
    }
  }
  return queue_.ProcessDue(
      now,
      [&](const Key& key) -> Status {
        const store::Object* role = roles.Find(key);
        if (role == nullptr || !api::HasAggregationRule(*role->body.tree())) return Status::Ok();
        Json rules = api::AggregatedRules(roles, *role->body.tree(), [](const store::Object& other) {
          const store::Body::Tree other_pinned = other.body.tree();
          const Json* r = Find(*other_pinned, {"rules"});
          return r != nullptr && r->is_array() ? *r : Json::array();
        });
        const store::Body::Tree role_pinned = role->body.tree();
        const Json* stored = Find(*role_pinned, {"rules"});
        const Json current = stored != nullptr && stored->is_array() ? *stored : Json::array();
        if (rules == current) return Status::Ok();
        Json body = role->body.Copy();  // carries its resourceVersion: a conditional replace
        body["rules"] = std::move(rules);
        return ctx.api()
            .Update(ObjectPath(Resource("rbac.authorization.k8s.io", "v1", "clusterroles"), "", key.second), body)
            .status();
      },
      [](const Key& key) { return "clusterrole " + key.second; });
}

}  // namespace arbiter::controllers
