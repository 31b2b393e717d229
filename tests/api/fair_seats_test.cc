// The fair seats of collection reads: clients take turns, and only overflowing queues refuse.
#include "arbiter/api/fair_seats.h"

#include <gtest/gtest.h>

#include <chrono>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <stdexcept>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace arbiter::api {
namespace {

using namespace std::chrono_literals;

// A gate the first task waits at, so that the others queue behind it.
class Gate {
 public:
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

void WaitUntil(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(done());
}

TEST(FairSeats, AClientWithOneRequestWaitsBehindAtMostOneMoreOfABusyClientsNotAllOfThem) {
  FairSeats::Options options;
  options.seats = 1;
  FairSeats seats(options);
  Gate gate;
  std::mutex mu;
  std::vector<std::string> order;
  auto record = [&](std::string what) {
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(std::move(what));
  };
  ASSERT_TRUE(seats.Submit("busy", [&] {
    gate.Wait();
    record("busy-0");
  }));
  WaitUntil([&] { return seats.running() == 1; });
  for (int i = 1; i <= 8; ++i) ASSERT_TRUE(seats.Submit("busy", [&, i] { record("busy-" + std::to_string(i)); }));
  ASSERT_TRUE(seats.Submit("quiet", [&] { record("quiet"); }));
  EXPECT_EQ(seats.queued(), 9u);
  gate.Open();
  WaitUntil([&] {
    std::lock_guard<std::mutex> lock(mu);
    return order.size() == 10;
  });
  // busy-0 was running; busy-1 had its turn before quiet came; then quiet.
  EXPECT_EQ(order[0], "busy-0");
  EXPECT_EQ(order[1], "busy-1");
  EXPECT_EQ(order[2], "quiet");
  EXPECT_EQ(order[9], "busy-8");
}

TEST(FairSeats, OnlyAFullQueueRefusesAndEveryAcceptedTaskRuns) {
  FairSeats::Options options;
  options.seats = 2;
  options.queue_per_client = 3;
  options.queued_total = 5;
  FairSeats seats(options);
  Gate gate;
  std::atomic<int> ran{0};
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(seats.Submit("a", [&] {
      gate.Wait();
      ++ran;
    }));
  }
  WaitUntil([&] { return seats.running() == 2; });
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(seats.Submit("a", [&] { ++ran; }));
  EXPECT_FALSE(seats.Submit("a", [&] { ++ran; })) << "a's queue holds 3";
  EXPECT_TRUE(seats.Submit("b", [&] { ++ran; }));
  EXPECT_TRUE(seats.Submit("c", [&] { ++ran; }));
  EXPECT_FALSE(seats.Submit("d", [&] { ++ran; })) << "5 wait in all";
  EXPECT_EQ(seats.refused(), 2u);
  gate.Open();
  WaitUntil([&] { return ran.load() == 7; });
}

TEST(FairSeats, ATaskThatThrowsLeavesItsSeatForTheNext) {
  FairSeats::Options options;
  options.seats = 1;
  FairSeats seats(options);
  std::atomic<bool> ran{false};
  ASSERT_TRUE(seats.Submit("a", [] { throw std::runtime_error("boom"); }));
  ASSERT_TRUE(seats.Submit("a", [&] { ran = true; }));
  WaitUntil([&] { return ran.load(); });
}

}  // namespace
}  // namespace arbiter::api
