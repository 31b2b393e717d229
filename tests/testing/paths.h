// Where tests find the source tree and the built binary: the environment (ARBITER_SOURCE_DIR,
// ARBITER_BINARY) when set, else the paths the build compiled in.
#pragma once

#include <cstdlib>
#include <string>

namespace arbiter::testing {

inline std::string SourceDir() {
  const char* d = std::getenv("ARBITER_SOURCE_DIR");
  return d != nullptr && *d != '\0' ? d : ARBITER_SOURCE_DIR_DEFAULT;
}

inline std::string ArbiterBinary() {
  const char* b = std::getenv("ARBITER_BINARY");
  return b != nullptr && *b != '\0' ? b : ARBITER_BINARY_DEFAULT;
}

}  // namespace arbiter::testing
