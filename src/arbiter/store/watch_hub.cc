// The bounded event history and the watches over it, shared by the store backends.
#include "arbiter/store/watch_hub.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace arbiter::store {

struct Kept {
  std::shared_ptr<const Event> event;
  size_t bytes = 0;
  int64_t at_millis = 0;
};

struct WatchHub::State {
  mutable std::mutex mu;
  std::condition_variable cv;  // notified on Publish, Compact, Stop and close
  std::deque<Kept> history;    // strictly increasing revisions
  WatchHubLimits limits;
  size_t bytes = 0;  // the sum of the kept events' bytes
  std::set<std::function<void()>*> notifiers;  // of the open watches that asked to be notified
  int64_t horizon = 0;  // every event with revision <= horizon is no longer kept
  bool closed = false;  // the hub (and so its store) is gone
  size_t watchers = 0;
};

namespace {

using State = WatchHub::State;

std::string DescribeWatch(const std::string& resource, const std::string& ns) {
  std::string d = "the watch of " + resource;
  if (!ns.empty()) d += " in namespace \"" + ns + "\"";
  return d;
}

class HubWatch : public Watch {
 public:
  HubWatch(std::shared_ptr<State> state, std::string resource, std::string ns, int64_t from_revision)
      : state_(std::move(state)), resource_(std::move(resource)), ns_(std::move(ns)), cursor_(from_revision) {}

  ~HubWatch() override {
    std::lock_guard<std::mutex> lk(state_->mu);
    --state_->watchers;
    state_->notifiers.erase(&notify_);
  }

  bool SetNotifier(std::function<void()> notify) override {
    std::lock_guard<std::mutex> lk(state_->mu);
    notify_ = std::move(notify);
    if (notify_) {
      state_->notifiers.insert(&notify_);
    } else {
      state_->notifiers.erase(&notify_);
    }
    return true;
  }

  StatusOr<std::vector<EventPtr>> Next(std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<EventPtr> found;
    {
      std::unique_lock<std::mutex> lk(state_->mu);
      for (;;) {
        if (stopped_) return FailedPrecondition(DescribeWatch(resource_, ns_) + " was stopped");
        if (state_->closed) return Unavailable(DescribeWatch(resource_, ns_) + " ended: the store was closed");
        if (cursor_ < state_->horizon) {
          return Gone(DescribeWatch(resource_, ns_) + " fell behind: it needs the events after revision " +
                      std::to_string(cursor_) + " but the oldest revision still kept is " +
                      std::to_string(state_->horizon + 1) + "; list again and watch from the list's revision");
        }
        Collect(found);
        if (!found.empty()) break;
        if (std::chrono::steady_clock::now() >= deadline) return std::vector<EventPtr>{};
        state_->cv.wait_until(lk, deadline);
      }
    }
    return found;
  }

  void Stop() override {
    {
      std::lock_guard<std::mutex> lk(state_->mu);
      stopped_ = true;
    }
    state_->cv.notify_all();
  }

 private:
  // Appends the kept events after the cursor that match, and moves the cursor past every kept
  // event (matching or not) so that the next call does not scan them again. Needs state_->mu.
  void Collect(std::vector<std::shared_ptr<const Event>>& found) {
    const auto& h = state_->history;
    auto it = std::upper_bound(h.begin(), h.end(), cursor_,
                               [](int64_t rev, const Kept& e) { return rev < e.event->object.revision; });
    for (; it != h.end(); ++it) {
      const Object& o = it->event->object;
      if (o.resource == resource_ && (ns_.empty() || o.ns == ns_)) found.push_back(it->event);
      cursor_ = o.revision;
    }
  }

  std::shared_ptr<State> state_;
  const std::string resource_;
  const std::string ns_;
  int64_t cursor_;        // every event up to this revision has been looked at; guarded by mu
  bool stopped_ = false;  // guarded by state_->mu
  std::function<void()> notify_;  // guarded by state_->mu
};

}  // namespace

size_t ApproximateBytes(const Json& j) {
  constexpr size_t kNode = 16;  // a JSON node's own footprint
  switch (j.type()) {
    case Json::value_t::string: return kNode + j.get_ref<const std::string&>().size();
    case Json::value_t::object: {
      size_t n = kNode;
      for (const auto& [k, v] : j.items()) n += kNode + k.size() + ApproximateBytes(v);
      return n;
    }
    case Json::value_t::array: {
      size_t n = kNode;
      for (const Json& v : j) n += ApproximateBytes(v);
      return n;
    }
    default: return kNode;
  }
}

namespace {
WatchHubLimits WithCapacity(size_t capacity) {
  WatchHubLimits l;
  l.max_events = capacity;
  return l;
}
}  // namespace

WatchHub::WatchHub(size_t capacity, int64_t start_revision) : WatchHub(WithCapacity(capacity), start_revision) {}

WatchHub::WatchHub(WatchHubLimits limits, int64_t start_revision)
    : state_(std::make_shared<State>()), reaper_(std::make_unique<Reaper>()) {
  limits.max_events = std::max<size_t>(limits.max_events, 1);
  if (!limits.now_millis) {
    limits.now_millis = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  state_->limits = std::move(limits);
  state_->horizon = start_revision;
}

WatchHub::~WatchHub() {
  std::deque<Kept> history;
  {
    std::lock_guard<std::mutex> lk(state_->mu);
    state_->closed = true;
    history.swap(state_->history);
    state_->bytes = 0;
  }
  state_->cv.notify_all();
  // `history` and then the reaper (with what it still holds) are released here, outside the lock.
}

EventPtr WatchHub::Publish(Event event, size_t bytes) {
  if (bytes == 0) bytes = ApproximateBytes(event.object.body);
  bytes += event.object.name.size() + event.object.ns.size();
  auto e = std::make_shared<const Event>(std::move(event));
  const int64_t now = state_->limits.now_millis();
  std::vector<std::shared_ptr<const void>> retired;
  {
    std::lock_guard<std::mutex> lk(state_->mu);
    state_->history.push_back({e, bytes, now});
    state_->bytes += bytes;
    const WatchHubLimits& l = state_->limits;
    // The newest event always stays, whatever its size, so that a watch can see it.
    while (state_->history.size() > 1 &&
           (state_->history.size() > l.max_events || state_->bytes > l.max_bytes ||
            now - state_->history.front().at_millis > l.max_age.count())) {
      state_->horizon = state_->history.front().event->object.revision;
      state_->bytes -= state_->history.front().bytes;
      retired.push_back(std::move(state_->history.front().event));
      state_->history.pop_front();
    }
    // Notifiers only schedule work, so they run under the lock: none can be removed meanwhile.
    for (auto* notify : state_->notifiers) (*notify)();
  }
  state_->cv.notify_all();
  reaper_->Release(retired);
  return e;
}

void WatchHub::Compact(int64_t revision) {
  std::vector<std::shared_ptr<const void>> retired;
  {
    std::lock_guard<std::mutex> lk(state_->mu);
    auto& h = state_->history;
    while (!h.empty() && h.front().event->object.revision <= revision) {
      state_->bytes -= h.front().bytes;
      retired.push_back(std::move(h.front().event));
      h.pop_front();
    }
    state_->horizon = std::max(state_->horizon, revision);
    for (auto* notify : state_->notifiers) (*notify)();
  }
  // Watchers behind the new horizon learn at once that they are Gone.
  state_->cv.notify_all();
  reaper_->Release(retired);
}

StatusOr<std::unique_ptr<Watch>> WatchHub::WatchFrom(const std::string& resource, const std::string& ns,
                                                     int64_t from_revision) {
  if (resource.empty()) return InvalidArgument("a watch needs a resource (such as \"pods\")");
  if (from_revision < 0) {
    return InvalidArgument("cannot watch " + resource + " from revision " + std::to_string(from_revision) +
                           ": revisions are not negative");
  }
  std::lock_guard<std::mutex> lk(state_->mu);
  if (from_revision < state_->horizon) {
    return Gone("cannot watch " + resource + " from revision " + std::to_string(from_revision) +
                ": the history up to revision " + std::to_string(state_->horizon) +
                " is no longer kept (the oldest available revision is " + std::to_string(state_->horizon + 1) +
                "); list again and watch from the list's revision");
  }
  ++state_->watchers;
  return std::unique_ptr<Watch>(std::make_unique<HubWatch>(state_, resource, ns, from_revision));
}

int64_t WatchHub::horizon() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->horizon;
}

size_t WatchHub::size() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->history.size();
}

size_t WatchHub::bytes() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->bytes;
}

size_t WatchHub::watchers() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->watchers;
}

}  // namespace arbiter::store
