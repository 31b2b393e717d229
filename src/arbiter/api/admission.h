// Admission of `arbiter serve`, applied when objects are written:
//   * PriorityClass validation: the 1e9 limit for user classes, reserved `system-` names, one
//     globalDefault, an immutable value.
//   * Pod priority admission, once at creation: the class named by priorityClassName (built-in
//     system classes included) or the global default sets spec.priority and
//     spec.preemptionPolicy; an unknown class, or a priority that disagrees with the class, is
//     rejected. Later updates cannot change them.
//   * ResourceQuota: `pods`, `requests.cpu` and `requests.memory` limits of quotas in the pod's
//     namespace, with scopeSelector on PriorityClass (In, NotIn, Exists, DoesNotExist), so that
//     an administrator can keep a namespace from creating pods of a high class.
//   * DefaultTolerationSeconds: pods tolerate the not-ready and unreachable NoExecute taints for
//     300 s unless they say otherwise.
//   * PodGroup and CompositePodGroup parent links: a write that would close a cycle or nest more
//     than model::kMaxGroupHierarchyDepth levels is rejected (a parent not created yet is not).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "arbiter/api/server.h"

namespace arbiter::api {

void InstallAdmission(ApiServer& server);

// The workload kinds' defaults and validation (workload_admission.cc): Deployment, ReplicaSet and
// StatefulSet defaults, the selector rules they share (required, not empty, matching the
// template, immutable), and the Job's defaults and generated selector (its uid labels its pods).
Status AdmitWorkload(const ResourceInfo& info, nlohmann::json& object, const nlohmann::json* old);

// A Service's defaults and its cluster IP (service_admission.cc): allocated lowest free from
// 10.96.0.0/12 (or the one asked for, if free), immutable; headless (None) and ExternalName
// get none.
Status AdmitService(nlohmann::json& object, const nlohmann::json* old, store::Store& store);

// What kube-apiserver's bootstrap controllers create before serving: the namespaces default,
// kube-system, kube-public and kube-node-lease, and the built-in PriorityClasses
// system-cluster-critical and system-node-critical. They are created through `server`, as any
// client's objects (uid, validation, admission); existing ones are left as they are.
Status EnsureBootstrapObjects(ApiServer& server);

// What a server started on data written before today's rules finds in it, once at start-up:
//   * every stored PodGroup, CompositePodGroup and Workload has its priority decided again by
//     admission (the class decides; a stored priority no class gives is replaced by the one that
//     is decided, and a group whose class no longer exists is reported and left as it is);
//   * every stored object whose name or labels the rules (manifest/names.h) refuse is reported,
//     and left as it is: it is still read, updated and deleted under its stored name.
// Returns one line per finding, for the log. A store error ends the audit with that error.
StatusOr<std::vector<std::string>> AuditStoredObjects(store::Store& store);

// The usage a ResourceQuota tracks, by hard key (pods, count/pods, requests.cpu in thousandths,
// requests.memory in bytes), over its namespace's `pods`: the pods not yet finished that its
// PriorityClass scope selects. The one rule quota admission enforces and the quota controller
// reports; QuotaAmount writes an amount as the quota's status shows it ("1500m", "2", bytes).
std::map<std::string, int64_t> QuotaUsage(const nlohmann::json& quota, const std::vector<const nlohmann::json*>& pods);
std::string QuotaAmount(const std::string& key, int64_t amount);

}  // namespace arbiter::api
