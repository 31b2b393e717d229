// Label and field selector parsing and matching.
#include "arbiter/api/selectors.h"

#include <algorithm>
#include <cctype>

namespace arbiter::api {

using Json = nlohmann::json;

namespace {

std::string Trim(std::string s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

// Splits on commas outside parentheses.
std::vector<std::string> SplitTerms(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(Trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!Trim(cur).empty() || !out.empty()) out.push_back(Trim(cur));
  return out;
}

bool ValidKey(const std::string& k) {
  if (k.empty() || k.size() > 316) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

// The value of a dotted field path in `object`, as a string; nullopt when absent.
std::optional<std::string> FieldValue(const Json& object, const std::string& path) {
  const Json* cur = &object;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object() || !cur->contains(part)) return std::nullopt;
    cur = &(*cur)[part];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_boolean()) return cur->get<bool>() ? "true" : "false";
  if (cur->is_number()) return cur->dump();
  if (cur->is_null()) return std::nullopt;
  return cur->dump();
}

bool Matches(const std::vector<Requirement>& reqs, const std::function<std::optional<std::string>(const std::string&)>& get) {
  for (const auto& r : reqs) {
    const std::optional<std::string> v = get(r.key);
    switch (r.op) {
      case Requirement::Op::kEquals:
        if (!v || *v != r.values[0]) return false;
        break;
      case Requirement::Op::kNotEquals:
        if (v && *v == r.values[0]) return false;
        break;
      case Requirement::Op::kIn:
        if (!v || std::find(r.values.begin(), r.values.end(), *v) == r.values.end()) return false;
        break;
      case Requirement::Op::kNotIn:
        if (v && std::find(r.values.begin(), r.values.end(), *v) != r.values.end()) return false;
        break;
      case Requirement::Op::kExists:
        if (!v) return false;
        break;
      case Requirement::Op::kDoesNotExist:
        if (v) return false;
        break;
    }
  }
  return true;
}

}  // namespace

std::vector<std::string> SupportedFields(const std::string& resource) {
  std::vector<std::string> f = {"metadata.name", "metadata.namespace"};
  if (resource == "pods") {
    for (const char* s : {"spec.nodeName", "status.phase", "spec.schedulerName", "status.nominatedNodeName"}) f.push_back(s);
  } else if (resource == "nodes") {
    f.push_back("spec.unschedulable");
  } else if (resource == "events") {
    for (const char* s : {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
                          "reason", "type"}) {
      f.push_back(s);
    }
  }
  return f;
}

StatusOr<Selector> Selector::ParseLabels(const std::string& text) {
  Selector s;
  for (const std::string& term : SplitTerms(text)) {
    if (term.empty()) return InvalidArgument("labelSelector \"" + text + "\": empty requirement");
    Requirement r;
    const size_t paren = term.find('(');
    if (paren != std::string::npos) {
      if (term.back() != ')') return InvalidArgument("labelSelector \"" + text + "\": unclosed \"(\" in \"" + term + "\"");
      std::string head = Trim(term.substr(0, paren));
      if (head.size() > 6 && head.ends_with(" notin")) {
        r.op = Requirement::Op::kNotIn;
        r.key = Trim(head.substr(0, head.size() - 6));
      } else if (head.size() > 3 && head.ends_with(" in")) {
        r.op = Requirement::Op::kIn;
        r.key = Trim(head.substr(0, head.size() - 3));
      } else {
        return InvalidArgument("labelSelector \"" + text + "\": expected \"in\" or \"notin\" in \"" + term + "\"");
      }
      for (const std::string& v : SplitTerms(term.substr(paren + 1, term.size() - paren - 2))) r.values.push_back(v);
    } else if (size_t ne = term.find("!="); ne != std::string::npos) {
      r.op = Requirement::Op::kNotEquals;
      r.key = Trim(term.substr(0, ne));
      r.values = {Trim(term.substr(ne + 2))};
    } else if (size_t eq2 = term.find("=="); eq2 != std::string::npos) {
      r.key = Trim(term.substr(0, eq2));
      r.values = {Trim(term.substr(eq2 + 2))};
    } else if (size_t eq = term.find('='); eq != std::string::npos) {
      r.key = Trim(term.substr(0, eq));
      r.values = {Trim(term.substr(eq + 1))};
    } else if (term[0] == '!') {
      r.op = Requirement::Op::kDoesNotExist;
      r.key = Trim(term.substr(1));
    } else {
      r.op = Requirement::Op::kExists;
      r.key = term;
    }
    if (!ValidKey(r.key)) return InvalidArgument("labelSelector \"" + text + "\": invalid label key \"" + r.key + "\"");
    s.requirements_.push_back(std::move(r));
  }
  return s;
}

StatusOr<Selector> Selector::ParseFields(const std::string& text, const std::string& resource) {
  Selector s;
  const std::vector<std::string> supported = SupportedFields(resource);
  for (const std::string& term : SplitTerms(text)) {
    Requirement r;
    size_t at = term.find("!=");
    size_t width = 2;
    if (at != std::string::npos) {
      r.op = Requirement::Op::kNotEquals;
    } else if ((at = term.find("==")) == std::string::npos) {
      at = term.find('=');
      width = 1;
    }
    if (at == std::string::npos) {
      return InvalidArgument("fieldSelector \"" + text + "\": \"" + term + "\" is not of the form field=value or field!=value");
    }
    r.key = Trim(term.substr(0, at));
    r.values = {Trim(term.substr(at + width))};
    if (std::find(supported.begin(), supported.end(), r.key) == supported.end()) {
      std::string list;
      for (const auto& f : supported) list += (list.empty() ? "" : ", ") + f;
      return InvalidArgument("field label not supported: \"" + r.key + "\" (" + resource + " support " + list + ")");
    }
    s.requirements_.push_back(std::move(r));
  }
  return s;
}

bool Selector::MatchesLabels(const Json& object) const {
  const Json* labels = nullptr;
  if (object.contains("metadata") && object["metadata"].contains("labels") && object["metadata"]["labels"].is_object()) {
    labels = &object["metadata"]["labels"];
  }
  return Matches(requirements_, [&](const std::string& key) -> std::optional<std::string> {
    if (labels == nullptr || !labels->contains(key) || !(*labels)[key].is_string()) return std::nullopt;
    return (*labels)[key].get<std::string>();
  });
}

std::string SelectableField(const Json& object, const std::string& field) {
  std::optional<std::string> v = FieldValue(object, field);
  // Absent string fields compare as "" (spec.nodeName= selects unbound pods), as upstream.
  if (!v) return field == "spec.unschedulable" ? "false" : "";
  return *v;
}

bool Selector::MatchesFields(const Json& object) const {
  return Matches(requirements_, [&](const std::string& key) -> std::optional<std::string> {
    return SelectableField(object, key);
  });
}

std::optional<std::string> Selector::Pinned(const std::string& key) const {
  for (const Requirement& r : requirements_) {
    if (r.key != key) continue;
    if ((r.op == Requirement::Op::kEquals || r.op == Requirement::Op::kIn) && r.values.size() == 1) return r.values[0];
  }
  return std::nullopt;
}

std::optional<std::string> Selector::FirstPinned() const {
  for (const Requirement& r : requirements_) {
    if ((r.op == Requirement::Op::kEquals || r.op == Requirement::Op::kIn) && r.values.size() == 1) {
      return r.key + "=" + r.values[0];
    }
  }
  return std::nullopt;
}

std::string FormatLabelSelector(const nlohmann::json& selector) {
  std::vector<std::string> parts;
  if (const auto it = selector.find("matchLabels"); it != selector.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) parts.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  }
  if (const auto it = selector.find("matchExpressions"); it != selector.end() && it->is_array()) {
    for (const nlohmann::json& e : *it) {
      if (!e.is_object()) continue;
      const std::string key = e.value("key", ""), op = e.value("operator", "");
      std::string values;
      for (const nlohmann::json& v : e.value("values", Json::array())) {
        if (v.is_string()) values += (values.empty() ? "" : ",") + v.get<std::string>();
      }
      if (op == "In") parts.push_back(key + " in (" + values + ")");
      if (op == "NotIn") parts.push_back(key + " notin (" + values + ")");
      if (op == "Exists") parts.push_back(key);
      if (op == "DoesNotExist") parts.push_back("!" + key);
    }
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

}  // namespace arbiter::api
