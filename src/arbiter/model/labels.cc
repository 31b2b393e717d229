// Selector matching, following apimachinery's labels.Requirement.Matches.
#include "arbiter/model/labels.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace arbiter::model {

LabelMap::LabelMap(std::vector<std::pair<std::string, std::string>> entries) {
  for (auto& [k, v] : entries) Set(std::move(k), std::move(v));
}

const std::string* LabelMap::Find(std::string_view key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const auto& e, std::string_view k) { return e.first < k; });
  if (it != entries_.end() && it->first == key) return &it->second;
  return nullptr;
}

void LabelMap::Set(std::string key, std::string value) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const auto& e, const std::string& k) { return e.first < k; });
  if (it != entries_.end() && it->first == key) {
    it->second = std::move(value);
  } else {
    entries_.emplace(it, std::move(key), std::move(value));
  }
}

std::string_view SelectorOpName(SelectorOp op) {
  switch (op) {
    case SelectorOp::kIn: return "In";
    case SelectorOp::kNotIn: return "NotIn";
    case SelectorOp::kExists: return "Exists";
    case SelectorOp::kDoesNotExist: return "DoesNotExist";
    case SelectorOp::kGt: return "Gt";
    case SelectorOp::kLt: return "Lt";
  }
  return "?";
}

std::optional<SelectorOp> ParseSelectorOp(std::string_view name) {
  for (SelectorOp op : {SelectorOp::kIn, SelectorOp::kNotIn, SelectorOp::kExists,
                        SelectorOp::kDoesNotExist, SelectorOp::kGt, SelectorOp::kLt}) {
    if (SelectorOpName(op) == name) return op;
  }
  return std::nullopt;
}

namespace {
std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}
}  // namespace

bool Requirement::MatchesValue(const std::string* value) const {
  switch (op) {
    case SelectorOp::kIn:
      return value != nullptr && std::find(values.begin(), values.end(), *value) != values.end();
    case SelectorOp::kNotIn:
      return value == nullptr || std::find(values.begin(), values.end(), *value) == values.end();
    case SelectorOp::kExists:
      return value != nullptr;
    case SelectorOp::kDoesNotExist:
      return value == nullptr;
    case SelectorOp::kGt:
    case SelectorOp::kLt: {
      if (value == nullptr || values.size() != 1) return false;
      auto have = ParseInt(*value);
      auto want = ParseInt(values[0]);
      if (!have || !want) return false;
      return op == SelectorOp::kGt ? *have > *want : *have < *want;
    }
  }
  return false;
}

bool Requirement::Matches(const LabelMap& labels) const { return MatchesValue(labels.Find(key)); }

bool LabelSelector::Matches(const LabelMap& labels) const {
  for (const auto& r : requirements) {
    if (!r.Matches(labels)) return false;
  }
  return true;
}

bool NodeSelectorTerm::Matches(const LabelMap& node_labels, std::string_view node_name) const {
  if (match_expressions.empty() && match_fields.empty()) return false;
  for (const auto& r : match_expressions) {
    if (!r.Matches(node_labels)) return false;
  }
  const std::string name(node_name);
  for (const auto& r : match_fields) {
    // metadata.name is the only field selector a node supports.
    if (!r.MatchesValue(r.key == "metadata.name" ? &name : nullptr)) return false;
  }
  return true;
}

bool NodeSelector::Matches(const LabelMap& node_labels, std::string_view node_name) const {
  for (const auto& t : terms) {
    if (t.Matches(node_labels, node_name)) return true;
  }
  return false;
}

}  // namespace arbiter::model
