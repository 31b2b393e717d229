// How often each controller lineage has been preempted: the record behind Arbiter's thrash guard
// (DefaultPreemptionArgs maxPreemptionsPerPod within preemptionWindowSeconds, docs/upstream-rules.md
// Part F§5). A lineage is the pods of one controller, named by the controller's uid (a
// ReplicaSet's, a Job's): a pod preempted and made again by its controller is the same lineage.
//
// The live scheduler and the simulator record each eviction here; the live scheduler also writes
// the lineage's times on its controller as the annotation `arbiter.dev/preemptions`, a JSON list
// of RFC 3339 times, which `plan` reads back (Seed). Not thread-safe: its scheduler's thread
// owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/base/status.h"
#include "arbiter/base/time.h"
#include "arbiter/model/objects.h"

namespace arbiter::sched::preemption {

inline constexpr std::string_view kPreemptionsAnnotation = "arbiter.dev/preemptions";

class PreemptionHistory {
 public:
  // At most this many times are kept per lineage (the newest): the guard needs no more than its
  // largest maximum, and an annotation stays small.
  static constexpr size_t kMaxTimesPerLineage = model::kMaxPreemptionsPerPod;

  // A preemption of a pod of lineage `owner_uid` at `at`.
  void Record(const std::string& owner_uid, Timestamp at);
  // Times known from elsewhere (the controller's annotation), merged with those recorded: each
  // time as many times as the more of the two holds it.
  void Seed(const std::string& owner_uid, const std::vector<Timestamp>& times);
  // How many of the lineage's preemptions happened at `since` or later.
  size_t CountSince(const std::string& owner_uid, Timestamp since) const;
  // The lineage's times, oldest first (empty when none).
  std::vector<Timestamp> Times(const std::string& owner_uid) const;
  bool empty() const { return times_.empty(); }

 private:
  std::map<std::string, std::deque<Timestamp>> times_;  // each sorted, oldest first
};

// The annotation's text for `times`: ["2026-12-01T10:00:00Z", ...].
std::string FormatPreemptionsAnnotation(const std::vector<Timestamp>& times);
// Its times back; InvalidArgument naming what is wrong (not a JSON list of RFC 3339 strings, or
// more than 4 KiB).
StatusOr<std::vector<Timestamp>> ParsePreemptionsAnnotation(std::string_view text);

}  // namespace arbiter::sched::preemption
