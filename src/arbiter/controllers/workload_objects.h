// The objects the workload controllers create, as functions of their owners alone: serve's
// controllers (deployment.cc, replicaset.cc, statefulset.cc, job.cc) write them through the API,
// and `plan` expands the workloads of its input into them (expand.h). One rule, one place: a
// name, a label or an owner reference is made here or nowhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/controllers/object_json.h"

namespace arbiter::controllers {

inline constexpr std::string_view kDeploymentApiVersion = "apps/v1";
inline constexpr std::string_view kDeploymentKind = "Deployment";
inline constexpr std::string_view kReplicaSetApiVersion = "apps/v1";
inline constexpr std::string_view kReplicaSetKind = "ReplicaSet";
inline constexpr std::string_view kStatefulSetApiVersion = "apps/v1";
inline constexpr std::string_view kStatefulSetKind = "StatefulSet";
inline constexpr std::string_view kDaemonSetApiVersion = "apps/v1";
inline constexpr std::string_view kDaemonSetKind = "DaemonSet";
inline constexpr std::string_view kJobApiVersion = "batch/v1";
inline constexpr std::string_view kJobKind = "Job";

inline constexpr const char* kPodTemplateHashLabel = "pod-template-hash";
inline constexpr const char* kControllerRevisionHashLabel = "controller-revision-hash";
inline constexpr const char* kJobTrackingFinalizer = "batch.kubernetes.io/job-tracking";
inline constexpr const char* kJobCompletionIndex = "batch.kubernetes.io/job-completion-index";

// A new pod for `owner` from its pod template (`template_spec`: metadata and spec): the
// template's labels, annotations and finalizers, its spec, generateName `name_prefix`, and a
// controller reference to the owner.
Json PodFromTemplate(const Json& template_spec, const Json& owner, std::string_view owner_api_version,
                     std::string_view owner_kind, const std::string& name_prefix);

// A pod template as Go's typed decoding sees it (absent, null and empty the same), without the
// pod-template-hash label: what the Deployment controller compares and hashes (EqualIgnoreHash).
Json TemplateWithoutHash(const Json* tmpl);

// The ReplicaSet a Deployment's template makes (getNewReplicaSet's new one): named
// "<deployment>-<pod-template-hash>", the hash label in its labels, template and selector,
// controlled by the Deployment, with `replicas` replicas. Revision annotations are the caller's.
Json NewReplicaSetOf(const Json& deployment, int64_t replicas);

// A StatefulSet's update revision, "<set>-<hash of its template>" (a ControllerRevision's name
// and the pods' controller-revision-hash).
std::string StatefulSetRevision(const Json& set);

// The pod of `ordinal` at `revision`: named "<set>-<ordinal>", with the pod-name, pod-index and
// revision labels, hostname and subdomain, and one volume per volumeClaimTemplate. The claims
// those volumes name (the controller makes each before the pod, if absent) go to `claims`.
Json StatefulSetPod(const Json& set, int64_t ordinal, const std::string& revision, std::vector<Json>* claims);

// A Job's pod: its template with the tracking finalizer; for an Indexed Job, the completion
// index's annotation, label, JOB_COMPLETION_INDEX variable and generateName "<job>-<index>-".
Json JobPod(const Json& job, std::optional<int64_t> index);

// A DaemonSet's pod for node `node` (the daemon controller's): its template, generateName
// "<set>-", a controller reference, a required node affinity to that node alone (matchFields
// metadata.name, replacing any such term), and the tolerations daemon pods always carry
// (not-ready, unreachable, disk-pressure, memory-pressure, pid-pressure, unschedulable).
Json DaemonSetPod(const Json& set, const std::string& node);

}  // namespace arbiter::controllers
