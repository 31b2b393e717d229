// Resource amounts as plain integers: CPU in milli-cores, memory and ephemeral storage in bytes,
// pods as a count, and extended resources ("nvidia.com/gpu") by name. The well-known resources
// are fields, not map entries, because they are read on every Filter and Score call.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace arbiter::model {

inline constexpr std::string_view kResourceCpu = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourceEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kResourcePods = "pods";

// Requests that NodeResourcesFit's scoring assumes for a container that states none
// (schedutil.DefaultMilliCPURequest and DefaultMemoryRequest).
inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

struct Resources {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t ephemeral_storage = 0;
  int64_t pods = 0;
  // Extended and other scalar resources, sorted by name, no duplicates.
  std::vector<std::pair<std::string, int64_t>> scalars;

  int64_t Scalar(std::string_view name) const;
  void SetScalar(std::string_view name, int64_t v);
  // Sets a resource by its Kubernetes name ("cpu" takes milli-units, the rest whole units).
  void Set(std::string_view name, int64_t milli_or_value);
  // The amount of a resource by its Kubernetes name, in the same units as Set.
  int64_t Get(std::string_view name) const;

  void Add(const Resources& o);
  void Sub(const Resources& o);
  // Element-wise maximum.
  void Max(const Resources& o);
  bool IsZero() const;

  friend bool operator==(const Resources&, const Resources&) = default;
};

}  // namespace arbiter::model
