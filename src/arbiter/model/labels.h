// Labels and the selectors that match them: LabelSelector (matchLabels + matchExpressions with
// In, NotIn, Exists, DoesNotExist) and NodeSelector terms (which also allow Gt and Lt and
// matchFields on metadata.name), with the semantics of apimachinery's labels package and
// component-helpers' nodeaffinity.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace arbiter::model {

// Labels sorted by key with unique keys, so lookups are binary searches and iteration is
// deterministic.
class LabelMap {
 public:
  LabelMap() = default;
  // Later duplicates of a key replace earlier ones.
  explicit LabelMap(std::vector<std::pair<std::string, std::string>> entries);

  const std::string* Find(std::string_view key) const;
  bool Has(std::string_view key) const { return Find(key) != nullptr; }
  void Set(std::string key, std::string value);
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  const std::vector<std::pair<std::string, std::string>>& entries() const { return entries_; }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }

  friend bool operator==(const LabelMap&, const LabelMap&) = default;

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

enum class SelectorOp { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

std::string_view SelectorOpName(SelectorOp op);
std::optional<SelectorOp> ParseSelectorOp(std::string_view name);

struct Requirement {
  std::string key;
  SelectorOp op = SelectorOp::kIn;
  std::vector<std::string> values;

  // True if `labels` satisfies the requirement (Gt/Lt compare the label's integer value; a
  // label that is not an integer does not match).
  bool Matches(const LabelMap& labels) const;
  // The same test against a single optional value (nullptr = the key is absent).
  bool MatchesValue(const std::string* value) const;
};

// A metav1.LabelSelector. An empty selector matches everything; callers represent a null
// selector (which matches nothing) as std::nullopt.
struct LabelSelector {
  std::vector<Requirement> requirements;  // matchLabels become In requirements
  bool Matches(const LabelMap& labels) const;
  bool empty() const { return requirements.empty(); }
};

// One NodeSelectorTerm: all of its expressions and fields must match. A term with neither
// matches no node.
struct NodeSelectorTerm {
  std::vector<Requirement> match_expressions;
  std::vector<Requirement> match_fields;  // only metadata.name is defined
  bool Matches(const LabelMap& node_labels, std::string_view node_name) const;
};

// A NodeSelector: its terms are ORed.
struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
  bool Matches(const LabelMap& node_labels, std::string_view node_name) const;
};

}  // namespace arbiter::model
