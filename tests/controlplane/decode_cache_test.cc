// The control loop's cache of decoded objects: what it keeps and what it decodes for one reader.
#include "arbiter/controlplane/decode_cache.h"

#include <gtest/gtest.h>

namespace arbiter::controlplane {
namespace {

using Json = nlohmann::json;

store::Object PodAt(int64_t revision, const std::string& node) {
  Json body = {{"apiVersion", "v1"},
               {"kind", "Pod"},
               {"metadata", {{"name", "web"}, {"namespace", "default"}, {"uid", "u1"}}},
               {"spec", {{"nodeName", node}, {"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}}};
  return {"pods", "default", "web", revision, store::Body(std::move(body))};
}

TEST(DecodeCache, DecodeKeepsNothingButReturnsTheKeptFormOfTheSameRevision) {
  DecodeCache cache;
  // Not kept: each call decodes the version it is given.
  const store::Object first = PodAt(5, "n1");
  const manifest::LoadResult& a = cache.Decode(first);
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a.objects.pods.size(), 1u);
  EXPECT_EQ(a.objects.pods[0].object.node_name, "n1");
  const store::Object second = PodAt(6, "n2");
  EXPECT_EQ(cache.Decode(second).objects.pods[0].object.node_name, "n2");

  // Kept by Get: Decode of that revision returns the kept form itself, and of another revision a
  // form of its own, leaving the kept one as it was.
  const manifest::LoadResult& kept = cache.Get(first);
  EXPECT_EQ(&cache.Decode(first), &kept);
  const manifest::LoadResult& other = cache.Decode(second);
  EXPECT_NE(&other, &kept);
  EXPECT_EQ(other.objects.pods[0].object.node_name, "n2");
  EXPECT_EQ(kept.objects.pods[0].object.node_name, "n1");
}

}  // namespace
}  // namespace arbiter::controlplane
