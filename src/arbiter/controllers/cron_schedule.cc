// Cron schedules.
#include "arbiter/controllers/cron_schedule.h"

#include <array>
#include <cctype>
#include <vector>

namespace arbiter::controllers {

namespace {

constexpr std::array<std::string_view, 12> kMonths = {"jan", "feb", "mar", "apr", "may", "jun",
                                                      "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::array<std::string_view, 7> kDays = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

std::vector<std::string> Split(std::string_view s, char by) {
  std::vector<std::string> out;
  size_t at = 0;
  while (true) {
    const size_t next = s.find(by, at);
    out.emplace_back(s.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
    if (next == std::string_view::npos) return out;
    at = next + 1;
  }
}

// One field into `bits` (values lo..hi). Returns false on error, with `why`.
template <size_t N>
bool ParseField(const std::string& field, int lo, int hi, const std::array<std::string_view, 12>* months,
                const std::array<std::string_view, 7>* days, std::bitset<N>& bits, bool& star, std::string& why) {
  auto number = [&](std::string v, int& out) {
    for (auto& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (months != nullptr) {
      for (size_t i = 0; i < months->size(); ++i) {
        if ((*months)[i] == v) return out = static_cast<int>(i) + 1, true;
      }
    }
    if (days != nullptr) {
      for (size_t i = 0; i < days->size(); ++i) {
        if ((*days)[i] == v) return out = static_cast<int>(i), true;
      }
    }
    if (v.empty() || v.size() > 4) return false;
    for (char ch : v) {
      if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
    }
    out = std::stoi(v);
    return true;
  };
  star = field == "*" || field == "?";
  for (const std::string& part : Split(field, ',')) {
    std::string range = part;
    int step = 1;
    if (const size_t slash = part.find('/'); slash != std::string::npos) {
      range = part.substr(0, slash);
      if (!number(part.substr(slash + 1), step) || step <= 0) {
        why = "failed to parse int from " + part.substr(slash + 1);
        return false;
      }
    }
    int a = lo, b = hi;
    if (range != "*" && range != "?") {
      const size_t dash = range.find('-');
      if (!number(range.substr(0, dash), a) || (dash != std::string::npos && !number(range.substr(dash + 1), b))) {
        why = "failed to parse int from " + range;
        return false;
      }
      if (dash == std::string::npos) b = part.find('/') != std::string::npos ? hi : a;
    }
    if (a < lo || b > hi || a > b) {
      why = "end of range (" + std::to_string(b) + ") above maximum (" + std::to_string(hi) + "): " + part;
      if (a < lo) why = "beginning of range (" + std::to_string(a) + ") below minimum (" + std::to_string(lo) + "): " + part;
      if (a > b) why = "beginning of range (" + std::to_string(a) + ") beyond end of range (" + std::to_string(b) + "): " + part;
      return false;
    }
    for (int v = a; v <= b; v += step) bits.set(static_cast<size_t>(v));
  }
  return true;
}

}  // namespace

StatusOr<CronSchedule> CronSchedule::Parse(std::string_view text) {
  std::string spec(text);
  if (spec == "@yearly" || spec == "@annually") spec = "0 0 1 1 *";
  if (spec == "@monthly") spec = "0 0 1 * *";
  if (spec == "@weekly") spec = "0 0 * * 0";
  if (spec == "@daily" || spec == "@midnight") spec = "0 0 * * *";
  if (spec == "@hourly") spec = "0 * * * *";
  std::vector<std::string> fields;
  for (const std::string& f : Split(spec, ' ')) {
    if (!f.empty()) fields.push_back(f);
  }
  if (fields.size() != 5) {
    return InvalidArgument("expected exactly 5 fields, found " + std::to_string(fields.size()) + ": " + std::string(text));
  }
  CronSchedule s;
  std::string why;
  bool star = false;
  if (!ParseField(fields[0], 0, 59, nullptr, nullptr, s.minute_, star, why) ||
      !ParseField(fields[1], 0, 23, nullptr, nullptr, s.hour_, star, why) ||
      !ParseField(fields[2], 1, 31, nullptr, nullptr, s.dom_, s.dom_star_, why) ||
      !ParseField(fields[3], 1, 12, &kMonths, nullptr, s.month_, star, why) ||
      !ParseField(fields[4], 0, 7, nullptr, &kDays, s.dow_, s.dow_star_, why)) {
    return InvalidArgument(why);
  }
  return s;
}

std::optional<Timestamp> CronSchedule::Next(Timestamp t) const {
  int64_t minute = t / kMinute + 1;  // strictly after, on a whole minute
  const int64_t limit = minute + int64_t{5} * 366 * 24 * 60;
  while (minute < limit) {
    const int64_t day = minute / (24 * 60);
    int64_t y = 0;
    unsigned m = 0, d = 0;
    CivilFromDays(day, y, m, d);
    const unsigned weekday = static_cast<unsigned>((day % 7 + 7 + 4) % 7);  // 1970-01-01 was a Thursday
    const bool dom_ok = dom_.test(d);
    const bool dow_ok = dow_.test(weekday) || (weekday == 0 && dow_.test(7));
    const bool day_ok = dom_star_ || dow_star_ ? dom_ok && dow_ok : dom_ok || dow_ok;
    if (!month_.test(m) || !day_ok) {
      minute = (day + 1) * 24 * 60;
      continue;
    }
    const int64_t in_day = minute % (24 * 60);
    const int64_t h = in_day / 60;
    if (!hour_.test(static_cast<size_t>(h))) {
      minute = day * 24 * 60 + (h + 1) * 60;
      continue;
    }
    if (!minute_.test(static_cast<size_t>(in_day % 60))) {
      ++minute;
      continue;
    }
    return minute * kMinute;
  }
  return std::nullopt;
}

}  // namespace arbiter::controllers
