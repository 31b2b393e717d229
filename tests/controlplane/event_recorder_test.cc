// The control loop's event recorder on a memory store and a virtual clock: client-go's
// correlation (a repeat counts up on one event), its bounded memory, and the events' TTL.
#include "arbiter/controlplane/event_recorder.h"

#include <gtest/gtest.h>

namespace arbiter::controlplane {
namespace {

using Json = nlohmann::json;
constexpr Timestamp kT0EventRecorder = 1'800'000'000LL * kSecond;

struct Recorder {
  std::unique_ptr<store::Store> store = store::NewMemoryStore();
  VirtualClock clock{kT0EventRecorder};
  EventRecorder events{*store, clock};

  void Flush() {
    Status st = events.Flush();
    ASSERT_TRUE(st.ok()) << st.message();
  }
  std::vector<Json> List() {
    std::vector<Json> out;
    auto list = store->List("events", "");
    EXPECT_TRUE(list.ok());
    if (list.ok()) {
      for (const auto& e : list->items) out.push_back(e.body.Copy());
    }
    return out;
  }
};

PodEvent Failed(const std::string& pod, const std::string& message) {
  return {"default", pod, "uid-" + pod, "Warning", "FailedScheduling", message, "default-scheduler", ""};
}

TEST(EventRecorder, AnEventIsWrittenAsClientGoWritesIt) {
  Recorder r;
  r.events.Record({"default", "p", "uid-p", "Normal", "Killing", "Stopping container c", "kubelet", "n1"});
  r.Flush();
  const auto events = r.List();
  ASSERT_EQ(events.size(), 1u);
  const Json& e = events[0];
  EXPECT_EQ(e["involvedObject"], (Json{{"kind", "Pod"}, {"namespace", "default"}, {"name", "p"}, {"uid", "uid-p"},
                                       {"apiVersion", "v1"}}));
  EXPECT_EQ(e["source"], (Json{{"component", "kubelet"}, {"host", "n1"}}));
  EXPECT_EQ(e["reportingComponent"], "kubelet");
  EXPECT_EQ(e["count"], 1);
  EXPECT_EQ(e["firstTimestamp"], FormatRfc3339(kT0EventRecorder));
  EXPECT_EQ(e["lastTimestamp"], FormatRfc3339(kT0EventRecorder));
  EXPECT_EQ(e["metadata"]["name"].get<std::string>().rfind("p.", 0), 0u);
}

TEST(EventRecorder, ARepeatCountsUpOnOneEventWhetherItsCreationIsQueuedOrWritten) {
  Recorder r;
  r.events.Record(Failed("p", "0/1 nodes are available"));
  r.clock.Advance(kSecond);
  r.events.Record(Failed("p", "0/1 nodes are available"));  // merges into the queued creation
  r.Flush();  // both written in one batch
  ASSERT_EQ(r.List().size(), 1u);
  EXPECT_EQ(r.List()[0]["count"], 2);
  r.clock.Advance(kSecond);
  r.events.Record(Failed("p", "0/1 nodes are available"));  // an update of the written event
  r.Flush();
  const auto events = r.List();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["count"], 3);
  EXPECT_EQ(events[0]["firstTimestamp"], FormatRfc3339(kT0EventRecorder));
  EXPECT_EQ(events[0]["lastTimestamp"], FormatRfc3339(kT0EventRecorder + 2 * kSecond));
}

TEST(EventRecorder, AnyDifferenceMakesAnotherEvent) {
  Recorder r;
  r.events.Record(Failed("p", "one"));
  r.events.Record(Failed("p", "two"));
  r.events.Record(Failed("q", "one"));
  PodEvent other_source = Failed("p", "one");
  other_source.component = "kubelet";
  r.events.Record(other_source);
  r.Flush();
  EXPECT_EQ(r.List().size(), 4u);
}

TEST(EventRecorder, ARepeatOfAnEventDeletedMeanwhileStartsAfresh) {
  Recorder r;
  r.events.Record(Failed("p", "m"));
  r.Flush();
  const std::string name = r.List()[0]["metadata"]["name"];
  ASSERT_TRUE(r.store->Delete("events", "default", name, 0).ok());
  r.events.Record(Failed("p", "m"));  // its update is refused (gone): forgotten
  r.Flush();
  EXPECT_TRUE(r.List().empty());
  r.clock.Advance(kSecond);
  r.events.Record(Failed("p", "m"));
  r.Flush();
  ASSERT_EQ(r.List().size(), 1u);
  EXPECT_EQ(r.List()[0]["count"], 1);
}

TEST(EventRecorder, RemembersTheMostRecentEventsOnly) {
  Recorder r;
  for (size_t i = 0; i < EventRecorder::kCorrelated + 10; ++i) r.events.Record(Failed("p" + std::to_string(i), "m"));
  r.Flush();
  EXPECT_EQ(r.events.remembered(), EventRecorder::kCorrelated);
  // The oldest was forgotten: its repeat is a new event.
  r.events.Record(Failed("p0", "m"));
  r.Flush();
  EXPECT_EQ(r.List().size(), EventRecorder::kCorrelated + 11);
}

// Written on the recorder's thread: Flush waits for them; a write's time is when it was recorded.
TEST(EventRecorder, InTheBackgroundEventsAreWrittenOnTheRecordersThreadAndFlushWaitsForThem) {
  auto store = store::NewMemoryStore();
  VirtualClock clock(kT0EventRecorder);
  EventRecorder events(*store, clock, 60 * kMinute, /*background=*/true);
  for (int i = 0; i < 500; ++i) {
    events.Record(Failed("p" + std::to_string(i % 50), "m"));
    if (i == 0) clock.Advance(kSecond);
  }
  ASSERT_TRUE(events.Flush().ok());
  auto list = store->List("events", "default");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 50u);
  int64_t total = 0;
  for (const auto& e : list->items) total += e.body.Copy()["count"].get<int64_t>();
  EXPECT_EQ(total, 500);
  for (const auto& e : list->items) {
    if ((*e.body.tree())["involvedObject"]["name"] == "p0") {
      EXPECT_EQ((*e.body.tree())["firstTimestamp"], FormatRfc3339(kT0EventRecorder));
    }
  }
  EXPECT_EQ(events.dropped(), 0u);
}

TEST(EventRecorder, EventsExpireAnHourAfterTheyLastHappened) {
  Recorder r;
  auto event = [&](const std::string& name, Timestamp last) {
    Json e = {{"apiVersion", "v1"}, {"kind", "Event"}, {"metadata", {{"name", name}, {"namespace", "default"},
              {"creationTimestamp", FormatRfc3339(kT0EventRecorder - 2 * 60 * kMinute)}}},
              {"lastTimestamp", FormatRfc3339(last)}, {"eventTime", nullptr}};
    ASSERT_TRUE(r.store->Create("events", "default", name, e).ok());
  };
  event("old", kT0EventRecorder - 61 * kMinute);
  event("recent", kT0EventRecorder - 10 * kMinute);
  ASSERT_TRUE(r.events.ExpireOld().ok());
  EXPECT_FALSE(r.store->Get("events", "default", "old").ok());
  EXPECT_TRUE(r.store->Get("events", "default", "recent").ok());
  // The sweep runs at most once a minute: "recent" is due 20 s after the second sweep, and
  // goes with the third.
  r.clock.Advance(49 * kMinute + 50 * kSecond);
  ASSERT_TRUE(r.events.ExpireOld().ok());
  EXPECT_TRUE(r.store->Get("events", "default", "recent").ok());
  r.clock.Advance(20 * kSecond);
  ASSERT_TRUE(r.events.ExpireOld().ok());
  EXPECT_TRUE(r.store->Get("events", "default", "recent").ok());
  r.clock.Advance(50 * kSecond);
  ASSERT_TRUE(r.events.ExpireOld().ok());
  EXPECT_FALSE(r.store->Get("events", "default", "recent").ok());
}

}  // namespace
}  // namespace arbiter::controlplane
