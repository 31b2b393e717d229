// Type-checked field access over yaml-cpp trees, and Kubernetes name validation.
#include "arbiter/manifest/decoder.h"

#include <charconv>

#include "arbiter/base/time.h"

namespace arbiter::manifest {

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

YAML::Node Decoder::Child(const YAML::Node& node, std::string_view key) {
  if (!node.IsDefined() || !node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

namespace {
const char* TypeName(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "an object";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a scalar";
    default: return "null";
  }
}
bool Quoted(const YAML::Node& n) { return n.Tag() == "!"; }
}  // namespace

std::optional<std::string> Decoder::String(const YAML::Node& n, std::string_view path) {
  if (!Present(n)) return std::nullopt;
  if (!n.IsScalar() || (strict_strings_ && !Quoted(n))) {
    Error(path, std::string("must be a string, not ") + (n.IsScalar() ? "a number or boolean" : TypeName(n)));
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<int64_t> Decoder::Int(const YAML::Node& n, std::string_view path, int64_t min,
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

std::optional<bool> Decoder::Bool(const YAML::Node& n, std::string_view path) {
  if (!Present(n)) return std::nullopt;
  if (n.IsScalar() && !Quoted(n)) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  Error(path, "must be true or false");
  return std::nullopt;
}

std::optional<model::Quantity> Decoder::Quantity(const YAML::Node& n, std::string_view path) {
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

std::optional<int64_t> Decoder::Timestamp(const YAML::Node& n, std::string_view path) {
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

bool Decoder::ExpectMap(const YAML::Node& n, std::string_view path) {
  if (!Present(n) || n.IsMap()) return true;
  Error(path, std::string("must be an object, not ") + TypeName(n));
  return false;
}

bool Decoder::ExpectSeq(const YAML::Node& n, std::string_view path) {
  if (!Present(n) || n.IsSequence()) return true;
  Error(path, std::string("must be a list, not ") + TypeName(n));
  return false;
}

std::vector<std::pair<std::string, std::string>> Decoder::StringMap(const YAML::Node& n,
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

std::vector<std::string> Decoder::StringList(const YAML::Node& n, std::string_view path) {
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
  if (!IsAlnumLower(s.front()) || !IsAlnumLower(s.back())) {
    return "must start and end with an alphanumeric character (RFC 1123 subdomain)";
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
