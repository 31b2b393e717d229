// The parts of the etcd store (etcd_store.cc) its watches (etcd_watch.cc) share: the connection to
// etcd's v3 JSON gateway, the reading of its answers and the request bodies, and the SIGPIPE
// guard around requests. Not for use outside store/.
#pragma once

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

namespace arbiter::store::etcd {

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
sigset_t PipeSet();

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

// A field of an object, or null.
const Json& Field(const Json& j, const char* name);
// An element of an array, or null.
const Json& Element(const Json& j, size_t i);
// An int64, which the gateway sends as a string (0 when absent or not a number).
int64_t Int(const Json& j);
bool Bool(const Json& j);
std::string Text(const Json& j);
// The revision of an answer's header.
int64_t HeaderRevision(const Json& response);
// The key just after every key that starts with `prefix` (etcd's range_end for a prefix).
std::string PrefixEnd(std::string prefix);
// At most 300 characters of a message, without trailing newlines.
std::string Shorten(std::string s);
// "the watch of RESOURCE [in namespace NS]".
std::string DescribeEtcdWatch(const std::string& resource, const std::string& ns);
// What went wrong with an HTTP request, in words.
std::string DescribeHttpError(httplib::Error e, Millis timeout);
// The Status for an etcd error answer (the gateway's {"error", "code", "message"}).
Status EtcdError(int64_t grpc_code, const std::string& message, const std::string& prefix);


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

// A transaction's comparison of `field` (a key's mod_revision, version, ...) with `value`.
Json Compare(const std::string& key, const char* target, const char* result, const char* field, int64_t value);
// A request op of a transaction: {kind: request}.
Json Op(const char* kind, Json request);
// {"key": base64(key)}.
Json KeyRequest(const std::string& key);
// A transaction of one comparison, one op on success and (unless null) one on failure.
Json Txn(Json compare, Json success, Json failure);


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


// A watch over one stream of etcd's, read by a thread of its own (etcd_watch.cc).
class EtcdWatchStream : public Watch {
 public:
  // Starts the stream's thread.
  virtual void Start() = 0;
  // Waits up to `timeout` for the stream to end; its terminal status (if any) and the
  // compaction revision etcd reported (0 if none).
  virtual std::pair<std::optional<Status>, int64_t> AwaitTerminal(Millis timeout) = 0;
};
std::unique_ptr<EtcdWatchStream> NewEtcdWatch(std::shared_ptr<Conn> conn, std::shared_ptr<WatchShared> shared,
                                              WatchSpec spec);

}  // namespace arbiter::store::etcd
