// The API's types, one description for every use: Kubernetes' published protobuf messages
// (proto/*.proto, compiled into the binary as a descriptor set with their comments) give
//   * the protobuf wire format of request and response bodies (protobuf_codec.h),
//   * the /openapi/v2 and /openapi/v3 documents that kubectl validates with and explains
//     (openapi.h), and
//   * server-side field validation: which fields an object may carry (api/field_validation.h),
//   * and `plan`'s strict decoding of its input (manifest/schema_check.h).
// Field names are the JSON names. Each field's comment gives its description and upstream's
// marker tags (+optional, +required, +patchMergeKey=, +patchStrategy=, +listType=,
// +listMapKey=, +mapType=, and +inline for Go's embedded structs), which this registry parses
// once.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>

namespace arbiter::schema {

namespace pb = google::protobuf;

// How a message travels in JSON when it is not an ordinary object.
enum class WireShape {
  kObject,        // an ordinary message: a JSON object of its fields
  kQuantity,      // resource.Quantity: "100m", or a number
  kIntOrString,   // intstr.IntOrString: 3 or "50%"
  kTime,          // meta.v1.Time: RFC 3339 seconds
  kMicroTime,     // meta.v1.MicroTime: RFC 3339 microseconds
  kDuration,      // meta.v1.Duration: "1h2m3s"
  kRawJson,       // meta.v1.FieldsV1 and runtime.RawExtension: any JSON, kept as bytes
};

struct FieldDoc {
  std::string description;
  bool optional = false;  // +optional: omitted from JSON when empty
  bool required = false;  // +required: validation rejects an object without it
  std::string patch_merge_key;
  std::string patch_strategy;
  std::string list_type;
  std::vector<std::string> list_map_keys;
  std::string map_type;
  // +inline: an embedded Go struct. The message's fields appear in the JSON object of the
  // parent (Probe's httpGet, a Volume's configMap), while protobuf nests them under this field.
  bool inline_fields = false;
};

// A field as a JSON object carries it: `field` of the message reached from the object's own
// message through the inline fields `via` (outermost first; empty for an ordinary field).
struct JsonField {
  const pb::FieldDescriptor* field = nullptr;
  std::vector<const pb::FieldDescriptor*> via;
};

class ApiSchema {
 public:
  // The registry of the embedded descriptor set, built on first use.
  static const ApiSchema& Get();

  // A message by its full proto name ("k8s.io.api.core.v1.Pod"), or null.
  const pb::Descriptor* Find(std::string_view full_name) const;
  const FieldDoc& Doc(const pb::FieldDescriptor* f) const;
  const std::string& Doc(const pb::Descriptor* m) const;
  // The fields of a message's JSON object, inline fields flattened, in field order.
  const std::vector<JsonField>& JsonFields(const pb::Descriptor* m) const;
  // The JSON field `name` of message `m`, or null.
  const JsonField* FindJsonField(const pb::Descriptor* m, std::string_view name) const;
  static WireShape ShapeOf(const pb::Descriptor* m);
  // The OpenAPI definition name: "io.k8s.api.core.v1.Pod" for "k8s.io.api.core.v1.Pod".
  static std::string OpenApiName(const pb::Descriptor* m);
  const pb::DescriptorPool& pool() const { return pool_; }

 private:
  ApiSchema();
  pb::DescriptorPool pool_;
  std::map<const pb::FieldDescriptor*, FieldDoc> field_docs_;
  std::map<const pb::Descriptor*, std::string> message_docs_;
  std::map<const pb::Descriptor*, std::vector<JsonField>> json_fields_;
  FieldDoc empty_field_;
  std::string empty_;
};

// The protobuf message of a kind of an API group and version: "k8s.io.api.core.v1.Pod" for
// ("", "v1", "Pod"), "k8s.io.api.apps.v1.Deployment" for ("apps", "v1", "Deployment").
std::string ProtoMessageName(std::string_view group, std::string_view version, std::string_view kind);

}  // namespace arbiter::schema
