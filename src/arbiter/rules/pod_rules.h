// Rules on a pod's body that the API server and the control loop both apply.
//
// * UpdatePodCondition: how a pod's condition is set (component-helpers' UpdatePodCondition,
//   which kube-apiserver's binding, kube-scheduler, the kubelet and the controllers use). The
//   condition replaces the one of its type whole; its lastTransitionTime is the old one while the
//   status stays the same, `now` when it changes or the condition is new.
// * SetStatusCondition: the same for the metav1.Condition lists of other kinds (apimachinery's
//   meta.SetStatusCondition), which change an existing condition field by field.
// * BindPod: what binding a pod to a node does to it (kube-apiserver's BindingREST,
//   setPodNodeAndMetadata). The `pods/binding` subresource and the live scheduler's bindings
//   both go through it, so a pod bound by either looks the same.
//
// Bodies are JSON trees as stored; neither function reads anything else. Thread-compatible.
#pragma once

#include <map>
#include <string>

#include "arbiter/base/json.h"
#include "arbiter/base/status.h"

namespace arbiter::rules {

// Sets `condition` (an object with "type") in status.conditions of the pod `status` object
// (created when absent). `now` is the RFC 3339 time a changed condition takes as its
// lastTransitionTime. Returns whether anything changed.
bool UpdatePodCondition(nlohmann::json& status, nlohmann::json condition, const std::string& now);

// Sets `condition` (an object with "type") in status.conditions of `status`, a list of
// metav1.Condition (a PodGroup's, a PodDisruptionBudget's), as apimachinery's
// meta.SetStatusCondition does: a condition of a new type is appended, with lastTransitionTime
// `now` unless it carries one; an existing one takes the new status (and then the new
// lastTransitionTime, or `now`), reason, message and observedGeneration, and keeps its
// lastTransitionTime while its status stays the same. Returns whether anything changed.
bool SetStatusCondition(nlohmann::json& status, nlohmann::json condition, const std::string& now);

// A binding of a pod to a node, as a Binding object carries it.
struct PodBinding {
  std::string node;  // target.name
  // metadata.uid of the binding: a precondition on the pod's uid when set.
  std::string uid;
  // metadata.annotations and metadata.labels of the binding, merged into the pod's (a binding's
  // value wins). The labels are those admission put there (the node's topology labels).
  std::map<std::string, std::string> annotations, labels;
};

// Binds `pod` as kube-apiserver's binding storage does:
//   * FailedPrecondition when the pod cannot be bound, with upstream's message: it is being
//     deleted ("pod NAME is being deleted, cannot be assigned to a host"), already assigned
//     ("pod NAME is already assigned to node \"N\""), or gated ("pod NAME has non-empty
//     .spec.schedulingGates"); Conflict when the binding's uid is not the pod's (a storage
//     precondition upstream). The caller turns these into its answer (the API: 409 on
//     pods/binding) and `pod` is left as it was.
//   * Otherwise sets spec.nodeName, clears status.nominatedNodeName (ClearingNominatedNodeName-
//     AfterBinding, on by default since 1.35), merges the binding's annotations and labels
//     (PodTopologyLabelsAdmission, on by default since 1.35), and sets PodScheduled=True through
//     UpdatePodCondition at `now` (RFC 3339).
Status BindPod(nlohmann::json& pod, const PodBinding& binding, const std::string& now);

// Sets each of `values` in the object's metadata.`field` ("labels", "annotations"), over any value
// there; nothing when `values` is empty.
void MergeMetadata(nlohmann::json& object, const char* field, const std::map<std::string, std::string>& values);

// The labels PodTopologyLabels admission copies from a node onto a binding to it:
// topology.kubernetes.io/zone and topology.kubernetes.io/region, those the node has.
std::map<std::string, std::string> TopologyLabelsOf(const nlohmann::json& node);

}  // namespace arbiter::rules
