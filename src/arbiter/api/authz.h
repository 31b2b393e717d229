// Who a request comes from and what it may do: Kubernetes RBAC (rbac.authorization.k8s.io/v1
// Roles, ClusterRoles and their bindings, read from the store), shared by the HTTP edge (every
// request), SelfSubjectAccessReview (`kubectl auth can-i`) and the escalation check on RBAC
// writes.
//
// The server starts with upstream's default roles (DefaultRbacObjects): cluster-admin (bound to
// group system:masters), admin, edit and view, system:basic-user and system:discovery (bound to
// system:authenticated). Two bindings of Arbiter's token-file convention are implicit: a member
// of group "namespace:NS" holds the admin ClusterRole in namespace NS, and may read nodes,
// namespaces and priority classes (ClusterRole arbiter:namespace-member).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "arbiter/base/json.h"

#include "arbiter/store/informer.h"
#include "arbiter/store/store.h"

namespace arbiter::api {

// A user of the token file: `token,user,uid,"group1,group2"` per line (kube-apiserver's
// --token-auth-file format).
struct TokenUser {
  std::string name;
  std::string uid;
  std::set<std::string> groups;
};

// What a request does, as an authorizer sees it (kube-apiserver's authorizer.Attributes).
struct RequestAttributes {
  bool resource_request = true;
  std::string verb;         // get, list, watch, create, update, patch, delete, deletecollection
  std::string api_group;    // "" for the core group
  std::string resource;     // "pods"
  std::string subresource;  // "status", "binding", ...
  std::string ns;
  std::string name;
  std::string path;         // the URL path, for non-resource requests
};

// The attributes of an HTTP request.
RequestAttributes AttributesOf(const std::string& method, const std::string& path, bool watch_query);

class Authorizer {
 public:
  explicit Authorizer(store::Store& store);
  // Whether `user` may do `attrs`. Thread-safe.
  bool Allowed(const TokenUser& user, const RequestAttributes& attrs);
  // Every rule that grants `user` something in `ns` ("" for cluster-wide rules only), as
  // SelfSubjectRulesReview lists them. Thread-safe.
  std::vector<nlohmann::json> RulesOfUser(const TokenUser& user, const std::string& ns);
  // Whether `user` already holds every permission of `rules` in `ns` ("" for cluster-wide): no one
  // grants what they do not have (upstream's escalation check).
  bool Covers(const TokenUser& user, const nlohmann::json& rules, const std::string& ns);
  // The rules a Role or ClusterRole named by a binding's roleRef grants (in `ns` for a Role);
  // nullopt when that role does not exist.
  std::optional<nlohmann::json> RulesOf(const nlohmann::json& role_ref, const std::string& ns);

 private:
  bool AllowedLocked(const TokenUser& user, const RequestAttributes& attrs);
  nlohmann::json RulesOfLocked(const nlohmann::json& role_ref, const std::string& ns);
  std::vector<nlohmann::json> RulesFor(const TokenUser& user, const std::string& ns);
  nlohmann::json ClusterRoleRules(const std::string& name);
  nlohmann::json ClusterRoleRules(const std::string& name, std::set<std::string>& visiting);
  void Sync();

  std::mutex mu_;
  store::Informer roles_, cluster_roles_, bindings_, cluster_bindings_;
};

// ClusterRole aggregation (kube-controller-manager's clusterrole-aggregation controller): the rules
// an aggregated ClusterRole `role` gathers, for each of its aggregationRule's clusterRoleSelectors
// in order, from every other ClusterRole whose labels the selector matches (an empty selector
// matches every one), in name order, each rule once. `rules_of` gives a selected role's rules (the
// controller takes them as stored; the authorizer follows their own aggregation at once). Empty
// when `role` has no aggregation rule or a selector does not decode.
nlohmann::json AggregatedRules(const store::Informer& cluster_roles, const nlohmann::json& role,
                               const std::function<nlohmann::json(const store::Object&)>& rules_of);
// Whether a ClusterRole body has an aggregation rule with at least one selector (upstream's
// hasAggregationRule): setting or changing one needs cluster-admin's authority.
bool HasAggregationRule(const nlohmann::json& role);

// The default ClusterRoles and ClusterRoleBindings, as objects to create.
std::vector<nlohmann::json> DefaultRbacObjects();

}  // namespace arbiter::api
