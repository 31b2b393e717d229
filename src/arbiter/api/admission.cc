// PriorityClass validation, pod priority admission, ResourceQuota and the group hierarchy.
#include "arbiter/api/admission.h"
#include "arbiter/api/pod_defaults.h"
#include "arbiter/base/base64.h"

#include <algorithm>
#include <functional>
#include <set>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/api/authz.h"
#include "arbiter/manifest/names.h"
#include "arbiter/model/group_hierarchy.h"
#include "arbiter/model/objects.h"
#include "arbiter/model/quantity.h"
#include "arbiter/model/resources.h"
#include "arbiter/rules/pod_rules.h"

namespace arbiter::api {

using Json = nlohmann::json;

namespace {

std::string NameOf(const Json& o) { return o["metadata"].value("name", ""); }

Status ValidatePriorityClass(Json& pc, const Json* old, store::Store& store) {
  const std::string name = NameOf(pc);
  if (!pc.contains("value") || !pc["value"].is_number_integer()) {
    return InvalidArgument("PriorityClass.scheduling.k8s.io \"" + name + "\" is invalid: value: Required value");
  }
  const int64_t value = pc["value"].get<int64_t>();
  if (old == nullptr) {
    // PriorityClass validation's rule on names and values, shared with `plan`. A validation error
    // upstream (422), though its field error is of type Forbidden.
    if (auto problem = admission::CheckPriorityClass(name, value, pc.value("globalDefault", false))) {
      return InvalidArgument("PriorityClass.scheduling.k8s.io \"" + name + "\" is invalid: " + problem->field +
                             ": Forbidden: " + problem->detail);
    }
  }
  if (old != nullptr && (*old)["value"] != pc["value"]) {
    return InvalidArgument("PriorityClass.scheduling.k8s.io \"" + name + "\" is invalid: value: Invalid value: " +
                           std::to_string(value) + ": field is immutable");
  }
  const std::string policy = pc.value("preemptionPolicy", "PreemptLowerPriority");
  if (policy != "PreemptLowerPriority" && policy != "Never") {
    return InvalidArgument("PriorityClass.scheduling.k8s.io \"" + name + "\" is invalid: preemptionPolicy: Unsupported value: \"" +
                           policy + "\": supported values: \"Never\", \"PreemptLowerPriority\"");
  }
  pc["preemptionPolicy"] = policy;
  if (pc.value("globalDefault", false)) {
    ARBITER_ASSIGN_OR_RETURN(list, store.List("priorityclasses", ""));
    for (const auto& other : list.items) {
      if (other.name != name && other.body->value("globalDefault", false)) {
        // The priority admission plugin's answer upstream: Forbidden.
        return FailedPrecondition("priorityclasses.scheduling.k8s.io \"" + name + "\" is forbidden: PriorityClass " +
                                  other.name + " is already marked as default (globalDefault). Only one default can exist");
      }
    }
  }
  return Status::Ok();
}

// A stored PriorityClass as the admission rule reads it (its value and policy were validated
// when it was written).
model::PriorityClass ClassFromJson(const store::Object& o) {
  model::PriorityClass pc;
  pc.name = o.name;
  pc.value = static_cast<int32_t>(std::clamp<int64_t>(o.body->value("value", int64_t{0}), INT32_MIN, INT32_MAX));
  pc.global_default = o.body->value("globalDefault", false);
  pc.preemption_policy = model::ParsePreemptionPolicy(o.body->value("preemptionPolicy", ""))
                             .value_or(model::PreemptionPolicy::kPreemptLowerPriority);
  return pc;
}

// The Priority admission plugin on a pod being created (admission::DecidePriority), with
// kube-apiserver's wording: the classes are the built-in ones and those stored.
// `spec` holds priorityClassName, priority and preemptionPolicy (a pod's or a group's spec, or a
// Workload's template); `what` names the object in messages ("pods \"x\""), `where` the place
// the values came from ("pod spec").
StatusOr<admission::PriorityDecision> ResolvePriorityOf(const Json& spec, const std::string& what, const std::string& where,
                                                        store::Store& store) {
  const std::string class_name = spec.value("priorityClassName", "");
  std::optional<int64_t> spec_priority;
  if (spec.contains("priority") && spec["priority"].is_number_integer()) spec_priority = spec["priority"].get<int64_t>();
  std::optional<model::PreemptionPolicy> spec_policy;
  bool policy_unknown = false;  // a value no class can have: it disagrees whatever the class says
  if (spec.contains("preemptionPolicy")) {
    const Json& p = spec["preemptionPolicy"];
    if (p.is_string()) spec_policy = model::ParsePreemptionPolicy(p.get<std::string>());
    policy_unknown = !spec_policy;
  }
  const std::vector<model::PriorityClass> builtin = admission::BuiltinPriorityClasses();
  model::PriorityClass found;
  Status lookup = Status::Ok();
  auto find = [&](const std::string& name) -> const model::PriorityClass* {
    for (const auto& b : builtin) {
      if (b.name == name) return &b;
    }
    auto pc = store.Get("priorityclasses", "", name);
    if (!pc.ok()) {
      if (pc.status().code() != StatusCode::kNotFound) lookup = pc.status();
      return nullptr;
    }
    found = ClassFromJson(*pc);
    return &found;
  };
  std::optional<model::PriorityClass> global_default;
  if (class_name.empty()) {
    ARBITER_ASSIGN_OR_RETURN(list, store.List("priorityclasses", ""));
    for (const auto& pc : list.items) {
      if (pc.body->value("globalDefault", false)) {
        global_default = ClassFromJson(pc);
        break;
      }
    }
  }
  admission::PriorityDecision d =
      admission::DecidePriority(class_name, spec_priority, spec_policy, find, global_default ? &*global_default : nullptr);
  ARBITER_RETURN_IF_ERROR(lookup);
  using Problem = admission::PriorityDecision::Problem;
  if (policy_unknown && d.problem == Problem::kNone) d.problem = Problem::kPolicyDisagrees;
  switch (d.problem) {
    case Problem::kNone: return d;
    case Problem::kUnknownClass:
      return FailedPrecondition(what + " is forbidden: no PriorityClass with name " + class_name + " was found");
    case Problem::kPriorityDisagrees:
      return FailedPrecondition(what + " is forbidden: the integer value of priority (" + spec["priority"].dump() +
                                ") must not be provided in " + where + "; priority admission controller computed " +
                                std::to_string(d.priority) + " from the given PriorityClass name");
    case Problem::kPolicyDisagrees:
      return FailedPrecondition(what + " is forbidden: the string value of PreemptionPolicy (" +
                                spec["preemptionPolicy"].dump() + ") must not be provided in " + where +
                                "; priority admission controller computed " +
                                std::string(model::PreemptionPolicyName(d.policy)) + " from the given PriorityClass name");
  }
  return d;
}

int64_t PodRequest(const Json& pod, const std::string& resource, bool milli) {
  int64_t sum = 0;
  for (const Json& c : pod["spec"].value("containers", Json::array())) {
    const Json& req = c.value("resources", Json::object()).value("requests", Json::object());
    if (req.contains(resource) && req[resource].is_string()) {
      auto q = model::Quantity::Parse(req[resource].get<std::string>());
      if (q.ok()) sum = model::SaturatingAdd(sum, milli ? q->milli() : q->value());
    }
  }
  return sum;
}

bool InScope(const Json& quota, const std::string& class_name) {
  const Json& sel = quota.value("spec", Json::object()).value("scopeSelector", Json::object());
  for (const Json& e : sel.value("matchExpressions", Json::array())) {
    if (e.value("scopeName", "") != "PriorityClass") continue;
    const std::string op = e.value("operator", "");
    const Json values = e.value("values", Json::array());
    const bool listed = std::find(values.begin(), values.end(), Json(class_name)) != values.end();
    if (op == "In" && !listed) return false;
    if (op == "NotIn" && listed) return false;
    if (op == "Exists" && class_name.empty()) return false;
    if (op == "DoesNotExist" && !class_name.empty()) return false;
  }
  return true;
}

Status ValidateQuota(const Json& q);

namespace {

// What a quota tracks: its hard key, the container request it sums ("" counts pods), and
// whether the amount is in thousandths (CPU).
struct Tracked {
  const char* key;
  const char* resource;
  bool milli;
};
constexpr Tracked kTracked[] = {{"pods", "", false},
                                {"count/pods", "", false},
                                {"requests.cpu", "cpu", true},
                                {"requests.memory", "memory", false}};

}  // namespace

Status CheckQuotas(const Json& pod, const std::string& ns, store::Store& store) {
  ARBITER_ASSIGN_OR_RETURN(quotas, store.List("resourcequotas", ns));
  if (quotas.items.empty()) return Status::Ok();
  ARBITER_ASSIGN_OR_RETURN(pods, store.List("pods", ns));
  std::vector<store::Body::Tree> trees;  // pins what `all` points into
  std::vector<const Json*> all;
  for (const auto& p : pods.items) all.push_back(trees.emplace_back(p.body.tree()).get());
  const std::string cls = pod["spec"].value("priorityClassName", "");
  for (const auto& q : quotas.items) {
    if (!ValidateQuota(*q.body.tree()).ok() || !InScope(*q.body.tree(), cls)) continue;
    const Json hard = q.body->value("spec", Json::object()).value("hard", Json::object());
    const std::map<std::string, int64_t> used = QuotaUsage(*q.body.tree(), all);
    const std::map<std::string, int64_t> wanted = QuotaUsage(*q.body.tree(), {&pod});
    for (const Tracked& t : kTracked) {
      if (!hard.contains(t.key) || !hard[t.key].is_string()) continue;
      auto limit = model::Quantity::Parse(hard[t.key].get<std::string>());
      if (!limit.ok()) continue;
      const int64_t cap = t.milli ? limit->milli() : limit->value();
      const int64_t now_used = used.at(t.key), want = wanted.at(t.key);
      if (model::SaturatingAdd(now_used, want) > cap) {
        auto show = [&](int64_t v) { return t.milli ? std::to_string(v) + "m" : std::to_string(v); };
        return FailedPrecondition("pods \"" + NameOf(pod) + "\" is forbidden: exceeded quota: " + q.name +
                                  ", requested: " + t.key + "=" + show(want) + ", used: " + t.key + "=" + show(now_used) +
                                  ", limited: " + t.key + "=" + hard[t.key].get<std::string>());
      }
    }
  }
  return Status::Ok();
}

// kube-apiserver's ValidatePodUpdate: after creation a pod's spec changes only in the few ways
// upstream allows (container and init container images, activeDeadlineSeconds set or lowered,
// tolerations added, terminationGracePeriodSeconds from negative to 1, scheduling gates
// removed, ephemeral containers added). nodeName changes only through the binding subresource, resources only through
// resize, which Arbiter does not serve. Anything else is the upstream Forbidden error on `spec`.
Status ValidatePodUpdate(const Json& pod, const Json& old) {
  const Json& next = pod["spec"];
  Json allowed = old.value("spec", Json::object());  // the old spec with the permitted changes applied
  for (const char* list : {"containers", "initContainers"}) {
    if (!next.contains(list) || !allowed.contains(list) || !next[list].is_array() || !allowed[list].is_array() ||
        next[list].size() != allowed[list].size()) {
      continue;
    }
    for (size_t i = 0; i < next[list].size(); ++i) {
      if (next[list][i].is_object() && allowed[list][i].is_object() && next[list][i].contains("image")) {
        allowed[list][i]["image"] = next[list][i]["image"];
      }
    }
  }
  if (next.contains("activeDeadlineSeconds") && next["activeDeadlineSeconds"].is_number_integer()) {
    const int64_t want = next["activeDeadlineSeconds"].get<int64_t>();
    const bool was = allowed.contains("activeDeadlineSeconds") && allowed["activeDeadlineSeconds"].is_number_integer();
    if (want > 0 && (!was || want <= allowed["activeDeadlineSeconds"].get<int64_t>())) allowed["activeDeadlineSeconds"] = want;
  }
  if (next.contains("tolerations") && next["tolerations"].is_array()) {
    // Additions only: every existing toleration stays (its tolerationSeconds may change).
    auto key = [](Json t) {
      if (t.is_object()) t.erase("tolerationSeconds");
      return t;
    };
    bool kept = true;
    for (const Json& t : allowed.value("tolerations", Json::array())) {
      bool found = false;
      for (const Json& u : next["tolerations"]) found = found || key(t) == key(u);
      kept = kept && found;
    }
    if (kept) allowed["tolerations"] = next["tolerations"];
  }
  // Ephemeral containers are added (never changed or removed), as the ephemeralcontainers
  // subresource allows (`kubectl debug`). Arbiter's admission does not see which path a write
  // came by: the main resource may add them too, where upstream sends it to the subresource.
  if (next.contains("ephemeralContainers") && next["ephemeralContainers"].is_array()) {
    const Json had = allowed.value("ephemeralContainers", Json::array());
    bool prefix = had.is_array() && had.size() <= next["ephemeralContainers"].size();
    for (size_t i = 0; prefix && i < had.size(); ++i) prefix = had[i] == next["ephemeralContainers"][i];
    if (prefix) allowed["ephemeralContainers"] = next["ephemeralContainers"];
  }
  if (next.value("terminationGracePeriodSeconds", Json()) == Json(1) && allowed.contains("terminationGracePeriodSeconds") &&
      allowed["terminationGracePeriodSeconds"].is_number_integer() && allowed["terminationGracePeriodSeconds"].get<int64_t>() < 0) {
    allowed["terminationGracePeriodSeconds"] = 1;
  }
  // Scheduling gates may be removed, never added (validateOnlyDeletedSchedulingGates); the
  // error names the first new gate.
  const Json old_gates = allowed.value("schedulingGates", Json::array());
  const Json new_gates = next.value("schedulingGates", Json::array());
  if (old_gates.is_array() && new_gates.is_array()) {
    for (size_t i = 0; i < new_gates.size(); ++i) {
      const Json& g = new_gates[i];
      bool known = false;
      for (const Json& o : old_gates) known = known || (o.is_object() && g.is_object() && o.value("name", Json()) == g.value("name", Json()));
      if (!known) {
        return InvalidArgument("Pod \"" + NameOf(pod) +
                               "\" is invalid: spec.schedulingGates[" + std::to_string(i) +
                               "].name: Forbidden: only deletion is allowed, but found new scheduling gate '" + (g.is_object() ? g.value("name", std::string()) : g.dump()) + "'");
      }
    }
    if (!old_gates.empty()) {
      // While a pod is gated its scheduling directives may be narrowed, as a queue controller
      // does before it lifts the gate (upstream's mutable scheduling directives): nodeSelector
      // entries added (none changed or removed), and a required node affinity set where there
      // was none.
      const Json old_sel = allowed.value("nodeSelector", Json::object());
      const Json new_sel = next.value("nodeSelector", Json::object());
      bool additions = old_sel.is_object() && new_sel.is_object();
      for (auto it = old_sel.begin(); additions && it != old_sel.end(); ++it) {
        additions = new_sel.contains(it.key()) && new_sel[it.key()] == it.value();
      }
      if (additions) {
        if (new_sel.empty()) {
          allowed.erase("nodeSelector");
        } else {
          allowed["nodeSelector"] = new_sel;
        }
      }
      const Json old_required = allowed.value("affinity", Json::object()).value("nodeAffinity", Json::object())
                                    .value("requiredDuringSchedulingIgnoredDuringExecution", Json());
      const Json new_affinity = next.value("affinity", Json());
      if (old_required.is_null() && new_affinity.is_object() && new_affinity.value("nodeAffinity", Json()).is_object()) {
        Json narrowed = allowed.value("affinity", Json::object());
        if (!narrowed.is_object()) narrowed = Json::object();
        if (!narrowed["nodeAffinity"].is_object()) narrowed["nodeAffinity"] = Json::object();
        const Json& want = new_affinity["nodeAffinity"].value("requiredDuringSchedulingIgnoredDuringExecution", Json());
        if (!want.is_null()) narrowed["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = want;
        if (narrowed == new_affinity) allowed["affinity"] = narrowed;
      }
    }
    if (new_gates.empty()) {
      allowed.erase("schedulingGates");
    } else {
      allowed["schedulingGates"] = new_gates;
    }
  }
  if (allowed == next) return Status::Ok();
  return InvalidArgument("Pod \"" + NameOf(pod) +
                         "\" is invalid: spec: Forbidden: pod updates may not change fields other than "
                         "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                         "`spec.tolerations` (only additions to existing tolerations),"
                         "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)");
}

Status AdmitPod(Json& pod, const Json* old, store::Store& store) {
  if (!pod.contains("spec") || !pod["spec"].is_object()) pod["spec"] = Json::object();
  Json& spec = pod["spec"];
  if (old != nullptr) {
    // Priority is decided once, at creation; so are the defaults admission filled in.
    for (const char* k : {"priority", "priorityClassName", "preemptionPolicy"}) {
      if ((*old)["spec"].contains(k)) {
        spec[k] = (*old)["spec"][k];
      } else {
        spec.erase(k);
      }
    }
    for (const char* k : {"schedulerName", "terminationGracePeriodSeconds"}) {
      if (!spec.contains(k) && (*old)["spec"].contains(k)) spec[k] = (*old)["spec"][k];
    }
    DefaultPod(spec);
    // The QoS class was decided at creation: a status written without it keeps it.
    const Json old_qos = (*old).value("/status/qosClass"_json_pointer, Json());
    if (old_qos.is_string() && !pod.value("/status/qosClass"_json_pointer, Json()).is_string()) {
      if (!pod["status"].is_object()) pod["status"] = Json::object();
      pod["status"]["qosClass"] = old_qos;
    }
    // A pod stored before its defaults were filled in compares as if they had been.
    Json defaulted_old = *old;
    if (defaulted_old["spec"].is_object()) DefaultPod(defaulted_old["spec"]);
    return ValidatePodUpdate(pod, defaulted_old);
  }
  if (const Json& gates = spec.value("schedulingGates", Json::array()); gates.is_array() && !gates.empty()) {
    if (spec.value("nodeName", Json()).is_string() && !spec["nodeName"].get<std::string>().empty()) {
      return InvalidArgument("Pod \"" + NameOf(pod) + "\" is invalid: spec.nodeName: " +
                             std::string(model::kGatedNodeNameForbidden));
    }
    // kube-apiserver marks a gated pod at creation (applySchedulingGatedCondition); kubectl shows
    // the reason in the STATUS column until the pod is scheduled.
    Json& status = pod["status"];
    if (!status.is_object()) status = Json::object();
    status["conditions"] = Json::array({{{"type", "PodScheduled"},
                                         {"status", "False"},
                                         {"lastTransitionTime", pod["metadata"].value("creationTimestamp", Json())},
                                         {"reason", model::kPodReasonSchedulingGated},
                                         {"message", model::kSchedulingGatedMessage}}});
  }
  // PodTopologyLabels admission (on by default since 1.35): a pod created on a node takes the
  // node's zone and region labels, as a binding to it gives them (rules/pod_rules.h).
  if (const Json& node = spec.value("nodeName", Json()); node.is_string() && !node.get<std::string>().empty()) {
    if (auto n = store.Get("nodes", "", node.get<std::string>()); n.ok()) {
      rules::MergeMetadata(pod, "labels", rules::TopologyLabelsOf(*n->body.tree()));
    }
  }
  ARBITER_ASSIGN_OR_RETURN(p, ResolvePriorityOf(spec, "pods \"" + NameOf(pod) + "\"", "pod spec", store));
  if (!p.class_name.empty()) spec["priorityClassName"] = p.class_name;
  spec["priority"] = p.priority;
  spec["preemptionPolicy"] = std::string(model::PreemptionPolicyName(p.policy));
  // A member of a PodGroup has its group's priority (admission::DecidePriority, rule 5): a pod
  // cannot borrow a group's priority without naming a class that gives it (and that the quota
  // counts), nor a group take a class its pods were not admitted with.
  if (const std::string group = spec.value("/schedulingGroup/podGroupName"_json_pointer, std::string()); !group.empty()) {
    auto stored = store.Get("podgroups", pod["metadata"].value("namespace", ""), group);
    if (stored.ok()) {
      const Json gspec = stored->body->value("spec", Json::object());
      const int64_t gp = gspec.value("priority", int64_t{0});
      const std::string gpolicy = gspec.value("preemptionPolicy", "PreemptLowerPriority");
      if (gp != p.priority || gpolicy != model::PreemptionPolicyName(p.policy)) {
        return FailedPrecondition("pods \"" + NameOf(pod) + "\" is forbidden: its priority (" + std::to_string(p.priority) + ", " +
                                  std::string(model::PreemptionPolicyName(p.policy)) + ") differs from its PodGroup \"" +
                                  group + "\" (" + std::to_string(gp) + ", " + gpolicy +
                                  "): give the pod the group's priorityClassName");
      }
    } else if (stored.status().code() != StatusCode::kNotFound) {
      return stored.status();
    }
  }
  DefaultPod(spec);
  // The pod strategy's PrepareForCreate: the QoS class is decided once, at creation.
  if (!pod["status"].is_object()) pod["status"] = Json::object();
  pod["status"]["qosClass"] = PodQosClass(spec);
  // DefaultTolerationSeconds: a pod stays 300 s on a node that went not-ready or unreachable,
  // unless it says otherwise (a toleration of that taint's NoExecute, or of every NoExecute).
  for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    bool has = false;
    for (const Json& t : spec.value("tolerations", Json::array())) {
      if (!t.is_object()) continue;
      const std::string effect = t.value("effect", "");
      const bool key_matches = t.value("key", "") == key || (t.value("key", "").empty() && t.value("operator", "") == "Exists");
      has = has || (key_matches && (effect.empty() || effect == "NoExecute"));
    }
    if (has) continue;
    if (!spec["tolerations"].is_array()) spec["tolerations"] = Json::array();
    spec["tolerations"].push_back({{"key", key}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}});
  }
  return CheckQuotas(pod, pod["metadata"].value("namespace", "default"), store);
}

// A ResourceQuota's shape, checked when it is written so that admission can rely on it.
Status ValidateQuota(const Json& q) {
  const std::string where = "ResourceQuota \"" + NameOf(q) + "\" is invalid: ";
  if (!q.contains("spec")) return Status::Ok();
  const Json& spec = q["spec"];
  if (!spec.is_object()) return InvalidArgument(where + "spec: must be an object");
  if (spec.contains("hard")) {
    if (!spec["hard"].is_object()) return InvalidArgument(where + "spec.hard: must be an object");
    for (const auto& [k, v] : spec["hard"].items()) {
      const std::string text = v.is_string() ? v.get<std::string>() : v.is_number() ? v.dump() : "";
      if (text.empty() || !model::Quantity::Parse(text).ok()) {
        return InvalidArgument(where + "spec.hard." + k + ": must be a quantity");
      }
    }
  }
  if (spec.contains("scopeSelector")) {
    const Json& sel = spec["scopeSelector"];
    if (!sel.is_object() || (sel.contains("matchExpressions") && !sel["matchExpressions"].is_array())) {
      return InvalidArgument(where + "spec.scopeSelector.matchExpressions: must be a list");
    }
    for (const Json& e : sel.value("matchExpressions", Json::array())) {
      const std::string op = e.is_object() && e.contains("operator") && e["operator"].is_string() ? e["operator"].get<std::string>() : "";
      if (!e.is_object() || !e.contains("scopeName") || !e["scopeName"].is_string() ||
          (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist")) {
        return InvalidArgument(where + "spec.scopeSelector.matchExpressions: each needs a scopeName and an operator "
                               "(In, NotIn, Exists, DoesNotExist)");
      }
      if (e.contains("values") && (!e["values"].is_array() ||
                                   !std::all_of(e["values"].begin(), e["values"].end(), [](const Json& v) { return v.is_string(); }))) {
        return InvalidArgument(where + "spec.scopeSelector.matchExpressions.values: must be a list of strings");
      }
    }
  }
  return Status::Ok();
}

// The group hierarchy rule (model::CheckGroupHierarchy) for one written PodGroup or
// CompositePodGroup, against the groups stored in its namespace: a write that would close a
// cycle, or make a chain through the object longer than kMaxGroupHierarchyDepth levels, is
// rejected. A parent that does not exist yet is allowed: `kubectl apply -f DIR` creates objects in
// any order, and the scheduler waits for the parent as it waits for a pod's PodGroup.
Status ValidateGroupHierarchy(const ResourceInfo& info, const Json& group, store::Store& store) {
  const bool composite = info.StoreKey() == "compositepodgroups";
  const std::string ns = group["metadata"].value("namespace", "default");
  const std::string name = NameOf(group);
  auto parent_of = [&](const Json& o) -> std::string {
    const Json* spec = o.contains("spec") && o["spec"].is_object() ? &o["spec"] : nullptr;
    if (spec == nullptr || !spec->contains("parentCompositePodGroupName")) return "";
    const Json& p = (*spec)["parentCompositePodGroupName"];
    return p.is_string() && !p.get<std::string>().empty() ? ns + "/" + p.get<std::string>() : "";
  };
  const std::string key = ns + "/" + name;
  // The written object first, so that a cycle through it is reported on it.
  std::vector<model::GroupLink> links{{key, parent_of(group), composite}};
  for (const char* resource : {"compositepodgroups", "podgroups"}) {
    const bool is_composite = std::string(resource) == "compositepodgroups";
    ARBITER_ASSIGN_OR_RETURN(list, store.List(resource, ns));
    for (const auto& o : list.items) {
      if (is_composite == composite && o.name == name) continue;  // the version being replaced
      links.push_back({ns + "/" + o.name, parent_of(*o.body.tree()), is_composite});
    }
  }
  auto join = [](const std::vector<std::string>& chain) {
    std::string s;
    for (const auto& k : chain) s += (s.empty() ? "" : " -> ") + k;
    return s;
  };
  for (const model::HierarchyProblem& p : model::CheckGroupHierarchy(links)) {
    if (p.kind == model::HierarchyProblem::Kind::kMissingParent ||
        std::find(p.chain.begin(), p.chain.end(), key) == p.chain.end()) {
      continue;  // not this write's doing
    }
    const std::string what =
        p.kind == model::HierarchyProblem::Kind::kCycle
            ? "the parent links would form a cycle: " + join(p.chain)
            : "the hierarchy would have " + std::to_string(p.chain.size()) + " levels, more than the " +
                  std::to_string(model::kMaxGroupHierarchyDepth) + " allowed: " + join(p.chain);
    return InvalidArgument(std::string(info.kind) + " \"" + name + "\" is invalid: spec.parentCompositePodGroupName: " + what);
  }
  return Status::Ok();
}

}  // namespace

std::map<std::string, int64_t> QuotaUsage(const Json& quota, const std::vector<const Json*>& pods) {
  std::map<std::string, int64_t> used;
  const Json hard = quota.value("spec", Json::object()).value("hard", Json::object());
  for (const Tracked& t : kTracked) {
    if (!hard.contains(t.key)) continue;
    int64_t sum = 0;
    for (const Json* p : pods) {
      const std::string phase = p->value("status", Json::object()).value("phase", "");
      if (phase == "Succeeded" || phase == "Failed") continue;
      if (!InScope(quota, (*p)["spec"].value("priorityClassName", ""))) continue;
      sum = model::SaturatingAdd(sum, *t.resource ? PodRequest(*p, t.resource, t.milli) : 1);
    }
    used[t.key] = sum;
  }
  return used;
}

std::string QuotaAmount(const std::string& key, int64_t amount) {
  for (const Tracked& t : kTracked) {
    if (key != t.key) continue;
    if (t.milli) return amount % 1000 == 0 ? std::to_string(amount / 1000) : std::to_string(amount) + "m";
    if (*t.resource == '\0' || amount == 0) break;
    // Bytes in the largest binary suffix that divides them, as a Quantity prints them.
    const char* suffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int i = 0;
    while (i < 6 && amount % 1024 == 0) {
      amount /= 1024;
      ++i;
    }
    return std::to_string(amount) + suffixes[i];
  }
  return std::to_string(amount);
}

// ValidateEventCreate: an event is about an object of its own namespace (a core Event's
// involvedObject, an events.k8s.io Event's regarding), so that no one writes events into, or
// about, a namespace they cannot write to.
namespace {
Status ValidateEventNamespace(const ResourceInfo& info, const Json& event) {
  const bool v1 = info.group == "events.k8s.io";
  const char* field = v1 ? "regarding" : "involvedObject";
  const auto about = event.find(field);
  if (about == event.end() || !about->is_object()) return Status::Ok();
  const auto ns = about->find("namespace");
  if (ns == about->end() || !ns->is_string() || ns->get_ref<const std::string&>().empty()) return Status::Ok();
  const std::string event_ns = event["metadata"].value("namespace", "");
  if (ns->get_ref<const std::string&>() == event_ns) return Status::Ok();
  return InvalidArgument(std::string(info.kind) + (v1 ? ".events.k8s.io" : "") + " " + Json(NameOf(event)).dump() +
                         " is invalid: " + field + ".namespace: Invalid value: " + ns->dump() +
                         ": does not match event.namespace");
}
}  // namespace

// The Priority admission plugin for the scheduling groups, by the rule pods follow
// (admission::DecidePriority): a PodGroup's and a CompositePodGroup's spec, and every template of
// a Workload, get the priority and preemption policy their class (or the global default)
// decides; a priority or policy that disagrees is refused. Decided once, at creation: an update
// keeps them, as a pod's.
Status AdmitGroupPriorities(const ResourceInfo& info, Json& object, const Json* old, store::Store& store) {
  if (!object.contains("spec") || !object["spec"].is_object()) object["spec"] = Json::object();
  const std::string what = std::string(info.kind) + " \"" + NameOf(object) + "\"";
  auto decide = [&](Json& holder, const std::string& where) -> Status {
    ARBITER_ASSIGN_OR_RETURN(d, ResolvePriorityOf(holder, what, where, store));
    if (!d.class_name.empty()) holder["priorityClassName"] = d.class_name;
    holder["priority"] = d.priority;
    holder["preemptionPolicy"] = std::string(model::PreemptionPolicyName(d.policy));
    return Status::Ok();
  };
  Json& spec = object["spec"];
  if (info.StoreKey() != "workloads") {
    if (old != nullptr) {
      const Json before = old->value("spec", Json::object());
      for (const char* k : {"priority", "priorityClassName", "preemptionPolicy"}) {
        if (before.contains(k)) {
          spec[k] = before[k];
        } else {
          spec.erase(k);
        }
      }
      return Status::Ok();
    }
    return decide(spec, std::string(info.kind) + " spec");
  }
  // A Workload's templates, nested (bounded by the decoder's depth limit, checked before this).
  std::function<Status(Json&, const std::string&, int)> walk = [&](Json& parent, const std::string& path, int depth) -> Status {
    if (depth > 8) return Status::Ok();
    for (const char* list : {"podGroupTemplates", "compositePodGroupTemplates"}) {
      if (!parent.contains(list) || !parent[list].is_array()) continue;
      size_t i = 0;
      for (Json& t : parent[list]) {
        const std::string at = path + list + "[" + std::to_string(i++) + "]";
        if (!t.is_object()) continue;
        ARBITER_RETURN_IF_ERROR(decide(t, "Workload " + at));
        ARBITER_RETURN_IF_ERROR(walk(t, at + ".", depth + 1));
      }
    }
    return Status::Ok();
  };
  return walk(spec, "spec.", 0);
}

StatusOr<std::vector<std::string>> AuditStoredObjects(store::Store& store) {
  std::vector<std::string> report;
  std::set<std::string> seen;  // a resource served in several versions is audited once
  for (const ResourceInfo& info : Resources()) {
    if (info.review || info.AnotherVersion()) continue;
    const std::string resource = info.StoreKey();
    if (!seen.insert(resource).second) continue;
    ARBITER_ASSIGN_OR_RETURN(list, store.List(resource, ""));
    for (const store::Object& o : list.items) {
      const std::string where = std::string(info.kind) + " " + (o.ns.empty() ? "" : o.ns + "/") + o.name;
      const Json md = o.body->value("metadata", Json::object());
      for (const manifest::FieldProblem& p : manifest::ObjectMetaProblems(info.kind, md, /*check_name=*/true)) {
        report.push_back(where + ": stored before the rule held: " + p.message);
      }
      if (resource != "podgroups" && resource != "compositepodgroups" && resource != "workloads") continue;
      // Decided again as on creation: the stored priority and policy are what is checked.
      Json decided = o.body.Copy();
      std::function<void(Json&, int)> strip = [&](Json& holder, int depth) {
        if (!holder.is_object() || depth > 8) return;
        holder.erase("priority");
        holder.erase("preemptionPolicy");
        for (const char* list_name : {"podGroupTemplates", "compositePodGroupTemplates"}) {
          if (holder.contains(list_name) && holder[list_name].is_array()) {
            for (Json& t : holder[list_name]) strip(t, depth + 1);
          }
        }
      };
      if (!decided.contains("spec") || !decided["spec"].is_object()) continue;
      strip(decided["spec"], 0);
      if (Status st = AdmitGroupPriorities(info, decided, nullptr, store); !st.ok()) {
        report.push_back(where + ": its priority cannot be decided (" + st.message() + "); left as stored");
        continue;
      }
      if (decided == o.body) continue;
      auto updated = store.Update(resource, o.ns, o.name, decided, o.revision);
      if (!updated.ok() && updated.status().code() != StatusCode::kConflict) return updated.status();
      report.push_back(where + ": priority decided again by its class (was " +
                       (*o.body.tree())["spec"].value("priority", Json(nullptr)).dump() + ", now " +
                       decided["spec"].value("priority", Json(nullptr)).dump() + ")");
    }
  }
  return report;
}

// The secret strategy: stringData, a write-only convenience, is folded into data (base64) and
// never stored; the type defaults to Opaque (SetDefaults_Secret).
Status AdmitSecret(Json& secret) {
  if (secret.contains("stringData")) {
    const Json& given = secret["stringData"];
    if (!given.is_null()) {
      if (!given.is_object()) {
        return InvalidArgument("Secret \"" + NameOf(secret) + "\" is invalid: stringData: Invalid value: must be a map of strings");
      }
      Json& data = secret["data"];
      if (!data.is_object()) data = Json::object();
      for (const auto& [key, value] : given.items()) {
        if (!value.is_string()) {
          return InvalidArgument("Secret \"" + NameOf(secret) + "\" is invalid: stringData[" + key + "]: Invalid value: must be a string");
        }
        data[key] = base::Base64Encode(value.get<std::string>());
      }
    }
    secret.erase("stringData");
  }
  if (!secret.contains("type") || !secret["type"].is_string() || secret["type"].get<std::string>().empty()) secret["type"] = "Opaque";
  return Status::Ok();
}

// SetDefaults_NodeStatus: a node that states its capacity and not its allocatable can give all of
// it; the spec is always present.
void DefaultNode(Json& node) {
  if (!node.contains("spec") || node["spec"].is_null()) node["spec"] = Json::object();
  if (!node.contains("status") || !node["status"].is_object()) return;
  Json& status = node["status"];
  if ((!status.contains("allocatable") || status["allocatable"].is_null()) && status.contains("capacity") &&
      status["capacity"].is_object()) {
    status["allocatable"] = status["capacity"];
  }
}

void InstallAdmission(ApiServer& server) {
  server.AddAdmission([](const ResourceInfo& info, Json& object, const Json* old, store::Store& store) -> Status {
    if (info.StoreKey() == "priorityclasses") return ValidatePriorityClass(object, old, store);
    if (info.StoreKey() == "pods") return AdmitPod(object, old, store);
    if (info.StoreKey() == "resourcequotas") return ValidateQuota(object);
    if (info.StoreKey() == "events") return ValidateEventNamespace(info, object);
    if (info.StoreKey() == "services") return AdmitService(object, old, store);
    if (info.StoreKey() == "secrets") return AdmitSecret(object);
    if (info.StoreKey() == "nodes") DefaultNode(object);
    ARBITER_RETURN_IF_ERROR(AdmitWorkload(info, object, old));
    if (info.StoreKey() == "podgroups" || info.StoreKey() == "compositepodgroups" || info.StoreKey() == "workloads") {
      ARBITER_RETURN_IF_ERROR(AdmitGroupPriorities(info, object, old, store));
    }
    if (info.StoreKey() == "podgroups" || info.StoreKey() == "compositepodgroups") {
      return ValidateGroupHierarchy(info, object, store);
    }
    return Status::Ok();
  });
}

Status EnsureBootstrapObjects(ApiServer& server) {
  auto ensure = [&](const std::string& path, const Json& body) -> Status {
    Request r;
    r.method = "POST";
    r.path = path;
    r.body = body.dump();
    const Response out = server.Handle(r);
    if (out.code == 201 || out.code == 409) return Status::Ok();
    return Internal("creating the built-in " + body.value("kind", "") + " " + body["metadata"].value("name", "") +
                    " failed: " + out.body);
  };
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    const Json body = {{"apiVersion", "v1"},
                       {"kind", "Namespace"},
                       {"metadata", {{"name", ns}, {"labels", {{"kubernetes.io/metadata.name", ns}}}}},
                       {"spec", {{"finalizers", {"kubernetes"}}}}};
    ARBITER_RETURN_IF_ERROR(ensure("/api/v1/namespaces", body));
  }
  for (const Json& o : DefaultRbacObjects()) {
    const std::string plural = o["kind"] == "ClusterRole" ? "clusterroles" : "clusterrolebindings";
    ARBITER_RETURN_IF_ERROR(ensure("/apis/rbac.authorization.k8s.io/v1/" + plural, o));
  }
  for (const model::PriorityClass& pc : admission::BuiltinPriorityClasses()) {
    const Json body = {{"apiVersion", "scheduling.k8s.io/v1"},
                       {"kind", "PriorityClass"},
                       {"metadata", {{"name", pc.name}}},
                       {"value", pc.value},
                       {"globalDefault", pc.global_default},
                       {"description", pc.description},
                       {"preemptionPolicy", "PreemptLowerPriority"}};
    ARBITER_RETURN_IF_ERROR(ensure("/apis/scheduling.k8s.io/v1/priorityclasses", body));
  }
  return Status::Ok();
}

}  // namespace arbiter::api
