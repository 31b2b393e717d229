// PriorityClass, PodDisruptionBudget and Namespace.
#include "arbiter/manifest/object_decoder.h"

namespace arbiter::manifest::internal {

using model::Quantity;

void ObjectDecoder::DecodePriorityClass(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/false);
  model::PriorityClass pc;
  pc.name = m.name;
  Node v = D::Child(root, "value");
  if (!D::Present(v)) {
    d_.Error("value", "is required");
  } else if (auto value = d_.Int(v, "value", kInt32Min, kInt32Max)) {
    pc.value = static_cast<int32_t>(*value);
  }
  pc.global_default = d_.Bool(D::Child(root, "globalDefault"), "globalDefault").value_or(false);
  if (auto pp = d_.String(D::Child(root, "preemptionPolicy"), "preemptionPolicy")) {
    if (auto policy = model::ParsePreemptionPolicy(*pp)) {
      pc.preemption_policy = *policy;
    } else {
      d_.Error("preemptionPolicy",
               "unsupported value \"" + *pp + "\" (want PreemptLowerPriority or Never)");
    }
  }
  pc.description = d_.String(D::Child(root, "description"), "description").value_or("");
  out_.priority_classes.push_back({std::move(pc), std::move(origin)});
}

std::optional<model::IntOrPercent> ObjectDecoder::DecodeIntOrPercent(const Node& n,
                                                                     const std::string& path) {
  if (!D::Present(n)) return std::nullopt;
  if (!n.IsScalar()) {
    d_.Error(path, "must be an integer or a percentage such as \"50%\"");
    return std::nullopt;
  }
  std::string s = n.Scalar();
  model::IntOrPercent v;
  if (!s.empty() && s.back() == '%') {
    v.percent = true;
    s.pop_back();
  }
  bool digits = !s.empty() && s.size() <= 9 &&
                std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || (v.percent && std::stoi(s) > 100)) {
    d_.Error(path, "must be a non-negative integer or a percentage between 0% and 100%, not \"" +
                       n.Scalar() + "\"");
    return std::nullopt;
  }
  v.value = std::stoi(s);
  return v;
}

void ObjectDecoder::DecodePdb(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/true);
  model::PodDisruptionBudget pdb;
  pdb.ns = m.ns;
  pdb.name = m.name;
  Node spec = D::Child(root, "spec");
  if (d_.ExpectMap(spec, "spec")) {
    auto sel = DecodeLabelSelector(D::Child(spec, "selector"), "spec.selector");
    if (sel) pdb.selector = *sel;
    pdb.min_available = DecodeIntOrPercent(D::Child(spec, "minAvailable"), "spec.minAvailable");
    pdb.max_unavailable = DecodeIntOrPercent(D::Child(spec, "maxUnavailable"), "spec.maxUnavailable");
    if (pdb.min_available && pdb.max_unavailable) {
      d_.Error("spec.maxUnavailable", "may not be set together with spec.minAvailable");
    }
  }
  Node status = D::Child(root, "status");
  if (d_.ExpectMap(status, "status")) {
    if (auto da = d_.Int(D::Child(status, "disruptionsAllowed"), "status.disruptionsAllowed", 0,
                         kInt32Max)) {
      pdb.disruptions_allowed = static_cast<int32_t>(*da);
    }
    Node dp = D::Child(status, "disruptedPods");
    if (D::Present(dp) && d_.ExpectMap(dp, "status.disruptedPods")) {
      for (auto it = dp.begin(); it != dp.end(); ++it) {
        if (it->first.IsScalar()) pdb.disrupted_pods.push_back(pdb.ns + "/" + it->first.Scalar());
      }
    }
  }
  out_.pdbs.push_back({std::move(pdb), std::move(origin)});
}

void ObjectDecoder::DecodeNamespace(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/false);  // an RFC 1123 label (manifest/names.h)
  out_.namespaces.push_back({model::Namespace{m.name, m.labels}, std::move(origin)});
}

}  // namespace arbiter::manifest::internal
