// The etcd state store: each object is one etcd key, PREFIX/RESOURCE/NAMESPACE/NAME, whose value
// is the JSON body (without metadata.resourceVersion, which is the key's mod_revision and is
// written in on the way out). Writes are compare-and-swap transactions; watches are etcd's own
// watch streams, read line by line in a thread each; Compact compacts etcd. Everything goes
// through etcd's v3 JSON gateway over HTTP (cpp-httplib), where keys and values are base64 and
// int64 fields are strings.
#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "arbiter/base/base64.h"
#include "arbiter/store/store.h"
#include "arbiter/store/watch_hub.h"

namespace arbiter::store {
namespace {

using base::Base64Decode;
using base::Base64Encode;
using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

// How long a watch stream may stay silent before it is taken for dead and re-established. The
// stream asks etcd for progress notifications, which etcd sends every 10 minutes by default.
constexpr Millis kStreamIdleTimeout{11 * 60 * 1000};
// How long a watch keeps trying to re-establish its stream before it ends with Unavailable (at
// least; also three request timeouts).
constexpr Millis kWatchGiveUp{30 * 1000};
// Objects per range request when listing.
constexpr int64_t kListPage = 500;
// Idle HTTP connections kept per endpoint.
constexpr size_t kMaxIdleClients = 8;


// ---- SIGPIPE ----

// cpp-httplib writes with send() without MSG_NOSIGNAL, so writing to a connection that etcd reset
// (or that Stop shut down) would raise SIGPIPE, whose default action ends the process. The store
// leaves the process's signal handling alone: it blocks SIGPIPE in the calling thread around its
// requests (the write then fails with EPIPE) and discards a SIGPIPE that the request raised.
// Watch stream threads block it for good.
sigset_t PipeSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  return set;
}

class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigset_t pending;
    sigemptyset(&pending);
    pending_before_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    const sigset_t pipe = PipeSet();
    pthread_sigmask(SIG_BLOCK, &pipe, &old_);
  }
  ~SigpipeGuard() {
    if (!pending_before_) {
      sigset_t pending;
      sigemptyset(&pending);
      if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
        const sigset_t pipe = PipeSet();
        const timespec zero{0, 0};
        sigtimedwait(&pipe, nullptr, &zero);
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t old_{};
  bool pending_before_ = false;
};

// ---- reading the gateway's JSON (proto3 mapping: absent fields are defaults) ----

const Json& Field(const Json& j, const char* name) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(name);
  return it == j.end() ? kNull : *it;
}

const Json& Element(const Json& j, size_t i) {
  static const Json kNull;
  return j.is_array() && i < j.size() ? j[i] : kNull;
}

int64_t Int(const Json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) return v;
  }
  return 0;
}

bool Bool(const Json& j) { return j.is_boolean() && j.get<bool>(); }

std::string Text(const Json& j) { return j.is_string() ? j.get<std::string>() : std::string(); }

int64_t HeaderRevision(const Json& response) { return Int(Field(Field(response, "header"), "revision")); }

// The key just after every key that starts with `prefix` (etcd's range_end for a prefix).
std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty()) {
    auto& last = prefix.back();
    if (static_cast<unsigned char>(last) < 0xff) {
      last = static_cast<char>(static_cast<unsigned char>(last) + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');  // every key
}

std::string Shorten(std::string s) {
  constexpr size_t kMax = 300;
  if (s.size() > kMax) s = s.substr(0, kMax) + "...";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string DescribeEtcdWatch(const std::string& resource, const std::string& ns) {
  std::string d = "the watch of " + resource;
  if (!ns.empty()) d += " in namespace \"" + ns + "\"";
  return d;
}

std::string DescribeHttpError(httplib::Error e, Millis timeout) {
  switch (e) {
    case httplib::Error::Connection:
      return "cannot connect";
    case httplib::Error::ConnectionTimeout:
      return "connection not accepted within " + std::to_string(timeout.count()) + " ms";
    case httplib::Error::Read:
      return "no answer within " + std::to_string(timeout.count()) + " ms (or the connection was closed)";
    case httplib::Error::Write:
      return "cannot send the request";
    default:
      return "request failed (" + httplib::to_string(e) + ")";
  }
}

// The Status for an etcd error answer (the gateway's {"error", "code", "message"}).
Status EtcdError(int64_t grpc_code, const std::string& message, const std::string& prefix) {
  const std::string m = prefix + message;
  if (message.find("required revision has been compacted") != std::string::npos) return Gone(m);
  if (message.find("required revision is a future revision") != std::string::npos) return OutOfRange(m);
  switch (grpc_code) {
    case 3:  // INVALID_ARGUMENT, such as a request over etcd's size limit
      return InvalidArgument(m);
    case 4:   // DEADLINE_EXCEEDED
    case 8:   // RESOURCE_EXHAUSTED: the database is full
    case 14:  // UNAVAILABLE: no leader, leader changed, shutting down
      return Unavailable(m);
    case 7:   // PERMISSION_DENIED
    case 16:  // UNAUTHENTICATED
      return FailedPrecondition(m);
    default:
      return Internal(m);
  }
}

// ---- the connection: endpoints, pooled HTTP clients, failover and the log ----

class Conn {
 public:
  explicit Conn(EtcdOptions options) : options_(std::move(options)), idle_(options_.endpoints.size()) {}

  size_t size() const { return options_.endpoints.size(); }
  const std::string& url(size_t i) const { return options_.endpoints[i]; }
  size_t current() const { return current_.load(); }
  Millis timeout() const { return options_.request_timeout; }

  void Log(const std::string& line) const {
    if (!options_.log) return;
    std::lock_guard<std::mutex> lk(log_mu_);
    options_.log(line);
  }

  std::unique_ptr<httplib::Client> NewClient(size_t i, Millis read_timeout, bool keep_alive) const {
    auto c = std::make_unique<httplib::Client>(url(i));
    c->set_tcp_nodelay(true);
    c->set_keep_alive(keep_alive);
    c->set_connection_timeout(options_.request_timeout);
    c->set_write_timeout(options_.request_timeout);
    c->set_read_timeout(read_timeout);
    return c;
  }

  // POSTs `body` to `path` and returns etcd's answer. An endpoint that cannot be reached (or, for
  // an idempotent request, does not answer or has no leader) is logged and the next one is
  // tried; the one that answers becomes the current endpoint. `what` says what the request does
  // ("create pods \"a/x\""), for messages.
  StatusOr<Json> Post(const std::string& path, const Json& body, bool idempotent, const std::string& what) {
    const std::string payload = body.dump();
    const size_t n = size();
    const size_t first = current();
    std::string failures;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (first + k) % n;
      const std::string next = k + 1 < n ? "; trying " + url((i + 1) % n) : "; no endpoint left to try";
      auto client = Acquire(i);
      httplib::Request req;
      req.method = "POST";
      req.path = path;
      req.headers = {{"Content-Type", "application/json"}};
      req.body = payload;
      int status = 0;
      std::string text;
      req.response_handler = [&](const httplib::Response& res) {
        status = res.status;
        return true;
      };
      req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
        text.append(data, len);
        return true;
      };
      httplib::Response res;
      httplib::Error err = httplib::Error::Success;
      bool done = false;
      {
        SigpipeGuard no_sigpipe;
        done = client->send(req, res, err);
      }
      // The gateway ends its error answers with HTTP trailers, which cpp-httplib 0.11 takes for a
      // broken chunked body: an answer whose status and whole JSON body arrived is an answer.
      const bool answered =
          done || (err == httplib::Error::Read && status != 0 && Json::accept(text) && !text.empty());
      std::string reason;
      if (answered) {
        if (done) Release(i, std::move(client));
        StatusOr<Json> answer = Answer(i, status, text, what);
        const bool retry = idempotent && !answer.ok() && answer.status().code() == StatusCode::kUnavailable;
        if (!retry) {
          if (i != first) current_.store(i);
          return answer;
        }
        reason = answer.status().message();
      } else {
        reason = url(i) + ": " + DescribeHttpError(err, timeout());
        const bool sent = err != httplib::Error::Connection && err != httplib::Error::ConnectionTimeout;
        if (sent && !idempotent) {
          Log("etcd: " + what + ": " + reason + "; not retried, the write may have been applied");
          return Unavailable("cannot " + what + ": etcd " + reason +
                             "; the write may or may not have been applied (read it again to find out)");
        }
      }
      failures += (failures.empty() ? "" : "; ") + reason;
      Log("etcd: " + what + ": " + reason + next);
    }
    return Unavailable("cannot " + what + ": no etcd endpoint answered (" + failures + ")");
  }

 private:
  std::unique_ptr<httplib::Client> Acquire(size_t i) {
    {
      std::lock_guard<std::mutex> lk(pool_mu_);
      if (!idle_[i].empty()) {
        auto c = std::move(idle_[i].back());
        idle_[i].pop_back();
        return c;
      }
    }
    return NewClient(i, options_.request_timeout, /*keep_alive=*/true);
  }

  void Release(size_t i, std::unique_ptr<httplib::Client> c) {
    std::lock_guard<std::mutex> lk(pool_mu_);
    if (idle_[i].size() < kMaxIdleClients) idle_[i].push_back(std::move(c));
  }

  StatusOr<Json> Answer(size_t i, int status, const std::string& text, const std::string& what) const {
    Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (status == 200) {
      if (j.is_discarded() || !j.is_object()) {
        return Internal("cannot " + what + ": etcd at " + url(i) + " answered with something that is not JSON: " +
                        Shorten(text));
      }
      return j;
    }
    std::string message = Text(Field(j, "message"));
    if (message.empty()) message = Text(Field(j, "error"));
    if (message.empty()) message = "HTTP " + std::to_string(status) + ": " + Shorten(text);
    return EtcdError(Int(Field(j, "code")), message, "cannot " + what + ": etcd at " + url(i) + " answered: ");
  }

  const EtcdOptions options_;
  std::atomic<size_t> current_{0};
  std::mutex pool_mu_;
  std::vector<std::vector<std::unique_ptr<httplib::Client>>> idle_;  // per endpoint
  mutable std::mutex log_mu_;
};

// ---- request bodies ----

Json Compare(const std::string& key, const char* target, const char* result, const char* field, int64_t value) {
  Json c = Json::object();
  c["key"] = Base64Encode(key);
  c["target"] = target;
  c["result"] = result;
  c[field] = std::to_string(value);
  return c;
}

Json Op(const char* kind, Json request) {
  Json op = Json::object();
  op[kind] = std::move(request);
  return op;
}

Json KeyRequest(const std::string& key) {
  Json r = Json::object();
  r["key"] = Base64Encode(key);
  return r;
}


Json Txn(Json compare, Json success, Json failure) {
  Json t = Json::object();
  t["compare"] = Json::array({std::move(compare)});
  t["success"] = Json::array({std::move(success)});
  if (!failure.is_null()) t["failure"] = Json::array({std::move(failure)});
  return t;
}

// ---- watches ----

// What a watch, its stream thread and its store share.
struct WatchShared {
  std::mutex mu;
  std::condition_variable cv;  // notified on events, a terminal status, Stop, close and thread end
  std::deque<Event> queue;
  std::optional<Status> terminal;  // Gone or an error: reported once the queue is drained
  int64_t compact_revision = 0;    // etcd's compaction revision, once a stream reported it
  bool stopped = false;            // by Stop
  bool closed = false;             // the store is gone
  bool thread_done = false;
  httplib::Client* active = nullptr;  // the stream's client while a request runs
  std::atomic<bool> finish{false};    // the stream thread is to end

  // Tells the stream thread to end and cuts its connection.
  void Finish() {
    finish.store(true);
    std::lock_guard<std::mutex> lk(mu);
    if (active != nullptr) active->stop();
    cv.notify_all();
  }
};

struct WatchSpec {
  std::string resource;
  std::string ns;
  std::string resource_prefix;  // PREFIX/RESOURCE/
  std::string key;              // the watched prefix: resource_prefix, or resource_prefix + NS/
  int64_t from = 0;
  // Asks etcd for each event's previous value (prev_kv), which is where a deletion's body comes
  // from. It comes with every event, so it about doubles what etcd encodes and sends per change.
  bool deleted_bodies = true;
};

class EtcdWatch : public Watch {
 public:
  EtcdWatch(std::shared_ptr<Conn> conn, std::shared_ptr<WatchShared> shared, WatchSpec spec)
      : conn_(std::move(conn)), shared_(std::move(shared)), spec_(std::move(spec)), cursor_(spec_.from) {}

  ~EtcdWatch() override { Stop(); }

  EtcdWatch(const EtcdWatch&) = delete;
  EtcdWatch& operator=(const EtcdWatch&) = delete;

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }

  StatusOr<std::vector<EventPtr>> Next(std::chrono::milliseconds timeout) override {
    const auto deadline = Clock::now() + timeout;
    std::unique_lock<std::mutex> lk(shared_->mu);
    for (;;) {
      if (shared_->stopped) return FailedPrecondition(DescribeEtcdWatch(spec_.resource, spec_.ns) + " was stopped");
      if (shared_->closed) {
        return Unavailable(DescribeEtcdWatch(spec_.resource, spec_.ns) + " ended: the store was closed");
      }
      if (!shared_->queue.empty()) {
        std::vector<EventPtr> out;
        out.reserve(shared_->queue.size());
        for (Event& e : shared_->queue) out.push_back(std::make_shared<const Event>(std::move(e)));
        shared_->queue.clear();
        return out;
      }
      if (shared_->terminal) return *shared_->terminal;
      if (Clock::now() >= deadline) return std::vector<EventPtr>{};
      shared_->cv.wait_until(lk, deadline);
    }
  }

  void Stop() override {
    {
      std::lock_guard<std::mutex> lk(shared_->mu);
      shared_->stopped = true;
    }
    Join();
  }

  // Waits up to `timeout` for the stream to end with a status (WatchFrom uses it to learn the
  // compaction revision); returns it and etcd's compaction revision.
  std::pair<std::optional<Status>, int64_t> AwaitTerminal(Millis timeout) {
    std::unique_lock<std::mutex> lk(shared_->mu);
    shared_->cv.wait_for(lk, timeout, [&] { return shared_->terminal.has_value() || shared_->thread_done; });
    return {shared_->terminal, shared_->compact_revision};
  }

 private:
  // Ends the stream thread: cuts its connection until it notices (a cut that comes before the
  // connection exists is repeated), then joins it.
  void Join() {
    std::lock_guard<std::mutex> join_lk(join_mu_);
    if (!thread_.joinable()) return;
    shared_->Finish();
    {
      std::unique_lock<std::mutex> lk(shared_->mu);
      while (!shared_->thread_done) {
        if (shared_->active != nullptr) shared_->active->stop();
        shared_->cv.wait_for(lk, Millis(20));
      }
    }
    thread_.join();
  }

  void SetTerminal(Status st) {
    std::lock_guard<std::mutex> lk(shared_->mu);
    if (!shared_->terminal) shared_->terminal = std::move(st);
    shared_->cv.notify_all();
  }

  bool Finishing() const { return shared_->finish.load(); }

  // The stream thread: keeps one etcd watch stream open from the cursor, reconnecting (to the
  // next endpoint) when it breaks, until the watch ends, etcd reports a compaction, or no
  // endpoint could be reached several times in a row.
  void Run() {
    const sigset_t pipe = PipeSet();
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    const size_t n = conn_->size();
    // Give up once no stream could be had for this long (and every endpoint was tried twice).
    const Millis give_up = std::max<Millis>(kWatchGiveUp, 3 * conn_->timeout());
    size_t endpoint = conn_->current();
    size_t failed = 0;
    Clock::time_point failing_since{};
    std::vector<std::string> errors(n);  // the last error of each endpoint, for the final message
    while (!Finishing()) {
      bool worked = false;
      std::string error = RunStream(endpoint, worked);
      if (Finishing()) break;
      {
        std::lock_guard<std::mutex> lk(shared_->mu);
        if (shared_->terminal) break;
      }
      if (worked || failed == 0) {
        failed = 0;
        failing_since = Clock::now();
      }
      ++failed;
      errors[endpoint] = error;
      const std::string describe = DescribeEtcdWatch(spec_.resource, spec_.ns);
      if (failed >= 2 * n && Clock::now() - failing_since >= give_up) {
        std::string all;
        for (size_t i = 0; i < n; ++i) all += (i == 0 ? "" : "; ") + conn_->url(i) + ": " + errors[i];
        conn_->Log("etcd: " + describe + " on " + conn_->url(endpoint) + " ended (" + error + "); giving up after " +
                   std::to_string(failed) + " attempts in " +
                   std::to_string(std::chrono::duration_cast<Millis>(Clock::now() - failing_since).count()) + " ms");
        SetTerminal(Unavailable(describe + " lost etcd (" + all + "); list again and watch from the list's revision"));
        break;
      }
      const size_t next = (endpoint + 1) % n;
      conn_->Log("etcd: " + describe + " on " + conn_->url(endpoint) + " ended (" + error + "); reconnecting to " +
                 conn_->url(next) + " from revision " + std::to_string(cursor_));
      endpoint = next;
      const Millis backoff = std::min<Millis>(Millis(100) * static_cast<int64_t>(failed), Millis(2000));
      std::unique_lock<std::mutex> lk(shared_->mu);
      shared_->cv.wait_for(lk, backoff, [&] { return Finishing(); });
    }
    std::lock_guard<std::mutex> lk(shared_->mu);
    shared_->thread_done = true;
    shared_->cv.notify_all();
  }

  // One watch stream on endpoint `i`. Returns why it ended; `worked` tells whether etcd
  // created the watch.
  std::string RunStream(size_t i, bool& worked) {
    auto client = conn_->NewClient(i, kStreamIdleTimeout, /*keep_alive=*/false);
    {
      std::lock_guard<std::mutex> lk(shared_->mu);
      if (Finishing()) return "stopped";
      shared_->active = client.get();
    }
    Json create = Json::object();
    create["key"] = Base64Encode(spec_.key);
    create["range_end"] = Base64Encode(PrefixEnd(spec_.key));
    // From the cursor itself (not the one after it): etcd then reports a compaction exactly when
    // an event after the cursor is no longer kept. Events at or before the cursor are dropped.
    create["start_revision"] = std::to_string(std::max<int64_t>(cursor_, 1));
    if (spec_.deleted_bodies) create["prev_kv"] = true;
    create["progress_notify"] = true;
    Json body = Json::object();
    body["create_request"] = std::move(create);

    httplib::Request req;
    req.method = "POST";
    req.path = "/v3/watch";
    req.headers = {{"Content-Type", "application/json"}};
    req.body = body.dump();
    int status = 0;
    std::string buffer;
    std::string error;
    req.response_handler = [&](const httplib::Response& res) {
      status = res.status;
      return true;
    };
    req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
      if (Finishing()) return false;
      if (status != 200) {
        if (buffer.size() < 4096) buffer.append(data, len);
        return true;
      }
      buffer.append(data, len);
      size_t start = 0;
      bool keep = true;
      for (size_t nl; keep && (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string_view line(buffer.data() + start, nl - start);
        if (!line.empty()) keep = HandleMessage(line, worked, error);
      }
      buffer.erase(0, start);
      return keep;
    };
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    client->send(req, res, err);
    {
      std::lock_guard<std::mutex> lk(shared_->mu);
      shared_->active = nullptr;
    }
    if (!error.empty()) return error;
    if (status != 0 && status != 200) {
      Json j = Json::parse(buffer, nullptr, false);
      std::string message = Text(Field(j, "message"));
      if (message.empty()) message = Shorten(buffer);
      Status st = EtcdError(Int(Field(j, "code")), message, "");
      if (st.code() == StatusCode::kGone) SetGone(0);
      return "answered HTTP " + std::to_string(status) + ": " + message;
    }
    if (status == 200 && !buffer.empty() && error.empty() && !Finishing()) {
      HandleMessage(buffer, worked, error);  // a last message without its newline
      if (!error.empty()) return error;
    }
    if (err != httplib::Error::Success && err != httplib::Error::Canceled) {
      return DescribeHttpError(err, err == httplib::Error::Read ? kStreamIdleTimeout : conn_->timeout());
    }
    return "etcd closed the stream";
  }

  void SetGone(int64_t compact_revision) {
    std::lock_guard<std::mutex> lk(shared_->mu);
    if (compact_revision > 0) shared_->compact_revision = compact_revision;
    if (!shared_->terminal) {
      std::string m = DescribeEtcdWatch(spec_.resource, spec_.ns) + " fell behind: it needs the events after revision " +
                      std::to_string(cursor_) + " but etcd has compacted its history";
      if (compact_revision > 0) {
        m += " up to revision " + std::to_string(compact_revision) + " (the oldest revision still kept is " +
             std::to_string(compact_revision + 1) + ")";
      }
      shared_->terminal = Gone(m + "; list again and watch from the list's revision");
    }
    shared_->cv.notify_all();
  }

  // Handles one message of the stream. Returns false to end the stream: then either a terminal
  // status is set or `error` says why (and the stream is re-established).
  bool HandleMessage(std::string_view line, bool& worked, std::string& error) {
    Json m = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (m.is_discarded() || !m.is_object()) {
      error = "etcd sent a watch message that is not JSON: " + Shorten(std::string(line));
      return false;
    }
    if (const Json& e = Field(m, "error"); !e.is_null()) {
      std::string message = Text(Field(e, "message"));
      if (message.empty()) message = Shorten(e.dump());
      if (message.find("required revision has been compacted") != std::string::npos) {
        SetGone(0);
      } else {
        error = "etcd ended the stream: " + message;
      }
      return false;
    }
    const Json& result = Field(m, "result");
    if (int64_t compacted = Int(Field(result, "compact_revision")); compacted > 0) {
      SetGone(compacted);
      return false;
    }
    if (Bool(Field(result, "canceled"))) {
      const std::string reason = Text(Field(result, "cancel_reason"));
      SetTerminal(Unavailable(DescribeEtcdWatch(spec_.resource, spec_.ns) + " was canceled by etcd" +
                              (reason.empty() ? "" : ": " + reason)));
      return false;
    }
    if (Bool(Field(result, "created"))) worked = true;
    const Json& events = Field(result, "events");
    if (!events.is_array() || events.empty()) return true;
    std::vector<Event> out;
    // The ops of one transaction share its revision, and etcd sends them in one response: the
    // events skipped are those at or before the cursor as this response began (a resumed
    // stream starts again at the cursor's revision).
    const int64_t before = cursor_;
    for (const Json& ev : events) {
      auto e = ToEvent(ev, before);
      if (!e.ok()) {
        SetTerminal(e.status());
        return false;
      }
      if (e->has_value()) out.push_back(std::move(**e));
    }
    if (!out.empty()) {
      std::lock_guard<std::mutex> lk(shared_->mu);
      for (auto& e : out) shared_->queue.push_back(std::move(e));
      shared_->cv.notify_all();
    }
    return true;
  }

  // The event of one etcd event; nothing for one at or before `before` or for a key that does
  // not have the store's layout.
  StatusOr<std::optional<Event>> ToEvent(const Json& ev, int64_t before) {
    const Json& kv = Field(ev, "kv");
    const int64_t revision = Int(Field(kv, "mod_revision"));
    if (revision <= before) return std::optional<Event>();
    cursor_ = std::max(cursor_, revision);
    auto key = Base64Decode(Text(Field(kv, "key")));
    if (!key || key->compare(0, spec_.resource_prefix.size(), spec_.resource_prefix) != 0) {
      return std::optional<Event>();
    }
    const std::string rest = key->substr(spec_.resource_prefix.size());
    const size_t slash = rest.find('/');
    if (slash == std::string::npos) return std::optional<Event>();
    Event e;
    e.object.resource = spec_.resource;
    e.object.ns = rest.substr(0, slash);
    e.object.name = rest.substr(slash + 1);
    e.object.revision = revision;
    const bool deleted = Text(Field(ev, "type")) == "DELETE";
    const Json& value_kv = deleted ? Field(ev, "prev_kv") : kv;
    if (deleted) {
      e.type = EventType::kDeleted;
    } else {
      e.type = Int(Field(kv, "create_revision")) == revision ? EventType::kAdded : EventType::kModified;
    }
    if (value_kv.is_null()) {
      // A deletion without its previous value: waived by the watcher, or no longer kept by etcd.
      e.object.body = Json::object();
    } else {
      auto value = Base64Decode(Text(Field(value_kv, "value")));
      Json body = value ? Json::parse(*value, nullptr, false) : Json();
      if (!value || body.is_discarded() || !ValidateBody(e.object.resource, e.object.ns, e.object.name, body).ok()) {
        return Internal(DescribeEtcdWatch(spec_.resource, spec_.ns) + ": the etcd value of " +
                        DescribeKey(e.object.resource, e.object.ns, e.object.name) + " at revision " +
                        std::to_string(revision) + " is not a JSON object");
      }
      e.object.body = std::move(body);
    }
    StampRevision(e.object.body, revision);
    return std::optional<Event>(std::move(e));
  }

  const std::shared_ptr<Conn> conn_;
  const std::shared_ptr<WatchShared> shared_;
  const WatchSpec spec_;
  int64_t cursor_;  // every event up to this revision was queued; used by the stream thread only
  std::mutex join_mu_;
  std::thread thread_;
};

// ---- the store ----

class EtcdStore : public Store {
 public:
  EtcdStore(std::shared_ptr<Conn> conn, std::string prefix) : conn_(std::move(conn)), prefix_(std::move(prefix)) {}

  ~EtcdStore() override {
    // Open watches report Unavailable from now on, and their streams end.
    std::lock_guard<std::mutex> lk(watches_mu_);
    for (auto& weak : watches_) {
      if (auto shared = weak.lock()) {
        {
          std::lock_guard<std::mutex> wlk(shared->mu);
          shared->closed = true;
        }
        shared->Finish();
      }
    }
  }

  EtcdStore(const EtcdStore&) = delete;
  EtcdStore& operator=(const EtcdStore&) = delete;

  StatusOr<Object> Create(const std::string& resource, const std::string& ns, const std::string& name,
                          Json body) override {
    ARBITER_RETURN_IF_ERROR(CheckKey(resource, ns, name));
    ARBITER_RETURN_IF_ERROR(ValidateBody(resource, ns, name, body));
    const std::string what = "create " + DescribeKey(resource, ns, name);
    const std::string key = Key(resource, ns, name);
    ARBITER_ASSIGN_OR_RETURN(value, EncodeBody(resource, ns, name, body));
    Json put = KeyRequest(key);
    put["value"] = value;
    ARBITER_ASSIGN_OR_RETURN(
        r, conn_->Post("/v3/kv/txn",
                       Txn(Compare(key, "CREATE", "EQUAL", "create_revision", 0), Op("request_put", put), Json()),
                       /*idempotent=*/false, what));
    if (!Bool(Field(r, "succeeded"))) return AlreadyExists(DescribeKey(resource, ns, name) + " already exists");
    return Stamped(resource, ns, name, HeaderRevision(r), std::move(body));
  }

  StatusOr<Object> Get(const std::string& resource, const std::string& ns, const std::string& name) override {
    ARBITER_RETURN_IF_ERROR(CheckKey(resource, ns, name));
    const std::string what = "read " + DescribeKey(resource, ns, name);
    ARBITER_ASSIGN_OR_RETURN(r, conn_->Post("/v3/kv/range", KeyRequest(Key(resource, ns, name)), true, what));
    const Json& kv = Element(Field(r, "kvs"), 0);
    if (kv.is_null()) return NotFound(DescribeKey(resource, ns, name) + " not found");
    return ToObject(resource, ns, name, kv, Int(Field(kv, "mod_revision")));
  }

  StatusOr<Object> Update(const std::string& resource, const std::string& ns, const std::string& name, Json body,
                          int64_t expected_revision) override {
    ARBITER_RETURN_IF_ERROR(CheckKey(resource, ns, name));
    ARBITER_RETURN_IF_ERROR(ValidateBody(resource, ns, name, body));
    const std::string what = "update " + DescribeKey(resource, ns, name);
    const std::string key = Key(resource, ns, name);
    ARBITER_ASSIGN_OR_RETURN(value, EncodeBody(resource, ns, name, body));
    Json put = KeyRequest(key);
    put["value"] = value;
    ARBITER_ASSIGN_OR_RETURN(r, conn_->Post("/v3/kv/txn",
                                            Txn(Condition(key, expected_revision), Op("request_put", put),
                                                Op("request_range", KeyRequest(key))),
                                            /*idempotent=*/false, what));
    if (!Bool(Field(r, "succeeded"))) return Refused("update", resource, ns, name, r, expected_revision);
    return Stamped(resource, ns, name, HeaderRevision(r), std::move(body));
  }

  StatusOr<Object> Delete(const std::string& resource, const std::string& ns, const std::string& name,
                          int64_t expected_revision) override {
    ARBITER_RETURN_IF_ERROR(CheckKey(resource, ns, name));
    const std::string what = "delete " + DescribeKey(resource, ns, name);
    const std::string key = Key(resource, ns, name);
    Json del = KeyRequest(key);
    del["prev_kv"] = true;
    ARBITER_ASSIGN_OR_RETURN(r, conn_->Post("/v3/kv/txn",
                                            Txn(Condition(key, expected_revision), Op("request_delete_range", del),
                                                Op("request_range", KeyRequest(key))),
                                            /*idempotent=*/false, what));
    if (!Bool(Field(r, "succeeded"))) return Refused("delete", resource, ns, name, r, expected_revision);
    const Json& prev =
        Element(Field(Field(Element(Field(r, "responses"), 0), "response_delete_range"), "prev_kvs"), 0);
    if (prev.is_null()) {
      return Internal("cannot " + what + ": etcd deleted it at revision " + std::to_string(HeaderRevision(r)) +
                      " but did not return its last value");
    }
    return ToObject(resource, ns, name, prev, HeaderRevision(r));
  }

  // Apply is the interface's: one transaction per op, in order. Each write has a revision of its
  // own, as every write through kube-apiserver does. Ops batched into one transaction would share
  // its revision, and a client whose watch broke between two events of one revision, resuming
  // from the first one's resourceVersion as informers do, would never see the second
  // (docs/consistency.md: upstream/cmd/lincheck found it).

  StatusOr<ListResult> List(const std::string& resource, const std::string& ns) override {
    if (resource.empty()) return InvalidArgument("a list needs a resource (such as \"pods\")");
    ARBITER_RETURN_IF_ERROR(CheckNames(resource, ns));
    const std::string what = "list " + resource + (ns.empty() ? "" : " in namespace \"" + ns + "\"");
    const std::string start = ns.empty() ? ResourcePrefix(resource) : NamespacePrefix(resource, ns);
    const std::string end = PrefixEnd(start);
    // Pages of one revision. Should etcd compact that revision between two pages, start over.
    StatusOr<ListResult> result = Internal("cannot " + what + ": not attempted");
    for (int attempt = 0; attempt < 3; ++attempt) {
      result = ListPages(resource, start, end, what);
      if (result.ok() || result.status().code() != StatusCode::kGone) break;
    }
    return result;
  }

  StatusOr<std::unique_ptr<Watch>> WatchFrom(const std::string& resource, const std::string& ns,
                                             int64_t from_revision, WatchOptions options = {}) override {
    if (resource.empty()) return InvalidArgument("a watch needs a resource (such as \"pods\")");
    if (from_revision < 0) {
      return InvalidArgument("cannot watch " + resource + " from revision " + std::to_string(from_revision) +
                             ": revisions are not negative");
    }
    ARBITER_RETURN_IF_ERROR(CheckNames(resource, ns));
    WatchSpec spec;
    spec.resource = resource;
    spec.ns = ns;
    spec.resource_prefix = ResourcePrefix(resource);
    spec.key = ns.empty() ? spec.resource_prefix : NamespacePrefix(resource, ns);
    spec.from = from_revision;
    spec.deleted_bodies = options.deleted_bodies;

    // A range at the revision itself fails exactly when etcd compacted past it: the cheap way to
    // answer Gone here rather than at the first Next.
    const std::string what = "watch " + resource + " from revision " + std::to_string(from_revision);
    Json probe = KeyRequest(spec.key);
    probe["range_end"] = Base64Encode(PrefixEnd(spec.key));
    probe["count_only"] = true;
    probe["revision"] = std::to_string(std::max<int64_t>(from_revision, 1));
    bool compacted = false;
    if (auto r = conn_->Post("/v3/kv/range", probe, true, what); !r.ok()) {
      if (r.status().code() == StatusCode::kGone) {
        compacted = true;
      } else if (r.status().code() != StatusCode::kOutOfRange) {  // a future revision is fine
        return r.status();
      }
    }

    auto shared = std::make_shared<WatchShared>();
    auto watch = std::make_unique<EtcdWatch>(conn_, shared, std::move(spec));
    {
      std::lock_guard<std::mutex> lk(watches_mu_);
      watches_.erase(std::remove_if(watches_.begin(), watches_.end(), [](const auto& w) { return w.expired(); }),
                     watches_.end());
      watches_.push_back(shared);
    }
    watch->Start();
    if (!compacted) return std::unique_ptr<Watch>(std::move(watch));

    // etcd's stream tells the compaction revision, for the message.
    auto [terminal, compact_revision] = watch->AwaitTerminal(conn_->timeout());
    watch->Stop();
    std::string m = "cannot watch " + resource + " from revision " + std::to_string(from_revision) + ": ";
    if (compact_revision > 0) {
      m += "the history up to revision " + std::to_string(compact_revision) +
           " is no longer kept (the oldest available revision is " + std::to_string(compact_revision + 1) + ")";
    } else {
      m += "etcd has compacted the history after it";
      if (terminal && terminal->code() != StatusCode::kGone) m += " (" + terminal->message() + ")";
    }
    return Gone(m + "; list again and watch from the list's revision");
  }

  StatusOr<int64_t> Revision() override {
    Json req = KeyRequest(prefix_ + "/");
    req["count_only"] = true;
    ARBITER_ASSIGN_OR_RETURN(r, conn_->Post("/v3/kv/range", req, true, "read the etcd revision"));
    return HeaderRevision(r);
  }

  Status Compact(int64_t revision) override {
    auto latest = Revision();
    if (!latest.ok()) return latest.status();
    ARBITER_RETURN_IF_ERROR(ValidateCompact(revision, *latest));
    if (revision == 0) return Status::Ok();
    Json req = Json::object();
    req["revision"] = std::to_string(revision);
    req["physical"] = true;
    auto r = conn_->Post("/v3/kv/compaction", req, true, "compact etcd to revision " + std::to_string(revision));
    if (r.ok()) return Status::Ok();
    if (r.status().code() == StatusCode::kGone) return Status::Ok();  // already compacted past it
    return r.status();
  }

 private:
  std::string ResourcePrefix(const std::string& resource) const { return prefix_ + "/" + resource + "/"; }
  std::string NamespacePrefix(const std::string& resource, const std::string& ns) const {
    return ResourcePrefix(resource) + ns + "/";
  }
  std::string Key(const std::string& resource, const std::string& ns, const std::string& name) const {
    return NamespacePrefix(resource, ns) + name;
  }

  // A resource or namespace with '/' would make keys ambiguous.
  static Status CheckNames(const std::string& resource, const std::string& ns) {
    if (resource.find('/') != std::string::npos) {
      return InvalidArgument("the etcd store cannot hold resource \"" + resource + "\": it contains '/'");
    }
    if (ns.find('/') != std::string::npos) {
      return InvalidArgument("the etcd store cannot hold objects of " + resource + " in namespace \"" + ns +
                             "\": it contains '/'");
    }
    return Status::Ok();
  }

  static Status CheckKey(const std::string& resource, const std::string& ns, const std::string& name) {
    ARBITER_RETURN_IF_ERROR(ValidateKey(resource, ns, name));
    return CheckNames(resource, ns);
  }

  // The value stored for `body`: its JSON without metadata.resourceVersion, in base64.
  static StatusOr<std::string> EncodeBody(const std::string& resource, const std::string& ns, const std::string& name,
                                          Json& body) {
    if (auto m = body.find("metadata"); m != body.end() && m->is_object()) m->erase("resourceVersion");
    try {
      return Base64Encode(body.dump());
    } catch (const Json::exception& e) {
      return InvalidArgument("the body of " + DescribeKey(resource, ns, name) + " cannot be stored: " + e.what());
    }
  }

  static Object Stamped(const std::string& resource, const std::string& ns, const std::string& name,
                        int64_t revision, Json body) {
    Object o{resource, ns, name, revision, std::move(body)};
    StampRevision(o.body, revision);
    return o;
  }

  // The compare of an update or delete: the object is at `expected` (when > 0), or exists.
  static Json Condition(const std::string& key, int64_t expected) {
    return expected > 0 ? Compare(key, "MOD", "EQUAL", "mod_revision", expected)
                        : Compare(key, "CREATE", "GREATER", "create_revision", 0);
  }

  // Why a conditional update or delete was refused, from the range of its failure branch.
  static Status Refused(const char* op, const std::string& resource, const std::string& ns, const std::string& name,
                        const Json& r, int64_t expected) {
    const Json& kv = Element(Field(Field(Element(Field(r, "responses"), 0), "response_range"), "kvs"), 0);
    if (kv.is_null()) return NotFound(DescribeKey(resource, ns, name) + " not found");
    const Object current{resource, ns, name, Int(Field(kv, "mod_revision")), Json()};
    ARBITER_RETURN_IF_ERROR(CheckExpectedRevision(op, current, expected));
    return Internal(std::string("cannot ") + op + " " + DescribeKey(resource, ns, name) +
                    ": etcd refused the write although the object is at revision " +
                    std::to_string(current.revision));
  }

  // The object of an etcd key-value at `revision`.
  StatusOr<Object> ToObject(const std::string& resource, const std::string& ns, const std::string& name,
                            const Json& kv, int64_t revision) const {
    auto value = Base64Decode(Text(Field(kv, "value")));
    Json body = value ? Json::parse(*value, nullptr, /*allow_exceptions=*/false) : Json();
    if (!value || body.is_discarded() || !ValidateBody(resource, ns, name, body).ok()) {
      return Internal("etcd store " + prefix_ + ": the stored value of " + DescribeKey(resource, ns, name) +
                      " is not a JSON object (was the key written by something else?)");
    }
    return Stamped(resource, ns, name, revision, std::move(body));
  }

  StatusOr<ListResult> ListPages(const std::string& resource, const std::string& start, const std::string& end,
                                 const std::string& what) {
    const std::string resource_prefix = ResourcePrefix(resource);
    ListResult out;
    std::string from = start;
    for (;;) {
      Json req = KeyRequest(from);
      req["range_end"] = Base64Encode(end);
      req["limit"] = std::to_string(kListPage);
      if (out.revision > 0) req["revision"] = std::to_string(out.revision);
      ARBITER_ASSIGN_OR_RETURN(r, conn_->Post("/v3/kv/range", req, true, what));
      if (out.revision == 0) out.revision = HeaderRevision(r);
      const Json& kvs = Field(r, "kvs");
      std::string last;
      if (kvs.is_array()) {
        for (const Json& kv : kvs) {
          auto key = Base64Decode(Text(Field(kv, "key")));
          if (!key) return Internal("cannot " + what + ": etcd returned a key that is not base64");
          last = *key;
          if (key->compare(0, resource_prefix.size(), resource_prefix) != 0) continue;
          const std::string rest = key->substr(resource_prefix.size());
          const size_t slash = rest.find('/');
          if (slash == std::string::npos) continue;  // not of the store's layout
          auto o = ToObject(resource, rest.substr(0, slash), rest.substr(slash + 1), kv, Int(Field(kv, "mod_revision")));
          if (!o.ok()) return o.status();
          out.items.push_back(std::move(*o));
        }
      }
      if (!Bool(Field(r, "more")) || last.empty()) break;
      from = last + std::string(1, '\0');
    }
    // etcd orders by key bytes, where "a-b/" comes before "a/": sort by namespace, then name.
    std::sort(out.items.begin(), out.items.end(),
              [](const Object& a, const Object& b) { return std::tie(a.ns, a.name) < std::tie(b.ns, b.name); });
    return out;
  }

  const std::shared_ptr<Conn> conn_;
  const std::string prefix_;
  std::mutex watches_mu_;
  std::vector<std::weak_ptr<WatchShared>> watches_;
};

}  // namespace

StatusOr<std::unique_ptr<Store>> OpenEtcdStore(const EtcdOptions& options) {
  EtcdOptions o = options;
  if (o.endpoints.empty()) {
    return InvalidArgument("the etcd store needs at least one endpoint (such as http://127.0.0.1:2379)");
  }
  for (auto& e : o.endpoints) {
    while (!e.empty() && e.back() == '/') e.pop_back();
    if (e.rfind("http://", 0) != 0 && e.rfind("https://", 0) != 0) {
      return InvalidArgument("etcd endpoint \"" + e + "\" is not an http:// or https:// URL");
    }
  }
  if (o.request_timeout <= Millis(0)) {
    return InvalidArgument("the etcd request timeout must be positive, not " +
                           std::to_string(o.request_timeout.count()) + " ms");
  }
  std::string prefix = o.prefix;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  auto store = std::make_unique<EtcdStore>(std::make_shared<Conn>(std::move(o)), prefix);
  // Reach etcd once, so that a wrong endpoint shows at open.
  auto revision = store->Revision();
  if (!revision.ok()) {
    return Status(revision.status().code(), "cannot open the etcd store at prefix \"" + prefix +
                                                "\": " + revision.status().message());
  }
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace arbiter::store
