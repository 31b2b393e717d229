// Base64 (RFC 4648): how JSON carries bytes (etcd's gateway, a Secret's data, protobuf bytes).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace arbiter::base {

// The standard alphabet, padded.
std::string Base64Encode(std::string_view in);

// The URL-safe alphabet, unpadded (Go's base64.RawURLEncoding: continue tokens).
std::string Base64UrlEncode(std::string_view in);

// Padded or unpadded, standard or URL-safe alphabet; nullopt for any other character or a
// dangling symbol.
std::optional<std::string> Base64Decode(std::string_view in);

}  // namespace arbiter::base
