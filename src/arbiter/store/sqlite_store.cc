// The SQLite state store: objects and the store revision in one database file (WAL journal), one
// transaction per write, with the shared in-memory watch history on top.
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <array>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "arbiter/store/store.h"
#include "arbiter/store/watch_hub.h"

namespace arbiter::store {
namespace {

constexpr int kBusyTimeoutMs = 5000;
// The page cache of the connection (SQLite's default is 2 MiB): more of a busy cluster's
// rows stay in memory instead of being read back from the file on every write.
constexpr const char* kCacheSize = "PRAGMA cache_size=-16384";  // KiB
// After a checkpoint has copied every frame back, the next writer starts the WAL over from its
// beginning; a WAL that grew past this (a burst the checkpointer could not keep up with) is then
// cut back to it, and one below it is rewritten in place rather than extended.
constexpr const char* kJournalSizeLimit = "PRAGMA journal_size_limit=67108864";  // bytes
// A checkpoint is started once the WAL holds this many pages (32 MiB). SQLite's own
// autocheckpoint starts at 1000 pages; a larger WAL lets one checkpoint copy back only the latest
// of the many versions a busy page gets (a pod's row is rewritten by its binding, its status and
// its deletion within seconds): measured 554 against 474 preemptors/s (docs/benchmarks.md).
constexpr int kCheckpointPages = 8192;
constexpr int64_t kSchemaVersion = 1;

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS objects(resource TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,"
    " revision INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY(resource, ns, name));"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER);"
    "INSERT OR IGNORE INTO meta(key, value) VALUES('revision', 0);"
    "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', 1);";

// Failures a retry (or the operator freeing space, fixing permissions, stopping the other
// writer) may cure are Unavailable; the rest (a damaged or foreign file, a bug) are Internal.
StatusCode CodeFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_PROTOCOL:
      return StatusCode::kUnavailable;
    default:
      return StatusCode::kInternal;
  }
}

// Resets a cached statement (and drops its bindings) when one use of it ends. Text is bound
// without copying, so bound strings must outlive the Use.
class Use {
 public:
  explicit Use(sqlite3_stmt* s) : s_(s) {}
  ~Use() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;

  void Bind(int i, const std::string& v) { sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), nullptr); }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
  int Step() { return sqlite3_step(s_); }
  sqlite3_stmt* get() const { return s_; }

 private:
  sqlite3_stmt* s_;
};

std::string ColumnText(sqlite3_stmt* s, int i) {
  const unsigned char* p = sqlite3_column_text(s, i);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(s, i)));
}

class SqliteStore : public Store {
 public:
  SqliteStore(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  bool WatchIsSynchronous() const override { return true; }  // published under the write lock

  ~SqliteStore() override {
    hub_.reset();  // open watches report Unavailable from now on
    if (checkpointer_.joinable()) {
      {
        std::lock_guard<std::mutex> lk(checkpoint_mu_);
        stopping_ = true;
      }
      checkpoint_cv_.notify_all();
      checkpointer_.join();
    }
    if (checkpoint_db_ != nullptr) sqlite3_close_v2(checkpoint_db_);
    for (sqlite3_stmt** s : Statements()) sqlite3_finalize(*s);
    sqlite3_close_v2(db_);  // the last connection to close checkpoints what is left
  }

  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // Configures the connection, creates or checks the schema and prepares the statements.
  Status Init(bool fsync_every_commit, size_t watch_history) {
    std::lock_guard<std::mutex> lk(mu_);
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);

    // The first statement that reads the file: a file that is not a database fails here.
    {
      sqlite3_stmt* s = nullptr;
      int rc = sqlite3_prepare_v2(db_, "PRAGMA journal_mode=WAL", -1, &s, nullptr);
      if (rc != SQLITE_OK) return OpenError("switch to the WAL journal", rc);
      rc = sqlite3_step(s);
      std::string mode = rc == SQLITE_ROW ? ColumnText(s, 0) : "";
      if (rc != SQLITE_ROW) {
        Status st = OpenError("switch to the WAL journal", rc);
        sqlite3_finalize(s);
        return st;
      }
      sqlite3_finalize(s);
      if (mode != "wal") {
        return Unavailable("cannot open the state store " + path_ + ": SQLite kept the \"" + mode +
                           "\" journal instead of WAL (is the file on a file system without shared memory?)");
      }
    }
    ARBITER_RETURN_IF_ERROR(
        Exec(fsync_every_commit ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL", "set synchronous"));
    ARBITER_RETURN_IF_ERROR(Exec(kCacheSize, "size the page cache"));
    ARBITER_RETURN_IF_ERROR(Exec(kJournalSizeLimit, "limit the WAL's size"));
    ARBITER_RETURN_IF_ERROR(StartCheckpointer());

    // The schema, created in one transaction so that a crash cannot leave half of it.
    ARBITER_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "create the schema"));
    if (Status st = Exec(kSchema, "create the schema"); !st.ok()) {
      Rollback();
      return st;
    }
    if (Status st = Exec("COMMIT", "create the schema"); !st.ok()) {
      Rollback();
      return st;
    }

    struct Prepared {
      sqlite3_stmt** stmt;
      const char* sql;
    };
    const Prepared prepared[] = {
        {&begin_write_, "BEGIN IMMEDIATE"},
        {&begin_read_, "BEGIN"},
        {&commit_, "COMMIT"},
        {&rollback_, "ROLLBACK"},
        {&get_meta_, "SELECT value FROM meta WHERE key = ?1"},
        {&set_revision_, "UPDATE meta SET value = ?1 WHERE key = 'revision'"},
        {&get_object_, "SELECT revision, body FROM objects WHERE resource = ?1 AND ns = ?2 AND name = ?3"},
        {&get_revision_, "SELECT revision FROM objects WHERE resource = ?1 AND ns = ?2 AND name = ?3"},
        {&insert_object_, "INSERT INTO objects(resource, ns, name, revision, body) VALUES(?1, ?2, ?3, ?4, ?5)"},
        {&update_object_, "UPDATE objects SET revision = ?4, body = ?5 WHERE resource = ?1 AND ns = ?2 AND name = ?3"},
        {&delete_object_, "DELETE FROM objects WHERE resource = ?1 AND ns = ?2 AND name = ?3"},
        {&list_namespace_,
         "SELECT ns, name, revision, body FROM objects WHERE resource = ?1 AND ns = ?2 ORDER BY ns, name"},
        {&list_all_, "SELECT ns, name, revision, body FROM objects WHERE resource = ?1 ORDER BY ns, name"},
    };
    for (const Prepared& p : prepared) {
      int rc = sqlite3_prepare_v3(db_, p.sql, -1, SQLITE_PREPARE_PERSISTENT, p.stmt, nullptr);
      if (rc != SQLITE_OK) {
        return OpenError(std::string("prepare \"") + p.sql + "\" (is this an Arbiter state store?)", rc);
      }
    }

    auto version = ReadMeta("schema_version");
    if (!version.ok()) return version.status();
    if (*version != kSchemaVersion) {
      return Internal("cannot open the state store " + path_ + ": its schema version is " +
                      std::to_string(*version) + " but this Arbiter reads version " +
                      std::to_string(kSchemaVersion));
    }
    auto revision = ReadMeta("revision");
    if (!revision.ok()) return revision.status();
    hub_ = std::make_unique<WatchHub>(watch_history, *revision);
    return Status::Ok();
  }

  StatusOr<Object> Create(const std::string& resource, const std::string& ns, const std::string& name,
                          Json body) override {
    const std::string what = "create " + DescribeKey(resource, ns, name);
    std::lock_guard<std::mutex> lk(mu_);
    return Write(what, [&](int64_t rev) { return CreateIn(resource, ns, name, std::move(body), rev, what); });
  }

  StatusOr<Object> Get(const std::string& resource, const std::string& ns, const std::string& name) override {
    ARBITER_RETURN_IF_ERROR(ValidateKey(resource, ns, name));
    const std::string what = "read " + DescribeKey(resource, ns, name);
    std::lock_guard<std::mutex> lk(mu_);
    auto o = ReadObject(resource, ns, name, what);
    if (!o.ok()) return o.status();
    if (!o->has_value()) return NotFound(DescribeKey(resource, ns, name) + " not found");
    return std::move(**o);
  }

  StatusOr<Object> Update(const std::string& resource, const std::string& ns, const std::string& name, Json body,
                          int64_t expected_revision) override {
    const std::string what = "update " + DescribeKey(resource, ns, name);
    std::lock_guard<std::mutex> lk(mu_);
    return Write(what,
                 [&](int64_t rev) { return UpdateIn(resource, ns, name, std::move(body), expected_revision, rev, what); });
  }

  StatusOr<Object> Delete(const std::string& resource, const std::string& ns, const std::string& name,
                          int64_t expected_revision) override {
    const std::string what = "delete " + DescribeKey(resource, ns, name);
    std::lock_guard<std::mutex> lk(mu_);
    return Write(what,
                 [&](int64_t rev) { return DeleteIn(resource, ns, name, expected_revision, nullptr, rev, what); });
  }

  std::vector<StatusOr<ObjectPtr>> Apply(std::vector<WriteOp> ops) override {
    std::vector<StatusOr<ObjectPtr>> out(ops.size(), Status::Ok());
    if (ops.empty()) return out;
    const std::string what = "apply a batch of " + std::to_string(ops.size()) + " writes";
    std::lock_guard<std::mutex> lk(mu_);
    auto fail_all = [&](const Status& st) {
      for (auto& r : out) r = st;
      return out;
    };
    {
      Use b(begin_write_);
      if (int rc = b.Step(); rc != SQLITE_DONE) return fail_all(Fail(what, rc));
    }
    // The store revision is read once and written once for the whole batch.
    auto latest = ReadMeta("revision");
    if (!latest.ok()) {
      Rollback();
      return fail_all(latest.status());
    }
    int64_t next = *latest + 1;
    std::vector<Event> events;
    std::vector<size_t> index;      // the op of each event
    std::vector<size_t> row_bytes;  // its row's text size (0: not written, as for a delete)
    for (size_t i = 0; i < ops.size(); ++i) {
      WriteOp& op = ops[i];
      const std::string op_what = std::string(op.kind == WriteOp::Kind::kCreate   ? "create "
                                              : op.kind == WriteOp::Kind::kUpdate ? "update "
                                                                                  : "delete ") +
                                  DescribeKey(op.resource, op.ns, op.name);
      size_t bytes = 0;
      StatusOr<Event> e = op.kind == WriteOp::Kind::kCreate
                              ? CreateIn(op.resource, op.ns, op.name, std::move(op.body), next, op_what, &bytes)
                          : op.kind == WriteOp::Kind::kUpdate
                              ? UpdateIn(op.resource, op.ns, op.name, std::move(op.body), op.expected_revision, next,
                                         op_what, &bytes)
                              : DeleteIn(op.resource, op.ns, op.name, op.expected_revision,
                                         op.known.is_null() ? nullptr : &op.known, next, op_what);  // moved from
      if (e.ok()) {
        ++next;
        events.push_back(std::move(*e));
        index.push_back(i);
        row_bytes.push_back(bytes);
        continue;
      }
      const StatusCode c = e.status().code();
      if (c == StatusCode::kNotFound || c == StatusCode::kAlreadyExists || c == StatusCode::kConflict ||
          c == StatusCode::kInvalidArgument) {
        out[i] = e.status();  // checked before anything of this op was written
        continue;
      }
      Rollback();  // the backend failed: nothing of the batch is kept
      return fail_all(e.status());
    }
    if (!events.empty()) {
      if (Status st = WriteRevision(next - 1, what); !st.ok()) {
        Rollback();
        return fail_all(st);
      }
    }
    if (Status st = Commit(what); !st.ok()) {
      Rollback();
      return fail_all(st);
    }
    for (size_t k = 0; k < events.size(); ++k) {
      // The row's text stands for the event's size (its tree holds about twice that), which
      // spares the watch history a walk of the tree.
      EventPtr e = hub_->Publish(std::move(events[k]), 2 * row_bytes[k]);
      out[index[k]] = ObjectPtr(e, &e->object);  // shared with the watch event, not copied
    }
    return out;
  }

  StatusOr<ListResult> List(const std::string& resource, const std::string& ns) override {
    if (resource.empty()) return InvalidArgument("a list needs a resource (such as \"pods\")");
    const std::string what = "list " + resource + (ns.empty() ? "" : " in namespace \"" + ns + "\"");
    std::lock_guard<std::mutex> lk(mu_);
    // One read transaction, so that the revision and the rows agree.
    {
      Use b(begin_read_);
      if (int rc = b.Step(); rc != SQLITE_DONE) return Fail(what, rc);
    }
    StatusOr<ListResult> r = ListInTransaction(resource, ns, what);
    if (!r.ok()) {
      Rollback();
      return r;
    }
    if (Status st = Commit(what); !st.ok()) {
      Rollback();
      return st;
    }
    return r;
  }

  StatusOr<std::unique_ptr<Watch>> WatchFrom(const std::string& resource, const std::string& ns,
                                             int64_t from_revision, WatchOptions /*options*/ = {}) override {
    std::lock_guard<std::mutex> lk(mu_);
    return hub_->WatchFrom(resource, ns, from_revision);
  }

  StatusOr<int64_t> Revision() override {
    std::lock_guard<std::mutex> lk(mu_);
    return ReadMeta("revision");
  }

  Status Compact(int64_t revision) override {
    std::lock_guard<std::mutex> lk(mu_);
    auto latest = ReadMeta("revision");
    if (!latest.ok()) return latest.status();
    ARBITER_RETURN_IF_ERROR(ValidateCompact(revision, *latest));
    // Only the watch history is kept per revision; the file holds the latest state only.
    hub_->Compact(revision);
    return Status::Ok();
  }

 private:
  // The error for a failed SQLite call while doing `what`, with SQLite's own message. Must be
  // called before anything else runs on the connection (a rollback would replace the message).
  Status Fail(const std::string& what, int rc) const {
    return Status(CodeFor(rc), "state store " + path_ + ": cannot " + what + ": " + sqlite3_errmsg(db_));
  }
  Status OpenError(const std::string& what, int rc) const {
    std::string hint;
    if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT) {
      hint = " (the file is damaged or is not an Arbiter state store)";
    }
    return Status(CodeFor(rc), "cannot open the state store " + path_ + ": cannot " + what + ": " +
                                   sqlite3_errmsg(db_) + hint);
  }

  Status Exec(const char* sql, const std::string& what) {
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    return rc == SQLITE_OK ? Status::Ok() : OpenError(what, rc);
  }

  Status Commit(const std::string& what) {
    Use c(commit_);
    if (int rc = c.Step(); rc != SQLITE_DONE) return Fail(what, rc);
    return Status::Ok();
  }

  // Ends the open transaction, if SQLite has not already done so after an error.
  void Rollback() {
    if (sqlite3_get_autocommit(db_) != 0) return;
    if (rollback_ != nullptr) {  // prepared once Init got that far
      Use r(rollback_);
      if (r.Step() == SQLITE_DONE) return;
    }
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);  // last resort; nothing else to do
  }

  // The writes, inside an open write transaction: each checks its preconditions before it writes
  // anything, writes the row at `revision` (the caller writes the store revision once for all
  // the writes of its transaction), and returns its event.
  // CreateIn and UpdateIn set `*row_bytes` (when not null) to the size of the row's text.
  StatusOr<Event> CreateIn(const std::string& resource, const std::string& ns, const std::string& name, Json body,
                           int64_t revision, const std::string& what, size_t* row_bytes = nullptr) {
    ARBITER_RETURN_IF_ERROR(ValidateKey(resource, ns, name));
    ARBITER_RETURN_IF_ERROR(ValidateBody(resource, ns, name, body));
    auto existing = ReadRevision(resource, ns, name, what);
    if (!existing.ok()) return existing.status();
    if (existing->has_value()) return AlreadyExists(DescribeKey(resource, ns, name) + " already exists");
    StampRevision(body, revision);
    Event e{EventType::kAdded, Object{resource, ns, name, revision, std::move(body)}};
    ARBITER_RETURN_IF_ERROR(WriteRow(insert_object_, e.object, what, row_bytes));
    return e;
  }

  StatusOr<Event> UpdateIn(const std::string& resource, const std::string& ns, const std::string& name, Json body,
                           int64_t expected_revision, int64_t revision, const std::string& what,
                           size_t* row_bytes = nullptr) {
    ARBITER_RETURN_IF_ERROR(ValidateKey(resource, ns, name));
    ARBITER_RETURN_IF_ERROR(ValidateBody(resource, ns, name, body));
    auto existing = ReadRevision(resource, ns, name, what);
    if (!existing.ok()) return existing.status();
    if (!existing->has_value()) return NotFound(DescribeKey(resource, ns, name) + " not found");
    ARBITER_RETURN_IF_ERROR(CheckExpectedRevision("update", Object{resource, ns, name, **existing, {}}, expected_revision));
    StampRevision(body, revision);
    Event e{EventType::kModified, Object{resource, ns, name, revision, std::move(body)}};
    ARBITER_RETURN_IF_ERROR(WriteRow(update_object_, e.object, what, row_bytes));
    return e;
  }

  // `known`, when not null and the delete is conditional, is the body at expected_revision as
  // the caller holds it: an object's body at a revision never changes, so it stands for the
  // stored one once the revision matches, and the row need not be read and parsed. It is moved
  // into the deletion's event.
  StatusOr<Event> DeleteIn(const std::string& resource, const std::string& ns, const std::string& name,
                           int64_t expected_revision, Body* known, int64_t revision, const std::string& what) {
    ARBITER_RETURN_IF_ERROR(ValidateKey(resource, ns, name));
    std::optional<Object> existing;
    if (known != nullptr && expected_revision > 0) {
      auto current = ReadRevision(resource, ns, name, what);
      if (!current.ok()) return current.status();
      if (!current->has_value()) return NotFound(DescribeKey(resource, ns, name) + " not found");
      ARBITER_RETURN_IF_ERROR(
          CheckExpectedRevision("delete", Object{resource, ns, name, **current, {}}, expected_revision));
      existing = Object{resource, ns, name, **current, std::move(*known)};
    } else {
      auto read = ReadObject(resource, ns, name, what);
      if (!read.ok()) return read.status();
      if (!read->has_value()) return NotFound(DescribeKey(resource, ns, name) + " not found");
      ARBITER_RETURN_IF_ERROR(CheckExpectedRevision("delete", **read, expected_revision));
      existing = std::move(**read);
    }
    Event e{EventType::kDeleted, std::move(*existing)};
    e.object.revision = revision;
    StampRevision(e.object.body, e.object.revision);
    {
      Use u(delete_object_);
      u.Bind(1, resource);
      u.Bind(2, ns);
      u.Bind(3, name);
      if (int rc = u.Step(); rc != SQLITE_DONE) return Fail(what, rc);
    }
    return e;
  }

  // Runs `fn` (which reads and writes rows at the revision it is given and returns the event of
  // the write) in one IMMEDIATE transaction with the store revision; commits and publishes the
  // event if it succeeds, rolls back otherwise.
  template <typename Fn>
  StatusOr<Object> Write(const std::string& what, Fn&& fn) {
    {
      Use b(begin_write_);
      if (int rc = b.Step(); rc != SQLITE_DONE) return Fail(what, rc);
    }
    auto latest = ReadMeta("revision");
    if (!latest.ok()) {
      Rollback();
      return latest.status();
    }
    StatusOr<Event> e = fn(*latest + 1);
    if (e.ok()) {
      if (Status st = WriteRevision(e->object.revision, what); !st.ok()) e = st;
    }
    if (!e.ok()) {
      Rollback();
      return e.status();
    }
    if (Status st = Commit(what); !st.ok()) {
      Rollback();
      return st;
    }
    hub_->Publish(*e);
    return std::move(e->object);
  }

  StatusOr<int64_t> ReadMeta(const std::string& key) {
    Use u(get_meta_);
    u.Bind(1, key);
    int rc = u.Step();
    if (rc == SQLITE_ROW) return static_cast<int64_t>(sqlite3_column_int64(u.get(), 0));
    if (rc == SQLITE_DONE) {
      return Internal("state store " + path_ + ": the meta table has no \"" + key +
                      "\" entry (the file is damaged or is not an Arbiter state store)");
    }
    return Fail("read the " + key, rc);
  }

  Status WriteRevision(int64_t revision, const std::string& what) {
    Use u(set_revision_);
    u.Bind(1, revision);
    if (int rc = u.Step(); rc != SQLITE_DONE) return Fail(what, rc);
    if (sqlite3_changes(db_) != 1) {
      return Internal("state store " + path_ + ": cannot " + what + ": the meta table has no revision entry");
    }
    return Status::Ok();
  }

  // Inserts or updates (by `stmt`) the row of `o`.
  Status WriteRow(sqlite3_stmt* stmt, const Object& o, const std::string& what, size_t* row_bytes = nullptr) {
    std::shared_ptr<const std::string> text_holder;  // the version's text, kept with it (body.h)
    try {
      text_holder = o.body.shared_text();
    } catch (const Json::exception& e) {
      return InvalidArgument("the body of " + DescribeKey(o.resource, o.ns, o.name) + " cannot be stored: " +
                             e.what());
    }
    const std::string& text = *text_holder;
    if (row_bytes != nullptr) *row_bytes = text.size();
    Use u(stmt);
    u.Bind(1, o.resource);
    u.Bind(2, o.ns);
    u.Bind(3, o.name);
    u.Bind(4, o.revision);
    u.Bind(5, text);
    if (int rc = u.Step(); rc != SQLITE_DONE) return Fail(what, rc);
    return Status::Ok();
  }

  StatusOr<Object> RowToObject(const std::string& resource, std::string ns, std::string name, int64_t revision,
                               const std::string& text) const {
    Json body = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded() || !body.is_object()) {
      return Internal("state store " + path_ + ": the stored body of " + DescribeKey(resource, ns, name) +
                      " is not a JSON object (the file is damaged)");
    }
    return Object{resource, std::move(ns), std::move(name), revision, Body::FromTreeAndText(std::move(body), text)};
  }

  // The revision of an object (nullopt when absent), without reading its body: what a write's
  // precondition needs.
  StatusOr<std::optional<int64_t>> ReadRevision(const std::string& resource, const std::string& ns,
                                                const std::string& name, const std::string& what) {
    Use u(get_revision_);
    u.Bind(1, resource);
    u.Bind(2, ns);
    u.Bind(3, name);
    int rc = u.Step();
    if (rc == SQLITE_DONE) return std::optional<int64_t>();
    if (rc != SQLITE_ROW) return Fail(what, rc);
    return std::optional<int64_t>(sqlite3_column_int64(u.get(), 0));
  }

  StatusOr<std::optional<Object>> ReadObject(const std::string& resource, const std::string& ns,
                                             const std::string& name, const std::string& what) {
    Use u(get_object_);
    u.Bind(1, resource);
    u.Bind(2, ns);
    u.Bind(3, name);
    int rc = u.Step();
    if (rc == SQLITE_DONE) return std::optional<Object>();
    if (rc != SQLITE_ROW) return Fail(what, rc);
    auto o = RowToObject(resource, ns, name, sqlite3_column_int64(u.get(), 0), ColumnText(u.get(), 1));
    if (!o.ok()) return o.status();
    return std::optional<Object>(std::move(*o));
  }

  StatusOr<ListResult> ListInTransaction(const std::string& resource, const std::string& ns,
                                         const std::string& what) {
    ListResult r;
    auto revision = ReadMeta("revision");
    if (!revision.ok()) return revision.status();
    r.revision = *revision;
    Use u(ns.empty() ? list_all_ : list_namespace_);
    u.Bind(1, resource);
    if (!ns.empty()) u.Bind(2, ns);
    for (;;) {
      int rc = u.Step();
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return Fail(what, rc);
      auto o = RowToObject(resource, ColumnText(u.get(), 0), ColumnText(u.get(), 1),
                           sqlite3_column_int64(u.get(), 2), ColumnText(u.get(), 3));
      if (!o.ok()) return o.status();
      r.items.push_back(std::move(*o));
    }
    return r;
  }

  std::array<sqlite3_stmt**, 13> Statements() {
    return {&begin_write_,    &begin_read_,    &commit_,         &rollback_,       &get_meta_,       &set_revision_,
            &get_object_,     &get_revision_,  &insert_object_,  &update_object_,  &delete_object_,  &list_namespace_,
            &list_all_};
  }

  // Checkpoints (copying the WAL's pages back into the database file) run on a thread of their
  // own with a connection of their own, instead of inside the commit that crosses the
  // autocheckpoint threshold: a writer never waits for one. WAL mode lets a PASSIVE checkpoint
  // run beside readers and the writer; what a reader still needs is left for the next one.
  Status StartCheckpointer() {
    int rc = sqlite3_open_v2(path_.c_str(), &checkpoint_db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) return OpenError("open the checkpoint connection", rc);
    sqlite3_busy_timeout(checkpoint_db_, kBusyTimeoutMs);
    // A connection that has read nothing yet does not know the file is in WAL mode, and a
    // checkpoint through it does nothing at all (SQLite answers OK with -1 frames): the WAL then
    // grows for as long as the server runs, and every commit extends the file. Reading the schema
    // once opens the WAL on this connection.
    rc = sqlite3_exec(checkpoint_db_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return OpenError("open the WAL on the checkpoint connection", rc);
    // Replaces SQLite's autocheckpoint hook on the writing connection.
    sqlite3_wal_hook(
        db_,
        [](void* self, sqlite3*, const char*, int pages) -> int {
          auto* store = static_cast<SqliteStore*>(self);
          if (pages >= kCheckpointPages) {
            {
              std::lock_guard<std::mutex> lk(store->checkpoint_mu_);
              store->checkpoint_due_ = true;
            }
            store->checkpoint_cv_.notify_one();
          }
          return SQLITE_OK;
        },
        this);
    checkpointer_ = std::thread([this] {
      std::unique_lock<std::mutex> lk(checkpoint_mu_);
      for (;;) {
        checkpoint_cv_.wait(lk, [this] { return stopping_ || checkpoint_due_; });
        if (stopping_) return;
        checkpoint_due_ = false;
        lk.unlock();
        // A failure (a busy lock, say) leaves the pages for the next checkpoint.
        (void)sqlite3_wal_checkpoint_v2(checkpoint_db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
        lk.lock();
      }
    });
    return Status::Ok();
  }

  const std::string path_;
  sqlite3* const db_;
  sqlite3* checkpoint_db_ = nullptr;
  std::thread checkpointer_;
  std::mutex checkpoint_mu_;
  std::condition_variable checkpoint_cv_;
  bool checkpoint_due_ = false;  // guarded by checkpoint_mu_
  bool stopping_ = false;        // guarded by checkpoint_mu_
  std::mutex mu_;  // serialises every use of db_ and the statements
  sqlite3_stmt* begin_write_ = nullptr;
  sqlite3_stmt* begin_read_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* rollback_ = nullptr;
  sqlite3_stmt* get_meta_ = nullptr;
  sqlite3_stmt* set_revision_ = nullptr;
  sqlite3_stmt* get_object_ = nullptr;
  sqlite3_stmt* get_revision_ = nullptr;
  sqlite3_stmt* insert_object_ = nullptr;
  sqlite3_stmt* update_object_ = nullptr;
  sqlite3_stmt* delete_object_ = nullptr;
  sqlite3_stmt* list_namespace_ = nullptr;
  sqlite3_stmt* list_all_ = nullptr;
  std::unique_ptr<WatchHub> hub_;  // created once the revision at open is known
};

}  // namespace

StatusOr<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path, bool fsync_every_commit,
                                                 size_t watch_history) {
  if (path.empty()) return InvalidArgument("the state store needs a file path");
  // SQLite's own message for a missing directory ("unable to open database file") does not say
  // what is wrong, so check first.
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
    return Unavailable("cannot open the state store " + path + ": the directory " + dir.string() +
                       " does not exist (create it first)");
  }
  // The store holds Secrets: its files are the owner's alone (0600). SQLite creates the -wal and
  // -shm files with the database file's mode, so the database is created 0600 first, and files
  // an older version left readable are narrowed.
  if (const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600); fd >= 0) ::close(fd);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::filesystem::permissions(path + suffix, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::replace, ec);
  }
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Status(CodeFor(rc), "cannot open the state store " + path + ": " + msg);
  }
  auto store = std::make_unique<SqliteStore>(path, db);
  ARBITER_RETURN_IF_ERROR(store->Init(fsync_every_commit, watch_history));
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace arbiter::store
