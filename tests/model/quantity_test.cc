// Quantity parsing and printing, as apimachinery's resource.Quantity behaves.
#include "arbiter/model/quantity.h"

#include <gtest/gtest.h>

namespace arbiter::model {
namespace {

int64_t Milli(const char* s) {
  auto q = Quantity::Parse(s);
  EXPECT_TRUE(q.ok()) << s << ": " << q.status().message();
  return q.ok() ? q->milli() : -1;
}

TEST(Quantity, ParsesMilliUnits) { EXPECT_EQ(Milli("500m"), 500); }
TEST(Quantity, ParsesPlainIntegers) { EXPECT_EQ(Milli("2"), 2000); }
TEST(Quantity, ParsesDecimalFractions) { EXPECT_EQ(Milli("0.5"), 500); }
TEST(Quantity, ParsesLeadingDotAndSign) {
  EXPECT_EQ(Milli(".5"), 500);
  EXPECT_EQ(Milli("+1"), 1000);
  EXPECT_EQ(Milli("-1"), -1000);
}
TEST(Quantity, ParsesBinarySuffixes) {
  EXPECT_EQ(Milli("1Ki"), 1024 * 1000);
  EXPECT_EQ(Milli("1Gi"), (int64_t{1} << 30) * 1000);
  EXPECT_EQ(Milli("1.5Gi"), (int64_t{3} << 29) * 1000);
}
TEST(Quantity, ParsesDecimalSuffixes) {
  EXPECT_EQ(Milli("1k"), 1000 * 1000);
  EXPECT_EQ(Milli("2M"), 2'000'000'000);
  EXPECT_EQ(Milli("1G"), int64_t{1'000'000'000} * 1000);
}
TEST(Quantity, ParsesExponents) {
  EXPECT_EQ(Milli("1e3"), 1'000'000);
  EXPECT_EQ(Milli("1E3"), 1'000'000);
  EXPECT_EQ(Milli("5e-3"), 5);
  EXPECT_EQ(Milli("1e+2"), 100'000);
}
TEST(Quantity, RoundsSubMilliValuesUp) {
  EXPECT_EQ(Milli("1u"), 1);
  EXPECT_EQ(Milli("1n"), 1);
  EXPECT_EQ(Milli("0.0001"), 1);
  EXPECT_EQ(Milli("1500u"), 2);
}
TEST(Quantity, ValueRoundsUpToWholeUnits) {
  EXPECT_EQ(Quantity::Parse("1500m")->value(), 2);
  EXPECT_EQ(Quantity::Parse("2")->value(), 2);
}
TEST(Quantity, ZeroIsZeroWhateverTheSuffix) {
  EXPECT_EQ(Milli("0"), 0);
  EXPECT_EQ(Milli("0Gi"), 0);
  EXPECT_EQ(Milli("0e100"), 0);
}

TEST(Quantity, RejectsMalformedText) {
  for (const char* bad : {"", "abc", "1.2.3", "5Zi", "1 Gi", "Gi", "1e", "1e+", "--1", "1ee3", ".", "1Mi5", "0x10",
                          "1e3.5", "m", "+"}) {
    auto q = Quantity::Parse(bad);
    EXPECT_FALSE(q.ok()) << "accepted \"" << bad << "\"";
    if (!q.ok()) {
      EXPECT_NE(q.status().message().find("invalid quantity"), std::string::npos);
    }
  }
}

TEST(Quantity, RejectsValuesBeyondInt64MilliUnits) {
  for (const char* big : {"99999999999999999999", "10Ei", "9223372036854775807", "1e30",
                          "123456789012345678901234567890123456789012345678901234567890"}) {
    auto q = Quantity::Parse(big);
    EXPECT_FALSE(q.ok()) << "accepted \"" << big << "\"";
    if (!q.ok()) {
      EXPECT_NE(q.status().message().find("too large"), std::string::npos) << big;
    }
  }
  // The largest representable amount still parses.
  EXPECT_TRUE(Quantity::Parse("9223372036854775807m").ok());
}

TEST(Quantity, RejectsHugeExponents) {
  EXPECT_FALSE(Quantity::Parse("1e99999").ok());
}

TEST(Quantity, PrintsCanonically) {
  auto str = [](const char* s) { return Quantity::Parse(s)->ToString(); };
  EXPECT_EQ(str("500m"), "500m");
  EXPECT_EQ(str("0.5"), "500m");
  EXPECT_EQ(str("2"), "2");
  EXPECT_EQ(str("2000"), "2k");
  EXPECT_EQ(str("1Gi"), "1Gi");
  EXPECT_EQ(str("1024Mi"), "1Gi");
  EXPECT_EQ(str("1536Mi"), "1536Mi");
  EXPECT_EQ(str("1e3"), "1e3");
  EXPECT_EQ(str("1500M"), "1500M");
  EXPECT_EQ(str("100Ki"), "100Ki");
  EXPECT_EQ(str("0"), "0");
}

TEST(Quantity, SmallBinaryValuesPrintAsDecimals) {
  EXPECT_EQ(Quantity::Parse("0.5Ki")->ToString(), "512");
}

TEST(Quantity, RoundTripsThroughItsOwnText) {
  for (const char* s : {"500m", "1Gi", "1e3", "2k", "7", "1536Mi", "3500m", "12e6"}) {
    auto q = Quantity::Parse(s);
    ASSERT_TRUE(q.ok());
    auto again = Quantity::Parse(q->ToString());
    ASSERT_TRUE(again.ok()) << q->ToString();
    EXPECT_EQ(again->milli(), q->milli()) << s;
  }
}

}  // namespace
}  // namespace arbiter::model
