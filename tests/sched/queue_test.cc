// The scheduling queue: activeQ order, backoff, the unschedulable pool and its events.
#include "arbiter/sched/queue/scheduling_queue.h"

#include <set>

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

TEST_F(QueueTest, PendingListsEveryWaitingPodByItsPoolInPopOrder) {
  queue_.Add(MakePod("low", 1));
  queue_.Add(MakePod("high", 100));
  queue_.Add(MakePod("failed", 50));
  auto failed = queue_.Pop();  // "high"
  ASSERT_TRUE(failed);
  failed->unschedulable_plugins = {"NodeResourcesFit"};
  queue_.AddUnschedulable(*failed);
  auto errored = queue_.Pop();  // "failed": an error, no rejecting plugin -> backoffQ
  ASSERT_TRUE(errored);
  queue_.AddUnschedulable(*errored);
  const auto pending = queue_.Pending();
  ASSERT_EQ(pending.size(), 3u);
  EXPECT_EQ(pending[0].info->pod->pod.name, "low");
  EXPECT_EQ(pending[0].pool, SchedulingQueue::Pool::kActive);
  EXPECT_EQ(pending[1].info->pod->pod.name, "failed");
  EXPECT_EQ(pending[1].pool, SchedulingQueue::Pool::kBackoff);
  EXPECT_EQ(pending[1].backoff_expiry, queue_.BackoffExpiry(*pending[1].info));
  EXPECT_EQ(pending[2].info->pod->pod.name, "high");
  EXPECT_EQ(pending[2].pool, SchedulingQueue::Pool::kUnschedulable);
  EXPECT_EQ(pending[2].info->attempts, 1);
}

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
  // After an error the pod waits its backoff out, even with activeQ empty (upstream's
  // entityErrorBackoffQ is not popped early).
  EXPECT_EQ(PopName(), "<empty>");
  clock_.Advance(kSecond);
  queue_.Flush();
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
  clock_.Advance(kSecond);  // its backoff
  queue_.Flush();
  EXPECT_EQ(PopName(), "b");  // a now has a later queue timestamp
  EXPECT_EQ(PopName(), "a");
}

TEST_F(QueueTest, AttemptsCountEveryPop) {
  queue_.Add(MakePod("p", 1));
  auto first = queue_.Pop();
  EXPECT_EQ(first->attempts, 1);
  queue_.AddUnschedulable(*first);
  clock_.Advance(kSecond);
  queue_.Flush();
  auto second = queue_.Pop();
  EXPECT_EQ(second->attempts, 2);
}

TEST_F(QueueTest, DeletedPodsLeaveTheQueue) {
  queue_.Add(MakePod("p", 1));
  queue_.Delete("default/p");
  EXPECT_FALSE(queue_.Contains("default/p"));
  EXPECT_EQ(PopName(), "<empty>");
}

// The pool is indexed by event: each event moves exactly the pods whose rejecting plugins care
// about it, and a pod that left the pool (deleted, moved) is in no index any more.
TEST_F(QueueTest, AnEventMovesEveryPodWaitingOnItAndNoOther) {
  auto park = [&](const std::string& name, std::set<std::string> plugins) {
    queue_.Add(MakePod(name, 1));
    auto info = queue_.Pop();
    ASSERT_TRUE(info);
    info->unschedulable_plugins = std::move(plugins);
    queue_.AddUnschedulable(*info);
  };
  park("fit", {"NodeResourcesFit"});
  park("affinity", {"NodeAffinity"});
  park("spread", {"PodTopologySpread"});
  park("gone", {"NodeResourcesFit"});
  ASSERT_EQ(queue_.unschedulable_size(), 4u);
  queue_.Delete("default/gone");
  EXPECT_EQ(queue_.unschedulable_size(), 3u);
  clock_.Advance(5 * kSecond);  // every backoff is over
  queue_.MoveOnEvent(ClusterEvent::kAssignedPodDelete);
  EXPECT_EQ(queue_.unschedulable_size(), 1u);
  EXPECT_EQ(queue_.active_size(), 2u);
  queue_.MoveOnEvent(ClusterEvent::kAssignedPodDelete);  // nothing left that cares
  EXPECT_EQ(queue_.unschedulable_size(), 1u);
  queue_.MoveOnEvent(ClusterEvent::kNodeUpdate);
  EXPECT_EQ(queue_.unschedulable_size(), 0u);
  std::set<std::string> popped;
  for (int i = 0; i < 3; ++i) popped.insert(PopName());
  EXPECT_EQ(popped, (std::set<std::string>{"fit", "affinity", "spread"}));
  EXPECT_EQ(PopName(), "<empty>");
}

TEST_F(QueueTest, TheLeftoverFlushTakesThePoolsOldestAndWakesForTheNext) {
  for (const char* name : {"first", "second"}) {
    queue_.Add(MakePod(name, 1));
    auto info = queue_.Pop();
    info->unschedulable_plugins = {"NodeAffinity"};
    queue_.AddUnschedulable(*info);
    clock_.Advance(kMinute);
  }
  const Timestamp second_due = clock_.Now() - kMinute + 5 * kMinute;
  EXPECT_EQ(queue_.NextWakeup(), second_due - kMinute);
  clock_.Advance(3 * kMinute);  // the first has waited 5 minutes, the second 4
  queue_.Flush();
  EXPECT_EQ(queue_.unschedulable_size(), 1u);
  EXPECT_EQ(PopName(), "first");
  EXPECT_EQ(queue_.NextWakeup(), second_due);
}

// A gang whose quorum is still missing is parked again by the very event that let it out: it
// waits for the next one instead of looping.
TEST_F(QueueTest, AGroupGatedAgainOnItsWayOutWaitsForTheNextEvent) {
  int opened = 0;
  queue_.set_group_gate([&](const QueuedPodInfo&) { return opened > 0; });
  queue_.AddGroupMember(MakePod("m1", 5), "g", 5);
  EXPECT_EQ(queue_.unschedulable_size(), 1u);  // gated on arrival
  queue_.MoveOnEvent(ClusterEvent::kPodGroupChange);
  EXPECT_EQ(queue_.unschedulable_size(), 1u);
  EXPECT_EQ(queue_.active_size(), 0u);
  opened = 1;
  queue_.MoveOnEvent(ClusterEvent::kPodGroupChange);
  EXPECT_EQ(queue_.unschedulable_size(), 0u);
  EXPECT_EQ(queue_.active_size(), 1u);
}

}  // namespace
}  // namespace arbiter::sched
