// RFC 3339 parsing and printing without the C library's locale- and timezone-dependent calls.
#include "arbiter/base/time.h"

#include <chrono>
#include <cstdio>

namespace arbiter {
namespace {

// Days since the epoch of a proleptic Gregorian civil date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

bool Digits(std::string_view s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

}  // namespace

StatusOr<Timestamp> ParseRfc3339(std::string_view s) {
  auto bad = [&] {
    return InvalidArgument("invalid RFC 3339 timestamp \"" + std::string(s) +
                           "\" (want e.g. 2024-01-02T03:04:05Z)");
  };
  int year, month, day, hour, minute, second;
  if (s.size() < 20 || !Digits(s, 0, 4, year) || s[4] != '-' || !Digits(s, 5, 2, month) ||
      s[7] != '-' || !Digits(s, 8, 2, day) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      !Digits(s, 11, 2, hour) || s[13] != ':' || !Digits(s, 14, 2, minute) || s[16] != ':' ||
      !Digits(s, 17, 2, second)) {
    return bad();
  }
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || day > kDays[month - 1] || hour > 23 || minute > 59 ||
      second > 60) {
    return bad();
  }
  size_t pos = 19;
  int64_t micros = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t scale = 100000;
    size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      micros += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return bad();
  }
  int64_t offset_seconds = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, om) || oh > 23 || om > 59) {
      return bad();
    }
    offset_seconds = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return bad();
  }
  if (pos != s.size()) return bad();
  const int64_t days = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  return secs * kSecond + micros;
}

std::string FormatRfc3339(Timestamp t) {
  int64_t secs = t / kSecond;
  int64_t micros = t % kSecond;
  if (micros < 0) {
    micros += kSecond;
    secs -= 1;
  }
  int64_t days = secs / 86400;
  int64_t rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    days -= 1;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, y, m, d);
  char buf[64];
  if (micros == 0) {
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                  static_cast<long long>(y), m, d, static_cast<long long>(rem / 3600),
                  static_cast<long long>(rem / 60 % 60), static_cast<long long>(rem % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%06lldZ",
                  static_cast<long long>(y), m, d, static_cast<long long>(rem / 3600),
                  static_cast<long long>(rem / 60 % 60), static_cast<long long>(rem % 60),
                  static_cast<long long>(micros));
  }
  return buf;
}

Timestamp SystemClock::Now() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Timestamp SteadyClock::Now() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace arbiter
