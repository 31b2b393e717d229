// Priority admission over loaded manifests.
#include "arbiter/admission/priority_admission.h"

#include <map>

namespace arbiter::admission {

std::vector<model::PriorityClass> BuiltinPriorityClasses() {
  return {
      {"system-cluster-critical", kSystemCriticalPriority, false,
       model::PreemptionPolicy::kPreemptLowerPriority,
       "Used for system critical pods that must run in the cluster, but can be moved to another "
       "node if necessary."},
      {"system-node-critical", kSystemCriticalPriority + 1000, false,
       model::PreemptionPolicy::kPreemptLowerPriority,
       "Used for system critical pods that must not be moved from their current node."},
  };
}

std::vector<std::string> AdmitPriorities(manifest::ClusterObjects& objects) {
  std::vector<std::string> errors;
  std::map<std::string, model::PriorityClass> classes;
  for (const auto& b : BuiltinPriorityClasses()) classes[b.name] = b;

  const model::PriorityClass* global_default = nullptr;
  const manifest::Origin* global_default_origin = nullptr;
  for (auto& [pc, origin] : objects.priority_classes) {
    const std::string where = origin.ToString() + ": ";
    if (pc.name.rfind("system-", 0) == 0) {
      auto it = classes.find(pc.name);
      const bool same_as_builtin = it != classes.end() && it->second.value == pc.value &&
                                   !pc.global_default;
      if (!same_as_builtin) {
        errors.push_back(where + "metadata.name: priority class names with the prefix \"system-\" "
                         "are reserved for the built-in classes system-cluster-critical and "
                         "system-node-critical");
      }
      continue;
    }
    if (pc.value > kHighestUserDefinablePriority) {
      errors.push_back(where + "value: must be no greater than 1000000000 (values above are "
                       "reserved for system classes), not " + std::to_string(pc.value));
      continue;
    }
    if (pc.global_default) {
      if (global_default != nullptr) {
        errors.push_back(where + "globalDefault: PriorityClass \"" + global_default->name +
                         "\" (" + global_default_origin->ToString() +
                         ") is already marked as the global default; at most one may be");
        continue;
      }
      global_default = &pc;
      global_default_origin = &origin;
    }
    classes[pc.name] = pc;
  }

  for (auto& [pod, origin] : objects.pods) {
    const std::string where = origin.ToString() + ": ";
    int32_t priority = 0;
    auto policy = model::PreemptionPolicy::kPreemptLowerPriority;
    if (!pod.priority_class_name.empty()) {
      auto it = classes.find(pod.priority_class_name);
      if (it == classes.end()) {
        errors.push_back(where + "spec.priorityClassName: no PriorityClass with name \"" +
                         pod.priority_class_name + "\" was found");
        continue;
      }
      priority = it->second.value;
      policy = it->second.preemption_policy;
    } else if (global_default != nullptr) {
      priority = global_default->value;
      policy = global_default->preemption_policy;
    }
    if (pod.spec_priority && *pod.spec_priority != priority) {
      errors.push_back(where + "spec.priority: the integer value of priority (" +
                       std::to_string(*pod.spec_priority) +
                       ") must not disagree with the pod's PriorityClass; admission computed " +
                       std::to_string(priority) +
                       (pod.priority_class_name.empty()
                            ? std::string(" (no priorityClassName and ") +
                                  (global_default ? "the global default \"" + global_default->name + "\")"
                                                  : "no global default)")
                            : " from PriorityClass \"" + pod.priority_class_name + "\""));
      continue;
    }
    if (pod.spec_preemption_policy && *pod.spec_preemption_policy != policy) {
      errors.push_back(where + "spec.preemptionPolicy: " +
                       std::string(model::PreemptionPolicyName(*pod.spec_preemption_policy)) +
                       " disagrees with the PriorityClass, which sets " +
                       std::string(model::PreemptionPolicyName(policy)));
      continue;
    }
    pod.priority = priority;
    pod.preemption_policy = policy;
    if (pod.priority_class_name.empty() && global_default != nullptr) {
      pod.priority_class_name = global_default->name;
    }
  }
  return errors;
}

}  // namespace arbiter::admission
