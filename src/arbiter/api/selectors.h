// Label and field selectors of list and watch requests (`?labelSelector=`, `?fieldSelector=`),
// parsed as kube-apiserver parses them, and matched against objects in their wire form.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "arbiter/base/json.h"

#include "arbiter/base/status.h"

namespace arbiter::api {

struct Requirement {
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist };
  std::string key;
  Op op = Op::kEquals;
  std::vector<std::string> values;
};

class Selector {
 public:
  // "a=b,c!=d,e in (f,g),h notin (i),j,!k"; an empty text selects everything.
  static StatusOr<Selector> ParseLabels(const std::string& text);
  // "spec.nodeName=n1,status.phase!=Running"; only the fields listed by SupportedFields.
  static StatusOr<Selector> ParseFields(const std::string& text, const std::string& resource);

  bool MatchesLabels(const nlohmann::json& object) const;
  bool MatchesFields(const nlohmann::json& object) const;
  bool empty() const { return requirements_.empty(); }
  size_t size() const { return requirements_.size(); }
  // The value a requirement pins `key` to (key=v, key==v, key in (v)), if any: a list may then
  // read only the objects indexed under that value.
  std::optional<std::string> Pinned(const std::string& key) const;
  // The first requirement that pins a key to one value, as "key=value" (the labels index's form).
  std::optional<std::string> FirstPinned() const;

 private:
  std::vector<Requirement> requirements_;
};

// A field of `object` as field selectors compare it: a string or boolean as text; an absent field as
// "" (spec.nodeName= selects unbound pods), or "false" for spec.unschedulable.
std::string SelectableField(const nlohmann::json& object, const std::string& field);

// A metav1.LabelSelector object in its string form ("app=web,tier in (a,b),!legacy"), terms
// sorted as apimachinery's FormatLabelSelector prints them; "" for an empty selector.
std::string FormatLabelSelector(const nlohmann::json& selector);

// The field selectors a resource supports: metadata.name and metadata.namespace everywhere,
// spec.nodeName and status.phase for pods, spec.unschedulable for nodes, involvedObject.* and
// reason/type for events.
std::vector<std::string> SupportedFields(const std::string& resource);

}  // namespace arbiter::api
