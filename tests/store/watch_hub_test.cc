// The watch history's bounds: by count, by bytes and by age, so that large or frequent writes
// cannot grow the process without bound.
#include "arbiter/store/watch_hub.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace arbiter::store
