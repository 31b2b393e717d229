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
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/manifest/value_tree.h"

namespace arbiter::manifest {

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
  Result Next(ValueTree& tree);
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
