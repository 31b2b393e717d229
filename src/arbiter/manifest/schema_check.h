// `plan`'s strict decoding: a document may carry only the fields its kind's published schema
// (schema/schema.h, the same messages the API validates requests with) has. The object decoders
// read only what scheduling needs, so what they do not read says nothing: the schema does.
// Unknown fields go to Decoder::Unknown (an error, a warning or nothing, as --validate says).
#pragma once

#include <string_view>

#include <google/protobuf/descriptor.h>

#include "arbiter/manifest/decoder.h"

namespace arbiter::manifest {

// The schema's message of a kind at an apiVersion ("apps/v1", "Deployment"), or null when the
// schema has none (the scheduler's and the kubelet's configuration: their decoders list their
// fields themselves, Decoder::KnownFields).
const google::protobuf::Descriptor* SchemaMessageOf(std::string_view api_version, std::string_view kind);

// Reports every field of `object` (a document; its apiVersion and kind aside) that message `m`
// does not have, through nested objects, lists and maps, with its full path.
void CheckSchemaFields(const Node& object, const google::protobuf::Descriptor* m, Decoder& d);

}  // namespace arbiter::manifest
