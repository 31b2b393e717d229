// Tests of the state store: one behavioural suite run against every backend (memory, SQLite in a
// fresh temporary directory per test, and etcd under a fresh key prefix per test in one etcd
// server that the test binary starts), plus the SQLite store's durability and failure cases and
// the etcd store's revisions, compaction, timeouts and failover.
#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include "arbiter/base/json.h"
#include "testing/forwarding_store.h"

#include "arbiter/store/group_commit.h"
#include "arbiter/store/read_cache.h"
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

// "ADDED pods a/x 3": what a test compares events by. The revision is counted from `base` (the
// store's revision when the test began; 0 but for a store shared with earlier tests).
std::string Describe(const Event& e, int64_t base = 0) {
  const Object& o = e.object;
  return std::string(EventTypeName(e.type)) + " " + o.resource + " " + (o.ns.empty() ? "" : o.ns + "/") + o.name +
         " " + std::to_string(o.revision - base);
}

std::vector<std::string> Describe(const std::vector<Event>& events, int64_t base = 0) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(Describe(e, base));
  return out;
}

std::vector<std::string> Describe(const std::vector<EventPtr>& events, int64_t base = 0) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(Describe(*e, base));
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
    for (const auto& e : *r) out.push_back(*e);
  }
  auto more = w.Next(30ms);
  EXPECT_TRUE(more.ok()) << more.status().message();
  if (more.ok() && !more->empty()) ADD_FAILURE() << "unexpected further events, first: " << Describe(*more->front());
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
// The etcd server the etcd tests share.

// A loopback port nothing listens on (at the time of asking).
int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  if (fd >= 0) close(fd);
  return port;
}

// The etcd of this test binary: /usr/bin/etcd (or $ARBITER_TEST_ETCD), started on first use on
// free loopback ports with its data in a temporary directory, and killed at exit (and, should
// the binary die, by the kernel: PR_SET_PDEATHSIG). Tests share it, each under its own prefix.
class EtcdServer {
 public:
  static EtcdServer& Get() {
    static EtcdServer server;
    return server;
  }

  bool ok() const { return !endpoint_.empty(); }
  const std::string& endpoint() const { return endpoint_; }
  const std::string& error() const { return error_; }

  ~EtcdServer() {
    Kill();
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  EtcdServer(const EtcdServer&) = delete;
  EtcdServer& operator=(const EtcdServer&) = delete;

 private:
  EtcdServer() { Start(); }

  void Start() {
    const char* env = getenv("ARBITER_TEST_ETCD");
    const std::string bin = env != nullptr && *env != '\0' ? env : "/usr/bin/etcd";
    if (access(bin.c_str(), X_OK) != 0) {
      error_ = "cannot start etcd for the etcd store tests: " + bin +
               " is missing or not executable (install Debian's etcd-server, or set ARBITER_TEST_ETCD)";
      return;
    }
    std::string templ = (fs::temp_directory_path() / "arbiter-etcd-test-XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr) {
      error_ = "cannot start etcd for the etcd store tests: cannot create a temporary directory";
      return;
    }
    dir_ = templ;
    std::string why;
    for (int attempt = 0; attempt < 3; ++attempt) {
      const int client_port = FreeLoopbackPort();
      int peer_port = FreeLoopbackPort();
      while (peer_port == client_port) peer_port = FreeLoopbackPort();
      const std::string client = "http://127.0.0.1:" + std::to_string(client_port);
      const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port);
      const fs::path log = dir_ / ("etcd-" + std::to_string(attempt) + ".log");
      std::vector<std::string> args = {
          bin, "--name", "arbiter-test", "--data-dir", (dir_ / ("data-" + std::to_string(attempt))).string(),
          "--listen-client-urls", client, "--advertise-client-urls", client, "--listen-peer-urls", peer,
          "--initial-advertise-peer-urls", peer, "--initial-cluster", "arbiter-test=" + peer,
          "--initial-cluster-state", "new", "--heartbeat-interval", "20", "--election-timeout", "200",
          "--unsafe-no-fsync", "--logger", "zap", "--log-level", "warn"};
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      const pid_t parent = getpid();
      const pid_t pid = fork();
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        if (fd >= 0) {
          dup2(fd, 1);
          dup2(fd, 2);
        }
        execv(argv[0], argv.data());
        _exit(127);
      }
      if (fd >= 0) close(fd);
      if (pid < 0) {
        error_ = "cannot start etcd for the etcd store tests: fork failed";
        return;
      }
      pid_ = pid;
      const auto deadline = std::chrono::steady_clock::now() + 30s;
      while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          break;
        }
        httplib::Client c(client);
        c.set_connection_timeout(200ms);
        c.set_read_timeout(1s);
        auto r = c.Get("/health");
        if (r && r->status == 200 && r->body.find("\"true\"") != std::string::npos) {
          endpoint_ = client;
          return;
        }
        std::this_thread::sleep_for(50ms);
      }
      why = pid_ > 0 ? "it did not report healthy within 30 s" : "it exited";
      Kill();
      std::string out = ReadFile(log);
      if (out.size() > 2000) out = "..." + out.substr(out.size() - 2000);
      why += "; its output:\n" + out;
    }
    error_ = "cannot start etcd for the etcd store tests (" + bin + ", 3 attempts): " + why;
  }

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 50; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(100ms);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  pid_t pid_ = -1;
  fs::path dir_;
  std::string endpoint_;
  std::string error_;
};

// ---------------------------------------------------------------------------------------------
// The suite every backend must pass.

struct Backend {
  std::string name;
  // Opens the backend's store in `dir` (a fresh directory per test), keeping `history` events.
  std::function<StatusOr<std::unique_ptr<Store>>(const fs::path& dir, size_t history)> open;
  // Its store starts empty at revision 0. Otherwise (etcd: one server for every test of the
  // binary, a fresh key prefix per test) the store's revisions are shared with earlier tests, and
  // the suite counts revisions from the store's revision when the test began.
  bool starts_at_revision_zero = true;
};

void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }

class StoreTest : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    Reopen(kDefaultWatchHistory);
    if (store_ == nullptr) return;
    auto rev = store_->Revision();
    ASSERT_TRUE(rev.ok()) << rev.status().message();
    base_ = *rev;
    if (GetParam().starts_at_revision_zero) {
      ASSERT_EQ(base_, 0);
    }
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

  // The store revision `n` writes after the test began, and as a resourceVersion.
  int64_t R(int64_t n) const { return base_ + n; }
  std::string RV(int64_t n) const { return std::to_string(R(n)); }
  // The events `w` delivers (see Drain), described with revisions counted from the test's start.
  std::vector<std::string> Seen(Watch& w, size_t n) const { return Describe(Drain(w, n), base_); }

  fs::path dir_;
  std::unique_ptr<Store> store_;
  int64_t base_ = 0;
};

TEST_P(StoreTest, CreateThenGetReturnsTheStoredObject) {
  ASSERT_OK_AND_ASSIGN(created, store_->Create("pods", "default", "web", Body(7)));
  EXPECT_EQ(created.resource, "pods");
  EXPECT_EQ(created.ns, "default");
  EXPECT_EQ(created.name, "web");
  EXPECT_EQ(created.revision, R(1));
  EXPECT_EQ((*created.body.tree())["spec"]["v"], 7);

  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "default", "web"));
  EXPECT_EQ(got.revision, R(1));
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
  EXPECT_EQ((*got.body.tree())["spec"]["v"], 1);
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, R(1));
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
  EXPECT_EQ(rev, R(0));
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
  EXPECT_EQ(rev, R(1));
}

TEST_P(StoreTest, ResourceVersionInTheBodyIsTheObjectRevision) {
  // A body without metadata gets it; a stale resourceVersion from the caller is overwritten.
  MustCreate("nodes", "", "n1", 1);
  ASSERT_OK_AND_ASSIGN(created, store_->Create("pods", "default", "web",
                                               Json{{"metadata", {{"name", "web"}, {"resourceVersion", "999"}}}}));
  EXPECT_EQ(created.revision, R(2));
  EXPECT_EQ((*created.body.tree())["metadata"]["resourceVersion"], RV(2));
  EXPECT_EQ((*created.body.tree())["metadata"]["name"], "web");
  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "default", "web"));
  EXPECT_EQ((*got.body.tree())["metadata"]["resourceVersion"], RV(2));

  ASSERT_OK_AND_ASSIGN(updated, store_->Update("pods", "default", "web", Body(5), 0));
  EXPECT_EQ((*updated.body.tree())["metadata"]["resourceVersion"], RV(3));
  ASSERT_OK_AND_ASSIGN(got2, store_->Get("pods", "default", "web"));
  EXPECT_EQ((*got2.body.tree())["metadata"]["resourceVersion"], RV(3));
  ASSERT_OK_AND_ASSIGN(list, store_->List("pods", ""));
  ASSERT_EQ(list.items.size(), 1u);
  EXPECT_EQ((*list.items[0].body.tree())["metadata"]["resourceVersion"], RV(3));
}

// ---- Batches

WriteOp Op(WriteOp::Kind kind, const std::string& name, int v, int64_t expected_revision = 0) {
  WriteOp op;
  op.kind = kind;
  op.resource = "pods";
  op.ns = "a";
  op.name = name;
  if (kind != WriteOp::Kind::kDelete) op.body = Body(v);
  op.expected_revision = expected_revision;
  return op;
}

// Names and types of the events `w` delivers, without revisions (etcd gives the ops of one
// transaction one revision; the in-process backends one each).
std::vector<std::string> SeenNames(Watch& w, size_t n) {
  std::vector<std::string> out;
  for (const Event& e : Drain(w, n)) out.push_back(std::string(EventTypeName(e.type)) + " " + e.object.name);
  return out;
}

TEST_P(StoreTest, ApplyWritesEachOpInOrderWithAnEventOfItsOwn) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(0)));
  std::vector<StatusOr<ObjectPtr>> first =
      store_->Apply({Op(WriteOp::Kind::kCreate, "x", 1), Op(WriteOp::Kind::kCreate, "y", 1)});
  ASSERT_EQ(first.size(), 2u);
  ASSERT_TRUE(first[0].ok()) << first[0].status().message();
  ASSERT_TRUE(first[1].ok()) << first[1].status().message();
  EXPECT_GE((*first[1])->revision, (*first[0])->revision);
  std::vector<StatusOr<ObjectPtr>> second = store_->Apply(
      {Op(WriteOp::Kind::kUpdate, "x", 2, (*first[0])->revision), Op(WriteOp::Kind::kDelete, "y", 0, (*first[1])->revision)});
  ASSERT_EQ(second.size(), 2u);
  ASSERT_TRUE(second[0].ok()) << second[0].status().message();
  ASSERT_TRUE(second[1].ok()) << second[1].status().message();
  EXPECT_GT((*second[0])->revision, (*first[1])->revision);
  EXPECT_EQ((*(*second[0])->body.tree())["spec"]["v"], 2);
  EXPECT_EQ((*(*second[0])->body.tree())["metadata"]["resourceVersion"], std::to_string((*second[0])->revision));
  EXPECT_EQ(SeenNames(*w, 4), (std::vector<std::string>{"ADDED x", "ADDED y", "MODIFIED x", "DELETED y"}));
  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "a", "x"));
  EXPECT_EQ(got.revision, (*second[0])->revision);
  EXPECT_CODE(store_->Get("pods", "a", "y"), StatusCode::kNotFound);
}

// A watch resumed from an event's revision sees every later event only if no two writes share a
// revision: Apply never batches writes into one revision, on any backend.
TEST_P(StoreTest, ApplyGivesEachOpARevisionOfItsOwnInOrder) {
  std::vector<WriteOp> ops;
  for (int i = 0; i < 5; ++i) ops.push_back(Op(WriteOp::Kind::kCreate, "p" + std::to_string(i), i));
  std::vector<StatusOr<ObjectPtr>> r = store_->Apply(std::move(ops));
  ASSERT_EQ(r.size(), 5u);
  for (size_t i = 0; i < r.size(); ++i) {
    ASSERT_TRUE(r[i].ok()) << r[i].status().message();
    EXPECT_EQ((*r[i])->revision, (*r[0])->revision + static_cast<int64_t>(i));
  }
}

TEST_P(StoreTest, ApplyFailsOnlyTheOpsWhosePreconditionsFail) {
  MustCreate("pods", "a", "x", 1);  // 1
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(1)));
  std::vector<WriteOp> ops = {Op(WriteOp::Kind::kCreate, "x", 9),                // exists
                              Op(WriteOp::Kind::kUpdate, "x", 2, R(1)),          // applies: 2
                              Op(WriteOp::Kind::kUpdate, "x", 3, R(1)),          // stale now
                              Op(WriteOp::Kind::kDelete, "missing", 0),          // absent
                              Op(WriteOp::Kind::kCreate, "", 1),                 // no name
                              Op(WriteOp::Kind::kCreate, "z", 4)};               // applies: 3
  std::vector<StatusOr<ObjectPtr>> r = store_->Apply(std::move(ops));
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].status().code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(r[1].ok()) << r[1].status().message();
  EXPECT_EQ((*r[1])->revision, R(2));
  EXPECT_EQ(r[2].status().code(), StatusCode::kConflict);
  EXPECT_EQ(r[3].status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r[4].status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(r[5].ok()) << r[5].status().message();
  EXPECT_EQ((*r[5])->revision, R(3));
  EXPECT_EQ(Seen(*w, 2), (std::vector<std::string>{"MODIFIED pods a/x 2", "ADDED pods a/z 3"}));
  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "a", "x"));
  EXPECT_EQ((*got.body.tree())["spec"]["v"], 2);
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, R(3));
}

// The deletion's event is the version the delete carries, stamped with the deletion's revision
// (from its text where it has one: the same bytes as the stamped tree's).
TEST_P(StoreTest, ADeleteCarryingTheBodyItWasMadeOnDeletesOnlyThatRevision) {
  MustCreate("pods", "a", "x", 1);
  ASSERT_OK_AND_ASSIGN(x, store_->Get("pods", "a", "x"));
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", x.revision));
  WriteOp stale = Op(WriteOp::Kind::kDelete, "x", 0, x.revision);
  stale.known = x.body;
  WriteOp current = stale;
  std::vector<WriteOp> ops = {Op(WriteOp::Kind::kUpdate, "x", 2, x.revision), std::move(stale)};
  std::vector<StatusOr<ObjectPtr>> r = store_->Apply(std::move(ops));
  ASSERT_TRUE(r[0].ok()) << r[0].status().message();
  EXPECT_EQ(r[1].status().code(), StatusCode::kConflict);  // the body it carries is not the stored one
  current.expected_revision = (*r[0])->revision;
  current.known = (*r[0])->body;
  (void)current.known.shared_text();  // a version with its text, as a stored one has
  r = store_->Apply({std::move(current)});
  ASSERT_TRUE(r[0].ok()) << r[0].status().message();
  EXPECT_EQ((*(*r[0])->body.tree())["spec"]["v"], 2);
  EXPECT_EQ((*(*r[0])->body.tree())["metadata"]["resourceVersion"], std::to_string((*r[0])->revision));
  std::vector<Event> events = Drain(*w, 2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].type, EventType::kDeleted);
  EXPECT_EQ((*events[1].object.body.tree())["spec"]["v"], 2);
  EXPECT_EQ((*events[1].object.body.tree())["metadata"]["resourceVersion"], std::to_string(events[1].object.revision));
  EXPECT_EQ(*events[1].object.body.shared_text(), events[1].object.body.tree()->dump());
  EXPECT_CODE(store_->Get("pods", "a", "x"), StatusCode::kNotFound);
}

TEST_P(StoreTest, ApplyOfNothingWritesNothing) {
  EXPECT_TRUE(store_->Apply({}).empty());
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, R(0));
}

TEST_P(StoreTest, UpdateWithTheCurrentRevisionSucceeds) {
  Object o = MustCreate("pods", "default", "web", 1);
  ASSERT_OK_AND_ASSIGN(updated, store_->Update("pods", "default", "web", Body(2), o.revision));
  EXPECT_EQ(updated.revision, R(2));
  EXPECT_EQ((*updated.body.tree())["spec"]["v"], 2);
  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "default", "web"));
  EXPECT_EQ(got.revision, R(2));
  EXPECT_EQ((*got.body.tree())["spec"]["v"], 2);
}

TEST_P(StoreTest, UpdateWithStaleRevisionIsAConflict) {
  Object o = MustCreate("pods", "default", "web", 1);
  ASSERT_OK(store_->Update("pods", "default", "web", Body(2), o.revision).status());
  auto r = store_->Update("pods", "default", "web", Body(3), o.revision);
  ASSERT_EQ(r.status().code(), StatusCode::kConflict);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("pods \"default/web\""), std::string::npos) << m;
  EXPECT_NE(m.find("expected revision " + RV(1)), std::string::npos) << m;
  EXPECT_NE(m.find("revision " + RV(2)), std::string::npos) << m;
  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "default", "web"));
  EXPECT_EQ((*got.body.tree())["spec"]["v"], 2);
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, R(2));
}

TEST_P(StoreTest, UnconditionalUpdateReplacesWhateverIsStored) {
  MustCreate("pods", "default", "web", 1);
  ASSERT_OK(store_->Update("pods", "default", "web", Body(2), 0).status());
  ASSERT_OK_AND_ASSIGN(updated, store_->Update("pods", "default", "web", Body(3), 0));
  EXPECT_EQ(updated.revision, R(3));
  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "default", "web"));
  EXPECT_EQ((*got.body.tree())["spec"]["v"], 3);
}

TEST_P(StoreTest, UpdateOfAMissingObjectIsNotFound) {
  EXPECT_CODE(store_->Update("pods", "default", "ghost", Body(1), 0), StatusCode::kNotFound);
  EXPECT_CODE(store_->Update("pods", "default", "ghost", Body(1), 4), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, R(0));
}

TEST_P(StoreTest, DeleteReturnsTheLastStateAtTheDeletionRevisionAndGetIsNotFoundAfter) {
  MustCreate("pods", "default", "web", 1);
  ASSERT_OK(store_->Update("pods", "default", "web", Body(2), 0).status());
  ASSERT_OK_AND_ASSIGN(deleted, store_->Delete("pods", "default", "web", 0));
  EXPECT_EQ(deleted.revision, R(3));
  EXPECT_EQ(deleted.name, "web");
  EXPECT_EQ((*deleted.body.tree())["spec"]["v"], 2);
  EXPECT_EQ((*deleted.body.tree())["metadata"]["resourceVersion"], RV(3));
  EXPECT_CODE(store_->Get("pods", "default", "web"), StatusCode::kNotFound);
  EXPECT_CODE(store_->Delete("pods", "default", "web", 0), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, R(3));
  // The name can be used again, at a new revision.
  ASSERT_OK_AND_ASSIGN(again, store_->Create("pods", "default", "web", Body(9)));
  EXPECT_EQ(again.revision, R(4));
}

TEST_P(StoreTest, DeleteWithStaleRevisionIsAConflictAndKeepsTheObject) {
  Object o = MustCreate("pods", "default", "web", 1);
  ASSERT_OK(store_->Update("pods", "default", "web", Body(2), 0).status());
  auto r = store_->Delete("pods", "default", "web", o.revision);
  ASSERT_EQ(r.status().code(), StatusCode::kConflict);
  EXPECT_NE(r.status().message().find("pods \"default/web\""), std::string::npos) << r.status().message();
  ASSERT_OK_AND_ASSIGN(got, store_->Get("pods", "default", "web"));
  EXPECT_EQ(got.revision, R(2));
}

TEST_P(StoreTest, DeleteWithTheCurrentRevisionSucceeds) {
  MustCreate("pods", "default", "web", 1);
  ASSERT_OK_AND_ASSIGN(updated, store_->Update("pods", "default", "web", Body(2), 0));
  ASSERT_OK_AND_ASSIGN(deleted, store_->Delete("pods", "default", "web", updated.revision));
  EXPECT_EQ(deleted.revision, R(3));
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
  EXPECT_EQ((*list.items[0].body.tree())["spec"]["v"], 4);
}

TEST_P(StoreTest, ListSortsANamespaceBeforeTheLongerNamespacesItPrefixes) {
  // In byte order "a-b/" and "a.b/" come before "a/": a backend that sorts keys must not leak that.
  MustCreate("pods", "a-b", "x", 1);
  MustCreate("pods", "ab", "w", 2);
  MustCreate("pods", "a", "y", 3);
  MustCreate("pods", "a.b", "z", 4);
  MustCreate("pods", "a", "b", 5);
  ASSERT_OK_AND_ASSIGN(list, store_->List("pods", ""));
  std::vector<std::string> keys;
  for (const auto& o : list.items) keys.push_back(o.ns + "/" + o.name);
  EXPECT_EQ(keys, (std::vector<std::string>{"a/b", "a/y", "a-b/x", "a.b/z", "ab/w"}));
  ASSERT_OK_AND_ASSIGN(in_a, store_->List("pods", "a"));
  keys.clear();
  for (const auto& o : in_a.items) keys.push_back(o.ns + "/" + o.name);
  EXPECT_EQ(keys, (std::vector<std::string>{"a/b", "a/y"}));
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
  EXPECT_EQ(in_a.revision, R(5));

  ASSERT_OK_AND_ASSIGN(all, store_->List("pods", ""));
  ASSERT_EQ(all.items.size(), 2u);
  EXPECT_EQ(all.items[0].name, "x");
  EXPECT_EQ(all.items[1].name, "y");
  EXPECT_EQ(all.revision, R(5));

  ASSERT_OK_AND_ASSIGN(none, store_->List("pods", "c"));
  EXPECT_TRUE(none.items.empty());
  EXPECT_EQ(none.revision, R(5));

  ASSERT_OK_AND_ASSIGN(nodes, store_->List("nodes", ""));
  ASSERT_EQ(nodes.items.size(), 1u);
  EXPECT_EQ(nodes.items[0].revision, R(4));
}

TEST_P(StoreTest, RevisionsIncreaseStrictlyAcrossResources) {
  ASSERT_OK_AND_ASSIGN(empty_rev, store_->Revision());
  EXPECT_EQ(empty_rev, R(0));
  std::vector<int64_t> revs;
  revs.push_back(MustCreate("pods", "default", "a", 1).revision);
  revs.push_back(MustCreate("nodes", "", "n1", 1).revision);
  ASSERT_OK_AND_ASSIGN(u, store_->Update("pods", "default", "a", Body(2), 0));
  revs.push_back(u.revision);
  revs.push_back(MustCreate("priorityclasses", "", "high", 1).revision);
  ASSERT_OK_AND_ASSIGN(d, store_->Delete("nodes", "", "n1", 0));
  revs.push_back(d.revision);
  EXPECT_EQ(revs, (std::vector<int64_t>{R(1), R(2), R(3), R(4), R(5)}));
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, R(5));
}

TEST_P(StoreTest, WatchDeliversAddedModifiedDeletedInRevisionOrder) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(0)));
  MustCreate("pods", "default", "web", 1);
  MustCreate("pods", "default", "db", 1);
  ASSERT_OK(store_->Update("pods", "default", "web", Body(2), 0).status());
  ASSERT_OK(store_->Delete("pods", "default", "db", 0).status());
  ASSERT_OK(store_->Delete("pods", "default", "web", 0).status());

  auto events = Drain(*w, 5);
  EXPECT_EQ(Describe(events, base_), (std::vector<std::string>{"ADDED pods default/web 1", "ADDED pods default/db 2",
                                                        "MODIFIED pods default/web 3", "DELETED pods default/db 4",
                                                        "DELETED pods default/web 5"}));
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ((*events[2].object.body.tree())["spec"]["v"], 2);
  EXPECT_EQ((*events[2].object.body.tree())["metadata"]["resourceVersion"], RV(3));
  // A deletion carries the object as last stored, at the deletion's revision.
  EXPECT_EQ((*events[4].object.body.tree())["spec"]["v"], 2);
  EXPECT_EQ((*events[4].object.body.tree())["metadata"]["resourceVersion"], RV(5));
}

// An informer waives the deleted bodies (it drops a deleted object by key): it still sees every
// event in order, and every change with its body; only a deletion may come without one.
TEST_P(StoreTest, AWatchThatWaivesDeletedBodiesSeesEveryEventAndEveryChangesBody) {
  WatchOptions waived;
  waived.deleted_bodies = false;
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(0), waived));
  MustCreate("pods", "default", "web", 1);
  ASSERT_OK(store_->Update("pods", "default", "web", Body(2), 0).status());
  ASSERT_OK(store_->Delete("pods", "default", "web", 0).status());

  auto events = Drain(*w, 3);
  EXPECT_EQ(Describe(events, base_), (std::vector<std::string>{"ADDED pods default/web 1", "MODIFIED pods default/web 2",
                                                        "DELETED pods default/web 3"}));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ((*events[0].object.body.tree())["spec"]["v"], 1);
  EXPECT_EQ((*events[1].object.body.tree())["spec"]["v"], 2);
  EXPECT_EQ((*events[1].object.body.tree())["metadata"]["resourceVersion"], RV(2));
  EXPECT_TRUE(events[2].object.body->is_object());
}

TEST_P(StoreTest, WatchWithANamespaceSeesOnlyThatNamespace) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "a", R(0)));
  MustCreate("pods", "a", "x", 1);
  MustCreate("pods", "b", "y", 1);
  MustCreate("pods", "a", "z", 1);
  ASSERT_OK(store_->Update("pods", "b", "y", Body(2), 0).status());
  ASSERT_OK(store_->Delete("pods", "a", "x", 0).status());
  EXPECT_EQ(Seen(*w, 3),
            (std::vector<std::string>{"ADDED pods a/x 1", "ADDED pods a/z 3", "DELETED pods a/x 5"}));
}

TEST_P(StoreTest, WatchOfANamespaceIgnoresTheLongerNamespacesItPrefixes) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "a", R(0)));
  MustCreate("pods", "ab", "x", 1);
  MustCreate("pods", "a-b", "x", 1);
  MustCreate("pods", "a", "x", 1);
  ASSERT_OK(store_->Delete("pods", "ab", "x", 0).status());
  EXPECT_EQ(Seen(*w, 1), (std::vector<std::string>{"ADDED pods a/x 3"}));
}

TEST_P(StoreTest, WatchSeesOnlyItsResource) {
  ASSERT_OK_AND_ASSIGN(nodes, store_->WatchFrom("nodes", "", R(0)));
  ASSERT_OK_AND_ASSIGN(pods, store_->WatchFrom("pods", "", R(0)));
  MustCreate("pods", "a", "x", 1);
  MustCreate("nodes", "", "n1", 1);
  MustCreate("pods", "b", "y", 1);
  MustCreate("podsx", "a", "w", 1);
  ASSERT_OK(store_->Delete("nodes", "", "n1", 0).status());
  EXPECT_EQ(Seen(*nodes, 2), (std::vector<std::string>{"ADDED nodes n1 2", "DELETED nodes n1 5"}));
  EXPECT_EQ(Seen(*pods, 2), (std::vector<std::string>{"ADDED pods a/x 1", "ADDED pods b/y 3"}));
}

TEST_P(StoreTest, WatchFromAMiddleRevisionSeesExactlyTheLaterEvents) {
  MustCreate("pods", "a", "x", 1);                                      // 1
  MustCreate("pods", "a", "y", 1);                                      // 2
  ASSERT_OK(store_->Update("pods", "a", "x", Body(2), 0).status());     // 3
  ASSERT_OK(store_->Update("pods", "a", "y", Body(2), 0).status());     // 4
  ASSERT_OK(store_->Delete("pods", "a", "x", 0).status());              // 5
  MustCreate("pods", "a", "z", 1);                                      // 6
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(3)));
  EXPECT_EQ(Seen(*w, 3),
            (std::vector<std::string>{"MODIFIED pods a/y 4", "DELETED pods a/x 5", "ADDED pods a/z 6"}));
  // It then carries on with new events.
  MustCreate("pods", "a", "q", 1);
  EXPECT_EQ(Seen(*w, 1), (std::vector<std::string>{"ADDED pods a/q 7"}));
}

TEST_P(StoreTest, WatchFromTheCurrentRevisionOfAnEmptyStoreSeesNewEvents) {
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", rev));
  auto none = w->Next(20ms);
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_TRUE(none->empty());
  MustCreate("pods", "a", "x", 1);
  EXPECT_EQ(Seen(*w, 1), (std::vector<std::string>{"ADDED pods a/x 1"}));
}

TEST_P(StoreTest, WatchFromTheListRevisionSeesOnlyLaterWrites) {
  MustCreate("pods", "a", "x", 1);
  MustCreate("pods", "a", "y", 1);
  ASSERT_OK_AND_ASSIGN(list, store_->List("pods", ""));
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", list.revision));
  ASSERT_OK(store_->Update("pods", "a", "x", Body(2), 0).status());
  EXPECT_EQ(Seen(*w, 1), (std::vector<std::string>{"MODIFIED pods a/x 3"}));
}

TEST_P(StoreTest, NextReturnsNothingWhenItTimesOut) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(0)));
  MustCreate("nodes", "", "n1", 1);  // not a pod: does not count
  const auto start = std::chrono::steady_clock::now();
  auto r = w->Next(50ms);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->empty());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 45ms);
}

TEST_P(StoreTest, BlockedNextWakesWhenAnotherThreadWrites) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(0)));
  StatusOr<std::vector<EventPtr>> got = std::vector<EventPtr>{};
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
  EXPECT_EQ(Describe(*got, base_), (std::vector<std::string>{"ADDED pods a/x 1"}));
  EXPECT_LT(waited, 5s);
}

TEST_P(StoreTest, StopUnblocksANextBlockedInAnotherThread) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(0)));
  StatusOr<std::vector<EventPtr>> got = std::vector<EventPtr>{};
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
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(0)));
  MustCreate("pods", "a", "x", 1);
  w->Stop();
  w->Stop();
  EXPECT_CODE(w->Next(10ms), StatusCode::kFailedPrecondition);
  // Other watches and the store carry on.
  ASSERT_OK_AND_ASSIGN(other, store_->WatchFrom("pods", "", R(0)));
  EXPECT_EQ(Seen(*other, 1), (std::vector<std::string>{"ADDED pods a/x 1"}));
}

TEST_P(StoreTest, WatchFromACompactedRevisionIsGone) {
  MustCreate("pods", "a", "x", 1);  // 1
  MustCreate("pods", "a", "y", 1);  // 2
  MustCreate("pods", "a", "z", 1);  // 3
  ASSERT_OK(store_->Compact(R(2)));
  auto r = store_->WatchFrom("pods", "", R(1));
  ASSERT_EQ(r.status().code(), StatusCode::kGone) << r.status().message();
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("from revision " + RV(1)), std::string::npos) << m;
  EXPECT_NE(m.find("oldest available revision is " + RV(3)), std::string::npos) << m;
  // From the compaction revision on, the history is complete.
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(2)));
  EXPECT_EQ(Seen(*w, 1), (std::vector<std::string>{"ADDED pods a/z 3"}));
}

// The backends that keep their watch history in the process, bounded by `history` (Memory and
// SQLite; etcd keeps its own). A compaction makes their watches that have not yet read the
// compacted events Gone, even events that happened while the watch was open (etcd streams events
// to an open watch as they happen, and a compaction does not take back those already streamed).
class InProcessHistoryStoreTest : public StoreTest {};

TEST_P(InProcessHistoryStoreTest, WatcherBehindACompactionGetsGoneFromNext) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(0)));
  MustCreate("pods", "a", "x", 1);
  MustCreate("pods", "a", "y", 1);
  ASSERT_OK(store_->Compact(R(2)));
  EXPECT_CODE(w->Next(10ms), StatusCode::kGone);
  EXPECT_CODE(w->Next(10ms), StatusCode::kGone);  // and stays so
}

TEST_P(StoreTest, CompactingEverythingStillAllowsWatchingFromTheCurrentRevision) {
  MustCreate("pods", "a", "x", 1);
  MustCreate("pods", "a", "y", 1);
  ASSERT_OK(store_->Compact(R(2)));
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(2)));
  MustCreate("pods", "a", "z", 1);
  EXPECT_EQ(Seen(*w, 1), (std::vector<std::string>{"ADDED pods a/z 3"}));
}

TEST_P(StoreTest, CompactOutsideTheKnownRevisionsIsOutOfRange) {
  MustCreate("pods", "a", "x", 1);
  EXPECT_EQ(store_->Compact(R(2)).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(store_->Compact(-1).code(), StatusCode::kOutOfRange);
  // Nothing was forgotten.
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(0)));
  EXPECT_EQ(Seen(*w, 1), (std::vector<std::string>{"ADDED pods a/x 1"}));
}

TEST_P(InProcessHistoryStoreTest, LaggingWatcherGetsGoneWhenTheHistoryBoundEvictsItsEvents) {
  Reopen(3);
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(0)));
  for (int i = 0; i < 5; ++i) MustCreate("pods", "a", "p" + std::to_string(i), i);
  auto r = w->Next(10ms);
  ASSERT_EQ(r.status().code(), StatusCode::kGone) << r.status().message();
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("after revision 0"), std::string::npos) << m;
  EXPECT_NE(m.find("oldest revision still kept is 3"), std::string::npos) << m;
}

TEST_P(InProcessHistoryStoreTest, WatchFromBeforeTheHistoryBoundIsGone) {
  Reopen(3);
  for (int i = 0; i < 5; ++i) MustCreate("pods", "a", "p" + std::to_string(i), i);
  EXPECT_CODE(store_->WatchFrom("pods", "", R(1)), StatusCode::kGone);
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(2)));
  EXPECT_EQ(Seen(*w, 3),
            (std::vector<std::string>{"ADDED pods a/p2 3", "ADDED pods a/p3 4", "ADDED pods a/p4 5"}));
}

TEST_P(StoreTest, WatcherThatKeepsUpIsNeverGoneUnderASmallHistoryBound) {
  Reopen(3);
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(0)));
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 3; ++i) MustCreate("pods", "a", "p" + std::to_string(round * 3 + i), 1);
    EXPECT_EQ(Drain(*w, 3).size(), 3u) << "round " << round;
  }
}

TEST_P(StoreTest, ConcurrentWritersGetUniqueGapFreeRevisions) {
  constexpr int kThreads = 4;
  constexpr int kObjectsPerThread = 25;  // each created and then updated: 2 writes
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(0)));
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
  for (int i = 0; i < kWrites; ++i) want[static_cast<size_t>(i)] = R(i + 1);
  EXPECT_EQ(revisions, want);
  ASSERT_OK_AND_ASSIGN(rev, store_->Revision());
  EXPECT_EQ(rev, R(kWrites));
  // The watch saw every write once, in revision order.
  auto events = Drain(*w, kWrites);
  ASSERT_EQ(events.size(), static_cast<size_t>(kWrites));
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].object.revision, R(static_cast<int64_t>(i + 1)));
}

// Writers racing on one object's revision: exactly one conditional update wins, the others are
// told Conflict, and each gets its own answer.
TEST_P(StoreTest, ConcurrentUpdatesOnOneRevisionHaveExactlyOneWinner) {
  constexpr int kThreads = 8;
  const Object o = MustCreate("pods", "a", "contested", 0);
  std::atomic<int> won{0}, conflicts{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto r = store_->Update("pods", "a", "contested", Body(t + 1), o.revision);
      if (r.ok()) {
        ++won;
      } else if (r.status().code() == StatusCode::kConflict) {
        ++conflicts;
      } else {
        ++other;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(conflicts.load(), kThreads - 1);
  EXPECT_EQ(other.load(), 0);
}

TEST_P(StoreTest, WatchOutlivingItsStoreEndsWithUnavailable) {
  ASSERT_OK_AND_ASSIGN(w, store_->WatchFrom("pods", "", R(0)));
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

// Reads of pods and nodes answered from informers over a SQLite store (what the API server's
// admission reads through): the same contract as the store itself.
Backend ReadCacheBackend() {
  return {"ReadCacheOverSqlite", [](const fs::path& dir, size_t history) -> StatusOr<std::unique_ptr<Store>> {
            auto sqlite = OpenSqliteStore((dir / "state.db").string(), false, history);
            if (!sqlite.ok()) return sqlite.status();
            return std::unique_ptr<Store>(
                std::make_unique<ReadCache>(std::move(*sqlite), std::set<std::string>{"pods", "nodes"}));
          }};
}

// Concurrent single writes committed in groups over a SQLite store (what `arbiter serve` writes
// through): the same contract as the store itself.
Backend GroupCommitBackend() {
  return {"GroupCommitOverSqlite", [](const fs::path& dir, size_t history) -> StatusOr<std::unique_ptr<Store>> {
            auto sqlite = OpenSqliteStore((dir / "state.db").string(), false, history);
            if (!sqlite.ok()) return sqlite.status();
            return std::unique_ptr<Store>(std::make_unique<GroupCommit>(std::move(*sqlite)));
          }};
}

// etcd: the binary's one etcd server, under a key prefix of the test's own (its temporary
// directory's path, so that Reopen finds the same objects).
Backend EtcdBackend() {
  Backend b{"Etcd", [](const fs::path& dir, size_t) -> StatusOr<std::unique_ptr<Store>> {
              EtcdServer& etcd = EtcdServer::Get();
              if (!etcd.ok()) return FailedPrecondition(etcd.error());
              EtcdOptions o;
              o.endpoints = {etcd.endpoint()};
              o.prefix = "/arbiter-test" + dir.string();
              return OpenEtcdStore(o);
            }};
  b.starts_at_revision_zero = false;
  return b;
}

std::string BackendName(const testing::TestParamInfo<Backend>& param_info) { return param_info.param.name; }

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest,
                         testing::Values(MemoryBackend(), SqliteBackend(), ReadCacheBackend(), GroupCommitBackend(),
                                         EtcdBackend()),
                         BackendName);
INSTANTIATE_TEST_SUITE_P(Backends, InProcessHistoryStoreTest,
                         testing::Values(MemoryBackend(), SqliteBackend(), ReadCacheBackend(), GroupCommitBackend()),
                         BackendName);

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

TEST_F(SqliteStoreTest, TheStoresFilesAreTheOwnersAloneEvenWhenFoundReadable) {
  const auto owner_only = fs::perms::owner_read | fs::perms::owner_write;
  {
    auto s = MustOpen();
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->Create("secrets", "ns", "s", {{"data", {{"k", "djE="}}}}).ok());
    for (const char* suffix : {"", "-wal"}) {
      const fs::path f = path_.string() + suffix;
      ASSERT_TRUE(fs::exists(f)) << f;
      EXPECT_EQ(fs::status(f).permissions() & fs::perms::all, owner_only) << f;
    }
  }
  // A file an older version left readable by others is narrowed when it is opened again.
  fs::permissions(path_, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  auto again = MustOpen();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(fs::status(path_).permissions() & fs::perms::all, owner_only);
}

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
  EXPECT_EQ((*x.body.tree())["spec"]["v"], 2);
  EXPECT_EQ((*x.body.tree())["metadata"]["resourceVersion"], "3");
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
  EXPECT_EQ((*x.body.tree())["spec"]["v"], 2);
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

TEST_F(SqliteStoreTest, ADamagedStoredBodyIsAnErrorNotACrashAndAnUpdateRepairsIt) {
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
  ASSERT_OK_AND_ASSIGN(rev, s->Revision());
  EXPECT_EQ(rev, 1);
  // A write checks the revision only (as etcd does), so an update repairs the object.
  ASSERT_OK(s->Update("pods", "a", "x", Body(2), 1).status());
  ASSERT_OK_AND_ASSIGN(repaired, s->Get("pods", "a", "x"));
  EXPECT_EQ((*repaired.body.tree())["spec"]["v"], 2);
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

// The checkpointer copies the WAL back into the database file while the store is open, so the
// WAL does not grow for as long as the server runs (it once did: its connection had never read
// the file, so SQLite treated every checkpoint as a no-op).
TEST_F(SqliteStoreTest, CheckpointsCopyTheWalIntoTheDatabaseWhileTheStoreIsOpen) {
  auto s = MustOpen();
  ASSERT_NE(s, nullptr);
  const std::string filler(2000, 'x');
  for (int i = 0; i < 3000; ++i) {  // about 6 MB of commits: past the 1000-page checkpoint threshold
    ASSERT_OK(s->Create("pods", "a", "p" + std::to_string(i), Json{{"spec", {{"v", i}, {"filler", filler}}}}).status());
  }
  // The checkpoint runs on a thread of its own: wait for the database file to hold the pages.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  uintmax_t db_bytes = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    db_bytes = fs::file_size(path_, ec);
    if (!ec && db_bytes > (uintmax_t{1} << 20)) break;
    ASSERT_OK(s->Create("nodes", "", "tick", Body(1)).status());  // a commit that may trigger the next one
    ASSERT_OK(s->Delete("nodes", "", "tick", 0).status());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GT(db_bytes, uintmax_t{1} << 20) << "the database file did not grow: nothing was checkpointed";
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

// ---------------------------------------------------------------------------------------------
// etcd only: etcd's revisions and compaction, timeouts and failover.

std::string Base64(const std::string& in) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = static_cast<unsigned char>(in[i]) << 16 | static_cast<unsigned char>(in[i + 1]) << 8 |
                       static_cast<unsigned char>(in[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(v >> shift) & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string Unbase64(const std::string& in) {
  std::string out;
  unsigned acc = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", c);
    if (c == '=' || c == '\0' || p == nullptr) break;
    acc = (acc << 6) | static_cast<unsigned>(p - "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

int64_t EtcdInt(const Json& j) {
  if (j.is_string()) return std::stoll(j.get<std::string>());
  return j.is_number_integer() ? j.get<int64_t>() : 0;
}

// A loopback listener that accepts connections (the kernel completes them) but never answers.
class SilentListener {
 public:
  SilentListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    socklen_t len = sizeof(addr);
    if (fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 && listen(fd_, 64) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      url_ = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
    }
  }
  ~SilentListener() {
    if (fd_ >= 0) close(fd_);
  }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  const std::string& url() const { return url_; }

 private:
  int fd_ = -1;
  std::string url_;
};

// A loopback TCP proxy to a port, whose connections the test can cut (as a network failure or
// an etcd restart would).
class TcpProxy {
 public:
  explicit TcpProxy(int target_port) : target_port_(target_port) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    socklen_t len = sizeof(addr);
    if (listen_fd_ >= 0 && bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
        listen(listen_fd_, 64) == 0 && getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      url_ = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
      acceptor_ = std::thread([this] { AcceptLoop(); });
    }
  }
  ~TcpProxy() {
    stop_ = true;
    if (acceptor_.joinable()) acceptor_.join();
    CutAll();
    for (auto& t : pumps_) t.join();
    if (listen_fd_ >= 0) close(listen_fd_);
  }
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  const std::string& url() const { return url_; }
  // Breaks every open connection; new ones are served as before.
  void CutAll() {
    std::lock_guard<std::mutex> lk(mu_);
    for (int fd : open_) shutdown(fd, SHUT_RDWR);
  }

 private:
  void AcceptLoop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const int client = accept(listen_fd_, nullptr, nullptr);
      if (client < 0) continue;
      const int upstream = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
      addr.sin_port = htons(static_cast<uint16_t>(target_port_));
      if (upstream < 0 || connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        close(client);
        if (upstream >= 0) close(upstream);
        continue;
      }
      std::lock_guard<std::mutex> lk(mu_);
      open_.push_back(client);
      open_.push_back(upstream);
      pumps_.emplace_back([this, client, upstream] { Pump(client, upstream); });
    }
  }

  // Copies both ways until either side ends or the proxy stops, then closes both.
  void Pump(int a, int b) {
    char buf[16384];
    bool done = false;
    while (!done && !stop_) {
      pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
      if (poll(p, 2, 50) <= 0) continue;
      for (int i = 0; i < 2 && !done; ++i) {
        if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        const int from = i == 0 ? a : b;
        const int to = i == 0 ? b : a;
        const ssize_t n = recv(from, buf, sizeof(buf), 0);
        if (n <= 0) {
          done = true;
          break;
        }
        for (ssize_t sent = 0; sent < n;) {
          const ssize_t w = send(to, buf + sent, static_cast<size_t>(n - sent), MSG_NOSIGNAL);
          if (w <= 0) {
            done = true;
            break;
          }
          sent += w;
        }
      }
    }
    std::lock_guard<std::mutex> lk(mu_);
    open_.erase(std::remove_if(open_.begin(), open_.end(), [&](int fd) { return fd == a || fd == b; }), open_.end());
    close(a);
    close(b);
  }

  const int target_port_;
  int listen_fd_ = -1;
  std::string url_;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> open_;  // guarded by mu_
  std::vector<std::thread> pumps_;  // guarded by mu_ while the acceptor runs
};

class EtcdStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    EtcdServer& etcd = EtcdServer::Get();
    ASSERT_TRUE(etcd.ok()) << etcd.error();
    endpoint_ = etcd.endpoint();
    static int runs = 0;  // a fresh prefix also when a test is repeated (--gtest_repeat)
    prefix_ = std::string("/arbiter-etcd-test/") + testing::UnitTest::GetInstance()->current_test_info()->name() +
              "-" + std::to_string(++runs);
  }

  // Options for the test's etcd under the test's prefix, logging into log_.
  EtcdOptions Options() {
    EtcdOptions o;
    o.endpoints = {endpoint_};
    o.prefix = prefix_;
    o.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lk(log_mu_);
      log_.push_back(line);
    };
    return o;
  }
  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lk(log_mu_);
    return log_;
  }
  std::string LogText() {
    std::string all;
    for (const auto& line : Log()) all += line + "\n";
    return all;
  }
  std::unique_ptr<Store> MustOpen(const EtcdOptions& o) {
    auto s = OpenEtcdStore(o);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(s).value() : nullptr;
  }

  // A request straight to etcd's JSON gateway, as another client would make it.
  Json Raw(const std::string& path, const Json& body) {
    httplib::Client c(endpoint_);
    c.set_connection_timeout(5s);
    c.set_read_timeout(5s);
    auto r = c.Post(path, body.dump(), "application/json");
    EXPECT_TRUE(r) << path << ": " << (r ? "" : httplib::to_string(r.error()));
    if (!r) return Json();
    EXPECT_EQ(r->status, 200) << path << ": " << r->body;
    return Json::parse(r->body, nullptr, false);
  }
  Json RawKv(const std::string& key) {
    Json r = Raw("/v3/kv/range", Json{{"key", Base64(key)}});
    return r.is_object() && r.contains("kvs") ? r["kvs"][0] : Json();
  }

  std::string endpoint_;
  std::string prefix_;
  std::mutex log_mu_;
  std::vector<std::string> log_;
};

TEST_F(EtcdStoreTest, RevisionsAreEtcdModRevisionsUnderTheDocumentedKeys) {
  auto s = MustOpen(Options());
  ASSERT_NE(s, nullptr);
  ASSERT_OK_AND_ASSIGN(x, s->Create("pods", "a", "x", Json{{"metadata", {{"name", "x"}, {"resourceVersion", "77"}}}}));
  ASSERT_OK_AND_ASSIGN(n1, s->Create("nodes", "", "n1", Body(1)));
  ASSERT_OK_AND_ASSIGN(x2, s->Update("pods", "a", "x", Body(2), x.revision));

  // PREFIX/RESOURCE/NAMESPACE/NAME, the revision being the key's mod_revision.
  Json kv = RawKv(prefix_ + "/pods/a/x");
  ASSERT_TRUE(kv.is_object()) << "no key " << prefix_ << "/pods/a/x";
  EXPECT_EQ(EtcdInt(kv["mod_revision"]), x2.revision);
  EXPECT_EQ(EtcdInt(kv["create_revision"]), x.revision);
  // The value is the body without the resourceVersion (which is the mod_revision).
  Json stored = Json::parse(Unbase64(kv["value"].get<std::string>()), nullptr, false);
  EXPECT_EQ(stored, Body(2)) << stored.dump();
  Json node = RawKv(prefix_ + "/nodes//n1");  // cluster-scoped: an empty namespace
  ASSERT_TRUE(node.is_object()) << "no key " << prefix_ << "/nodes//n1";
  EXPECT_EQ(EtcdInt(node["mod_revision"]), n1.revision);

  ASSERT_OK_AND_ASSIGN(got, s->Get("pods", "a", "x"));
  EXPECT_EQ(got.revision, x2.revision);
  EXPECT_EQ((*got.body.tree())["metadata"]["resourceVersion"], std::to_string(x2.revision));
  const int64_t header = EtcdInt(Raw("/v3/kv/range", Json{{"key", Base64("/")}})["header"]["revision"]);
  ASSERT_OK_AND_ASSIGN(rev, s->Revision());
  EXPECT_EQ(rev, header);
  ASSERT_OK_AND_ASSIGN(list, s->List("pods", ""));
  EXPECT_EQ(list.revision, header);

  // A write by another client is etcd's next revision, and the store reads it as such.
  Json put = Raw("/v3/kv/put", Json{{"key", Base64(prefix_ + "/pods/a/x")}, {"value", Base64(Body(3).dump())}});
  const int64_t put_revision = EtcdInt(put["header"]["revision"]);
  EXPECT_EQ(put_revision, header + 1);
  ASSERT_OK_AND_ASSIGN(again, s->Get("pods", "a", "x"));
  EXPECT_EQ(again.revision, put_revision);
  EXPECT_EQ((*again.body.tree())["spec"]["v"], 3);
  EXPECT_EQ((*again.body.tree())["metadata"]["resourceVersion"], std::to_string(put_revision));
  EXPECT_CODE(s->Update("pods", "a", "x", Body(4), x2.revision), StatusCode::kConflict);
}

// A watch that waives deleted bodies does not ask etcd for previous values: its deletion comes
// without the object, where a default watch's carries it.
TEST_F(EtcdStoreTest, AWatchWaivingDeletedBodiesAsksEtcdForNoPreviousValues) {
  auto s = MustOpen(Options());
  ASSERT_NE(s, nullptr);
  ASSERT_OK_AND_ASSIGN(x, s->Create("pods", "a", "x", Body(1)));
  WatchOptions waived;
  waived.deleted_bodies = false;
  ASSERT_OK_AND_ASSIGN(lean, s->WatchFrom("pods", "", x.revision, waived));
  ASSERT_OK_AND_ASSIGN(full, s->WatchFrom("pods", "", x.revision));
  ASSERT_OK(s->Delete("pods", "a", "x", 0).status());
  auto lean_events = Drain(*lean, 1);
  auto full_events = Drain(*full, 1);
  ASSERT_EQ(lean_events.size(), 1u);
  ASSERT_EQ(full_events.size(), 1u);
  EXPECT_EQ(lean_events[0].type, EventType::kDeleted);
  EXPECT_FALSE(lean_events[0].object.body->contains("spec")) << *lean_events[0].object.body.shared_text();
  EXPECT_EQ((*full_events[0].object.body.tree())["spec"]["v"], 1);
}

TEST_F(EtcdStoreTest, WatchFromARevisionThatEtcdCompactedIsGone) {
  auto s = MustOpen(Options());
  ASSERT_NE(s, nullptr);
  Object a = s->Create("pods", "a", "x", Body(1)).value();
  Object b = s->Create("pods", "a", "y", Body(1)).value();
  Object c = s->Create("pods", "a", "z", Body(1)).value();
  // Compacted by another client, not through the store.
  Raw("/v3/kv/compaction", Json{{"revision", std::to_string(b.revision)}, {"physical", true}});

  auto r = s->WatchFrom("pods", "", a.revision);  // needs b's event, which etcd no longer has
  ASSERT_EQ(r.status().code(), StatusCode::kGone) << r.status().message();
  EXPECT_NE(r.status().message().find("oldest available revision is " + std::to_string(b.revision + 1)),
            std::string::npos)
      << r.status().message();
  EXPECT_CODE(s->WatchFrom("pods", "a", 0), StatusCode::kGone);
  ASSERT_OK_AND_ASSIGN(w, s->WatchFrom("pods", "", b.revision));
  EXPECT_EQ(Describe(Drain(*w, 1)), (std::vector<std::string>{"ADDED pods a/z " + std::to_string(c.revision)}));
}

TEST_F(EtcdStoreTest, AClosedPortIsUnavailableWithinTheTimeout) {
  EtcdOptions o = Options();
  const std::string closed = "http://127.0.0.1:" + std::to_string(FreeLoopbackPort());
  o.endpoints = {closed};
  o.request_timeout = 1s;
  const auto start = std::chrono::steady_clock::now();
  auto r = OpenEtcdStore(o);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().message();
  EXPECT_NE(r.status().message().find(closed), std::string::npos) << r.status().message();
  EXPECT_LT(took, 3s);
  EXPECT_FALSE(Log().empty());
}

TEST_F(EtcdStoreTest, AnEndpointThatNeverAnswersIsUnavailableWithinTheTimeout) {
  SilentListener silent;
  ASSERT_FALSE(silent.url().empty());
  EtcdOptions o = Options();
  o.endpoints = {silent.url()};
  o.request_timeout = 1s;
  const auto start = std::chrono::steady_clock::now();
  auto r = OpenEtcdStore(o);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().message();
  EXPECT_NE(r.status().message().find(silent.url()), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("1000 ms"), std::string::npos) << r.status().message();
  EXPECT_GE(took, 900ms);
  EXPECT_LT(took, 3s);
  EXPECT_NE(LogText().find(silent.url()), std::string::npos) << LogText();
}

TEST_F(EtcdStoreTest, FailsOverToTheNextEndpointWhenTheFirstIsDown) {
  EtcdOptions o = Options();
  const std::string closed = "http://127.0.0.1:" + std::to_string(FreeLoopbackPort());
  o.endpoints = {closed, endpoint_};
  o.request_timeout = 1s;
  auto s = MustOpen(o);
  ASSERT_NE(s, nullptr);
  const std::string log = LogText();
  EXPECT_NE(log.find(closed), std::string::npos) << log;
  EXPECT_NE(log.find("trying " + endpoint_), std::string::npos) << log;
  const size_t lines = Log().size();

  ASSERT_OK_AND_ASSIGN(rev, s->Revision());
  ASSERT_OK_AND_ASSIGN(w, s->WatchFrom("pods", "", rev));
  ASSERT_OK_AND_ASSIGN(x, s->Create("pods", "a", "x", Body(1)));
  ASSERT_OK(s->Update("pods", "a", "x", Body(2), x.revision).status());
  ASSERT_OK_AND_ASSIGN(list, s->List("pods", "a"));
  EXPECT_EQ(list.items.size(), 1u);
  ASSERT_OK(s->Delete("pods", "a", "x", 0).status());
  EXPECT_EQ(Describe(Drain(*w, 3), rev), (std::vector<std::string>{"ADDED pods a/x 1", "MODIFIED pods a/x 2",
                                                                     "DELETED pods a/x 3"}));
  // The endpoint that answered stays the current one: nothing more to fail over.
  EXPECT_EQ(Log().size(), lines) << LogText();
}

TEST_F(EtcdStoreTest, FailsOverFromAnEndpointThatTimesOut) {
  SilentListener silent;
  ASSERT_FALSE(silent.url().empty());
  EtcdOptions o = Options();
  o.endpoints = {silent.url(), endpoint_};
  o.request_timeout = 1s;
  const auto start = std::chrono::steady_clock::now();
  auto s = MustOpen(o);
  ASSERT_NE(s, nullptr);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_NE(LogText().find(silent.url()), std::string::npos) << LogText();
  ASSERT_OK(s->Create("pods", "a", "x", Body(1)).status());
}

TEST_F(EtcdStoreTest, AWatchWhoseConnectionBreaksReconnectsAndMissesNothing) {
  TcpProxy proxy(std::stoi(endpoint_.substr(endpoint_.rfind(':') + 1)));
  ASSERT_FALSE(proxy.url().empty());
  EtcdOptions through_proxy = Options();
  through_proxy.endpoints = {proxy.url()};
  auto watched = MustOpen(through_proxy);
  auto direct = MustOpen(Options());  // the same objects, written past the proxy
  ASSERT_NE(watched, nullptr);
  ASSERT_NE(direct, nullptr);
  ASSERT_OK_AND_ASSIGN(rev, direct->Revision());
  ASSERT_OK_AND_ASSIGN(w, watched->WatchFrom("pods", "", rev));
  ASSERT_OK(direct->Create("pods", "a", "x", Body(1)).status());
  EXPECT_EQ(Describe(Drain(*w, 1), rev), (std::vector<std::string>{"ADDED pods a/x 1"}));

  proxy.CutAll();
  ASSERT_OK(direct->Create("pods", "a", "y", Body(1)).status());
  ASSERT_OK(direct->Update("pods", "a", "x", Body(2), 0).status());
  // Resumed after the last delivered revision: the later events once each, nothing again.
  EXPECT_EQ(Describe(Drain(*w, 2), rev), (std::vector<std::string>{"ADDED pods a/y 2", "MODIFIED pods a/x 3"}));
  EXPECT_NE(LogText().find("reconnecting to " + proxy.url() + " from revision " + std::to_string(rev + 1)),
            std::string::npos)
      << LogText();
}

TEST_F(EtcdStoreTest, StopEndsAnIdleWatchStreamPromptly) {
  auto s = MustOpen(Options());
  ASSERT_NE(s, nullptr);
  ASSERT_OK_AND_ASSIGN(rev, s->Revision());
  ASSERT_OK_AND_ASSIGN(w, s->WatchFrom("pods", "", rev));
  auto none = w->Next(200ms);  // by now the stream is open and waiting for etcd
  ASSERT_TRUE(none.ok()) << none.status().message();
  const auto start = std::chrono::steady_clock::now();
  w->Stop();
  w.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST_F(EtcdStoreTest, ASlashInAResourceOrNamespaceIsInvalidArgument) {
  auto s = MustOpen(Options());
  ASSERT_NE(s, nullptr);
  EXPECT_CODE(s->Create("pods/x", "a", "x", Body(1)), StatusCode::kInvalidArgument);
  EXPECT_CODE(s->Create("pods", "a/b", "x", Body(1)), StatusCode::kInvalidArgument);
  EXPECT_CODE(s->List("pods", "a/b"), StatusCode::kInvalidArgument);
  EXPECT_CODE(s->WatchFrom("pods", "a/b", 0), StatusCode::kInvalidArgument);
  // A name may have one: the namespace ends at the first '/'.
  ASSERT_OK(s->Create("pods", "a", "x/y", Body(1)).status());
  ASSERT_OK_AND_ASSIGN(list, s->List("pods", ""));
  ASSERT_EQ(list.items.size(), 1u);
  EXPECT_EQ(list.items[0].ns, "a");
  EXPECT_EQ(list.items[0].name, "x/y");
}

TEST_F(EtcdStoreTest, BadOptionsAreInvalidArgument) {
  EtcdOptions o = Options();
  o.endpoints.clear();
  EXPECT_CODE(OpenEtcdStore(o), StatusCode::kInvalidArgument);
  o.endpoints = {"127.0.0.1:2379"};
  EXPECT_CODE(OpenEtcdStore(o), StatusCode::kInvalidArgument);
  o.endpoints = {endpoint_};
  o.request_timeout = 0ms;
  EXPECT_CODE(OpenEtcdStore(o), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace arbiter::store

// ---------------------------------------------------------------------------------------------
// Group commit: concurrent single writes share one Apply of the backing store.

namespace arbiter::store {
namespace {

using ForwardingStore = test_support::ForwardingMemoryStore;

// A memory store whose first Apply waits until `release` is set, counting the Apply calls and
// the writes they carried.
class GatedStore final : public ForwardingStore {
 public:
  std::atomic<bool> release{false};
  std::atomic<int> applies{0};
  std::mutex mu;
  std::vector<size_t> sizes;

  std::vector<StatusOr<ObjectPtr>> Apply(std::vector<WriteOp> ops) override {
    if (applies++ == 0) {
      while (!release) std::this_thread::yield();
    }
    {
      std::lock_guard<std::mutex> lk(mu);
      sizes.push_back(ops.size());
    }
    return inner().Apply(std::move(ops));
  }
};

TEST(GroupCommit, WritesThatArriveDuringACommitGoTogetherInTheNextEachWithItsOwnResult) {
  auto gated = std::make_unique<GatedStore>();
  GatedStore& g = *gated;
  GroupCommit store(std::move(gated));
  ASSERT_TRUE(g.inner().Create("pods", "a", "taken", Json{{"v", 0}}).ok());
  std::thread first([&] { EXPECT_TRUE(store.Create("pods", "a", "first", Json{{"v", 1}}).ok()); });
  while (g.applies.load() == 0) std::this_thread::yield();  // the first commit is under way
  constexpr int kLater = 6;
  std::vector<std::thread> later;
  std::vector<StatusCode> codes(kLater, StatusCode::kOk);
  for (int i = 0; i < kLater; ++i) {
    later.emplace_back([&, i] {
      // One of them collides with an existing object: it fails alone.
      const std::string name = i == 0 ? "taken" : "p" + std::to_string(i);
      codes[static_cast<size_t>(i)] = store.Create("pods", "a", name, Json{{"v", i}}).status().code();
    });
  }
  while (store.queued() < static_cast<size_t>(kLater)) std::this_thread::yield();
  g.release = true;
  first.join();
  for (auto& t : later) t.join();
  EXPECT_EQ(g.applies.load(), 2);
  EXPECT_EQ(g.sizes, (std::vector<size_t>{1, kLater}));
  EXPECT_EQ(codes[0], StatusCode::kAlreadyExists);
  for (int i = 1; i < kLater; ++i) EXPECT_EQ(codes[static_cast<size_t>(i)], StatusCode::kOk) << i;
  EXPECT_EQ(store.groups(), 2u);
  EXPECT_EQ(store.grouped_writes(), static_cast<size_t>(kLater + 1));
}

// A backing store that throws from its first Apply.
class ThrowOnceStore final : public ForwardingStore {
 public:
  bool thrown = false;
  std::vector<StatusOr<ObjectPtr>> Apply(std::vector<WriteOp> ops) override {
    if (!std::exchange(thrown, true)) throw std::runtime_error("disk on fire");
    return inner().Apply(std::move(ops));
  }
};

TEST(GroupCommit, AStoreThatThrowsFailsItsGroupAndTheNextGroupStillCommits) {
  GroupCommit store(std::make_unique<ThrowOnceStore>());
  auto first = store.Create("pods", "a", "p", Json{{"v", 1}});
  EXPECT_EQ(first.status().code(), StatusCode::kInternal);
  EXPECT_NE(first.status().message().find("disk on fire"), std::string::npos);
  EXPECT_TRUE(store.Create("pods", "a", "p", Json{{"v", 1}}).ok());
}

TEST(GroupCommit, ALoneWriterIsCommittedAtOnceInAGroupOfItsOwn) {
  GroupCommit store(NewMemoryStore());
  auto c = store.Create("pods", "a", "p", Json{{"v", 1}});
  ASSERT_TRUE(c.ok());
  auto u = store.Update("pods", "a", "p", Json{{"v", 2}}, c->revision);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(store.Update("pods", "a", "p", Json{{"v", 3}}, c->revision).status().code(), StatusCode::kConflict);
  auto d = store.Delete("pods", "a", "p", 0);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d->body.tree())["v"], 2);
  EXPECT_EQ(store.groups(), 4u);
}

}  // namespace
}  // namespace arbiter::store
