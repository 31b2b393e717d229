// The fast YAML reader of `arbiter plan`: one YAML document (the loader splits a stream at its
// `---` lines first) read from yaml-cpp's parser events into a ValueTree, instead of building a
// yaml-cpp tree (whose nodes cost far more time and memory than the parse). A sequence under the
// top-level key `items` (a List's) is streamed: each item is handed over as soon as it is
// parsed and its tree reused, so that memory follows the decoded model, not the text.
//
// The parser is the reference reader's own, so the reader accepts and refuses exactly what the
// reference reader does. What it leaves to the reference reader — a parse error, anchors,
// aliases, tags, keys that are not plain or quoted scalars, a key given twice, deep nesting —
// makes it step aside, and the loader reads the document again with the reference reader, which
// reports exactly what it always reported.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "arbiter/manifest/value_tree.h"

namespace arbiter::manifest {

class YamlTextReader {
 public:
  // Called with each item of a top-level `items` sequence (1-based `index`), in order, while the
  // document is read; the view is valid during the call.
  using ItemFn = std::function<void(const Node& item, int index)>;

  enum class Result { kDocument, kStepAside };
  // Reads the first document of `text` into `tree`. The items of a top-level `items` sequence go
  // to `on_item` instead (the tree holds a kDeferred value there, and `items_streamed()` says
  // so). A text with no document, or a null one, is stepped aside from (the reference reader says
  // whether it is broken). After a step-aside, items may have been handed over already.
  Result Read(std::string_view text, ValueTree& tree, const ItemFn& on_item);
  bool items_streamed() const { return items_streamed_; }
  const std::string& why() const { return why_; }

 private:
  bool items_streamed_ = false;
  std::string why_;
};

}  // namespace arbiter::manifest
