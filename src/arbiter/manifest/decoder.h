// A checked reader over a parsed YAML (or JSON) tree. Every accessor validates the shape and
// type of what it reads and records a problem, with the field's path, instead of throwing;
// callers read on and collect every problem of a document in one pass.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "arbiter/model/quantity.h"

namespace arbiter::manifest {

class Decoder {
 public:
  Decoder(std::string prefix, std::vector<std::string>* errors)
      : prefix_(std::move(prefix)), errors_(errors) {}

  void set_prefix(std::string prefix) { prefix_ = std::move(prefix); }
  // Strings must be quoted scalars (JSON written by a program, where 5 is a number, not "5").
  void set_strict_strings(bool strict) { strict_strings_ = strict; }
  // Records "PREFIX: FIELD: MESSAGE".
  void Error(std::string_view field, std::string_view message);
  size_t error_count() const { return errors_->size(); }

  // The child `key` of a mapping, or an undefined node if absent or `node` is not a mapping.
  static YAML::Node Child(const YAML::Node& node, std::string_view key);
  static bool Present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

  // Each returns nullopt when the field is absent (or null), and also when it is malformed,
  // after recording the problem.
  std::optional<std::string> String(const YAML::Node& n, std::string_view path);
  std::optional<int64_t> Int(const YAML::Node& n, std::string_view path, int64_t min, int64_t max);
  std::optional<bool> Bool(const YAML::Node& n, std::string_view path);
  std::optional<model::Quantity> Quantity(const YAML::Node& n, std::string_view path);
  std::optional<int64_t> Timestamp(const YAML::Node& n, std::string_view path);
  // True if `n` is absent or a mapping; records an error otherwise.
  bool ExpectMap(const YAML::Node& n, std::string_view path);
  bool ExpectSeq(const YAML::Node& n, std::string_view path);
  // A mapping of strings to strings (labels, nodeSelector).
  std::vector<std::pair<std::string, std::string>> StringMap(const YAML::Node& n,
                                                             std::string_view path);
  std::vector<std::string> StringList(const YAML::Node& n, std::string_view path);

 private:
  bool strict_strings_ = false;
  std::string prefix_;
  std::vector<std::string>* errors_;
};

// Name checks from apimachinery's validation, returning an empty string when valid or the reason.
std::string ValidateDnsSubdomain(std::string_view s);
std::string ValidateDnsLabel(std::string_view s);
std::string ValidateLabelKey(std::string_view s);
std::string ValidateLabelValue(std::string_view s);

}  // namespace arbiter::manifest
