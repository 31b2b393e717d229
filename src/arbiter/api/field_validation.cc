#include "arbiter/api/field_validation.h"

#include "arbiter/schema/schema.h"

namespace arbiter::api {

using schema::ApiSchema;
using schema::FieldDoc;
using schema::JsonField;
using schema::WireShape;
namespace pb = google::protobuf;

namespace {

using FD = pb::FieldDescriptor;

void Walk(Json& j, const pb::Descriptor* d, const std::string& path, bool top, SchemaCheck& out);

// The JSON type a value of field `f` must have, or null when it is of the right type.
const char* WrongType(const Json& v, const FD* f) {
  if (v.is_null()) return nullptr;
  switch (f->cpp_type()) {
    case FD::CPPTYPE_STRING: return v.is_string() ? nullptr : "a string";
    case FD::CPPTYPE_BOOL: return v.is_boolean() ? nullptr : "a boolean";
    case FD::CPPTYPE_INT32:
    case FD::CPPTYPE_INT64:
    case FD::CPPTYPE_UINT32:
    case FD::CPPTYPE_UINT64: return v.is_number_integer() ? nullptr : "an integer";
    case FD::CPPTYPE_DOUBLE:
    case FD::CPPTYPE_FLOAT: return v.is_number() ? nullptr : "a number";
    case FD::CPPTYPE_ENUM: return v.is_string() ? nullptr : "a string";
    case FD::CPPTYPE_MESSAGE: break;
  }
  switch (ApiSchema::ShapeOf(f->message_type())) {
    case WireShape::kObject: return v.is_object() ? nullptr : "an object";
    case WireShape::kQuantity: return v.is_string() || v.is_number() ? nullptr : "a quantity";
    case WireShape::kIntOrString: return v.is_string() || v.is_number_integer() ? nullptr : "an integer or a string";
    case WireShape::kTime:
    case WireShape::kMicroTime:
    case WireShape::kDuration: return v.is_string() ? nullptr : "a string";
    case WireShape::kRawJson: return nullptr;
  }
  return nullptr;
}

void WalkValue(Json& v, const FD* f, const std::string& path, SchemaCheck& out) {
  if (const char* want = WrongType(v, f)) {
    out.wrong_types.push_back(path + ": want " + want + ", got " + std::string(v.type_name()));
    return;
  }
  if (f->cpp_type() != FD::CPPTYPE_MESSAGE) return;
  Walk(v, f->message_type(), path, false, out);
}

void Walk(Json& j, const pb::Descriptor* d, const std::string& path, bool top, SchemaCheck& out) {
  if (ApiSchema::ShapeOf(d) != WireShape::kObject || !j.is_object()) return;
  const ApiSchema& schema = ApiSchema::Get();
  std::vector<std::string> drop;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const std::string at = path.empty() ? key : path + "." + key;
    const JsonField* jf = schema.FindJsonField(d, key);
    const FD* f = jf == nullptr ? nullptr : jf->field;
    if (f == nullptr) {
      if (top && (key == "apiVersion" || key == "kind")) continue;
      out.unknown.push_back(at);
      drop.push_back(key);
      continue;
    }
    Json& v = it.value();
    if (f->is_map()) {
      if (!v.is_object() && !v.is_null()) {
        out.wrong_types.push_back(at + ": want an object, got " + std::string(v.type_name()));
        continue;
      }
      if (v.is_null()) continue;
      for (auto e = v.begin(); e != v.end(); ++e) WalkValue(e.value(), f->message_type()->map_value(), at + "." + e.key(), out);
    } else if (f->is_repeated()) {
      if (!v.is_array() && !v.is_null()) {
        out.wrong_types.push_back(at + ": want an array, got " + std::string(v.type_name()));
        continue;
      }
      if (v.is_null()) continue;
      for (size_t i = 0; i < v.size(); ++i) WalkValue(v[i], f, at + "[" + std::to_string(i) + "]", out);
    } else {
      WalkValue(v, f, at, out);
    }
  }
  for (const auto& key : drop) j.erase(key);
  for (const JsonField& jf : schema.JsonFields(d)) {
    const FD* f = jf.field;
    const FieldDoc& doc = schema.Doc(f);
    if (!doc.required) continue;
    const auto it = j.find(f->name());
    // An empty string is missing unless the field's documentation says it may be empty
    // (metav1.Condition's message: upstream's "This may be an empty string").
    const bool empty_allowed = doc.description.find("may be empty") != std::string::npos;
    const bool absent = it == j.end() || it->is_null() ||
                        (it->is_string() && it->get_ref<const std::string&>().empty() && !empty_allowed) ||
                        (it->is_array() && it->empty());
    if (absent) out.missing.push_back({"FieldValueRequired", path.empty() ? f->name() : path + "." + f->name(), "Required value"});
  }
}

std::string ReasonOf(std::string_view detail) {
  if (detail.starts_with("Required value")) return "FieldValueRequired";
  if (detail.starts_with("Unsupported value")) return "FieldValueNotSupported";
  if (detail.starts_with("Forbidden")) return "FieldValueForbidden";
  if (detail.starts_with("Duplicate value")) return "FieldValueDuplicate";
  if (detail.starts_with("Too long")) return "FieldValueTooLong";
  if (detail.starts_with("Too many")) return "FieldValueTooMany";
  if (detail.starts_with("Not found")) return "FieldValueNotFound";
  return "FieldValueInvalid";
}

}  // namespace

StatusOr<FieldValidation> ParseFieldValidation(const std::string& value) {
  if (value.empty() || value == "Warn") return FieldValidation::kWarn;
  if (value == "Strict") return FieldValidation::kStrict;
  if (value == "Ignore") return FieldValidation::kIgnore;
  return InvalidArgument("fieldValidation: Unsupported value: \"" + value +
                         "\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"");
}

SchemaCheck CheckAgainstSchema(Json& object, const pb::Descriptor* d) {
  SchemaCheck out;
  Walk(object, d, "", true, out);
  return out;
}

std::vector<FieldError> FieldErrorsOf(std::string_view message) {
  std::vector<FieldError> out;
  const size_t at = message.find(" is invalid: ");
  if (at == std::string_view::npos) return out;
  std::string_view rest = message.substr(at + 13);
  if (rest.starts_with("[") && rest.ends_with("]")) rest = rest.substr(1, rest.size() - 2);
  while (!rest.empty()) {
    size_t end = rest.find("; ");
    if (end == std::string_view::npos) end = rest.size();
    const std::string_view one = rest.substr(0, end);
    const size_t colon = one.find(": ");
    FieldError e;
    if (colon == std::string_view::npos) {
      e.detail = std::string(one);
    } else {
      e.field = std::string(one.substr(0, colon));
      e.detail = std::string(one.substr(colon + 2));
    }
    e.reason = ReasonOf(e.detail);
    out.push_back(std::move(e));
    rest = end >= rest.size() ? std::string_view() : rest.substr(end + 2);
  }
  return out;
}

Json InvalidStatusBody(const std::string& message, std::string_view kind, std::string_view group,
                       const std::string& name, const std::vector<FieldError>& errors) {
  Json causes = Json::array();
  for (const auto& e : errors) {
    Json c = {{"reason", e.reason}, {"message", e.detail}};
    if (!e.field.empty()) c["field"] = e.field;
    causes.push_back(std::move(c));
  }
  Json details = {{"kind", kind}, {"causes", causes}};
  if (!name.empty()) details["name"] = name;  // omitempty, as upstream
  if (!group.empty()) details["group"] = group;
  return {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", Json::object()}, {"status", "Failure"},
          {"message", message}, {"reason", "Invalid"}, {"details", details}, {"code", 422}};
}

}  // namespace arbiter::api
