// The control loop's write batch on a memory store: one Apply per flush, each write on its own
// precondition, writes to one object merged, completions in order.
#include "arbiter/controlplane/write_batch.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/forwarding_store.h"

namespace arbiter::controlplane {
namespace {

using Json = nlohmann::json;

std::string Code(StatusCode c) {
  switch (c) {
    case StatusCode::kConflict: return "Conflict";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kAlreadyExists: return "AlreadyExists";
    default: return "code " + std::to_string(static_cast<int>(c));
  }
}

class WriteBatchTest : public ::testing::Test {
 protected:
  store::Object MustCreate(const std::string& name, int v) {
    auto o = store_->Create("pods", "a", name, Json{{"v", v}});
    EXPECT_TRUE(o.ok()) << o.status().message();
    return o.ok() ? *o : store::Object{};
  }
  // A completion that logs "NAME: ok REVISION" or "NAME: CODE".
  WriteBatch::Done Log(const std::string& name) {
    return [this, name](const StatusOr<store::ObjectPtr>& r) {
      log_.push_back(name + ": " + (r.ok() ? "ok " + std::to_string((*r)->revision) : Code(r.status().code())));
      return Status::Ok();
    };
  }

  std::unique_ptr<store::Store> store_ = store::NewMemoryStore();
  WriteBatch batch_{*store_};
  std::vector<std::string> log_;
};

TEST_F(WriteBatchTest, NothingIsWrittenUntilTheFlushAndThenEachWriteOnItsOwnPrecondition) {
  store::Object x = MustCreate("x", 1);  // 1
  store::Object y = MustCreate("y", 1);  // 2
  ASSERT_TRUE(store_->Update("pods", "a", "y", Json{{"v", 2}}, y.revision).ok());  // 3: y moved on
  batch_.Update(x, Json{{"v", 10}}, Log("x"));
  batch_.Update(y, Json{{"v", 10}}, Log("y"));  // made on a stale y
  batch_.Create("pods", "a", "z", Json{{"v", 1}}, Log("z"));
  EXPECT_EQ(batch_.size(), 3u);
  EXPECT_EQ(store_->Get("pods", "a", "x")->body.Copy()["v"], 1);
  ASSERT_TRUE(batch_.Flush().ok());
  EXPECT_EQ(log_, (std::vector<std::string>{"x: ok 4", "y: " + Code(StatusCode::kConflict), "z: ok 5"}));
  EXPECT_EQ(store_->Get("pods", "a", "x")->body.Copy()["v"], 10);
  EXPECT_EQ(store_->Get("pods", "a", "y")->body.Copy()["v"], 2);
  EXPECT_EQ(batch_.applies(), 1u);
  EXPECT_EQ(batch_.size(), 0u);
}

TEST_F(WriteBatchTest, ASecondWriteToAQueuedObjectMergesUnderTheFirstPrecondition) {
  store::Object x = MustCreate("x", 1);
  batch_.Update(x, Json{{"v", 2}, {"a", true}}, Log("first"));
  const store::Object* queued = batch_.Pending("pods", "a", "x");
  ASSERT_NE(queued, nullptr);
  EXPECT_EQ(queued->revision, x.revision);
  Json next = *queued->body.tree();
  next["b"] = true;
  batch_.Update(*queued, next, Log("second"));
  EXPECT_EQ(batch_.size(), 1u);
  ASSERT_TRUE(batch_.Flush().ok());
  EXPECT_EQ(log_, (std::vector<std::string>{"first: ok 2", "second: ok 2"}));
  auto got = store_->Get("pods", "a", "x");
  EXPECT_TRUE((*got->body.tree())["a"].get<bool>());
  EXPECT_TRUE((*got->body.tree())["b"].get<bool>());
  EXPECT_EQ(batch_.Pending("pods", "a", "x"), nullptr);
}

TEST_F(WriteBatchTest, AQueuedCreateThatIsDeletedWritesNothing) {
  batch_.Create("pods", "a", "x", Json{{"v", 1}}, Log("create"));
  batch_.Delete(*batch_.Pending("pods", "a", "x"), Log("delete"));
  ASSERT_TRUE(batch_.Flush().ok());
  EXPECT_EQ(log_, (std::vector<std::string>{"create: " + Code(StatusCode::kNotFound),
                                            "delete: " + Code(StatusCode::kNotFound)}));
  EXPECT_EQ(*store_->Revision(), 0);
}

TEST_F(WriteBatchTest, ADeleteAfterAQueuedUpdateDeletesTheStoredObjectAndAWriteOnAnOlderVersionFailsAfterIt) {
  store::Object x = MustCreate("x", 1);
  auto w = store_->WatchFrom("pods", "", x.revision);
  ASSERT_TRUE(w.ok());
  batch_.Update(x, Json{{"v", 2}}, Log("update"));
  batch_.Delete(*batch_.Pending("pods", "a", "x"), Log("delete"));
  batch_.Update(x, Json{{"v", 3}}, Log("late update"));  // made on x as stored, not on the queued write
  EXPECT_EQ(batch_.size(), 2u);
  ASSERT_TRUE(batch_.Flush().ok());
  EXPECT_EQ(log_, (std::vector<std::string>{"update: ok 2", "delete: ok 2", "late update: " + Code(StatusCode::kNotFound)}));
  auto events = (*w)->Next(std::chrono::milliseconds(100));
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0]->type, store::EventType::kDeleted);
  EXPECT_EQ((*(*events)[0]->object.body.tree())["v"], 1);  // the object as stored, not the update never written
}

TEST_F(WriteBatchTest, ADeleteOfAnObjectAsStoredCarriesItsBodyForTheDeletionEvent) {
  store::Object x = MustCreate("x", 7);
  auto w = store_->WatchFrom("pods", "", x.revision);
  ASSERT_TRUE(w.ok());
  batch_.Delete(x, Log("delete"));
  ASSERT_TRUE(batch_.Flush().ok());
  EXPECT_EQ(log_, (std::vector<std::string>{"delete: ok 2"}));
  auto events = (*w)->Next(std::chrono::milliseconds(100));
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*(*events)[0]->object.body.tree())["v"], 7);
  EXPECT_EQ((*(*events)[0]->object.body.tree())["metadata"]["resourceVersion"], "2");
}

// Asynchronous mode: a writer thread commits the batch while the caller goes on.
class AsyncWriteBatchTest : public WriteBatchTest {
 protected:
  WriteBatch async_{*store_, 512, /*asynchronous=*/true};
};

TEST_F(AsyncWriteBatchTest, AFlushSendsTheBatchAndTheNextFlushRunsItsCompletions) {
  store::Object x = MustCreate("x", 1);
  async_.Update(x, Json{{"v", 2}}, Log("x"));
  ASSERT_TRUE(async_.Flush().ok());
  EXPECT_TRUE(log_.empty());  // in flight: its completion runs at the next flush
  async_.Create("pods", "a", "y", Json{{"v", 1}}, Log("y"));
  ASSERT_TRUE(async_.Flush().ok());
  EXPECT_EQ(log_, (std::vector<std::string>{"x: ok 2"}));
  ASSERT_TRUE(async_.Drain().ok());
  EXPECT_EQ(log_, (std::vector<std::string>{"x: ok 2", "y: ok 3"}));
  EXPECT_EQ(store_->Get("pods", "a", "x")->body.Copy()["v"], 2);
  EXPECT_EQ(async_.applies(), 2u);
}

TEST_F(AsyncWriteBatchTest, PendingOfAnObjectInFlightIsTheStoredResultAndAWriteOnItGoesUnderItsRevision) {
  store::Object x = MustCreate("x", 1);
  async_.Update(x, Json{{"v", 2}}, Log("first"));
  ASSERT_TRUE(async_.Flush().ok());
  const store::Object* stored = async_.Pending("pods", "a", "x");  // waits for the batch in flight
  ASSERT_NE(stored, nullptr);
  EXPECT_EQ(stored->revision, 2);
  EXPECT_EQ((*stored->body.tree())["v"], 2);
  Json next = *stored->body.tree();
  next["v"] = 3;
  async_.Update(*stored, next, Log("second"));
  ASSERT_TRUE(async_.Drain().ok());
  EXPECT_EQ(log_, (std::vector<std::string>{"first: ok 2", "second: ok 3"}));
  EXPECT_EQ(store_->Get("pods", "a", "x")->body.Copy()["v"], 3);
}

TEST_F(AsyncWriteBatchTest, AWriteOnAnOlderVersionThanTheOneInFlightFailsAsStale) {
  store::Object x = MustCreate("x", 1);
  async_.Update(x, Json{{"v", 2}}, Log("first"));
  ASSERT_TRUE(async_.Flush().ok());
  async_.Update(x, Json{{"v", 9}}, Log("stale"));  // made on the informer's older copy
  ASSERT_TRUE(async_.Drain().ok());
  EXPECT_EQ(log_, (std::vector<std::string>{"first: ok 2", "stale: " + Code(StatusCode::kConflict)}));
  EXPECT_EQ(store_->Get("pods", "a", "x")->body.Copy()["v"], 2);
}

TEST_F(AsyncWriteBatchTest, DestroyingTheBatchWritesWhatIsQueuedAndInFlight) {
  {
    WriteBatch batch(*store_, 512, true);
    batch.Create("pods", "a", "x", Json{{"v", 1}}, Log("x"));
    ASSERT_TRUE(batch.Flush().ok());
    batch.Create("pods", "a", "y", Json{{"v", 1}}, Log("y"));
  }
  EXPECT_EQ(log_, (std::vector<std::string>{"x: ok 1", "y: ok 2"}));
  EXPECT_TRUE(store_->Get("pods", "a", "y").ok());
}

TEST_F(WriteBatchTest, CompletionsMayQueueMoreAndTheFlushWritesThemToo) {
  store::Object x = MustCreate("x", 1);
  batch_.Update(x, Json{{"v", 2}}, [this](const StatusOr<store::ObjectPtr>& r) {
    EXPECT_TRUE(r.ok());
    batch_.Create("events", "a", "x.1", Json{{"reason", "Updated"}}, Log("event"));
    return Status::Ok();
  });
  ASSERT_TRUE(batch_.Flush().ok());
  EXPECT_EQ(log_, (std::vector<std::string>{"event: ok 3"}));
  EXPECT_EQ(batch_.applies(), 2u);
}

TEST_F(WriteBatchTest, TheFirstErrorACompletionReturnsIsTheFlushsAndTheRestStillRun) {
  store::Object x = MustCreate("x", 1);
  store::Object y = MustCreate("y", 1);
  batch_.Update(x, Json{{"v", 2}}, [](const StatusOr<store::ObjectPtr>&) { return Internal("first"); });
  batch_.Update(y, Json{{"v", 2}}, Log("y"));
  Status st = batch_.Flush();
  EXPECT_EQ(st.message(), "first");
  EXPECT_EQ(log_, (std::vector<std::string>{"y: ok 4"}));
}

// A store that records the intent of each op it is handed, then passes the ops on.
class IntentRecorder final : public test_support::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  std::vector<StatusOr<store::ObjectPtr>> Apply(std::vector<store::WriteOp> ops) override {
    for (const store::WriteOp& op : ops) {
      intents.push_back(op.name + (op.intent == store::WriteOp::Intent::kBind ? ": bind" : ": replace"));
    }
    return inner_.Apply(std::move(ops));
  }
  std::vector<std::string> intents;
};

TEST(WriteBatchIntent, ABindingReachesTheStoreAsOneAndAWriteMergedIntoItAsAPlainUpdate) {
  std::unique_ptr<store::Store> memory = store::NewMemoryStore();
  IntentRecorder store(*memory);
  WriteBatch batch(store);
  auto x = store.Create("pods", "a", "x", Json{{"v", 1}});
  auto y = store.Create("pods", "a", "y", Json{{"v", 1}});
  ASSERT_TRUE(x.ok() && y.ok());
  batch.Update(*x, Json{{"v", 2}}, nullptr, store::WriteOp::Intent::kBind);
  batch.Update(*y, Json{{"v", 2}}, nullptr, store::WriteOp::Intent::kBind);
  const store::Object* queued = batch.Pending("pods", "a", "y");
  ASSERT_NE(queued, nullptr);
  batch.Update(*queued, Json{{"v", 3}});  // made on the queued binding: one write, no longer just a binding
  ASSERT_TRUE(batch.Flush().ok());
  EXPECT_EQ(store.intents, (std::vector<std::string>{"x: bind", "y: replace"}));
}

}  // namespace
}  // namespace arbiter::controlplane
