// Cron schedules as CronJobs write them (the standard five fields of robfig/cron, which
// kube-controller-manager uses): minute, hour, day of month, month, day of week, each `*`, a
// value, a range `a-b`, a step `*/n` or `a-b/n`, or a comma-separated list of these; month and
// day names (jan…dec, sun…sat); `?` as `*`; and the macros @yearly (@annually), @monthly,
// @weekly, @daily (@midnight) and @hourly. When both day fields are restricted, a day matching
// either one matches. Times are UTC.
#pragma once

#include <bitset>
#include <optional>
#include <string>
#include <string_view>

#include "arbiter/base/status.h"
#include "arbiter/base/time.h"

namespace arbiter::controllers {

class CronSchedule {
 public:
  // Errors name the field and say what is wrong, as `kubectl` would show them.
  static StatusOr<CronSchedule> Parse(std::string_view text);
  // The first scheduled time strictly after `t` (whole minutes), or nullopt if none within
  // five years (a schedule like "0 0 30 2 *" never fires).
  std::optional<Timestamp> Next(Timestamp t) const;

 private:
  std::bitset<60> minute_;
  std::bitset<24> hour_;
  std::bitset<32> dom_;    // 1..31
  std::bitset<13> month_;  // 1..12
  std::bitset<8> dow_;     // 0 = Sunday (and 7, as cron allows)
  bool dom_star_ = false, dow_star_ = false;
};

}  // namespace arbiter::controllers
