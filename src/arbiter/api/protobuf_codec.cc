#include "arbiter/base/base64.h"
#include "arbiter/api/protobuf_codec.h"

#include <google/protobuf/dynamic_message.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "arbiter/api/resources.h"
#include "arbiter/schema/schema.h"
#include "arbiter/base/time.h"

namespace arbiter::api {

using schema::ApiSchema;
using schema::FieldDoc;
using schema::JsonField;
using schema::WireShape;
namespace pb = google::protobuf;

namespace {

using FD = pb::FieldDescriptor;
constexpr std::string_view kMagic("k8s\0", 4);

pb::DynamicMessageFactory& Factory() {
  static pb::DynamicMessageFactory* f = new pb::DynamicMessageFactory(&ApiSchema::Get().pool());
  return *f;
}

std::unique_ptr<pb::Message> NewMessage(const pb::Descriptor* d) {
  return std::unique_ptr<pb::Message>(Factory().GetPrototype(d)->New());
}

Status TypeError(const std::string& path, const char* want, const Json& got) {
  return InvalidArgument(path + ": want " + want + ", got " + std::string(got.type_name()));
}

// Go's time.Duration text ("1h2m3.5s", "300ms") in nanoseconds (base/time.h), errors naming `path`.
StatusOr<int64_t> ParseGoDuration(const std::string& s, const std::string& path) {
  auto ns = ParseGoDurationNanos(s);
  if (!ns.ok()) return InvalidArgument(path + ": " + ns.status().message());
  return *ns;
}

Status SetSpecial(const Json& j, pb::Message* m, WireShape shape, const std::string& path) {
  const pb::Descriptor* d = m->GetDescriptor();
  const pb::Reflection* r = m->GetReflection();
  switch (shape) {
    case WireShape::kQuantity: {
      std::string text;
      if (j.is_string()) text = j.get<std::string>();
      else if (j.is_number_integer()) text = j.dump();
      else if (j.is_number()) text = j.dump();
      else return TypeError(path, "a quantity", j);
      r->SetString(m, d->FindFieldByName("string"), text);
      return Status::Ok();
    }
    case WireShape::kIntOrString:
      if (j.is_number_integer()) {
        r->SetInt64(m, d->FindFieldByName("type"), 0);
        r->SetInt32(m, d->FindFieldByName("intVal"), j.get<int32_t>());
      } else if (j.is_string()) {
        r->SetInt64(m, d->FindFieldByName("type"), 1);
        r->SetString(m, d->FindFieldByName("strVal"), j.get<std::string>());
      } else {
        return TypeError(path, "an integer or a string", j);
      }
      return Status::Ok();
    case WireShape::kTime:
    case WireShape::kMicroTime: {
      if (!j.is_string()) return TypeError(path, "an RFC 3339 time", j);
      auto t = ParseRfc3339(j.get<std::string>());
      if (!t.ok()) return InvalidArgument(path + ": " + t.status().message());
      const int64_t micros = *t;
      int64_t seconds = micros / kSecond;
      int64_t rest = micros % kSecond;
      if (rest < 0) {
        rest += kSecond;
        --seconds;
      }
      r->SetInt64(m, d->FindFieldByName("seconds"), seconds);
      r->SetInt32(m, d->FindFieldByName("nanos"), static_cast<int32_t>(rest * 1000));
      return Status::Ok();
    }
    case WireShape::kDuration: {
      if (!j.is_string()) return TypeError(path, "a duration", j);
      auto ns = ParseGoDuration(j.get<std::string>(), path);
      if (!ns.ok()) return ns.status();
      r->SetInt64(m, d->field(0), *ns);
      return Status::Ok();
    }
    case WireShape::kRawJson:
      r->SetString(m, d->field(0), j.dump());
      return Status::Ok();
    case WireShape::kObject: break;
  }
  return Status::Ok();
}

Status SetScalar(const Json& j, pb::Message* m, const FD* f, bool repeated, const std::string& path) {
  const pb::Reflection* r = m->GetReflection();
  switch (f->cpp_type()) {
    case FD::CPPTYPE_STRING: {
      if (!j.is_string()) return TypeError(path, "a string", j);
      std::string v = j.get<std::string>();
      if (f->type() == FD::TYPE_BYTES) {
        // []byte travels in JSON as base64.
        auto decoded = base::Base64Decode(v);
        if (!decoded) return InvalidArgument(path + ": not base64");
        v = std::move(*decoded);
      }
      repeated ? r->AddString(m, f, v) : r->SetString(m, f, v);
      return Status::Ok();
    }
    case FD::CPPTYPE_INT32:
    case FD::CPPTYPE_INT64:
    case FD::CPPTYPE_UINT32:
    case FD::CPPTYPE_UINT64: {
      if (!j.is_number_integer()) return TypeError(path, "an integer", j);
      const bool is64 = f->cpp_type() == FD::CPPTYPE_INT64 || f->cpp_type() == FD::CPPTYPE_UINT64;
      if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        return InvalidArgument(path + ": " + j.dump() + " is out of range");
      }
      const int64_t v = j.get<int64_t>();
      if (!is64 && (v < INT32_MIN || v > INT32_MAX)) return InvalidArgument(path + ": " + j.dump() + " is out of range");
      switch (f->cpp_type()) {
        case FD::CPPTYPE_INT32: repeated ? r->AddInt32(m, f, static_cast<int32_t>(v)) : r->SetInt32(m, f, static_cast<int32_t>(v)); break;
        case FD::CPPTYPE_UINT32: repeated ? r->AddUInt32(m, f, static_cast<uint32_t>(v)) : r->SetUInt32(m, f, static_cast<uint32_t>(v)); break;
        case FD::CPPTYPE_UINT64: repeated ? r->AddUInt64(m, f, static_cast<uint64_t>(v)) : r->SetUInt64(m, f, static_cast<uint64_t>(v)); break;
        default: repeated ? r->AddInt64(m, f, v) : r->SetInt64(m, f, v); break;
      }
      return Status::Ok();
    }
    case FD::CPPTYPE_DOUBLE:
    case FD::CPPTYPE_FLOAT: {
      if (!j.is_number()) return TypeError(path, "a number", j);
      const double v = j.get<double>();
      if (f->cpp_type() == FD::CPPTYPE_FLOAT) {
        repeated ? r->AddFloat(m, f, static_cast<float>(v)) : r->SetFloat(m, f, static_cast<float>(v));
      } else {
        repeated ? r->AddDouble(m, f, v) : r->SetDouble(m, f, v);
      }
      return Status::Ok();
    }
    case FD::CPPTYPE_BOOL:
      if (!j.is_boolean()) return TypeError(path, "a boolean", j);
      repeated ? r->AddBool(m, f, j.get<bool>()) : r->SetBool(m, f, j.get<bool>());
      return Status::Ok();
    case FD::CPPTYPE_ENUM:
    case FD::CPPTYPE_MESSAGE: break;
  }
  return InvalidArgument(path + ": a field type the API schema does not use");
}

Status SetValue(const Json& j, pb::Message* m, const FD* f, bool repeated, const std::string& path) {
  if (f->cpp_type() != FD::CPPTYPE_MESSAGE) return SetScalar(j, m, f, repeated, path);
  const pb::Reflection* r = m->GetReflection();
  pb::Message* sub = repeated ? r->AddMessage(m, f, &Factory()) : r->MutableMessage(m, f, &Factory());
  return JsonToMessage(j, sub, path);
}

Json ScalarJson(const pb::Message& m, const FD* f, int index) {
  const pb::Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FD::CPPTYPE_STRING: {
      const std::string v = rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
      if (f->type() != FD::TYPE_BYTES) return v;
      return base::Base64Encode(v);
    }
    case FD::CPPTYPE_INT32: return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
    case FD::CPPTYPE_INT64: return rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f);
    case FD::CPPTYPE_UINT32: return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
    case FD::CPPTYPE_UINT64: return rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f);
    case FD::CPPTYPE_DOUBLE: return rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
    case FD::CPPTYPE_FLOAT: return rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
    case FD::CPPTYPE_BOOL: return rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f);
    case FD::CPPTYPE_ENUM:
    case FD::CPPTYPE_MESSAGE: break;
  }
  return nullptr;
}

bool EmptyJson(const Json& j) {
  return j.is_null() || (j.is_string() && j.get_ref<const std::string&>().empty()) ||
         (j.is_number_integer() && j.get<int64_t>() == 0) || (j.is_number_float() && j.get<double>() == 0) ||
         (j.is_boolean() && !j.get<bool>()) || (j.is_object() && j.empty()) || (j.is_array() && j.empty());
}

Json SpecialJson(const pb::Message& m, WireShape shape) {
  const pb::Descriptor* d = m.GetDescriptor();
  const pb::Reflection* r = m.GetReflection();
  switch (shape) {
    case WireShape::kQuantity: return r->GetString(m, d->FindFieldByName("string"));
    case WireShape::kIntOrString:
      if (r->GetInt64(m, d->FindFieldByName("type")) == 1) return r->GetString(m, d->FindFieldByName("strVal"));
      return r->GetInt32(m, d->FindFieldByName("intVal"));
    case WireShape::kTime:
    case WireShape::kMicroTime: {
      const int64_t s = r->GetInt64(m, d->FindFieldByName("seconds"));
      const int64_t n = r->GetInt32(m, d->FindFieldByName("nanos"));
      if (s == 0 && n == 0) return nullptr;  // the zero time is null in JSON
      const Timestamp t = s * kSecond + (shape == WireShape::kMicroTime ? n / 1000 : 0);
      return FormatRfc3339(t);
    }
    case WireShape::kDuration: return FormatGoDuration(r->GetInt64(m, d->field(0)));
    case WireShape::kRawJson: {
      const std::string raw = r->GetString(m, d->field(0));
      if (raw.empty()) return nullptr;
      Json j = Json::parse(raw, nullptr, /*allow_exceptions=*/false);
      return j.is_discarded() ? Json(nullptr) : j;
    }
    case WireShape::kObject: break;
  }
  return nullptr;
}

Json ValueJson(const pb::Message& m, const FD* f, int index) {
  if (f->cpp_type() != FD::CPPTYPE_MESSAGE) return ScalarJson(m, f, index);
  const pb::Reflection* r = m.GetReflection();
  return MessageToJson(index >= 0 ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f));
}

const pb::Descriptor* MessageOfKind(const std::string& api_version, const std::string& kind) {
  const size_t slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  const std::string version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  return ApiSchema::Get().Find(ProtoMessageName(group, version, kind));
}

}  // namespace

bool IsProtobufMediaType(std::string_view content_type) {
  const size_t comma = content_type.find(',');
  std::string_view first = content_type.substr(0, comma);
  const size_t semi = first.find(';');
  std::string_view params = semi == std::string_view::npos ? std::string_view() : first.substr(semi);
  first = first.substr(0, semi);
  while (!first.empty() && first.front() == ' ') first.remove_prefix(1);
  while (!first.empty() && first.back() == ' ') first.remove_suffix(1);
  return first == kProtobufMediaType && params.find("as=") == std::string_view::npos;
}

Status JsonToMessage(const Json& j, pb::Message* m, const std::string& path) {
  const pb::Descriptor* d = m->GetDescriptor();
  const WireShape shape = ApiSchema::ShapeOf(d);
  if (shape != WireShape::kObject) return SetSpecial(j, m, shape, path.empty() ? "(object)" : path);
  if (j.is_null()) return Status::Ok();
  if (!j.is_object()) return TypeError(path.empty() ? "(object)" : path, "an object", j);
  const ApiSchema& schema = ApiSchema::Get();
  pb::Message* const whole = m;
  for (const auto& [key, value] : j.items()) {
    const JsonField* jf = schema.FindJsonField(d, key);
    if (jf == nullptr || value.is_null()) continue;
    const FD* f = jf->field;
    // A field of an embedded (+inline) message lives in that message on the wire.
    m = whole;
    for (const FD* via : jf->via) m = m->GetReflection()->MutableMessage(m, via, &Factory());
    const std::string at = path.empty() ? key : path + "." + key;
    if (f->is_map()) {
      if (!value.is_object()) return TypeError(at, "an object", value);
      const pb::Descriptor* entry = f->message_type();
      for (const auto& [k, v] : value.items()) {
        pb::Message* e = m->GetReflection()->AddMessage(m, f, &Factory());
        e->GetReflection()->SetString(e, entry->map_key(), k);
        if (Status s = SetValue(v, e, entry->map_value(), false, at + "." + k); !s.ok()) return s;
      }
    } else if (f->is_repeated()) {
      if (!value.is_array()) return TypeError(at, "an array", value);
      for (size_t i = 0; i < value.size(); ++i) {
        if (Status s = SetValue(value[i], m, f, true, at + "[" + std::to_string(i) + "]"); !s.ok()) return s;
      }
    } else if (Status s = SetValue(value, m, f, false, at); !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

Json MessageToJson(const pb::Message& m) {
  const pb::Descriptor* d = m.GetDescriptor();
  const WireShape shape = ApiSchema::ShapeOf(d);
  if (shape != WireShape::kObject) return SpecialJson(m, shape);
  const pb::Reflection* r = m.GetReflection();
  const ApiSchema& schema = ApiSchema::Get();
  Json out = Json::object();
  for (int i = 0; i < d->field_count(); ++i) {
    const FD* f = d->field(i);
    Json v;
    if (f->is_map()) {
      const int n = r->FieldSize(m, f);
      if (n == 0) continue;
      v = Json::object();
      const pb::Descriptor* entry = f->message_type();
      for (int k = 0; k < n; ++k) {
        const pb::Message& e = r->GetRepeatedMessage(m, f, k);
        v[e.GetReflection()->GetString(e, entry->map_key())] = ValueJson(e, entry->map_value(), -1);
      }
    } else if (f->is_repeated()) {
      const int n = r->FieldSize(m, f);
      if (n == 0) continue;
      v = Json::array();
      for (int k = 0; k < n; ++k) v.push_back(ValueJson(m, f, k));
    } else {
      if (!r->HasField(m, f)) continue;
      v = ValueJson(m, f, -1);
      if (schema.Doc(f).inline_fields && v.is_object()) {
        for (auto& [k, inner] : v.items()) out[k] = std::move(inner);  // an embedded struct's fields
        continue;
      }
      if (v.is_null() || (schema.Doc(f).optional && EmptyJson(v))) continue;
    }
    out[f->name()] = std::move(v);
  }
  return out;
}

StatusOr<Json> DecodeProtobufObject(std::string_view body) {
  if (!body.starts_with(kMagic)) {
    return InvalidArgument("the protobuf body does not start with the Kubernetes magic bytes \"k8s\\x00\"");
  }
  const pb::Descriptor* unknown_d = ApiSchema::Get().Find("k8s.io.apimachinery.pkg.runtime.Unknown");
  auto unknown = NewMessage(unknown_d);
  body.remove_prefix(kMagic.size());
  if (!unknown->ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    return InvalidArgument("the protobuf body is not a runtime.Unknown message");
  }
  const pb::Reflection* r = unknown->GetReflection();
  const pb::Message& tm = r->GetMessage(*unknown, unknown_d->FindFieldByName("typeMeta"));
  const std::string api_version = tm.GetReflection()->GetString(tm, tm.GetDescriptor()->FindFieldByName("apiVersion"));
  const std::string kind = tm.GetReflection()->GetString(tm, tm.GetDescriptor()->FindFieldByName("kind"));
  const pb::Descriptor* d = MessageOfKind(api_version, kind);
  if (d == nullptr) {
    return InvalidArgument("the protobuf body is a " + kind + " of " + api_version +
                           ", which has no protobuf form here: send it as JSON");
  }
  auto object = NewMessage(d);
  const std::string raw = r->GetString(*unknown, unknown_d->FindFieldByName("raw"));
  if (!object->ParseFromString(raw)) return InvalidArgument("the protobuf body is not a valid " + kind);
  Json j = MessageToJson(*object);
  Json out = {{"apiVersion", api_version}, {"kind", kind}};
  for (auto& [k, v] : j.items()) out[k] = std::move(v);
  return out;
}

StatusOr<std::string> EncodeProtobufObject(const Json& object) {
  if (!object.is_object()) return InvalidArgument("only objects have a protobuf form");
  const std::string api_version = object.value("apiVersion", "");
  const std::string kind = object.value("kind", "");
  const pb::Descriptor* d = MessageOfKind(api_version, kind);
  if (d == nullptr) return NotFound(kind + " of " + api_version + " has no protobuf form");
  auto message = NewMessage(d);
  if (Status s = JsonToMessage(object, message.get()); !s.ok()) return s;
  const pb::Descriptor* unknown_d = ApiSchema::Get().Find("k8s.io.apimachinery.pkg.runtime.Unknown");
  auto unknown = NewMessage(unknown_d);
  const pb::Reflection* r = unknown->GetReflection();
  pb::Message* tm = r->MutableMessage(unknown.get(), unknown_d->FindFieldByName("typeMeta"), &Factory());
  tm->GetReflection()->SetString(tm, tm->GetDescriptor()->FindFieldByName("apiVersion"), api_version);
  tm->GetReflection()->SetString(tm, tm->GetDescriptor()->FindFieldByName("kind"), kind);
  r->SetString(unknown.get(), unknown_d->FindFieldByName("raw"), message->SerializeAsString());
  r->SetString(unknown.get(), unknown_d->FindFieldByName("contentEncoding"), "");
  r->SetString(unknown.get(), unknown_d->FindFieldByName("contentType"), "");
  return std::string(kMagic) + unknown->SerializeAsString();
}

std::string EncodeWatchFrame(std::string_view type, std::string_view object) {
  const pb::Descriptor* event_d = ApiSchema::Get().Find("k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent");
  auto event = NewMessage(event_d);
  const pb::Reflection* r = event->GetReflection();
  r->SetString(event.get(), event_d->FindFieldByName("type"), std::string(type));
  pb::Message* raw = r->MutableMessage(event.get(), event_d->FindFieldByName("object"), &Factory());
  raw->GetReflection()->SetString(raw, raw->GetDescriptor()->FindFieldByName("raw"), std::string(object));
  const std::string body = event->SerializeAsString();
  std::string frame(4, '\0');
  for (int i = 0; i < 4; ++i) frame[static_cast<size_t>(i)] = static_cast<char>((body.size() >> (8 * (3 - i))) & 0xff);
  return frame + body;
}

StatusOr<WatchFrame> DecodeWatchFrame(std::string_view body) {
  const pb::Descriptor* event_d = ApiSchema::Get().Find("k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent");
  auto event = NewMessage(event_d);
  if (!event->ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    return InvalidArgument("a protobuf watch frame is not a WatchEvent message");
  }
  const pb::Reflection* r = event->GetReflection();
  WatchFrame out;
  out.type = r->GetString(*event, event_d->FindFieldByName("type"));
  const pb::Message& raw = r->GetMessage(*event, event_d->FindFieldByName("object"));
  out.object = raw.GetReflection()->GetString(raw, raw.GetDescriptor()->FindFieldByName("raw"));
  return out;
}

}  // namespace arbiter::api
