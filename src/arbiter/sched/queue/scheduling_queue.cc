// The three sub-queues and the moves between them.
#include "arbiter/sched/queue/scheduling_queue.h"

#include <algorithm>
#include <tuple>

namespace arbiter::sched {

bool PluginCaresAbout(std::string_view plugin, ClusterEvent event) {
  using E = ClusterEvent;
  const bool node_event = event == E::kNodeAdd || event == E::kNodeUpdate;
  if (plugin == "NodeResourcesFit" || plugin == "NodePorts") {
    // A pod that is updated (labels, a deletion timestamp) still holds its resources and ports
    // until it is gone, so only deletions free room.
    return node_event || event == E::kAssignedPodDelete;
  }
  if (plugin == "InterPodAffinity" || plugin == "PodTopologySpread") {
    return node_event || event == E::kAssignedPodAdd || event == E::kAssignedPodDelete ||
           event == E::kAssignedPodUpdate;
  }
  if (plugin == "GangScheduling") return event == E::kPodGroupChange;  // waits for its group or members
  if (plugin == "NodeAffinity" || plugin == "TaintToleration" || plugin == "NodeUnschedulable" ||
      plugin == "NodeName") {
    return node_event;
  }
  // Plugins without a known interest (and PreEnqueue gates) react to everything.
  return true;
}

SchedulingQueue::SchedulingQueue(const Framework* framework, const Clock* clock, QueueOptions options)
    : framework_(framework),
      clock_(clock),
      options_(options),
      active_(ActiveLess{this}),
      backoff_(BackoffLess{this}),
      error_backoff_(BackoffLess{this}) {}

bool SchedulingQueue::ActiveLess::operator()(const Entry* a, const Entry* b) const {
  const QueueSortPlugin* sort = q->framework_->queue_sort();
  if (sort != nullptr) {
    if (sort->Less(a->info, b->info)) return true;
    if (sort->Less(b->info, a->info)) return false;
  }
  return a->info.sequence < b->info.sequence;
}

bool SchedulingQueue::BackoffLess::operator()(const Entry* a, const Entry* b) const {
  if (a->backoff_expiry != b->backoff_expiry) return a->backoff_expiry < b->backoff_expiry;
  return ActiveLess{q}(a, b);
}

Timestamp SchedulingQueue::BackoffExpiry(const QueuedPodInfo& info) const {
  if (info.attempts == 0) return info.timestamp;
  Duration d = options_.initial_backoff;
  for (int i = 1; i < info.attempts && d < options_.max_backoff; ++i) d *= 2;
  if (d > options_.max_backoff) d = options_.max_backoff;
  return info.timestamp + d;
}

std::vector<SchedulingQueue::PendingEntry> SchedulingQueue::Pending() const {
  std::vector<PendingEntry> out;
  out.reserve(active_.size() + backoff_.size() + unschedulable_.size() + gated_.size());
  for (const Entry* e : active_) out.push_back({Pool::kActive, &e->info, 0});
  for (const Entry* e : backoff_) out.push_back({Pool::kBackoff, &e->info, e->backoff_expiry});
  for (const Entry* e : error_backoff_) out.push_back({Pool::kBackoff, &e->info, e->backoff_expiry});
  for (const Entry* e : unschedulable_) out.push_back({Pool::kUnschedulable, &e->info, 0});
  for (const Entry* e : gated_) out.push_back({Pool::kGated, &e->info, 0});
  return out;
}

void SchedulingQueue::PushActive(Entry* e) {
  if (e->info.group.empty() && Gated(*e->info.pod)) {
    e->where = Entry::Where::kGated;
    gated_.insert(e);
    return;
  }
  if (!e->info.group.empty() && group_gate_ && !group_gate_(e->info)) {
    e->info.unschedulable_plugins = {"GangScheduling"};
    e->unschedulable_since = clock_->Now();
    Park(e);
    return;
  }
  e->where = Entry::Where::kActive;
  active_.insert(e);
}

void SchedulingQueue::Add(PodInfoPtr pod, std::optional<Timestamp> enqueue_time) {
  const std::string uid = pod->uid();
  if (unit_of_.count(uid)) {
    Update(std::move(pod));
    return;
  }
  auto e = std::make_unique<Entry>();
  e->info.priority = pod->pod.priority;
  e->info.pod = std::move(pod);
  e->info.timestamp = enqueue_time.value_or(clock_->Now());
  e->info.sequence = next_sequence_++;
  Entry* raw = e.get();
  const std::string key = UnitKey(raw->info);
  unit_of_[uid] = key;
  entries_[key] = std::move(e);
  PushActive(raw);
}

void SchedulingQueue::AddGated(PodInfoPtr pod, const std::string& group, int32_t priority, Timestamp at) {
  auto e = std::make_unique<Entry>();
  e->info.priority = pod->pod.priority;
  e->info.timestamp = at;
  e->info.sequence = next_sequence_++;
  e->gated_group = group;
  e->gated_priority = priority;
  const std::string uid = pod->uid();
  e->info.pod = std::move(pod);
  Entry* raw = e.get();
  const std::string key = UnitKey(raw->info);
  unit_of_[uid] = key;
  entries_[key] = std::move(e);
  raw->where = Entry::Where::kGated;
  gated_.insert(raw);
}

void SchedulingQueue::AddBackingOff(PodInfoPtr pod, int attempts) {
  const std::string uid = pod->uid();
  Add(std::move(pod));
  Entry* e = entries_.at(unit_of_.at(uid)).get();
  if (e->where != Entry::Where::kActive || !e->info.group.empty()) return;
  Detach(e);
  e->info.attempts = attempts;
  e->backoff_expiry = BackoffExpiry(e->info);
  e->where = Entry::Where::kBackoff;
  e->error_backoff = true;  // an error, not a rejection: it waits its backoff out
  InsertBackoff(e);
}

void SchedulingQueue::AddGroupMember(PodInfoPtr pod, const std::string& group, int32_t priority,
                                     std::optional<Timestamp> enqueue_time) {
  const std::string uid = pod->uid();
  if (unit_of_.count(uid)) {
    Update(std::move(pod));
    return;
  }
  const Timestamp at = enqueue_time.value_or(clock_->Now());
  if (Gated(*pod)) {  // the member joins its group once its own gates are gone
    AddGated(std::move(pod), group, priority, at);
    return;
  }
  const std::string key = "group:" + group;
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    auto e = std::make_unique<Entry>();
    e->info.priority = priority;
    e->info.group = group;
    e->info.pod = pod;
    e->info.member_queueing[uid] = {0, at};
    e->info.members.push_back(std::move(pod));
    e->info.timestamp = at;
    e->info.sequence = next_sequence_++;
    Entry* raw = e.get();
    unit_of_[uid] = key;
    entries_[key] = std::move(e);
    PushActive(raw);
    return;
  }
  Entry* e = it->second.get();
  unit_of_[uid] = key;
  const auto where = e->where;
  Detach(e);  // the earliest member's timestamp orders the group
  e->info.member_queueing[uid] = {0, at};
  e->info.members.push_back(std::move(pod));
  if (at < e->info.timestamp) e->info.timestamp = at;
  switch (where) {
    case Entry::Where::kActive: e->where = where; active_.insert(e); break;  // a new member cannot close the gate
    case Entry::Where::kBackoff: e->where = where; InsertBackoff(e); break;
    case Entry::Where::kUnschedulable:
      // A new member may open the gate of a group that waits for its quorum.
      if (e->info.unschedulable_plugins == std::set<std::string>{"GangScheduling"}) {
        ToActiveOrBackoff(e);
      } else {
        Park(e);
      }
      break;
    case Entry::Where::kGated:  // group entries are never gated (their members are)
    case Entry::Where::kInFlight: break;
  }
}

void SchedulingQueue::Regroup(const UnitOf& unit_of) {
  struct Move {
    PodInfoPtr pod;
    std::string group;
    int32_t priority;
    Timestamp at;
  };
  std::vector<Move> moves;
  std::vector<std::pair<Entry*, int32_t>> repriced;
  // Lone pods gated until their group can be scheduled: each takes its unit anew (in any order:
  // nothing is moved for them).
  for (Entry* e : gated_) {
    if (!e->gated_group.empty()) std::tie(e->gated_group, e->gated_priority) = unit_of(*e->info.pod);
  }
  // Group entries: keyed "group:..." (UnitKey), so they are one run of the map, in its order.
  // Only they are visited, not every pending pod: a day adds a group for each gang that arrives.
  static constexpr std::string_view kGroupPrefix = "group:";
  for (auto it = entries_.lower_bound(std::string(kGroupPrefix));
       it != entries_.end() && std::string_view(it->first).substr(0, kGroupPrefix.size()) == kGroupPrefix; ++it) {
    const std::string& key = it->first;
    Entry* e = it->second.get();
    if (e->info.group.empty() || e->where == Entry::Where::kInFlight) continue;
    for (const auto& m : e->info.members) {
      auto [group, priority] = unit_of(*m);
      if ("group:" + group != key) {
        auto q = e->info.member_queueing.find(m->uid());
        moves.push_back({m, group, priority, q != e->info.member_queueing.end() ? q->second.timestamp : e->info.timestamp});
      } else if (priority != e->info.priority) {
        repriced.emplace_back(e, priority);
      }
    }
  }
  for (auto& [e, priority] : repriced) {
    const auto where = e->where;
    Detach(e);
    e->info.priority = priority;
    switch (where) {
      case Entry::Where::kActive: PushActive(e); break;
      case Entry::Where::kBackoff: e->where = where; InsertBackoff(e); break;
      case Entry::Where::kUnschedulable: Park(e); break;
      case Entry::Where::kGated:  // group entries are never gated
      case Entry::Where::kInFlight: break;
    }
  }
  for (auto& m : moves) {
    Delete(m.pod->uid());
    AddGroupMember(std::move(m.pod), m.group, m.priority, m.at);
  }
}

SchedulingQueue::Entry* SchedulingQueue::Find(const QueuedPodInfo& info) {
  auto it = entries_.find(UnitKey(info));
  return it == entries_.end() ? nullptr : it->second.get();
}

void SchedulingQueue::Requeue(QueuedPodInfo info) {
  Entry* e = Find(info);
  if (e == nullptr) return;
  Detach(e);
  // Keep the members that are still pending (binding removed the others).
  CompactMembers(e);
  std::vector<PodInfoPtr> members = std::move(e->info.members);
  auto queueing = std::move(e->info.member_queueing);
  RefreshTriedMembers(info, queueing);
  e->info = std::move(info);
  e->info.members = std::move(members);
  e->info.member_queueing = std::move(queueing);
  if (e->info.members.empty()) {
    entries_.erase(UnitKey(e->info));
    return;
  }
  e->info.pod = e->info.members.front();
  e->where = Entry::Where::kActive;
  active_.insert(e);
}

std::optional<QueuedPodInfo> SchedulingQueue::Pop() {
  Entry* e = nullptr;
  if (!active_.empty()) {
    e = *active_.begin();
    active_.erase(active_.begin());
  } else if (!backoff_.empty()) {
    e = *backoff_.begin();
    backoff_.erase(backoff_.begin());
  } else {
    return std::nullopt;
  }
  e->where = Entry::Where::kInFlight;
  e->info.attempts++;
  for (const auto& m : e->info.members) e->info.member_queueing[m->uid()].attempts++;
  if (e->info.attempts == 1) e->info.initial_attempt = clock_->Now();
  return e->info;
}

void SchedulingQueue::AddUnschedulable(QueuedPodInfo info) {
  Entry* e = Find(info);
  if (e == nullptr) return;  // deleted while in flight
  Detach(e);
  if (!e->info.group.empty()) CompactMembers(e);
  std::vector<PodInfoPtr> members = std::move(e->info.members);
  auto queueing = std::move(e->info.member_queueing);
  RefreshTriedMembers(info, queueing);
  e->info = std::move(info);
  if (!e->info.group.empty()) {
    // The entry's members are the truth: some may have been bound or deleted meanwhile, others
    // joined while the cycle ran.
    e->info.members = std::move(members);
    e->info.member_queueing = std::move(queueing);
    if (e->info.members.empty()) {
      entries_.erase(UnitKey(e->info));
      return;
    }
    e->info.pod = e->info.members.front();
  }
  e->info.timestamp = clock_->Now();  // re-adding refreshes the queue timestamp
  e->backoff_expiry = BackoffExpiry(e->info);
  if (e->info.unschedulable_plugins.empty()) {
    e->where = Entry::Where::kBackoff;
    e->error_backoff = true;
    InsertBackoff(e);
  } else {
    e->unschedulable_since = clock_->Now();
    Park(e);
  }
}

void SchedulingQueue::InsertBackoff(Entry* e) { (e->error_backoff ? error_backoff_ : backoff_).insert(e); }

void SchedulingQueue::Detach(Entry* e) {
  switch (e->where) {
    case Entry::Where::kActive: active_.erase(e); break;
    case Entry::Where::kBackoff: (e->error_backoff ? error_backoff_ : backoff_).erase(e); break;
    case Entry::Where::kUnschedulable: Unpark(e); break;
    case Entry::Where::kGated: gated_.erase(e); break;
    case Entry::Where::kInFlight: break;
  }
  e->where = Entry::Where::kInFlight;
}

void SchedulingQueue::Update(PodInfoPtr pod) {
  auto u = unit_of_.find(pod->uid());
  if (u == unit_of_.end()) return;
  Entry* e = entries_.at(u->second).get();
  const auto where = e->where;
  if (where == Entry::Where::kGated) {
    if (Gated(*pod)) {
      e->info.pod = std::move(pod);
      return;
    }
    // The last gate went: the pod enters the queue with its first queue timestamp.
    const std::string group = e->gated_group;
    const int32_t priority = e->gated_priority;
    const Timestamp at = e->info.timestamp;
    Detach(e);
    entries_.erase(u->second);
    unit_of_.erase(u);
    if (group.empty()) {
      Add(std::move(pod), at);
    } else {
      AddGroupMember(std::move(pod), group, priority, at);
    }
    return;
  }
  Detach(e);  // ordering keys may change
  if (e->info.group.empty()) {
    e->info.priority = pod->pod.priority;
    e->info.pod = std::move(pod);
  } else {
    for (auto& m : e->info.members) {
      if (m->uid() == pod->uid()) m = pod;
    }
    e->info.pod = e->info.members.front();
  }
  switch (where) {
    case Entry::Where::kActive: PushActive(e); break;
    case Entry::Where::kBackoff: e->where = where; InsertBackoff(e); break;
    case Entry::Where::kUnschedulable: Park(e); break;
    case Entry::Where::kGated:  // not reached: gated entries are lone pods, handled above
    case Entry::Where::kInFlight: break;
  }
}

void SchedulingQueue::Delete(const std::string& uid) {
  auto u = unit_of_.find(uid);
  if (u == unit_of_.end()) return;
  auto it = entries_.find(u->second);
  unit_of_.erase(u);
  Entry* e = it->second.get();
  if (!e->info.group.empty()) {
    // A group in flight is handed back by its cycle, which binds members one by one: its member
    // list is compacted then, once, rather than once per bound member.
    if (e->where == Entry::Where::kInFlight) return;
    CompactMembers(e);
    if (!e->info.members.empty()) return;  // the order does not depend on the members
  }
  Detach(e);
  entries_.erase(it);
}

void SchedulingQueue::CompactMembers(Entry* e) {
  const std::string key = UnitKey(e->info);
  auto& m = e->info.members;
  m.erase(std::remove_if(m.begin(), m.end(),
                         [&](const PodInfoPtr& p) {
                           auto u = unit_of_.find(p->uid());
                           if (u != unit_of_.end() && u->second == key) return false;
                           e->info.member_queueing.erase(p->uid());
                           return true;
                         }),
          m.end());
  if (!m.empty()) e->info.pod = m.front();
}

void SchedulingQueue::RefreshTriedMembers(const QueuedPodInfo& tried,
                                          std::map<std::string, MemberQueueing>& queueing) const {
  // Each member the cycle tried comes back through upstream's failure handler, which refreshes
  // its own queue timestamp (AddUnschedulableIfNotPresent); members that joined meanwhile keep
  // theirs.
  for (const auto& m : tried.members) {
    if (auto q = queueing.find(m->uid()); q != queueing.end()) q->second.timestamp = clock_->Now();
  }
}

void SchedulingQueue::ToActiveOrBackoff(Entry* e) {
  if (e->backoff_expiry > clock_->Now()) {
    e->where = Entry::Where::kBackoff;
    e->error_backoff = false;
    InsertBackoff(e);
  } else {
    PushActive(e);
  }
}

void SchedulingQueue::Park(Entry* e) {
  e->where = Entry::Where::kUnschedulable;
  e->interest = 0;
  for (size_t k = 0; k < kClusterEventKinds; ++k) {
    const auto event = static_cast<ClusterEvent>(k);
    bool cares = e->info.unschedulable_plugins.empty();
    for (const auto& p : e->info.unschedulable_plugins) cares = cares || PluginCaresAbout(p, event);
    if (!cares) continue;
    e->interest |= uint32_t{1} << k;
    waiting_on_[k].insert(e);
  }
  unschedulable_.insert(e);
  by_since_.insert(e);
}

void SchedulingQueue::Unpark(Entry* e) {
  for (size_t k = 0; k < kClusterEventKinds; ++k) {
    if ((e->interest >> k) & 1) waiting_on_[k].erase(e);
  }
  e->interest = 0;
  unschedulable_.erase(e);
  by_since_.erase(e);
  e->where = Entry::Where::kInFlight;
}

void SchedulingQueue::MoveOnEvent(ClusterEvent event, std::optional<int32_t> at_most_priority) {
  // Taken before any moves: a pod gated again on its way out is parked anew and waits for the
  // next event.
  auto& waiting = waiting_on_[static_cast<size_t>(event)];
  const std::vector<Entry*> moving(waiting.begin(), waiting.end());
  for (Entry* e : moving) {
    if (at_most_priority && e->info.priority > *at_most_priority) continue;
    Unpark(e);
    ToActiveOrBackoff(e);
  }
}

void SchedulingQueue::Flush() {
  const Timestamp now = clock_->Now();
  for (auto* set : {&backoff_, &error_backoff_}) {
    while (!set->empty() && (*set->begin())->backoff_expiry <= now) {
      Entry* e = *set->begin();
      set->erase(set->begin());
      PushActive(e);
    }
  }
  // The due pods (the oldest first) are taken before any moves: one gated again on its way
  // out is parked anew and waits for the next flush.
  std::vector<Entry*> due;
  for (Entry* e : by_since_) {
    if (now - e->unschedulable_since < options_.max_in_unschedulable) break;
    due.push_back(e);
  }
  for (Entry* e : due) {
    Unpark(e);
    ToActiveOrBackoff(e);
  }
}

std::optional<Timestamp> SchedulingQueue::NextBackoffExpiry() const {
  std::optional<Timestamp> t;
  for (const auto* set : {&backoff_, &error_backoff_}) {
    if (!set->empty() && (!t || (*set->begin())->backoff_expiry < *t)) t = (*set->begin())->backoff_expiry;
  }
  return t;
}

std::optional<Timestamp> SchedulingQueue::NextWakeup() const {
  std::optional<Timestamp> t;
  if (!backoff_.empty()) t = (*backoff_.begin())->backoff_expiry;
  if (!error_backoff_.empty()) {
    const Timestamp due = (*error_backoff_.begin())->backoff_expiry;
    if (!t || due < *t) t = due;
  }
  if (!by_since_.empty()) {
    const Timestamp due = (*by_since_.begin())->unschedulable_since + options_.max_in_unschedulable;
    if (!t || due < *t) t = due;
  }
  return t;
}

}  // namespace arbiter::sched
