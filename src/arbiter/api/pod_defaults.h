// The defaults kube-apiserver fills into every pod spec it decodes (pods and the pod templates of
// Deployments, ReplicaSets, StatefulSets, Jobs and CronJobs), and a pod's QoS class. One place for
// both, so that a pod and its controller's template read back alike.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace arbiter::api {

// Sets parent[key] to `value` unless the field is there already (not null): how every default of
// the API is filled in.
void SetDefault(nlohmann::json& parent, const char* key, nlohmann::json value);

// SetDefaults_PodSpec and SetDefaults_Container (k8s.io/kubernetes pkg/apis/core/v1/defaults.go),
// for a pod's spec and a template's alike: a field already set is kept; fields of the wrong type
// are left for validation to name.
//   spec:      dnsPolicy ClusterFirst, restartPolicy Always, securityContext {}, schedulerName
//              default-scheduler, terminationGracePeriodSeconds 30
//   container: imagePullPolicy Always for an image tagged `latest` or untagged (and without a
//              digest), else IfNotPresent; terminationMessagePath /dev/termination-log;
//              terminationMessagePolicy File; resources {}; each port's protocol TCP
void DefaultPodSpec(nlohmann::json& spec);

// The above, then SetDefaults_Pod's own, which a template does not get: enableServiceLinks true,
// and each container's requests default to its limits.
void DefaultPod(nlohmann::json& spec);

// GetPodQOS (pkg/apis/core/helper/qos): BestEffort when no container requests or limits CPU or
// memory; Guaranteed when every container limits both and every request equals its limit;
// Burstable otherwise. A quantity that does not parse counts as absent (validation names it).
std::string PodQosClass(const nlohmann::json& spec);

}  // namespace arbiter::api
