// The served resources and the discovery documents built from them.
#include "arbiter/api/resources.h"

#include <algorithm>
#include <cctype>

namespace arbiter::api {

namespace {

std::vector<ResourceInfo> Build() {
  return {
      {"", "v1", "namespaces", "namespace", "Namespace", false, {"ns"}, {"status", "finalize"}, true, ""},
      {"", "v1", "nodes", "node", "Node", false, {"no"}, {"status"}, true, ""},
      {"", "v1", "pods", "pod", "Pod", true, {"po"}, {"status", "binding", "eviction", "log", "exec", "attach", "portforward", "proxy", "ephemeralcontainers"}, true, ""},
      {"", "v1", "events", "event", "Event", true, {"ev"}, {}, false, ""},
      {"", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", true, {"pvc"}, {"status"},
       true, ""},
      {"", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", false, {"pv"}, {"status"}, true, ""},
      {"", "v1", "resourcequotas", "resourcequota", "ResourceQuota", true, {"quota"}, {"status"}, false, ""},
      // The kinds ordinary manifests carry beside their workloads: stored and served (no proxying,
      // no endpoints, no token minting).
      {"", "v1", "services", "service", "Service", true, {"svc"}, {"status"}, false, ""},
      {"", "v1", "configmaps", "configmap", "ConfigMap", true, {"cm"}, {}, false, ""},
      {"", "v1", "secrets", "secret", "Secret", true, {}, {}, false, ""},
      {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, {"sa"}, {}, false, ""},
      // The workload controllers' kinds (src/arbiter/controllers).
      {"apps", "v1", "deployments", "deployment", "Deployment", true, {"deploy"}, {"status", "scale"}, false, ""},
      {"apps", "v1", "replicasets", "replicaset", "ReplicaSet", true, {"rs"}, {"status", "scale"}, false, ""},
      {"apps", "v1", "statefulsets", "statefulset", "StatefulSet", true, {"sts"}, {"status", "scale"}, false, ""},
      {"apps", "v1", "controllerrevisions", "controllerrevision", "ControllerRevision", true, {}, {}, false, ""},
      {"batch", "v1", "jobs", "job", "Job", true, {}, {"status"}, false, ""},
      {"batch", "v1", "cronjobs", "cronjob", "CronJob", true, {"cj"}, {"status"}, false, ""},
      {"scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", false, {"pc"}, {}, true, ""},
      {"scheduling.k8s.io", "v1beta1", "workloads", "workload", "Workload", true, {}, {"status"}, true, ""},
      {"scheduling.k8s.io", "v1beta1", "podgroups", "podgroup", "PodGroup", true, {}, {"status"}, true, ""},
      {"scheduling.k8s.io", "v1alpha3", "compositepodgroups", "compositepodgroup", "CompositePodGroup", true, {},
       {"status"}, true, ""},
      {"storage.k8s.io", "v1", "storageclasses", "storageclass", "StorageClass", false, {"sc"}, {}, true, ""},
      {"storage.k8s.io", "v1", "csinodes", "csinode", "CSINode", false, {}, {}, true, ""},
      {"policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true, {"pdb"},
       {"status"}, true, ""},
      {"coordination.k8s.io", "v1", "leases", "lease", "Lease", true, {}, {}, false, ""},
      // The same Events as core v1's (one store), converted (event_versions.h).
      {"events.k8s.io", "v1", "events", "event", "Event", true, {"ev"}, {}, false, "events"},
      // Usage, as metrics-server serves it; here clients may also write it (node pressure).
      {"metrics.k8s.io", "v1beta1", "pods", "", "PodMetrics", true, {}, {}, true, "podmetrics.metrics.k8s.io"},
      // Who may do what (RBAC).
      {"rbac.authorization.k8s.io", "v1", "roles", "role", "Role", true, {}, {}, false, ""},
      {"rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", true, {}, {}, false, ""},
      {"rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole", false, {}, {}, false, ""},
      {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", false, {}, {},
       false, ""},
      // What the caller may do and who it is (`kubectl auth can-i`, `kubectl auth whoami`).
      {"authorization.k8s.io", "v1", "selfsubjectaccessreviews", "", "SelfSubjectAccessReview", false, {}, {}, false,
       "", true},
      {"authentication.k8s.io", "v1", "selfsubjectreviews", "", "SelfSubjectReview", false, {}, {}, false, "", true},
      // Everything the caller may do in a namespace (`kubectl auth can-i --list`).
      {"authorization.k8s.io", "v1", "selfsubjectrulesreviews", "", "SelfSubjectRulesReview", false, {}, {}, false, "",
       true},
  };
}

// Groups in the order discovery lists them, each with its versions (preferred first).
std::vector<std::pair<std::string, std::vector<std::string>>> Groups() {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& r : Resources()) {
    if (r.group.empty()) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& g) { return g.first == r.group; });
    if (it == out.end()) {
      out.push_back({std::string(r.group), {}});
      it = out.end() - 1;
    }
    if (std::find(it->second.begin(), it->second.end(), r.version) == it->second.end()) {
      it->second.emplace_back(r.version);
    }
  }
  return out;
}

Json GroupJson(const std::string& name, const std::vector<std::string>& versions) {
  Json g = {{"name", name}, {"versions", Json::array()}};
  for (const auto& v : versions) g["versions"].push_back({{"groupVersion", name + "/" + v}, {"version", v}});
  g["preferredVersion"] = {{"groupVersion", name + "/" + versions.front()}, {"version", versions.front()}};
  return g;
}

}  // namespace

std::string ResourceInfo::ApiVersion() const {
  return group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
}

bool ResourceInfo::HasSubresource(std::string_view s) const {
  return std::find(subresources.begin(), subresources.end(), s) != subresources.end();
}

const std::vector<ResourceInfo>& Resources() {
  static const std::vector<ResourceInfo> kResources = Build();
  return kResources;
}

const ResourceInfo* FindResource(std::string_view group, std::string_view version, std::string_view resource) {
  for (const auto& r : Resources()) {
    if (r.group == group && r.version == version && r.resource == resource) return &r;
  }
  return nullptr;
}

const ResourceInfo* FindKind(std::string_view api_version, std::string_view kind) {
  for (const auto& r : Resources()) {
    if (r.kind == kind && r.ApiVersion() == api_version) return &r;
  }
  return nullptr;
}

Json CoreVersions() {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs", {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", ""}}}}};
}

Json GroupList() {
  Json list = {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", Json::array()}};
  for (const auto& [name, versions] : Groups()) list["groups"].push_back(GroupJson(name, versions));
  return list;
}

Json GroupDocument(std::string_view group) {
  for (const auto& [name, versions] : Groups()) {
    if (name == group) {
      Json g = GroupJson(name, versions);
      g["kind"] = "APIGroup";
      g["apiVersion"] = "v1";
      return g;
    }
  }
  return nullptr;
}

Json ResourceList(std::string_view group, std::string_view version) {
  Json list = {{"kind", "APIResourceList"},
               {"apiVersion", "v1"},
               {"groupVersion", group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version)},
               {"resources", Json::array()}};
  bool any = false;
  for (const auto& r : Resources()) {
    if (r.group != group || r.version != version) continue;
    any = true;
    Json verbs = r.review ? Json{"create"} : Json{"create", "delete", "get", "list", "patch", "update", "watch"};
    Json entry = {{"name", r.resource},   {"singularName", r.singular}, {"namespaced", r.namespaced},
                  {"kind", r.kind},       {"verbs", verbs}};
    if (!r.short_names.empty()) {
      entry["shortNames"] = Json::array();
      for (auto s : r.short_names) entry["shortNames"].push_back(s);
    }
    // `kubectl get all`: upstream's "all" category.
    for (std::string_view in_all : {"pods", "services", "deployments", "replicasets", "statefulsets", "jobs", "cronjobs"}) {
      if (r.resource == in_all) entry["categories"] = {"all"};
    }
    list["resources"].push_back(entry);
    for (auto sub : r.subresources) {
      // Upstream's discovery: the verbs and kind of each subresource.
      Json sub_verbs = sub == "status" || sub == "scale" || sub == "ephemeralcontainers" ? Json{"get", "patch", "update"}
                       : sub == "finalize"                                               ? Json{"update"}
                       : sub == "log"                                                    ? Json{"get"}
                       : sub == "exec" || sub == "attach" || sub == "portforward"        ? Json{"create", "get"}
                       : sub == "proxy" ? Json{"create", "delete", "get", "patch", "update"}
                                        : Json{"create"};
      std::string kind = sub == "binding"       ? "Binding"
                         : sub == "eviction"    ? "Eviction"
                         : sub == "scale"       ? "Scale"
                         : sub == "exec"        ? "PodExecOptions"
                         : sub == "attach"      ? "PodAttachOptions"
                         : sub == "portforward" ? "PodPortForwardOptions"
                         : sub == "proxy"       ? "PodProxyOptions"
                                                : std::string(r.kind);
      std::string gv = sub == "eviction" ? "policy/v1" : sub == "scale" ? "autoscaling/v1" : "";
      Json s = {{"name", std::string(r.resource) + "/" + std::string(sub)},
                {"singularName", ""},
                {"namespaced", r.namespaced},
                {"kind", kind},
                {"verbs", sub_verbs}};
      if (!gv.empty()) {
        s["group"] = gv.substr(0, gv.find('/'));
        s["version"] = "v1";
      }
      list["resources"].push_back(s);
    }
  }
  if (!any) return nullptr;
  return list;
}

std::string PercentDecode(std::string_view in, bool plus_is_space, bool keep_separators) {
  std::string out;
  out.reserve(in.size());
  auto hex = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%' && i + 2 < in.size() && std::isxdigit(static_cast<unsigned char>(in[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(in[i + 2]))) {
      const char decoded = static_cast<char>(hex(in[i + 1]) * 16 + hex(in[i + 2]));
      if (keep_separators && (decoded == '/' || decoded == '%')) {
        out.append(in.substr(i, 3));
      } else {
        out.push_back(decoded);
      }
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::vector<std::string> PathSegments(std::string_view path) {
  std::vector<std::string> out;
  for (size_t i = 0; i < path.size();) {
    const size_t j = path.find('/', i);
    const std::string_view part = path.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i);
    if (!part.empty()) out.push_back(part.find('%') == std::string_view::npos ? std::string(part) : PercentDecode(part, false));
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

}  // namespace arbiter::api
