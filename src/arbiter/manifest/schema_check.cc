#include "arbiter/manifest/schema_check.h"

#include <string>

#include "arbiter/schema/schema.h"

namespace arbiter::manifest {

namespace {

namespace pb = google::protobuf;
using schema::ApiSchema;
using schema::WireShape;

void CheckMessage(const Node& n, const pb::Descriptor* m, const std::string& path, bool top, Decoder& d);

// A value of field `f`: a message's fields are checked; scalars (and the shapes that travel as
// scalars: quantities, times, int-or-strings, raw JSON) are the type decoders' business.
void CheckValue(const Node& v, const pb::FieldDescriptor* f, const std::string& path, Decoder& d) {
  if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) return;
  CheckMessage(v, f->message_type(), path, false, d);
}

void CheckMessage(const Node& n, const pb::Descriptor* m, const std::string& path, bool top, Decoder& d) {
  if (!n.IsMap() || ApiSchema::ShapeOf(m) != WireShape::kObject) return;
  const ApiSchema& schema = ApiSchema::Get();
  for (const auto& e : n) {
    if (!e.first.IsScalar()) continue;
    const std::string key = e.first.Scalar();
    if (top && (key == "apiVersion" || key == "kind")) continue;
    const std::string at = path.empty() ? key : path + "." + key;
    const schema::JsonField* jf = schema.FindJsonField(m, key);
    if (jf == nullptr) {
      d.Unknown(at);
      continue;
    }
    const pb::FieldDescriptor* f = jf->field;
    const Node& v = e.second;
    if (f->is_map()) {
      if (!v.IsMap()) continue;
      const pb::FieldDescriptor* value = f->message_type()->map_value();
      for (const auto& kv : v) {
        if (kv.first.IsScalar()) CheckValue(kv.second, value, at + "." + kv.first.Scalar(), d);
      }
    } else if (f->is_repeated()) {
      if (!v.IsSequence()) continue;
      size_t i = 0;
      for (const auto& item : v) CheckValue(item, f, at + "[" + std::to_string(i++) + "]", d);
    } else {
      CheckValue(v, f, at, d);
    }
  }
}

}  // namespace

const pb::Descriptor* SchemaMessageOf(std::string_view api_version, std::string_view kind) {
  const size_t slash = api_version.find('/');
  const std::string_view group = slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
  const std::string_view version = slash == std::string_view::npos ? api_version : api_version.substr(slash + 1);
  return ApiSchema::Get().Find(schema::ProtoMessageName(group, version, kind));
}

void CheckSchemaFields(const Node& object, const pb::Descriptor* m, Decoder& d) {
  CheckMessage(object, m, "", true, d);
}

}  // namespace arbiter::manifest
