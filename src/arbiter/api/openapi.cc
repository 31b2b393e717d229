#include "arbiter/api/openapi.h"

#include <google/protobuf/dynamic_message.h>

#include <map>
#include <memory>
#include <set>

#include "arbiter/api/resources.h"
#include "arbiter/schema/schema.h"

namespace arbiter::api {

using schema::ApiSchema;
using schema::FieldDoc;
using schema::JsonField;
using schema::WireShape;
namespace pb = google::protobuf;

namespace {

// A served kind: its group, version and kind, and its protobuf message.
struct KindEntry {
  std::string group, version, kind;
  const pb::Descriptor* message = nullptr;
};

// Every kind the documents describe: each served resource's kind and list kind, and the kinds of
// its subresources (Binding, Eviction). Kinds without a message in the schema are left out.
std::vector<KindEntry> Kinds() {
  std::vector<KindEntry> out;
  std::set<std::string> seen;
  auto add = [&](std::string_view group, std::string_view version, std::string_view kind) {
    const std::string proto = ProtoMessageName(group, version, kind);
    const pb::Descriptor* m = ApiSchema::Get().Find(proto);
    if (m == nullptr || !seen.insert(proto).second) return;
    out.push_back({std::string(group), std::string(version), std::string(kind), m});
  };
  for (const auto& r : Resources()) {
    add(r.group, r.version, r.kind);
    add(r.group, r.version, std::string(r.kind) + "List");
    if (r.HasSubresource("binding")) add("", "v1", "Binding");
    if (r.HasSubresource("eviction")) add("policy", "v1", "Eviction");
  }
  add("", "v1", "Status");
  return out;
}

const KindEntry* KindOf(const pb::Descriptor* m) {
  static const std::vector<KindEntry> kinds = Kinds();
  for (const auto& k : kinds) {
    if (k.message == m) return &k;
  }
  return nullptr;
}

Json Primitive(const pb::FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: return {{"type", "integer"}, {"format", "int32"}};
    case pb::FieldDescriptor::CPPTYPE_INT64: return {{"type", "integer"}, {"format", "int64"}};
    case pb::FieldDescriptor::CPPTYPE_UINT32: return {{"type", "integer"}, {"format", "int32"}};
    case pb::FieldDescriptor::CPPTYPE_UINT64: return {{"type", "integer"}, {"format", "int64"}};
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: return {{"type", "number"}, {"format", "double"}};
    case pb::FieldDescriptor::CPPTYPE_FLOAT: return {{"type", "number"}, {"format", "float"}};
    case pb::FieldDescriptor::CPPTYPE_BOOL: return {{"type", "boolean"}};
    case pb::FieldDescriptor::CPPTYPE_ENUM: return {{"type", "string"}};
    case pb::FieldDescriptor::CPPTYPE_STRING:
      return f->type() == pb::FieldDescriptor::TYPE_BYTES ? Json{{"type", "string"}, {"format", "byte"}}
                                                          : Json{{"type", "string"}};
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: break;
  }
  return Json::object();
}

// Builds the definitions of a set of root messages and everything they use.
class Generator {
 public:
  explicit Generator(bool v3) : v3_(v3) {}

  void Add(const pb::Descriptor* m) {
    const std::string name = ApiSchema::OpenApiName(m);
    if (defs_.contains(name)) return;
    defs_[name] = Json::object();  // claims the name before recursing (types refer to themselves)
    defs_[name] = Definition(m);
  }
  Json Take() { return std::move(defs_); }

 private:
  std::string Ref(const pb::Descriptor* m) const {
    return (v3_ ? "#/components/schemas/" : "#/definitions/") + ApiSchema::OpenApiName(m);
  }

  Json Definition(const pb::Descriptor* m) {
    const ApiSchema& schema = ApiSchema::Get();
    Json d;
    const std::string& doc = schema.Doc(m);
    if (!doc.empty()) d["description"] = doc;
    switch (ApiSchema::ShapeOf(m)) {
      case WireShape::kQuantity: d["type"] = "string"; return d;
      case WireShape::kIntOrString:
        d["type"] = "string";
        d["format"] = "int-or-string";
        if (v3_) d["x-kubernetes-int-or-string"] = true;
        return d;
      case WireShape::kTime: d["type"] = "string"; d["format"] = "date-time"; return d;
      case WireShape::kMicroTime: d["type"] = "string"; d["format"] = "date-time"; return d;
      case WireShape::kDuration: d["type"] = "string"; return d;
      case WireShape::kRawJson:
        d["type"] = "object";
        if (v3_) d["x-kubernetes-preserve-unknown-fields"] = true;
        return d;
      case WireShape::kObject: break;
    }
    d["type"] = "object";
    Json props = Json::object();
    Json required = Json::array();
    if (const KindEntry* k = KindOf(m)) {
      props["apiVersion"] = {{"type", "string"},
                             {"description", "The versioned schema of this representation of an object."}};
      props["kind"] = {{"type", "string"}, {"description", "The REST resource this object represents, in CamelCase."}};
      d["x-kubernetes-group-version-kind"] = Json::array({{{"group", k->group}, {"kind", k->kind}, {"version", k->version}}});
    }
    for (const JsonField& jf : schema.JsonFields(m)) {  // embedded (+inline) messages flattened
      const pb::FieldDescriptor* f = jf.field;
      const FieldDoc& fd = schema.Doc(f);
      Json p = Property(f);
      if (!fd.description.empty()) p["description"] = fd.description;
      if (!fd.patch_merge_key.empty()) p["x-kubernetes-patch-merge-key"] = fd.patch_merge_key;
      if (!fd.patch_strategy.empty()) p["x-kubernetes-patch-strategy"] = fd.patch_strategy;
      if (!fd.list_type.empty()) p["x-kubernetes-list-type"] = fd.list_type;
      if (!fd.list_map_keys.empty()) p["x-kubernetes-list-map-keys"] = fd.list_map_keys;
      if (!fd.map_type.empty()) p["x-kubernetes-map-type"] = fd.map_type;
      if (fd.required) required.push_back(f->name());
      props[f->name()] = std::move(p);
    }
    d["properties"] = std::move(props);
    if (!required.empty()) d["required"] = std::move(required);
    return d;
  }

  Json Element(const pb::FieldDescriptor* f) {
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) return Primitive(f);
    Add(f->message_type());
    return {{"$ref", Ref(f->message_type())}};
  }

  Json Property(const pb::FieldDescriptor* f) {
    if (f->is_map()) {
      return {{"type", "object"}, {"additionalProperties", Element(f->message_type()->map_value())}};
    }
    if (f->is_repeated()) return {{"type", "array"}, {"items", Element(f)}};
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) return Primitive(f);
    Add(f->message_type());
    // OpenAPI v3 ignores siblings of $ref; the description stays beside an allOf, as upstream.
    if (v3_) return {{"allOf", Json::array({{{"$ref", Ref(f->message_type())}}})}};
    return {{"$ref", Ref(f->message_type())}};
  }

  bool v3_;
  Json defs_ = Json::object();
};

std::string BasePath(const ResourceInfo& r) {
  return (r.group.empty() ? "/api/" : "/apis/" + std::string(r.group) + "/") + std::string(r.version) +
         (r.namespaced ? "/namespaces/{namespace}/" : "/") + std::string(r.resource);
}

// --- JSON document to openapi.v2.Document ------------------------------------------------------

class ProtoWriter {
 public:
  ProtoWriter() : pool_(ApiSchema::Get().pool()) {}

  std::string Encode(const Json& doc) {
    const pb::Descriptor* d = pool_.FindMessageTypeByName("openapi.v2.Document");
    std::unique_ptr<pb::Message> m(factory_.GetPrototype(d)->New());
    const pb::Reflection* r = m->GetReflection();
    r->SetString(m.get(), d->FindFieldByName("swagger"), doc.value("swagger", "2.0"));
    pb::Message* info = r->MutableMessage(m.get(), d->FindFieldByName("info"), &factory_);
    info->GetReflection()->SetString(info, info->GetDescriptor()->FindFieldByName("title"), doc["info"].value("title", ""));
    info->GetReflection()->SetString(info, info->GetDescriptor()->FindFieldByName("version"), doc["info"].value("version", ""));
    r->MutableMessage(m.get(), d->FindFieldByName("paths"), &factory_);
    pb::Message* defs = r->MutableMessage(m.get(), d->FindFieldByName("definitions"), &factory_);
    for (const auto& [name, schema] : doc["definitions"].items()) AddNamed(defs, "additional_properties", name, schema);
    std::string out;
    m->SerializeToString(&out);
    return out;
  }

 private:
  void AddNamed(pb::Message* parent, const char* field, const std::string& name, const Json& schema) {
    const pb::FieldDescriptor* f = parent->GetDescriptor()->FindFieldByName(field);
    pb::Message* named = parent->GetReflection()->AddMessage(parent, f, &factory_);
    named->GetReflection()->SetString(named, named->GetDescriptor()->FindFieldByName("name"), name);
    Fill(named->GetReflection()->MutableMessage(named, named->GetDescriptor()->FindFieldByName("value"), &factory_), schema);
  }

  void Fill(pb::Message* s, const Json& j) {
    const pb::Descriptor* d = s->GetDescriptor();
    const pb::Reflection* r = s->GetReflection();
    for (const auto& [k, v] : j.items()) {
      if (k == "$ref") r->SetString(s, d->FindFieldByName("_ref"), v.get<std::string>());
      else if (k == "format" || k == "description" || k == "title") r->SetString(s, d->FindFieldByName(k), v.get<std::string>());
      else if (k == "required") {
        for (const auto& e : v) r->AddString(s, d->FindFieldByName("required"), e.get<std::string>());
      } else if (k == "type") {
        pb::Message* t = r->MutableMessage(s, d->FindFieldByName("type"), &factory_);
        t->GetReflection()->AddString(t, t->GetDescriptor()->FindFieldByName("value"), v.get<std::string>());
      } else if (k == "items") {
        pb::Message* items = r->MutableMessage(s, d->FindFieldByName("items"), &factory_);
        Fill(items->GetReflection()->AddMessage(items, items->GetDescriptor()->FindFieldByName("schema"), &factory_), v);
      } else if (k == "allOf") {
        for (const auto& e : v) Fill(r->AddMessage(s, d->FindFieldByName("all_of"), &factory_), e);
      } else if (k == "additionalProperties") {
        pb::Message* a = r->MutableMessage(s, d->FindFieldByName("additional_properties"), &factory_);
        if (v.is_boolean()) {
          a->GetReflection()->SetBool(a, a->GetDescriptor()->FindFieldByName("boolean"), v.get<bool>());
        } else {
          Fill(a->GetReflection()->MutableMessage(a, a->GetDescriptor()->FindFieldByName("schema"), &factory_), v);
        }
      } else if (k == "properties") {
        pb::Message* p = r->MutableMessage(s, d->FindFieldByName("properties"), &factory_);
        for (const auto& [name, schema] : v.items()) AddNamed(p, "additional_properties", name, schema);
      } else if (k.starts_with("x-")) {
        pb::Message* named = r->AddMessage(s, d->FindFieldByName("vendor_extension"), &factory_);
        named->GetReflection()->SetString(named, named->GetDescriptor()->FindFieldByName("name"), k);
        pb::Message* any = named->GetReflection()->MutableMessage(named, named->GetDescriptor()->FindFieldByName("value"), &factory_);
        any->GetReflection()->SetString(any, any->GetDescriptor()->FindFieldByName("yaml"), v.dump());  // JSON is YAML
      }
    }
  }

  const pb::DescriptorPool& pool_;
  pb::DynamicMessageFactory factory_;
};

}  // namespace

Json OpenApiIndex() {
  Json paths = Json::object();
  std::set<std::string> seen;
  for (const auto& r : Resources()) {
    const std::string key = r.group.empty() ? "api/" + std::string(r.version)
                                            : "apis/" + std::string(r.group) + "/" + std::string(r.version);
    if (seen.insert(key).second) paths[key] = {{"serverRelativeURL", "/openapi/v3/" + key + "?hash=arbiter"}};
  }
  return {{"paths", paths}};
}

Json OpenApiV3Document(std::string_view group, std::string_view version) {
  Generator gen(/*v3=*/true);
  Json paths = Json::object();
  bool any = false;
  for (const auto& r : Resources()) {
    if (r.group != group || r.version != version) continue;
    any = true;
    for (const std::string& kind : {std::string(r.kind), std::string(r.kind) + "List"}) {
      if (const pb::Descriptor* m = ApiSchema::Get().Find(ProtoMessageName(r.group, r.version, kind))) gen.Add(m);
    }
    // The write operations and their fieldValidation parameter: kubectl sees that the server
    // validates fields itself and sends fieldValidation=Strict instead of validating locally.
    const std::string base = BasePath(r);
    const Json gvk = {{"group", r.group}, {"version", r.version}, {"kind", r.kind}};
    const Json params = Json::array({{{"name", "fieldValidation"}, {"in", "query"}, {"schema", {{"type", "string"}}}},
                                     {{"name", "dryRun"}, {"in", "query"}, {"schema", {{"type", "string"}}}}});
    const Json op = {{"x-kubernetes-group-version-kind", gvk}, {"parameters", params}, {"responses", Json::object()}};
    paths[base] = {{"post", op}};
    paths[base + "/{name}"] = {{"patch", op}, {"put", op}};
  }
  if (!any) return nullptr;
  if (group.empty()) {
    for (const char* kind : {"Binding", "Status"}) {
      if (const pb::Descriptor* m = ApiSchema::Get().Find(ProtoMessageName("", "v1", kind))) gen.Add(m);
    }
  }
  if (group == "policy") {
    if (const pb::Descriptor* m = ApiSchema::Get().Find(ProtoMessageName("policy", "v1", "Eviction"))) gen.Add(m);
  }
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Arbiter"}, {"version", "v1.32.0-arbiter"}}},
          {"paths", paths},
          {"components", {{"schemas", gen.Take()}}}};
}

const Json& OpenApiV2Document() {
  static const Json doc = [] {
    Generator gen(/*v3=*/false);
    for (const auto& k : Kinds()) gen.Add(k.message);
    return Json{{"swagger", "2.0"},
                {"info", {{"title", "Arbiter"}, {"version", "v1.32.0-arbiter"}}},
                {"paths", Json::object()},
                {"definitions", gen.Take()}};
  }();
  return doc;
}

const std::string& OpenApiV2Protobuf() {
  static const std::string bytes = ProtoWriter().Encode(OpenApiV2Document());
  return bytes;
}

}  // namespace arbiter::api
