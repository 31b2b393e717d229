// The field decoders that several kinds share: metadata, resource lists, selectors, affinity,
// tolerations, topology spread.
#include "arbiter/manifest/object_decoder.h"

#include <algorithm>

#include "arbiter/manifest/names.h"

namespace arbiter::manifest::internal {

using model::Quantity;

void ObjectDecoder::CheckLabels(const model::LabelMap& labels, const std::string& path) {
  for (const auto& [k, v] : labels) {
    std::string err = ValidateLabelKey(k);
    if (!err.empty()) d_.Error(path, "invalid label key \"" + k + "\": " + err);
    err = ValidateLabelValue(v);
    if (!err.empty()) d_.Error(path + "." + k, "invalid label value \"" + v + "\": " + err);
  }
}

ObjectDecoder::Meta ObjectDecoder::DecodeMeta(const Node& root, bool namespaced) {
  Meta m;
  Node md = D::Child(root, "metadata");
  if (!D::Present(md)) {
    d_.Error("metadata.name", "is required");
    return m;
  }
  if (!d_.ExpectMap(md, "metadata")) return m;
  if (auto name = d_.String(D::Child(md, "name"), "metadata.name")) {
    m.name = *name;
    // The kind's rule, as the API applies it (manifest/names.h).
    const Node kind = D::Child(root, "kind");
    const std::string kind_name = kind.IsScalar() ? kind.Scalar() : "";
    std::vector<std::string> problems = NameProblems(NameRuleOf(kind_name), m.name);
    if (problems.empty() && m.name.size() > MaxNameLength(kind_name)) {
      problems.push_back("must be no more than " + std::to_string(MaxNameLength(kind_name)) + " characters");
    }
    for (const std::string& p : problems) d_.Error("metadata.name", "invalid name \"" + m.name + "\": " + p);
  } else if (!D::Present(D::Child(md, "name"))) {
    d_.Error("metadata.name", "is required");
  }
  if (namespaced) {
    m.ns = d_.String(D::Child(md, "namespace"), "metadata.namespace").value_or("default");
    std::string err = ValidateDnsLabel(m.ns);
    if (!err.empty()) d_.Error("metadata.namespace", "invalid namespace \"" + m.ns + "\": " + err);
  }
  m.uid = d_.String(D::Child(md, "uid"), "metadata.uid").value_or("");
  m.labels = model::LabelMap(d_.StringMap(D::Child(md, "labels"), "metadata.labels"));
  CheckLabels(m.labels, "metadata.labels");
  m.creation = d_.Timestamp(D::Child(md, "creationTimestamp"), "metadata.creationTimestamp");
  m.deletion = d_.Timestamp(D::Child(md, "deletionTimestamp"), "metadata.deletionTimestamp");
  return m;
}

model::Resources ObjectDecoder::DecodeResourceList(const Node& n, const std::string& path) {
  model::Resources r;
  if (!D::Present(n) || !d_.ExpectMap(n, path)) return r;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar()) {
      d_.Error(path, "resource names must be strings");
      continue;
    }
    const std::string name = it->first.Scalar();
    const std::string field = path + "." + name;
    std::string err = ValidateLabelKey(name);
    if (!err.empty()) {
      d_.Error(field, "invalid resource name: " + err);
      continue;
    }
    auto q = d_.Quantity(it->second, field);
    if (!q) {
      if (!D::Present(it->second)) d_.Error(field, "must be a quantity, not null");
      continue;
    }
    if (q->milli() < 0) {
      d_.Error(field, "must be greater than or equal to 0, not " + q->ToString());
      continue;
    }
    if ((name == model::kResourceCpu ? q->milli() : q->value()) > model::kMaxResourceAmount) {
      d_.Error(field, q->ToString() + " is larger than Arbiter accepts (2^53 " +
                          (name == model::kResourceCpu ? "millicores" : "units") + ")");
      continue;
    }
    if (name == model::kResourceCpu) {
      r.milli_cpu = q->milli();
    } else {
      if (name != model::kResourceMemory && name != model::kResourceEphemeralStorage &&
          name != model::kResourcePods && q->milli() % 1000 != 0) {
        d_.Error(field, "extended resources must be whole numbers, not " + q->ToString());
        continue;
      }
      r.Set(name, q->value());
    }
  }
  return r;
}

std::vector<model::Requirement> ObjectDecoder::DecodeRequirements(const Node& n,
                                                                  const std::string& path,
                                                                  bool node_selector,
                                                                  bool fields) {
  std::vector<model::Requirement> out;
  if (!D::Present(n) || !d_.ExpectSeq(n, path)) return out;
  size_t i = 0;
  for (const auto& e : n) {
    const std::string p = Idx(path, i++);
    if (!d_.ExpectMap(e, p)) continue;
    model::Requirement r;
    auto key = d_.String(D::Child(e, "key"), p + ".key");
    if (!key) {
      if (!D::Present(D::Child(e, "key"))) d_.Error(p + ".key", "is required");
      continue;
    }
    r.key = *key;
    if (fields) {
      if (r.key != "metadata.name") {
        d_.Error(p + ".key", "unsupported field \"" + r.key + "\" (only metadata.name)");
        continue;
      }
    } else if (std::string err = ValidateLabelKey(r.key); !err.empty()) {
      d_.Error(p + ".key", "invalid label key \"" + r.key + "\": " + err);
      continue;
    }
    auto op_name = d_.String(D::Child(e, "operator"), p + ".operator");
    if (!op_name) {
      if (!D::Present(D::Child(e, "operator"))) d_.Error(p + ".operator", "is required");
      continue;
    }
    auto op = model::ParseSelectorOp(*op_name);
    if (!op || (!node_selector && (*op == model::SelectorOp::kGt || *op == model::SelectorOp::kLt))) {
      d_.Error(p + ".operator", "unsupported operator \"" + *op_name + "\" (want " +
                                    (node_selector ? "In, NotIn, Exists, DoesNotExist, Gt or Lt"
                                                   : "In, NotIn, Exists or DoesNotExist") + ")");
      continue;
    }
    r.op = *op;
    r.values = d_.StringList(D::Child(e, "values"), p + ".values");
    switch (r.op) {
      case model::SelectorOp::kIn:
      case model::SelectorOp::kNotIn:
        if (r.values.empty()) {
          d_.Error(p + ".values", "must be non-empty for operator " + *op_name);
          continue;
        }
        break;
      case model::SelectorOp::kExists:
      case model::SelectorOp::kDoesNotExist:
        if (!r.values.empty()) {
          d_.Error(p + ".values", "must be empty for operator " + *op_name);
          continue;
        }
        break;
      case model::SelectorOp::kGt:
      case model::SelectorOp::kLt: {
        bool ok = r.values.size() == 1 && !r.values[0].empty();
        if (ok) {
          const std::string& v = r.values[0];
          size_t start = (v[0] == '-' || v[0] == '+') ? 1 : 0;
          ok = start < v.size() && std::all_of(v.begin() + static_cast<long>(start), v.end(),
                                               [](char c) { return c >= '0' && c <= '9'; });
        }
        if (!ok) {
          d_.Error(p + ".values", "must hold exactly one integer for operator " + *op_name);
          continue;
        }
        break;
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<model::LabelSelector> ObjectDecoder::DecodeLabelSelector(const Node& n,
                                                                       const std::string& path) {
  if (!D::Present(n)) return std::nullopt;
  if (!d_.ExpectMap(n, path)) return std::nullopt;
  model::LabelSelector s;
  model::LabelMap ml(d_.StringMap(D::Child(n, "matchLabels"), path + ".matchLabels"));
  CheckLabels(ml, path + ".matchLabels");
  for (const auto& [k, v] : ml) s.requirements.push_back({k, model::SelectorOp::kIn, {v}});
  auto exprs = DecodeRequirements(D::Child(n, "matchExpressions"), path + ".matchExpressions",
                                  /*node_selector=*/false, /*fields=*/false);
  s.requirements.insert(s.requirements.end(), exprs.begin(), exprs.end());
  return s;
}

std::optional<model::NodeSelectorTerm> ObjectDecoder::DecodeNodeSelectorTerm(
    const Node& n, const std::string& path) {
  if (!d_.ExpectMap(n, path)) return std::nullopt;
  model::NodeSelectorTerm t;
  t.match_expressions = DecodeRequirements(D::Child(n, "matchExpressions"),
                                           path + ".matchExpressions", true, false);
  t.match_fields = DecodeRequirements(D::Child(n, "matchFields"), path + ".matchFields", true, true);
  return t;
}

model::PodAffinityTerm ObjectDecoder::DecodePodAffinityTerm(const Node& n,
                                                            const std::string& path) {
  model::PodAffinityTerm t;
  if (!d_.ExpectMap(n, path)) return t;
  t.label_selector = DecodeLabelSelector(D::Child(n, "labelSelector"), path + ".labelSelector");
  t.namespaces = d_.StringList(D::Child(n, "namespaces"), path + ".namespaces");
  t.namespace_selector =
      DecodeLabelSelector(D::Child(n, "namespaceSelector"), path + ".namespaceSelector");
  auto tk = d_.String(D::Child(n, "topologyKey"), path + ".topologyKey");
  if (!tk || tk->empty()) {
    d_.Error(path + ".topologyKey", "is required");
  } else if (std::string err = ValidateLabelKey(*tk); !err.empty()) {
    d_.Error(path + ".topologyKey", "invalid label key \"" + *tk + "\": " + err);
  } else {
    t.topology_key = *tk;
  }
  t.match_label_keys = d_.StringList(D::Child(n, "matchLabelKeys"), path + ".matchLabelKeys");
  t.mismatch_label_keys =
      d_.StringList(D::Child(n, "mismatchLabelKeys"), path + ".mismatchLabelKeys");
  return t;
}

model::PodAffinityRules ObjectDecoder::DecodePodAffinityRules(const Node& n,
                                                              const std::string& path) {
  model::PodAffinityRules rules;
  if (!D::Present(n) || !d_.ExpectMap(n, path)) return rules;
  const std::string req = path + ".requiredDuringSchedulingIgnoredDuringExecution";
  Node rn = D::Child(n, "requiredDuringSchedulingIgnoredDuringExecution");
  if (D::Present(rn) && d_.ExpectSeq(rn, req)) {
    size_t i = 0;
    for (const auto& e : rn) rules.required.push_back(DecodePodAffinityTerm(e, Idx(req, i++)));
  }
  const std::string pref = path + ".preferredDuringSchedulingIgnoredDuringExecution";
  Node pn = D::Child(n, "preferredDuringSchedulingIgnoredDuringExecution");
  if (D::Present(pn) && d_.ExpectSeq(pn, pref)) {
    size_t i = 0;
    for (const auto& e : pn) {
      const std::string p = Idx(pref, i++);
      if (!d_.ExpectMap(e, p)) continue;
      model::WeightedPodAffinityTerm w;
      auto weight = d_.Int(D::Child(e, "weight"), p + ".weight", 1, 100);
      if (!weight) {
        if (!D::Present(D::Child(e, "weight"))) d_.Error(p + ".weight", "is required");
        continue;
      }
      w.weight = static_cast<int32_t>(*weight);
      w.term = DecodePodAffinityTerm(D::Child(e, "podAffinityTerm"), p + ".podAffinityTerm");
      rules.preferred.push_back(std::move(w));
    }
  }
  return rules;
}

void ObjectDecoder::DecodeAffinity(const Node& n, const std::string& path,
                                   model::Affinity& a) {
  if (!D::Present(n) || !d_.ExpectMap(n, path)) return;
  Node na = D::Child(n, "nodeAffinity");
  const std::string nap = path + ".nodeAffinity";
  if (D::Present(na) && d_.ExpectMap(na, nap)) {
    Node req = D::Child(na, "requiredDuringSchedulingIgnoredDuringExecution");
    const std::string reqp = nap + ".requiredDuringSchedulingIgnoredDuringExecution";
    if (D::Present(req) && d_.ExpectMap(req, reqp)) {
      model::NodeSelector sel;
      Node terms = D::Child(req, "nodeSelectorTerms");
      const std::string tp = reqp + ".nodeSelectorTerms";
      if (!D::Present(terms) || (terms.IsSequence() && terms.size() == 0)) {
        d_.Error(tp, "must have at least one term");
      } else if (d_.ExpectSeq(terms, tp)) {
        size_t i = 0;
        for (const auto& t : terms) {
          if (auto term = DecodeNodeSelectorTerm(t, Idx(tp, i))) sel.terms.push_back(*term);
          ++i;
        }
      }
      a.node_affinity.required = std::move(sel);
    }
    Node pref = D::Child(na, "preferredDuringSchedulingIgnoredDuringExecution");
    const std::string pp = nap + ".preferredDuringSchedulingIgnoredDuringExecution";
    if (D::Present(pref) && d_.ExpectSeq(pref, pp)) {
      size_t i = 0;
      for (const auto& e : pref) {
        const std::string p = Idx(pp, i++);
        if (!d_.ExpectMap(e, p)) continue;
        auto weight = d_.Int(D::Child(e, "weight"), p + ".weight", 1, 100);
        if (!weight) {
          if (!D::Present(D::Child(e, "weight"))) d_.Error(p + ".weight", "is required");
          continue;
        }
        Node pe = D::Child(e, "preference");
        if (!D::Present(pe)) {
          d_.Error(p + ".preference", "is required");
          continue;
        }
        if (auto term = DecodeNodeSelectorTerm(pe, p + ".preference")) {
          a.node_affinity.preferred.push_back({static_cast<int32_t>(*weight), *term});
        }
      }
    }
  }
  a.pod_affinity = DecodePodAffinityRules(D::Child(n, "podAffinity"), path + ".podAffinity");
  a.pod_anti_affinity =
      DecodePodAffinityRules(D::Child(n, "podAntiAffinity"), path + ".podAntiAffinity");
}

std::vector<model::Toleration> ObjectDecoder::DecodeTolerations(const Node& n,
                                                                const std::string& path) {
  std::vector<model::Toleration> out;
  if (!D::Present(n) || !d_.ExpectSeq(n, path)) return out;
  size_t i = 0;
  for (const auto& e : n) {
    const std::string p = Idx(path, i++);
    if (!d_.ExpectMap(e, p)) continue;
    model::Toleration t;
    t.key = d_.String(D::Child(e, "key"), p + ".key").value_or("");
    std::string op = d_.String(D::Child(e, "operator"), p + ".operator").value_or("Equal");
    if (op == "Exists") {
      t.op = model::Toleration::Op::kExists;
    } else if (op == "Equal") {
      t.op = model::Toleration::Op::kEqual;
    } else {
      d_.Error(p + ".operator", "unsupported operator \"" + op + "\" (want Equal or Exists)");
      continue;
    }
    t.value = d_.String(D::Child(e, "value"), p + ".value").value_or("");
    if (t.op == model::Toleration::Op::kExists && !t.value.empty()) {
      d_.Error(p + ".value", "must be empty when operator is Exists");
      continue;
    }
    if (t.key.empty() && t.op != model::Toleration::Op::kExists) {
      d_.Error(p + ".operator", "must be Exists when key is empty");
      continue;
    }
    if (auto eff = d_.String(D::Child(e, "effect"), p + ".effect"); eff && !eff->empty()) {
      t.effect = model::ParseTaintEffect(*eff);
      if (!t.effect) {
        d_.Error(p + ".effect", "unsupported effect \"" + *eff +
                                    "\" (want NoSchedule, PreferNoSchedule or NoExecute)");
        continue;
      }
    }
    t.toleration_seconds = d_.Int(D::Child(e, "tolerationSeconds"), p + ".tolerationSeconds",
                                  INT64_MIN, INT64_MAX);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<model::TopologySpreadConstraint> ObjectDecoder::DecodeSpread(const Node& n,
                                                                         const std::string& path) {
  std::vector<model::TopologySpreadConstraint> out;
  if (!D::Present(n) || !d_.ExpectSeq(n, path)) return out;
  size_t i = 0;
  for (const auto& e : n) {
    const std::string p = Idx(path, i++);
    if (!d_.ExpectMap(e, p)) continue;
    model::TopologySpreadConstraint c;
    const size_t errors_before = d_.error_count();
    auto skew = d_.Int(D::Child(e, "maxSkew"), p + ".maxSkew", 1, kInt32Max);
    if (!skew && !D::Present(D::Child(e, "maxSkew"))) d_.Error(p + ".maxSkew", "is required");
    if (skew) c.max_skew = static_cast<int32_t>(*skew);
    auto tk = d_.String(D::Child(e, "topologyKey"), p + ".topologyKey");
    if (!tk || tk->empty()) {
      d_.Error(p + ".topologyKey", "is required");
    } else {
      c.topology_key = *tk;
    }
    auto wu = d_.String(D::Child(e, "whenUnsatisfiable"), p + ".whenUnsatisfiable");
    if (!wu) {
      d_.Error(p + ".whenUnsatisfiable", "is required (DoNotSchedule or ScheduleAnyway)");
    } else if (*wu == "DoNotSchedule") {
      c.when_unsatisfiable = model::UnsatisfiableAction::kDoNotSchedule;
    } else if (*wu == "ScheduleAnyway") {
      c.when_unsatisfiable = model::UnsatisfiableAction::kScheduleAnyway;
    } else {
      d_.Error(p + ".whenUnsatisfiable",
               "unsupported value \"" + *wu + "\" (want DoNotSchedule or ScheduleAnyway)");
    }
    c.label_selector = DecodeLabelSelector(D::Child(e, "labelSelector"), p + ".labelSelector");
    if (auto md = d_.Int(D::Child(e, "minDomains"), p + ".minDomains", 1, kInt32Max)) {
      c.min_domains = static_cast<int32_t>(*md);
      if (c.when_unsatisfiable != model::UnsatisfiableAction::kDoNotSchedule) {
        d_.Error(p + ".minDomains", "may only be set when whenUnsatisfiable is DoNotSchedule");
      }
    }
    auto policy = [&](std::string_view field, model::NodeInclusionPolicy& out_policy) {
      auto v = d_.String(D::Child(e, field), p + "." + std::string(field));
      if (!v) return;
      if (*v == "Honor") {
        out_policy = model::NodeInclusionPolicy::kHonor;
      } else if (*v == "Ignore") {
        out_policy = model::NodeInclusionPolicy::kIgnore;
      } else {
        d_.Error(p + "." + std::string(field),
                 "unsupported value \"" + *v + "\" (want Honor or Ignore)");
      }
    };
    policy("nodeAffinityPolicy", c.node_affinity_policy);
    policy("nodeTaintsPolicy", c.node_taints_policy);
    c.match_label_keys = d_.StringList(D::Child(e, "matchLabelKeys"), p + ".matchLabelKeys");
    if (d_.error_count() == errors_before) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace arbiter::manifest::internal
