// Tests of the state store: one behavioural suite run against every backend (memory, and SQLite
// in a fresh temporary directory per test), plus the SQLite store's durability and failure cases.
#include <sqlite3.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arbiter/store/store.h"

namespace arbiter::store {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

#define ASSERT_OK(expr)                                       \
  do {                                                        \
    const ::arbiter::Status st_ = (expr);                     \
    ASSERT_TRUE(st_.ok()) << #expr << ": " << st_.message();  \
  } while (0)

#define ASSERT_OK_AND_ASSIGN(lhs, expr)                                                 \
  auto lhs##_or_ = (expr);                                                              \
  ASSERT_TRUE(lhs##_or_.ok()) << #expr << ": " << lhs##_or_.status().message();         \
  auto lhs = std::move(lhs##_or_).value()

#define EXPECT_CODE(expr, want_code)                                                   \
  do {                                                                                 \
    auto r_ = (expr);                                                                  \
    EXPECT_EQ(static_cast<int>(r_.status().code()), static_cast<int>(want_code))       \
        << #expr << ": " << r_.status().message();                                     \
  } while (0)

Json Body(int v) { return Json{{"spec", {{"v", v}}}}; }

// "ADDED pods a/x 3": what a test compares events by.
std::string Describe(const Event& e) {
  const Object& o = e.object;
  return std::string(EventTypeName(e.type)) + " " + o.resource + " " + (o.ns.empty() ? "" : o.ns + "/") + o.name +
         " " + std::to_string(o.revision);
}

std::vector<std::string> Describe(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(Describe(e));
  return out;
}

// Reads from `w` until `n` events arrived (or 5 s passed), then checks that no more follow.
std::vector<Event> Drain(Watch& w, size_t n) {
  std::vector<Event> out;
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
    auto r = w.Next(100ms);
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok()) return out;
    for (auto& e : *r) out.push_back(std::move(e));
  }
  auto more = w.Next(30ms);
  EXPECT_TRUE(more.ok()) << more.status().message();
  if (more.ok() && !more->empty()) ADD_FAILURE() << "unexpected further events, first: " << Describe(more->front());
  return out;
}

fs::path MakeTempDir() {
  std::string templ = (fs::temp_directory_path() / "arbiter-store-test-XXXXXX").string();
  const char* made = mkdtemp(templ.data());
  EXPECT_NE(made, nullptr) << "cannot create a temporary directory";
  return made != nullptr ? fs::path(made) : fs::temp_directory_path();
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs SQL on the file through a connection of the test's own (as another process would).
void RawSql(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string msg = err != nullptr ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << sql << ": " << msg;
}

// ---------------------------------------------------------------------------------------------
// The suite every backend must pass.

struct Backend {
  std::string name;
  // Opens the backend's store in `dir` (a fresh directory per test), keeping `history` events.
  std::function<StatusOr<std::unique_ptr<Store>>(const fs::path& dir, size_t history)> open;
};

void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }

class StoreTest : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    Reopen(kDefaultWatchHistory);
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Replaces the store with a new one (for SQLite: on the same file) keeping `history` events.
  void Reopen(size_t history) {
    store_.reset();
    auto s = GetParam().open(dir_, history);
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(s).value();
  }
  Object MustCreate(const std::string& resource, const std::string& ns, const std::string& name, int v) {
    auto o = store_->Create(resource, ns, name, Body(v));
    EXPECT_TRUE(o.ok()) << o.status().message();
    return o.ok() ? *o : Object{};
  }

  fs::path dir_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreTest, CreateThenGetReturnsTheStoredObject) {
  ASSERT_OK_AND_ASSIGN(created, store_->Create("pods", "default", "web", Body(7)));
  EXPECT_EQ(created.resource, "pods");
  EXPECT_EQ(created.ns, "default");
  EXPECT_EQ(created.name, "web");
  EXPECT_EQ(created.revision, 1);
  EXPECT_EQ(created.body["spec"]["v"], 7);

  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "default", "web"));
  EXPECT_EQ(got.revision, 1);
  EXPECT_EQ(got.body, created.body);
  // Cluster-scoped objects live under an empty namespace.
  ASSERT_OK_AND_ASSIGN(node, store_->Create("nodes", "", "n1", Body(1)));
  ASSERT_OK_AND_ASSIGN(got_node, store_->Get("nodes", "", "n1"));
  EXPECT_EQ(got_node.body, node.body);
}

TEST_P(StoreTest, GetOfAMissingObjectIsNotFoundNamingIt) {
  auto r = store_->Get("pods", "default", "missing");
  ASSERT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("pods \"default/missing\""), std::string::npos) << r.status().message();
}

TEST_P(StoreTest, CreateOfAnExistingKeyIsAlreadyExistsAndChangesNothing) {
  MustCreate("pods", "default", "web", 1);
  auto r = store_->Create("pods", "default", "web", Body(2));
  ASSERT_EQ(r.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(r.status().message().find("pods \"default/web\""), std::string::npos) << r.status().message();
  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "default", "web"));
  EXPECT_EQ(got.body["spec"]["v"], 1);
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, 1);
  // The same name in another namespace or resource is another key.
  MustCreate("pods", "other", "web", 3);
  MustCreate("services", "default", "web", 4);
}

TEST_P(StoreTest, EmptyResourceOrNameIsInvalidArgument) {
  EXPECT_CODE(store_->Create("", "default", "web", Body(1)), StatusCode::kInvalidArgument);
  EXPECT_CODE(store_->Create("pods", "default", "", Body(1)), StatusCode::kInvalidArgument);
  EXPECT_CODE(store_->Get("", "default", "web"), StatusCode::kInvalidArgument);
  EXPECT_CODE(store_->Get("pods", "default", ""), StatusCode::kInvalidArgument);
  EXPECT_CODE(store_->Update("pods", "default", "", Body(1), 0), StatusCode::kInvalidArgument);
  EXPECT_CODE(store_->Delete("", "default", "web", 0), StatusCode::kInvalidArgument);
  EXPECT_CODE(store_->List("", ""), StatusCode::kInvalidArgument);
  EXPECT_CODE(store_->WatchFrom("", "", 0), StatusCode::kInvalidArgument);
  EXPECT_CODE(store_->WatchFrom("pods", "", -1), StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, 0);
}

TEST_P(StoreTest, BodyThatIsNotAJsonObjectIsInvalidArgument) {
  EXPECT_CODE(store_->Create("pods", "default", "a", Json::array({1, 2})), StatusCode::kInvalidArgument);
  EXPECT_CODE(store_->Create("pods", "default", "a", Json("text")), StatusCode::kInvalidArgument);
  EXPECT_CODE(store_->Create("pods", "default", "a", Json()), StatusCode::kInvalidArgument);
  EXPECT_CODE(store_->Create("pods", "default", "a", Json{{"metadata", "not an object"}}),
              StatusCode::kInvalidArgument);
  MustCreate("pods", "default", "a", 1);
  EXPECT_CODE(store_->Update("pods", "default", "a", Json(42), 0), StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, 1);
}

TEST_P(StoreTest, ResourceVersionInTheBodyIsTheObjectRevision) {
  // A body without metadata gets it; a stale resourceVersion from the caller is overwritten.
  MustCreate("nodes", "", "n1", 1);
  ASSERT_OK_AND_ASSIGN(created, store_->Create("pods", "default", "web",
                                               Json{{"metadata", {{"name", "web"}, {"resourceVersion", "999"}}}}));
  EXPECT_EQ(created.revision, 2);
  EXPECT_EQ(created.body["metadata"]["resourceVersion"], "2");
  EXPECT_EQ(created.body["metadata"]["name"], "web");
  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "default", "web"));
  EXPECT_EQ(got.body["metadata"]["resourceVersion"], "2");

  ASSERT_OK_AND_ASSIGN(updated, store_->Update("pods", "default", "web", Body(5), 0));
  EXPECT_EQ(updated.body["metadata"]["resourceVersion"], "3");
  ASSERT_OK_AND_ASSIGN(got2, store_->Get("pods", "default", "web"));
  EXPECT_EQ(got2.body["metadata"]["resourceVersion"], "3");
  ASSERT_OK_AND_ASSIGN(list, store_->List("pods", ""));
  ASSERT_EQ(list.items.size(), 1u);
  EXPECT_EQ(list.items[0].body["metadata"]["resourceVersion"], "3");
}

TEST_P(StoreTest, UpdateWithTheCurrentRevisionSucceeds) {
  Object o = MustCreate("pods", "default", "web", 1);
  ASSERT_OK_AND_ASSIGN(updated, store_->Update("pods", "default", "web", Body(2), o.revision));
  EXPECT_EQ(updated.revision, 2);
  EXPECT_EQ(updated.body["spec"]["v"], 2);
  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "default", "web"));
  EXPECT_EQ(got.revision, 2);
  EXPECT_EQ(got.body["spec"]["v"], 2);
}

TEST_P(StoreTest, UpdateWithStaleRevisionIsAConflict) {
  Object o = MustCreate("pods", "default", "web", 1);
  ASSERT_OK(store_->Update("pods", "default", "web", Body(2), o.revision).status());
  auto r = store_->Update("pods", "default", "web", Body(3), o.revision);
  ASSERT_EQ(r.status().code(), StatusCode::kConflict);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("pods \"default/web\""), std::string::npos) << m;
  EXPECT_NE(m.find("expected revision 1"), std::string::npos) << m;
  EXPECT_NE(m.find("revision 2"), std::string::npos) << m;
  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "default", "web"));
  EXPECT_EQ(got.body["spec"]["v"], 2);
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, 2);
}

TEST_P(StoreTest, UnconditionalUpdateReplacesWhateverIsStored) {
  MustCreate("pods", "default", "web", 1);
  ASSERT_OK(store_->Update("pods", "default", "web", Body(2), 0).status());
  ASSERT_OK_AND_ASSIGN(updated, store_->Update("pods", "default", "web", Body(3), 0));
  EXPECT_EQ(updated.revision, 3);
  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "default", "web"));
  EXPECT_EQ(got.body["spec"]["v"], 3);
}

TEST_P(StoreTest, UpdateOfAMissingObjectIsNotFound) {
  EXPECT_CODE(store_->Update("pods", "default", "ghost", Body(1), 0), StatusCode::kNotFound);
  EXPECT_CODE(store_->Update("pods", "default", "ghost", Body(1), 4), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, 0);
}

TEST_P(StoreTest, DeleteReturnsTheLastStateAtTheDeletionRevisionAndGetIsNotFoundAfter) {
  MustCreate("pods", "default", "web", 1);
  ASSERT_OK(store_->Update("pods", "default", "web", Body(2), 0).status());
  ASSERT_OK_AND_ASSIGN(deleted, store_->Delete("pods", "default", "web", 0));
  EXPECT_EQ(deleted.revision, 3);
  EXPECT_EQ(deleted.name, "web");
  EXPECT_EQ(deleted.body["spec"]["v"], 2);
  EXPECT_EQ(deleted.body["metadata"]["resourceVersion"], "3");
  EXPECT_CODE(store_->Get("pods", "default", "web"), StatusCode::kNotFound);
  EXPECT_CODE(store_->Delete("pods", "default", "web", 0), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, 3);
  // The name can be used again, at a new revision.
  ASSERT_OK_AND_ASSIGN(again, store_->Create("pods", "default", "web", Body(9)));
  EXPECT_EQ(again.revision, 4);
}

TEST_P(StoreTest, DeleteWithStaleRevisionIsAConflictAndKeepsTheObject) {
  Object o = MustCreate("pods", "default", "web", 1);
  ASSERT_OK(store_->Update("pods", "default", "web", Body(2), 0).status());
  auto r = store_->Delete("pods", "default", "web", o.revision);
  ASSERT_EQ(r.status().code(), StatusCode::kConflict);
  EXPECT_NE(r.status().message().find("pods \"default/web\""), std::string::npos) << r.status().message();
  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "default", "web"));
  EXPECT_EQ(got.revision, 2);
}

TEST_P(StoreTest, DeleteWithTheCurrentRevisionSucceeds) {
  MustCreate("pods", "default", "web", 1);
  ASSERT_OK_AND_ASSIGN(updated, store_->Update("pods", "default", "web", Body(2), 0));
  ASSERT_OK_AND_ASSIGN(deleted, store_->Delete("pods", "default", "web", updated.revision));
  EXPECT_EQ(deleted.revision, 3);
  EXPECT_CODE(store_->Get("pods", "default", "web"), StatusCode::kNotFound);
}

TEST_P(StoreTest, ListIsSortedByNamespaceThenNameWhateverTheCreationOrder) {
  MustCreate("pods", "b", "z", 1);
  MustCreate("pods", "a", "y", 2);
  MustCreate("pods", "b", "a", 3);
  MustCreate("pods", "a", "x", 4);
  MustCreate("nodes", "", "n1", 5);
  MustCreate("podsx", "a", "w", 6);  // a resource whose name extends "pods" is another resource
  ASSERT_OK_AND_ASSIGN(list, store_->List("pods", ""));
  std::vector<std::string> keys;
  for (const auto& o : list.items) keys.push_back(o.ns + "/" + o.name);
  EXPECT_EQ(keys, (std::vector<std::string>{"a/x", "a/y", "b/a", "b/z"}));
  EXPECT_EQ(list.items[0].body["spec"]["v"], 4);
}

TEST_P(StoreTest, ListByNamespaceOrAcrossAllNamespacesAtTheStoreRevision) {
  MustCreate("pods", "a", "x", 1);
  MustCreate("pods", "b", "y", 2);
  MustCreate("pods", "a", "z", 3);
  MustCreate("nodes", "", "n1", 4);
  ASSERT_OK(store_->Delete("pods", "a", "z", 0).status());

  ASSERT_OK_AND_ASSIGN(in_a, store_->List("pods", "a"));
  ASSERT_EQ(in_a.items.size(), 1u);
  EXPECT_EQ(in_a.items[0].name, "x");
  EXPECT_EQ(in_a.revision, 5);

  ASSERT_OK_AND_ASSIGN(all, store_->List("pods", ""));
  ASSERT_EQ(all.items.size(), 2u);
  EXPECT_EQ(all.items[0].name, "x");
  EXPECT_EQ(all.items[1].name, "y");
  EXPECT_EQ(all.revision, 5);

  ASSERT_OK_AND_ASSIGN(none, store_->List("pods", "c"));
  EXPECT_TRUE(none.items.empty());
  EXPECT_EQ(none.revision, 5);

  ASSERT_OK_AND_ASSIGN(nodes, store_->List("nodes", ""));
  ASSERT_EQ(nodes.items.size(), 1u);
  EXPECT_EQ(nodes.items[0].revision, 4);
}

TEST_P(StoreTest, RevisionsIncreaseStrictlyAcrossResources) {
  ASSERT_OK_AND_ASSIGN(empty_rev, store_->Revision());
  EXPECT_EQ(empty_rev, 0);
  std::vector<int64_t> revs;
  revs.push_back(MustCreate("pods", "default", "a", 1).revision);
  revs.push_back(MustCreate("nodes", "", "n1", 1).revision);
  ASSERT_OK_AND_ASSIGN(u, store_->Update("pods", "default", "a", Body(2), 0));
  revs.push_back(u.revision);
  revs.push_back(MustCreate("priorityclasses", "", "high", 1).revision);
  ASSERT_OK_AND_ASSIGN(d, store_->Delete("nodes", "", "n1", 0));
  revs.push_back(d.revision);
  EXPECT_EQ(revs, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, 5);
}

TEST_P(StoreTest, WatchDeliversAddedModifiedDeletedInRevisionOrder) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 0));
  MustCreate("pods", "default", "web", 1);
  MustCreate("pods", "default", "db", 1);
  ASSERT_OK(store_->Update("pods", "default", "web", Body(2), 0).status());
  ASSERT_OK(store_->Delete("pods", "default", "db", 0).status());
  ASSERT_OK(store_->Delete("pods", "default", "web", 0).status());

  auto events = Drain(*w, 5);
  EXPECT_EQ(Describe(events), (std::vector<std::string>{"ADDED pods default/web 1", "ADDED pods default/db 2",
                                                        "MODIFIED pods default/web 3", "DELETED pods default/db 4",
                                                        "DELETED pods default/web 5"}));
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[2].object.body["spec"]["v"], 2);
  EXPECT_EQ(events[2].object.body["metadata"]["resourceVersion"], "3");
  // A deletion carries the object as last stored, at the deletion's revision.
  EXPECT_EQ(events[4].object.body["spec"]["v"], 2);
  EXPECT_EQ(events[4].object.body["metadata"]["resourceVersion"], "5");
}

TEST_P(StoreTest, WatchWithANamespaceSeesOnlyThatNamespace) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "a", 0));
  MustCreate("pods", "a", "x", 1);
  MustCreate("pods", "b", "y", 1);
  MustCreate("pods", "a", "z", 1);
  ASSERT_OK(store_->Update("pods", "b", "y", Body(2), 0).status());
  ASSERT_OK(store_->Delete("pods", "a", "x", 0).status());
  EXPECT_EQ(Describe(Drain(*w, 3)),
            (std::vector<std::string>{"ADDED pods a/x 1", "ADDED pods a/z 3", "DELETED pods a/x 5"}));
}

TEST_P(StoreTest, WatchSeesOnlyItsResource) {
  ASSERT_OK_AND_ASSIGN(nodes, store_->WatchFrom("nodes", "", 0));
  ASSERT_OK_AND_ASSIGN(pods, store_->WatchFrom("pods", "", 0));
  MustCreate("pods", "a", "x", 1);
  MustCreate("nodes", "", "n1", 1);
  MustCreate("pods", "b", "y", 1);
  MustCreate("podsx", "a", "w", 1);
  ASSERT_OK(store_->Delete("nodes", "", "n1", 0).status());
  EXPECT_EQ(Describe(Drain(*nodes, 2)), (std::vector<std::string>{"ADDED nodes n1 2", "DELETED nodes n1 5"}));
  EXPECT_EQ(Describe(Drain(*pods, 2)), (std::vector<std::string>{"ADDED pods a/x 1", "ADDED pods b/y 3"}));
}

TEST_P(StoreTest, WatchFromAMiddleRevisionSeesExactlyTheLaterEvents) {
  MustCreate("pods", "a", "x", 1);                                      // 1
  MustCreate("pods", "a", "y", 1);                                      // 2
  ASSERT_OK(store_->Update("pods", "a", "x", Body(2), 0).status());     // 3
  ASSERT_OK(store_->Update("pods", "a", "y", Body(2), 0).status());     // 4
  ASSERT_OK(store_->Delete("pods", "a", "x", 0).status());              // 5
  MustCreate("pods", "a", "z", 1);                                      // 6
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 3));
  EXPECT_EQ(Describe(Drain(*w, 3)),
            (std::vector<std::string>{"MODIFIED pods a/y 4", "DELETED pods a/x 5", "ADDED pods a/z 6"}));
  // It then carries on with new events.
  MustCreate("pods", "a", "q", 1);
  EXPECT_EQ(Describe(Drain(*w, 1)), (std::vector<std::string>{"ADDED pods a/q 7"}));
}

TEST_P(StoreTest, WatchFromTheCurrentRevisionOfAnEmptyStoreSeesNewEvents) {
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", rev));
  auto none = w->Next(20ms);
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_TRUE(none->empty());
  MustCreate("pods", "a", "x", 1);
  EXPECT_EQ(Describe(Drain(*w, 1)), (std::vector<std::string>{"ADDED pods a/x 1"}));
}

TEST_P(StoreTest, WatchFromTheListRevisionSeesOnlyLaterWrites) {
  MustCreate("pods", "a", "x", 1);
  MustCreate("pods", "a", "y", 1);
  ASSERT_OK_AND_ASSIGN(list, store_->List("pods", ""));
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", list.revision));
  ASSERT_OK(store_->Update("pods", "a", "x", Body(2), 0).status());
  EXPECT_EQ(Describe(Drain(*w, 1)), (std::vector<std::string>{"MODIFIED pods a/x 3"}));
}

TEST_P(StoreTest, NextReturnsNothingWhenItTimesOut) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 0));
  MustCreate("nodes", "", "n1", 1);  // not a pod: does not count
  const auto start = std::chrono::steady_clock::now();
  auto r = w->Next(50ms);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->empty());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 45ms);
}

TEST_P(StoreTest, BlockedNextWakesWhenAnotherThreadWrites) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 0));
  StatusOr<std::vector<Event>> got = std::vector<Event>{};
  std::chrono::steady_clock::duration waited{};
  std::thread reader([&] {
    const auto start = std::chrono::steady_clock::now();
    got = w->Next(10s);
    waited = std::chrono::steady_clock::now() - start;
  });
  std::this_thread::sleep_for(50ms);
  MustCreate("pods", "a", "x", 1);
  reader.join();
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(Describe(*got), (std::vector<std::string>{"ADDED pods a/x 1"}));
  EXPECT_LT(waited, 5s);
}

TEST_P(StoreTest, StopUnblocksANextBlockedInAnotherThread) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 0));
  StatusOr<std::vector<Event>> got = std::vector<Event>{};
  std::chrono::steady_clock::duration waited{};
  std::thread reader([&] {
    const auto start = std::chrono::steady_clock::now();
    got = w->Next(10s);
    waited = std::chrono::steady_clock::now() - start;
  });
  std::this_thread::sleep_for(50ms);
  w->Stop();
  reader.join();
  EXPECT_EQ(got.status().code(), StatusCode::kFailedPrecondition) << got.status().message();
  EXPECT_LT(waited, 5s);
}

TEST_P(StoreTest, NextAfterStopIsFailedPreconditionAndStopTwiceIsHarmless) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 0));
  MustCreate("pods", "a", "x", 1);
  w->Stop();
  w->Stop();
  EXPECT_CODE(w->Next(10ms), StatusCode::kFailedPrecondition);
  // Other watches and the store carry on.
  ASSERT_OK_AND_ASSIGN(other, store_->WatchFrom("pods", "", 0));
  EXPECT_EQ(Describe(Drain(*other, 1)), (std::vector<std::string>{"ADDED pods a/x 1"}));
}

TEST_P(StoreTest, WatchFromACompactedRevisionIsGone) {
  MustCreate("pods", "a", "x", 1);  // 1
  MustCreate("pods", "a", "y", 1);  // 2
  MustCreate("pods", "a", "z", 1);  // 3
  ASSERT_OK(store_->Compact(2));
  auto r = store_->WatchFrom("pods", "", 1);
  ASSERT_EQ(r.status().code(), StatusCode::kGone) << r.status().message();
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("from revision 1"), std::string::npos) << m;
  EXPECT_NE(m.find("oldest available revision is 3"), std::string::npos) << m;
  // From the compaction revision on, the history is complete.
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 2));
  EXPECT_EQ(Describe(Drain(*w, 1)), (std::vector<std::string>{"ADDED pods a/z 3"}));
}

TEST_P(StoreTest, WatcherBehindACompactionGetsGoneFromNext) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 0));
  MustCreate("pods", "a", "x", 1);
  MustCreate("pods", "a", "y", 1);
  ASSERT_OK(store_->Compact(2));
  EXPECT_CODE(w->Next(10ms), StatusCode::kGone);
  EXPECT_CODE(w->Next(10ms), StatusCode::kGone);  // and stays so
}

TEST_P(StoreTest, CompactingEverythingStillAllowsWatchingFromTheCurrentRevision) {
  MustCreate("pods", "a", "x", 1);
  MustCreate("pods", "a", "y", 1);
  ASSERT_OK(store_->Compact(2));
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 2));
  MustCreate("pods", "a", "z", 1);
  EXPECT_EQ(Describe(Drain(*w, 1)), (std::vector<std::string>{"ADDED pods a/z 3"}));
}

TEST_P(StoreTest, CompactOutsideTheKnownRevisionsIsOutOfRange) {
  MustCreate("pods", "a", "x", 1);
  EXPECT_EQ(store_->Compact(2).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(store_->Compact(-1).code(), StatusCode::kOutOfRange);
  // Nothing was forgotten.
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 0));
  EXPECT_EQ(Describe(Drain(*w, 1)), (std::vector<std::string>{"ADDED pods a/x 1"}));
}

TEST_P(StoreTest, LaggingWatcherGetsGoneWhenTheHistoryBoundEvictsItsEvents) {
  Reopen(3);
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 0));
  for (int i = 0; i < 5; ++i) MustCreate("pods", "a", "p" + std::to_string(i), i);
  auto r = w->Next(10ms);
  ASSERT_EQ(r.status().code(), StatusCode::kGone) << r.status().message();
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("after revision 0"), std::string::npos) << m;
  EXPECT_NE(m.find("oldest revision still kept is 3"), std::string::npos) << m;
}

TEST_P(StoreTest, WatchFromBeforeTheHistoryBoundIsGone) {
  Reopen(3);
  for (int i = 0; i < 5; ++i) MustCreate("pods", "a", "p" + std::to_string(i), i);
  EXPECT_CODE(store_->WatchFrom("pods", "", 1), StatusCode::kGone);
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 2));
  EXPECT_EQ(Describe(Drain(*w, 3)),
            (std::vector<std::string>{"ADDED pods a/p2 3", "ADDED pods a/p3 4", "ADDED pods a/p4 5"}));
}

TEST_P(StoreTest, WatcherThatKeepsUpIsNeverGoneUnderASmallHistoryBound) {
  Reopen(3);
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 0));
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 3; ++i) MustCreate("pods", "a", "p" + std::to_string(round * 3 + i), 1);
    EXPECT_EQ(Drain(*w, 3).size(), 3u) << "round " << round;
  }
}

TEST_P(StoreTest, ConcurrentWritersGetUniqueGapFreeRevisions) {
  constexpr int kThreads = 4;
  constexpr int kObjectsPerThread = 25;  // each created and then updated: 2 writes
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 0));
  std::mutex mu;
  std::vector<int64_t> revisions;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string ns = "ns" + std::to_string(t);
      for (int i = 0; i < kObjectsPerThread; ++i) {
        const std::string name = "p" + std::to_string(i);
        auto c = store_->Create("pods", ns, name, Body(i));
        auto u = c.ok() ? store_->Update("pods", ns, name, Body(i + 1), c->revision) : c;
        if (!c.ok() || !u.ok()) {
          ++failures;
          continue;
        }
        std::lock_guard<std::mutex> lk(mu);
        revisions.push_back(c->revision);
        revisions.push_back(u->revision);
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);
  constexpr int kWrites = kThreads * kObjectsPerThread * 2;
  std::sort(revisions.begin(), revisions.end());
  std::vector<int64_t> want(kWrites);
  for (int i = 0; i < kWrites; ++i) want[static_cast<size_t>(i)] = i + 1;
  EXPECT_EQ(revisions, want);
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, kWrites);
  // The watch saw every write once, in revision order.
  auto events = Drain(*w, kWrites);
  ASSERT_EQ(events.size(), static_cast<size_t>(kWrites));
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].object.revision, static_cast<int64_t>(i + 1));
}

TEST_P(StoreTest, WatchOutlivingItsStoreEndsWithUnavailable) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", 0));
  store_.reset();
  EXPECT_CODE(w->Next(10ms), StatusCode::kUnavailable);
  w->Stop();
}

Backend MemoryBackend() {
  return {"Memory", [](const fs::path&, size_t history) -> StatusOr<std::unique_ptr<Store>> {
            return NewMemoryStore(history);
          }};
}

Backend SqliteBackend() {
  return {"Sqlite", [](const fs::path& dir, size_t history) {
            return OpenSqliteStore((dir / "state.db").string(), false, history);
          }};
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, testing::Values(MemoryBackend(), SqliteBackend()),
                         [](const testing::TestParamInfo<Backend>& param_info) { return param_info.param.name; });

// ---------------------------------------------------------------------------------------------
// SQLite only: durability and failures.

class SqliteStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    path_ = dir_ / "state.db";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::unique_ptr<Store> MustOpen() {
    auto s = OpenSqliteStore(path_.string());
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(s).value() : nullptr;
  }

  fs::path dir_;
  fs::path path_;
};

TEST_F(SqliteStoreTest, ReopenKeepsObjectsAndContinuesRevisions) {
  {
    auto s = MustOpen();
    ASSERT_NE(s, nullptr);
    ASSERT_OK(s->Create("pods", "a", "x", Body(1)).status());             // 1
    ASSERT_OK(s->Create("nodes", "", "n1", Body(1)).status());            // 2
    ASSERT_OK(s->Update("pods", "a", "x", Body(2), 1).status());          // 3
    ASSERT_OK(s->Create("pods", "a", "gone", Body(1)).status());          // 4
    ASSERT_OK(s->Delete("pods", "a", "gone", 0).status());                // 5: the latest write
  }
  auto s = MustOpen();
  ASSERT_NE(s, nullptr);
  ASSERT_OK_AND_ASSIGN(rev, s->Revision());
  EXPECT_EQ(rev, 5);  // the deletion advanced the revision durably
  ASSERT_OK_AND_ASSIGN(x, s->Get("pods", "a", "x"));
  EXPECT_EQ(x.revision, 3);
  EXPECT_EQ(x.body["spec"]["v"], 2);
  EXPECT_EQ(x.body["metadata"]["resourceVersion"], "3");
  EXPECT_CODE(s->Get("pods", "a", "gone"), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(list, s->List("pods", ""));
  EXPECT_EQ(list.items.size(), 1u);
  EXPECT_EQ(list.revision, 5);
  // The watch history starts at the open: from there on it is complete.
  EXPECT_CODE(s->WatchFrom("pods", "", 4), StatusCode::kGone);
  ASSERT_OK_AND_ASSIGN(w, s->WatchFrom("pods", "", 5));
  ASSERT_OK_AND_ASSIGN(y, s->Create("pods", "a", "y", Body(1)));
  EXPECT_EQ(y.revision, 6);
  EXPECT_EQ(Describe(Drain(*w, 1)), (std::vector<std::string>{"ADDED pods a/y 6"}));
}

TEST_F(SqliteStoreTest, AWriteThatFailsItsConditionLeavesTheFileUnchanged) {
  auto s = MustOpen();
  ASSERT_NE(s, nullptr);
  ASSERT_OK(s->Create("pods", "a", "x", Body(1)).status());
  ASSERT_OK(s->Update("pods", "a", "x", Body(2), 0).status());
  const fs::path wal = path_.string() + "-wal";
  const std::string db_before = ReadFile(path_);
  const std::string wal_before = ReadFile(wal);

  EXPECT_CODE(s->Update("pods", "a", "x", Body(3), 1), StatusCode::kConflict);
  EXPECT_CODE(s->Delete("pods", "a", "x", 1), StatusCode::kConflict);
  EXPECT_CODE(s->Create("pods", "a", "x", Body(3)), StatusCode::kAlreadyExists);
  EXPECT_CODE(s->Update("pods", "a", "missing", Body(3), 0), StatusCode::kNotFound);

  EXPECT_EQ(ReadFile(path_), db_before);
  EXPECT_EQ(ReadFile(wal), wal_before);
  s.reset();
  auto reopened = MustOpen();
  ASSERT_NE(reopened, nullptr);
  ASSERT_OK_AND_ASSIGN(rev, reopened->Revision());
  EXPECT_EQ(rev, 2);
  ASSERT_OK_AND_ASSIGN(x, reopened->Get("pods", "a", "x"));
  EXPECT_EQ(x.body["spec"]["v"], 2);
}

TEST_F(SqliteStoreTest, ASqliteErrorInsideAWriteRollsBackAllOfItAndNamesTheFile) {
  auto s = MustOpen();
  ASSERT_NE(s, nullptr);
  ASSERT_OK(s->Create("pods", "a", "x", Body(1)).status());  // 1
  // Make the revision bump of the next write fail, after its row was already written.
  RawSql(path_, "CREATE TRIGGER fail_bump BEFORE UPDATE ON meta WHEN NEW.value = 2 "
                "BEGIN SELECT RAISE(ABORT, 'injected failure'); END;");
  ASSERT_OK_AND_ASSIGN(w, s->WatchFrom("pods", "", 1));
  auto r = s->Create("pods", "a", "y", Body(1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find(path_.string()), std::string::npos) << m;
  EXPECT_NE(m.find("injected failure"), std::string::npos) << m;
  EXPECT_NE(m.find("pods \"a/y\""), std::string::npos) << m;
  // No half write: neither the row nor the revision, and no event.
  EXPECT_CODE(s->Get("pods", "a", "y"), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(rev, s->Revision());
  EXPECT_EQ(rev, 1);
  auto none = w->Next(20ms);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  // Once the cause is gone, writing works again on the same connection.
  RawSql(path_, "DROP TRIGGER fail_bump;");
  ASSERT_OK_AND_ASSIGN(y, s->Create("pods", "a", "y", Body(1)));
  EXPECT_EQ(y.revision, 2);
  EXPECT_EQ(Describe(Drain(*w, 1)), (std::vector<std::string>{"ADDED pods a/y 2"}));
}

TEST_F(SqliteStoreTest, OpeningInAMissingDirectoryIsAnErrorNamingThePath) {
  const fs::path p = dir_ / "no-such-dir" / "state.db";
  auto r = OpenSqliteStore(p.string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find(p.string()), std::string::npos) << m;
  EXPECT_NE(m.find("does not exist"), std::string::npos) << m;
  EXPECT_FALSE(fs::exists(p.parent_path()));
}

TEST_F(SqliteStoreTest, ACorruptFileIsAnErrorNotACrash) {
  {
    std::ofstream out(path_, std::ios::binary);
    for (int i = 0; i < 512; ++i) out << "this is not a database, just garbage bytes \x01\x02\xff\n";
  }
  auto r = OpenSqliteStore(path_.string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find(path_.string()), std::string::npos) << m;
  EXPECT_NE(m.find("not a database"), std::string::npos) << m;
}

TEST_F(SqliteStoreTest, ADamagedStoredBodyIsAnErrorNotACrash) {
  {
    auto s = MustOpen();
    ASSERT_NE(s, nullptr);
    ASSERT_OK(s->Create("pods", "a", "x", Body(1)).status());
  }
  RawSql(path_, "UPDATE objects SET body = '{not json' WHERE name = 'x';");
  auto s = MustOpen();
  ASSERT_NE(s, nullptr);
  auto got = s->Get("pods", "a", "x");
  EXPECT_EQ(got.status().code(), StatusCode::kInternal);
  EXPECT_NE(got.status().message().find("pods \"a/x\""), std::string::npos) << got.status().message();
  EXPECT_CODE(s->List("pods", ""), StatusCode::kInternal);
  EXPECT_CODE(s->Update("pods", "a", "x", Body(2), 0), StatusCode::kInternal);
  ASSERT_OK_AND_ASSIGN(rev, s->Revision());
  EXPECT_EQ(rev, 1);
}

TEST_F(SqliteStoreTest, UsesTheWalJournalAndTheDocumentedSchema) {
  {
    auto s = MustOpen();
    ASSERT_NE(s, nullptr);
    ASSERT_OK(s->Create("pods", "a", "x", Body(1)).status());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  auto query = [&](const char* sql) {
    sqlite3_stmt* st = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(st, 0);
      out = t != nullptr ? reinterpret_cast<const char*>(t) : "";
    }
    sqlite3_finalize(st);
    return out;
  };
  EXPECT_EQ(query("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(query("SELECT value FROM meta WHERE key = 'revision'"), "1");
  EXPECT_EQ(query("SELECT revision FROM objects WHERE resource = 'pods' AND ns = 'a' AND name = 'x'"), "1");
  sqlite3_close(db);
}

TEST_F(SqliteStoreTest, FsyncEveryCommitStoreKeepsWrites) {
  {
    auto s = OpenSqliteStore(path_.string(), /*fsync_every_commit=*/true);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_OK((*s)->Create("pods", "a", "x", Body(1)).status());
  }
  auto s = MustOpen();
  ASSERT_NE(s, nullptr);
  ASSERT_OK_AND_ASSIGN(x, s->Get("pods", "a", "x"));
  EXPECT_EQ(x.revision, 1);
}

}  // namespace
}  // namespace arbiter::store
