// Exact quantity arithmetic on 128-bit integers, so that no parse goes through floating point.
#include "arbiter/model/quantity.h"

#include <limits>

namespace arbiter::model {
namespace {

__extension__ typedef __int128 i128;  // exact intermediate products
constexpr i128 kMax = std::numeric_limits<int64_t>::max();

Status Bad(std::string_view text, std::string_view why) {
  return InvalidArgument("invalid quantity \"" + std::string(text) + "\": " + std::string(why));
}

}  // namespace

StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  std::string_view s = text;
  if (s.empty()) return Bad(text, "empty string");
  bool negative = false;
  size_t pos = 0;
  if (s[pos] == '+' || s[pos] == '-') {
    negative = s[pos] == '-';
    ++pos;
  }
  // Mantissa: digits with at most one '.', at least one digit.
  i128 mantissa = 0;
  int frac_digits = 0;
  bool seen_dot = false, seen_digit = false, overflow = false;
  bool lost = false;  // a non-zero fraction digit was dropped for precision: round up
  for (; pos < s.size(); ++pos) {
    const char c = s[pos];
    if (c >= '0' && c <= '9') {
      seen_digit = true;
      if (mantissa > (i128{1} << 100)) {
        // Further digits only matter if they are significant; a fraction's tail may be dropped
        // after rounding up below, an integer's may not.
        if (!seen_dot) overflow = true;
        if (c != '0') lost = true;
        continue;
      }
      mantissa = mantissa * 10 + (c - '0');
      if (seen_dot) ++frac_digits;
    } else if (c == '.') {
      if (seen_dot) return Bad(text, "more than one decimal point");
      seen_dot = true;
    } else {
      break;
    }
  }
  if (!seen_digit) return Bad(text, "no digits before the suffix");
  if (overflow) return Bad(text, "value is too large");

  // Suffix.
  std::string_view suffix = s.substr(pos);
  Format format = Format::kDecimalSI;
  int exp10 = 0;   // power of ten applied to the mantissa
  int exp1024 = 0; // power of 1024 applied to the mantissa
  if (suffix.empty()) {
  } else if (suffix == "m") {
    exp10 = -3;
  } else if (suffix == "u") {
    exp10 = -6;
  } else if (suffix == "n") {
    exp10 = -9;
  } else if (suffix == "k") {
    exp10 = 3;
  } else if (suffix == "M") {
    exp10 = 6;
  } else if (suffix == "G") {
    exp10 = 9;
  } else if (suffix == "T") {
    exp10 = 12;
  } else if (suffix == "P") {
    exp10 = 15;
  } else if (suffix == "E") {
    exp10 = 18;
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    format = Format::kBinarySI;
    switch (suffix[0]) {
      case 'K': exp1024 = 1; break;
      case 'M': exp1024 = 2; break;
      case 'G': exp1024 = 3; break;
      case 'T': exp1024 = 4; break;
      case 'P': exp1024 = 5; break;
      case 'E': exp1024 = 6; break;
      default: return Bad(text, "unknown suffix \"" + std::string(suffix) + "\"");
    }
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    format = Format::kDecimalExponent;
    std::string_view e = suffix.substr(1);
    bool eneg = false;
    if (!e.empty() && (e[0] == '+' || e[0] == '-')) {
      eneg = e[0] == '-';
      e.remove_prefix(1);
    }
    if (e.empty()) return Bad(text, "exponent has no digits");
    int v = 0;
    for (char c : e) {
      if (c < '0' || c > '9') return Bad(text, "exponent is not an integer");
      if (v > 1000) return Bad(text, "exponent is out of range");
      v = v * 10 + (c - '0');
    }
    exp10 = eneg ? -v : v;
  } else {
    return Bad(text, "unknown suffix \"" + std::string(suffix) + "\" (want one of n u m k M G T P E, "
                     "Ki Mi Gi Ti Pi Ei, or an exponent such as e3)");
  }

  // milli = mantissa * 10^(exp10 + 3 - frac_digits) * 1024^exp1024, rounded up.
  i128 v = mantissa;
  for (int i = 0; i < exp1024; ++i) {
    v *= 1024;
    if (v > kMax * 1000) return Bad(text, "value is too large");
  }
  int shift = exp10 + 3 - frac_digits;
  if (v == 0) {
    shift = 0;
  }
  while (shift > 0) {
    v *= 10;
    --shift;
    if (v > kMax) return Bad(text, "value is too large");
  }
  if (shift < 0) {
    i128 div = 1;
    bool tiny = false;
    for (int i = 0; i < -shift; ++i) {
      if (div > (i128{1} << 110)) {
        tiny = true;
        break;
      }
      div *= 10;
    }
    if (tiny) {
      v = v == 0 ? 0 : 1;  // any positive amount below a milli-unit rounds up to one
    } else {
      i128 q = v / div;
      if (v % div != 0 || lost) ++q;  // round up, as MilliValue() does
      v = q;
    }
  }
  if (v > kMax) return Bad(text, "value is too large");
  Quantity q;
  q.milli_ = static_cast<int64_t>(negative ? -v : v);
  q.format_ = format;
  return q;
}

std::string Quantity::ToString() const {
  if (milli_ % 1000 != 0) return std::to_string(milli_) + "m";
  const int64_t v = milli_ / 1000;
  if (v == 0) return "0";
  switch (format_) {
    case Format::kBinarySI: {
      if (v > -1024 && v < 1024) break;  // small values print as plain decimals
      static constexpr const char* kSuffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
      int64_t n = v;
      int e = 0;
      while (e < 6 && n % 1024 == 0) {
        n /= 1024;
        ++e;
      }
      return std::to_string(n) + kSuffix[e];
    }
    case Format::kDecimalExponent: {
      int64_t n = v;
      int e = 0;
      while (n % 1000 == 0) {
        n /= 1000;
        e += 3;
      }
      return e == 0 ? std::to_string(n) : std::to_string(n) + "e" + std::to_string(e);
    }
    case Format::kDecimalSI:
      break;
  }
  static constexpr const char* kSuffix[] = {"", "k", "M", "G", "T", "P", "E"};
  int64_t n = v;
  int e = 0;
  while (e < 6 && n % 1000 == 0) {
    n /= 1000;
    ++e;
  }
  return std::to_string(n) + kSuffix[e];
}

}  // namespace arbiter::model
