// Time as Arbiter sees it: integer microseconds since the Unix epoch, an injected Clock, and
// RFC 3339 conversion for the timestamps that Kubernetes objects carry.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "arbiter/base/status.h"

namespace arbiter {

// Microseconds since 1970-01-01T00:00:00Z.
using Timestamp = int64_t;
// A span of time in microseconds.
using Duration = int64_t;

constexpr Duration kMicrosecond = 1;
constexpr Duration kMillisecond = 1000;
constexpr Duration kSecond = 1000 * kMillisecond;
constexpr Duration kMinute = 60 * kSecond;

// The last second RFC 3339 can write (9999-12-31T23:59:59Z): the latest time Arbiter stores or
// prints, so that every timestamp it writes parses in every client.
constexpr Timestamp kLastTimestamp = Timestamp{253402300799} * kSecond;

// `t` plus `seconds` (a grace period, a TTL: user input), ending at kLastTimestamp instead of
// overflowing. REQUIRES: seconds >= 0 and t <= kLastTimestamp.
constexpr Timestamp AddSecondsCapped(Timestamp t, int64_t seconds) {
  return seconds >= (kLastTimestamp - t) / kSecond ? kLastTimestamp : t + seconds * kSecond;
}

// Parses "2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123Z" and numeric offsets ("+02:00").
StatusOr<Timestamp> ParseRfc3339(std::string_view text);
// Formats as "2024-01-02T03:04:05Z" (fractional seconds are printed only when non-zero).
std::string FormatRfc3339(Timestamp t);

// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's algorithm).
void CivilFromDays(int64_t days, int64_t& year, unsigned& month, unsigned& day);

// Go's time.Duration text ("1h2m3.5s", "300ms", "-1.5h") in nanoseconds, and back ("1h2m3.5s";
// "0s" for 0), as Kubernetes writes durations.
StatusOr<int64_t> ParseGoDurationNanos(std::string_view text);
std::string FormatGoDuration(int64_t ns);

// The source of "now" for everything that schedules. Production code and the simulator inject a
// VirtualClock so that runs are reproducible; nothing under sched/ reads the system clock.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Timestamp Now() const = 0;
};

// A clock that moves only when told to. Not thread-safe.
class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(Timestamp start) : now_(start) {}
  Timestamp Now() const override { return now_; }
  // REQUIRES: `t >= Now()`; time never goes backwards.
  void AdvanceTo(Timestamp t) {
    if (t > now_) now_ = t;
  }
  void Advance(Duration d) { AdvanceTo(now_ + d); }

 private:
  Timestamp now_;
};

// The wall clock (std::chrono::system_clock), for `arbiter serve`: object timestamps, grace
// periods, ages. Injected like any Clock; only the serve command creates one.
class SystemClock final : public Clock {
 public:
  Timestamp Now() const override;
};

// Real elapsed time (std::chrono::steady_clock), for metrics and benchmarks only.
class SteadyClock final : public Clock {
 public:
  Timestamp Now() const override;
};

}  // namespace arbiter
