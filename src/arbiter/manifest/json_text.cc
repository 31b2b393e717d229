// The fast JSON reader: simdjson On-Demand into compact trees, a top-level List streamed.
#include "arbiter/manifest/json_text.h"

#include <algorithm>
#include <optional>

#include <simdjson.h>

namespace arbiter::manifest {

namespace od = simdjson::ondemand;

namespace {

// The reference reader refuses a container opened at this depth (loader.cc's kMaxJsonDepth);
// the fast reader steps aside one level before, so that the reference reader says it.
constexpr int kMaxDepth = 63;

// Thrown inside the reader when it steps aside; caught at its edges.
struct StepAside {
  std::string why;
};

[[noreturn]] void Fail(std::string why) { throw StepAside{std::move(why)}; }

void Check(simdjson::error_code e, const char* what) {
  if (e != simdjson::SUCCESS) Fail(std::string(what) + ": " + simdjson::error_message(e));
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// A string token's characters, without escapes; nullopt if it has escapes (or control
// characters, which JSON forbids unescaped: the unescaping reader is left to judge those).
std::optional<std::string_view> PlainString(std::string_view token) {
  if (token.size() < 2 || token.front() != '"' || token.back() != '"') return std::nullopt;
  std::string_view body = token.substr(1, token.size() - 2);
  for (char c : body) {
    if (c == '\\' || static_cast<unsigned char>(c) < 0x20) return std::nullopt;
  }
  return body;
}

}  // namespace

class JsonTextReader::Impl final : public LazySequence {
 public:
  Impl(std::string_view text, size_t capacity) {
    if (capacity < text.size() + simdjson::SIMDJSON_PADDING) {
      padded_.emplace(text.data(), text.size());
      text_ = std::string_view(padded_->data(), padded_->size());
    } else {
      text_ = text;
    }
    // One batch holds the whole text: a document may be as large as the input.
    const size_t batch = std::max<size_t>(text_.size(), size_t{1} << 16);
    auto r = parser_.iterate_many(text_.data(), text_.size(), batch);
    if (r.error() != simdjson::SUCCESS) {
      start_error_ = std::string("cannot start: ") + simdjson::error_message(r.error());
      return;
    }
    stream_ = std::move(r.value_unsafe());
    it_ = stream_.begin();
  }

  // Next document into `tree`; false at the end. Throws StepAside.
  bool NextDocument(ValueTree& tree, size_t& start) {
    if (!start_error_.empty()) Fail(start_error_);
    if (!first_) {
      ++it_;
    }
    first_ = false;
    if (!(it_ != stream_.end())) {
      if (stream_.truncated_bytes() != 0) {
        // The unfinished document is the text's last truncated_bytes() bytes.
        start = text_.size() - std::min(stream_.truncated_bytes(), text_.size());
        Fail("the text ends inside a document");
      }
      return false;
    }
    start = it_.current_index();
    Check(it_.error(), "document");
    auto ref = *it_;
    Check(ref.error(), "document");
    doc_ = ref.value_unsafe();
    tree.Clear();
    items_tree_.Clear();
    in_items_ = false;
    items_done_ = false;
    od::json_type type = od::json_type::null;
    Check(doc_.type().get(type), "document");
    if (type != od::json_type::object) {
      od::value v;
      Check(doc_.get_value().get(v), "document");
      tree.values().emplace_back();
      Build(tree, v, 0, 1);
      return true;
    }
    Check(doc_.get_object().get(root_), "document");
    // Build the top level, leaving an array under "items" unread: a List's items are read as
    // the decoder iterates them.
    tree.values().emplace_back();
    bool deferred = false;
    BuildObject(tree, root_, 0, 1, &deferred);
    const ValueTree::Value& top = tree.at(0);
    bool is_list = false;
    for (uint32_t c = top.first; c != 0; c = tree.at(c).next) {
      if (tree.at(c).key == "kind" && tree.at(c).type == ValueTree::Type::kString && tree.at(c).text == "List") {
        is_list = true;
      }
    }
    if (deferred && !is_list) {
      // Not a List after all: the whole object, items included, as one tree.
      tree.Clear();
      Check(root_.reset().error(), "document");
      tree.values().emplace_back();
      BuildObject(tree, root_, 0, 1, nullptr);
    } else if (deferred) {
      tree.set_deferred(this);
    } else {
      items_done_ = true;
    }
    return true;
  }

  // LazySequence: the next item of the current document's List.
  Node Next() override {
    if (items_done_ || failed_) return Node();
    try {
      if (!in_items_) {
        in_items_ = true;
        Check(root_.reset().error(), "items");
        od::value items;
        Check(root_.find_field("items").get(items), "items");
        Check(items.get_array().get(items_), "items");
        items_it_ = items_.begin();
        items_first_ = true;
      }
      if (!items_first_) ++items_it_;
      items_first_ = false;
      if (!(items_it_ != items_.end())) {
        items_done_ = true;
        return Node();
      }
      od::value v;
      Check((*items_it_).get(v), "item");
      items_tree_.Clear();
      items_tree_.values().emplace_back();
      Build(items_tree_, v, 0, 3);  // the document's object, its items array, the item
      return items_tree_.root();
    } catch (const StepAside& s) {
      failed_ = true;
      why_ = s.why;
      items_done_ = true;
      return Node();
    }
  }

  // Reads the rest of a streamed List (items the decoder did not ask for); false if the reader
  // stepped aside in this document.
  bool Finish(std::string& why) {
    while (!items_done_ && !failed_) (void)Next();
    if (failed_) {
      why = why_;
      return false;
    }
    return true;
  }

 private:
  // Fills tree.values()[at] with `v` (depth: open containers around it, itself included if it is one).
  void Build(ValueTree& tree, od::value& v, uint32_t at, int depth) {
    od::json_type type = od::json_type::null;
    Check(v.type().get(type), "value");
    switch (type) {
      case od::json_type::object: {
        od::object o;
        Check(v.get_object().get(o), "object");
        BuildObject(tree, o, at, depth, nullptr);
        return;
      }
      case od::json_type::array: {
        if (depth > kMaxDepth) Fail("nesting is too deep");
        od::array a;
        Check(v.get_array().get(a), "array");
        tree.values()[at].type = ValueTree::Type::kArray;
        uint32_t last = 0;
        for (auto e : a) {
          od::value child;
          Check(std::move(e).get(child), "array element");
          const uint32_t c = tree.AddChild(at, last);
          Build(tree, child, c, depth + 1);
        }
        return;
      }
      case od::json_type::string: {
        std::string_view token = TrimRight(v.raw_json_token());
        if (auto plain = PlainString(token)) {
          tree.values()[at].text = *plain;
        } else {
          std::string_view s;
          Check(v.get_string().get(s), "string");
          for (char c : s) {
            if (static_cast<unsigned char>(c) < 0x20 && token.find(c) != std::string_view::npos) {
              Fail("a control character in a string");
            }
          }
          tree.values()[at].text = tree.Keep(s);
        }
        tree.values()[at].type = ValueTree::Type::kString;
        return;
      }
      case od::json_type::number: {
        // As the reference reader reads numbers: an integer as its value prints, any other
        // number as written.
        std::string_view token = TrimRight(v.raw_json_token());
        od::number_type nt = od::number_type::floating_point_number;
        Check(v.get_number_type().get(nt), "number");
        if (nt == od::number_type::floating_point_number) {
          double d = 0;
          Check(v.get_double().get(d), "number");
          tree.values()[at].text = token;
        } else if (nt == od::number_type::signed_integer) {
          int64_t i = 0;
          Check(v.get_int64().get(i), "number");
          tree.values()[at].text = NumberText(tree, token, std::to_string(i));
        } else {
          uint64_t u = 0;
          Check(v.get_uint64().get(u), "number");
          tree.values()[at].text = NumberText(tree, token, std::to_string(u));
        }
        tree.values()[at].type = ValueTree::Type::kPlain;
        return;
      }
      case od::json_type::boolean: {
        bool b = false;
        Check(v.get_bool().get(b), "boolean");
        tree.values()[at].type = ValueTree::Type::kPlain;
        tree.values()[at].text = b ? "true" : "false";
        return;
      }
      case od::json_type::null: {
        bool null = false;
        Check(v.is_null().get(null), "null");
        if (!null) Fail("not a value");
        tree.values()[at].type = ValueTree::Type::kNull;
        return;
      }
    }
    Fail("unknown value");
  }

  static std::string_view NumberText(ValueTree& tree, std::string_view token, std::string printed) {
    if (token == printed) return token;  // nearly always: no copy
    return tree.Keep(printed);
  }

  // `deferred`: when not null, an array under the key "items" is left unread (a kDeferred value)
  // and *deferred says so.
  void BuildObject(ValueTree& tree, od::object& o, uint32_t at, int depth, bool* deferred) {
    if (depth > kMaxDepth) Fail("nesting is too deep");
    tree.values()[at].type = ValueTree::Type::kObject;
    uint32_t last = 0;
    for (auto f : o) {
      od::field field;
      Check(std::move(f).get(field), "object member");
      std::string_view key = KeyOf(tree, field);
      const uint32_t c = tree.AddChild(at, last);
      tree.values()[c].key = key;
      od::value& child = field.value();
      od::json_type type = od::json_type::null;
      Check(child.type().get(type), "value");
      if (deferred != nullptr && key == "items" && type == od::json_type::array) {
        tree.values()[c].type = ValueTree::Type::kDeferred;
        *deferred = true;
      } else {
        Build(tree, child, c, depth + 1);
      }
    }
    if (tree.HasDuplicateKey(at)) Fail("a key given twice");  // the reference reader says so
  }

  std::string_view KeyOf(ValueTree& tree, od::field& field) {
    // The key's characters run from raw() to the closing quote; plain keys are viewed in place.
    const char* start = field.key().raw();
    const char* end = start;
    const char* limit = text_.data() + text_.size();
    bool plain = true;
    while (end < limit && *end != '"') {
      if (*end == '\\' || static_cast<unsigned char>(*end) < 0x20) {
        plain = false;
        break;
      }
      ++end;
    }
    if (plain && end < limit) return std::string_view(start, static_cast<size_t>(end - start));
    std::string_view k;
    Check(field.unescaped_key().get(k), "key");
    for (char c : k) {
      if (static_cast<unsigned char>(c) < 0x20) Fail("a control character in a key");
    }
    return tree.Keep(k);
  }

  std::optional<simdjson::padded_string> padded_;
  std::string_view text_;
  od::parser parser_;
  od::document_stream stream_;
  od::document_stream::iterator it_;
  bool first_ = true;
  std::string start_error_;
  od::document_reference doc_;
  od::object root_;
  ValueTree items_tree_;
  od::array items_;
  od::array_iterator items_it_;
  bool in_items_ = false, items_first_ = true, items_done_ = true, failed_ = false;
  std::string why_;
};

JsonTextReader::JsonTextReader(std::string_view text, size_t capacity) : impl_(std::make_unique<Impl>(text, capacity)) {}
JsonTextReader::~JsonTextReader() = default;

JsonTextReader::Result JsonTextReader::Next(ValueTree& tree) {
  try {
    return impl_->NextDocument(tree, document_start_) ? Result::kDocument : Result::kEnd;
  } catch (const StepAside& s) {
    why_ = s.why;
    return Result::kStepAside;
  }
}

bool JsonTextReader::Finish() { return impl_->Finish(why_); }

}  // namespace arbiter::manifest
