// The process's heap as its allocator counts it, each allocator's API found at run time:
// tcmalloc's or jemalloc's when it is the allocator (the arbiter executable links one of them),
// the sanitizers' when the build has them (they replace malloc, and glibc's mallinfo2 then
// reports nothing), else glibc's.
#pragma once

#include <cstddef>
#include <string>

namespace arbiter {

struct HeapStats {
  std::string allocator;  // "tcmalloc", "jemalloc", "sanitizer" or "glibc"
  size_t in_use = 0;      // bytes the program has allocated and not freed
  // Bytes the allocator holds for reuse (freed, or never handed out) and has not returned to the
  // system: resident, though the program holds none of it. tcmalloc's page heap and caches;
  // jemalloc's resident pages beyond those in use; glibc's free chunks; 0 where the allocator
  // does not say.
  size_t held_free = 0;
};

HeapStats CurrentHeap();

// Returns the allocator's free pages to the system when it holds more than `threshold` bytes
// free (tcmalloc's ReleaseFreeMemory; jemalloc's purge of every arena, when its dirty pages
// exceed the threshold; nothing under glibc). Both keep freed pages for reuse, so a heap that
// shrinks (trees dropped by store::Body's cache) would otherwise stay resident. Returns whether
// it released.
bool ReleaseHeldMemory(size_t threshold);

}  // namespace arbiter
