// What the decoded model holds: `arbiter bench --scenario ModelFootprint --dump FILE` reads a
// cluster dump as `arbiter plan` reads it, then drops the decoded nodes, then the pods, and
// counts the heap bytes each drop gives back (the allocator's own count), per object.
#pragma once

#include <cstddef>
#include <string>

#include "arbiter/base/status.h"

namespace arbiter::bench {

struct ModelFootprint {
  size_t nodes = 0, pods = 0;
  double load_seconds = 0;
  size_t bytes_per_node = 0, bytes_per_pod = 0;  // the decoded object with its origin
  std::string allocator;                          // whose count: "tcmalloc" or "glibc"
};

StatusOr<ModelFootprint> MeasureModelFootprint(const std::string& dump_path);

}  // namespace arbiter::bench
