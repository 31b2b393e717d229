#include "arbiter/bench/model_footprint.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "arbiter/base/heap.h"
#include "arbiter/manifest/loader.h"

namespace arbiter::bench {

namespace {

// The heap bytes in use, as the allocator counts them.
std::pair<size_t, std::string> HeapInUse() {
  HeapStats h = CurrentHeap();
  return {h.in_use, std::move(h.allocator)};
}

// Each allocator's switch for its thread cache: the environment variable and the setting.
struct NoThreadCache {
  const char* allocator;
  const char* variable;
  const char* setting;
  char separator;
};
constexpr NoThreadCache kNoThreadCache[] = {{"glibc", "GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", ':'},
                                            {"jemalloc", "MALLOC_CONF", "tcache:false", ','}};

// The bytes `drop` gives back.
template <typename Fn>
size_t Freed(Fn&& drop) {
  const size_t before = HeapInUse().first;
  drop();
  const size_t after = HeapInUse().first;
  return before > after ? before - after : 0;
}

}  // namespace

void ReexecForExactCounts(char** argv) {
  const std::string allocator = HeapInUse().second;
  for (const NoThreadCache& off : kNoThreadCache) {
    if (allocator != off.allocator) continue;
    const char* current = std::getenv(off.variable);
    if (current != nullptr && std::strstr(current, off.setting) != nullptr) return;
    std::string value = current != nullptr && *current != '\0' ? std::string(current) + off.separator : std::string();
    value += off.setting;
    if (setenv(off.variable, value.c_str(), 1) != 0) return;
    execv("/proc/self/exe", argv);  // returns only on failure: the counts may then read low
    return;
  }
}

StatusOr<ModelFootprint> MeasureModelFootprint(const std::string& dump_path) {
  auto read = manifest::ReadInputFile(dump_path, uint64_t{1} << 34);
  if (!read.ok()) return read.status();
  std::vector<manifest::InputFile> files;
  files.push_back(std::move(*read));
  const auto start = std::chrono::steady_clock::now();
  manifest::LoadResult r = manifest::Load(files);
  ModelFootprint f;
  f.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!r.ok()) return InvalidArgument(r.errors.front());
  files.clear();  // the text is not the model
  f.nodes = r.objects.nodes.size();
  f.pods = r.objects.pods.size();
  f.allocator = HeapInUse().second;
  const size_t node_bytes = Freed([&] { std::exchange(r.objects.nodes, {}); });
  const size_t pod_bytes = Freed([&] { std::exchange(r.objects.pods, {}); });
  f.bytes_per_node = f.nodes > 0 ? node_bytes / f.nodes : 0;
  f.bytes_per_pod = f.pods > 0 ? pod_bytes / f.pods : 0;
  return f;
}

}  // namespace arbiter::bench
