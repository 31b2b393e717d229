// ApiLoad: a load client for `arbiter serve`. Creates pods over HTTP from several keep-alive
// connections, reports the rate of acknowledged creations, then waits until every pod is bound
// and reports how long that took from the first creation.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "arbiter/base/status.h"

namespace arbiter::bench {

struct ApiLoadOptions {
  std::string server = "http://127.0.0.1:8080";
  std::string token;  // bearer token, when the server authenticates
  std::string ns = "default";
  size_t pods = 10000;
  size_t connections = 8;
  double bind_timeout_seconds = 60;
};

struct ApiLoadResult {
  size_t created = 0;
  double create_seconds = 0;
  double creates_per_second = 0;
  size_t bound = 0;
  double all_bound_seconds = 0;  // from the first creation; negative when the timeout passed
};

StatusOr<ApiLoadResult> RunApiLoad(const ApiLoadOptions& options, const std::function<void(size_t, size_t)>& progress);

}  // namespace arbiter::bench
