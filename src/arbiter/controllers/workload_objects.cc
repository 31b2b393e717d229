#include "arbiter/controllers/workload_objects.h"

namespace arbiter::controllers {

namespace {

// A value as Go's typed decoding sees it: null members, and empty objects, arrays and strings
// that omitempty leaves out, are the same as absent (a template kubectl sends back on `rollout
// undo` carries "creationTimestamp": null).
Json Normalized(const Json& v) {
  if (v.is_object()) {
    Json out = Json::object();
    for (const auto& [k, x] : v.items()) {
      Json n = Normalized(x);
      if (n.is_null() || (n.is_object() && n.empty()) || (n.is_array() && n.empty()) || (n.is_string() && n.get_ref<const std::string&>().empty())) {
        continue;
      }
      out[k] = std::move(n);
    }
    return out;
  }
  if (v.is_array()) {
    Json out = Json::array();
    for (const Json& x : v) out.push_back(Normalized(x));
    return out;
  }
  return v;
}

}  // namespace

Json TemplateWithoutHash(const Json* tmpl) {
  Json t = tmpl != nullptr ? Normalized(*tmpl) : Json::object();
  if (t.contains("metadata") && t["metadata"].is_object() && t["metadata"].contains("labels") &&
      t["metadata"]["labels"].is_object()) {
    t["metadata"]["labels"].erase(kPodTemplateHashLabel);
    if (t["metadata"]["labels"].empty()) t["metadata"].erase("labels");
  }
  return t;
}

Json PodFromTemplate(const Json& tmpl, const Json& owner, std::string_view owner_api_version,
                     std::string_view owner_kind, const std::string& name_prefix) {
  Json md = Json::object();
  md["generateName"] = name_prefix;
  md["namespace"] = NamespaceOf(owner);
  for (const char* k : {"labels", "annotations", "finalizers"}) {
    if (const Json* v = Find(tmpl, {"metadata", k}); v != nullptr && !v->is_null()) md[k] = *v;
  }
  md["ownerReferences"] = Json::array({NewControllerRef(owner, owner_api_version, owner_kind)});
  const Json* spec = Find(tmpl, {"spec"});
  return Json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", std::move(md)},
              {"spec", spec != nullptr ? *spec : Json::object()}};
}

Json NewReplicaSetOf(const Json& d, int64_t replicas) {
  const Json* tmpl = Find(d, {"spec", "template"});
  Json rs_template = tmpl != nullptr ? *tmpl : Json::object();
  const uint32_t collisions = static_cast<uint32_t>(IntAt(d, {"status", "collisionCount"}, 0));
  const std::string hash = SafeHash(TemplateWithoutHash(tmpl).dump(), collisions);
  rs_template["metadata"]["labels"][kPodTemplateHashLabel] = hash;
  Json selector = Find(d, {"spec", "selector"}) != nullptr ? d["spec"]["selector"] : Json::object();
  selector["matchLabels"][kPodTemplateHashLabel] = hash;
  return {{"apiVersion", "apps/v1"},
          {"kind", "ReplicaSet"},
          {"metadata",
           {{"name", NameOf(d) + "-" + hash},
            {"namespace", NamespaceOf(d)},
            {"labels", rs_template["metadata"]["labels"]},
            {"ownerReferences", Json::array({NewControllerRef(d, kDeploymentApiVersion, kDeploymentKind)})}}},
          {"spec",
           {{"replicas", replicas},
            {"minReadySeconds", IntAt(d, {"spec", "minReadySeconds"}, 0)},
            {"selector", selector},
            {"template", rs_template}}}};
}

std::string StatefulSetRevision(const Json& set) {
  const Json* tmpl = Find(set, {"spec", "template"});
  const Json template_json = tmpl != nullptr ? *tmpl : Json::object();
  return NameOf(set) + "-" + SafeHash(template_json.dump(), static_cast<uint32_t>(IntAt(set, {"status", "collisionCount"}, 0)));
}

Json StatefulSetPod(const Json& set, int64_t ordinal, const std::string& revision, std::vector<Json>* claims) {
  const std::string pod_name = NameOf(set) + "-" + std::to_string(ordinal);
  const Json* tmpl = Find(set, {"spec", "template"});
  Json pod = PodFromTemplate(tmpl != nullptr ? *tmpl : Json::object(), set, kStatefulSetApiVersion, kStatefulSetKind, "");
  pod["metadata"].erase("generateName");
  pod["metadata"]["name"] = pod_name;
  pod["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] = pod_name;
  pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] = std::to_string(ordinal);
  pod["metadata"]["labels"][kControllerRevisionHashLabel] = revision;
  pod["spec"]["hostname"] = pod_name;
  if (const std::string service = StringAt(set, {"spec", "serviceName"}); !service.empty()) pod["spec"]["subdomain"] = service;
  if (const Json* templates = Find(set, {"spec", "volumeClaimTemplates"}); templates != nullptr && templates->is_array()) {
    for (const Json& claim : *templates) {
      const std::string volume = NameOf(claim);
      const std::string claim_name = volume + "-" + pod_name;
      Json& volumes = pod["spec"]["volumes"];
      if (!volumes.is_array()) volumes = Json::array();
      volumes.push_back({{"name", volume}, {"persistentVolumeClaim", {{"claimName", claim_name}}}});
      if (claims == nullptr) continue;
      const Json* match = Find(set, {"spec", "selector", "matchLabels"});
      claims->push_back({{"apiVersion", "v1"},
                         {"kind", "PersistentVolumeClaim"},
                         {"metadata", {{"name", claim_name},
                                       {"namespace", NamespaceOf(set)},
                                       {"labels", match != nullptr ? *match : Json::object()}}},
                         {"spec", Find(claim, {"spec"}) != nullptr ? claim["spec"] : Json::object()}});
    }
  }
  return pod;
}

Json JobPod(const Json& job, std::optional<int64_t> index) {
  const Json* tmpl = Find(job, {"spec", "template"});
  Json pod = PodFromTemplate(tmpl != nullptr ? *tmpl : Json::object(), job, kJobApiVersion, kJobKind, NameOf(job) + "-");
  pod["metadata"]["finalizers"].push_back(kJobTrackingFinalizer);
  if (index) {
    const std::string i = std::to_string(*index);
    pod["metadata"]["generateName"] = NameOf(job) + "-" + i + "-";
    pod["metadata"]["annotations"][kJobCompletionIndex] = i;
    pod["metadata"]["labels"][kJobCompletionIndex] = i;
    if (pod["spec"].contains("containers") && pod["spec"]["containers"].is_array()) {
      for (Json& c : pod["spec"]["containers"]) {
        c["env"].push_back({{"name", "JOB_COMPLETION_INDEX"},
                            {"valueFrom", {{"fieldRef", {{"fieldPath", std::string("metadata.annotations['") + kJobCompletionIndex + "']"}}}}}});
      }
    }
  }
  return pod;
}

Json DaemonSetPod(const Json& set, const std::string& node) {
  const Json* tmpl = Find(set, {"spec", "template"});
  Json pod = PodFromTemplate(tmpl != nullptr ? *tmpl : Json::object(), set, kDaemonSetApiVersion, kDaemonSetKind, NameOf(set) + "-");
  Json& spec = pod["spec"];
  // ReplaceDaemonSetPodNodeNameNodeAffinity: one required term selecting the node by name; the
  // template's matchFields on metadata.name give way, its other requirements stay.
  const Json name_term = {{"key", "metadata.name"}, {"operator", "In"}, {"values", Json::array({node})}};
  Json& required = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
  Json terms = required.is_object() && required.contains("nodeSelectorTerms") && required["nodeSelectorTerms"].is_array()
                   ? required["nodeSelectorTerms"]
                   : Json::array();
  if (terms.empty()) {
    terms = Json::array({{{"matchFields", Json::array({name_term})}}});
  } else {
    for (Json& term : terms) {
      Json fields = Json::array({name_term});
      if (term.contains("matchFields") && term["matchFields"].is_array()) {
        for (const Json& f : term["matchFields"]) {
          if (f.value("key", "") != "metadata.name") fields.push_back(f);
        }
      }
      term["matchFields"] = std::move(fields);
    }
  }
  required = {{"nodeSelectorTerms", std::move(terms)}};
  // AddOrUpdateDaemonPodTolerations.
  Json& tolerations = spec["tolerations"];
  if (!tolerations.is_array()) tolerations = Json::array();
  auto tolerate = [&](const char* key, const char* effect) {
    for (const Json& t : tolerations) {
      if (t.value("key", "") == key && t.value("effect", "") == effect && t.value("operator", "") == "Exists") return;
    }
    tolerations.push_back({{"key", key}, {"operator", "Exists"}, {"effect", effect}});
  };
  tolerate("node.kubernetes.io/not-ready", "NoExecute");
  tolerate("node.kubernetes.io/unreachable", "NoExecute");
  tolerate("node.kubernetes.io/disk-pressure", "NoSchedule");
  tolerate("node.kubernetes.io/memory-pressure", "NoSchedule");
  tolerate("node.kubernetes.io/pid-pressure", "NoSchedule");
  tolerate("node.kubernetes.io/unschedulable", "NoSchedule");
  if (BoolAt(spec, {"hostNetwork"}, false)) tolerate("node.kubernetes.io/network-unavailable", "NoSchedule");
  return pod;
}

}  // namespace arbiter::controllers
