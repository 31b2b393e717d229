// RFC 3339 parsing and printing without the C library's locale- and timezone-dependent calls.
#include "arbiter/base/time.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>

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

StatusOr<int64_t> ParseGoDurationNanos(std::string_view text) {
  const std::string s(text);
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  double total = 0;
  if (s == "0") return 0;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
    if (j == i) return InvalidArgument("\"" + s + "\" is not a duration");
    const double n = std::strtod(s.substr(i, j - i).c_str(), nullptr);
    size_t k = j;
    while (k < s.size() && !std::isdigit(static_cast<unsigned char>(s[k])) && s[k] != '.') ++k;
    const std::string unit = s.substr(j, k - j);
    double scale = 0;
    if (unit == "ns") scale = 1;
    else if (unit == "us" || unit == "\xC2\xB5s") scale = 1e3;
    else if (unit == "ms") scale = 1e6;
    else if (unit == "s") scale = 1e9;
    else if (unit == "m") scale = 60e9;
    else if (unit == "h") scale = 3600e9;
    else return InvalidArgument("\"" + s + "\" is not a duration");
    total += n * scale;
    i = k;
  }
  if (total > 9.2e18) return InvalidArgument("\"" + s + "\" is out of range");
  return static_cast<int64_t>(negative ? -total : total);
}

std::string FormatGoDuration(int64_t ns) {
  if (ns == 0) return "0s";
  std::string out = ns < 0 ? "-" : "";
  uint64_t u = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  const uint64_t h = u / 3600000000000ULL;
  u %= 3600000000000ULL;
  const uint64_t m = u / 60000000000ULL;
  u %= 60000000000ULL;
  if (h > 0) out += std::to_string(h) + "h";
  if (h > 0 || m > 0) out += std::to_string(m) + "m";
  char buf[48];
  if (u % 1000000000ULL == 0) {
    std::snprintf(buf, sizeof buf, "%llus", static_cast<unsigned long long>(u / 1000000000ULL));
  } else {
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(u) / 1e9);
    std::string t = buf;
    std::snprintf(buf, sizeof buf, "%ss", t.c_str());
  }
  return out + buf;
}

}  // namespace arbiter
