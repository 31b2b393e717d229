#include "arbiter/api/authz.h"

#include "arbiter/api/resources.h"
#include "arbiter/manifest/loader.h"

#include <algorithm>

namespace arbiter::api {

using Json = nlohmann::json;

namespace {

bool Has(const Json& list, const std::string& v) {
  if (!list.is_array()) return false;
  for (const Json& e : list) {
    if (e.is_string() && (e.get_ref<const std::string&>() == "*" || e.get_ref<const std::string&>() == v)) return true;
  }
  return false;
}

// Whether one PolicyRule allows the request (RBAC's RuleAllows).
bool RuleAllows(const Json& rule, const RequestAttributes& a) {
  if (!rule.is_object() || !Has(rule.value("verbs", Json::array()), a.verb)) return false;
  if (!a.resource_request) {
    for (const Json& u : rule.value("nonResourceURLs", Json::array())) {
      if (!u.is_string()) continue;
      const std::string& url = u.get_ref<const std::string&>();
      if (url == "*" || url == a.path) return true;
      if (url.ends_with("*") && a.path.starts_with(url.substr(0, url.size() - 1))) return true;
    }
    return false;
  }
  if (!Has(rule.value("apiGroups", Json::array()), a.api_group)) return false;
  const std::string full = a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
  bool resource = false;
  for (const Json& r : rule.value("resources", Json::array())) {
    if (!r.is_string()) continue;
    const std::string& v = r.get_ref<const std::string&>();
    resource = resource || v == "*" || v == full ||
               (!a.subresource.empty() && (v == "*/" + a.subresource || v == a.resource + "/*"));
  }
  if (!resource) return false;
  const Json names = rule.value("resourceNames", Json::array());
  if (!names.is_array() || names.empty()) return true;
  return !a.name.empty() && Has(names, a.name);
}

bool SubjectMatches(const Json& s, const TokenUser& user) {
  if (!s.is_object()) return false;
  const std::string kind = s.value("kind", ""), name = s.value("name", "");
  if (kind == "User") return name == user.name;
  if (kind == "Group") return user.groups.contains(name);
  if (kind == "ServiceAccount") return user.name == "system:serviceaccount:" + s.value("namespace", "") + ":" + name;
  return false;
}

bool BindsUser(const Json& binding, const TokenUser& user) {
  for (const Json& s : binding.value("subjects", Json::array())) {
    if (SubjectMatches(s, user)) return true;
  }
  return false;
}

Json Rule(std::vector<std::string> groups, std::vector<std::string> resources, std::vector<std::string> verbs) {
  return {{"apiGroups", groups}, {"resources", resources}, {"verbs", verbs}};
}

const std::vector<std::string> kRead = {"get", "list", "watch"};
const std::vector<std::string> kWrite = {"create", "delete", "deletecollection", "patch", "update"};

std::vector<std::string> All(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Upstream's bootstrap policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy): admin, edit and
// view hold no rules of their own; each aggregates the ClusterRoles labelled
// rbac.authorization.k8s.io/aggregate-to-<role>, view is labelled into edit and edit into admin,
// and the system:aggregate-to-* roles hold the rules. Arbiter adds its own kinds the same way
// (arbiter:aggregate-to-*), as any extension does.
const std::vector<std::string> kReadWrite = All(kRead, kWrite);

Json AggregateToViewRules() {
  return Json::array(
      {Rule({""}, {"configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods",
                   "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services", "services/status"},
            kRead),
       Rule({""}, {"bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
                   "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"},
            kRead),
       Rule({""}, {"namespaces"}, kRead),
       Rule({"discovery.k8s.io"}, {"endpointslices"}, kRead),
       Rule({"apps"}, {"controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
                       "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets",
                       "statefulsets/scale", "statefulsets/status"},
            kRead),
       Rule({"autoscaling"}, {"horizontalpodautoscalers", "horizontalpodautoscalers/status"}, kRead),
       Rule({"batch"}, {"cronjobs", "cronjobs/status", "jobs", "jobs/status"}, kRead),
       Rule({"extensions"}, {"daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
                             "ingresses", "ingresses/status", "networkpolicies", "replicasets", "replicasets/scale",
                             "replicasets/status", "replicationcontrollers/scale"},
            kRead),
       Rule({"policy"}, {"poddisruptionbudgets", "poddisruptionbudgets/status"}, kRead),
       Rule({"networking.k8s.io"}, {"ingresses", "ingresses/status", "networkpolicies"}, kRead)});
}

Json AggregateToEditRules() {
  return Json::array(
      {Rule({""}, {"pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"}, kRead),
       Rule({""}, {"serviceaccounts"}, {"impersonate"}),
       Rule({""}, {"pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"}, kWrite),
       Rule({""}, {"pods/eviction"}, {"create"}),
       Rule({""}, {"configmaps", "events", "persistentvolumeclaims", "replicationcontrollers", "replicationcontrollers/scale",
                   "secrets", "serviceaccounts", "services", "services/proxy"},
            kWrite),
       Rule({""}, {"serviceaccounts/token"}, {"create"}),
       Rule({"apps"}, {"daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets",
                       "replicasets/scale", "statefulsets", "statefulsets/scale"},
            kWrite),
       Rule({"autoscaling"}, {"horizontalpodautoscalers"}, kWrite),
       Rule({"batch"}, {"cronjobs", "jobs"}, kWrite),
       Rule({"extensions"}, {"daemonsets", "deployments", "deployments/rollback", "deployments/scale", "ingresses",
                             "networkpolicies", "replicasets", "replicasets/scale", "replicationcontrollers/scale"},
            kWrite),
       Rule({"policy"}, {"poddisruptionbudgets"}, kWrite),
       Rule({"networking.k8s.io"}, {"ingresses", "networkpolicies"}, kWrite),
       Rule({"coordination.k8s.io"}, {"leases"}, kReadWrite)});
}

Json AggregateToAdminRules() {
  return Json::array({Rule({"authorization.k8s.io"}, {"localsubjectaccessreviews"}, {"create"}),
                      Rule({"rbac.authorization.k8s.io"}, {"rolebindings", "roles"}, kReadWrite)});
}

// Arbiter's kinds: the scheduling groups, events.k8s.io events and pod metrics.
Json ArbiterAggregateToViewRules() {
  return Json::array({Rule({"scheduling.k8s.io"}, {"workloads", "podgroups", "compositepodgroups", "workloads/status",
                                                   "podgroups/status", "compositepodgroups/status"},
                           kRead),
                      Rule({"events.k8s.io"}, {"events"}, kRead),
                      Rule({"metrics.k8s.io"}, {"pods"}, kRead)});
}

Json ArbiterAggregateToEditRules() {
  return Json::array({Rule({"scheduling.k8s.io"}, {"workloads", "podgroups", "compositepodgroups"}, kWrite),
                      Rule({"events.k8s.io"}, {"events"}, kWrite)});
}

}  // namespace

RequestAttributes AttributesOf(const std::string& method, const std::string& path, bool watch_query) {
  RequestAttributes a;
  const std::vector<std::string> s = PathSegments(path);
  size_t at = 0;
  if (s.size() >= 2 && s[0] == "api") {
    at = 2;
  } else if (s.size() >= 3 && s[0] == "apis") {
    a.api_group = s[1];
    at = 3;
  } else {
    a.resource_request = false;
  }
  bool watch = watch_query;
  if (a.resource_request && at < s.size() && s[at] == "watch") {
    watch = true;
    ++at;
  }
  if (a.resource_request) {
    std::vector<std::string> rest(s.begin() + static_cast<long>(std::min(at, s.size())), s.end());
    if (rest.empty()) {
      a.resource_request = false;  // discovery: /api/v1, /apis/G/V
    } else if (rest[0] == "namespaces" && rest.size() >= 3) {
      a.ns = rest[1];
      a.resource = rest[2];
      if (rest.size() > 3) a.name = rest[3];
      if (rest.size() > 4) a.subresource = rest[4];
    } else {
      a.resource = rest[0];
      if (rest.size() > 1) a.name = rest[1];
      if (rest.size() > 2) a.subresource = rest[2];
      if (a.resource == "namespaces" && !a.name.empty()) a.ns = a.name;
    }
  }
  if (!a.resource_request) {
    a.path = path;
    a.verb = method == "GET" || method == "HEAD" ? "get" : method == "POST" ? "post" : method == "PUT" ? "put"
             : method == "DELETE" ? "delete" : method == "PATCH" ? "patch" : "unknown";
    return a;
  }
  if (method == "GET" || method == "HEAD") a.verb = watch ? "watch" : a.name.empty() ? "list" : "get";
  else if (method == "POST") a.verb = "create";
  else if (method == "PUT") a.verb = "update";
  else if (method == "PATCH") a.verb = "patch";
  else if (method == "DELETE") a.verb = a.name.empty() ? "deletecollection" : "delete";
  else a.verb = "unknown";
  return a;
}

bool HasAggregationRule(const Json& role) {
  if (!role.is_object()) return false;
  const auto agg = role.find("aggregationRule");
  if (agg == role.end() || !agg->is_object()) return false;
  const auto selectors = agg->find("clusterRoleSelectors");
  return selectors != agg->end() && selectors->is_array() && !selectors->empty();
}

Json AggregatedRules(const store::Informer& cluster_roles, const Json& role,
                     const std::function<Json(const store::Object&)>& rules_of) {
  Json out = Json::array();
  if (!HasAggregationRule(role)) return out;
  const auto meta = role.find("metadata");
  const std::string self = meta != role.end() && meta->is_object() ? meta->value("name", "") : "";
  for (const Json& sel : role["aggregationRule"]["clusterRoleSelectors"]) {
    auto selector = manifest::DecodeLabelSelectorJson(sel, "aggregationRule.clusterRoleSelectors");
    if (!selector.ok() || !selector->has_value()) continue;  // validation refuses these at write time
    // The informer's map is in key order, (namespace "", name): the controller's byName sort.
    for (const auto& [key, other] : cluster_roles.objects()) {
      if (key.second == self) continue;
      std::vector<std::pair<std::string, std::string>> entries;
      const store::Body::Tree other_tree = other->body.tree();
      const auto other_meta = other_tree->find("metadata");
      if (other_meta != other_tree->end() && other_meta->is_object()) {
        const auto labels = other_meta->find("labels");
        if (labels != other_meta->end() && labels->is_object()) {
          for (const auto& [k, v] : labels->items()) {
            if (v.is_string()) entries.emplace_back(k, v.get<std::string>());
          }
        }
      }
      if (!(*selector)->Matches(model::LabelMap(std::move(entries)))) continue;
      const Json rules = rules_of(*other);
      if (!rules.is_array()) continue;
      for (const Json& r : rules) {
        if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);  // ruleExists
      }
    }
  }
  return out;
}

Authorizer::Authorizer(store::Store& store)
    : roles_(store, "roles"), cluster_roles_(store, "clusterroles"), bindings_(store, "rolebindings"),
      cluster_bindings_(store, "clusterrolebindings") {}

void Authorizer::Sync() {
  // A store error leaves the last copy in place; the next request tries again.
  for (store::Informer* i : {&roles_, &cluster_roles_, &bindings_, &cluster_bindings_}) (void)i->Sync();
}

Json Authorizer::ClusterRoleRules(const std::string& name) {
  std::set<std::string> visiting;
  return ClusterRoleRules(name, visiting);
}

Json Authorizer::ClusterRoleRules(const std::string& name, std::set<std::string>& visiting) {
  const store::Object* found = cluster_roles_.Find({"", name});
  if (found == nullptr || !visiting.insert(name).second) return Json::array();  // absent, or a cycle
  const store::Body::Tree role_tree = found->body.tree();
  const Json& role = *role_tree;
  Json rules = role.value("rules", Json::array());
  if (!rules.is_array()) rules = Json::array();
  // An aggregated ClusterRole takes the rules the aggregation controller would write, those of an
  // aggregated role included (view is labelled into edit, edit into admin), without waiting for it.
  const Json gathered = AggregatedRules(cluster_roles_, role, [&](const store::Object& other) {
    return ClusterRoleRules(other.name, visiting);
  });
  for (const Json& r : gathered) {
    if (std::find(rules.begin(), rules.end(), r) == rules.end()) rules.push_back(r);
  }
  visiting.erase(name);
  return rules;
}

std::optional<Json> Authorizer::RulesOf(const Json& role_ref, const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  Sync();
  if (!role_ref.is_object()) return std::nullopt;
  const std::string kind = role_ref.value("kind", ""), name = role_ref.value("name", "");
  const bool exists = kind == "ClusterRole" ? cluster_roles_.Find({"", name}) != nullptr
                      : kind == "Role"      ? roles_.Find({ns, name}) != nullptr
                                            : false;
  if (!exists) return std::nullopt;
  return RulesOfLocked(role_ref, ns);
}

Json Authorizer::RulesOfLocked(const Json& role_ref, const std::string& ns) {
  if (!role_ref.is_object()) return Json::array();
  const std::string kind = role_ref.value("kind", ""), name = role_ref.value("name", "");
  if (kind == "ClusterRole") return ClusterRoleRules(name);
  if (kind == "Role" && !ns.empty()) {
    if (const store::Object* role = roles_.Find({ns, name})) return role->body->value("rules", Json::array());
  }
  return Json::array();
}

std::vector<Json> Authorizer::RulesFor(const TokenUser& user, const std::string& ns) {
  std::vector<Json> out;
  for (const auto& [key, b_ptr] : cluster_bindings_.objects()) {
    const store::Object& b = *b_ptr;
    if (!BindsUser(*b.body.tree(), user)) continue;
    for (const Json& r : RulesOfLocked(b.body->value("roleRef", Json::object()), "")) out.push_back(r);
  }
  if (!ns.empty()) {
    for (const auto& [key, b_ptr] : bindings_.objects()) {
      const store::Object& b = *b_ptr;
      if (key.first != ns || !BindsUser(*b.body.tree(), user)) continue;
      for (const Json& r : RulesOfLocked(b.body->value("roleRef", Json::object()), ns)) out.push_back(r);
    }
  }
  // Arbiter's token-file convention (see the header).
  bool member = false;
  for (const auto& g : user.groups) member = member || g.starts_with("namespace:");
  if (member) {
    for (const Json& r : Json::array({Rule({""}, {"nodes", "namespaces"}, kRead), Rule({"scheduling.k8s.io"}, {"priorityclasses"}, kRead)})) {
      out.push_back(r);
    }
  }
  if (!ns.empty() && user.groups.contains("namespace:" + ns)) {
    for (const Json& r : ClusterRoleRules("admin")) out.push_back(r);
  }
  return out;
}

bool Authorizer::AllowedLocked(const TokenUser& user, const RequestAttributes& attrs) {
  for (const Json& r : RulesFor(user, attrs.resource_request ? attrs.ns : "")) {
    if (RuleAllows(r, attrs)) return true;
  }
  return false;
}

std::vector<Json> Authorizer::RulesOfUser(const TokenUser& user, const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  Sync();
  return RulesFor(user, ns);
}

bool Authorizer::Allowed(const TokenUser& user, const RequestAttributes& attrs) {
  std::lock_guard<std::mutex> lock(mu_);
  Sync();
  return AllowedLocked(user, attrs);
}

bool Authorizer::Covers(const TokenUser& user, const Json& rules, const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  Sync();
  if (!rules.is_array()) return true;
  for (const Json& rule : rules) {
    if (!rule.is_object()) continue;
    const Json verbs = rule.value("verbs", Json::array());
    for (const Json& v : verbs.is_array() ? verbs : Json::array()) {
      if (!v.is_string()) continue;
      for (const Json& u : rule.value("nonResourceURLs", Json::array())) {
        RequestAttributes a;
        a.resource_request = false;
        a.verb = v.get<std::string>();
        a.path = u.is_string() ? u.get<std::string>() : "";
        if (!AllowedLocked(user, a)) return false;
      }
      for (const Json& g : rule.value("apiGroups", Json::array())) {
        for (const Json& r : rule.value("resources", Json::array())) {
          if (!g.is_string() || !r.is_string()) continue;
          // A wildcard is covered only by a wildcard: the literal "*" is checked as a name.
          RequestAttributes a;
          a.verb = v.get<std::string>();
          a.api_group = g.get<std::string>();
          const std::string res = r.get<std::string>();
          const size_t slash = res.find('/');
          a.resource = res.substr(0, slash);
          if (slash != std::string::npos) a.subresource = res.substr(slash + 1);
          a.ns = ns;
          const Json names = rule.value("resourceNames", Json::array());
          if (names.is_array() && !names.empty()) {
            for (const Json& n : names) {
              a.name = n.is_string() ? n.get<std::string>() : "";
              if (!AllowedLocked(user, a)) return false;
            }
          } else if (!AllowedLocked(user, a)) {
            return false;
          }
        }
      }
    }
  }
  return true;
}

std::vector<Json> DefaultRbacObjects() {
  auto role = [](const std::string& name, Json rules) {
    return Json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                {"kind", "ClusterRole"},
                {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/bootstrapping", "rbac-defaults"}}}}},
                {"rules", std::move(rules)}};
  };
  const std::string aggregate = "rbac.authorization.k8s.io/aggregate-to-";
  // A role whose rules are those of the roles labelled aggregate-to-NAME (and which is itself
  // labelled into `into`, if any).
  auto aggregated = [&](const std::string& name, const std::string& into) {
    Json r = role(name, Json::array());
    r["aggregationRule"] = {{"clusterRoleSelectors", Json::array({{{"matchLabels", {{aggregate + name, "true"}}}}})}};
    if (!into.empty()) r["metadata"]["labels"][aggregate + into] = "true";
    return r;
  };
  auto part_of = [&](const std::string& name, const std::string& into, Json rules) {
    Json r = role(name, std::move(rules));
    r["metadata"]["labels"][aggregate + into] = "true";
    return r;
  };
  auto binding = [](const std::string& name, const std::string& role_name, const std::string& group) {
    return Json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                {"kind", "ClusterRoleBinding"},
                {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/bootstrapping", "rbac-defaults"}}}}},
                {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role_name}}},
                {"subjects", Json::array({{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Group"}, {"name", group}}})}};
  };
  Json everything = Json::array({Rule({"*"}, {"*"}, {"*"}), Json{{"nonResourceURLs", {"*"}}, {"verbs", {"*"}}}});
  Json basic = Json::array({Rule({"authorization.k8s.io"}, {"selfsubjectaccessreviews", "selfsubjectrulesreviews"}, {"create"}),
                            Rule({"authentication.k8s.io"}, {"selfsubjectreviews"}, {"create"})});
  Json discovery = Json::array({Json{{"nonResourceURLs", {"/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*",
                                                          "/version", "/version/", "/healthz", "/livez", "/readyz"}},
                                     {"verbs", {"get"}}}});
  // kube-scheduler's own roles (upstream's bootstrap policy), which a scheduler run against this
  // server (arbiter schedule, deploy/arbiter-scheduler.yaml) is bound to.
  auto named = [](Json rule, std::vector<std::string> names) {
    rule["resourceNames"] = std::move(names);
    return rule;
  };
  Json scheduler = Json::array(
      {Rule({"", "events.k8s.io"}, {"events"}, {"create", "patch", "update"}),
       Rule({"coordination.k8s.io"}, {"leases"}, {"create"}),
       named(Rule({"coordination.k8s.io"}, {"leases"}, {"get", "update"}), {"kube-scheduler"}),
       Rule({""}, {"nodes"}, {"get", "list", "watch"}),
       Rule({""}, {"pods"}, {"delete", "get", "list", "watch"}),
       Rule({""}, {"bindings", "pods/binding"}, {"create"}),
       Rule({""}, {"pods/status"}, {"patch", "update"}),
       Rule({""}, {"replicationcontrollers", "services"}, {"get", "list", "watch"}),
       Rule({"apps", "extensions"}, {"replicasets"}, {"get", "list", "watch"}),
       Rule({"apps"}, {"statefulsets"}, {"get", "list", "watch"}),
       Rule({"policy"}, {"poddisruptionbudgets"}, {"get", "list", "watch"}),
       Rule({""}, {"persistentvolumeclaims", "persistentvolumes"}, {"get", "list", "watch"}),
       Rule({"authentication.k8s.io"}, {"tokenreviews"}, {"create"}),
       Rule({"authorization.k8s.io"}, {"subjectaccessreviews"}, {"create"}),
       Rule({"storage.k8s.io"}, {"csinodes"}, {"get", "list", "watch"}),
       Rule({""}, {"namespaces"}, {"get", "list", "watch"}),
       Rule({"storage.k8s.io"}, {"csidrivers", "csistoragecapacities"}, {"get", "list", "watch"})});
  Json volume_scheduler = Json::array(
      {Rule({""}, {"persistentvolumes"}, {"get", "list", "patch", "update", "watch"}),
       Rule({"storage.k8s.io"}, {"storageclasses"}, {"get", "list", "watch"}),
       Rule({""}, {"persistentvolumeclaims"}, {"get", "list", "patch", "update", "watch"})});
  // The dashboard (docs/dashboard.md): its page, its document and what the page watches. Cluster-
  // wide only: a pod's explanation names the nodes and the pods of other namespaces it weighed.
  Json dashboard = Json::array({Json{{"nonResourceURLs", {"/ui", "/ui/*"}}, {"verbs", {"get"}}},
                                Rule({"arbiter.dev"}, {"dashboard"}, {"get", "list"}),
                                Rule({"arbiter.dev"}, {"explanations"}, {"get"}),
                                Rule({""}, {"nodes", "pods", "events"}, {"get", "list", "watch"})});
  auto user_binding = [&](const std::string& name, const std::string& user) {
    Json b = binding(name, name, "");
    b["subjects"] = Json::array({{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "User"}, {"name", user}}});
    return b;
  };
  return {role("cluster-admin", everything),
          aggregated("admin", ""),
          aggregated("edit", "admin"),
          aggregated("view", "edit"),
          part_of("system:aggregate-to-admin", "admin", AggregateToAdminRules()),
          part_of("system:aggregate-to-edit", "edit", AggregateToEditRules()),
          part_of("system:aggregate-to-view", "view", AggregateToViewRules()),
          part_of("arbiter:aggregate-to-edit", "edit", ArbiterAggregateToEditRules()),
          part_of("arbiter:aggregate-to-view", "view", ArbiterAggregateToViewRules()),
          role("system:basic-user", basic),
          role("system:discovery", discovery),
          role("arbiter:dashboard-viewer", dashboard),
          binding("cluster-admin", "cluster-admin", "system:masters"),
          binding("system:basic-user", "system:basic-user", "system:authenticated"),
          binding("system:discovery", "system:discovery", "system:authenticated"),
          role("system:kube-scheduler", scheduler),
          role("system:volume-scheduler", volume_scheduler),
          user_binding("system:kube-scheduler", "system:kube-scheduler"),
          user_binding("system:volume-scheduler", "system:kube-scheduler")};
}

}  // namespace arbiter::api
