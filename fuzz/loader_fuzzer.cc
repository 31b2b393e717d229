// libFuzzer target for the manifest loader: any byte string, read as a YAML or JSON manifest,
// must load into objects or into error lines — never crash, hang, or throw past the loader.
// Error lines must keep their promise of naming the input file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "arbiter/manifest/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  arbiter::manifest::InputFile file{"fuzz.yaml", std::string(reinterpret_cast<const char*>(data), size)};
  arbiter::manifest::LoadResult r = arbiter::manifest::Load({file});
  for (const auto& e : r.errors) {
    if (e.rfind("fuzz.yaml: ", 0) != 0) std::abort();  // an error that does not name its file
  }
  return 0;
}
