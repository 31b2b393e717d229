#include "arbiter/controlplane/event_recorder.h"

#include <cstdio>
#include <utility>

#include "arbiter/controlplane/pod_json.h"

namespace arbiter::controlplane {

using Json = nlohmann::json;

EventRecorder::EventRecorder(store::Store& store, const Clock& clock, Duration ttl, bool background)
    : store_(store), clock_(clock), ttl_(ttl), batch_(store) {
  if (background) thread_ = std::thread([this] { Run(); });
}

EventRecorder::~EventRecorder() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  (void)Flush();
}

void EventRecorder::Record(const PodEvent& e) {
  const Timestamp at = clock_.Now();
  {
    std::lock_guard<std::mutex> lk(mu_);
    ++recorded_;
    if (queue_.size() >= kMaxQueued) {
      ++written_;  // dropped counts as done
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    queue_.push_back({e, at});
  }
  if (thread_.joinable()) cv_.notify_one();
}

void EventRecorder::Run() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left
    std::vector<Queued> events = std::exchange(queue_, {});
    const size_t n = events.size();
    lk.unlock();
    Status st;
    {
      std::lock_guard<std::mutex> w(writer_mu_);
      st = Write(std::move(events));
    }
    lk.lock();
    if (!st.ok() && error_.ok()) error_ = st;
    written_ += n;
    idle_.notify_all();
  }
}

Status EventRecorder::Flush() {
  if (thread_.joinable()) {
    std::unique_lock<std::mutex> lk(mu_);
    const uint64_t target = recorded_;
    idle_.wait(lk, [&] { return written_ >= target || stopping_; });
    return std::exchange(error_, Status::Ok());
  }
  std::vector<Queued> events;
  {
    std::lock_guard<std::mutex> lk(mu_);
    events = std::exchange(queue_, {});
    written_ += events.size();
  }
  std::lock_guard<std::mutex> w(writer_mu_);
  return Write(std::move(events));
}

Json EventRecorder::Body(const PodEvent& e, const std::string& name, const Seen& seen, const std::string& now) const {
  return Json{{"apiVersion", "v1"},
              {"kind", "Event"},
              {"metadata", {{"name", name}, {"namespace", e.ns}, {"creationTimestamp", seen.first}}},
              {"involvedObject",
               {{"kind", e.kind}, {"namespace", e.ns}, {"name", e.pod}, {"uid", e.uid}, {"apiVersion", e.api_version}}},
              {"reason", e.reason},
              {"message", e.message},
              {"type", e.type},
              {"source", e.host.empty() ? Json{{"component", e.component}} : Json{{"component", e.component}, {"host", e.host}}},
              {"reportingComponent", e.component},
              {"firstTimestamp", seen.first},
              {"lastTimestamp", now},
              {"count", seen.count}};
}

WriteBatch::Done EventRecorder::Settle(const std::string& key) {
  // A lost race (the event expired or was deleted meanwhile) forgets it: the next repeat starts
  // a new one.
  return [this, key](const StatusOr<store::ObjectPtr>& r) -> Status {
    auto it = correlated_.find(key);
    if (r.ok()) {
      if (it != correlated_.end() && it->second.name == (*r)->name) it->second.revision = (*r)->revision;
      return Status::Ok();
    }
    const StatusCode c = r.status().code();
    if (c != StatusCode::kConflict && c != StatusCode::kNotFound && c != StatusCode::kAlreadyExists) return r.status();
    if (it != correlated_.end()) it->second.revision = -1;
    return Status::Ok();
  };
}

Status EventRecorder::Write(std::vector<Queued> events) {
  for (const Queued& q : events) {
    const PodEvent& e = q.event;
    const std::string now = FormatRfc3339(q.at / kSecond * kSecond);
    std::string key;
    for (const std::string* part : {&e.kind, &e.ns, &e.pod, &e.uid, &e.type, &e.reason, &e.message, &e.component, &e.host}) {
      key += *part;
      key += '\x1f';
    }
    if (auto it = correlated_.find(key); it != correlated_.end() && it->second.revision >= 0) {
      Seen& seen = it->second;
      const store::Object* queued = batch_.Pending("events", e.ns, seen.name);
      if (queued != nullptr || seen.revision > 0) {
        ++seen.count;
        Json next = Body(e, seen.name, seen, now);
        if (queued != nullptr) {
          batch_.Update(*queued, std::move(next), Settle(key));  // merges into the queued write
        } else {
          batch_.Update(store::Object{"events", e.ns, seen.name, seen.revision, {}}, std::move(next), Settle(key));
        }
        continue;
      }
    }
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".%016llx", static_cast<unsigned long long>(q.at * 1000 + seq_++));
    Seen seen{e.pod + suffix, 0, 1, now};
    batch_.Create("events", e.ns, seen.name, Body(e, seen.name, seen, now), Settle(key));
    if (auto [it, inserted] = correlated_.insert_or_assign(key, std::move(seen)); inserted) order_.push_back(key);
    while (order_.size() > kCorrelated) {
      correlated_.erase(order_.front());
      order_.pop_front();
    }
  }
  return batch_.Flush();
}

size_t EventRecorder::remembered() const {
  std::lock_guard<std::mutex> w(writer_mu_);
  return correlated_.size();
}

Status EventRecorder::ExpireOld() {
  const Timestamp now = clock_.Now();
  if (swept_at_ != 0 && now - swept_at_ < kMinute) return Status::Ok();
  swept_at_ = now;
  ARBITER_ASSIGN_OR_RETURN(events, store_.List("events", ""));
  for (const auto& e : events.items) {
    // When the event last happened: lastTimestamp, eventTime, or its creation.
    Timestamp last = 0;
    const store::Body::Tree event = e.body.tree();
    for (const char* field : {"lastTimestamp", "eventTime"}) {
      const auto it = event->find(field);
      if (it == event->end() || !it->is_string()) continue;
      if (auto t = ParseRfc3339(it->get<std::string>()); t.ok()) last = std::max(last, *t);
    }
    if (auto t = ParseRfc3339(StringAt(*event, "metadata", "creationTimestamp")); t.ok()) last = std::max(last, *t);
    if (now - last <= ttl_) continue;
    auto r = store_.Delete("events", e.ns, e.name, e.revision);
    if (!r.ok() && r.status().code() != StatusCode::kConflict && r.status().code() != StatusCode::kNotFound) {
      return r.status();
    }
  }
  return Status::Ok();
}

}  // namespace arbiter::controlplane
