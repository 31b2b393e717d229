#include "arbiter/schema/schema.h"

#include <google/protobuf/descriptor.pb.h>

#include <functional>
#include <sstream>
#include <stdexcept>

// The descriptor set of proto/*.proto, embedded at build time (cmake/EmbedFile.cmake).
extern const unsigned char kArbiterApiSchema[];
extern const unsigned long kArbiterApiSchemaSize;

namespace arbiter::schema {

namespace {

std::string Trim(std::string s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// Splits a leading comment into its description (prose lines, joined) and its marker tags.
FieldDoc ParseComment(const std::string& comment) {
  FieldDoc d;
  std::stringstream in(comment);
  std::string prose;
  for (std::string line; std::getline(in, line);) {
    line = Trim(line);
    if (line.starts_with("+")) {
      const size_t eq = line.find('=');
      const std::string tag = line.substr(1, eq == std::string::npos ? std::string::npos : eq - 1);
      const std::string value = eq == std::string::npos ? "" : line.substr(eq + 1);
      if (tag == "optional") d.optional = true;
      if (tag == "required") d.required = true;
      if (tag == "patchMergeKey") d.patch_merge_key = value;
      if (tag == "patchStrategy") d.patch_strategy = value;
      if (tag == "listType") d.list_type = value;
      if (tag == "listMapKey") d.list_map_keys.push_back(value);
      if (tag == "mapType") d.map_type = value;
      if (tag == "inline") d.inline_fields = true;
      continue;
    }
    if (line.empty()) {
      if (!prose.empty() && !prose.ends_with("\n\n")) prose += "\n\n";
      continue;
    }
    if (!prose.empty() && !prose.ends_with("\n")) prose += " ";
    prose += line;
  }
  d.description = Trim(prose);
  return d;
}

}  // namespace

const ApiSchema& ApiSchema::Get() {
  static const ApiSchema* schema = new ApiSchema();  // never destroyed: descriptors outlive users
  return *schema;
}

ApiSchema::ApiSchema() {
  pb::FileDescriptorSet set;
  if (!set.ParseFromArray(kArbiterApiSchema, static_cast<int>(kArbiterApiSchemaSize))) {
    throw std::logic_error("the embedded API schema is not a descriptor set");
  }
  for (const auto& file : set.file()) {
    if (pool_.BuildFile(file) == nullptr) throw std::logic_error("the embedded API schema does not build: " + file.name());
  }
  // The JSON fields of every message, once the docs (and their +inline tags) are known.
  std::function<void(const pb::Descriptor*)> flatten_all = [&](const pb::Descriptor* m) {
    std::function<void(const pb::Descriptor*, std::vector<const pb::FieldDescriptor*>&, std::vector<JsonField>&)> flatten =
        [&](const pb::Descriptor* d, std::vector<const pb::FieldDescriptor*>& via, std::vector<JsonField>& out) {
          for (int i = 0; i < d->field_count(); ++i) {
            const pb::FieldDescriptor* f = d->field(i);
            auto doc = field_docs_.find(f);
            if (doc != field_docs_.end() && doc->second.inline_fields && f->message_type() != nullptr && via.size() < 4) {
              via.push_back(f);
              flatten(f->message_type(), via, out);
              via.pop_back();
            } else {
              out.push_back({f, via});
            }
          }
        };
    std::vector<const pb::FieldDescriptor*> via;
    flatten(m, via, json_fields_[m]);
    for (int i = 0; i < m->nested_type_count(); ++i) flatten_all(m->nested_type(i));
  };
  auto finish = [&] {
    for (const auto& file : set.file()) {
      const pb::FileDescriptor* fd = pool_.FindFileByName(file.name());
      for (int i = 0; i < fd->message_type_count(); ++i) flatten_all(fd->message_type(i));
    }
  };
  for (const auto& file : set.file()) {
    const pb::FileDescriptor* fd = pool_.FindFileByName(file.name());
    // Comments: source locations name a message by path [4, i] and its field by [4, i, 2, j]
    // (nested messages by [.., 3, k]).
    for (const auto& loc : file.source_code_info().location()) {
      const auto& path = loc.path();
      if (path.size() < 2 || path[0] != 4) continue;
      const pb::Descriptor* m = fd->message_type(path[1]);
      int i = 2;
      while (i + 1 < path.size() && path[i] == 3) {
        m = m->nested_type(path[i + 1]);
        i += 2;
      }
      const std::string comment = loc.leading_comments();
      if (i == path.size()) {
        message_docs_[m] = ParseComment(comment).description;
      } else if (i + 2 == path.size() && path[i] == 2) {
        field_docs_[m->field(path[i + 1])] = ParseComment(comment);
      }
    }
  }
  finish();
}

const std::vector<JsonField>& ApiSchema::JsonFields(const pb::Descriptor* m) const {
  auto it = json_fields_.find(m);
  static const std::vector<JsonField> kNone;
  return it == json_fields_.end() ? kNone : it->second;
}

const JsonField* ApiSchema::FindJsonField(const pb::Descriptor* m, std::string_view name) const {
  for (const JsonField& f : JsonFields(m)) {
    if (f.field->name() == name) return &f;
  }
  return nullptr;
}

const pb::Descriptor* ApiSchema::Find(std::string_view full_name) const {
  return pool_.FindMessageTypeByName(std::string(full_name));
}

const FieldDoc& ApiSchema::Doc(const pb::FieldDescriptor* f) const {
  auto it = field_docs_.find(f);
  return it == field_docs_.end() ? empty_field_ : it->second;
}

const std::string& ApiSchema::Doc(const pb::Descriptor* m) const {
  auto it = message_docs_.find(m);
  return it == message_docs_.end() ? empty_ : it->second;
}

WireShape ApiSchema::ShapeOf(const pb::Descriptor* m) {
  const std::string& n = m->full_name();
  if (n == "k8s.io.apimachinery.pkg.api.resource.Quantity") return WireShape::kQuantity;
  if (n == "k8s.io.apimachinery.pkg.util.intstr.IntOrString") return WireShape::kIntOrString;
  if (n == "k8s.io.apimachinery.pkg.apis.meta.v1.Time") return WireShape::kTime;
  if (n == "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime") return WireShape::kMicroTime;
  if (n == "k8s.io.apimachinery.pkg.apis.meta.v1.Duration") return WireShape::kDuration;
  if (n == "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1" || n == "k8s.io.apimachinery.pkg.runtime.RawExtension") {
    return WireShape::kRawJson;
  }
  return WireShape::kObject;
}

std::string ApiSchema::OpenApiName(const pb::Descriptor* m) {
  const std::string& n = m->full_name();
  if (n.starts_with("k8s.io.")) return "io.k8s." + n.substr(7);
  return n;
}

std::string ProtoMessageName(std::string_view group, std::string_view version, std::string_view kind) {
  const std::string v(version), k(kind);
  if (group.empty()) {
    if (kind == "Status" || kind == "DeleteOptions" || kind == "WatchEvent") {
      return "k8s.io.apimachinery.pkg.apis.meta.v1." + k;
    }
    return "k8s.io.api.core." + v + "." + k;
  }
  if (group == "metrics.k8s.io") return "k8s.io.metrics.pkg.apis.metrics." + v + "." + k;
  const std::string_view first = group.substr(0, group.find('.'));
  return "k8s.io.api." + std::string(first) + "." + v + "." + k;
}

}  // namespace arbiter::schema
