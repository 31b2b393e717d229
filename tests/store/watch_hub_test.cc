// The watch history's bounds: by count, by bytes and by age, so that large or frequent writes
// cannot grow the process without bound.
#include "arbiter/store/watch_hub.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace arbiter::store {
namespace {

Event Put(int64_t revision, size_t payload) {
  Event e;
  e.object = {"events", "default", "e", revision, {{"message", std::string(payload, 'x')}}};
  return e;
}

TEST(WatchHub, ManyUpdatesOfALargeObjectStayWithinTheByteBound) {
  WatchHubLimits limits;
  limits.max_bytes = 8 << 20;
  WatchHub hub(limits, 0);
  for (int64_t r = 1; r <= 400; ++r) hub.Publish(Put(r, 2500 * 1024));
  EXPECT_LE(hub.bytes(), size_t{8} << 20);
  EXPECT_LE(hub.size(), 4u);
  EXPECT_EQ(hub.horizon(), 400 - static_cast<int64_t>(hub.size()));
  // A watcher from before the kept history is told to list again.
  EXPECT_EQ(hub.WatchFrom("events", "", 10).status().code(), StatusCode::kGone);
  auto w = hub.WatchFrom("events", "", 399);
  ASSERT_TRUE(w.ok());
  auto next = (*w)->Next(std::chrono::milliseconds(0));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->size(), 1u);
}

TEST(WatchHub, EventsOlderThanTheAgeBoundAreDropped) {
  int64_t now = 0;
  WatchHubLimits limits;
  limits.max_age = std::chrono::minutes(5);
  limits.now_millis = [&] { return now; };
  WatchHub hub(limits, 0);
  hub.Publish(Put(1, 10));
  hub.Publish(Put(2, 10));
  now += 6 * 60 * 1000;
  hub.Publish(Put(3, 10));
  EXPECT_EQ(hub.size(), 1u);
  EXPECT_EQ(hub.horizon(), 2);
}

TEST(WatchHub, TheNewestEventStaysWhateverItsSize) {
  WatchHubLimits limits;
  limits.max_bytes = 1024;
  WatchHub hub(limits, 0);
  hub.Publish(Put(1, 1 << 20));
  EXPECT_EQ(hub.size(), 1u);
  EXPECT_EQ(ApproximateBytes(Json("abc")), 19u);
}

Event Version(EventType type, const std::string& name, int64_t revision, size_t payload) {
  Event e;
  e.type = type;
  e.object = {"pods", "default", name, revision,
              Json{{"metadata", {{"name", name}, {"resourceVersion", std::to_string(revision)}}},
               {"spec", {{"padding", std::string(payload, 'x')}, {"replicas", revision}, {"ratio", 0.25}}},
               {"status", {{"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}}};
  return e;
}

void PublishVersionsOfA(WatchHub& hub, int64_t from, int64_t to) {
  for (int64_t r = from; r <= to; ++r) hub.Publish(Version(EventType::kModified, "a", r, 100));
}

TEST(WatchHub, OldVersionsAreKeptAsTheirTextAndReadBackAsPublished) {
  int64_t now = 0;
  WatchHubLimits limits;
  limits.now_millis = [&] { return now; };
  WatchHub hub(limits, 0);
  std::vector<Event> published = {Version(EventType::kAdded, "a", 1, 4000), Version(EventType::kModified, "a", 2, 4000),
                                   Version(EventType::kAdded, "b", 3, 4000), Version(EventType::kDeleted, "a", 4, 4000)};
  for (const Event& e : published) hub.Publish(e);
  const size_t before = hub.bytes();
  // a@1 and a@2 were superseded, a@4 is a deletion; b@3 is b's newest version and stays a tree.
  now += 999;
  EXPECT_EQ(hub.CompactOld(), 0u) << "not before compact_after";
  now += 1;
  EXPECT_EQ(hub.CompactOld(), 3u);
  EXPECT_EQ(hub.compacted(), 3u);
  EXPECT_LT(hub.bytes(), before);
  EXPECT_EQ(hub.CompactOld(), 0u) << "each old version once";
  auto w = hub.WatchFrom("pods", "", 0);
  ASSERT_TRUE(w.ok());
  auto next = (*w)->Next(std::chrono::milliseconds(0));
  ASSERT_TRUE(next.ok());
  ASSERT_EQ(next->size(), published.size());
  for (size_t i = 0; i < published.size(); ++i) {
    const Event& got = *(*next)[i];
    EXPECT_EQ(got.type, published[i].type) << i;
    EXPECT_EQ(got.object.resource, published[i].object.resource) << i;
    EXPECT_EQ(got.object.ns, published[i].object.ns) << i;
    EXPECT_EQ(got.object.name, published[i].object.name) << i;
    EXPECT_EQ(got.object.revision, published[i].object.revision) << i;
    EXPECT_EQ(got.object.body, published[i].object.body) << i;
  }
}

TEST(WatchHub, AnOldVersionThatLeftTheHistoryIsNotCompacted) {
  int64_t now = 0;
  WatchHubLimits limits;
  limits.max_events = 2;
  limits.now_millis = [&] { return now; };
  WatchHub hub(limits, 0);
  PublishVersionsOfA(hub, 1, 4);
  now += 1000;
  // a@1 and a@2 are gone with the count bound; a@3 is old, a@4 the newest.
  EXPECT_EQ(hub.CompactOld(), 1u);
  EXPECT_EQ(hub.size(), 2u);
  // Compacted events leave the history as the others do.
  PublishVersionsOfA(hub, 5, 6);
  EXPECT_EQ(hub.compacted(), 0u);
  EXPECT_EQ(hub.horizon(), 4);
}

TEST(WatchHub, CompactionOffKeepsEveryVersionAsPublished) {
  int64_t now = 0;
  WatchHubLimits limits;
  limits.compact_after = std::chrono::milliseconds(0);
  limits.now_millis = [&] { return now; };
  WatchHub hub(limits, 0);
  PublishVersionsOfA(hub, 1, 3);
  now += 60000;
  EXPECT_EQ(hub.CompactOld(), 0u);
  EXPECT_EQ(hub.compacted(), 0u);
}

TEST(WatchHub, TheHubsOwnThreadCompactsOldVersionsOnTheRealClock) {
  WatchHubLimits limits;
  limits.compact_after = std::chrono::milliseconds(20);
  WatchHub hub(limits, 0);
  hub.Publish(Version(EventType::kAdded, "a", 1, 100));
  hub.Publish(Version(EventType::kModified, "a", 2, 100));
  for (int i = 0; i < 500 && hub.compacted() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(hub.compacted(), 1u);
}

}  // namespace
}  // namespace arbiter::store
