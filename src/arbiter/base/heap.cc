#include "arbiter/base/heap.h"

#include <dlfcn.h>
#include <malloc.h>

#include <cstdint>

namespace arbiter {

namespace {

// jemalloc's control interface (mallctl(3)), when jemalloc is the allocator.
using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);
Mallctl JemallocCtl() {
  static auto* ctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
  return ctl;
}

// jemalloc's statistics (a snapshot, taken anew: they change when the epoch advances), each a
// size_t; false when jemalloc does not answer for one of them.
template <size_t N>
bool JemallocStats(Mallctl ctl, const char* const (&names)[N], size_t (&values)[N]) {
  uint64_t epoch = 1;
  size_t epoch_size = sizeof epoch;
  if (ctl("epoch", &epoch, &epoch_size, &epoch, epoch_size) != 0) return false;
  for (size_t i = 0; i < N; ++i) {
    size_t size = sizeof(size_t);
    if (ctl(names[i], &values[i], &size, nullptr, 0) != 0) return false;
  }
  return true;
}

}  // namespace

HeapStats CurrentHeap() {
  using GetProperty = int (*)(const char*, size_t*);
  using GetBytes = size_t (*)();
  static auto* tcmalloc = reinterpret_cast<GetProperty>(dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
  static auto* sanitizer = reinterpret_cast<GetBytes>(dlsym(RTLD_DEFAULT, "__sanitizer_get_current_allocated_bytes"));
  HeapStats s;
  size_t v = 0;
  if (tcmalloc != nullptr && tcmalloc("generic.current_allocated_bytes", &v) != 0) {
    s.allocator = "tcmalloc";
    s.in_use = v;
    for (const char* free_bytes : {"tcmalloc.pageheap_free_bytes", "tcmalloc.central_cache_free_bytes",
                                   "tcmalloc.transfer_cache_free_bytes", "tcmalloc.thread_cache_free_bytes"}) {
      if (tcmalloc(free_bytes, &v) != 0) s.held_free += v;
    }
    return s;
  }
  if (Mallctl ctl = JemallocCtl(); ctl != nullptr) {
    size_t stats[2] = {};  // allocated, resident
    if (JemallocStats(ctl, {"stats.allocated", "stats.resident"}, stats)) {
      s.allocator = "jemalloc";
      s.in_use = stats[0];
      s.held_free = stats[1] > stats[0] ? stats[1] - stats[0] : 0;  // its pages not in use, and its metadata
      return s;
    }
  }
  if (sanitizer != nullptr) {
    s.allocator = "sanitizer";
    s.in_use = sanitizer();
    return s;
  }
  const struct mallinfo2 m = mallinfo2();
  s.allocator = "glibc";
  s.in_use = m.uordblks + m.hblkhd;  // chunks in the arenas, and blocks mapped on their own
  s.held_free = m.fordblks;
  return s;
}

bool ReleaseHeldMemory(size_t threshold) {
  using Release = void (*)();
  static auto* release = reinterpret_cast<Release>(dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"));
  if (release != nullptr) {
    if (CurrentHeap().held_free <= threshold) return false;
    release();
    return true;
  }
  if (Mallctl ctl = JemallocCtl(); ctl != nullptr) {
    // Only the dirty pages (freed, still resident) are what a purge returns; the rest of what
    // held_free counts (free space inside pages in use, jemalloc's metadata) stays. 4096 is
    // MALLCTL_ARENAS_ALL: every arena's sum, and every arena's purge.
    size_t stats[2] = {};  // dirty pages, page size
    if (!JemallocStats(ctl, {"stats.arenas.4096.pdirty", "arenas.page"}, stats) || stats[0] * stats[1] <= threshold) return false;
    return ctl("arena.4096.purge", nullptr, nullptr, nullptr, 0) == 0;
  }
  return false;
}

}  // namespace arbiter
