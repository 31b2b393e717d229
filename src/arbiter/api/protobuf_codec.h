// Kubernetes' protobuf encoding of API objects (application/vnd.kubernetes.protobuf): the
// 4-byte magic "k8s\0", then a runtime.Unknown message whose typeMeta names apiVersion and kind
// and whose raw bytes are the kind's own message (schema.h). Objects inside Arbiter are JSON;
// these functions convert at the edge, in both directions, with the JSON field names and
// the JSON forms of the special types (Quantity, IntOrString, Time, MicroTime, Duration,
// RawExtension, FieldsV1).
#pragma once

#include <string>
#include <string_view>

#include <google/protobuf/message.h>
#include "arbiter/base/json.h"

#include "arbiter/base/status.h"

namespace arbiter::api {

using Json = nlohmann::json;

inline constexpr std::string_view kProtobufMediaType = "application/vnd.kubernetes.protobuf";

// Whether a content type (or the first entry of an Accept header) is the protobuf media type.
bool IsProtobufMediaType(std::string_view content_type);

// An enveloped object as JSON, with apiVersion and kind from the envelope. Errors say what is
// wrong with the body (no magic, not a message, a kind without a protobuf form, a bad field).
StatusOr<Json> DecodeProtobufObject(std::string_view body);

// A JSON object (with apiVersion and kind) in the envelope; NotFound when the kind has no
// protobuf form, InvalidArgument when a field cannot be encoded.
StatusOr<std::string> EncodeProtobufObject(const Json& object);

// A protobuf watch stream (`application/vnd.kubernetes.protobuf;stream=watch`) is a sequence of
// frames: a 4-byte big-endian length, then a meta/v1 WatchEvent message without the envelope,
// whose object.raw is the enveloped object (EncodeProtobufObject's bytes). `object` here is
// those bytes.
inline constexpr std::string_view kProtobufWatchMediaType = "application/vnd.kubernetes.protobuf;stream=watch";
std::string EncodeWatchFrame(std::string_view type, std::string_view object);
struct WatchFrame {
  std::string type;
  std::string object;
};
// One frame's message (after its length prefix).
StatusOr<WatchFrame> DecodeWatchFrame(std::string_view message);

// The message-level conversions. Fields of `j` that the message does not have are skipped;
// a value of the wrong JSON type is an error naming its path. `path` prefixes those names.
Status JsonToMessage(const Json& j, google::protobuf::Message* m, const std::string& path = "");
// Unset fields, and empty values of +optional fields, are left out (as Go's omitempty does).
Json MessageToJson(const google::protobuf::Message& m);

}  // namespace arbiter::api
