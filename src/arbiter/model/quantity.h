// Kubernetes resource quantities ("500m", "1Gi", "1e3", "0.5") held exactly as integer
// milli-units. Parsing follows apimachinery's resource.Quantity: a signed decimal number and one
// suffix (binary Ki..Ei, decimal n u m k M G T P E, or an exponent e/E±N). Values finer than a
// milli-unit round up, as Quantity.MilliValue does; values beyond int64 milli-units are rejected.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "arbiter/base/status.h"

namespace arbiter::model {

class Quantity {
 public:
  // How the quantity was written; printing keeps the family, as Kubernetes canonicalises.
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;
  static Quantity FromMilli(int64_t milli, Format f = Format::kDecimalSI) {
    Quantity q;
    q.milli_ = milli;
    q.format_ = f;
    return q;
  }
  static Quantity FromValue(int64_t v, Format f = Format::kDecimalSI) { return FromMilli(v * 1000, f); }

  // Parses Kubernetes quantity syntax. Errors name the text and say what is wrong.
  static StatusOr<Quantity> Parse(std::string_view text);

  int64_t milli() const { return milli_; }
  // The integer value, rounded up (Quantity.Value()).
  int64_t value() const {
    return milli_ >= 0 ? (milli_ / 1000 + (milli_ % 1000 != 0 ? 1 : 0)) : milli_ / 1000;
  }
  Format format() const { return format_; }

  // Canonical text, as Kubernetes prints it: "500m", "2", "1Gi", "1500M", "1e3".
  std::string ToString() const;

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.milli_ == b.milli_; }

 private:
  int64_t milli_ = 0;
  Format format_ = Format::kDecimalSI;
};

}  // namespace arbiter::model
