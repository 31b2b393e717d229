// The list items' encodings, made once per version and kept within a byte bound.
#include "arbiter/api/encoding_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace arbiter::api {
namespace {

store::Object Pod(const std::string& name, int64_t revision) {
  store::Object o;
  o.resource = "pods";
  o.ns = "default";
  o.name = name;
  o.revision = revision;
  return o;
}

TEST(EncodingCache, AVersionIsEncodedOnceWhileItIsKept) {
  EncodingCache cache(1 << 20);
  int encoded = 0;
  auto encode = [&](std::string& out) {
    ++encoded;
    out += "{\"metadata\":{\"name\":\"a\"}}";
  };
  auto first = cache.Get(Pod("a", 7), 0, encode);
  auto second = cache.Get(Pod("a", 7), 0, encode);
  EXPECT_EQ(encoded, 1);
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(*second, "{\"metadata\":{\"name\":\"a\"}}");
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

TEST(EncodingCache, ANewRevisionOrAnotherFormIsEncodedAfresh) {
  EncodingCache cache(1 << 20);
  int encoded = 0;
  auto encode = [&](std::string& out) { out += std::to_string(++encoded); };
  EXPECT_EQ(*cache.Get(Pod("a", 7), 0, encode), "1");
  EXPECT_EQ(*cache.Get(Pod("a", 8), 0, encode), "2");
  EXPECT_EQ(*cache.Get(Pod("a", 7), 1, encode), "3");
  EXPECT_EQ(*cache.Get(Pod("b", 7), 0, encode), "4");
  EXPECT_EQ(*cache.Get(Pod("a", 7), 0, encode), "1");
}

TEST(EncodingCache, TheLeastRecentlyUsedGoFirstBeyondTheBound) {
  // Each entry counts its text and a fixed overhead of a few hundred bytes: 10 KB holds a few
  // entries of 1 KB, not all twenty.
  EncodingCache cache(10 * 1024);
  int encoded = 0;
  auto encode = [&](std::string& out) {
    ++encoded;
    out.assign(1000, 'x');
  };
  for (int i = 0; i < 20; ++i) cache.Get(Pod("p" + std::to_string(i), 1), 0, encode);
  EXPECT_LE(cache.stats().bytes, 10u * 1024);
  EXPECT_LT(cache.stats().entries, 20u);
  const int before = encoded;
  cache.Get(Pod("p19", 1), 0, encode);  // the most recent is kept
  EXPECT_EQ(encoded, before);
  cache.Get(Pod("p0", 1), 0, encode);  // the oldest went
  EXPECT_EQ(encoded, before + 1);
}

TEST(EncodingCache, AnEncodingHandedOutOutlivesItsEviction) {
  EncodingCache cache(4096);
  auto kept = cache.Get(Pod("a", 1), 0, [](std::string& out) { out.assign(800, 'a'); });
  for (int i = 0; i < 50; ++i) cache.Get(Pod("p" + std::to_string(i), 1), 0, [](std::string& out) { out.assign(800, 'p'); });
  EXPECT_EQ(*kept, std::string(800, 'a'));
}

TEST(EncodingCache, ABoundOfZeroKeepsNothing) {
  EncodingCache cache(0);
  int encoded = 0;
  auto encode = [&](std::string& out) { out += std::to_string(++encoded); };
  cache.Get(Pod("a", 1), 0, encode);
  cache.Get(Pod("a", 1), 0, encode);
  EXPECT_EQ(encoded, 2);
  EXPECT_EQ(cache.stats().entries, 0u);
}

}  // namespace
}  // namespace arbiter::api
