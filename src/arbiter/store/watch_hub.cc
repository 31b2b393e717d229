// The bounded event history and the watches over it, shared by the store backends.
#include "arbiter/store/watch_hub.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace arbiter::store {

// An old version as the history keeps it once compacted: the event without its body's tree.
struct Compacted {
  EventType type = EventType::kAdded;
  std::string resource, ns, name;
  int64_t revision = 0;
  Body body;  // the version's body, its text made (and its tree left to the tree cache)
};

namespace {

// The memory a compacted event holds, for the byte bound.
size_t CompactedBytes(const Compacted& c) {
  return sizeof(Compacted) + c.body.text_size() + c.resource.size() + c.ns.size() + c.name.size();
}

// The event again, with the version's own body (its text made; its tree the tree cache's to keep or drop).
EventPtr Materialize(const Compacted& c) {
  Event e;
  e.type = c.type;
  e.object.resource = c.resource;
  e.object.ns = c.ns;
  e.object.name = c.name;
  e.object.revision = c.revision;
  e.object.body = c.body;
  return std::make_shared<const Event>(std::move(e));
}

// What identifies an object across its versions.
std::string ObjectKey(const std::string& resource, const std::string& ns, const std::string& name) {
  std::string k;
  k.reserve(resource.size() + ns.size() + name.size() + 2);
  k.append(resource).push_back('\0');
  k.append(ns).push_back('\0');
  k.append(name);
  return k;
}

}  // namespace

struct Kept {
  std::shared_ptr<const Event> event;               // null once compacted
  std::shared_ptr<const Compacted> compacted;       // set once compacted
  int64_t revision = 0;
  size_t bytes = 0;
  int64_t at_millis = 0;
  const std::string& resource() const { return event ? event->object.resource : compacted->resource; }
  const std::string& ns() const { return event ? event->object.ns : compacted->ns; }
  const std::string& name() const { return event ? event->object.name : compacted->name; }
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
  // Compaction: the revision of each object's newest kept event (ObjectKey), and the kept
  // events that became old, with when, in that order.
  std::unordered_map<std::string, int64_t> newest;
  std::deque<std::pair<int64_t, int64_t>> old;  // (revision, at_millis)
  size_t compacted = 0;
  std::condition_variable compactor_cv;  // the compactor: closing
};

namespace {

using State = WatchHub::State;

// The kept event at `revision`, or null. Needs state.mu.
Kept* FindKept(State& state, int64_t revision) {
  auto& h = state.history;
  auto it = std::lower_bound(h.begin(), h.end(), revision,
                             [](const Kept& k, int64_t rev) { return k.revision < rev; });
  return it != h.end() && it->revision == revision ? &*it : nullptr;
}

// Drops the oldest kept event (there must be one), handing what it holds to `retired`; it is no
// longer its object's newest kept event either. Needs state.mu.
void DropOldest(State& state, std::vector<std::shared_ptr<const void>>& retired) {
  Kept& k = state.history.front();
  state.bytes -= k.bytes;
  if (k.compacted) --state.compacted;
  if (!state.newest.empty()) {
    auto it = state.newest.find(ObjectKey(k.resource(), k.ns(), k.name()));
    if (it != state.newest.end() && it->second == k.revision) state.newest.erase(it);
  }
  if (k.event) retired.push_back(std::move(k.event));
  if (k.compacted) retired.push_back(std::move(k.compacted));
  state.history.pop_front();
}

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
    std::vector<Found> found;
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
    // Old versions are parsed from their text here, outside the hub's lock.
    std::vector<EventPtr> events;
    events.reserve(found.size());
    for (Found& f : found) {
      if (f.event) {
        events.push_back(std::move(f.event));
        continue;
      }
      try {
        events.push_back(Materialize(*f.compacted));
      } catch (const std::exception& e) {
        return Internal(DescribeWatch(resource_, ns_) + " could not read back revision " +
                        std::to_string(f.compacted->revision) + " of " +
                        DescribeKey(f.compacted->resource, f.compacted->ns, f.compacted->name) + ": " + e.what());
      }
    }
    return events;
  }

  void Stop() override {
    {
      std::lock_guard<std::mutex> lk(state_->mu);
      stopped_ = true;
    }
    state_->cv.notify_all();
  }

 private:
  struct Found {
    EventPtr event;                               // as published, or
    std::shared_ptr<const Compacted> compacted;   // an old version, to parse
  };

  // Appends the kept events after the cursor that match, and moves the cursor past every kept
  // event (matching or not) so that the next call does not scan them again. Needs state_->mu.
  void Collect(std::vector<Found>& found) {
    const auto& h = state_->history;
    auto it = std::upper_bound(h.begin(), h.end(), cursor_, [](int64_t rev, const Kept& e) { return rev < e.revision; });
    for (; it != h.end(); ++it) {
      if (it->resource() == resource_ && (ns_.empty() || it->ns() == ns_)) found.push_back({it->event, it->compacted});
      cursor_ = it->revision;
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
  const bool injected_clock = static_cast<bool>(limits.now_millis);
  if (!limits.now_millis) {
    limits.now_millis = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  state_->limits = std::move(limits);
  state_->horizon = start_revision;
  // With an injected clock, time is the caller's and so is compaction (CompactOld).
  if (state_->limits.compact_after.count() > 0 && !injected_clock) compactor_ = std::thread([this] { CompactorLoop(); });
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
  state_->compactor_cv.notify_all();
  if (compactor_.joinable()) compactor_.join();
  // `history` and then the reaper (with what it still holds) are released here, outside the lock.
}

EventPtr WatchHub::Publish(Event event, size_t bytes) {
  if (bytes == 0) {
    const size_t text = event.object.body.text_size();
    bytes = text > 0 ? text : ApproximateBytes(*event.object.body.tree());
  }
  bytes += event.object.name.size() + event.object.ns.size();
  auto e = std::make_shared<const Event>(std::move(event));
  const int64_t now = state_->limits.now_millis();
  const int64_t revision = e->object.revision;
  std::vector<std::shared_ptr<const void>> retired;
  {
    std::lock_guard<std::mutex> lk(state_->mu);
    state_->history.push_back({e, nullptr, revision, bytes, now});
    state_->bytes += bytes;
    const WatchHubLimits& l = state_->limits;
    if (l.compact_after.count() > 0) {
      // The object's version before this one is old from now; a deletion is old at once.
      auto [it, first] = state_->newest.try_emplace(ObjectKey(e->object.resource, e->object.ns, e->object.name), revision);
      if (!first) {
        state_->old.emplace_back(it->second, now);
        it->second = revision;
      }
      if (e->type == EventType::kDeleted) {
        state_->old.emplace_back(revision, now);
        state_->newest.erase(it);
      }
    }
    // The newest event always stays, whatever its size, so that a watch can see it.
    while (state_->history.size() > 1 &&
           (state_->history.size() > l.max_events || state_->bytes > l.max_bytes ||
            now - state_->history.front().at_millis > l.max_age.count())) {
      state_->horizon = state_->history.front().revision;
      DropOldest(*state_, retired);
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
    while (!h.empty() && h.front().revision <= revision) DropOldest(*state_, retired);
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

size_t WatchHub::compacted() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->compacted;
}

size_t WatchHub::CompactOld() {
  // Under the lock: the old versions whose time has come (each still kept as written).
  std::vector<EventPtr> due;
  {
    std::lock_guard<std::mutex> lk(state_->mu);
    const int64_t until = state_->limits.now_millis() - state_->limits.compact_after.count();
    while (!state_->old.empty() && state_->old.front().second <= until) {
      const Kept* k = FindKept(*state_, state_->old.front().first);  // null when it left the history
      if (k != nullptr && k->event) due.push_back(k->event);
      state_->old.pop_front();
    }
  }
  if (due.empty()) return 0;
  // Outside the lock: print each body (the events are immutable).
  std::vector<std::shared_ptr<const Compacted>> texts;
  texts.reserve(due.size());
  for (const EventPtr& e : due) {
    auto c = std::make_shared<Compacted>();
    try {
      (void)e->object.body.shared_text();  // its text, made if it is not yet
      c->body = e->object.body;
    } catch (const std::exception&) {
      // A body that cannot be printed as it is (a string that is not UTF-8) stays a tree.
      texts.push_back(nullptr);
      continue;
    }
    c->type = e->type;
    c->resource = e->object.resource;
    c->ns = e->object.ns;
    c->name = e->object.name;
    c->revision = e->object.revision;
    texts.push_back(std::move(c));
  }
  // Under the lock again: each replaces its event where the history still keeps it.
  size_t turned = 0;
  {
    std::lock_guard<std::mutex> lk(state_->mu);
    for (size_t i = 0; i < due.size(); ++i) {
      Kept* k = FindKept(*state_, due[i]->object.revision);
      if (texts[i] == nullptr || k == nullptr || k->event != due[i]) continue;
      state_->bytes -= k->bytes;
      k->bytes = CompactedBytes(*texts[i]);
      state_->bytes += k->bytes;
      k->compacted = std::move(texts[i]);
      k->event.reset();
      ++state_->compacted;
      ++turned;
    }
  }
  // `due` (now most likely the last references to the old trees) is released here, on the
  // compacting thread.
  return turned;
}

void WatchHub::CompactorLoop() {
  // Several times within compact_after, so that an old version waits at most a quarter more.
  const auto period = std::max(std::chrono::milliseconds(10), state_->limits.compact_after / 4);
  std::unique_lock<std::mutex> lk(state_->mu);
  while (!state_->closed) {
    state_->compactor_cv.wait_for(lk, period);
    if (state_->closed) break;
    lk.unlock();
    CompactOld();
    lk.lock();
  }
}

}  // namespace arbiter::store
