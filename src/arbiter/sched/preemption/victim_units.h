// Victim units: what preemption evicts together, and in which order it tries to keep them
// (docs/upstream-rules.md Part B §4 step 1, §5 and §6; shared by the pod and the
// pod group preemptor from v1.37 on, §7).
//
// A running pod's unit is the highest ancestor of its PodGroup in `all` disruption mode — then
// the unit holds every running pod of every PodGroup under that ancestor, on every node — or else
// the pod alone. A unit's priority is its root group's (the pod's own without a group). Its rank is
// CompositePodGroup (3), PodGroup (2, also for a single pod of a PodGroup) or Pod (1).
//
// MoreImportantUnit is upstream's MoreImportantVictim: higher priority; higher rank; more running
// pods; earlier start (only when both started and differ; not started = newest); then the smaller
// UID of the unit's first pod. ClassifyByPdb marks, walking units in importance order and
// consuming budgets, every unit of which some pod takes a matching budget below zero.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <string>
#include <vector>

#include "arbiter/sched/framework/interfaces.h"
#include "arbiter/sched/preemption/disruption.h"

namespace arbiter::sched::preemption {

enum class UnitRank : int { kPod = 1, kPodGroup = 2, kCompositePodGroup = 3 };

struct VictimUnit {
  UnitRank rank = UnitRank::kPod;
  int32_t priority = 0;
  std::vector<PodInfoPtr> pods;  // every running pod of the unit, on every node
  std::optional<Timestamp> earliest_start;
  std::string first_uid;  // the smallest UID of its pods
  bool violates_pdb = false;
};

bool MoreImportantUnit(const VictimUnit& a, const VictimUnit& b);

// A pod's effective priority: its root group's (when the scheduler knows its group), else its own.
int32_t EffectivePriority(const Handle& handle, const model::Pod& pod);

// Builds units for running pods, reading groups and their members through the Handle. Units are
// made once per key: AddPod returns the unit of a pod (existing or new) by index.
class UnitBuilder {
 public:
  explicit UnitBuilder(const Handle& handle) : handle_(handle) {}
  // A running pod's effective priority (its root group's, or its own) and its PodGroup, from one
  // lookup: what UnitOf needs of it.
  struct Looked {
    int32_t priority = 0;
    const state::GroupNode* group = nullptr;  // PodGroupOf, valid or not
  };
  Looked Look(const model::Pod& pod) const;
  int32_t PriorityOf(const model::Pod& pod) const { return Look(pod).priority; }
  size_t UnitOf(const PodInfoPtr& pod) { return UnitOf(pod, Look(pod->pod)); }
  // `looked`: Look(pod->pod).
  size_t UnitOf(const PodInfoPtr& pod, const Looked& looked);
  std::vector<VictimUnit>& units() { return units_; }

 private:
  const Handle& handle_;
  // Lookup only (never iterated): units by their group, and single-pod units by pod.
  std::unordered_map<const void*, size_t> by_key_;
  std::vector<VictimUnit> units_;
};

// REQUIRES: `units` sorted by importance, most important first.
void ClassifyByPdb(std::vector<VictimUnit*>& units, const std::vector<PdbView>& pdbs);

}  // namespace arbiter::sched::preemption
