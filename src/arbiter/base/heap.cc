#include "arbiter/base/heap.h"

#include <dlfcn.h>
#include <malloc.h>

namespace arbiter {

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
  if (release == nullptr || CurrentHeap().held_free <= threshold) return false;
  release();
  return true;
}

}  // namespace arbiter
