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

// The largest amount of one resource Arbiter accepts in a request, limit, capacity or
// allocatable: 2^53 in the resource's unit (milli-CPU, bytes, counts), i.e. 9 billion cores or
// 8 PiB. Bounding every input keeps the sums the scheduler and the quota make far from int64's
// limit; the sums saturate as well (SaturatingAdd), so no input can wrap them around.
inline constexpr int64_t kMaxResourceAmount = int64_t{1} << 53;

// a + b, clamped to int64's range instead of overflowing.
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  if (!__builtin_add_overflow(a, b, &out)) return out;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

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

  void Add(const Resources& o);  // saturating
  void Sub(const Resources& o);
  // Element-wise maximum.
  void Max(const Resources& o);
  bool IsZero() const;

  friend bool operator==(const Resources&, const Resources&) = default;
};

}  // namespace arbiter::model
