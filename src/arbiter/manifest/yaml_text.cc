// The fast YAML reader: yaml-cpp's parser events into compact trees, a List's items streamed.
#include "arbiter/manifest/yaml_text.h"

#include <istream>
#include <streambuf>
#include <utility>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

namespace arbiter::manifest {

namespace {

// As the JSON reader: the reference reader takes over well before any nesting bound.
constexpr size_t kMaxYamlDepth = 63;

struct YamlStepAside {
  std::string why;
};

[[noreturn]] void YamlFail(std::string why) { throw YamlStepAside{std::move(why)}; }

// Builds the trees from the parser's events. yaml-cpp tags a quoted or block scalar "!" and a
// plain one "?", and reports plain null scalars (empty, "~", "null", "Null", "NULL") as nulls.
class Builder final : public YAML::EventHandler {
 public:
  Builder(ValueTree& doc, const YamlTextReader::ItemFn& on_item) : doc_(doc), on_item_(on_item) {}

  bool items_streamed() const { return items_streamed_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { YamlFail("an alias"); }

  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override {
    CheckAnchor(anchor);
    if (ExpectingKey()) YamlFail("a null key");
    auto [tree, at] = Place();
    tree->values()[at].type = ValueTree::Type::kNull;
    Completed();
  }

  void OnScalar(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor, const std::string& value) override {
    CheckAnchor(anchor);
    if (tag != "?" && tag != "!") YamlFail("a tag");
    const bool quoted = tag == "!";
    if (ExpectingKey()) {
      Frame& f = stack_.back();
      f.key = f.tree->Keep(value);
      f.key_quoted = quoted;
      f.expect_key = false;
      return;
    }
    auto [tree, at] = Place();
    ValueTree::Value& v = tree->values()[at];
    v.type = quoted ? ValueTree::Type::kString : ValueTree::Type::kPlain;
    v.text = tree->Keep(value);
    Completed();
  }

  void OnSequenceStart(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(tag, anchor, ValueTree::Type::kArray);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(tag, anchor, ValueTree::Type::kObject);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    ValueTree* tree = nullptr;
    uint32_t index = 0;  // the container's value
    uint32_t last = 0;   // its last child so far
    bool map = false;
    bool items = false;  // the streamed items: each child is an item, built in item_
    bool expect_key = true;
    std::string_view key;  // a map's pending key (kept in `tree`)
    bool key_quoted = false;
  };

  static void CheckAnchor(YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) YamlFail("an anchor");
  }
  bool ExpectingKey() const { return !stack_.empty() && stack_.back().map && stack_.back().expect_key; }

  // Where the next value goes: the root, a new child of the open container, or a new item.
  std::pair<ValueTree*, uint32_t> Place() {
    if (stack_.empty()) {
      if (!doc_.empty()) YamlFail("a second root");
      doc_.values().emplace_back();
      return {&doc_, 0};
    }
    Frame& f = stack_.back();
    if (f.items) {
      item_.Clear();
      item_.values().emplace_back();
      return {&item_, 0};
    }
    const uint32_t c = f.tree->AddChild(f.index, f.last);
    if (f.map) {
      f.tree->values()[c].key = f.key;
      f.tree->values()[c].key_quoted = f.key_quoted;
      f.expect_key = true;
    }
    return {f.tree, c};
  }

  void Open(const std::string& tag, YAML::anchor_t anchor, ValueTree::Type type) {
    CheckAnchor(anchor);
    if (tag != "?" && !tag.empty()) YamlFail("a tag");
    if (ExpectingKey()) YamlFail("a key that is not a scalar");
    if (stack_.size() >= kMaxYamlDepth) YamlFail("nesting is too deep");
    // The top-level `items` sequence: streamed.
    if (type == ValueTree::Type::kArray && stack_.size() == 1 && stack_[0].map && stack_[0].key == "items") {
      auto [tree, at] = Place();
      tree->values()[at].type = ValueTree::Type::kDeferred;
      Frame items;
      items.tree = tree;
      items.index = at;
      items.items = true;
      stack_.push_back(items);
      items_streamed_ = true;
      return;
    }
    auto [tree, at] = Place();
    tree->values()[at].type = type;
    Frame f;
    f.tree = tree;
    f.index = at;
    f.map = type == ValueTree::Type::kObject;
    stack_.push_back(f);
  }

  void Close() {
    if (stack_.empty()) YamlFail("an unbalanced end");
    const Frame f = stack_.back();
    stack_.pop_back();
    if (f.map && f.tree->HasDuplicateKey(f.index)) YamlFail("a key given twice");  // the reference reader says so
    if (!f.items) Completed();
  }

  // A value is complete: if it is an item of the streamed sequence, it is handed over.
  void Completed() {
    if (!stack_.empty() && stack_.back().items) on_item_(item_.root(), ++items_);
  }

  ValueTree& doc_;
  const YamlTextReader::ItemFn& on_item_;
  ValueTree item_;
  std::vector<Frame> stack_;
  int items_ = 0;
  bool items_streamed_ = false;
};

// The text as a stream, without a copy.
class TextBuf final : public std::streambuf {
 public:
  explicit TextBuf(std::string_view text) {
    char* p = const_cast<char*>(text.data());  // only read
    setg(p, p, p + text.size());
  }
};

}  // namespace

YamlTextReader::Result YamlTextReader::Read(std::string_view text, ValueTree& tree, const ItemFn& on_item) {
  tree.Clear();
  items_streamed_ = false;
  Builder builder(tree, on_item);
  try {
    TextBuf buf(text);
    std::istream in(&buf);
    YAML::Parser parser(in);
    if (!parser.HandleNextDocument(builder)) YamlFail("no document");
    items_streamed_ = builder.items_streamed();
    if (tree.empty() || tree.at(0).type == ValueTree::Type::kNull) YamlFail("a null document");
    return Result::kDocument;
  } catch (const YamlStepAside& s) {
    why_ = s.why;
  } catch (const std::exception& e) {
    why_ = e.what();  // the reference reader reports it
  }
  items_streamed_ = builder.items_streamed();
  tree.Clear();
  return Result::kStepAside;
}

}  // namespace arbiter::manifest
