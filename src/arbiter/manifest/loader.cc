// Manifest loading: split files into documents, parse YAML or JSON, and decode each object kind
// into the model with field-level validation.
#include "arbiter/manifest/loader.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "arbiter/manifest/decoder.h"
#include "arbiter/manifest/json_text.h"
#include "arbiter/manifest/yaml_text.h"
#include "arbiter/model/group_hierarchy.h"

namespace arbiter::manifest {

using model::Quantity;

std::string Origin::ToString() const {
  std::string s = file + ": document " + std::to_string(document);
  if (item > 0) s += ", item " + std::to_string(item);
  if (!kind.empty()) s += ": " + kind;
  if (!object.empty()) s += " " + object;
  return s;
}

namespace {

std::string SizeText(uint64_t bytes) {
  if (bytes % (uint64_t{1} << 30) == 0) return std::to_string(bytes >> 30) + "Gi";
  if (bytes % (uint64_t{1} << 20) == 0) return std::to_string(bytes >> 20) + "Mi";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

StatusOr<InputFile> ReadInputFile(const std::string& path, uint64_t max_bytes) {
  const bool is_stdin = path == "-";
  const std::string name = is_stdin ? "<stdin>" : path;
  auto too_large = [&] {
    return InvalidArgument(name + ": larger than the input limit of " + SizeText(max_bytes) +
                             " (raise it with --max-input-size)");
  };
  std::FILE* f = is_stdin ? stdin : std::fopen(path.c_str(), "rb");
  if (f == nullptr) return NotFound(path + ": cannot open file");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> owned(is_stdin ? nullptr : f, &std::fclose);
  std::string content;
  std::error_code ec;
  // Read in chunks up to the limit: a pipe or a device (/dev/zero) has no size to check first.
  constexpr size_t kChunk = size_t{1} << 20;
  if (!is_stdin && std::filesystem::is_regular_file(path, ec)) {
    const uint64_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > max_bytes) return too_large();
    // Room for the last chunk's read and the fast JSON reader's padding, so that the text is
    // never copied.
    if (!ec) content.reserve(size + kChunk + 64);
  }
  for (;;) {
    const size_t at = content.size();
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, max_bytes + 1 - at));
    content.resize(at + want);
    const size_t got = std::fread(content.data() + at, 1, want, f);
    content.resize(at + got);
    if (content.size() > max_bytes) return too_large();
    if (got < want) break;
  }
  if (std::ferror(f)) return InvalidArgument(name + ": read error");
  return InputFile{name, std::move(content)};
}

namespace {

constexpr int kMaxJsonDepth = 64;
constexpr int kMaxListDepth = 8;
constexpr int64_t kInt32Min = INT32_MIN;
constexpr int64_t kInt32Max = INT32_MAX;

// Builds a YAML tree from JSON while it is parsed (nlohmann's SAX interface), so that numbers keep
// the text the user wrote, nesting is bounded before anything deep is built, and a key given
// twice in one object is reported instead of silently keeping one value.
class JsonToYaml {
 public:
  using json = nlohmann::json;

  YAML::Node root() const { return root_; }
  // Why parsing stopped early; empty if the input was parsed or failed on syntax alone.
  const std::string& problem() const { return problem_; }
  const std::string& syntax_error() const { return syntax_error_; }

  bool null() { return Add(YAML::Node(YAML::NodeType::Null)); }
  bool boolean(bool v) { return Add(YAML::Node(v ? "true" : "false")); }
  bool number_integer(json::number_integer_t v) { return Add(YAML::Node(std::to_string(v))); }
  bool number_unsigned(json::number_unsigned_t v) { return Add(YAML::Node(std::to_string(v))); }
  bool number_float(json::number_float_t /*v*/, const std::string& text) {
    return Add(YAML::Node(text));
  }
  bool string(std::string& v) {
    YAML::Node n(v);
    n.SetTag("!");  // a JSON string is a quoted scalar
    return Add(n);
  }
  bool binary(json::binary_t& /*v*/) { return false; }  // not produced by the JSON parser
  bool start_object(std::size_t /*n*/) { return Open(YAML::NodeType::Map); }
  bool start_array(std::size_t /*n*/) { return Open(YAML::NodeType::Sequence); }
  bool key(std::string& k) {
    Frame& f = stack_.back();
    if (!f.keys.insert(k).second) {
      const std::string where = Path();
      problem_ = "invalid JSON: duplicate key \"" + k + "\" in " +
                 (where.empty() ? std::string("the top-level object") : where);
      return false;
    }
    f.key = k;
    return true;
  }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool parse_error(std::size_t /*pos*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& e) {
    syntax_error_ = e.what();
    return false;
  }

 private:
  struct Frame {
    YAML::Node node;
    std::string label;  // where the node goes in its parent: ".key" or "[i]"
    std::string key;    // the key whose value comes next (objects)
    std::set<std::string> keys;
  };

  // The path of the innermost open container, e.g. "items[1].metadata.labels".
  std::string Path() const {
    std::string p;
    for (const auto& f : stack_) p += f.label;
    if (!p.empty() && p[0] == '.') p.erase(0, 1);
    return p;
  }
  std::string ChildLabel() const {
    if (stack_.empty()) return "";
    const Frame& f = stack_.back();
    return f.node.IsMap() ? "." + f.key : "[" + std::to_string(f.node.size()) + "]";
  }
  bool Open(YAML::NodeType::value type) {
    if (stack_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      problem_ = "JSON nesting is deeper than " + std::to_string(kMaxJsonDepth) + " levels";
      return false;
    }
    stack_.push_back({YAML::Node(type), ChildLabel(), "", {}});
    return true;
  }
  bool Close() {
    YAML::Node n = stack_.back().node;
    stack_.pop_back();
    return Add(n);
  }
  bool Add(const YAML::Node& n) {
    if (stack_.empty()) {
      root_ = n;
    } else if (Frame& f = stack_.back(); f.node.IsMap()) {
      f.node[f.key] = n;
    } else {
      f.node.push_back(n);
    }
    return true;
  }

  std::vector<Frame> stack_;
  YAML::Node root_;
  std::string problem_;
  std::string syntax_error_;
};

struct Document {
  YAML::Node root;
  int index = 0;  // 1-based
};

// yaml-cpp keeps both entries of a key given twice in one mapping; YAML forbids it, and the
// decoder would silently read the first. Returns the first and the repeated key node. Nodes
// reached again through an alias (same position) are not walked twice.
std::optional<std::pair<YAML::Node, YAML::Node>> FindDuplicateKey(
    const YAML::Node& n, std::set<std::pair<int, int>>& visited) {
  if (!n.IsMap() && !n.IsSequence()) return std::nullopt;
  if (!visited.insert({n.Mark().line, n.Mark().column}).second) return std::nullopt;
  if (n.IsSequence()) {
    for (const auto& e : n) {
      if (auto d = FindDuplicateKey(e, visited)) return d;
    }
    return std::nullopt;
  }
  std::map<std::string, YAML::Node> keys;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (it->first.IsScalar()) {
      auto [k, inserted] = keys.emplace(it->first.Scalar(), it->first);
      if (!inserted) return std::make_pair(k->second, it->first);
    }
    if (auto d = FindDuplicateKey(it->second, visited)) return d;
  }
  return std::nullopt;
}

// yaml-cpp's messages for tab indentation do not mention the tab; names the first such line.
std::string TabHint(const std::string& text, int first_line) {
  std::istringstream in(text);
  std::string line;
  for (int n = first_line + 1; std::getline(in, line); ++n) {
    const size_t indent = line.find_first_not_of(" \t");
    if (indent != std::string::npos && line.find('\t') < indent) {
      return " (line " + std::to_string(n) + " is indented with a tab; YAML indentation must use spaces)";
    }
  }
  return "";
}

// A YAML stream split at its `---` lines, so that each document is parsed (and its errors
// reported) on its own, with line numbers relative to the file.
struct YamlChunk {
  int start = 0;           // its first line in the file (0-based)
  std::string_view piece;  // into the file's text
  std::string owned;       // the text, when it is not a piece of the file's text as it is
  bool copied = false;
  std::string_view text() const { return copied ? std::string_view(owned) : piece; }
  bool blank() const {
    const std::string_view t = text();
    return std::all_of(t.begin(), t.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
  }
};

// Each chunk is the file's lines between `---` lines, each line ending in a newline: what
// follows `---` on its line starts the next chunk, and a `...` line ends one and stays as a
// blank line (keeping line numbers). A chunk that is a piece of the file as it is (nearly
// always) is not copied.
std::vector<YamlChunk> SplitYamlStream(const std::string& content) {
  std::vector<YamlChunk> chunks;
  const std::string_view all(content);
  size_t begin = 0;         // where the current chunk's text starts in `all`
  std::string prefix;       // text the current chunk starts with that is not in `all` there
  bool copied = false;      // the current chunk needs a copy
  int current_start = 0;
  int line_no = 0;
  auto flush = [&](size_t end, int next_start) {
    YamlChunk c;
    c.start = current_start;
    std::string_view piece = all.substr(begin, end - begin);
    if (copied || !prefix.empty() || (!piece.empty() && piece.back() != '\n')) {
      c.owned = prefix + std::string(piece);
      if (!c.owned.empty() && c.owned.back() != '\n') c.owned += '\n';
      c.copied = true;
    } else {
      c.piece = piece;
    }
    chunks.push_back(std::move(c));
    current_start = next_start;
    prefix.clear();
    copied = false;
  };
  size_t at = 0;
  while (at < all.size()) {
    const size_t nl = all.find('\n', at);
    const size_t line_end = nl == std::string_view::npos ? all.size() : nl;
    const size_t next = nl == std::string_view::npos ? all.size() : nl + 1;
    const std::string_view line = all.substr(at, line_end - at);
    if (line.substr(0, 3) == "---" && (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r')) {
      flush(at, line_no);
      begin = at + 3;  // content after "---" on the same line belongs to the new document
      if (nl == std::string_view::npos) copied = true;  // its newline is added
    } else if (line.substr(0, 3) == "..." && (line.size() == 3 || line[3] == ' ' || line[3] == '\r')) {
      flush(at, line_no);
      prefix = "\n";  // the "..." line stays as a blank line
      begin = next;
    }
    at = next;
    ++line_no;
  }
  flush(all.size(), line_no);
  return chunks;
}

// The reference YAML reader on one chunk, document `index` of `file`: its root, or nullopt with
// the problem in `errors` — or with nothing added when the chunk holds no document (only
// comments, or a null), which `*no_document` then says.
std::optional<YAML::Node> ParseYamlChunk(const std::string& file, const YamlChunk& chunk, int index,
                                         std::vector<std::string>& errors, bool* no_document) {
  *no_document = false;
  const int start = chunk.start;
  const std::string text(chunk.text());
  const std::string where = file + ": document " + std::to_string(index) + ": ";
  auto at = [start](const YAML::Mark& m) {
    return "line " + std::to_string(start + m.line + 1) + ", column " + std::to_string(m.column + 1);
  };
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull()) {
      *no_document = true;  // a document of only comments is no document
      return std::nullopt;
    }
    std::set<std::pair<int, int>> visited;
    if (auto dup = FindDuplicateKey(root, visited)) {
      errors.push_back(where + at(dup->second.Mark()) + ": invalid YAML: mapping key \"" + dup->second.Scalar() +
                       "\" already defined at line " + std::to_string(start + dup->first.Mark().line + 1));
      return std::nullopt;
    }
    return root;
  } catch (const YAML::Exception& e) {
    // yaml-cpp's nesting limit reports only "bad file".
    std::string msg = e.msg == YAML::ErrorMsg::BAD_FILE ? "nesting is too deep" : e.msg;
    errors.push_back(where + at(e.mark) + ": invalid YAML: " + msg + TabHint(text, start));
  } catch (const std::exception& e) {
    errors.push_back(where + "invalid YAML: " + e.what());
  }
  return std::nullopt;
}

std::vector<Document> ParseYamlStream(const InputFile& file, std::vector<std::string>& errors) {
  std::vector<Document> docs;
  int index = 0;
  for (const YamlChunk& chunk : SplitYamlStream(file.content)) {
    if (chunk.blank()) continue;
    ++index;
    bool no_document = false;
    if (auto root = ParseYamlChunk(file.name, chunk, index, errors, &no_document)) {
      docs.push_back({*root, index});
    } else if (no_document) {
      --index;
    }
  }
  if (docs.empty() && index == 0) errors.push_back(file.name + ": the file holds no objects");
  return docs;
}

// The reference JSON reader: one JSON value from the start of `text` as a YAML tree (see
// JsonToYaml). With `whole`, nothing but white space may follow it; otherwise what follows is
// not read. Problems are reported as document `index` of `file`.
std::optional<YAML::Node> ParseJsonDocument(std::string_view text, const std::string& file, int index, bool whole,
                                            std::vector<std::string>& errors) {
  JsonToYaml builder;
  if (!nlohmann::json::sax_parse(text.begin(), text.end(), &builder, nlohmann::json::input_format_t::json, whole)) {
    const std::string& why = !builder.problem().empty() ? builder.problem()
                                                         : "invalid JSON: " + builder.syntax_error();
    errors.push_back(file + ": document " + std::to_string(index) + ": " + why);
    return std::nullopt;
  }
  return builder.root();
}

std::vector<Document> ParseFile(const InputFile& file, std::vector<std::string>& errors) {
  // Neither YAML nor JSON text holds NUL bytes; UTF-16 text (as some Windows editors and shells
  // write) and binary files do.
  if (auto nul = file.content.find('\0'); nul != std::string::npos) {
    const bool utf16 = file.content.size() >= 2 &&
                       ((file.content[0] == '\xff' && file.content[1] == '\xfe') ||
                        (file.content[0] == '\xfe' && file.content[1] == '\xff'));
    errors.push_back(file.name + (utf16 ? ": the file is UTF-16 text; save it as UTF-8"
                                        : ": the file is not YAML or JSON text (it holds a NUL byte at "
                                          "offset " + std::to_string(nul) + ")"));
    return {};
  }
  auto first = file.content.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    errors.push_back(file.name + ": the file holds no objects");
    return {};
  }
  if (file.content[first] == '{' || file.content[first] == '[') {
    auto root = ParseJsonDocument(file.content, file.name, 1, /*whole=*/true, errors);
    if (!root) return {};
    return {{*root, 1}};
  }
  return ParseYamlStream(file, errors);
}

// Decodes one object document into `out`.
class ObjectDecoder {
 public:
  ObjectDecoder(ClusterObjects& out, std::vector<std::string>& errors) : out_(out), d_("", &errors) {}
  void set_strict_strings(bool strict) { d_.set_strict_strings(strict); }

  // `list_depth` counts the Lists around `root`.
  void Decode(const Node& root, Origin origin, int list_depth = 0);

 private:
  struct Meta {
    std::string ns;
    std::string name;
    std::string uid;
    model::LabelMap labels;
    std::optional<Timestamp> creation;
    std::optional<Timestamp> deletion;
  };

  Meta DecodeMeta(const Node& root, bool namespaced);
  void DecodeNode(const Node& root, Origin origin);
  void DecodePod(const Node& root, Origin origin);
  void DecodePriorityClass(const Node& root, Origin origin);
  void DecodePdb(const Node& root, Origin origin);
  void DecodeNamespace(const Node& root, Origin origin);
  void DecodeWorkload(const Node& root, Origin origin);
  void DecodePodGroup(const Node& root, Origin origin);
  void DecodeCompositePodGroup(const Node& root, Origin origin);
  void DecodeConfig(const Node& root, Origin origin);
  void DecodePodMetrics(const Node& root, Origin origin);
  void DecodeKubeletConfig(const Node& root, Origin origin);

  model::Resources DecodeResourceList(const Node& n, const std::string& path);
  std::optional<model::LabelSelector> DecodeLabelSelector(const Node& n,
                                                          const std::string& path);
  std::vector<model::Requirement> DecodeRequirements(const Node& n, const std::string& path,
                                                     bool node_selector, bool fields);
  std::optional<model::NodeSelectorTerm> DecodeNodeSelectorTerm(const Node& n,
                                                                 const std::string& path);
  model::PodAffinityTerm DecodePodAffinityTerm(const Node& n, const std::string& path);
  model::PodAffinityRules DecodePodAffinityRules(const Node& n, const std::string& path);
  void DecodeAffinity(const Node& n, const std::string& path, model::Affinity& a);
  std::vector<model::Toleration> DecodeTolerations(const Node& n, const std::string& path);
  std::vector<model::TopologySpreadConstraint> DecodeSpread(const Node& n,
                                                            const std::string& path);
  std::optional<model::IntOrPercent> DecodeIntOrPercent(const Node& n,
                                                        const std::string& path);
  void CheckLabels(const model::LabelMap& labels, const std::string& path);
  // Parts of the Workload API objects. `prefix` is the path of the object holding the field,
  // ending in a dot ("spec." or "spec.podGroupTemplates[0].").
  struct GroupPolicyValue {
    model::GroupPolicy policy = model::GroupPolicy::kBasic;
    int32_t count = 0;
  };
  GroupPolicyValue DecodeGroupPolicy(const Node& parent, const std::string& prefix,
                                     std::string_view count_field);
  model::DisruptionMode DecodeDisruptionMode(const Node& parent, const std::string& prefix);
  model::GroupPriority DecodeGroupPriority(const Node& parent, const std::string& prefix);
  std::optional<model::WorkloadReference> DecodeWorkloadRef(const Node& parent,
                                                            const std::string& prefix);
  std::string DecodeParentName(const Node& parent, const std::string& prefix);
  // A template's name: a DNS label, unique across the Workload's whole template tree.
  std::string DecodeTemplateName(const Node& t, const std::string& prefix,
                                 std::map<std::string, std::string>& names);
  std::vector<model::PodGroupTemplate> DecodePodGroupTemplates(
      const Node& parent, const std::string& prefix, int depth,
      std::map<std::string, std::string>& names);
  std::vector<model::CompositePodGroupTemplate> DecodeCompositeTemplates(
      const Node& parent, const std::string& prefix, int depth,
      std::map<std::string, std::string>& names);

  ClusterObjects& out_;
  Decoder d_;
  std::set<std::pair<int, int>> lists_seen_;  // positions of the List items read in this document
};

using D = Decoder;

std::string Idx(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

void ObjectDecoder::CheckLabels(const model::LabelMap& labels, const std::string& path) {
  for (const auto& [k, v] : labels) {
    std::string err = ValidateLabelKey(k);
    if (!err.empty()) d_.Error(path, "invalid label key \"" + k + "\": " + err);
    err = ValidateLabelValue(v);
    if (!err.empty()) d_.Error(path + "." + k, "invalid label value \"" + v + "\": " + err);
  }
}

ObjectDecoder::Meta ObjectDecoder::DecodeMeta(const Node& root, bool namespaced) {
  Meta m;
  Node md = D::Child(root, "metadata");
  if (!D::Present(md)) {
    d_.Error("metadata.name", "is required");
    return m;
  }
  if (!d_.ExpectMap(md, "metadata")) return m;
  if (auto name = d_.String(D::Child(md, "name"), "metadata.name")) {
    m.name = *name;
    std::string err = ValidateDnsSubdomain(m.name);
    if (!err.empty()) d_.Error("metadata.name", "invalid name \"" + m.name + "\": " + err);
  } else if (!D::Present(D::Child(md, "name"))) {
    d_.Error("metadata.name", "is required");
  }
  if (namespaced) {
    m.ns = d_.String(D::Child(md, "namespace"), "metadata.namespace").value_or("default");
    std::string err = ValidateDnsLabel(m.ns);
    if (!err.empty()) d_.Error("metadata.namespace", "invalid namespace \"" + m.ns + "\": " + err);
  }
  m.uid = d_.String(D::Child(md, "uid"), "metadata.uid").value_or("");
  m.labels = model::LabelMap(d_.StringMap(D::Child(md, "labels"), "metadata.labels"));
  CheckLabels(m.labels, "metadata.labels");
  m.creation = d_.Timestamp(D::Child(md, "creationTimestamp"), "metadata.creationTimestamp");
  m.deletion = d_.Timestamp(D::Child(md, "deletionTimestamp"), "metadata.deletionTimestamp");
  return m;
}

model::Resources ObjectDecoder::DecodeResourceList(const Node& n, const std::string& path) {
  model::Resources r;
  if (!D::Present(n) || !d_.ExpectMap(n, path)) return r;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar()) {
      d_.Error(path, "resource names must be strings");
      continue;
    }
    const std::string name = it->first.Scalar();
    const std::string field = path + "." + name;
    std::string err = ValidateLabelKey(name);
    if (!err.empty()) {
      d_.Error(field, "invalid resource name: " + err);
      continue;
    }
    auto q = d_.Quantity(it->second, field);
    if (!q) {
      if (!D::Present(it->second)) d_.Error(field, "must be a quantity, not null");
      continue;
    }
    if (q->milli() < 0) {
      d_.Error(field, "must be greater than or equal to 0, not " + q->ToString());
      continue;
    }
    if ((name == model::kResourceCpu ? q->milli() : q->value()) > model::kMaxResourceAmount) {
      d_.Error(field, q->ToString() + " is larger than Arbiter accepts (2^53 " +
                          (name == model::kResourceCpu ? "millicores" : "units") + ")");
      continue;
    }
    if (name == model::kResourceCpu) {
      r.milli_cpu = q->milli();
    } else {
      if (name != model::kResourceMemory && name != model::kResourceEphemeralStorage &&
          name != model::kResourcePods && q->milli() % 1000 != 0) {
        d_.Error(field, "extended resources must be whole numbers, not " + q->ToString());
        continue;
      }
      r.Set(name, q->value());
    }
  }
  return r;
}

std::vector<model::Requirement> ObjectDecoder::DecodeRequirements(const Node& n,
                                                                  const std::string& path,
                                                                  bool node_selector,
                                                                  bool fields) {
  std::vector<model::Requirement> out;
  if (!D::Present(n) || !d_.ExpectSeq(n, path)) return out;
  size_t i = 0;
  for (const auto& e : n) {
    const std::string p = Idx(path, i++);
    if (!d_.ExpectMap(e, p)) continue;
    model::Requirement r;
    auto key = d_.String(D::Child(e, "key"), p + ".key");
    if (!key) {
      if (!D::Present(D::Child(e, "key"))) d_.Error(p + ".key", "is required");
      continue;
    }
    r.key = *key;
    if (fields) {
      if (r.key != "metadata.name") {
        d_.Error(p + ".key", "unsupported field \"" + r.key + "\" (only metadata.name)");
        continue;
      }
    } else if (std::string err = ValidateLabelKey(r.key); !err.empty()) {
      d_.Error(p + ".key", "invalid label key \"" + r.key + "\": " + err);
      continue;
    }
    auto op_name = d_.String(D::Child(e, "operator"), p + ".operator");
    if (!op_name) {
      if (!D::Present(D::Child(e, "operator"))) d_.Error(p + ".operator", "is required");
      continue;
    }
    auto op = model::ParseSelectorOp(*op_name);
    if (!op || (!node_selector && (*op == model::SelectorOp::kGt || *op == model::SelectorOp::kLt))) {
      d_.Error(p + ".operator", "unsupported operator \"" + *op_name + "\" (want " +
                                    (node_selector ? "In, NotIn, Exists, DoesNotExist, Gt or Lt"
                                                   : "In, NotIn, Exists or DoesNotExist") + ")");
      continue;
    }
    r.op = *op;
    r.values = d_.StringList(D::Child(e, "values"), p + ".values");
    switch (r.op) {
      case model::SelectorOp::kIn:
      case model::SelectorOp::kNotIn:
        if (r.values.empty()) {
          d_.Error(p + ".values", "must be non-empty for operator " + *op_name);
          continue;
        }
        break;
      case model::SelectorOp::kExists:
      case model::SelectorOp::kDoesNotExist:
        if (!r.values.empty()) {
          d_.Error(p + ".values", "must be empty for operator " + *op_name);
          continue;
        }
        break;
      case model::SelectorOp::kGt:
      case model::SelectorOp::kLt: {
        bool ok = r.values.size() == 1 && !r.values[0].empty();
        if (ok) {
          const std::string& v = r.values[0];
          size_t start = (v[0] == '-' || v[0] == '+') ? 1 : 0;
          ok = start < v.size() && std::all_of(v.begin() + static_cast<long>(start), v.end(),
                                               [](char c) { return c >= '0' && c <= '9'; });
        }
        if (!ok) {
          d_.Error(p + ".values", "must hold exactly one integer for operator " + *op_name);
          continue;
        }
        break;
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<model::LabelSelector> ObjectDecoder::DecodeLabelSelector(const Node& n,
                                                                       const std::string& path) {
  if (!D::Present(n)) return std::nullopt;
  if (!d_.ExpectMap(n, path)) return std::nullopt;
  model::LabelSelector s;
  model::LabelMap ml(d_.StringMap(D::Child(n, "matchLabels"), path + ".matchLabels"));
  CheckLabels(ml, path + ".matchLabels");
  for (const auto& [k, v] : ml) s.requirements.push_back({k, model::SelectorOp::kIn, {v}});
  auto exprs = DecodeRequirements(D::Child(n, "matchExpressions"), path + ".matchExpressions",
                                  /*node_selector=*/false, /*fields=*/false);
  s.requirements.insert(s.requirements.end(), exprs.begin(), exprs.end());
  return s;
}

std::optional<model::NodeSelectorTerm> ObjectDecoder::DecodeNodeSelectorTerm(
    const Node& n, const std::string& path) {
  if (!d_.ExpectMap(n, path)) return std::nullopt;
  model::NodeSelectorTerm t;
  t.match_expressions = DecodeRequirements(D::Child(n, "matchExpressions"),
                                           path + ".matchExpressions", true, false);
  t.match_fields = DecodeRequirements(D::Child(n, "matchFields"), path + ".matchFields", true, true);
  return t;
}

model::PodAffinityTerm ObjectDecoder::DecodePodAffinityTerm(const Node& n,
                                                            const std::string& path) {
  model::PodAffinityTerm t;
  if (!d_.ExpectMap(n, path)) return t;
  t.label_selector = DecodeLabelSelector(D::Child(n, "labelSelector"), path + ".labelSelector");
  t.namespaces = d_.StringList(D::Child(n, "namespaces"), path + ".namespaces");
  t.namespace_selector =
      DecodeLabelSelector(D::Child(n, "namespaceSelector"), path + ".namespaceSelector");
  auto tk = d_.String(D::Child(n, "topologyKey"), path + ".topologyKey");
  if (!tk || tk->empty()) {
    d_.Error(path + ".topologyKey", "is required");
  } else if (std::string err = ValidateLabelKey(*tk); !err.empty()) {
    d_.Error(path + ".topologyKey", "invalid label key \"" + *tk + "\": " + err);
  } else {
    t.topology_key = *tk;
  }
  t.match_label_keys = d_.StringList(D::Child(n, "matchLabelKeys"), path + ".matchLabelKeys");
  t.mismatch_label_keys =
      d_.StringList(D::Child(n, "mismatchLabelKeys"), path + ".mismatchLabelKeys");
  return t;
}

model::PodAffinityRules ObjectDecoder::DecodePodAffinityRules(const Node& n,
                                                              const std::string& path) {
  model::PodAffinityRules rules;
  if (!D::Present(n) || !d_.ExpectMap(n, path)) return rules;
  const std::string req = path + ".requiredDuringSchedulingIgnoredDuringExecution";
  Node rn = D::Child(n, "requiredDuringSchedulingIgnoredDuringExecution");
  if (D::Present(rn) && d_.ExpectSeq(rn, req)) {
    size_t i = 0;
    for (const auto& e : rn) rules.required.push_back(DecodePodAffinityTerm(e, Idx(req, i++)));
  }
  const std::string pref = path + ".preferredDuringSchedulingIgnoredDuringExecution";
  Node pn = D::Child(n, "preferredDuringSchedulingIgnoredDuringExecution");
  if (D::Present(pn) && d_.ExpectSeq(pn, pref)) {
    size_t i = 0;
    for (const auto& e : pn) {
      const std::string p = Idx(pref, i++);
      if (!d_.ExpectMap(e, p)) continue;
      model::WeightedPodAffinityTerm w;
      auto weight = d_.Int(D::Child(e, "weight"), p + ".weight", 1, 100);
      if (!weight) {
        if (!D::Present(D::Child(e, "weight"))) d_.Error(p + ".weight", "is required");
        continue;
      }
      w.weight = static_cast<int32_t>(*weight);
      w.term = DecodePodAffinityTerm(D::Child(e, "podAffinityTerm"), p + ".podAffinityTerm");
      rules.preferred.push_back(std::move(w));
    }
  }
  return rules;
}

void ObjectDecoder::DecodeAffinity(const Node& n, const std::string& path,
                                   model::Affinity& a) {
  if (!D::Present(n) || !d_.ExpectMap(n, path)) return;
  Node na = D::Child(n, "nodeAffinity");
  const std::string nap = path + ".nodeAffinity";
  if (D::Present(na) && d_.ExpectMap(na, nap)) {
    Node req = D::Child(na, "requiredDuringSchedulingIgnoredDuringExecution");
    const std::string reqp = nap + ".requiredDuringSchedulingIgnoredDuringExecution";
    if (D::Present(req) && d_.ExpectMap(req, reqp)) {
      model::NodeSelector sel;
      Node terms = D::Child(req, "nodeSelectorTerms");
      const std::string tp = reqp + ".nodeSelectorTerms";
      if (!D::Present(terms) || (terms.IsSequence() && terms.size() == 0)) {
        d_.Error(tp, "must have at least one term");
      } else if (d_.ExpectSeq(terms, tp)) {
        size_t i = 0;
        for (const auto& t : terms) {
          if (auto term = DecodeNodeSelectorTerm(t, Idx(tp, i))) sel.terms.push_back(*term);
          ++i;
        }
      }
      a.node_affinity.required = std::move(sel);
    }
    Node pref = D::Child(na, "preferredDuringSchedulingIgnoredDuringExecution");
    const std::string pp = nap + ".preferredDuringSchedulingIgnoredDuringExecution";
    if (D::Present(pref) && d_.ExpectSeq(pref, pp)) {
      size_t i = 0;
      for (const auto& e : pref) {
        const std::string p = Idx(pp, i++);
        if (!d_.ExpectMap(e, p)) continue;
        auto weight = d_.Int(D::Child(e, "weight"), p + ".weight", 1, 100);
        if (!weight) {
          if (!D::Present(D::Child(e, "weight"))) d_.Error(p + ".weight", "is required");
          continue;
        }
        Node pe = D::Child(e, "preference");
        if (!D::Present(pe)) {
          d_.Error(p + ".preference", "is required");
          continue;
        }
        if (auto term = DecodeNodeSelectorTerm(pe, p + ".preference")) {
          a.node_affinity.preferred.push_back({static_cast<int32_t>(*weight), *term});
        }
      }
    }
  }
  a.pod_affinity = DecodePodAffinityRules(D::Child(n, "podAffinity"), path + ".podAffinity");
  a.pod_anti_affinity =
      DecodePodAffinityRules(D::Child(n, "podAntiAffinity"), path + ".podAntiAffinity");
}

std::vector<model::Toleration> ObjectDecoder::DecodeTolerations(const Node& n,
                                                                const std::string& path) {
  std::vector<model::Toleration> out;
  if (!D::Present(n) || !d_.ExpectSeq(n, path)) return out;
  size_t i = 0;
  for (const auto& e : n) {
    const std::string p = Idx(path, i++);
    if (!d_.ExpectMap(e, p)) continue;
    model::Toleration t;
    t.key = d_.String(D::Child(e, "key"), p + ".key").value_or("");
    std::string op = d_.String(D::Child(e, "operator"), p + ".operator").value_or("Equal");
    if (op == "Exists") {
      t.op = model::Toleration::Op::kExists;
    } else if (op == "Equal") {
      t.op = model::Toleration::Op::kEqual;
    } else {
      d_.Error(p + ".operator", "unsupported operator \"" + op + "\" (want Equal or Exists)");
      continue;
    }
    t.value = d_.String(D::Child(e, "value"), p + ".value").value_or("");
    if (t.op == model::Toleration::Op::kExists && !t.value.empty()) {
      d_.Error(p + ".value", "must be empty when operator is Exists");
      continue;
    }
    if (t.key.empty() && t.op != model::Toleration::Op::kExists) {
      d_.Error(p + ".operator", "must be Exists when key is empty");
      continue;
    }
    if (auto eff = d_.String(D::Child(e, "effect"), p + ".effect"); eff && !eff->empty()) {
      t.effect = model::ParseTaintEffect(*eff);
      if (!t.effect) {
        d_.Error(p + ".effect", "unsupported effect \"" + *eff +
                                    "\" (want NoSchedule, PreferNoSchedule or NoExecute)");
        continue;
      }
    }
    t.toleration_seconds = d_.Int(D::Child(e, "tolerationSeconds"), p + ".tolerationSeconds",
                                  INT64_MIN, INT64_MAX);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<model::TopologySpreadConstraint> ObjectDecoder::DecodeSpread(const Node& n,
                                                                         const std::string& path) {
  std::vector<model::TopologySpreadConstraint> out;
  if (!D::Present(n) || !d_.ExpectSeq(n, path)) return out;
  size_t i = 0;
  for (const auto& e : n) {
    const std::string p = Idx(path, i++);
    if (!d_.ExpectMap(e, p)) continue;
    model::TopologySpreadConstraint c;
    const size_t errors_before = d_.error_count();
    auto skew = d_.Int(D::Child(e, "maxSkew"), p + ".maxSkew", 1, kInt32Max);
    if (!skew && !D::Present(D::Child(e, "maxSkew"))) d_.Error(p + ".maxSkew", "is required");
    if (skew) c.max_skew = static_cast<int32_t>(*skew);
    auto tk = d_.String(D::Child(e, "topologyKey"), p + ".topologyKey");
    if (!tk || tk->empty()) {
      d_.Error(p + ".topologyKey", "is required");
    } else {
      c.topology_key = *tk;
    }
    auto wu = d_.String(D::Child(e, "whenUnsatisfiable"), p + ".whenUnsatisfiable");
    if (!wu) {
      d_.Error(p + ".whenUnsatisfiable", "is required (DoNotSchedule or ScheduleAnyway)");
    } else if (*wu == "DoNotSchedule") {
      c.when_unsatisfiable = model::UnsatisfiableAction::kDoNotSchedule;
    } else if (*wu == "ScheduleAnyway") {
      c.when_unsatisfiable = model::UnsatisfiableAction::kScheduleAnyway;
    } else {
      d_.Error(p + ".whenUnsatisfiable",
               "unsupported value \"" + *wu + "\" (want DoNotSchedule or ScheduleAnyway)");
    }
    c.label_selector = DecodeLabelSelector(D::Child(e, "labelSelector"), p + ".labelSelector");
    if (auto md = d_.Int(D::Child(e, "minDomains"), p + ".minDomains", 1, kInt32Max)) {
      c.min_domains = static_cast<int32_t>(*md);
      if (c.when_unsatisfiable != model::UnsatisfiableAction::kDoNotSchedule) {
        d_.Error(p + ".minDomains", "may only be set when whenUnsatisfiable is DoNotSchedule");
      }
    }
    auto policy = [&](std::string_view field, model::NodeInclusionPolicy& out_policy) {
      auto v = d_.String(D::Child(e, field), p + "." + std::string(field));
      if (!v) return;
      if (*v == "Honor") {
        out_policy = model::NodeInclusionPolicy::kHonor;
      } else if (*v == "Ignore") {
        out_policy = model::NodeInclusionPolicy::kIgnore;
      } else {
        d_.Error(p + "." + std::string(field),
                 "unsupported value \"" + *v + "\" (want Honor or Ignore)");
      }
    };
    policy("nodeAffinityPolicy", c.node_affinity_policy);
    policy("nodeTaintsPolicy", c.node_taints_policy);
    c.match_label_keys = d_.StringList(D::Child(e, "matchLabelKeys"), p + ".matchLabelKeys");
    if (d_.error_count() == errors_before) out.push_back(std::move(c));
  }
  return out;
}

void ObjectDecoder::DecodeNode(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/false);
  model::Node node;
  node.name = m.name;
  node.labels = m.labels;
  Node spec = D::Child(root, "spec");
  if (d_.ExpectMap(spec, "spec")) {
    node.unschedulable = d_.Bool(D::Child(spec, "unschedulable"), "spec.unschedulable").value_or(false);
    Node taints = D::Child(spec, "taints");
    if (D::Present(taints) && d_.ExpectSeq(taints, "spec.taints")) {
      size_t i = 0;
      for (const auto& t : taints) {
        const std::string p = Idx("spec.taints", i++);
        if (!d_.ExpectMap(t, p)) continue;
        model::Taint taint;
        auto key = d_.String(D::Child(t, "key"), p + ".key");
        if (!key || key->empty()) {
          d_.Error(p + ".key", "is required");
          continue;
        }
        if (std::string err = ValidateLabelKey(*key); !err.empty()) {
          d_.Error(p + ".key", "invalid taint key \"" + *key + "\": " + err);
          continue;
        }
        taint.key = *key;
        taint.value = d_.String(D::Child(t, "value"), p + ".value").value_or("");
        auto eff = d_.String(D::Child(t, "effect"), p + ".effect");
        auto parsed = eff ? model::ParseTaintEffect(*eff) : std::nullopt;
        if (!parsed) {
          d_.Error(p + ".effect", eff ? "unsupported effect \"" + *eff +
                                            "\" (want NoSchedule, PreferNoSchedule or NoExecute)"
                                      : std::string("is required"));
          continue;
        }
        taint.effect = *parsed;
        node.taints.push_back(std::move(taint));
      }
    }
  }
  Node status = D::Child(root, "status");
  if (d_.ExpectMap(status, "status")) {
    Node alloc = D::Child(status, "allocatable");
    Node cap = D::Child(status, "capacity");
    if (D::Present(cap)) node.capacity = DecodeResourceList(cap, "status.capacity");
    if (D::Present(alloc)) {
      node.allocatable = DecodeResourceList(alloc, "status.allocatable");
    } else {
      node.allocatable = node.capacity;
    }
    if (!D::Present(cap)) node.capacity = node.allocatable;
  }
  out_.nodes.push_back({std::move(node), std::move(origin)});
}

void ObjectDecoder::DecodePod(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/true);
  model::Pod pod;
  pod.ns = m.ns;
  pod.name = m.name;
  pod.uid = m.uid;
  pod.labels = m.labels;
  pod.creation_timestamp = m.creation;
  pod.deletion_timestamp = m.deletion;
  Node spec = D::Child(root, "spec");
  if (!D::Present(spec)) {
    d_.Error("spec.containers", "is required");
  } else if (d_.ExpectMap(spec, "spec")) {
    pod.node_name = d_.String(D::Child(spec, "nodeName"), "spec.nodeName").value_or("");
    pod.scheduler_name =
        d_.String(D::Child(spec, "schedulerName"), "spec.schedulerName").value_or("default-scheduler");
    pod.priority_class_name =
        d_.String(D::Child(spec, "priorityClassName"), "spec.priorityClassName").value_or("");
    if (auto p = d_.Int(D::Child(spec, "priority"), "spec.priority", kInt32Min, kInt32Max)) {
      pod.spec_priority = static_cast<int32_t>(*p);
    }
    if (auto pp = d_.String(D::Child(spec, "preemptionPolicy"), "spec.preemptionPolicy")) {
      pod.spec_preemption_policy = model::ParsePreemptionPolicy(*pp);
      if (!pod.spec_preemption_policy) {
        d_.Error("spec.preemptionPolicy",
                 "unsupported value \"" + *pp + "\" (want PreemptLowerPriority or Never)");
      }
    }
    // Containers, init containers and overhead make the effective request.
    std::vector<model::ContainerRequests> containers;
    std::vector<model::ContainerRequests> non_zero;  // with the scoring defaults filled in
    auto decode_containers = [&](std::string_view field, bool init) {
      Node list = D::Child(spec, field);
      const std::string path = "spec." + std::string(field);
      if (!init && (!D::Present(list) || (list.IsSequence() && list.size() == 0))) {
        d_.Error(path, "must have at least one container");
        return;
      }
      if (!D::Present(list) || !d_.ExpectSeq(list, path)) return;
      size_t i = 0;
      for (const auto& c : list) {
        const std::string p = Idx(path, i++);
        if (!d_.ExpectMap(c, p)) continue;
        model::ContainerRequests cr;
        cr.init = init;
        Node res = D::Child(c, "resources");
        if (D::Present(res) && d_.ExpectMap(res, p + ".resources")) {
          cr.requests = DecodeResourceList(D::Child(res, "requests"), p + ".resources.requests");
          model::Resources limits =
              DecodeResourceList(D::Child(res, "limits"), p + ".resources.limits");
          // A limit without a request makes the request equal to the limit (API defaulting).
          Node req_node = D::Child(res, "requests");
          Node lim_node = D::Child(res, "limits");
          if (lim_node.IsMap()) {
            for (auto it = lim_node.begin(); it != lim_node.end(); ++it) {
              if (!it->first.IsScalar()) continue;
              const std::string name = it->first.Scalar();
              if (!D::Present(D::Child(req_node, name))) cr.requests.Set(name, limits.Get(name));
              else if (cr.requests.Get(name) > limits.Get(name)) {
                d_.Error(p + ".resources.requests." + name, "must be less than or equal to the " + name + " limit");
              }
            }
          }
        }
        if (init) {
          if (auto rp = d_.String(D::Child(c, "restartPolicy"), p + ".restartPolicy")) {
            if (*rp != "Always") {
              d_.Error(p + ".restartPolicy", "unsupported value \"" + *rp + "\" (only Always)");
            }
            cr.restartable = true;
          }
        }
        Node ports = D::Child(c, "ports");
        if (D::Present(ports) && d_.ExpectSeq(ports, p + ".ports")) {
          size_t j = 0;
          for (const auto& port : ports) {
            const std::string pp = Idx(p + ".ports", j++);
            if (!d_.ExpectMap(port, pp)) continue;
            auto hp = d_.Int(D::Child(port, "hostPort"), pp + ".hostPort", 0, 65535);
            d_.Int(D::Child(port, "containerPort"), pp + ".containerPort", 1, 65535);
            std::string proto = d_.String(D::Child(port, "protocol"), pp + ".protocol").value_or("TCP");
            if (proto != "TCP" && proto != "UDP" && proto != "SCTP") {
              d_.Error(pp + ".protocol", "unsupported value \"" + proto + "\" (want TCP, UDP or SCTP)");
              continue;
            }
            // Only app containers and restartable (sidecar) init containers hold host ports
            // while the pod runs; a one-shot init container's ports are not reserved.
            if (hp && *hp > 0 && (!init || cr.restartable)) {
              model::HostPort h;
              h.port = static_cast<int32_t>(*hp);
              h.protocol = proto;
              h.host_ip = d_.String(D::Child(port, "hostIP"), pp + ".hostIP").value_or("0.0.0.0");
              if (h.host_ip.empty()) h.host_ip = "0.0.0.0";
              pod.host_ports.push_back(std::move(h));
            }
          }
        }
        if (!init) {
          pod.container_requests.emplace_back(d_.String(D::Child(c, "name"), p + ".name").value_or(""), cr.requests);
        }
        model::ContainerRequests nz = cr;
        Node req_node = D::Child(res, "requests");
        Node lim_node = D::Child(res, "limits");
        auto stated = [&](std::string_view name) {
          return D::Present(D::Child(req_node, name)) || D::Present(D::Child(lim_node, name));
        };
        if (!stated(model::kResourceCpu)) nz.requests.milli_cpu = model::kDefaultMilliCpuRequest;
        if (!stated(model::kResourceMemory)) nz.requests.memory = model::kDefaultMemoryRequest;
        non_zero.push_back(std::move(nz));
        containers.push_back(std::move(cr));
      }
    };
    decode_containers("initContainers", true);
    decode_containers("containers", false);
    model::Resources overhead = DecodeResourceList(D::Child(spec, "overhead"), "spec.overhead");
    pod.requests = model::EffectivePodRequests(containers, overhead);
    for (const std::string_view r : {model::kResourceCpu, model::kResourceMemory, model::kResourceEphemeralStorage}) {
      if (pod.requests.Get(r) > model::kMaxResourceAmount) {
        d_.Error("spec.containers", "the pod's " + std::string(r) + " requests add up to more than Arbiter accepts (2^53 " +
                                        (r == model::kResourceCpu ? "millicores" : "bytes") + ")");
      }
    }
    const model::Resources nz = model::EffectivePodRequests(non_zero, overhead);
    pod.non_zero_milli_cpu = nz.milli_cpu;
    pod.non_zero_memory = nz.memory;
    pod.node_selector = model::LabelMap(d_.StringMap(D::Child(spec, "nodeSelector"), "spec.nodeSelector"));
    DecodeAffinity(D::Child(spec, "affinity"), "spec.affinity", pod.affinity);
    pod.tolerations = DecodeTolerations(D::Child(spec, "tolerations"), "spec.tolerations");
    pod.topology_spread_constraints =
        DecodeSpread(D::Child(spec, "topologySpreadConstraints"), "spec.topologySpreadConstraints");
    if (auto g = d_.Int(D::Child(spec, "terminationGracePeriodSeconds"),
                        "spec.terminationGracePeriodSeconds", 0, INT64_MAX / kSecond)) {
      pod.termination_grace_period_seconds = *g;
    }
    Node sg = D::Child(spec, "schedulingGroup");
    if (D::Present(sg) && d_.ExpectMap(sg, "spec.schedulingGroup")) {
      const std::string gp = "spec.schedulingGroup.podGroupName";
      auto group = d_.String(D::Child(sg, "podGroupName"), gp);
      if (!group || group->empty()) {
        if (!D::Present(D::Child(sg, "podGroupName")) || group) d_.Error(gp, "is required");
      } else if (std::string err = ValidateDnsSubdomain(*group); !err.empty()) {
        d_.Error(gp, "invalid name \"" + *group + "\": " + err);
      } else {
        pod.pod_group_name = *group;
      }
    }
  }
  Node status = D::Child(root, "status");
  if (d_.ExpectMap(status, "status")) {
    pod.start_time = d_.Timestamp(D::Child(status, "startTime"), "status.startTime");
    Node conditions = D::Child(status, "conditions");
    if (D::Present(conditions) && d_.ExpectSeq(conditions, "status.conditions")) {
      size_t i = 0;
      for (const auto& c : conditions) {
        const std::string cp = Idx("status.conditions", i++);
        if (!d_.ExpectMap(c, cp)) continue;
        const std::string type = d_.String(D::Child(c, "type"), cp + ".type").value_or("");
        const std::string st = d_.String(D::Child(c, "status"), cp + ".status").value_or("");
        const std::string reason = d_.String(D::Child(c, "reason"), cp + ".reason").value_or("");
        if (type == "DisruptionTarget" && st == "True" && reason == "PreemptionByScheduler") {
          pod.preempted_by_scheduler = true;
        }
      }
    }
    pod.nominated_node_name =
        d_.String(D::Child(status, "nominatedNodeName"), "status.nominatedNodeName").value_or("");
  }
  if (pod.uid.empty()) pod.uid = pod.ns + "/" + pod.name;  // stable, unique within the input
  out_.pods.push_back({std::move(pod), std::move(origin)});
}

void ObjectDecoder::DecodePriorityClass(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/false);
  model::PriorityClass pc;
  pc.name = m.name;
  Node v = D::Child(root, "value");
  if (!D::Present(v)) {
    d_.Error("value", "is required");
  } else if (auto value = d_.Int(v, "value", kInt32Min, kInt32Max)) {
    pc.value = static_cast<int32_t>(*value);
  }
  pc.global_default = d_.Bool(D::Child(root, "globalDefault"), "globalDefault").value_or(false);
  if (auto pp = d_.String(D::Child(root, "preemptionPolicy"), "preemptionPolicy")) {
    if (auto policy = model::ParsePreemptionPolicy(*pp)) {
      pc.preemption_policy = *policy;
    } else {
      d_.Error("preemptionPolicy",
               "unsupported value \"" + *pp + "\" (want PreemptLowerPriority or Never)");
    }
  }
  pc.description = d_.String(D::Child(root, "description"), "description").value_or("");
  out_.priority_classes.push_back({std::move(pc), std::move(origin)});
}

std::optional<model::IntOrPercent> ObjectDecoder::DecodeIntOrPercent(const Node& n,
                                                                     const std::string& path) {
  if (!D::Present(n)) return std::nullopt;
  if (!n.IsScalar()) {
    d_.Error(path, "must be an integer or a percentage such as \"50%\"");
    return std::nullopt;
  }
  std::string s = n.Scalar();
  model::IntOrPercent v;
  if (!s.empty() && s.back() == '%') {
    v.percent = true;
    s.pop_back();
  }
  bool digits = !s.empty() && s.size() <= 9 &&
                std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || (v.percent && std::stoi(s) > 100)) {
    d_.Error(path, "must be a non-negative integer or a percentage between 0% and 100%, not \"" +
                       n.Scalar() + "\"");
    return std::nullopt;
  }
  v.value = std::stoi(s);
  return v;
}

void ObjectDecoder::DecodePdb(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/true);
  model::PodDisruptionBudget pdb;
  pdb.ns = m.ns;
  pdb.name = m.name;
  Node spec = D::Child(root, "spec");
  if (d_.ExpectMap(spec, "spec")) {
    auto sel = DecodeLabelSelector(D::Child(spec, "selector"), "spec.selector");
    if (sel) pdb.selector = *sel;
    pdb.min_available = DecodeIntOrPercent(D::Child(spec, "minAvailable"), "spec.minAvailable");
    pdb.max_unavailable = DecodeIntOrPercent(D::Child(spec, "maxUnavailable"), "spec.maxUnavailable");
    if (pdb.min_available && pdb.max_unavailable) {
      d_.Error("spec.maxUnavailable", "may not be set together with spec.minAvailable");
    }
  }
  Node status = D::Child(root, "status");
  if (d_.ExpectMap(status, "status")) {
    if (auto da = d_.Int(D::Child(status, "disruptionsAllowed"), "status.disruptionsAllowed", 0,
                         kInt32Max)) {
      pdb.disruptions_allowed = static_cast<int32_t>(*da);
    }
    Node dp = D::Child(status, "disruptedPods");
    if (D::Present(dp) && d_.ExpectMap(dp, "status.disruptedPods")) {
      for (auto it = dp.begin(); it != dp.end(); ++it) {
        if (it->first.IsScalar()) pdb.disrupted_pods.push_back(pdb.ns + "/" + it->first.Scalar());
      }
    }
  }
  out_.pdbs.push_back({std::move(pdb), std::move(origin)});
}

void ObjectDecoder::DecodeNamespace(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/false);
  if (std::string err = ValidateDnsLabel(m.name); !m.name.empty() && !err.empty()) {
    d_.Error("metadata.name", "invalid namespace name \"" + m.name + "\": " + err);
  }
  out_.namespaces.push_back({model::Namespace{m.name, m.labels}, std::move(origin)});
}

ObjectDecoder::GroupPolicyValue ObjectDecoder::DecodeGroupPolicy(const Node& parent,
                                                                 const std::string& prefix,
                                                                 std::string_view count_field) {
  GroupPolicyValue v;
  const std::string path = prefix + "schedulingPolicy";
  const std::string want = "(want basic: {} or gang: {" + std::string(count_field) + ": N})";
  Node n = D::Child(parent, "schedulingPolicy");
  if (!D::Present(n)) {
    d_.Error(path, "is required " + want);
    return v;
  }
  if (!d_.ExpectMap(n, path)) return v;
  const size_t errors_before = d_.error_count();
  bool basic = false;
  bool gang = false;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    if (key == "basic") {
      basic = d_.ExpectMap(it->second, path + ".basic");
    } else if (key == "gang") {
      gang = true;
    } else {
      d_.Error(path, "unknown scheduling policy \"" + key + "\" " + want);
    }
  }
  if (basic && gang) {
    d_.Error(path, "sets both basic and gang; exactly one may be set");
    return v;
  }
  if (gang) {
    const std::string gp = path + ".gang";
    Node g = D::Child(n, "gang");
    if (!D::Present(g)) {
      d_.Error(gp + "." + std::string(count_field), "is required");
      return v;
    }
    if (!d_.ExpectMap(g, gp)) return v;
    const std::string cp = gp + "." + std::string(count_field);
    Node c = D::Child(g, count_field);
    if (!D::Present(c)) {
      d_.Error(cp, "is required");
    } else if (auto count = d_.Int(c, cp, kInt32Min, kInt32Max)) {
      if (*count < 1) {
        d_.Error(cp, "must be at least 1, not " + std::to_string(*count));
      } else {
        v.policy = model::GroupPolicy::kGang;
        v.count = static_cast<int32_t>(*count);
      }
    }
  } else if (!basic && d_.error_count() == errors_before) {
    d_.Error(path, "must set one of basic or gang " + want);
  }
  return v;
}

model::DisruptionMode ObjectDecoder::DecodeDisruptionMode(const Node& parent,
                                                          const std::string& prefix) {
  const std::string path = prefix + "disruptionMode";
  Node n = D::Child(parent, "disruptionMode");
  if (!D::Present(n)) return model::DisruptionMode::kSingle;  // the API default
  if (n.IsScalar()) {
    // v1alpha2 wrote the mode as a string ("Pod" or "PodGroup").
    d_.Error(path, "must be an object, {single: {}} or {all: {}}, not the string \"" + n.Scalar() +
                       "\" (the v1alpha2 form)");
    return model::DisruptionMode::kSingle;
  }
  if (!d_.ExpectMap(n, path)) return model::DisruptionMode::kSingle;
  std::vector<model::DisruptionMode> modes;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    if (key == "single" || key == "all") {
      if (!D::Present(it->second)) {
        d_.Error(path + "." + key, "must be an object ({})");
        continue;
      }
      if (!d_.ExpectMap(it->second, path + "." + key)) continue;
      modes.push_back(key == "all" ? model::DisruptionMode::kAll : model::DisruptionMode::kSingle);
    } else {
      d_.Error(path, "unknown disruption mode \"" + key + "\" (want single: {} or all: {})");
      return model::DisruptionMode::kSingle;
    }
  }
  if (modes.size() > 1) {
    d_.Error(path, "sets both single and all; exactly one may be set");
  } else if (modes.empty() && n.size() == 0) {
    d_.Error(path, "must set one of single: {} or all: {}");
  } else if (modes.size() == 1) {
    return modes[0];
  }
  return model::DisruptionMode::kSingle;
}

model::GroupPriority ObjectDecoder::DecodeGroupPriority(const Node& parent,
                                                        const std::string& prefix) {
  model::GroupPriority p;
  const std::string pcp = prefix + "priorityClassName";
  p.priority_class_name = d_.String(D::Child(parent, "priorityClassName"), pcp).value_or("");
  if (!p.priority_class_name.empty()) {
    if (std::string err = ValidateDnsSubdomain(p.priority_class_name); !err.empty()) {
      d_.Error(pcp, "invalid priority class name \"" + p.priority_class_name + "\": " + err);
    }
  }
  if (auto v = d_.Int(D::Child(parent, "priority"), prefix + "priority", kInt32Min, kInt32Max)) {
    p.spec_priority = static_cast<int32_t>(*v);
  }
  const std::string ppp = prefix + "preemptionPolicy";
  if (auto pp = d_.String(D::Child(parent, "preemptionPolicy"), ppp)) {
    p.spec_preemption_policy = model::ParsePreemptionPolicy(*pp);
    if (!p.spec_preemption_policy) {
      d_.Error(ppp, "unsupported value \"" + *pp + "\" (want PreemptLowerPriority or Never)");
    }
  }
  return p;
}

std::optional<model::WorkloadReference> ObjectDecoder::DecodeWorkloadRef(const Node& parent,
                                                                         const std::string& prefix) {
  const std::string path = prefix + "workloadRef";
  Node n = D::Child(parent, "workloadRef");
  if (!D::Present(n) || !d_.ExpectMap(n, path)) return std::nullopt;
  model::WorkloadReference ref;
  bool ok = true;
  auto name = [&](std::string_view field, bool label, std::string& out) {
    const std::string fp = path + "." + std::string(field);
    auto v = d_.String(D::Child(n, field), fp);
    if (!v || v->empty()) {
      if (!D::Present(D::Child(n, field)) || v) d_.Error(fp, "is required");
      ok = false;
      return;
    }
    if (std::string err = label ? ValidateDnsLabel(*v) : ValidateDnsSubdomain(*v); !err.empty()) {
      d_.Error(fp, "invalid name \"" + *v + "\": " + err);
      ok = false;
      return;
    }
    out = *v;
  };
  name("workloadName", false, ref.workload_name);
  name("templateName", true, ref.template_name);
  if (!ok) return std::nullopt;
  return ref;
}

std::string ObjectDecoder::DecodeParentName(const Node& parent, const std::string& prefix) {
  const std::string path = prefix + "parentCompositePodGroupName";
  auto v = d_.String(D::Child(parent, "parentCompositePodGroupName"), path);
  if (!v) return "";
  if (std::string err = ValidateDnsSubdomain(*v); !err.empty()) {
    d_.Error(path, "invalid name \"" + *v + "\": " + err);
    return "";
  }
  return *v;
}

std::string ObjectDecoder::DecodeTemplateName(const Node& t, const std::string& prefix,
                                              std::map<std::string, std::string>& names) {
  const std::string path = prefix + "name";
  auto v = d_.String(D::Child(t, "name"), path);
  if (!v || v->empty()) {
    if (!D::Present(D::Child(t, "name")) || v) d_.Error(path, "is required");
    return "";
  }
  if (std::string err = ValidateDnsLabel(*v); !err.empty()) {
    d_.Error(path, "invalid template name \"" + *v + "\": " + err);
    return *v;
  }
  if (auto [it, inserted] = names.emplace(*v, path); !inserted) {
    d_.Error(path, "duplicate template name \"" + *v + "\" (also used at " + it->second +
                       "); names must be unique across the Workload");
  }
  return *v;
}

std::vector<model::PodGroupTemplate> ObjectDecoder::DecodePodGroupTemplates(
    const Node& parent, const std::string& prefix, int depth,
    std::map<std::string, std::string>& names) {
  std::vector<model::PodGroupTemplate> out;
  const std::string path = prefix + "podGroupTemplates";
  Node list = D::Child(parent, "podGroupTemplates");
  if (!D::Present(list) || !d_.ExpectSeq(list, path)) return out;
  if (list.size() > model::kMaxTemplatesPerList) {
    d_.Error(path, "has " + std::to_string(list.size()) + " templates; at most " +
                       std::to_string(model::kMaxTemplatesPerList) + " are allowed");
  }
  if (depth > model::kMaxGroupHierarchyDepth && list.size() > 0) {
    d_.Error(path, "templates nest " + std::to_string(depth) + " levels deep; at most " +
                       std::to_string(model::kMaxGroupHierarchyDepth) + " are allowed");
    return out;
  }
  size_t i = 0;
  for (const auto& t : list) {
    const std::string p = Idx(path, i++) + ".";
    if (!d_.ExpectMap(t, p.substr(0, p.size() - 1))) continue;
    model::PodGroupTemplate tmpl;
    tmpl.name = DecodeTemplateName(t, p, names);
    GroupPolicyValue pol = DecodeGroupPolicy(t, p, "minCount");
    tmpl.policy = pol.policy;
    tmpl.min_count = pol.count;
    tmpl.disruption_mode = DecodeDisruptionMode(t, p);
    tmpl.priority = DecodeGroupPriority(t, p);
    out.push_back(std::move(tmpl));
  }
  return out;
}

std::vector<model::CompositePodGroupTemplate> ObjectDecoder::DecodeCompositeTemplates(
    const Node& parent, const std::string& prefix, int depth,
    std::map<std::string, std::string>& names) {
  std::vector<model::CompositePodGroupTemplate> out;
  const std::string path = prefix + "compositePodGroupTemplates";
  Node list = D::Child(parent, "compositePodGroupTemplates");
  if (!D::Present(list) || !d_.ExpectSeq(list, path)) return out;
  if (list.size() > model::kMaxTemplatesPerList) {
    d_.Error(path, "has " + std::to_string(list.size()) + " templates; at most " +
                       std::to_string(model::kMaxTemplatesPerList) + " are allowed");
  }
  // A composite template always has children, so it may sit at most one level above the last.
  if (depth >= model::kMaxGroupHierarchyDepth && list.size() > 0) {
    d_.Error(path, "templates nest more than " + std::to_string(model::kMaxGroupHierarchyDepth) +
                       " levels deep (composite templates at level " + std::to_string(depth) +
                       " leave no room for their children)");
    return out;
  }
  size_t i = 0;
  for (const auto& t : list) {
    const std::string p = Idx(path, i++) + ".";
    if (!d_.ExpectMap(t, p.substr(0, p.size() - 1))) continue;
    model::CompositePodGroupTemplate tmpl;
    tmpl.name = DecodeTemplateName(t, p, names);
    GroupPolicyValue pol = DecodeGroupPolicy(t, p, "minGroupCount");
    tmpl.policy = pol.policy;
    tmpl.min_group_count = pol.count;
    tmpl.disruption_mode = DecodeDisruptionMode(t, p);
    tmpl.priority = DecodeGroupPriority(t, p);
    tmpl.pod_group_templates = DecodePodGroupTemplates(t, p, depth + 1, names);
    tmpl.composite_pod_group_templates = DecodeCompositeTemplates(t, p, depth + 1, names);
    if (!D::Present(D::Child(t, "podGroupTemplates")) &&
        !D::Present(D::Child(t, "compositePodGroupTemplates"))) {
      d_.Error(p + "podGroupTemplates",
               "a composite template needs podGroupTemplates or compositePodGroupTemplates");
    }
    out.push_back(std::move(tmpl));
  }
  return out;
}

void ObjectDecoder::DecodeWorkload(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/true);
  model::Workload w;
  w.ns = m.ns;
  w.name = m.name;
  Node spec = D::Child(root, "spec");
  if (!D::Present(spec)) {
    d_.Error("spec.podGroupTemplates", "is required");
  } else if (d_.ExpectMap(spec, "spec")) {
    Node cr = D::Child(spec, "controllerRef");
    if (D::Present(cr) && d_.ExpectMap(cr, "spec.controllerRef")) {
      model::TypedLocalObjectReference ref;
      ref.api_group = d_.String(D::Child(cr, "apiGroup"), "spec.controllerRef.apiGroup").value_or("");
      ref.kind = d_.String(D::Child(cr, "kind"), "spec.controllerRef.kind").value_or("");
      ref.name = d_.String(D::Child(cr, "name"), "spec.controllerRef.name").value_or("");
      if (ref.kind.empty()) d_.Error("spec.controllerRef.kind", "is required");
      if (ref.name.empty()) d_.Error("spec.controllerRef.name", "is required");
      w.controller_ref = std::move(ref);
    }
    const size_t errors_before = d_.error_count();
    std::map<std::string, std::string> names;
    const bool has_pg = D::Present(D::Child(spec, "podGroupTemplates"));
    const bool has_cpg = D::Present(D::Child(spec, "compositePodGroupTemplates"));
    w.pod_group_templates = DecodePodGroupTemplates(spec, "spec.", 1, names);
    w.composite_pod_group_templates = DecodeCompositeTemplates(spec, "spec.", 1, names);
    if (has_pg && has_cpg) {
      d_.Error("spec.compositePodGroupTemplates",
               "may not be set together with spec.podGroupTemplates; exactly one may be set");
    } else if (!has_pg && !has_cpg) {
      d_.Error("spec.podGroupTemplates", "is required (or spec.compositePodGroupTemplates)");
    } else if (w.pod_group_templates.empty() && w.composite_pod_group_templates.empty() &&
               d_.error_count() == errors_before) {
      d_.Error(has_pg ? "spec.podGroupTemplates" : "spec.compositePodGroupTemplates",
               "must hold at least one template");
    }
  }
  out_.workloads.push_back({std::move(w), std::move(origin)});
}

void ObjectDecoder::DecodePodGroup(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/true);
  model::PodGroup g;
  g.ns = m.ns;
  g.name = m.name;
  Node spec = D::Child(root, "spec");
  if (!D::Present(spec)) {
    d_.Error("spec.schedulingPolicy", "is required (want basic: {} or gang: {minCount: N})");
  } else if (d_.ExpectMap(spec, "spec")) {
    g.workload_ref = DecodeWorkloadRef(spec, "spec.");
    g.parent = DecodeParentName(spec, "spec.");
    if (!g.parent.empty() && !D::Present(D::Child(spec, "workloadRef"))) {
      d_.Error("spec.workloadRef", "is required when spec.parentCompositePodGroupName is set");
    }
    GroupPolicyValue pol = DecodeGroupPolicy(spec, "spec.", "minCount");
    g.policy = pol.policy;
    g.min_count = pol.count;
    g.disruption_mode = DecodeDisruptionMode(spec, "spec.");
    g.priority = DecodeGroupPriority(spec, "spec.");
  }
  out_.pod_groups.push_back({std::move(g), std::move(origin)});
}

void ObjectDecoder::DecodeCompositePodGroup(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/true);
  model::CompositePodGroup g;
  g.ns = m.ns;
  g.name = m.name;
  Node spec = D::Child(root, "spec");
  if (!D::Present(spec)) {
    d_.Error("spec.workloadRef", "is required");
  } else if (d_.ExpectMap(spec, "spec")) {
    if (auto ref = DecodeWorkloadRef(spec, "spec.")) {
      g.workload_ref = std::move(*ref);
    } else if (!D::Present(D::Child(spec, "workloadRef"))) {
      d_.Error("spec.workloadRef", "is required for a CompositePodGroup");
    }
    g.parent = DecodeParentName(spec, "spec.");
    GroupPolicyValue pol = DecodeGroupPolicy(spec, "spec.", "minGroupCount");
    g.policy = pol.policy;
    g.min_group_count = pol.count;
    g.disruption_mode = DecodeDisruptionMode(spec, "spec.");
    g.priority = DecodeGroupPriority(spec, "spec.");
  }
  out_.composite_pod_groups.push_back({std::move(g), std::move(origin)});
}

void ObjectDecoder::DecodePodMetrics(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/true);
  model::PodMetrics pm;
  pm.ns = m.ns;
  pm.name = m.name;
  Node list = D::Child(root, "containers");
  if (D::Present(list) && d_.ExpectSeq(list, "containers")) {
    size_t i = 0;
    for (const auto& c : list) {
      const std::string p = Idx("containers", i++);
      if (!d_.ExpectMap(c, p)) continue;
      const std::string name = d_.String(D::Child(c, "name"), p + ".name").value_or("");
      if (name.empty()) d_.Error(p + ".name", "is required");
      pm.containers.emplace_back(name, DecodeResourceList(D::Child(c, "usage"), p + ".usage"));
    }
  }
  out_.pod_metrics.push_back({std::move(pm), std::move(origin)});
}

void ObjectDecoder::DecodeKubeletConfig(const Node& root, Origin origin) {
  model::KubeletConfig cfg = model::KubeletConfig::Defaults();
  Node hard = D::Child(root, "evictionHard");
  if (D::Present(hard) && d_.ExpectMap(hard, "evictionHard")) {
    cfg.eviction_hard.clear();
    for (auto it = hard.begin(); it != hard.end(); ++it) {
      const std::string signal = it->first.IsScalar() ? it->first.Scalar() : "";
      const std::string field = "evictionHard." + signal;
      if (signal != "memory.available" && signal != "nodefs.available" && signal != "imagefs.available" &&
          signal != "nodefs.inodesFree" && signal != "imagefs.inodesFree" && signal != "pid.available") {
        d_.Error(field, "unknown eviction signal (memory.available, nodefs.available, nodefs.inodesFree, "
                        "imagefs.available, imagefs.inodesFree, pid.available)");
        continue;
      }
      auto text = d_.String(it->second, field);
      if (!text) continue;
      model::EvictionThreshold t;
      t.signal = signal;
      t.text = *text;
      if (!text->empty() && text->back() == '%') {
        char* end = nullptr;
        const double v = std::strtod(text->c_str(), &end);
        if (end != text->c_str() + text->size() - 1 || v < 0 || v > 100) {
          d_.Error(field, "invalid percentage \"" + *text + "\" (want 0% to 100%)");
          continue;
        }
        t.percentage = v;
      } else {
        auto q = model::Quantity::Parse(*text);
        if (!q.ok()) {
          d_.Error(field, q.status().message());
          continue;
        }
        t.quantity = q->value();
      }
      cfg.eviction_hard.push_back(std::move(t));
    }
  }
  if (out_.kubelet_config) {
    d_.Error("", "a second KubeletConfiguration (the first is at " + out_.kubelet_config->origin.ToString() + ")");
    return;
  }
  out_.kubelet_config = Sourced<model::KubeletConfig>{std::move(cfg), std::move(origin)};
}

void ObjectDecoder::DecodeConfig(const Node& root, Origin origin) {
  model::SchedulerConfig cfg;
  if (auto p = d_.Int(D::Child(root, "percentageOfNodesToScore"), "percentageOfNodesToScore", 0, 100)) {
    cfg.percentage_of_nodes_to_score = static_cast<int32_t>(*p);
  }
  if (auto b = d_.Int(D::Child(root, "podInitialBackoffSeconds"), "podInitialBackoffSeconds", 1, 3600)) {
    cfg.pod_initial_backoff_seconds = *b;
  }
  if (auto b = d_.Int(D::Child(root, "podMaxBackoffSeconds"), "podMaxBackoffSeconds", 1, 3600)) {
    cfg.pod_max_backoff_seconds = *b;
  }
  if (cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds) {
    d_.Error("podMaxBackoffSeconds", "must be at least podInitialBackoffSeconds");
  }
  Node gates = D::Child(root, "featureGates");
  if (D::Present(gates) && d_.ExpectMap(gates, "featureGates")) {
    for (auto it = gates.begin(); it != gates.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      const std::string name = it->first.Scalar();
      if (auto v = d_.Bool(it->second, "featureGates." + name)) cfg.feature_gates[name] = *v;
    }
  }
  Node profiles = D::Child(root, "profiles");
  if (D::Present(profiles) && d_.ExpectSeq(profiles, "profiles")) {
    if (profiles.size() > 1) d_.Error("profiles", "only one profile is supported");
    size_t i = 0;
    for (const auto& prof : profiles) {
      const std::string p = Idx("profiles", i++);
      if (!d_.ExpectMap(prof, p)) continue;
      cfg.scheduler_name =
          d_.String(D::Child(prof, "schedulerName"), p + ".schedulerName").value_or(cfg.scheduler_name);
      Node plugins = D::Child(prof, "plugins");
      if (D::Present(plugins) && d_.ExpectMap(plugins, p + ".plugins")) {
        for (auto it = plugins.begin(); it != plugins.end(); ++it) {
          if (!it->first.IsScalar()) continue;
          const std::string point = it->first.Scalar();
          const std::string pp = p + ".plugins." + point;
          if (!d_.ExpectMap(it->second, pp)) continue;
          Node enabled = D::Child(it->second, "enabled");
          if (D::Present(enabled) && d_.ExpectSeq(enabled, pp + ".enabled")) {
            size_t j = 0;
            for (const auto& e : enabled) {
              const std::string ep = Idx(pp + ".enabled", j++);
              if (!d_.ExpectMap(e, ep)) continue;
              auto name = d_.String(D::Child(e, "name"), ep + ".name");
              if (!D::Present(D::Child(e, "name"))) d_.Error(ep + ".name", "is required");
              auto weight = d_.Int(D::Child(e, "weight"), ep + ".weight", 0, 100);
              if (name && weight && point == "score") cfg.score_weights[*name] = static_cast<int32_t>(*weight);
            }
          }
          Node disabled = D::Child(it->second, "disabled");
          if (D::Present(disabled) && d_.ExpectSeq(disabled, pp + ".disabled")) {
            size_t j = 0;
            for (const auto& e : disabled) {
              const std::string dp = Idx(pp + ".disabled", j++);
              if (!d_.ExpectMap(e, dp)) continue;
              auto name = d_.String(D::Child(e, "name"), dp + ".name");
              if (!D::Present(D::Child(e, "name"))) d_.Error(dp + ".name", "is required");
              // A plugin disabled at multiPoint, preFilter, filter or postFilter leaves the
              // profile; at score it keeps filtering but stops scoring.
              if (!name) continue;
              if (point == "multiPoint" || point == "preFilter" || point == "filter" || point == "postFilter") {
                cfg.disabled_plugins.push_back(*name);
              } else if (point == "score") {
                cfg.disabled_plugins.push_back(*name + "/score");
              } else {
                d_.Error(dp + ".name", "Arbiter cannot disable plugins at the " + point +
                                          " extension point (multiPoint, preFilter, filter, postFilter and "
                                          "score are supported)");
              }
            }
          }
        }
      }
      Node pcs = D::Child(prof, "pluginConfig");
      if (!D::Present(pcs) || !d_.ExpectSeq(pcs, p + ".pluginConfig")) continue;
      size_t j = 0;
      for (const auto& pc : pcs) {
        const std::string cp = Idx(p + ".pluginConfig", j++);
        if (!d_.ExpectMap(pc, cp)) continue;
        std::string name = d_.String(D::Child(pc, "name"), cp + ".name").value_or("");
        if (!D::Present(D::Child(pc, "name"))) d_.Error(cp + ".name", "is required");
        Node args = D::Child(pc, "args");
        if (!d_.ExpectMap(args, cp + ".args")) continue;
        const std::string ap = cp + ".args";
        if (name == "DefaultPreemption") {
          if (auto v = d_.Int(D::Child(args, "minCandidateNodesPercentage"),
                              ap + ".minCandidateNodesPercentage", 0, 100)) {
            cfg.min_candidate_nodes_percentage = static_cast<int32_t>(*v);
          }
          if (auto v = d_.Int(D::Child(args, "minCandidateNodesAbsolute"),
                              ap + ".minCandidateNodesAbsolute", 0, kInt32Max)) {
            cfg.min_candidate_nodes_absolute = static_cast<int32_t>(*v);
          }
          if (cfg.min_candidate_nodes_percentage == 0 && cfg.min_candidate_nodes_absolute == 0) {
            d_.Error(ap, "minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero");
          }
          // Arbiter's extension: Nomad's victim policy for pods.
          if (auto v = d_.String(D::Child(args, "victimSelection"), ap + ".victimSelection")) {
            if (*v == "Kubernetes") {
              cfg.victim_selection = model::VictimSelection::kKubernetes;
            } else if (*v == "Nomad") {
              cfg.victim_selection = model::VictimSelection::kNomad;
            } else {
              d_.Error(ap + ".victimSelection", "must be Kubernetes or Nomad, not \"" + *v + "\"");
            }
          }
          if (auto v = d_.Int(D::Child(args, "priorityDelta"), ap + ".priorityDelta", 1, kInt32Max)) {
            cfg.nomad_priority_delta = static_cast<int32_t>(*v);
          }
        } else if (name == "NodeResourcesFit") {
          Node ss = D::Child(args, "scoringStrategy");
          if (!D::Present(ss) || !d_.ExpectMap(ss, ap + ".scoringStrategy")) continue;
          const std::string sp = ap + ".scoringStrategy";
          if (auto t = d_.String(D::Child(ss, "type"), sp + ".type")) {
            if (*t == "LeastAllocated") {
              cfg.scoring_strategy = model::ScoringStrategy::kLeastAllocated;
            } else if (*t == "MostAllocated") {
              cfg.scoring_strategy = model::ScoringStrategy::kMostAllocated;
            } else if (*t == "RequestedToCapacityRatio") {
              cfg.scoring_strategy = model::ScoringStrategy::kRequestedToCapacityRatio;
            } else {
              d_.Error(sp + ".type", "unsupported value \"" + *t +
                                         "\" (want LeastAllocated, MostAllocated or "
                                         "RequestedToCapacityRatio)");
            }
          }
          Node res = D::Child(ss, "resources");
          if (D::Present(res) && d_.ExpectSeq(res, sp + ".resources")) {
            cfg.scoring_resources.clear();
            size_t k = 0;
            for (const auto& r : res) {
              const std::string rp = Idx(sp + ".resources", k++);
              if (!d_.ExpectMap(r, rp)) continue;
              auto rn = d_.String(D::Child(r, "name"), rp + ".name");
              if (!D::Present(D::Child(r, "name"))) d_.Error(rp + ".name", "is required");
              auto w = d_.Int(D::Child(r, "weight"), rp + ".weight", 1, 100);
              if (rn) cfg.scoring_resources.push_back({*rn, w.value_or(1)});
            }
          }
          Node rtc = D::Child(ss, "requestedToCapacityRatio");
          if (D::Present(rtc) && d_.ExpectMap(rtc, sp + ".requestedToCapacityRatio")) {
            Node shape = D::Child(rtc, "shape");
            const std::string shp = sp + ".requestedToCapacityRatio.shape";
            if (D::Present(shape) && d_.ExpectSeq(shape, shp)) {
              cfg.requested_to_capacity_shape.clear();
              size_t k = 0;
              for (const auto& pt : shape) {
                const std::string pp = Idx(shp, k++);
                if (!d_.ExpectMap(pt, pp)) continue;
                auto u = d_.Int(D::Child(pt, "utilization"), pp + ".utilization", 0, 100);
                auto s = d_.Int(D::Child(pt, "score"), pp + ".score", 0, 10);
                if (u && s) {
                  if (!cfg.requested_to_capacity_shape.empty() &&
                      *u <= cfg.requested_to_capacity_shape.back().utilization) {
                    d_.Error(pp + ".utilization", "must be strictly increasing");
                  }
                  cfg.requested_to_capacity_shape.push_back({*u, *s});
                }
              }
              if (cfg.requested_to_capacity_shape.empty()) d_.Error(shp, "must not be empty");
            }
          }
        } else if (name == "InterPodAffinity") {
          if (auto v = d_.Int(D::Child(args, "hardPodAffinityWeight"), ap + ".hardPodAffinityWeight", 0, 100)) {
            cfg.hard_pod_affinity_weight = static_cast<int32_t>(*v);
          }
        }
      }
    }
  }
  if (out_.config) {
    d_.Error("", "a second KubeSchedulerConfiguration (the first is at " +
                     out_.config->origin.ToString() + ")");
    return;
  }
  out_.config = Sourced<model::SchedulerConfig>{std::move(cfg), std::move(origin)};
}

struct KindInfo {
  std::string_view kind;
  std::string_view api_version;
};
constexpr KindInfo kKinds[] = {
    {"Node", "v1"},
    {"Pod", "v1"},
    {"Namespace", "v1"},
    {"PriorityClass", "scheduling.k8s.io/v1"},
    {"PodDisruptionBudget", "policy/v1"},
    {"Workload", "scheduling.k8s.io/v1beta1"},
    {"PodGroup", "scheduling.k8s.io/v1beta1"},
    {"CompositePodGroup", "scheduling.k8s.io/v1alpha3"},
    {"KubeSchedulerConfiguration", "kubescheduler.config.k8s.io/v1"},
    {"PodMetrics", "metrics.k8s.io/v1beta1"},
    {"KubeletConfiguration", "kubelet.config.k8s.io/v1beta1"},
};

void ObjectDecoder::Decode(const Node& root, Origin origin, int list_depth) {
  d_.set_prefix(origin.ToString());
  if (!root.IsMap()) {
    d_.Error("", "a document must be an object with apiVersion and kind");
    return;
  }
  auto kind = d_.String(D::Child(root, "kind"), "kind");
  auto api = d_.String(D::Child(root, "apiVersion"), "apiVersion");
  if (!kind) {
    if (!D::Present(D::Child(root, "kind"))) d_.Error("kind", "is required");
    return;
  }
  if (*kind == "List") {
    Node items = D::Child(root, "items");
    if (!d_.ExpectSeq(items, "items")) return;
    if (!D::Present(items)) return;
    // Lists may hold Lists. YAML aliases could repeat a List many times or make it hold
    // itself: each List is read once.
    if (list_depth == 0) lists_seen_.clear();
    if (const YAML::Mark m = items.Mark(); !m.is_null() && !lists_seen_.insert({m.line, m.column}).second) {
      d_.Error("items", "this List is already included (through a YAML alias)");
      return;
    }
    if (list_depth >= kMaxListDepth) {
      d_.Error("items", "Lists are nested more than " + std::to_string(kMaxListDepth) + " deep");
      return;
    }
    int i = 0;
    for (const auto& item : items) {
      Origin o = origin;
      o.item = ++i;
      Decode(item, o, list_depth + 1);
    }
    return;
  }
  const KindInfo* info = nullptr;
  for (const auto& k : kKinds) {
    if (k.kind == *kind) info = &k;
  }
  if (info == nullptr) {
    std::string known;
    for (const auto& k : kKinds) known += (known.empty() ? "" : ", ") + std::string(k.kind);
    d_.Error("kind", "unknown kind \"" + *kind + "\" (Arbiter reads " + known + " and List)");
    return;
  }
  origin.kind = *kind;
  // Name the object in every later error.
  Node md = D::Child(root, "metadata");
  Node name = D::Child(md, "name");
  if (name.IsScalar()) {
    const bool namespaced = *kind == "Pod" || *kind == "PodDisruptionBudget" || *kind == "Workload" ||
                            *kind == "PodGroup" || *kind == "CompositePodGroup" || *kind == "PodMetrics";
    std::string ns = "default";
    if (Node nsn = D::Child(md, "namespace"); nsn.IsScalar()) ns = nsn.Scalar();
    origin.object = namespaced ? ns + "/" + name.Scalar() : name.Scalar();
  }
  d_.set_prefix(origin.ToString());
  if (!api) {
    if (!D::Present(D::Child(root, "apiVersion"))) d_.Error("apiVersion", "is required");
    return;
  }
  if (*api != info->api_version) {
    d_.Error("apiVersion", "unsupported apiVersion \"" + *api + "\" for kind " + *kind + " (want " +
                               std::string(info->api_version) + ")");
    return;
  }
  if (*kind == "Node") {
    DecodeNode(root, origin);
  } else if (*kind == "Pod") {
    DecodePod(root, origin);
  } else if (*kind == "Namespace") {
    DecodeNamespace(root, origin);
  } else if (*kind == "PriorityClass") {
    DecodePriorityClass(root, origin);
  } else if (*kind == "PodDisruptionBudget") {
    DecodePdb(root, origin);
  } else if (*kind == "KubeSchedulerConfiguration") {
    DecodeConfig(root, origin);
  } else if (*kind == "Workload") {
    DecodeWorkload(root, origin);
  } else if (*kind == "PodGroup") {
    DecodePodGroup(root, origin);
  } else if (*kind == "PodMetrics") {
    DecodePodMetrics(root, origin);
  } else if (*kind == "KubeletConfiguration") {
    DecodeKubeletConfig(root, origin);
  } else {
    DecodeCompositePodGroup(root, origin);
  }
}

// Checks the parent links of the group hierarchy (model::CheckGroupHierarchy's rule) and reports
// each problem on the object where it shows first.
void CheckGroupHierarchy(const ClusterObjects& objs, std::vector<std::string>& errors) {
  std::vector<model::GroupLink> links;
  std::vector<const Origin*> origins;
  for (const auto& c : objs.composite_pod_groups) {
    links.push_back({c.object.Key(), c.object.parent.empty() ? "" : c.object.ns + "/" + c.object.parent, true});
    origins.push_back(&c.origin);
  }
  for (const auto& g : objs.pod_groups) {
    links.push_back({g.object.Key(), g.object.parent.empty() ? "" : g.object.ns + "/" + g.object.parent, false});
    origins.push_back(&g.origin);
  }
  const std::string field = "spec.parentCompositePodGroupName";
  auto join = [](const std::vector<std::string>& chain) {
    std::string s;
    for (const auto& k : chain) s += (s.empty() ? "" : " -> ") + k;
    return s;
  };
  for (const model::HierarchyProblem& p : model::CheckGroupHierarchy(links)) {
    const std::string where = origins[p.link]->ToString() + ": " + field + ": ";
    switch (p.kind) {
      case model::HierarchyProblem::Kind::kMissingParent:
        errors.push_back(where + "CompositePodGroup \"" + links[p.link].parent_key + "\" is not in the input" +
                         (p.parent_is_pod_group ? " (a PodGroup of that name is; only a CompositePodGroup can be a parent)"
                                                : ""));
        break;
      case model::HierarchyProblem::Kind::kCycle:
        errors.push_back(where + "the parent links form a cycle: " + join(p.chain));
        break;
      case model::HierarchyProblem::Kind::kTooDeep:
        errors.push_back(where + "the hierarchy has " + std::to_string(p.chain.size()) + " levels, more than the " +
                         std::to_string(model::kMaxGroupHierarchyDepth) + " allowed: " + join(p.chain));
        break;
    }
  }
}

// Reports objects defined twice, pods bound or nominated to nodes not in the input, pods in
// PodGroups not in the input, members of one PodGroup naming different schedulers, and problems
// of the group hierarchy.
void CheckWholeInput(const ClusterObjects& objs, std::vector<std::string>& errors) {
  std::map<std::string, const Origin*> seen;
  std::set<const Origin*> duplicates;
  auto check = [&](const std::string& key, const Origin& o) {
    auto [it, inserted] = seen.emplace(key, &o);
    if (!inserted) {
      duplicates.insert(&o);
      errors.push_back(o.ToString() + ": metadata.name: duplicate object (first defined at " +
                       it->second->ToString() + ")");
    }
  };
  for (const auto& n : objs.nodes) check("Node " + n.object.name, n.origin);
  for (const auto& p : objs.pods) check("Pod " + p.object.Key(), p.origin);
  for (const auto& p : objs.priority_classes) check("PriorityClass " + p.object.name, p.origin);
  for (const auto& p : objs.pdbs) check("PodDisruptionBudget " + p.object.ns + "/" + p.object.name, p.origin);
  for (const auto& n : objs.namespaces) check("Namespace " + n.object.name, n.origin);
  for (const auto& w : objs.workloads) check("Workload " + w.object.Key(), w.origin);
  for (const auto& g : objs.pod_groups) check("PodGroup " + g.object.Key(), g.origin);
  for (const auto& g : objs.composite_pod_groups) check("CompositePodGroup " + g.object.Key(), g.origin);
  for (const auto& m : objs.pod_metrics) check("PodMetrics " + m.object.Key(), m.origin);
  // Usage is for pods of the input: metrics of a pod that is not there are an input error.
  {
    std::set<std::string> pods;
    for (const auto& p : objs.pods) pods.insert(p.object.Key());
    for (const auto& m : objs.pod_metrics) {
      if (!pods.count(m.object.Key())) errors.push_back(m.origin.ToString() + ": metadata.name: no pod " + m.object.Key() + " in the input");
    }
  }
  std::map<std::string, const Origin*> uids;
  for (const auto& p : objs.pods) {
    if (duplicates.count(&p.origin)) continue;  // reported above (a missing uid is namespace/name)
    auto [it, inserted] = uids.emplace(p.object.uid, &p.origin);
    if (!inserted) {
      errors.push_back(p.origin.ToString() + ": metadata.uid: duplicate uid \"" + p.object.uid +
                       "\" (also used at " + it->second->ToString() + ")");
    }
  }
  std::map<std::string, bool> node_names;
  for (const auto& n : objs.nodes) node_names[n.object.name] = true;
  for (const auto& p : objs.pods) {
    if (!p.object.node_name.empty() && !node_names.count(p.object.node_name)) {
      errors.push_back(p.origin.ToString() + ": spec.nodeName: node \"" + p.object.node_name +
                       "\" is not in the input");
    }
    if (!p.object.nominated_node_name.empty() && !node_names.count(p.object.nominated_node_name)) {
      errors.push_back(p.origin.ToString() + ": status.nominatedNodeName: node \"" +
                       p.object.nominated_node_name + "\" is not in the input");
    }
  }
  std::set<std::string> pod_groups;
  for (const auto& g : objs.pod_groups) pod_groups.insert(g.object.Key());
  for (const auto& p : objs.pods) {
    const std::string& group = p.object.pod_group_name;
    if (!group.empty() && !pod_groups.count(p.object.ns + "/" + group)) {
      errors.push_back(p.origin.ToString() + ": spec.schedulingGroup.podGroupName: PodGroup \"" +
                       p.object.ns + "/" + group + "\" is not in the input");
    }
  }
  // kube-scheduler schedules a group with one profile, so it refuses a group whose pods name
  // different schedulers (validatePodGroup). The first member in input order sets the name.
  std::map<std::string, const Sourced<model::Pod>*> first_member;
  for (const auto& p : objs.pods) {
    if (p.object.pod_group_name.empty() || duplicates.count(&p.origin)) continue;
    const std::string key = p.object.ns + "/" + p.object.pod_group_name;
    if (!pod_groups.count(key)) continue;  // reported above
    auto [it, inserted] = first_member.emplace(key, &p);
    const model::Pod& first = it->second->object;
    if (!inserted && p.object.scheduler_name != first.scheduler_name) {
      errors.push_back(p.origin.ToString() + ": spec.schedulerName: \"" + p.object.scheduler_name +
                       "\" differs from \"" + first.scheduler_name + "\" of the group's first member (" +
                       it->second->origin.ToString() + "); all pods in PodGroup " + key +
                       " should have the same .spec.schedulerName");
    }
  }
  CheckGroupHierarchy(objs, errors);
}

// How far a LoadResult had got, so that what a document added can be taken back.
struct ResultMark {
  size_t nodes, pods, priority_classes, pdbs, namespaces, workloads, pod_groups, composite_pod_groups, pod_metrics,
      errors;
  bool config, kubelet_config;

  explicit ResultMark(const LoadResult& r)
      : nodes(r.objects.nodes.size()),
        pods(r.objects.pods.size()),
        priority_classes(r.objects.priority_classes.size()),
        pdbs(r.objects.pdbs.size()),
        namespaces(r.objects.namespaces.size()),
        workloads(r.objects.workloads.size()),
        pod_groups(r.objects.pod_groups.size()),
        composite_pod_groups(r.objects.composite_pod_groups.size()),
        pod_metrics(r.objects.pod_metrics.size()),
        errors(r.errors.size()),
        config(r.objects.config.has_value()),
        kubelet_config(r.objects.kubelet_config.has_value()) {}

  void Undo(LoadResult& r) const {
    ClusterObjects& o = r.objects;
    o.nodes.resize(nodes);
    o.pods.resize(pods);
    o.priority_classes.resize(priority_classes);
    o.pdbs.resize(pdbs);
    o.namespaces.resize(namespaces);
    o.workloads.resize(workloads);
    o.pod_groups.resize(pod_groups);
    o.composite_pod_groups.resize(composite_pod_groups);
    o.pod_metrics.resize(pod_metrics);
    if (!config) o.config.reset();
    if (!kubelet_config) o.kubelet_config.reset();
    r.errors.resize(errors);
  }
};

// Decodes a JSON file (one or several values, as kubectl prints them) with the fast reader
// (json_text.h), each document as it is read. Where the fast reader steps aside, what the
// document had decoded is taken back and the reference reader reads it: in the first document,
// the whole file (exactly as before the fast reader existed); in a later one, that document
// (its error's line and column then count from the document's start). Returns false when the
// file is not for the fast reader or the reference reader is to read all of it.
bool DecodeJsonText(const InputFile& file, ObjectDecoder& decoder, LoadResult& result) {
  const std::string& text = file.content;
  if (text.find('\0') != std::string::npos) return false;  // ParseFile says what it is
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return false;
  JsonTextReader reader(text, text.capacity());
  ValueTree tree;
  for (int index = 1;; ++index) {
    const ResultMark mark(result);
    const JsonTextReader::Result r = reader.Next(tree);
    if (r == JsonTextReader::Result::kEnd) return true;
    Origin origin;
    origin.file = file.name;
    origin.document = index;
    if (r == JsonTextReader::Result::kDocument) {
      try {
        decoder.Decode(tree.root(), origin);
      } catch (const std::exception& e) {
        result.errors.push_back(origin.ToString() + ": cannot decode: " + e.what());
      }
      if (reader.Finish()) continue;
    }
    mark.Undo(result);
    if (index == 1) return false;
    const size_t start = std::min(reader.document_start(), text.size());
    auto root = ParseJsonDocument(std::string_view(text).substr(start), file.name, index, /*whole=*/false,
                                  result.errors);
    if (!root) return true;  // where the text cannot be read, nothing after it is
    try {
      decoder.Decode(*root, origin);
    } catch (const std::exception& e) {
      result.errors.push_back(origin.ToString() + ": cannot decode: " + e.what());
    }
  }
}

// Decodes a YAML stream with the fast reader (yaml_text.h), split at its `---` lines as the
// reference reader splits it, each document as it is read. Where the fast reader steps aside,
// what the document had decoded is taken back and the reference reader reads that document. As
// with the reference reader alone, the file's parse errors come first, then the decoders'.
// Returns false when the file is not YAML text for the fast reader.
bool DecodeYamlText(const InputFile& file, ObjectDecoder& decoder, LoadResult& result) {
  const std::string& text = file.content;
  if (text.find('\0') != std::string::npos) return false;  // ParseFile says what it is
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] == '{' || text[first] == '[') return false;
  const size_t errors_at = result.errors.size();
  std::vector<std::string> parse_errors;
  int index = 0;
  ValueTree tree;
  for (const YamlChunk& chunk : SplitYamlStream(text)) {
    if (chunk.blank()) continue;
    ++index;
    Origin origin;
    origin.file = file.name;
    origin.document = index;
    auto decode = [&](const Node& root) {
      try {
        decoder.Decode(root, origin);
      } catch (const std::exception& e) {
        result.errors.push_back(origin.ToString() + ": cannot decode: " + e.what());
      }
    };
    const ResultMark mark(result);
    YamlTextReader reader;
    // A List's items are decoded as they are parsed, as Decode's List branch would decode them,
    // which holds if the document turns out to be a List (else they are taken back).
    const auto r = reader.Read(chunk.text(), tree, [&](const Node& item, int i) {
      Origin o = origin;
      o.item = i;
      try {
        decoder.Decode(item, o, 1);
      } catch (const std::exception& e) {
        result.errors.push_back(o.ToString() + ": cannot decode: " + e.what());
      }
    });
    if (r == YamlTextReader::Result::kDocument) {
      const Node root = tree.root();
      const Node kind = root.Child("kind");
      const bool list = root.IsMap() && kind.IsScalar() && kind.Scalar() == "List";
      if (!reader.items_streamed() || list) {
        if (!reader.items_streamed()) decode(root);
        continue;
      }
    }
    mark.Undo(result);
    bool no_document = false;
    if (auto root = ParseYamlChunk(file.name, chunk, index, parse_errors, &no_document)) {
      decode(Node(*root));
    } else if (no_document) {
      --index;
    }
  }
  if (index == 0) parse_errors.push_back(file.name + ": the file holds no objects");
  result.errors.insert(result.errors.begin() + static_cast<std::ptrdiff_t>(errors_at), parse_errors.begin(),
                       parse_errors.end());
  return true;
}

}  // namespace

LoadResult Load(const std::vector<InputFile>& files, TextReader reader) {
  LoadResult result = DecodeEach(files, reader);
  if (result.errors.empty()) CheckWholeInput(result.objects, result.errors);
  return result;
}

LoadResult DecodeJson(const std::string& name, const nlohmann::json& body, bool strict_strings) {
  LoadResult result;
  ObjectDecoder decoder(result.objects, result.errors);
  decoder.set_strict_strings(strict_strings);
  Origin origin;
  origin.file = name;
  origin.document = 1;
  try {
    decoder.Decode(Node(body), origin);
  } catch (const std::exception& e) {
    result.errors.push_back(origin.ToString() + ": cannot decode: " + e.what());
  }
  return result;
}

LoadResult DecodeEach(const std::vector<InputFile>& files, TextReader reader) {
  LoadResult result;
  ObjectDecoder decoder(result.objects, result.errors);
  for (const auto& file : files) {
    decoder.set_strict_strings(file.strict_strings);
    if (reader == TextReader::kFast &&
        (DecodeJsonText(file, decoder, result) || DecodeYamlText(file, decoder, result))) {
      continue;
    }
    for (const auto& doc : ParseFile(file, result.errors)) {
      Origin origin;
      origin.file = file.name;
      origin.document = doc.index;
      try {
        decoder.Decode(doc.root, origin);
      } catch (const std::exception& e) {
        // yaml-cpp may throw on exotic trees; the document is reported, never the process lost.
        result.errors.push_back(origin.ToString() + ": cannot decode: " + e.what());
      }
    }
  }
  return result;
}

}  // namespace arbiter::manifest
