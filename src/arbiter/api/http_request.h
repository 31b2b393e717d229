// Reading an HTTP request's target and body at the edge: the decoded path and query, and a gzip
// body inflated within a bound. Not for use outside api/.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "arbiter/base/status.h"

namespace arbiter::api {

// Splits a request target into its decoded path and query parameters (the last value of a
// repeated key wins).
void ParseTarget(std::string_view target, std::string* path, std::map<std::string, std::string>* query);

// Inflates a gzip (or zlib) body, refusing to produce more than `limit` bytes.
StatusOr<std::string> Inflate(const std::string& in, size_t limit);

}  // namespace arbiter::api
