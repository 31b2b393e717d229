// The books of a simulated day: every pod (or allocation) made, its band, when it was made, bound
// and left; the preemptions it suffered and caused and the work they lost; the cluster's requested
// CPU over time. Both engines (the Kubernetes one of day_simulation.cc and Nomad's of
// nomad_day.cc) keep their books here, so that a statistic of the report means the same in both.
//
// A pod goes through these states, each by one call:
//
//   Made ─ Bound ─┬─ Completed                       (ran to its end, or its Deployment ended)
//     │           ├─ Preempted ─ Terminated           (a victim: terminating, then gone)
//     │           └─ NodeLost ─ Left                  (its node failed; evicted later)
//     └─ Withdrawn                                    (deleted while pending)
//
// The requested CPU counts a pod from Bound until it Completes, Terminates or Leaves; every call
// that changes it first accounts the time since the last change at the old value. Not
// thread-safe: one engine owns its ledger.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/base/rng.h"
#include "arbiter/base/time.h"
#include "arbiter/simulate/day_simulation.h"

namespace arbiter::simulate {

// The virtual clock starts at 2026-01-01T00:00:00Z.
inline constexpr Timestamp kSimulationStart = 1767225600LL * kSecond;

// The band of pods without a PriorityClass.
inline constexpr const char* kNoClassBand = "(no class)";

// A node's next failure after `after`, at `per_day` failures per node per day: a Poisson
// process (exponential gaps), drawn from `rng`.
Timestamp NextNodeFailure(Rng& rng, Timestamp after, double per_day);

// An event on the virtual clock, of an engine's `Kind`, about its object `id`: earlier first,
// then in the order they were made (a total order: `seq` is unique).
template <typename Kind>
struct ClockEvent {
  Timestamp at = 0;
  uint64_t seq = 0;
  Kind kind{};
  uint32_t id = 0;
  bool operator>(const ClockEvent& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

enum class PodState : uint8_t { kPending, kRunning, kTerminating, kCompleted, kPreempted, kWithdrawn, kLost };

// Where a pod's node is no longer known (a lost pod that has left).
inline constexpr uint32_t kGone = UINT32_MAX;

struct SimPod {
  uint32_t workload = 0;
  uint32_t band = 0;
  PodState state = PodState::kPending;
  int32_t cascade = 0;  // the depth of the preemption whose victim this pod replaces (0: none)
  Timestamp created = 0;
  Timestamp started = 0;
  int64_t milli_cpu = 0;
  uint32_t node = 0;          // the engine's: where it was bound (kGone once a lost pod has left)
  int32_t evicted_depth = 0;  // a victim: the depth of the preemption that evicted it
};

// The nearest-rank percentiles of `v` (sorted in place).
Percentiles NearestRank(std::vector<float>& v);

class Ledger {
 public:
  // `start`: the virtual clock's start; the options give the duration and the sampling period.
  Ledger(Timestamp start, const SimulateOptions& options);

  uint32_t AddBand(const std::string& name, int32_t priority);
  void AddAllocatable(int64_t milli_cpu) { allocatable_milli_cpu_ += milli_cpu; }

  // A new pending pod of `workload` in `band`; `cascade` as SimPod::cascade. Returns its index.
  uint32_t Made(uint32_t workload, uint32_t band, int32_t cascade, int64_t milli_cpu, Timestamp now);
  void Bound(uint32_t pod, Timestamp now);
  void Completed(uint32_t pod, Timestamp now);
  void Withdrawn(uint32_t pod);
  // A running pod chosen as a victim by a preemptor of `by_band` (unknown: none is credited) in a
  // preemption of `depth`: its work so far is lost; it keeps its CPU until Terminated.
  void Preempted(uint32_t pod, std::optional<uint32_t> by_band, int32_t depth, Timestamp now);
  void Terminated(uint32_t pod, Timestamp now);
  // A running pod whose node failed: its work is lost; it keeps its CPU until it Leaves.
  void NodeLost(uint32_t pod);
  void Left(uint32_t pod, Timestamp now);

  // Adds the time since the last change at the current use, and the samples it passed.
  void Account(Timestamp now);

  SimPod& pod(uint32_t i) { return pods_[i]; }
  const SimPod& pod(uint32_t i) const { return pods_[i]; }
  size_t pods() const { return pods_.size(); }
  int64_t pending() const { return pending_; }

  // The report; `nodes`, `arrivals`, `cycles` and `node_failures` are the engine's.
  Report Finish(const std::string& config_name, int64_t nodes, int64_t arrivals, int64_t cycles, int64_t node_failures);

 private:
  struct BandStats {
    BandReport report;
    std::vector<float> pending_seconds;
  };
  void Release(const SimPod& p, Timestamp now);

  Timestamp start_;
  int64_t duration_seconds_;
  std::vector<SimPod> pods_;
  std::vector<BandStats> bands_;
  std::map<std::string, uint32_t> band_index_;
  int64_t pending_ = 0;
  int64_t allocatable_milli_cpu_ = 0;
  int64_t used_milli_cpu_ = 0;
  double cpu_time_ = 0;  // integral of the used share over time, in microseconds
  Timestamp last_account_ = 0;
  Timestamp next_sample_ = 0;
  Duration sample_every_ = kSecond;
  std::vector<UtilisationSample> samples_;
};

}  // namespace arbiter::simulate
