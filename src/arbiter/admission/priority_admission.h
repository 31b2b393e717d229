// Priority admission, as the API server's Priority admission plugin and PriorityClass
// validation do it:
//   1. the built-in classes system-cluster-critical (2000000000) and system-node-critical
//      (2000001000) always exist;
//   2. a user class has a DNS subdomain name that does not start with "system-" and a value of at
//      most 1000000000 (HighestUserDefinablePriority); at most one class is globalDefault;
//   3. a pod's priorityClassName resolves into its priority and preemptionPolicy; a pod without a
//      class takes the global default's (or priority 0, PreemptLowerPriority); an unknown class
//      is rejected, and so is an explicit spec.priority or spec.preemptionPolicy that disagrees
//      with what the class resolves to;
//   4. a PodGroup's and a CompositePodGroup's priorityClassName (with their explicit priority and
//      preemptionPolicy) resolve by the same rules into GroupPriority::priority and
//      ::preemption_policy; a group without a class takes the global default's, never its pods';
//   5. every member pod of a PodGroup has the group's numeric priority and preemption policy. The
//      API server does not check this; kube-scheduler refuses to schedule such a group
//      (validatePodGroup in schedule_one_podgroup.go). Arbiter rejects the input instead;
//   6. so it does for the other rules kube-scheduler checks before scheduling a group: every pod of
//      a group names the same scheduler, and a group hierarchy has existing CompositePodGroup
//      parents, no cycle and at most four levels.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/manifest/loader.h"
#include "arbiter/model/objects.h"

namespace arbiter::admission {

inline constexpr int32_t kHighestUserDefinablePriority = 1000000000;
inline constexpr int32_t kSystemCriticalPriority = 2000000000;

std::vector<model::PriorityClass> BuiltinPriorityClasses();

// PriorityClass validation's rule on a class's name and value (rule 2; upstream's
// ValidatePriorityClass with IsKnownSystemPriorityClass): a name with the "system-" prefix must
// be a built-in class, with its value and not globalDefault; any other class's value is at most
// kHighestUserDefinablePriority. The one place this rule lives: `plan` (AdmitPriorities) and
// `serve`'s API validation both check with it, each wording the problem for its own users.
struct PriorityClassProblem {
  enum class Kind { kReservedName, kValueTooHigh };
  Kind kind = Kind::kReservedName;
  std::string field;   // "metadata.name" or "value"
  std::string detail;  // upstream's words, as kube-apiserver's Forbidden field error gives them
};
std::optional<PriorityClassProblem> CheckPriorityClass(const std::string& name, int64_t value, bool global_default);

// The Priority admission plugin's rule for one object, a pod or a PodGroup or CompositePodGroup
// alike (rule 3 and 4 above): the named class decides the priority and the preemption policy;
// without a name, the global default does; without either, 0 and PreemptLowerPriority. An
// explicit spec.priority or spec.preemptionPolicy must agree with what the class decides. The
// one place this rule lives: `plan` (AdmitPriorities), `serve`'s API admission and its live
// scheduler all decide with it, each wording the problems for its own users.
struct PriorityDecision {
  enum class Problem { kNone, kUnknownClass, kPriorityDisagrees, kPolicyDisagrees };
  Problem problem = Problem::kNone;
  int32_t priority = 0;
  model::PreemptionPolicy policy = model::PreemptionPolicy::kPreemptLowerPriority;
  // The class that decided: the named one, else the global default's name, else empty.
  std::string class_name;
};
// `find` looks a class up by name (the built-in classes included); `global_default` may be null.
PriorityDecision DecidePriority(const std::string& class_name, const std::optional<int64_t>& spec_priority,
                                const std::optional<model::PreemptionPolicy>& spec_policy,
                                const std::function<const model::PriorityClass*(const std::string&)>& find,
                                const model::PriorityClass* global_default);

// The priority of a pod read back from a store: admission decided it once, at creation, into
// spec.priority, and the stored spec is authoritative (0 for a pod admission never saw). The live
// scheduler, the simulated kubelets' eviction ranking and the dashboard read it so.
inline int32_t StoredPriority(const model::Pod& pod) { return pod.spec_priority.value_or(0); }

// Validates the input's classes, adds the built-in ones, resolves the priority of every pod,
// PodGroup and CompositePodGroup, and checks that PodGroup members agree with their group.
// Returns one error line per problem, in the loader's format; `objects` is only changed where
// the input is valid.
std::vector<std::string> AdmitPriorities(manifest::ClusterObjects& objects);

}  // namespace arbiter::admission
