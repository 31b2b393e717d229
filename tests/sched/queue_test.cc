// The scheduling queue: activeQ order, backoff, the unschedulable pool and its events.
#include "arbiter/sched/queue/scheduling_queue.h"

#include <gtest/gtest.h>

#include "arbiter/sched/plugins/simple_plugins.h"

namespace arbiter::sched {
namespace {

class QueueTest : public ::testing::Test {
 protected:
  QueueTest()
      : clock_(1000 * kSecond),
        framework_({PluginEntry{std::make_shared<plugins::PrioritySort>(), 0}}),
        queue_(&framework_, &clock_, QueueOptions{}) {}

  PodInfoPtr MakePod(const std::string& name, int32_t priority) {
    model::Pod p;
    p.name = name;
    p.uid = "default/" + name;
    p.priority = priority;
    return state::MakePodInfo(std::move(p));
  }
  std::string PopName() {
    auto q = queue_.Pop();
    return q ? q->pod->pod.name : "<empty>";
  }

  VirtualClock clock_;
  Framework framework_;
  SchedulingQueue queue_;
};

TEST_F(QueueTest, PopsHigherPriorityFirst) {
  queue_.Add(MakePod("low", 1));
  queue_.Add(MakePod("high", 100));
  queue_.Add(MakePod("mid", 50));
  EXPECT_EQ(PopName(), "high");
  EXPECT_EQ(PopName(), "mid");
  EXPECT_EQ(PopName(), "low");
  EXPECT_EQ(PopName(), "<empty>");
}

TEST_F(QueueTest, EqualPriorityPopsEarlierQueueTimestampFirst) {
  queue_.Add(MakePod("later", 5), 2000 * kSecond);
  queue_.Add(MakePod("earlier", 5), 1000 * kSecond);
  EXPECT_EQ(PopName(), "earlier");
  EXPECT_EQ(PopName(), "later");
}

TEST_F(QueueTest, FullTiesPopInInsertionOrder) {
  for (const char* n : {"c", "a", "b"}) queue_.Add(MakePod(n, 5));
  EXPECT_EQ(PopName(), "c");
  EXPECT_EQ(PopName(), "a");
  EXPECT_EQ(PopName(), "b");
}

TEST_F(QueueTest, NeverPolicyPodsQueueByPriorityLikeAnyOther) {
  model::Pod p;
  p.name = "never";
  p.uid = "default/never";
  p.priority = 100;
  p.preemption_policy = model::PreemptionPolicy::kNever;
  queue_.Add(MakePod("low", 1));
  queue_.Add(state::MakePodInfo(p));
  EXPECT_EQ(PopName(), "never");
}

TEST_F(QueueTest, BackoffDoublesFromOneSecondUpToTenSeconds) {
  QueuedPodInfo info;
  info.timestamp = 0;
  std::vector<Duration> got;
  for (int attempts = 1; attempts <= 6; ++attempts) {
    info.attempts = attempts;
    got.push_back(queue_.BackoffExpiry(info));
  }
  EXPECT_EQ(got, (std::vector<Duration>{1 * kSecond, 2 * kSecond, 4 * kSecond, 8 * kSecond, 10 * kSecond,
                                        10 * kSecond}));
}

TEST_F(QueueTest, RejectedPodWaitsForAnEventItsPluginCaresAbout) {
  queue_.Add(MakePod("p", 1));
  auto info = queue_.Pop();
  ASSERT_TRUE(info);
  info->unschedulable_plugins = {"NodeResourcesFit"};
  queue_.AddUnschedulable(*info);
  EXPECT_EQ(queue_.unschedulable_size(), 1u);
  queue_.MoveOnEvent(ClusterEvent::kAssignedPodAdd);  // a bind frees no resources
  EXPECT_EQ(queue_.unschedulable_size(), 1u);
  clock_.Advance(5 * kSecond);
  queue_.MoveOnEvent(ClusterEvent::kAssignedPodDelete);
  EXPECT_EQ(queue_.unschedulable_size(), 0u);
  EXPECT_EQ(queue_.active_size(), 1u);  // its 1 s backoff is over
}

TEST_F(QueueTest, MovedPodStillBackingOffGoesToBackoffQAndIsPoppedWhenActiveIsEmpty) {
  queue_.Add(MakePod("p", 1));
  auto info = queue_.Pop();
  info->unschedulable_plugins = {"NodeResourcesFit"};
  queue_.AddUnschedulable(*info);
  queue_.MoveOnEvent(ClusterEvent::kNodeAdd);
  EXPECT_EQ(queue_.backoff_size(), 1u);
  EXPECT_EQ(queue_.NextWakeup(), clock_.Now() + kSecond);
  // activeQ is empty: Pop takes the backoffQ head before its backoff ends.
  EXPECT_EQ(PopName(), "p");
}

TEST_F(QueueTest, ActivePodsComeBeforeBackedOffOnes) {
  queue_.Add(MakePod("retry", 100));
  auto info = queue_.Pop();
  queue_.AddUnschedulable(*info);  // no rejecting plugin: an error, straight to backoffQ
  EXPECT_EQ(queue_.backoff_size(), 1u);
  queue_.Add(MakePod("fresh", 1));
  EXPECT_EQ(PopName(), "fresh");
  EXPECT_EQ(PopName(), "retry");
}

TEST_F(QueueTest, FlushMovesExpiredBackoffToActive) {
  queue_.Add(MakePod("p", 1));
  auto info = queue_.Pop();
  queue_.AddUnschedulable(*info);
  clock_.Advance(999 * kMillisecond);
  queue_.Flush();
  EXPECT_EQ(queue_.backoff_size(), 1u);
  clock_.Advance(1 * kMillisecond);
  queue_.Flush();
  EXPECT_EQ(queue_.active_size(), 1u);
}

TEST_F(QueueTest, UnschedulablePodsAreFlushedAfterFiveMinutes) {
  queue_.Add(MakePod("p", 1));
  auto info = queue_.Pop();
  info->unschedulable_plugins = {"NodeAffinity"};
  queue_.AddUnschedulable(*info);
  EXPECT_EQ(queue_.NextWakeup(), clock_.Now() + 5 * kMinute);
  clock_.Advance(5 * kMinute - kSecond);
  queue_.Flush();
  EXPECT_EQ(queue_.unschedulable_size(), 1u);
  clock_.Advance(kSecond);
  queue_.Flush();
  EXPECT_EQ(queue_.unschedulable_size(), 0u);
  EXPECT_EQ(PopName(), "p");
}

TEST_F(QueueTest, ReAddingAfterFailureRefreshesTheTimestamp) {
  queue_.Add(MakePod("a", 5));
  queue_.Add(MakePod("b", 5));
  auto a = queue_.Pop();
  clock_.Advance(10 * kSecond);
  queue_.AddUnschedulable(*a);
  queue_.Flush();
  EXPECT_EQ(PopName(), "b");  // a now has a later queue timestamp
  EXPECT_EQ(PopName(), "a");
}

TEST_F(QueueTest, AttemptsCountEveryPop) {
  queue_.Add(MakePod("p", 1));
  auto first = queue_.Pop();
  EXPECT_EQ(first->attempts, 1);
  queue_.AddUnschedulable(*first);
  auto second = queue_.Pop();
  EXPECT_EQ(second->attempts, 2);
}

TEST_F(QueueTest, DeletedPodsLeaveTheQueue) {
  queue_.Add(MakePod("p", 1));
  queue_.Delete("default/p");
  EXPECT_FALSE(queue_.Contains("default/p"));
  EXPECT_EQ(PopName(), "<empty>");
}

}  // namespace
}  // namespace arbiter::sched
