// Manifest loading: read files, split them into documents, parse YAML or JSON (the fast readers,
// and the reference readers they step aside to), and hand each document to the object decoders
// (object_decoder.h).
#include "arbiter/manifest/loader.h"

#include <cstring>

#include <cerrno>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "arbiter/base/json.h"

#include "arbiter/manifest/decoder.h"
#include "arbiter/manifest/object_decoder.h"
#include "arbiter/manifest/json_text.h"
#include "arbiter/manifest/yaml_text.h"

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
  if (f == nullptr) {
    const int err = errno;
    return NotFound(path + ": cannot open file: " + std::strerror(err));
  }
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

using internal::ObjectDecoder;
using internal::CheckWholeInput;
using internal::DropDisabledFields;

// The first character of a text that is not white space ('{' or '[': JSON), or NUL when the text
// is blank or holds a NUL byte (not YAML or JSON text: ParseFile says which).
char FirstChar(const std::string& text) {
  if (text.find('\0') != std::string::npos) return '\0';
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first == std::string::npos ? '\0' : text[first];
}

// How far a LoadResult had got, so that what a document added can be taken back.
struct ResultMark {
  size_t nodes, pods, priority_classes, pdbs, namespaces, workloads, pod_groups, composite_pod_groups, pod_metrics,
      pvcs, pvs, storage_classes, csi_nodes, workload_controllers, skipped, errors, warnings;
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
        pvcs(r.objects.pvcs.size()),
        pvs(r.objects.pvs.size()),
        storage_classes(r.objects.storage_classes.size()),
        csi_nodes(r.objects.csi_nodes.size()),
        workload_controllers(r.objects.workload_controllers.size()),
        skipped(r.objects.skipped.size()),
        errors(r.errors.size()),
        warnings(r.warnings.size()),
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
    o.pvcs.resize(pvcs);
    o.pvs.resize(pvs);
    o.storage_classes.resize(storage_classes);
    o.csi_nodes.resize(csi_nodes);
    o.workload_controllers.resize(workload_controllers);
    o.skipped.resize(skipped);
    r.warnings.resize(warnings);
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
  if (FirstChar(text) != '{') return false;
  JsonTextReader reader(text, text.capacity());
  ValueTree tree;
  const ResultMark whole(result);
  size_t last_start = 0;
  for (int index = 1;; ++index) {
    const ResultMark mark(result);
    const JsonTextReader::Result r = reader.Next(tree);
    if (r == JsonTextReader::Result::kEnd) return true;
    Origin origin;
    origin.file = file.name;
    origin.document = index;
    if (r == JsonTextReader::Result::kDocument) {
      decoder.DecodeReported(tree.root(), origin);
      if (reader.Finish()) {
        last_start = reader.document_start();
        continue;
      }
    }
    mark.Undo(result);
    if (index == 1) return false;
    const size_t start = std::min(reader.document_start(), text.size());
    if (start <= last_start) {
      // The reader lost its place in the text: the reference reader reads the whole file.
      whole.Undo(result);
      return false;
    }
    auto root = ParseJsonDocument(std::string_view(text).substr(start), file.name, index, /*whole=*/false,
                                  result.errors);
    if (!root) return true;  // where the text cannot be read, nothing after it is
    decoder.DecodeReported(*root, origin);
    last_start = start;
  }
}

// Decodes a YAML stream with the fast reader (yaml_text.h), split at its `---` lines as the
// reference reader splits it, each document as it is read. Where the fast reader steps aside,
// what the document had decoded is taken back and the reference reader reads that document. As
// with the reference reader alone, the file's parse errors come first, then the decoders'.
// Returns false when the file is not YAML text for the fast reader.
bool DecodeYamlText(const InputFile& file, ObjectDecoder& decoder, LoadResult& result) {
  const std::string& text = file.content;
  const char first = FirstChar(text);
  if (first == '\0' || first == '{' || first == '[') return false;
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
    const ResultMark mark(result);
    YamlTextReader reader;
    // A List's items are decoded as they are parsed, as Decode's List branch would decode them,
    // which holds if the document turns out to be a List (else they are taken back).
    const auto r = reader.Read(chunk.text(), tree, [&](const Node& item, int i) {
      Origin o = origin;
      o.item = i;
      decoder.DecodeReported(item, o, 1);
    });
    if (r == YamlTextReader::Result::kDocument) {
      const Node root = tree.root();
      const Node kind = root.Child("kind");
      const bool list = root.IsMap() && kind.IsScalar() && kind.Scalar() == "List";
      if (!reader.items_streamed() || list) {
        if (!reader.items_streamed()) decoder.DecodeReported(root, origin);
        continue;
      }
    }
    mark.Undo(result);
    bool no_document = false;
    if (auto root = ParseYamlChunk(file.name, chunk, index, parse_errors, &no_document)) {
      decoder.DecodeReported(Node(*root), origin);
    } else if (no_document) {
      --index;
    }
  }
  if (index == 0) parse_errors.push_back(file.name + ": the file holds no objects");
  result.errors.insert(result.errors.begin() + static_cast<std::ptrdiff_t>(errors_at), parse_errors.begin(),
                       parse_errors.end());
  return true;
}

LoadResult DecodeFiles(const std::vector<InputFile>& files, TextReader reader, UnknownFields unknown, bool check_schema);

}  // namespace

LoadResult Load(const std::vector<InputFile>& files, TextReader reader, UnknownFields unknown,
                const std::function<void(LoadResult&)>& expand) {
  LoadResult result = DecodeFiles(files, reader, unknown, /*check_schema=*/true);
  if (result.errors.empty() && expand) expand(result);
  if (result.errors.empty()) CheckDecoded(result);
  return result;
}

void CheckDecoded(LoadResult& result) {
  DropDisabledFields(result.objects);
  CheckWholeInput(result.objects, result.errors);
}

void Append(ClusterObjects& into, const ClusterObjects& from) {
  auto add = [](auto& to, const auto& more) { to.insert(to.end(), more.begin(), more.end()); };
  add(into.nodes, from.nodes);
  add(into.pods, from.pods);
  add(into.priority_classes, from.priority_classes);
  add(into.pdbs, from.pdbs);
  add(into.namespaces, from.namespaces);
  add(into.workloads, from.workloads);
  add(into.pod_groups, from.pod_groups);
  add(into.composite_pod_groups, from.composite_pod_groups);
  if (!into.config) into.config = from.config;
  add(into.pod_metrics, from.pod_metrics);
  if (!into.kubelet_config) into.kubelet_config = from.kubelet_config;
  add(into.pvcs, from.pvcs);
  add(into.pvs, from.pvs);
  add(into.storage_classes, from.storage_classes);
  add(into.csi_nodes, from.csi_nodes);
  add(into.workload_controllers, from.workload_controllers);
  into.pod_controllers.insert(from.pod_controllers.begin(), from.pod_controllers.end());
  add(into.skipped, from.skipped);
}

LoadResult DecodeJson(const std::string& name, const nlohmann::json& body, bool strict_strings) {
  LoadResult result;
  ObjectDecoder decoder(result.objects, result.errors);
  decoder.set_strict_strings(strict_strings);
  Origin origin;
  origin.file = name;
  origin.document = 1;
  decoder.DecodeReported(Node(body), origin);
  return result;
}

StatusOr<std::optional<model::LabelSelector>> DecodeLabelSelectorJson(const nlohmann::json& selector,
                                                                     const std::string& path) {
  LoadResult result;
  ObjectDecoder decoder(result.objects, result.errors);
  decoder.set_strict_strings(true);
  std::optional<model::LabelSelector> s = decoder.LabelSelector(Node(selector), path);
  if (!result.errors.empty()) return InvalidArgument(result.errors.front());
  return s;
}

LoadResult DecodeEach(const std::vector<InputFile>& files, TextReader reader) {
  return DecodeFiles(files, reader, UnknownFields::kError, /*check_schema=*/false);
}

namespace {

LoadResult DecodeFiles(const std::vector<InputFile>& files, TextReader reader, UnknownFields unknown, bool check_schema) {
  LoadResult result;
  ObjectDecoder decoder(result.objects, result.errors);
  decoder.set_unknown_fields(unknown, &result.warnings, check_schema);
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
      decoder.DecodeReported(doc.root, origin);
    }
  }
  return result;
}

}  // namespace

model::LabelMap LabelMapOf(const nlohmann::json* labels) {
  std::vector<std::pair<std::string, std::string>> entries;
  if (labels != nullptr && labels->is_object()) {
    for (const auto& [k, v] : labels->items()) {
      if (v.is_string()) entries.emplace_back(k, v.get<std::string>());
    }
  }
  return model::LabelMap(std::move(entries));
}

StatusOr<model::SchedulerConfig> LoadSchedulerConfigFile(const std::string& what, const std::string& path) {
  auto file = ReadInputFile(path);
  if (!file.ok()) return InvalidArgument(what + ": " + file.status().message());
  LoadResult loaded = DecodeEach({*file});
  if (!loaded.ok()) {
    std::string all;
    for (const auto& e : loaded.errors) all += (all.empty() ? "" : "\n") + e;
    return InvalidArgument(all);
  }
  if (!loaded.objects.config) return InvalidArgument(what + " " + path + ": no KubeSchedulerConfiguration in it");
  return loaded.objects.config->object;
}

}  // namespace arbiter::manifest
