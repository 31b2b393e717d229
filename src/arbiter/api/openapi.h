// The OpenAPI documents of the served kinds, generated from the API schema (schema.h): every
// field with its type, description, required fields and patch metadata, so that kubectl
// validates objects (client side with v2, or through the server's fieldValidation with v3) and
// `kubectl explain` describes them.
#pragma once

#include <string>
#include <string_view>

#include "arbiter/base/json.h"

namespace arbiter::api {

using Json = nlohmann::json;

// GET /openapi/v3: the index of group versions.
Json OpenApiIndex();
// GET /openapi/v3/api/v1, /openapi/v3/apis/{group}/{version}: null if not served.
Json OpenApiV3Document(std::string_view group, std::string_view version);
// GET /openapi/v2 as JSON: every served kind and the definitions they use.
const Json& OpenApiV2Document();
// The same document in its protobuf form (openapi.v2.Document), which kubectl reads.
const std::string& OpenApiV2Protobuf();

}  // namespace arbiter::api
