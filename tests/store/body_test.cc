// store::Body: a version's text made once, its tree a cache over the text within a budget.
#include "arbiter/store/body.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace arbiter::store {
namespace {

using Json = nlohmann::json;

Json Pod(const std::string& name, int n) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"app", "web"}, {"n", std::to_string(n)}}}}},
          {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "nginx"}}})}}}};
}

// Restores the budget the process runs with, whatever a test set.
class BodyTest : public ::testing::Test {
 protected:
  void SetUp() override { SetBodyTreeMinAge(std::chrono::milliseconds(0)); }
  void TearDown() override {
    SetBodyTreeBudget(size_t{32} << 20);
    SetBodyTreeMinAge(std::chrono::milliseconds(250));
    KeepBodyTreesWrittenSince(std::chrono::steady_clock::time_point::max());
    SetBodyTextBudget(size_t{32} << 20);
  }
};

TEST_F(BodyTest, ABodyMadeFromATreeKeepsItAndMakesItsTextOnce) {
  const Body b(Pod("a", 1));
  const Body::Tree t = b.tree();
  EXPECT_EQ(b.tree().get(), t.get());  // the same tree, not a copy
  EXPECT_FALSE(b.has_text());
  EXPECT_EQ(b.text_size(), 0u);
  const std::shared_ptr<const std::string> text = b.shared_text();
  EXPECT_EQ(*text, Pod("a", 1).dump());
  EXPECT_EQ(b.shared_text().get(), text.get());  // made once
  EXPECT_TRUE(b.has_text());
  EXPECT_EQ(b.text_size(), text->size());
}

TEST_F(BodyTest, CopiesShareTheVersionAndCopyGivesATreeOfOnesOwn) {
  const Body a(Pod("a", 1));
  const Body b = a;  // NOLINT(performance-unnecessary-copy-initialization): the point
  EXPECT_EQ(a.tree().get(), b.tree().get());
  Json mine = b.Copy();
  mine["metadata"]["name"] = "changed";
  EXPECT_EQ((*a.tree())["metadata"]["name"], "a");
  EXPECT_TRUE(a == b);
  EXPECT_TRUE(a == Pod("a", 1));
  EXPECT_FALSE(a == Body(Pod("b", 1)));
}

TEST_F(BodyTest, ADefaultBodyIsJsonNull) {
  const Body b;
  EXPECT_TRUE(b.is_null());
  EXPECT_TRUE(b.tree()->is_null());
  EXPECT_EQ(*b.shared_text(), "null");
  EXPECT_FALSE(Body(Json::object()).is_null());
}

TEST_F(BodyTest, ABodyReadFromTextParsesItsTreeWhenRead) {
  const Body b = Body::FromText(Pod("a", 1).dump());
  EXPECT_TRUE(b.has_text());
  EXPECT_EQ(*b.tree(), Pod("a", 1));
  EXPECT_EQ(b->value("kind", ""), "Pod");  // pinned for the expression
}

TEST_F(BodyTest, TreesBeyondTheBudgetAreDroppedAndParsedAgainEqual) {
  SetBodyTreeBudget(0);
  const BodyCacheStats before = GetBodyCacheStats();
  std::vector<Body> bodies;
  for (int i = 0; i < 50; ++i) bodies.push_back(Body::FromText(Pod("p" + std::to_string(i), i).dump()));
  for (const Body& b : bodies) (void)b.tree();  // each parsed, then dropped when the next is admitted
  const BodyCacheStats after = GetBodyCacheStats();
  EXPECT_EQ(after.parsed - before.parsed, 50u);
  EXPECT_GE(after.dropped - before.dropped, 48u);  // the clock spares a tree read since it last passed, once
  EXPECT_LE(after.trees, 2u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(*bodies[i].tree(), Pod("p" + std::to_string(i), i));
}

TEST_F(BodyTest, APinnedTreeIsNeverDropped) {
  SetBodyTreeBudget(0);
  const Body pinned_body = Body::FromText(Pod("kept", 0).dump());
  const Body::Tree pin = pinned_body.tree();
  const Json* where = pin.get();
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 20; ++i) (void)Body::FromText(Pod("other", i).dump()).tree();
  }
  EXPECT_EQ(pinned_body.tree().get(), where);  // still the cached tree: it was pinned throughout
  EXPECT_EQ((*pin)["metadata"]["name"], "kept");
}

TEST_F(BodyTest, ABodyMadeFromATreeBecomesDroppableOnceItHasText) {
  SetBodyTreeBudget(0);
  const Body b(Pod("w", 1));
  (void)b.shared_text();
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 20; ++i) (void)Body::FromText(Pod("other", i).dump()).tree();
  }
  const uint64_t parsed = GetBodyCacheStats().parsed;
  EXPECT_EQ(*b.tree(), Pod("w", 1));
  EXPECT_EQ(GetBodyCacheStats().parsed, parsed + 1);  // dropped, so read again from the text
}

TEST_F(BodyTest, AVersionJustWrittenKeepsItsTreeBeyondTheBudgetUntilItIsOld) {
  SetBodyTreeBudget(0);
  SetBodyTreeMinAge(std::chrono::hours(1));
  std::vector<Body> written;
  for (int i = 0; i < 20; ++i) {
    written.emplace_back(Pod("written", i));
    (void)written.back().shared_text();  // as the store writes it
  }
  for (int i = 0; i < 20; ++i) (void)Body::FromText(Pod("read", i).dump()).tree();  // admissions that sweep
  const uint64_t parsed = GetBodyCacheStats().parsed;
  for (const Body& b : written) (void)b.tree();
  EXPECT_EQ(GetBodyCacheStats().parsed, parsed);  // every written tree is still there
  SetBodyTreeMinAge(std::chrono::milliseconds(0));
  TrimBodyTrees();  // old now: two turns of the hand drop them
  TrimBodyTrees();
  for (const Body& b : written) (void)b.tree();
  EXPECT_EQ(GetBodyCacheStats().parsed, parsed + written.size());
}

TEST_F(BodyTest, AVersionWrittenSinceTheReadersMarkKeepsItsTreeUntilTheNextMark) {
  SetBodyTreeBudget(0);
  KeepBodyTreesWrittenSince(std::chrono::steady_clock::now());
  std::vector<Body> written;
  for (int i = 0; i < 20; ++i) {
    written.emplace_back(Pod("written", i));
    (void)written.back().shared_text();  // as the store writes it
  }
  TrimBodyTrees();
  TrimBodyTrees();
  const uint64_t parsed = GetBodyCacheStats().parsed;
  for (const Body& b : written) (void)b.tree();
  EXPECT_EQ(GetBodyCacheStats().parsed, parsed);  // past the minimum age (0), kept for the reader
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  KeepBodyTreesWrittenSince(std::chrono::steady_clock::now());  // the reader has taken them
  TrimBodyTrees();  // two turns of the hand drop them
  TrimBodyTrees();
  for (const Body& b : written) (void)b.tree();
  EXPECT_EQ(GetBodyCacheStats().parsed, parsed + written.size());
}

TEST_F(BodyTest, AColdTextIsCompressedOnceAndReadsBackTheSame) {
  SetBodyTextBudget(0, std::chrono::milliseconds(0));  // every text cold at once
  const BodyCacheStats before = GetBodyCacheStats();
  const std::string text = Pod("cold", 7).dump();
  const Body b = Body::FromText(text);
  const BodyCacheStats packed = GetBodyCacheStats();
  EXPECT_EQ(packed.packed, before.packed + 1);
  EXPECT_EQ(packed.packed_bytes_in - before.packed_bytes_in, text.size());
  EXPECT_LT(packed.packed_bytes_out - before.packed_bytes_out, text.size());
  EXPECT_TRUE(b.has_text());
  EXPECT_EQ(b.text_size(), text.size());  // what it counts for, compressed or not
  EXPECT_EQ(*b.tree(), Pod("cold", 7));   // parsed from the compressed text
  EXPECT_EQ(*b.shared_text(), text);      // decompressed for its reader
  // It stays compressed: reading it made nothing plain to compress again.
  TrimBodyTrees();
  TrimBodyTrees();
  EXPECT_EQ(GetBodyCacheStats().packed, packed.packed);
  EXPECT_EQ(GetBodyCacheStats().hot_text_bytes, packed.hot_text_bytes);
  EXPECT_EQ(*b.shared_text(), text);
}

TEST_F(BodyTest, ATextIsNotCompressedWhileItIsYoung) {
  SetBodyTextBudget(0, std::chrono::hours(1));
  const uint64_t packed = GetBodyCacheStats().packed;
  std::vector<Body> bodies;
  for (int i = 0; i < 10; ++i) bodies.push_back(Body::FromText(Pod("young", i).dump()));
  TrimBodyTrees();
  EXPECT_EQ(GetBodyCacheStats().packed, packed);
  SetBodyTextBudget(0, std::chrono::milliseconds(0));  // old now: compressed by the trim
  EXPECT_EQ(GetBodyCacheStats().packed, packed + bodies.size());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(*bodies[i].shared_text(), Pod("young", i).dump());
}

TEST_F(BodyTest, ATreeParsedForAReaderIsNotProtected) {
  SetBodyTreeBudget(0);
  SetBodyTreeMinAge(std::chrono::hours(1));
  const uint64_t dropped = GetBodyCacheStats().dropped;
  std::vector<Body> read;
  for (int i = 0; i < 20; ++i) read.push_back(Body::FromText(Pod("read", i).dump()));
  for (const Body& b : read) (void)b.tree();
  for (const Body& b : read) (void)b.tree();  // marked again: spared once more
  TrimBodyTrees();
  TrimBodyTrees();
  EXPECT_GE(GetBodyCacheStats().dropped - dropped, 20u);
}

TEST_F(BodyTest, ManyThreadsReadSharedBodiesWhileTheCacheDropsTrees) {
  SetBodyTreeBudget(4096);
  std::vector<Body> bodies;
  for (int i = 0; i < 64; ++i) bodies.push_back(Body::FromText(Pod("p" + std::to_string(i), i).dump()));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        const size_t i = static_cast<size_t>((round * 7 + t * 13) % 64);
        const Body::Tree tree = bodies[i].tree();
        if ((*tree)["metadata"]["labels"]["n"] != std::to_string(i)) ++wrong;
        if (bodies[i].shared_text()->empty()) ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace arbiter::store
