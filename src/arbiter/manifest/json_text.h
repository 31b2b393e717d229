// The fast JSON reader of `arbiter plan`: JSON text (one or several values, as kubectl prints
// them) read with simdjson's On-Demand parser into a compact tree per document, which the
// decoders read through a manifest::Node view. A top-level `kind: List` is streamed: its items
// are read one at a time, as the decoder asks for them, into a tree that is reused, so that
// memory follows the decoded model and not the text (a 5000-node dump is hundreds of MiB).
//
// The reader is exact or it steps aside: whatever it is not certain to read as the reference
// reader (nlohmann's, in loader.cc) does — a syntax error, a key given twice in one object,
// nesting deeper than the loader's bound, a number the parser cannot classify — makes it stop
// and say where the document began, so that the loader reads that document again with the
// reference reader and reports exactly what it always reported. The trees hold no copies of the
// text: strings and numbers are views into it (a string with escapes is unescaped into the
// tree's own storage).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/manifest/decoder.h"

namespace arbiter::manifest {

class JsonTree {
 public:
  enum class Type : uint8_t { kNull, kBool, kNumber, kString, kObject, kArray, kDeferred };
  struct Value {
    Type type = Type::kNull;
    uint32_t size = 0;       // object members or array elements
    uint32_t first = 0;      // the first child (0: none; the root, 0, is nobody's child)
    uint32_t next = 0;       // the next sibling (0: none)
    std::string_view key;    // an object member's key
    std::string_view text;   // a string's characters; a number as written; "true" / "false"
  };

  const Value& at(uint32_t i) const { return values_[i]; }
  bool empty() const { return values_.empty(); }
  // The view of the root value (an undefined node when empty).
  Node root() const { return values_.empty() ? Node() : Node(*this, 0); }
  // The streamed items of a deferred List (Type::kDeferred).
  LazySequence* deferred() const { return deferred_; }
  void Clear() {
    values_.clear();
    owned_.clear();
    deferred_ = nullptr;
  }

 private:
  friend class JsonTextReader;
  std::vector<Value> values_;
  std::deque<std::string> owned_;  // unescaped strings (stable addresses)
  LazySequence* deferred_ = nullptr;
};

class JsonTextReader {
 public:
  // Reads `text`; `capacity` bytes are readable from text.data() (at least text.size() plus
  // simdjson's padding, else the reader makes a padded copy).
  JsonTextReader(std::string_view text, size_t capacity);
  ~JsonTextReader();
  JsonTextReader(const JsonTextReader&) = delete;
  JsonTextReader& operator=(const JsonTextReader&) = delete;

  enum class Result { kDocument, kEnd, kStepAside };
  // Reads the next document into `tree`. A top-level object of kind List has its `items` deferred:
  // iterating them (once, in order) reads them. Before the next call, `Finish` must be called.
  Result Next(JsonTree& tree);
  // Reads what the decoder left of the document (the rest of a streamed List), so that the whole
  // text is checked. Returns false when the reader stepped aside somewhere in the document
  // (including while the decoder read the items).
  bool Finish();
  // Where the document last returned began (a byte offset in the text), and why the reader
  // stepped aside (empty if it did not).
  size_t document_start() const { return document_start_; }
  const std::string& why() const { return why_; }

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  size_t document_start_ = 0;
  std::string why_;
};

}  // namespace arbiter::manifest
