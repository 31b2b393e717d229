// A checked reader over a parsed YAML or JSON tree. Every accessor validates the shape and
// type of what it reads and records a problem, with the field's path, instead of throwing;
// callers read on and collect every problem of a document in one pass.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "arbiter/base/json.h"
#include <yaml-cpp/yaml.h>

#include "arbiter/model/quantity.h"

namespace arbiter::manifest {

class ValueTree;
class LazySequence;

// A read-only view of one node of a document, over any of the trees the decoder reads: a
// yaml-cpp node (YAML files), an nlohmann JSON value (objects as the API server holds them,
// decoded without a detour through text or YAML), or a ValueTree (JSON files, read by the fast
// reader of json_text.h), whose top-level List may be a LazySequence read as it is iterated. A
// view does not own what it views: that must outlive the view. Absent children are undefined
// nodes, as in yaml-cpp.
//
// Scalars read as their text: a JSON number as it prints, a boolean as "true" / "false"; a
// scalar is Quoted when it was written as a string (a JSON string, or a YAML scalar the JSON
// reader tagged "!").
class Node {
 public:
  Node() = default;
  Node(const YAML::Node& yaml);  // NOLINT(google-explicit-constructor): the YAML reader's trees
  explicit Node(const nlohmann::json& json) : kind_(Kind::kJson), json_(&json) {}
  Node(const ValueTree& tree, uint32_t index) : kind_(Kind::kTree), tree_(&tree), index_(index) {}
  explicit Node(LazySequence& seq) : kind_(Kind::kLazy), lazy_(&seq) {}
  Node(const Node&) = default;
  // Rebinds the view. (yaml-cpp's own assignment writes into the node assigned to, changing
  // the document: it is never used here.)
  Node& operator=(const Node& other);

  bool IsDefined() const;
  bool IsNull() const;
  bool IsMap() const;
  bool IsSequence() const;
  bool IsScalar() const;
  bool Quoted() const;
  std::string Scalar() const;  // empty unless IsScalar
  size_t size() const;         // children of a map or sequence
  // Where the node is in its YAML text (a null mark for JSON).
  YAML::Mark Mark() const;
  // The child `key` of a map (undefined if absent or this is not a map).
  Node Child(std::string_view key) const;

  // Iteration as yaml-cpp's: an entry of a sequence is the element itself; an entry of a map
  // has `first` (the key) and `second` (the value).
  struct Entry;
  class Iterator;
  Iterator begin() const;
  Iterator end() const;

 private:
  Iterator At(bool end) const;
  enum class Kind { kUndefined, kYaml, kJson, kJsonKey, kTree, kTreeKey, kLazy };
  Kind kind_ = Kind::kUndefined;
  YAML::Node yaml_;
  const nlohmann::json* json_ = nullptr;
  const std::string* key_ = nullptr;  // kJsonKey: a JSON object's key
  const ValueTree* tree_ = nullptr;    // kTree, kTreeKey (the key of value index_)
  uint32_t index_ = 0;
  LazySequence* lazy_ = nullptr;      // kLazy
  friend class Iterator;
};

struct Node::Entry : Node {
  Node first, second;
};

class Node::Iterator {
 public:
  const Entry& operator*() const { return Load(); }
  const Entry* operator->() const { return &Load(); }
  Iterator& operator++();
  bool operator==(const Iterator& o) const;
  bool operator!=(const Iterator& o) const { return !(*this == o); }

 private:
  friend class Node;
  const Entry& Load() const;
  bool json_ = false;
  bool yaml_map_ = false;
  const ValueTree* tree_ = nullptr;  // iterating a tree's container: the current child, 0 at the end
  uint32_t child_ = 0;
  bool tree_map_ = false;
  LazySequence* lazy_ = nullptr;  // iterating a LazySequence: the current element
  Node current_;
  YAML::const_iterator yaml_it_;
  nlohmann::json::const_iterator json_it_;
  const nlohmann::json* json_container_ = nullptr;
  mutable Entry entry_;
  mutable bool loaded_ = false;
};

// A sequence whose elements are read as it is iterated: once, in order (a streamed List's
// items). Iterating it again continues where the last iteration stopped.
class LazySequence {
 public:
  virtual ~LazySequence() = default;
  // The next element, valid until the next call; an undefined node at the end (or when reading
  // stopped).
  virtual Node Next() = 0;
};

// What a decoder does with a field its kind does not have: refuse the document (kubectl's
// --validate=strict, the default), warn and read on, or read on silently.
enum class UnknownFields { kError, kWarn, kIgnore };

// A node as JSON (YAML's core schema resolves plain scalars: null, booleans, integers and
// floats; quoted scalars stay strings), for the kinds kept as JSON (the workload controllers').
nlohmann::json ToJson(const Node& n);

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
  // Where unknown fields go (kWarn: into `warnings`, which must outlive the decoder).
  void set_unknown_fields(UnknownFields mode, std::vector<std::string>* warnings) {
    unknown_ = mode;
    warnings_ = warnings;
  }
  // A field the kind does not have, at `field` (its full path): an error, a warning or nothing.
  void Unknown(std::string_view field);
  // Checks a mapping's keys against the fields its type has (for the kinds without a published
  // schema: the scheduler's and the kubelet's configuration).
  void KnownFields(const Node& map, std::string_view path, std::initializer_list<std::string_view> known) {
    KnownFields(map, path, std::span<const std::string_view>(known.begin(), known.size()));
  }
  void KnownFields(const Node& map, std::string_view path, std::span<const std::string_view> known);

  // The child `key` of a mapping, or an undefined node if absent or `node` is not a mapping.
  static Node Child(const Node& node, std::string_view key) { return node.Child(key); }
  static bool Present(const Node& n) { return n.IsDefined() && !n.IsNull(); }

  // Each returns nullopt when the field is absent (or null), and also when it is malformed,
  // after recording the problem.
  std::optional<std::string> String(const Node& n, std::string_view path);
  std::optional<int64_t> Int(const Node& n, std::string_view path, int64_t min, int64_t max);
  std::optional<bool> Bool(const Node& n, std::string_view path);
  std::optional<model::Quantity> Quantity(const Node& n, std::string_view path);
  std::optional<int64_t> Timestamp(const Node& n, std::string_view path);
  // True if `n` is absent or a mapping; records an error otherwise.
  bool ExpectMap(const Node& n, std::string_view path);
  bool ExpectSeq(const Node& n, std::string_view path);
  // A mapping of strings to strings (labels, nodeSelector).
  std::vector<std::pair<std::string, std::string>> StringMap(const Node& n,
                                                             std::string_view path);
  std::vector<std::string> StringList(const Node& n, std::string_view path);

 private:
  bool strict_strings_ = false;
  UnknownFields unknown_ = UnknownFields::kError;
  std::vector<std::string>* warnings_ = nullptr;
  std::string prefix_;
  std::vector<std::string>* errors_;
};

// Name checks from apimachinery's validation, returning an empty string when valid or the reason.
std::string ValidateDnsSubdomain(std::string_view s);
std::string ValidateDnsLabel(std::string_view s);
std::string ValidateLabelKey(std::string_view s);
std::string ValidateLabelValue(std::string_view s);

}  // namespace arbiter::manifest
