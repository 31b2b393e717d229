// `plan`'s reading of workloads: the pods the workload controllers would create now, made by
// the controllers' own rules (workload_objects.h) after the API's defaulting and validation of
// each workload (api::AdmitWorkload), so that a Deployment planned is the Deployment applied.
//
//   * Deployment: the new ReplicaSet of its template (unless a ReplicaSet it controls is in the
//     input), with the Deployment's replicas; then as a ReplicaSet.
//   * ReplicaSet: `replicas` pods less the active pods it already controls in the input.
//   * StatefulSet: the missing ordinals, lowest first, each with its claims (unless in the
//     input). With OrderedReady the controller makes each after the one before is Running and
//     Ready; the plan places them all, in ordinal order, and says so.
//   * Job (not suspended): its first wave, min(parallelism, completions - succeeded) less its
//     active pods; an Indexed Job's lowest free indexes.
//   * DaemonSet: one pod per node whose labels and taints the template admits (the daemon
//     controller's NodeShouldRunDaemonPod: nodeSelector, required node affinity, NoSchedule and
//     NoExecute taints), except nodes where it has a pod.
//   * CronJob: nothing (its Jobs start on its schedule).
// A pod belongs to a workload by its controller reference (kind, namespace and name; uid too
// when both have one). generateName suffixes come from `seed`, as the API server draws them.
// The made pods join the input after its own pods, in input order of their workloads and each
// controller's order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arbiter/manifest/loader.h"

namespace arbiter::controllers {

struct Expansion {
  std::vector<std::string> notes;   // one line per workload: what it made, or why nothing
  std::vector<std::string> errors;  // workloads the API would refuse, each naming file, object and field
};

Expansion ExpandWorkloads(manifest::ClusterObjects& objects, uint64_t seed);

}  // namespace arbiter::controllers
