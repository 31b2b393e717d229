// Type-checked field access over YAML and JSON trees, and Kubernetes name validation.
#include "arbiter/manifest/decoder.h"

#include <algorithm>

#include <charconv>
#include <new>

#include "arbiter/base/time.h"
#include "arbiter/manifest/value_tree.h"

namespace arbiter::manifest {

namespace {

nlohmann::json PlainScalar(const std::string& t) {
  if (t.empty() || t == "~" || t == "null" || t == "Null" || t == "NULL") return nullptr;
  if (t == "true" || t == "True" || t == "TRUE") return true;
  if (t == "false" || t == "False" || t == "FALSE") return false;
  const char* b = t.data();
  const char* e = b + t.size();
  const char* digits = (*b == '-' || *b == '+') ? b + 1 : b;
  if (digits < e && std::all_of(digits, e, [](char c) { return c >= '0' && c <= '9'; })) {
    int64_t v = 0;
    const auto r = std::from_chars(*b == '+' ? b + 1 : b, e, v);
    if (r.ec == std::errc() && r.ptr == e) return v;
    return t;  // out of int64's range: kept as written
  }
  // A float as YAML 1.2's core schema writes one.
  bool digit = false, bad = false, exp = false;
  for (const char* p = digits; p < e && !bad; ++p) {
    if (*p >= '0' && *p <= '9') {
      digit = true;
    } else if (*p == '.' && !exp) {
    } else if ((*p == 'e' || *p == 'E') && digit && !exp) {
      exp = true;
      if (p + 1 < e && (p[1] == '-' || p[1] == '+')) ++p;
    } else {
      bad = true;
    }
  }
  if (digit && !bad && t.find_first_of(".eE") != std::string::npos) {
    double v = 0;
    const auto r = std::from_chars(*b == '+' ? b + 1 : b, e, v);
    if (r.ec == std::errc() && r.ptr == e) return v;
  }
  return t;
}

}  // namespace

nlohmann::json ToJson(const Node& n) {
  if (!n.IsDefined() || n.IsNull()) return nullptr;
  if (n.IsMap()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& e : n) out[e.first.Scalar()] = ToJson(e.second);
    return out;
  }
  if (n.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : n) out.push_back(ToJson(e));
    return out;
  }
  return n.Quoted() ? nlohmann::json(n.Scalar()) : PlainScalar(n.Scalar());
}

void Decoder::Unknown(std::string_view field) {
  if (unknown_ == UnknownFields::kIgnore) return;
  const size_t dot = field.find_last_of('.');
  std::string name(dot == std::string_view::npos ? field : field.substr(dot + 1));
  const std::string message = "unknown field \"" + name + "\"";
  if (unknown_ == UnknownFields::kError || warnings_ == nullptr) {
    Error(field, message + " (--validate=warn reads on without it)");
    return;
  }
  warnings_->push_back(prefix_ + ": " + std::string(field) + ": " + message + ", ignored");
}

void Decoder::KnownFields(const Node& map, std::string_view path, std::span<const std::string_view> known) {
  if (!map.IsMap()) return;
  for (const auto& e : map) {
    if (!e.first.IsScalar()) continue;
    const std::string key = e.first.Scalar();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    Unknown(path.empty() ? key : std::string(path) + "." + key);
  }
}

void Decoder::Error(std::string_view field, std::string_view message) {
  std::string line = prefix_;
  if (!field.empty()) {
    line += ": ";
    line += field;
  }
  line += ": ";
  line += message;
  errors_->push_back(std::move(line));
}

// ---- Node

Node::Node(const YAML::Node& yaml) : kind_(yaml.IsDefined() ? Kind::kYaml : Kind::kUndefined), yaml_(yaml) {}

Node& Node::operator=(const Node& other) {
  if (this == &other) return *this;
  kind_ = other.kind_;
  yaml_.~Node();
  new (&yaml_) YAML::Node(other.yaml_);
  json_ = other.json_;
  key_ = other.key_;
  tree_ = other.tree_;
  index_ = other.index_;
  lazy_ = other.lazy_;
  return *this;
}

bool Node::IsDefined() const { return kind_ != Kind::kUndefined; }

namespace {
using TreeType = ValueTree::Type;
}  // namespace

bool Node::IsNull() const {
  switch (kind_) {
    case Kind::kYaml: return yaml_.IsNull();
    case Kind::kJson: return json_->is_null();
    case Kind::kTree: return tree_->at(index_).type == TreeType::kNull;
    default: return false;
  }
}

bool Node::IsMap() const {
  return (kind_ == Kind::kYaml && yaml_.IsMap()) || (kind_ == Kind::kJson && json_->is_object()) ||
         (kind_ == Kind::kTree && tree_->at(index_).type == TreeType::kObject);
}

bool Node::IsSequence() const {
  return (kind_ == Kind::kYaml && yaml_.IsSequence()) || (kind_ == Kind::kJson && json_->is_array()) ||
         (kind_ == Kind::kTree && (tree_->at(index_).type == TreeType::kArray ||
                                   tree_->at(index_).type == TreeType::kDeferred)) ||
         kind_ == Kind::kLazy;
}

bool Node::IsScalar() const {
  switch (kind_) {
    case Kind::kYaml: return yaml_.IsScalar();
    case Kind::kJson: return json_->is_primitive() && !json_->is_null();
    case Kind::kJsonKey:
    case Kind::kTreeKey: return true;
    case Kind::kTree: {
      const TreeType t = tree_->at(index_).type;
      return t == TreeType::kPlain || t == TreeType::kString;
    }
    default: return false;
  }
}

bool Node::Quoted() const {
  switch (kind_) {
    case Kind::kYaml: return yaml_.Tag() == "!";
    case Kind::kJson: return json_->is_string();
    case Kind::kJsonKey: return true;
    case Kind::kTreeKey: return tree_->at(index_).key_quoted;
    case Kind::kTree: return tree_->at(index_).type == TreeType::kString;
    default: return false;
  }
}

std::string Node::Scalar() const {
  switch (kind_) {
    case Kind::kYaml: return yaml_.IsScalar() ? yaml_.Scalar() : std::string();
    case Kind::kJsonKey: return *key_;
    case Kind::kJson:
      if (json_->is_string()) return json_->get_ref<const std::string&>();
      if (json_->is_boolean()) return json_->get<bool>() ? "true" : "false";
      if (json_->is_number()) return json_->dump();
      return "";
    case Kind::kTreeKey: return std::string(tree_->at(index_).key);
    case Kind::kTree: return IsScalar() ? std::string(tree_->at(index_).text) : std::string();
    default: return "";
  }
}

size_t Node::size() const {
  switch (kind_) {
    case Kind::kYaml: return yaml_.size();
    case Kind::kJson: return json_->is_structured() ? json_->size() : 0;
    case Kind::kTree: {
      const ValueTree::Value& v = tree_->at(index_);
      return v.type == TreeType::kObject || v.type == TreeType::kArray ? v.size : 0;
    }
    default: return 0;  // a LazySequence does not know its size before it is read
  }
}

YAML::Mark Node::Mark() const { return kind_ == Kind::kYaml ? yaml_.Mark() : YAML::Mark::null_mark(); }

Node Node::Child(std::string_view key) const {
  if (kind_ == Kind::kTree) {
    const ValueTree::Value& v = tree_->at(index_);
    if (v.type != TreeType::kObject) return Node();
    for (uint32_t c = v.first; c != 0; c = tree_->at(c).next) {
      if (tree_->at(c).key == key) return tree_->at(c).type == TreeType::kDeferred && tree_->deferred() != nullptr
                                             ? Node(*tree_->deferred())
                                             : Node(*tree_, c);
    }
    return Node();
  }
  if (kind_ == Kind::kJson) {
    if (!json_->is_object()) return Node();
    auto it = json_->find(key);
    return it == json_->end() ? Node() : Node(*it);
  }
  if (kind_ != Kind::kYaml || !yaml_.IsMap()) return Node();
  for (auto it = yaml_.begin(); it != yaml_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return Node(it->second);
  }
  return Node();
}

Node::Iterator Node::At(bool end) const {
  Iterator it;
  if (kind_ == Kind::kYaml) {
    const YAML::Node& y = yaml_;
    it.yaml_map_ = y.IsMap();
    it.yaml_it_ = end ? y.end() : y.begin();
  } else if (kind_ == Kind::kJson && json_->is_structured()) {
    it.json_ = true;
    it.json_container_ = json_;
    it.json_it_ = end ? json_->cend() : json_->cbegin();
  } else if (kind_ == Kind::kTree) {
    const ValueTree::Value& v = tree_->at(index_);
    if (v.type == TreeType::kDeferred && tree_->deferred() != nullptr) return Node(*tree_->deferred()).At(end);
    if (v.type == TreeType::kObject || v.type == TreeType::kArray) {
      it.tree_ = tree_;
      it.tree_map_ = v.type == TreeType::kObject;
      it.child_ = end ? 0 : v.first;
    }
  } else if (kind_ == Kind::kLazy) {
    it.lazy_ = lazy_;
    if (!end) it.current_ = lazy_->Next();  // an undefined node: the sequence is at its end
  }
  return it;
}

Node::Iterator Node::begin() const { return At(false); }
Node::Iterator Node::end() const { return At(true); }

Node::Iterator& Node::Iterator::operator++() {
  if (tree_ != nullptr) {
    child_ = tree_->at(child_).next;
  } else if (lazy_ != nullptr) {
    current_ = lazy_->Next();
  } else if (json_) {
    ++json_it_;
  } else {
    ++yaml_it_;
  }
  loaded_ = false;
  return *this;
}

bool Node::Iterator::operator==(const Iterator& o) const {
  if (tree_ != nullptr || o.tree_ != nullptr) return tree_ == o.tree_ && child_ == o.child_;
  if (lazy_ != nullptr || o.lazy_ != nullptr) {
    // Only the end compares equal to anything: a lazy sequence is read once.
    return lazy_ == o.lazy_ && !current_.IsDefined() && !o.current_.IsDefined();
  }
  if (json_ != o.json_) return false;
  if (json_) return json_container_ == o.json_container_ && (json_container_ == nullptr || json_it_ == o.json_it_);
  return yaml_it_ == o.yaml_it_;
}

const Node::Entry& Node::Iterator::Load() const {
  if (loaded_) return entry_;
  entry_ = Entry{};
  if (tree_ != nullptr) {
    if (tree_map_) {
      entry_.first.kind_ = Kind::kTreeKey;
      entry_.first.tree_ = tree_;
      entry_.first.index_ = child_;
      entry_.second = Node(*tree_, child_);
    } else {
      static_cast<Node&>(entry_) = Node(*tree_, child_);
    }
  } else if (lazy_ != nullptr) {
    static_cast<Node&>(entry_) = current_;
  } else if (json_) {
    if (json_container_->is_object()) {
      entry_.first.kind_ = Kind::kJsonKey;
      entry_.first.key_ = &json_it_.key();
      entry_.second = Node(json_it_.value());
    } else {
      static_cast<Node&>(entry_) = Node(*json_it_);
    }
  } else {
    const auto& v = *yaml_it_;
    if (yaml_map_) {
      entry_.first = Node(v.first);
      entry_.second = Node(v.second);
    } else {
      static_cast<Node&>(entry_) = Node(static_cast<const YAML::Node&>(v));
    }
  }
  loaded_ = true;
  return entry_;
}

// ---- Decoder

namespace {
const char* TypeName(const Node& n) {
  if (n.IsMap()) return "an object";
  if (n.IsSequence()) return "a list";
  if (n.IsScalar()) return "a scalar";
  return "null";
}
bool Quoted(const Node& n) { return n.Quoted(); }
}  // namespace

std::optional<std::string> Decoder::String(const Node& n, std::string_view path) {
  if (!Present(n)) return std::nullopt;
  if (!n.IsScalar() || (strict_strings_ && !Quoted(n))) {
    Error(path, std::string("must be a string, not ") + (n.IsScalar() ? "a number or boolean" : TypeName(n)));
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<int64_t> Decoder::Int(const Node& n, std::string_view path, int64_t min,
                                    int64_t max) {
  if (!Present(n)) return std::nullopt;
  if (!n.IsScalar() || Quoted(n)) {
    Error(path, std::string("must be an integer, not ") + (Quoted(n) ? "a string" : TypeName(n)));
    return std::nullopt;
  }
  const std::string& s = n.Scalar();
  int64_t v = 0;
  const char* begin = s.data();
  if (!s.empty() && s[0] == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    Error(path, "integer \"" + s + "\" is out of range");
    return std::nullopt;
  }
  if (ec != std::errc() || ptr != s.data() + s.size() || begin == s.data() + s.size()) {
    Error(path, "must be an integer, not \"" + s + "\"");
    return std::nullopt;
  }
  if (v < min || v > max) {
    Error(path, "value " + s + " is out of range [" + std::to_string(min) + ", " +
                    std::to_string(max) + "]");
    return std::nullopt;
  }
  return v;
}

std::optional<bool> Decoder::Bool(const Node& n, std::string_view path) {
  if (!Present(n)) return std::nullopt;
  if (n.IsScalar() && !Quoted(n)) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  Error(path, "must be true or false");
  return std::nullopt;
}

std::optional<model::Quantity> Decoder::Quantity(const Node& n, std::string_view path) {
  if (!Present(n)) return std::nullopt;
  if (!n.IsScalar()) {
    Error(path, std::string("must be a quantity such as 500m or 1Gi, not ") + TypeName(n));
    return std::nullopt;
  }
  auto q = model::Quantity::Parse(n.Scalar());
  if (!q.ok()) {
    Error(path, q.status().message());
    return std::nullopt;
  }
  return *q;
}

std::optional<int64_t> Decoder::Timestamp(const Node& n, std::string_view path) {
  if (!Present(n)) return std::nullopt;
  if (!n.IsScalar()) {
    Error(path, std::string("must be an RFC 3339 timestamp, not ") + TypeName(n));
    return std::nullopt;
  }
  auto t = ParseRfc3339(n.Scalar());
  if (!t.ok()) {
    Error(path, t.status().message());
    return std::nullopt;
  }
  return *t;
}

bool Decoder::ExpectMap(const Node& n, std::string_view path) {
  if (!Present(n) || n.IsMap()) return true;
  Error(path, std::string("must be an object, not ") + TypeName(n));
  return false;
}

bool Decoder::ExpectSeq(const Node& n, std::string_view path) {
  if (!Present(n) || n.IsSequence()) return true;
  Error(path, std::string("must be a list, not ") + TypeName(n));
  return false;
}

std::vector<std::pair<std::string, std::string>> Decoder::StringMap(const Node& n,
                                                                    std::string_view path) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!Present(n) || !ExpectMap(n, path)) return out;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar()) {
      Error(path, "keys must be strings");
      continue;
    }
    const std::string key = it->first.Scalar();
    const std::string field = std::string(path) + "." + key;
    if (it->second.IsNull()) {
      out.emplace_back(key, "");
      continue;
    }
    auto v = String(it->second, field);
    if (v) out.emplace_back(key, *v);
  }
  return out;
}

std::vector<std::string> Decoder::StringList(const Node& n, std::string_view path) {
  std::vector<std::string> out;
  if (!Present(n) || !ExpectSeq(n, path)) return out;
  size_t i = 0;
  for (const auto& e : n) {
    auto v = String(e, std::string(path) + "[" + std::to_string(i++) + "]");
    if (v) out.push_back(*v);
  }
  return out;
}

namespace {
bool IsAlnumLower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsAlnumLower(c) || (c >= 'A' && c <= 'Z'); }
}  // namespace

std::string ValidateDnsLabel(std::string_view s) {
  if (s.empty()) return "must not be empty";
  if (s.size() > 63) return "must be no more than 63 characters";
  for (char c : s) {
    if (!IsAlnumLower(c) && c != '-') {
      return "must consist of lower case alphanumeric characters or '-' (RFC 1123 label)";
    }
  }
  if (!IsAlnumLower(s.front()) || !IsAlnumLower(s.back())) {
    return "must start and end with an alphanumeric character (RFC 1123 label)";
  }
  return "";
}

std::string ValidateDnsSubdomain(std::string_view s) {
  if (s.empty()) return "must not be empty";
  if (s.size() > 253) return "must be no more than 253 characters";
  for (char c : s) {
    if (!IsAlnumLower(c) && c != '-' && c != '.') {
      return "must consist of lower case alphanumeric characters, '-' or '.' (RFC 1123 subdomain)";
    }
  }
  // Every dot-separated label starts and ends alphanumeric ("a..b" and "a.-b" are not names).
  for (size_t at = 0;;) {
    const size_t dot = s.find('.', at);
    const std::string_view label = s.substr(at, dot == std::string_view::npos ? std::string_view::npos : dot - at);
    if (label.empty() || !IsAlnumLower(label.front()) || !IsAlnumLower(label.back())) {
      return "must start and end with an alphanumeric character (RFC 1123 subdomain)";
    }
    if (dot == std::string_view::npos) break;
    at = dot + 1;
  }
  return "";
}

namespace {
std::string ValidateQualifiedNamePart(std::string_view s) {
  if (s.empty()) return "name part must not be empty";
  if (s.size() > 63) return "name part must be no more than 63 characters";
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') {
      return "name part must consist of alphanumeric characters, '-', '_' or '.'";
    }
  }
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) {
    return "name part must start and end with an alphanumeric character";
  }
  return "";
}
}  // namespace

std::string ValidateLabelKey(std::string_view s) {
  auto slash = s.find('/');
  if (slash == std::string_view::npos) return ValidateQualifiedNamePart(s);
  std::string prefix_err = ValidateDnsSubdomain(s.substr(0, slash));
  if (!prefix_err.empty()) return "prefix " + prefix_err;
  return ValidateQualifiedNamePart(s.substr(slash + 1));
}

std::string ValidateLabelValue(std::string_view s) {
  if (s.empty()) return "";
  return ValidateQualifiedNamePart(s);
}

}  // namespace arbiter::manifest
