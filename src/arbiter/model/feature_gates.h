// Feature gates, and the fields they govern. kube-apiserver drops a field whose feature gate is
// off when an object is written (the dropDisabled*Fields functions of each kind's strategy), so a
// scheduler never sees it; Arbiter does the same with the gates of its configuration, in one
// place, for `plan`'s input and for the objects `serve` schedules.
//
// The gates Arbiter reads, all on by default (their upstream default in v1.37):
//   GenericWorkload    spec.schedulingGroup of a Pod; the Workload API's objects
//   CompositePodGroup  CompositePodGroups; spec.parentCompositePodGroupName of a PodGroup
//   PodLevelResources  spec.resources of a Pod
#pragma once

#include <string_view>

#include "arbiter/model/objects.h"

namespace arbiter::model {

inline constexpr std::string_view kGateGenericWorkload = "GenericWorkload";
inline constexpr std::string_view kGateCompositePodGroup = "CompositePodGroup";
inline constexpr std::string_view kGatePodLevelResources = "PodLevelResources";

// True unless the configuration's featureGates switch `gate` off.
bool FeatureEnabled(const SchedulerConfig& config, std::string_view gate);

// Clears what the disabled gates govern: a Pod's schedulingGroup (GenericWorkload) and pod-level
// resources (PodLevelResources: its requests become the containers' again).
void DropDisabledFields(const SchedulerConfig& config, Pod& pod);
// A PodGroup's parent link (CompositePodGroup).
void DropDisabledFields(const SchedulerConfig& config, PodGroup& group);

}  // namespace arbiter::model
