// The watches of the store over a Kubernetes API server.
#include "arbiter/kubeclient/kube_internal.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "arbiter/api/protobuf_codec.h"

namespace arbiter::kubeclient::internal {
namespace {

class KubeWatch final : public store::Watch {
 public:
  KubeWatch(std::unique_ptr<Client> client, Route route, std::string resource, std::string ns, int64_t from,
            const KubeStoreOptions& options)
      : client_(std::move(client)),
        route_(std::move(route)),
        resource_(std::move(resource)),
        ns_(std::move(ns)),
        revision_(from),
        timeout_(options.watch_timeout),
        max_event_bytes_(options.max_event_bytes),
        log_(options.log) {
    thread_ = std::thread([this] { Run(); });
  }
  ~KubeWatch() override { Stop(); }

  StatusOr<std::vector<store::EventPtr>> Next(std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return !events_.empty() || !end_.ok() || stopped_; });
    if (stopped_) return FailedPrecondition("the watch of " + resource_ + " was stopped");
    if (!events_.empty()) {
      std::vector<store::EventPtr> out(std::make_move_iterator(events_.begin()), std::make_move_iterator(events_.end()));
      events_.clear();
      return out;
    }
    if (!end_.ok()) return end_;
    return std::vector<store::EventPtr>{};
  }

  void Stop() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_ && !thread_.joinable()) return;
      stopped_ = true;
    }
    cv_.notify_all();
    // The stream in progress (if any) is cut; a request about to start sees stopped_ first.
    while (!exited_.load()) {
      client_->Cancel();
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(10), [&] { return exited_.load(); });
    }
    if (thread_.joinable()) thread_.join();
  }

  bool SetNotifier(std::function<void()> notify) override {
    std::lock_guard<std::mutex> lock(mu_);
    notify_ = std::move(notify);
    return true;
  }

 private:
  void Log(const std::string& line) {
    if (log_) log_("watch " + resource_ + ": " + line);
  }

  void Deliver(store::EventPtr e) {
    std::function<void()> notify;
    {
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(std::move(e));
      notify = notify_;
    }
    cv_.notify_all();
    if (notify) notify();
  }

  void End(Status st) {
    std::function<void()> notify;
    {
      std::lock_guard<std::mutex> lock(mu_);
      end_ = std::move(st);
      notify = notify_;
    }
    cv_.notify_all();
    if (notify) notify();
  }

  // One JSON line of the stream: false ends the stream (an ERROR event).
  bool Line(std::string_view line) {
    if (line.empty()) return true;
    Json j = Json::parse(line, nullptr, false);
    if (!j.is_object() || !j["type"].is_string() || !j["object"].is_object()) {
      return Undecodable("a line that is not a watch event");
    }
    return Handle(j["type"].get<std::string>(), std::move(j["object"]));
  }

  // One protobuf frame's message.
  bool Frame(std::string_view message) {
    auto frame = api::DecodeWatchFrame(message);
    if (!frame.ok()) return Undecodable(frame.status().message());
    auto object = api::DecodeProtobufObject(frame->object);
    if (!object.ok()) return Undecodable("a " + frame->type + " event's object: " + object.status().message());
    return Handle(frame->type, std::move(*object));
  }

  // An event that cannot be read: the copy would miss a change, so the informer lists afresh.
  bool Undecodable(const std::string& what) {
    End(Gone("watch " + resource_ + ": " + what + ": relisting"));
    gone_ = true;
    return false;
  }

  bool Handle(const std::string& type, Json obj) {
    if (type == "ERROR") {
      const int64_t code = IntOf(obj, "code");
      if (code == 410) {
        End(Gone("watch " + resource_ + " from " + std::to_string(revision_) + ": " + StringOf(obj, "message", "gone")));
        gone_ = true;
      } else {
        // Resumed after a backoff, as a failed request is.
        errored_ = true;
        Log("the server ended the stream: " + StringOf(obj, "message", "error " + std::to_string(code)));
      }
      return false;
    }
    auto rv = ParseRevision(Field(Field(obj, "metadata"), "resourceVersion"), "watch " + resource_);
    if (!rv.ok()) return Undecodable(rv.status().message());
    if (type == "BOOKMARK") {
      revision_ = *rv;
      return true;
    }
    store::EventType t;
    if (type == "ADDED") {
      t = store::EventType::kAdded;
    } else if (type == "MODIFIED") {
      t = store::EventType::kModified;
    } else if (type == "DELETED") {
      t = store::EventType::kDeleted;
    } else {
      return Undecodable("an event of unknown type \"" + type + "\"");
    }
    auto e = std::make_shared<store::Event>();
    e->type = t;
    e->object.resource = resource_;
    e->object.ns = MetaString(obj, "namespace");
    e->object.name = MetaString(obj, "name");
    e->object.revision = *rv;
    if (!obj.contains("apiVersion")) obj["apiVersion"] = route_.api_version;
    if (!obj.contains("kind")) obj["kind"] = route_.kind;
    e->object.body = std::move(obj);
    revision_ = *rv;
    Deliver(std::move(e));
    return true;
  }

  bool Stopped() {
    std::lock_guard<std::mutex> lock(mu_);
    return stopped_;
  }

  void Sleep(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, d, [&] { return stopped_; });
  }

  void Run() {
    std::chrono::milliseconds backoff(800);  // client-go's reflector backoff: 800 ms doubling to 30 s
    bool failing = false;
    while (!Stopped() && !gone_) {
      const std::string target = Collection(route_, ns_) + "?allowWatchBookmarks=true&resourceVersion=" +
                                 std::to_string(revision_) + "&timeoutSeconds=" + std::to_string(timeout_.count()) +
                                 "&watch=true";
      std::string partial;
      bool too_large = false;
      bool received = false;
      errored_ = false;
      const auto opened = std::chrono::steady_clock::now();
      auto r = client_->Stream(target, [&](std::string_view data, const std::string& content_type) {
       try {
        received = true;
        partial.append(data);
        size_t start = 0;
        if (api::IsProtobufMediaType(content_type)) {
          // Frames: a 4-byte big-endian length, then the message.
          while (partial.size() - start >= 4) {
            size_t len = 0;
            for (size_t i = 0; i < 4; ++i) len = len << 8 | static_cast<unsigned char>(partial[start + i]);
            if (len > max_event_bytes_) {
              too_large = true;
              return false;
            }
            if (partial.size() - start - 4 < len) break;
            if (!Frame(std::string_view(partial).substr(start + 4, len))) return false;
            start += 4 + len;
          }
        } else {
          for (size_t nl = partial.find('\n'); nl != std::string::npos; nl = partial.find('\n', start)) {
            if (!Line(std::string_view(partial).substr(start, nl - start))) return false;
            start = nl + 1;
          }
        }
        partial.erase(0, start);
        too_large = partial.size() > max_event_bytes_;
        return !too_large && !Stopped();
       } catch (const std::exception& e) {
        return Undecodable(std::string("an event of an unexpected shape: ") + e.what());
       }
      });
      if (Stopped() || gone_) break;
      if (too_large) {
        End(Gone("watch " + resource_ + ": an event is larger than " + std::to_string(max_event_bytes_) +
                 " bytes: relisting"));
        break;
      }
      if (r.ok() && r->status == 410) {
        End(Gone("watch " + resource_ + " from " + std::to_string(revision_) + ": " + ServerMessage(*r)));
        break;
      }
      // A stream that ended on an ERROR event, or at once with nothing in it, failed: resumed
      // after the backoff, so that a server in trouble is not asked again and again.
      const bool quick_and_empty = !received && std::chrono::steady_clock::now() - opened < std::chrono::seconds(1);
      if (r.ok() && r->status == 200 && !errored_ && !quick_and_empty) {
        if (failing) Log("resumed from resourceVersion " + std::to_string(revision_));
        failing = false;
        backoff = std::chrono::milliseconds(800);
        continue;  // the server's timeout ended it, or it broke after delivering: resume
      }
      if (!failing || received) {
        Log((r.ok() ? FromHttp("GET", target, *r).message() : r.status().message()) + "; retrying");
      }
      failing = true;
      Sleep(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(30000));
    }
    exited_ = true;
    cv_.notify_all();
  }

  std::unique_ptr<Client> client_;
  const Route route_;
  const std::string resource_, ns_;
  int64_t revision_;  // the stream thread's: the last event's or bookmark's
  const std::chrono::seconds timeout_;
  const size_t max_event_bytes_;
  const std::function<void(const std::string&)> log_;
  bool gone_ = false;     // the stream thread's
  bool errored_ = false;  // the stream thread's: the last stream ended on an ERROR event

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<store::EventPtr> events_;  // guarded by mu_
  Status end_ = Status::Ok();           // guarded by mu_
  bool stopped_ = false;                // guarded by mu_
  std::function<void()> notify_;        // guarded by mu_
  std::atomic<bool> exited_{false};
  std::thread thread_;
};

// The watch of a resource the server does not serve: nothing happens, and after a while it ends
// with Gone, so that the informer asks again (the API may have been installed meanwhile).
class IdleWatch final : public store::Watch {
 public:
  StatusOr<std::vector<store::EventPtr>> Next(std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return stopped_; });
    if (stopped_) return FailedPrecondition("the watch was stopped");
    if (std::chrono::steady_clock::now() > reprobe_) return Gone("not served: asking again");
    return std::vector<store::EventPtr>{};
  }
  void Stop() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
  const std::chrono::steady_clock::time_point reprobe_ = std::chrono::steady_clock::now() + std::chrono::minutes(5);
};

}  // namespace

std::unique_ptr<store::Watch> NewKubeWatch(std::unique_ptr<Client> client, Route route, std::string resource,
                                           std::string ns, int64_t from, const KubeStoreOptions& options) {
  return std::make_unique<KubeWatch>(std::move(client), std::move(route), std::move(resource), std::move(ns), from,
                                     options);
}

std::unique_ptr<store::Watch> NewIdleWatch() { return std::make_unique<IdleWatch>(); }

}  // namespace arbiter::kubeclient::internal
