// The etcd store's watches: one etcd watch stream each, read line by line by a thread of its own,
// re-established on another endpoint when it breaks, its events queued for Next.
#include "arbiter/store/etcd_internal.h"

namespace arbiter::store::etcd {
namespace {

class EtcdWatch final : public EtcdWatchStream {
 public:
  EtcdWatch(std::shared_ptr<Conn> conn, std::shared_ptr<WatchShared> shared, WatchSpec spec)
      : conn_(std::move(conn)), shared_(std::move(shared)), spec_(std::move(spec)), cursor_(spec_.from) {}

  ~EtcdWatch() override { Stop(); }

  EtcdWatch(const EtcdWatch&) = delete;
  EtcdWatch& operator=(const EtcdWatch&) = delete;

  void Start() override {
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
  std::pair<std::optional<Status>, int64_t> AwaitTerminal(Millis timeout) override {
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
    Json body = Json::object();  // a deletion without its previous value: waived, or no longer kept by etcd
    if (!value_kv.is_null()) {
      auto value = Base64Decode(Text(Field(value_kv, "value")));
      body = value ? Json::parse(*value, nullptr, false) : Json();
      if (!value || body.is_discarded() || !ValidateBody(e.object.resource, e.object.ns, e.object.name, body).ok()) {
        return Internal(DescribeEtcdWatch(spec_.resource, spec_.ns) + ": the etcd value of " +
                        DescribeKey(e.object.resource, e.object.ns, e.object.name) + " at revision " +
                        std::to_string(revision) + " is not a JSON object");
      }
    }
    StampRevision(body, revision);
    e.object.body = std::move(body);
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

}  // namespace

std::unique_ptr<EtcdWatchStream> NewEtcdWatch(std::shared_ptr<Conn> conn, std::shared_ptr<WatchShared> shared,
                                              WatchSpec spec) {
  return std::make_unique<EtcdWatch>(std::move(conn), std::move(shared), std::move(spec));
}

}  // namespace arbiter::store::etcd
