// The watch cache that answers the API's lists: consistent at the latest revision, readable at an
// earlier one within its history, paged, and narrowed by indexes; over every backend whose watch
// is synchronous.
#include "arbiter/store/watch_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "arbiter/store/group_commit.h"

namespace arbiter::store {
namespace {

namespace fs = std::filesystem;

struct CacheBackend {
  std::string name;
  std::function<StatusOr<std::unique_ptr<Store>>(const fs::path& dir)> open;
};

void PrintTo(const CacheBackend& b, std::ostream* os) { *os << b.name; }

class WatchCacheTest : public testing::TestWithParam<CacheBackend> {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "arbiter-watch-cache-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    auto s = GetParam().open(dir_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
    ASSERT_TRUE(store_->WatchIsSynchronous());
  }
  void TearDown() override {
    store_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // A pod on `node` ("" for unbound) in namespace `ns`.
  int64_t Put(const std::string& ns, const std::string& name, const std::string& node = "") {
    Json body = {{"metadata", {{"name", name}, {"namespace", ns}}}, {"spec", Json::object()}};
    if (!node.empty()) body["spec"]["nodeName"] = node;
    auto existing = store_->Get("pods", ns, name);
    auto r = existing.ok() ? store_->Update("pods", ns, name, body, 0) : store_->Create("pods", ns, name, body);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->revision : 0;
  }

  static std::vector<std::string> Names(const WatchCache::Page& page) {
    std::vector<std::string> out;
    for (const ObjectPtr& o : page.items) out.push_back(o->ns + "/" + o->name);
    return out;
  }

  static std::string NodeOf(const Object& o) {
    return o.body->at("spec").value("nodeName", "");
  }

  fs::path dir_;
  std::unique_ptr<Store> store_;
  int64_t now_ = 0;
  WatchCache::Options Clocked() {
    WatchCache::Options o;
    o.history = std::chrono::minutes(5);
    o.now_millis = [this] { return now_; };
    return o;
  }
};

TEST_P(WatchCacheTest, AListSeesEveryWriteAcknowledgedBeforeIt) {
  WatchCache cache(*store_, "pods");
  Put("a", "p1");
  auto first = cache.List({});
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(Names(*first), (std::vector<std::string>{"a/p1"}));
  const int64_t rev = Put("a", "p2", "n1");
  Put("b", "p0");
  ASSERT_TRUE(store_->Delete("pods", "a", "p1", 0).ok());
  auto second = cache.List({});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(Names(*second), (std::vector<std::string>{"a/p2", "b/p0"}));
  EXPECT_EQ(second->revision, *store_->Revision());
  EXPECT_GT(second->revision, rev);
  WatchCache::Query in_a;
  in_a.ns = "a";
  EXPECT_EQ(Names(*cache.List(in_a)), (std::vector<std::string>{"a/p2"}));
}

TEST_P(WatchCacheTest, LaterPagesAreReadAtTheFirstPagesRevision) {
  WatchCache cache(*store_, "pods", Clocked());
  for (const char* name : {"a", "b", "c", "d", "e"}) Put("ns", name);
  WatchCache::Query q;
  q.limit = 2;
  auto page1 = cache.List(q);
  ASSERT_TRUE(page1.ok());
  EXPECT_EQ(Names(*page1), (std::vector<std::string>{"ns/a", "ns/b"}));
  EXPECT_TRUE(page1->more);
  EXPECT_EQ(page1->remaining, 3);
  // Meanwhile: c goes, bb comes, d moves to a node.
  ASSERT_TRUE(store_->Delete("pods", "ns", "c", 0).ok());
  Put("ns", "bb");
  Put("ns", "d", "n1");
  q.revision = page1->revision;
  q.from = WatchCache::Key{"ns", std::string("b") + '\0'};
  auto page2 = cache.List(q);
  ASSERT_TRUE(page2.ok()) << page2.status().message();
  EXPECT_EQ(Names(*page2), (std::vector<std::string>{"ns/c", "ns/d"}));
  EXPECT_EQ(NodeOf(*page2->items[1]), "");  // d as it was
  EXPECT_EQ(page2->revision, page1->revision);
  q.from = WatchCache::Key{"ns", std::string("d") + '\0'};
  auto page3 = cache.List(q);
  ASSERT_TRUE(page3.ok());
  EXPECT_EQ(Names(*page3), (std::vector<std::string>{"ns/e"}));
  EXPECT_FALSE(page3->more);
  // The latest state has the changes.
  auto latest = cache.List({});
  EXPECT_EQ(Names(*latest), (std::vector<std::string>{"ns/a", "ns/b", "ns/bb", "ns/d", "ns/e"}));
  EXPECT_EQ(NodeOf(*latest->items[3]), "n1");
}

TEST_P(WatchCacheTest, APagedListsRevisionIsReadableForTheHistoryThenGoneAndALaterOneOutOfRange) {
  WatchCache cache(*store_, "pods", Clocked());
  Put("ns", "a");
  Put("ns", "b");
  WatchCache::Query first_page;
  first_page.limit = 1;
  auto first = cache.List(first_page);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->more);  // pins its revision
  Put("ns", "a", "n1");
  WatchCache::Query at_first;
  at_first.revision = first->revision;
  auto then = cache.List(at_first);
  ASSERT_TRUE(then.ok()) << then.status().message();
  EXPECT_EQ(Names(*then), (std::vector<std::string>{"ns/a", "ns/b"}));
  EXPECT_EQ(NodeOf(*then->items[0]), "");
  now_ += 6 * 60 * 1000;  // past the history
  Put("ns", "c");
  EXPECT_EQ(cache.List(at_first).status().code(), StatusCode::kGone);
  WatchCache::Query later;
  later.revision = *store_->Revision() + 10;
  EXPECT_EQ(cache.List(later).status().code(), StatusCode::kOutOfRange);
  WatchCache::Query not_older;
  not_older.min_revision = *store_->Revision() + 1;
  EXPECT_EQ(cache.List(not_older).status().code(), StatusCode::kOutOfRange);
}

TEST_P(WatchCacheTest, WithNothingPinnedOnlyEachObjectsCurrentVersionIsHeld) {
  WatchCache cache(*store_, "pods", Clocked());
  Put("ns", "a");
  Put("ns", "b");
  auto whole = cache.List({});  // read whole: nothing to pin
  ASSERT_TRUE(whole.ok());
  EXPECT_FALSE(whole->more);
  for (int i = 0; i < 10; ++i) Put("ns", "a", "n" + std::to_string(i));
  ASSERT_TRUE(store_->Delete("pods", "ns", "b", 0).ok());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(cache.keys(), 1u);
  EXPECT_EQ(cache.versions(), 1u);
  // An unpinned older revision is not readable.
  WatchCache::Query at_whole;
  at_whole.revision = whole->revision;
  EXPECT_EQ(cache.List(at_whole).status().code(), StatusCode::kGone);
}

TEST_P(WatchCacheTest, OldVersionsAndDeletedKeysGoWhenThePinsHoldingThemExpire) {
  WatchCache cache(*store_, "pods", Clocked());
  Put("ns", "a");
  Put("ns", "b");
  WatchCache::Query paged;
  paged.limit = 1;
  ASSERT_TRUE(cache.List(paged)->more);
  for (int i = 0; i < 10; ++i) Put("ns", "a", "n" + std::to_string(i));
  ASSERT_TRUE(store_->Delete("pods", "ns", "b", 0).ok());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(cache.keys(), 2u);
  EXPECT_EQ(cache.versions(), 2u + 10u + 1u);
  now_ += 6 * 60 * 1000;
  Put("ns", "c");
  ASSERT_TRUE(cache.Sync().ok());
  // a's current version and c: the other versions and b's deletion are gone with the pin.
  EXPECT_EQ(cache.keys(), 2u);
  EXPECT_EQ(cache.versions(), 2u);
}

TEST_P(WatchCacheTest, TooManyOldVersionsReleaseThePins) {
  WatchCache::Options options = Clocked();
  options.max_old_versions = 5;
  WatchCache cache(*store_, "pods", options);
  Put("ns", "a");
  Put("ns", "b");
  WatchCache::Query paged;
  paged.limit = 1;
  auto first = cache.List(paged);
  ASSERT_TRUE(first->more);
  for (int i = 0; i < 10; ++i) Put("ns", "a", "n" + std::to_string(i));
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(cache.versions(), 2u);
  WatchCache::Query at_first;
  at_first.revision = first->revision;
  EXPECT_EQ(cache.List(at_first).status().code(), StatusCode::kGone);
}

TEST_P(WatchCacheTest, AnIndexedListReadsTheObjectsUnderItsValueAndFollowsChanges) {
  WatchCache cache(*store_, "pods");
  int calls = 0;
  ASSERT_TRUE(cache.AddIndex("node", [&calls](const Object& o) {
                     ++calls;
                     return std::vector<std::string>{NodeOf(o)};
                   }).ok());
  Put("ns", "a", "n1");
  Put("ns", "b");
  Put("ns", "c", "n2");
  WatchCache::Query unbound;
  unbound.index = {"node", ""};
  unbound.match = [](const Object& o) { return NodeOf(o).empty(); };
  EXPECT_EQ(Names(*cache.List(unbound)), (std::vector<std::string>{"ns/b"}));
  Put("ns", "b", "n1");
  Put("ns", "a");
  EXPECT_EQ(Names(*cache.List(unbound)), (std::vector<std::string>{"ns/a"}));
  WatchCache::Query on_n1 = unbound;
  on_n1.index = {"node", "n1"};
  on_n1.match = [](const Object& o) { return NodeOf(o) == "n1"; };
  EXPECT_EQ(Names(*cache.List(on_n1)), (std::vector<std::string>{"ns/b"}));
  // Indexes come before the first list.
  EXPECT_EQ(cache.AddIndex("late", [](const Object&) { return std::vector<std::string>{}; }).code(),
            StatusCode::kInvalidArgument);
  WatchCache::Query unknown;
  unknown.index = {"nope", "x"};
  EXPECT_EQ(cache.List(unknown).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(WatchCacheTest, AFullFilteredPageSaysMoreWhenAnyObjectFollowsMatchingOrNot) {
  WatchCache cache(*store_, "pods");
  Put("ns", "a", "n1");
  Put("ns", "b", "n1");
  Put("ns", "c");
  WatchCache::Query q;
  q.limit = 2;
  q.match = [](const Object& o) { return NodeOf(o) == "n1"; };
  auto page = cache.List(q);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(Names(*page), (std::vector<std::string>{"ns/a", "ns/b"}));
  EXPECT_TRUE(page->more);        // c follows, though it does not match (as upstream's cacher)
  EXPECT_EQ(page->remaining, 0);  // not counted for a filtered list
  q.limit = 3;
  page = cache.List(q);
  EXPECT_FALSE(page->more);
}

TEST_P(WatchCacheTest, PageOfPagesAStoresListAsTheCachePagesItsOwn) {
  WatchCache cache(*store_, "pods");
  for (const char* ns : {"x", "y"}) {
    for (const char* name : {"a", "b", "c"}) Put(ns, name, name[0] == 'b' ? "n1" : "");
  }
  auto list = store_->List("pods", "");
  ASSERT_TRUE(list.ok());
  std::vector<ObjectPtr> items;
  for (Object& o : list->items) items.push_back(std::make_shared<const Object>(std::move(o)));
  for (size_t limit : {0, 1, 2, 4}) {
    for (const std::string ns : {"", "y"}) {
      WatchCache::Query q;
      q.ns = ns;
      q.limit = limit;
      q.from = WatchCache::Key{ns.empty() ? "x" : "y", std::string("a") + '\0'};
      auto cached = cache.List(q);
      ASSERT_TRUE(cached.ok());
      WatchCache::Page paged = PageOf(ns.empty() ? items : std::vector<ObjectPtr>(items.begin() + 3, items.end()),
                                      list->revision, q);
      EXPECT_EQ(Names(paged), Names(*cached)) << "limit " << limit << " ns " << ns;
      EXPECT_EQ(paged.more, cached->more);
      EXPECT_EQ(paged.remaining, cached->remaining);
    }
  }
}

std::string CacheBackendName(const testing::TestParamInfo<CacheBackend>& p) { return p.param.name; }

INSTANTIATE_TEST_SUITE_P(
    Backends, WatchCacheTest,
    testing::Values(
        CacheBackend{"Memory", [](const fs::path&) -> StatusOr<std::unique_ptr<Store>> { return NewMemoryStore(); }},
        CacheBackend{"Sqlite", [](const fs::path& dir) { return OpenSqliteStore((dir / "state.db").string()); }},
        CacheBackend{"GroupCommitOverSqlite",
                     [](const fs::path& dir) -> StatusOr<std::unique_ptr<Store>> {
                       auto sqlite = OpenSqliteStore((dir / "state.db").string());
                       if (!sqlite.ok()) return sqlite.status();
                       return std::unique_ptr<Store>(std::make_unique<GroupCommit>(std::move(*sqlite)));
                     }}),
    CacheBackendName);

TEST(WatchCache, AStoreWhoseWatchIsNotSynchronousIsRefused) {
  class Asynchronous : public Store {
   public:
    StatusOr<Object> Create(const std::string&, const std::string&, const std::string&, Json) override { return Internal("-"); }
    StatusOr<Object> Get(const std::string&, const std::string&, const std::string&) override { return Internal("-"); }
    StatusOr<Object> Update(const std::string&, const std::string&, const std::string&, Json, int64_t) override { return Internal("-"); }
    StatusOr<Object> Delete(const std::string&, const std::string&, const std::string&, int64_t) override { return Internal("-"); }
    StatusOr<ListResult> List(const std::string&, const std::string&) override { return ListResult{}; }
    StatusOr<std::unique_ptr<Watch>> WatchFrom(const std::string&, const std::string&, int64_t, WatchOptions) override {
      return Internal("-");
    }
    StatusOr<int64_t> Revision() override { return 0; }
    Status Compact(int64_t) override { return Status::Ok(); }
  } store;
  WatchCache cache(store, "pods");
  EXPECT_EQ(cache.List({}).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace arbiter::store
