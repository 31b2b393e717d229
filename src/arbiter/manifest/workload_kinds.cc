// The Workload API: Workload, PodGroup, CompositePodGroup.
#include "arbiter/manifest/object_decoder.h"

#include <algorithm>

namespace arbiter::manifest::internal {

using model::Quantity;

ObjectDecoder::GroupPolicyValue ObjectDecoder::DecodeGroupPolicy(const Node& parent,
                                                                 const std::string& prefix,
                                                                 std::string_view count_field) {
  GroupPolicyValue v;
  const std::string path = prefix + "schedulingPolicy";
  const std::string want = "(want basic: {} or gang: {" + std::string(count_field) + ": N})";
  Node n = D::Child(parent, "schedulingPolicy");
  if (!D::Present(n)) {
    d_.Error(path, "is required " + want);
    return v;
  }
  if (!d_.ExpectMap(n, path)) return v;
  const size_t errors_before = d_.error_count();
  bool basic = false;
  bool gang = false;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    if (key == "basic") {
      basic = d_.ExpectMap(it->second, path + ".basic");
    } else if (key == "gang") {
      gang = true;
    } else {
      d_.Error(path, "unknown scheduling policy \"" + key + "\" " + want);
    }
  }
  if (basic && gang) {
    d_.Error(path, "sets both basic and gang; exactly one may be set");
    return v;
  }
  if (gang) {
    const std::string gp = path + ".gang";
    Node g = D::Child(n, "gang");
    if (!D::Present(g)) {
      d_.Error(gp + "." + std::string(count_field), "is required");
      return v;
    }
    if (!d_.ExpectMap(g, gp)) return v;
    const std::string cp = gp + "." + std::string(count_field);
    Node c = D::Child(g, count_field);
    if (!D::Present(c)) {
      d_.Error(cp, "is required");
    } else if (auto count = d_.Int(c, cp, kInt32Min, kInt32Max)) {
      if (*count < 1) {
        d_.Error(cp, "must be at least 1, not " + std::to_string(*count));
      } else {
        v.policy = model::GroupPolicy::kGang;
        v.count = static_cast<int32_t>(*count);
      }
    }
  } else if (!basic && d_.error_count() == errors_before) {
    d_.Error(path, "must set one of basic or gang " + want);
  }
  return v;
}

model::DisruptionMode ObjectDecoder::DecodeDisruptionMode(const Node& parent,
                                                          const std::string& prefix) {
  const std::string path = prefix + "disruptionMode";
  Node n = D::Child(parent, "disruptionMode");
  if (!D::Present(n)) return model::DisruptionMode::kSingle;  // the API default
  if (n.IsScalar()) {
    // v1alpha2 wrote the mode as a string ("Pod" or "PodGroup").
    d_.Error(path, "must be an object, {single: {}} or {all: {}}, not the string \"" + n.Scalar() +
                       "\" (the v1alpha2 form)");
    return model::DisruptionMode::kSingle;
  }
  if (!d_.ExpectMap(n, path)) return model::DisruptionMode::kSingle;
  std::vector<model::DisruptionMode> modes;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    if (key == "single" || key == "all") {
      if (!D::Present(it->second)) {
        d_.Error(path + "." + key, "must be an object ({})");
        continue;
      }
      if (!d_.ExpectMap(it->second, path + "." + key)) continue;
      modes.push_back(key == "all" ? model::DisruptionMode::kAll : model::DisruptionMode::kSingle);
    } else {
      d_.Error(path, "unknown disruption mode \"" + key + "\" (want single: {} or all: {})");
      return model::DisruptionMode::kSingle;
    }
  }
  if (modes.size() > 1) {
    d_.Error(path, "sets both single and all; exactly one may be set");
  } else if (modes.empty() && n.size() == 0) {
    d_.Error(path, "must set one of single: {} or all: {}");
  } else if (modes.size() == 1) {
    return modes[0];
  }
  return model::DisruptionMode::kSingle;
}

model::GroupPriority ObjectDecoder::DecodeGroupPriority(const Node& parent,
                                                        const std::string& prefix) {
  model::GroupPriority p;
  const std::string pcp = prefix + "priorityClassName";
  p.priority_class_name = d_.String(D::Child(parent, "priorityClassName"), pcp).value_or("");
  if (!p.priority_class_name.empty()) {
    if (std::string err = ValidateDnsSubdomain(p.priority_class_name); !err.empty()) {
      d_.Error(pcp, "invalid priority class name \"" + p.priority_class_name + "\": " + err);
    }
  }
  if (auto v = d_.Int(D::Child(parent, "priority"), prefix + "priority", kInt32Min, kInt32Max)) {
    p.spec_priority = static_cast<int32_t>(*v);
  }
  const std::string ppp = prefix + "preemptionPolicy";
  if (auto pp = d_.String(D::Child(parent, "preemptionPolicy"), ppp)) {
    p.spec_preemption_policy = model::ParsePreemptionPolicy(*pp);
    if (!p.spec_preemption_policy) {
      d_.Error(ppp, "unsupported value \"" + *pp + "\" (want PreemptLowerPriority or Never)");
    }
  }
  return p;
}

std::optional<model::WorkloadReference> ObjectDecoder::DecodeWorkloadRef(const Node& parent,
                                                                         const std::string& prefix) {
  const std::string path = prefix + "workloadRef";
  Node n = D::Child(parent, "workloadRef");
  if (!D::Present(n) || !d_.ExpectMap(n, path)) return std::nullopt;
  model::WorkloadReference ref;
  bool ok = true;
  auto name = [&](std::string_view field, bool label, std::string& out) {
    const std::string fp = path + "." + std::string(field);
    auto v = d_.String(D::Child(n, field), fp);
    if (!v || v->empty()) {
      if (!D::Present(D::Child(n, field)) || v) d_.Error(fp, "is required");
      ok = false;
      return;
    }
    if (std::string err = label ? ValidateDnsLabel(*v) : ValidateDnsSubdomain(*v); !err.empty()) {
      d_.Error(fp, "invalid name \"" + *v + "\": " + err);
      ok = false;
      return;
    }
    out = *v;
  };
  name("workloadName", false, ref.workload_name);
  name("templateName", true, ref.template_name);
  if (!ok) return std::nullopt;
  return ref;
}

std::string ObjectDecoder::DecodeParentName(const Node& parent, const std::string& prefix) {
  const std::string path = prefix + "parentCompositePodGroupName";
  auto v = d_.String(D::Child(parent, "parentCompositePodGroupName"), path);
  if (!v) return "";
  if (std::string err = ValidateDnsSubdomain(*v); !err.empty()) {
    d_.Error(path, "invalid name \"" + *v + "\": " + err);
    return "";
  }
  return *v;
}

std::string ObjectDecoder::DecodeTemplateName(const Node& t, const std::string& prefix,
                                              std::map<std::string, std::string>& names) {
  const std::string path = prefix + "name";
  auto v = d_.String(D::Child(t, "name"), path);
  if (!v || v->empty()) {
    if (!D::Present(D::Child(t, "name")) || v) d_.Error(path, "is required");
    return "";
  }
  if (std::string err = ValidateDnsLabel(*v); !err.empty()) {
    d_.Error(path, "invalid template name \"" + *v + "\": " + err);
    return *v;
  }
  if (auto [it, inserted] = names.emplace(*v, path); !inserted) {
    d_.Error(path, "duplicate template name \"" + *v + "\" (also used at " + it->second +
                       "); names must be unique across the Workload");
  }
  return *v;
}

std::vector<model::PodGroupTemplate> ObjectDecoder::DecodePodGroupTemplates(
    const Node& parent, const std::string& prefix, int depth,
    std::map<std::string, std::string>& names) {
  std::vector<model::PodGroupTemplate> out;
  const std::string path = prefix + "podGroupTemplates";
  Node list = D::Child(parent, "podGroupTemplates");
  if (!D::Present(list) || !d_.ExpectSeq(list, path)) return out;
  if (list.size() > model::kMaxTemplatesPerList) {
    d_.Error(path, "has " + std::to_string(list.size()) + " templates; at most " +
                       std::to_string(model::kMaxTemplatesPerList) + " are allowed");
  }
  if (depth > model::kMaxGroupHierarchyDepth && list.size() > 0) {
    d_.Error(path, "templates nest " + std::to_string(depth) + " levels deep; at most " +
                       std::to_string(model::kMaxGroupHierarchyDepth) + " are allowed");
    return out;
  }
  size_t i = 0;
  for (const auto& t : list) {
    const std::string p = Idx(path, i++) + ".";
    if (!d_.ExpectMap(t, p.substr(0, p.size() - 1))) continue;
    model::PodGroupTemplate tmpl;
    tmpl.name = DecodeTemplateName(t, p, names);
    GroupPolicyValue pol = DecodeGroupPolicy(t, p, "minCount");
    tmpl.policy = pol.policy;
    tmpl.min_count = pol.count;
    tmpl.disruption_mode = DecodeDisruptionMode(t, p);
    tmpl.priority = DecodeGroupPriority(t, p);
    out.push_back(std::move(tmpl));
  }
  return out;
}

std::vector<model::CompositePodGroupTemplate> ObjectDecoder::DecodeCompositeTemplates(
    const Node& parent, const std::string& prefix, int depth,
    std::map<std::string, std::string>& names) {
  std::vector<model::CompositePodGroupTemplate> out;
  const std::string path = prefix + "compositePodGroupTemplates";
  Node list = D::Child(parent, "compositePodGroupTemplates");
  if (!D::Present(list) || !d_.ExpectSeq(list, path)) return out;
  if (list.size() > model::kMaxTemplatesPerList) {
    d_.Error(path, "has " + std::to_string(list.size()) + " templates; at most " +
                       std::to_string(model::kMaxTemplatesPerList) + " are allowed");
  }
  // A composite template always has children, so it may sit at most one level above the last.
  if (depth >= model::kMaxGroupHierarchyDepth && list.size() > 0) {
    d_.Error(path, "templates nest more than " + std::to_string(model::kMaxGroupHierarchyDepth) +
                       " levels deep (composite templates at level " + std::to_string(depth) +
                       " leave no room for their children)");
    return out;
  }
  size_t i = 0;
  for (const auto& t : list) {
    const std::string p = Idx(path, i++) + ".";
    if (!d_.ExpectMap(t, p.substr(0, p.size() - 1))) continue;
    model::CompositePodGroupTemplate tmpl;
    tmpl.name = DecodeTemplateName(t, p, names);
    GroupPolicyValue pol = DecodeGroupPolicy(t, p, "minGroupCount");
    tmpl.policy = pol.policy;
    tmpl.min_group_count = pol.count;
    tmpl.disruption_mode = DecodeDisruptionMode(t, p);
    tmpl.priority = DecodeGroupPriority(t, p);
    tmpl.pod_group_templates = DecodePodGroupTemplates(t, p, depth + 1, names);
    tmpl.composite_pod_group_templates = DecodeCompositeTemplates(t, p, depth + 1, names);
    if (!D::Present(D::Child(t, "podGroupTemplates")) &&
        !D::Present(D::Child(t, "compositePodGroupTemplates"))) {
      d_.Error(p + "podGroupTemplates",
               "a composite template needs podGroupTemplates or compositePodGroupTemplates");
    }
    out.push_back(std::move(tmpl));
  }
  return out;
}

void ObjectDecoder::DecodeWorkload(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/true);
  model::Workload w;
  w.ns = m.ns;
  w.name = m.name;
  Node spec = D::Child(root, "spec");
  if (!D::Present(spec)) {
    d_.Error("spec.podGroupTemplates", "is required");
  } else if (d_.ExpectMap(spec, "spec")) {
    Node cr = D::Child(spec, "controllerRef");
    if (D::Present(cr) && d_.ExpectMap(cr, "spec.controllerRef")) {
      model::TypedLocalObjectReference ref;
      ref.api_group = d_.String(D::Child(cr, "apiGroup"), "spec.controllerRef.apiGroup").value_or("");
      ref.kind = d_.String(D::Child(cr, "kind"), "spec.controllerRef.kind").value_or("");
      ref.name = d_.String(D::Child(cr, "name"), "spec.controllerRef.name").value_or("");
      if (ref.kind.empty()) d_.Error("spec.controllerRef.kind", "is required");
      if (ref.name.empty()) d_.Error("spec.controllerRef.name", "is required");
      w.controller_ref = std::move(ref);
    }
    const size_t errors_before = d_.error_count();
    std::map<std::string, std::string> names;
    const bool has_pg = D::Present(D::Child(spec, "podGroupTemplates"));
    const bool has_cpg = D::Present(D::Child(spec, "compositePodGroupTemplates"));
    w.pod_group_templates = DecodePodGroupTemplates(spec, "spec.", 1, names);
    w.composite_pod_group_templates = DecodeCompositeTemplates(spec, "spec.", 1, names);
    if (has_pg && has_cpg) {
      d_.Error("spec.compositePodGroupTemplates",
               "may not be set together with spec.podGroupTemplates; exactly one may be set");
    } else if (!has_pg && !has_cpg) {
      d_.Error("spec.podGroupTemplates", "is required (or spec.compositePodGroupTemplates)");
    } else if (w.pod_group_templates.empty() && w.composite_pod_group_templates.empty() &&
               d_.error_count() == errors_before) {
      d_.Error(has_pg ? "spec.podGroupTemplates" : "spec.compositePodGroupTemplates",
               "must hold at least one template");
    }
  }
  out_.workloads.push_back({std::move(w), std::move(origin)});
}

void ObjectDecoder::DecodePodGroup(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/true);
  model::PodGroup g;
  g.ns = m.ns;
  g.name = m.name;
  Node spec = D::Child(root, "spec");
  if (!D::Present(spec)) {
    d_.Error("spec.schedulingPolicy", "is required (want basic: {} or gang: {minCount: N})");
  } else if (d_.ExpectMap(spec, "spec")) {
    g.workload_ref = DecodeWorkloadRef(spec, "spec.");
    g.parent = DecodeParentName(spec, "spec.");
    if (!g.parent.empty() && !D::Present(D::Child(spec, "workloadRef"))) {
      d_.Error("spec.workloadRef", "is required when spec.parentCompositePodGroupName is set");
    }
    GroupPolicyValue pol = DecodeGroupPolicy(spec, "spec.", "minCount");
    g.policy = pol.policy;
    g.min_count = pol.count;
    g.disruption_mode = DecodeDisruptionMode(spec, "spec.");
    g.priority = DecodeGroupPriority(spec, "spec.");
  }
  out_.pod_groups.push_back({std::move(g), std::move(origin)});
}

void ObjectDecoder::DecodeCompositePodGroup(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/true);
  model::CompositePodGroup g;
  g.ns = m.ns;
  g.name = m.name;
  Node spec = D::Child(root, "spec");
  if (!D::Present(spec)) {
    d_.Error("spec.workloadRef", "is required");
  } else if (d_.ExpectMap(spec, "spec")) {
    if (auto ref = DecodeWorkloadRef(spec, "spec.")) {
      g.workload_ref = std::move(*ref);
    } else if (!D::Present(D::Child(spec, "workloadRef"))) {
      d_.Error("spec.workloadRef", "is required for a CompositePodGroup");
    }
    g.parent = DecodeParentName(spec, "spec.");
    GroupPolicyValue pol = DecodeGroupPolicy(spec, "spec.", "minGroupCount");
    g.policy = pol.policy;
    g.min_group_count = pol.count;
    g.disruption_mode = DecodeDisruptionMode(spec, "spec.");
    g.priority = DecodeGroupPriority(spec, "spec.");
  }
  out_.composite_pod_groups.push_back({std::move(g), std::move(origin)});
}

}  // namespace arbiter::manifest::internal
