// A compact read-only tree of one parsed value (a JSON value, or a YAML document without
// anchors, aliases or tags), which the decoders read through a manifest::Node view: one array of
// values linked by index, no allocation per value. The fast readers (json_text.h, yaml_text.h)
// fill it; a top-level List's items may be deferred to a LazySequence that reads them one at a
// time into a tree of their own.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "arbiter/manifest/decoder.h"

namespace arbiter::manifest {

class ValueTree {
 public:
  enum class Type : uint8_t {
    kNull,
    kPlain,   // an unquoted scalar: a JSON number or boolean, a YAML plain scalar
    kString,  // a quoted scalar: a JSON string, a YAML quoted or block scalar
    kObject,
    kArray,
    kDeferred,  // a List's items, read by deferred()
  };
  struct Value {
    Type type = Type::kNull;
    bool key_quoted = true;  // an object member's key was quoted (always, in JSON)
    uint32_t size = 0;       // object members or array elements
    uint32_t first = 0;      // the first child (0: none; the root, 0, is nobody's child)
    uint32_t next = 0;       // the next sibling (0: none)
    std::string_view key;    // an object member's key
    std::string_view text;   // a scalar's text
  };

  const Value& at(uint32_t i) const { return values_[i]; }
  bool empty() const { return values_.empty(); }
  // The view of the root value (an undefined node when empty).
  Node root() const { return values_.empty() ? Node() : Node(*this, 0); }
  // The streamed items of a deferred List (Type::kDeferred).
  LazySequence* deferred() const { return deferred_; }
  void Clear() {
    values_.clear();
    if (blocks_.size() > 1) {
      std::swap(blocks_.front(), blocks_.back());  // the one block kept is reused from its start
      blocks_.resize(1);
    }
    big_.clear();
    used_ = 0;
    deferred_ = nullptr;
  }

  // Whether object `at` has a key twice (the reference readers refuse that).
  bool HasDuplicateKey(uint32_t at) const {
    const Value& o = values_[at];
    if (o.size < 2) return false;
    std::vector<std::string_view> keys;
    keys.reserve(o.size);
    for (uint32_t c = o.first; c != 0; c = values_[c].next) keys.push_back(values_[c].key);
    if (keys.size() <= 12) {
      for (size_t i = 0; i < keys.size(); ++i) {
        for (size_t j = i + 1; j < keys.size(); ++j) {
          if (keys[i] == keys[j]) return true;
        }
      }
      return false;
    }
    std::sort(keys.begin(), keys.end());
    return std::adjacent_find(keys.begin(), keys.end()) != keys.end();
  }

  // For the readers that fill it.
  std::vector<Value>& values() { return values_; }
  // Appends a value (to be filled) as the last child of `parent`, whose last child so far is
  // `last` (0: none; updated). Indexes stay valid as the tree grows; references do not.
  uint32_t AddChild(uint32_t parent, uint32_t& last) {
    const auto c = static_cast<uint32_t>(values_.size());
    values_.emplace_back();
    if (last == 0) {
      values_[parent].first = c;
    } else {
      values_[last].next = c;
    }
    last = c;
    ++values_[parent].size;
    return c;
  }
  void set_deferred(LazySequence* items) { deferred_ = items; }
  // A copy of `s` that lives as long as the tree's contents (until Clear).
  std::string_view Keep(std::string_view s) {
    if (s.size() > kBlock / 4) {
      big_.push_back(std::make_unique<char[]>(s.size()));
      std::copy(s.begin(), s.end(), big_.back().get());
      return {big_.back().get(), s.size()};
    }
    if (blocks_.empty() || used_ + s.size() > kBlock) {
      blocks_.push_back(std::make_unique<char[]>(kBlock));
      used_ = 0;
    }
    char* at = blocks_.back().get() + used_;
    std::copy(s.begin(), s.end(), at);
    used_ += s.size();
    return {at, s.size()};
  }

 private:
  static constexpr size_t kBlock = 64 * 1024;
  std::vector<Value> values_;
  std::vector<std::unique_ptr<char[]>> blocks_;  // Keep's storage; the last one is being filled
  std::vector<std::unique_ptr<char[]>> big_;
  size_t used_ = 0;
  LazySequence* deferred_ = nullptr;
};

}  // namespace arbiter::manifest
