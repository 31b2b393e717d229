#include "arbiter/controlplane/event_recorder.h"

#include <cstdio>

#include "arbiter/controlplane/pod_json.h"

namespace arbiter::controlplane {

using Json = nlohmann::json;

EventRecorder::EventRecorder(store::Store& store, WriteBatch& batch, const Clock& clock, Duration ttl)
    : store_(store), batch_(batch), clock_(clock), ttl_(ttl) {}

Json EventRecorder::Body(const PodEvent& e, const std::string& name, const Seen& seen, const std::string& now) const {
  return Json{{"apiVersion", "v1"},
              {"kind", "Event"},
              {"metadata", {{"name", name}, {"namespace", e.ns}, {"creationTimestamp", seen.first}}},
              {"involvedObject", {{"kind", "Pod"}, {"namespace", e.ns}, {"name", e.pod}, {"uid", e.uid}, {"apiVersion", "v1"}}},
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
  return [this, key](const StatusOr<store::Object>& r) -> Status {
    auto it = correlated_.find(key);
    if (r.ok()) {
      if (it != correlated_.end() && it->second.name == r->name) it->second.revision = r->revision;
      return Status::Ok();
    }
    const StatusCode c = r.status().code();
    if (c != StatusCode::kConflict && c != StatusCode::kNotFound && c != StatusCode::kAlreadyExists) return r.status();
    if (it != correlated_.end()) it->second.revision = -1;  // gone: not repeated on
    return Status::Ok();
  };
}

void EventRecorder::Record(const PodEvent& e) {
  const std::string now = FormatRfc3339(clock_.Now() / kSecond * kSecond);
  std::string key;
  for (const std::string* part : {&e.ns, &e.pod, &e.uid, &e.type, &e.reason, &e.message, &e.component, &e.host}) {
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
        batch_.Update(store::Object{"events", e.ns, seen.name, seen.revision, nullptr}, std::move(next), Settle(key));
      }
      return;
    }
  }
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%016llx", static_cast<unsigned long long>(clock_.Now() * 1000 + seq_++));
  Seen seen{e.pod + suffix, 0, 1, now};
  batch_.Create("events", e.ns, seen.name, Body(e, seen.name, seen, now), Settle(key));
  if (auto [it, inserted] = correlated_.insert_or_assign(key, std::move(seen)); inserted) order_.push_back(key);
  while (order_.size() > kCorrelated) {
    correlated_.erase(order_.front());
    order_.pop_front();
  }
}

Status EventRecorder::ExpireOld() {
  const Timestamp now = clock_.Now();
  if (swept_at_ != 0 && now - swept_at_ < kMinute) return Status::Ok();
  swept_at_ = now;
  ARBITER_ASSIGN_OR_RETURN(events, store_.List("events", ""));
  for (const auto& e : events.items) {
    // When the event last happened: lastTimestamp, eventTime, or its creation.
    Timestamp last = 0;
    for (const char* field : {"lastTimestamp", "eventTime"}) {
      const auto it = e.body.find(field);
      if (it == e.body.end() || !it->is_string()) continue;
      if (auto t = ParseRfc3339(it->get<std::string>()); t.ok()) last = std::max(last, *t);
    }
    if (auto t = ParseRfc3339(StringAt(e.body, "metadata", "creationTimestamp")); t.ok()) last = std::max(last, *t);
    if (now - last <= ttl_) continue;
    auto r = store_.Delete("events", e.ns, e.name, e.revision);
    if (!r.ok() && r.status().code() != StatusCode::kConflict && r.status().code() != StatusCode::kNotFound) {
      return r.status();
    }
  }
  return Status::Ok();
}

}  // namespace arbiter::controlplane
