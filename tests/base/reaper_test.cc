#include "arbiter/base/reaper.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace arbiter {
namespace {

// An object whose release records the thread that released it.
struct Tracker {
  std::mutex mu;
  std::vector<std::thread::id> released_on;
  std::shared_ptr<const void> Make() {
    return std::shared_ptr<const int>(new int(0), [this](const int* p) {
      delete p;
      std::lock_guard<std::mutex> lk(mu);
      released_on.push_back(std::this_thread::get_id());
    });
  }
  size_t count() {
    std::lock_guard<std::mutex> lk(mu);
    return released_on.size();
  }
};

TEST(Reaper, ReleasesObjectsOnItsOwnThreadNotTheCallers) {
  Tracker t;
  Reaper reaper(/*batch=*/2);
  std::vector<std::shared_ptr<const void>> items = {t.Make(), t.Make(), t.Make()};
  reaper.Release(items);
  EXPECT_TRUE(items.empty());
  reaper.Flush();
  ASSERT_EQ(t.count(), 3u);
  for (const auto& id : t.released_on) EXPECT_NE(id, std::this_thread::get_id());
}

TEST(Reaper, AnObjectStillReferencedElsewhereIsNotReleased) {
  Tracker t;
  Reaper reaper;
  std::shared_ptr<const void> kept = t.Make();
  std::vector<std::shared_ptr<const void>> items = {kept};
  reaper.Release(items);
  reaper.Flush();
  EXPECT_EQ(t.count(), 0u);
  kept.reset();
  EXPECT_EQ(t.count(), 1u);
}

TEST(Reaper, FewerThanABatchAreReleasedAfterTheLingerTime) {
  Tracker t;
  Reaper reaper(/*batch=*/1000, std::chrono::milliseconds(10));
  std::vector<std::shared_ptr<const void>> items = {t.Make()};
  reaper.Release(items);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (t.count() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(t.count(), 1u);
}

TEST(Reaper, ItsDestructorReleasesEverythingStillHeld) {
  Tracker t;
  {
    Reaper reaper(/*batch=*/1000, std::chrono::hours(1));
    std::vector<std::shared_ptr<const void>> items = {t.Make(), t.Make(), t.Make()};
    reaper.Release(items);
  }
  EXPECT_EQ(t.count(), 3u);
}

TEST(Reaper, ManyThreadsHandingOverAtOnceLoseNothing) {
  Tracker t;
  {
    Reaper reaper(/*batch=*/16);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&] {
        for (int k = 0; k < 500; ++k) {
          std::vector<std::shared_ptr<const void>> items = {t.Make(), t.Make()};
          reaper.Release(items);
        }
      });
    }
    for (auto& th : threads) th.join();
    reaper.Flush();
    EXPECT_EQ(t.count(), 4000u);
  }
}

}  // namespace
}  // namespace arbiter
