// The scheduling queue, as kube-scheduler's PriorityQueue:
//   * activeQ: pods ready to be tried, ordered by the QueueSort plugin (PrioritySort: higher
//     priority first, then earlier queue timestamp, then input order);
//   * backoffQ: pods that may not be retried before their backoff expires — initial * 2^(n-1)
//     after the n-th attempt, capped at max (1 s doubling to 10 s by default); ordered by expiry;
//   * unschedulable pool: pods that plugins rejected, waiting for a cluster event that one of the
//     rejecting plugins cares about, or for the leftover flush after 5 minutes.
// Pop takes the head of activeQ; when activeQ is empty it takes the head of backoffQ even before
// its backoff expires (SchedulerPopFromBackoffQ, on by default since 1.33), but never one that
// backs off after an error rather than a rejection (upstream's entityErrorBackoffQ: no rejecting
// plugin named, as for a pod group that failed, or a failed binding): those wait their backoff out.
// PreEnqueue plugins gate entry to activeQ: a pod one of them rejects (SchedulingGates: a pod
// with spec.schedulingGates) waits among the gated pods, which no cluster event and no flush
// moves; an update of the pod runs the check again, and the pod goes on once it passes (to its
// group's entry, for a group member). Upstream keeps such pods in the unschedulable pool marked
// gated, woken only by the pod updates SchedulingGates registers for; the effect is the same.
// Pod groups: the members of a group are held as one entry per root group, ordered by the root's
// priority and the earliest member's timestamp; the group gate (the GangScheduling PreEnqueue
// check: the PodGroup exists and enough members are known) keeps it out of activeQ until ready.
// All ordering is total and independent of hash order. Time comes from the injected Clock.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "arbiter/base/time.h"
#include "arbiter/sched/framework/framework.h"

namespace arbiter::sched {

// Cluster changes that can make unschedulable pods schedulable.
enum class ClusterEvent {
  kAssignedPodAdd,     // a pod was bound
  kAssignedPodDelete,  // a bound pod was deleted
  kAssignedPodUpdate,  // a bound pod changed (labels, termination)
  kNodeAdd,
  kNodeUpdate,
  kPodGroupChange,     // a pod group or its membership changed
  kStorageChange,      // a claim, volume, storage class or CSI node was added or changed
};
inline constexpr size_t kClusterEventKinds = 7;
static_assert(static_cast<size_t>(ClusterEvent::kStorageChange) + 1 == kClusterEventKinds,
              "kClusterEventKinds counts every ClusterEvent (the queue indexes its pool by them)");

// Whether a plugin that rejected a pod cares about an event (a coarse form of queueing hints).
bool PluginCaresAbout(std::string_view plugin, ClusterEvent event);

struct QueueOptions {
  Duration initial_backoff = kSecond;
  Duration max_backoff = 10 * kSecond;
  Duration max_in_unschedulable = 5 * kMinute;
};

class SchedulingQueue {
 public:
  SchedulingQueue(const Framework* framework, const Clock* clock, QueueOptions options);

  // Adds a new pending pod. `enqueue_time` is its queue timestamp (defaults to now).
  void Add(PodInfoPtr pod, std::optional<Timestamp> enqueue_time = std::nullopt);
  // Adds a lone pod whose binding failed after `attempts` attempts: it waits out its backoff in
  // backoffQ, as upstream's failure handler returns a pod after a binding error.
  void AddBackingOff(PodInfoPtr pod, int attempts);
  // Adds a pending member of the group whose root is `group` (with the root's `priority`): it
  // joins the group's entry, made on its first member.
  void AddGroupMember(PodInfoPtr pod, const std::string& group, int32_t priority,
                      std::optional<Timestamp> enqueue_time = std::nullopt);
  // The gate a group must pass to enter activeQ; a group that fails waits in the unschedulable
  // pool (rejected by "GangScheduling") until a member joins or a kPodGroupChange event.
  using GroupGate = std::function<bool(const QueuedPodInfo&)>;
  void set_group_gate(GroupGate gate) { group_gate_ = std::move(gate); }
  // Moves members to the entry of the root `unit_of` names now, with that root's priority (after
  // groups were added: a pod that arrived before its PodGroup, or before that group's parent).
  // Entries in flight are left to their cycle.
  using UnitOf = std::function<std::pair<std::string, int32_t>(const PodInfo&)>;
  void Regroup(const UnitOf& unit_of);
  // Returns a group after a cycle that bound some members: the rest go straight back to activeQ
  // with their old timestamp (upstream requeues them so the next cycle may preempt for them).
  void Requeue(QueuedPodInfo info);
  // The next pod to try, with its attempt count incremented; nullopt if no pod is ready.
  std::optional<QueuedPodInfo> Pop();
  // Returns a pod after a failed attempt. Pods rejected by plugins go to the unschedulable
  // pool; pods that failed with an error (no rejecting plugin) go to backoffQ.
  void AddUnschedulable(QueuedPodInfo info);
  // Replaces the stored pod (same UID), wherever it waits.
  void Update(PodInfoPtr pod);
  // Removes a pod (from its group's entry, for a member; an entry left empty goes).
  void Delete(const std::string& uid);

  // Moves unschedulable pods whose rejecting plugins care about `event` to activeQ, or to
  // backoffQ if they are still backing off; with `at_most_priority`, only entries of that
  // priority or lower (upstream's PreEnqueueCheck of MoveAllToActiveOrBackoffQueue).
  void MoveOnEvent(ClusterEvent event, std::optional<int32_t> at_most_priority = std::nullopt);
  // Moves pods whose backoff has expired to activeQ, and pods that have waited in the
  // unschedulable pool longer than the maximum to activeQ or backoffQ.
  void Flush();
  // The earliest time a backed-off pod becomes ready, or a pool pod is due for the leftover
  // flush; nullopt if nothing is waiting on time.
  std::optional<Timestamp> NextWakeup() const;
  // The earliest backoff expiry alone (nullopt if nothing backs off).
  std::optional<Timestamp> NextBackoffExpiry() const;

  size_t active_size() const { return active_.size(); }
  size_t backoff_size() const { return backoff_.size() + error_backoff_.size(); }
  size_t unschedulable_size() const { return unschedulable_.size(); }
  size_t gated_size() const { return gated_.size(); }
  bool Contains(const std::string& uid) const { return unit_of_.count(uid) != 0; }
  Timestamp BackoffExpiry(const QueuedPodInfo& info) const;

  // Where a waiting entry is (upstream's PendingPods, which its debugger and /debug endpoints
  // read): activeQ, backoffQ, the unschedulable pool or the gated pods.
  enum class Pool { kActive, kBackoff, kUnschedulable, kGated };
  struct PendingEntry {
    Pool pool;
    const QueuedPodInfo* info;  // valid until the queue next changes
    Timestamp backoff_expiry;   // kBackoff only
  };
  // Every waiting entry (a group's entry once, with its members): activeQ in pop order, then
  // backoffQ by expiry, then the pool and the gated pods in arrival order. Entries in flight (a
  // cycle holds them) are not listed.
  std::vector<PendingEntry> Pending() const;

 private:
  struct Entry {
    QueuedPodInfo info;
    enum class Where { kActive, kBackoff, kUnschedulable, kGated, kInFlight } where = Where::kInFlight;
    // A gated group member's root group and its priority: where it goes once ungated.
    std::string gated_group;
    int32_t gated_priority = 0;
    Timestamp backoff_expiry = 0;
    bool error_backoff = false;  // in backoffQ after an error: not taken before its expiry
    Timestamp unschedulable_since = 0;
    uint32_t interest = 0;  // in the pool: a bit per ClusterEvent its rejecting plugins care about
  };
  struct ActiveLess {
    const SchedulingQueue* q;
    bool operator()(const Entry* a, const Entry* b) const;
  };
  struct BackoffLess {
    const SchedulingQueue* q;
    bool operator()(const Entry* a, const Entry* b) const;
  };
  // The pool's indexes need no queue order (what leaves the pool is ordered where it goes):
  // the sequence is unique and fixed while an entry is parked.
  struct SequenceLess {
    bool operator()(const Entry* a, const Entry* b) const { return a->info.sequence < b->info.sequence; }
  };
  struct DueLess {
    bool operator()(const Entry* a, const Entry* b) const {
      if (a->unschedulable_since != b->unschedulable_since) return a->unschedulable_since < b->unschedulable_since;
      return a->info.sequence < b->info.sequence;
    }
  };

  void ToActiveOrBackoff(Entry* e);
  // Into backoff_ or error_backoff_, as e->error_backoff says.
  void InsertBackoff(Entry* e);
  // True if a PreEnqueue plugin rejects the lone pod `pod`.
  bool Gated(const PodInfo& pod) const { return !framework_->RunPreEnqueuePlugins(pod).IsSuccess(); }
  // Makes a gated entry for `pod` (a lone pod, or a member of `group` when it is not empty).
  void AddGated(PodInfoPtr pod, const std::string& group, int32_t priority, Timestamp at);
  // Puts `e` in the unschedulable pool (its unschedulable_since and plugins set), indexed by the
  // events that can move it and by the time it is due for the leftover flush; Unpark takes it out.
  void Park(Entry* e);
  void Unpark(Entry* e);
  void PushActive(Entry* e);
  void Detach(Entry* e);
  Entry* Find(const QueuedPodInfo& info);
  // Drops the members of a group entry that were deleted (bound) since it was last compacted.
  void CompactMembers(Entry* e);
  // Sets the queue timestamp of the members a cycle tried (`tried`'s) to now.
  void RefreshTriedMembers(const QueuedPodInfo& tried, std::map<std::string, MemberQueueing>& queueing) const;
  // Group entries sort before lone pods and together (Regroup visits them as one run).
  static std::string UnitKey(const QueuedPodInfo& info) {
    return info.group.empty() ? "pod:" + info.pod->uid() : "group:" + info.group;
  }

  const Framework* framework_;
  const Clock* clock_;
  QueueOptions options_;
  uint64_t next_sequence_ = 0;
  GroupGate group_gate_;
  std::map<std::string, std::unique_ptr<Entry>> entries_;  // by UnitKey
  std::map<std::string, std::string> unit_of_;             // pod UID -> UnitKey of its entry
  std::set<Entry*, ActiveLess> active_;
  std::set<Entry*, BackoffLess> backoff_;
  std::set<Entry*, BackoffLess> error_backoff_;  // backing off after an error (no early pop)
  std::set<Entry*, SequenceLess> unschedulable_;
  std::set<Entry*, SequenceLess> gated_;
  // The pool by event (the entries an event moves: one lookup per event, not a walk of the
  // pool) and by arrival (the leftover flush and the next wakeup read the oldest first).
  std::array<std::set<Entry*, SequenceLess>, kClusterEventKinds> waiting_on_;
  std::set<Entry*, DueLess> by_since_;
};

}  // namespace arbiter::sched
