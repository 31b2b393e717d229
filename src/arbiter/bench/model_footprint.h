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
  std::string allocator;                          // whose count: "jemalloc", "tcmalloc", "sanitizer" or "glibc"
};

StatusOr<ModelFootprint> MeasureModelFootprint(const std::string& dump_path);

// glibc's malloc and jemalloc keep freed small blocks in a per-thread cache that their counts
// still take as in use, so a drop of a few objects reads as nothing. When either is the
// allocator and that cache is on, this re-executes the process (argv as main received it) with
// the cache off (GLIBC_TUNABLES=glibc.malloc.tcache_count=0, MALLOC_CONF=tcache:false); it returns
// when there is nothing to do, or if the re-execution fails (the counts may then read low).
void ReexecForExactCounts(char** argv);

}  // namespace arbiter::bench
