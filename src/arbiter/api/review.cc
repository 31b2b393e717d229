// The review resources: SelfSubjectReview, SelfSubjectRulesReview and the access reviews.
#include "arbiter/api/server.h"

#include "arbiter/api/authz.h"
#include "arbiter/api/field_validation.h"
#include "arbiter/api/server_internal.h"

namespace arbiter::api {

using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares

Response ApiServer::Review(const Request& r, const Target& t) {
  auto body = ParseBody(r);
  if (!body.ok()) return Error(400, body.status().message());
  Json review = std::move(*body);
  if (!review.is_object()) return Error(400, "the request body must be an object");
  review["apiVersion"] = t.info->ApiVersion();
  review["kind"] = t.info->kind;
  if (!review.contains("metadata") || !review["metadata"].is_object()) review["metadata"] = Json::object();
  review["metadata"]["creationTimestamp"] = nullptr;
  TokenUser user;
  if (r.authenticated) {
    user = {r.user, r.uid, r.groups};
  } else {
    // Without authentication every request may do anything, as an administrator's.
    user = {"system:admin", "", {"system:masters", "system:authenticated"}};
  }
  if (t.info->kind == "SelfSubjectReview") {
    Json groups = Json::array();
    for (const auto& g : user.groups) groups.push_back(g);
    Json info = {{"username", user.name}, {"groups", groups}};
    if (!user.uid.empty()) info["uid"] = user.uid;
    review["status"] = {{"userInfo", info}};
    return JsonResponse(201, review);
  }
  const Json spec = review.value("spec", Json::object());
  if (t.info->kind == "SelfSubjectRulesReview") {
    // The rules that grant the caller something in spec.namespace, as RBAC holds them: a
    // resource rule each (apiGroups, resources, resourceNames, verbs), a non-resource rule each.
    const std::string ns = spec.is_object() ? spec.value("namespace", "") : "";
    std::vector<Json> rules;
    if (!r.authenticated || authorizer_ == nullptr) {
      rules.push_back(Json{{"apiGroups", Json::array({"*"})}, {"resources", Json::array({"*"})}, {"verbs", Json::array({"*"})}});
      rules.push_back(Json{{"nonResourceURLs", Json::array({"*"})}, {"verbs", Json::array({"*"})}});
    } else {
      rules = authorizer_->RulesOfUser(user, ns);
    }
    Json resource_rules = Json::array(), non_resource_rules = Json::array();
    for (const Json& rule : rules) {
      if (!rule.is_object()) continue;
      if (rule.contains("nonResourceURLs")) {
        non_resource_rules.push_back({{"verbs", rule.value("verbs", Json::array())}, {"nonResourceURLs", rule["nonResourceURLs"]}});
        continue;
      }
      Json out = {{"verbs", rule.value("verbs", Json::array())},
                  {"apiGroups", rule.value("apiGroups", Json::array())},
                  {"resources", rule.value("resources", Json::array())}};
      if (rule.contains("resourceNames")) out["resourceNames"] = rule["resourceNames"];
      resource_rules.push_back(std::move(out));
    }
    review["status"] = {{"resourceRules", std::move(resource_rules)}, {"nonResourceRules", std::move(non_resource_rules)},
                        {"incomplete", false}};
    return JsonResponse(201, review);
  }
  if (spec.contains("nonResourceAttributes") && spec["nonResourceAttributes"].is_object()) {
    RequestAttributes a;
    a.resource_request = false;
    a.verb = spec["nonResourceAttributes"].value("verb", "");
    a.path = spec["nonResourceAttributes"].value("path", "");
    review["status"] = {{"allowed", !r.authenticated || authorizer_ == nullptr || authorizer_->Allowed(user, a)}};
    return JsonResponse(201, review);
  }
  const Json attrs = spec.value("resourceAttributes", Json::object());
  if (!attrs.is_object()) return Error(400, "spec.resourceAttributes must be an object");
  RequestAttributes a;
  a.verb = attrs.value("verb", "");
  a.api_group = attrs.value("group", "");
  a.resource = attrs.value("resource", "");
  a.subresource = attrs.value("subresource", "");
  a.ns = attrs.value("namespace", "");
  a.name = attrs.value("name", "");
  const bool allowed = !r.authenticated || authorizer_ == nullptr ? true : authorizer_->Allowed(user, a);
  review["status"] = {{"allowed", allowed}};
  // RBAC denies without a reason, as upstream's authorizer does.
  return JsonResponse(201, review);
}

}  // namespace arbiter::api
