// Priority admission over loaded manifests.
#include "arbiter/admission/priority_admission.h"

#include <map>
#include <optional>
#include <set>

#include "arbiter/state/group_index.h"

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

PriorityDecision DecidePriority(const std::string& class_name, const std::optional<int64_t>& spec_priority,
                                const std::optional<model::PreemptionPolicy>& spec_policy,
                                const std::function<const model::PriorityClass*(const std::string&)>& find,
                                const model::PriorityClass* global_default) {
  PriorityDecision d;
  const model::PriorityClass* pc = nullptr;
  if (!class_name.empty()) {
    pc = find(class_name);
    if (pc == nullptr) {
      d.problem = PriorityDecision::Problem::kUnknownClass;
      return d;
    }
  } else {
    pc = global_default;
  }
  if (pc != nullptr) {
    d.priority = pc->value;
    d.policy = pc->preemption_policy;
    d.class_name = pc->name;
  }
  if (spec_priority && *spec_priority != d.priority) {
    d.problem = PriorityDecision::Problem::kPriorityDisagrees;
  } else if (spec_policy && *spec_policy != d.policy) {
    d.problem = PriorityDecision::Problem::kPolicyDisagrees;
  }
  return d;
}

namespace {

using ClassMap = std::map<std::string, model::PriorityClass>;

// What a priorityClassName (with the explicit spec.priority and spec.preemptionPolicy written
// beside it) resolves to, for a pod or a group alike.
struct Resolution {
  int32_t priority = 0;
  model::PreemptionPolicy policy = model::PreemptionPolicy::kPreemptLowerPriority;
};

// Resolves one object's priority fields, as the Priority admission plugin does: the named class,
// else the global default, else 0 / PreemptLowerPriority. `noun` names the object in messages
// ("pod", "PodGroup", ...). Appends an error line and returns nothing if the class is unknown or
// an explicit value disagrees with the class.
std::optional<Resolution> Resolve(const std::string& where, const std::string& noun,
                                  const std::string& class_name,
                                  const std::optional<int32_t>& spec_priority,
                                  const std::optional<model::PreemptionPolicy>& spec_policy,
                                  const ClassMap& classes,
                                  const model::PriorityClass* global_default,
                                  std::vector<std::string>& errors) {
  const PriorityDecision d = DecidePriority(
      class_name, spec_priority, spec_policy,
      [&](const std::string& name) {
        auto it = classes.find(name);
        return it == classes.end() ? nullptr : &it->second;
      },
      global_default);
  const Resolution r{d.priority, d.policy};
  if (d.problem == PriorityDecision::Problem::kUnknownClass) {
    errors.push_back(where + "spec.priorityClassName: no PriorityClass with name \"" + class_name +
                     "\" was found");
    return std::nullopt;
  }
  if (d.problem == PriorityDecision::Problem::kPriorityDisagrees) {
    errors.push_back(where + "spec.priority: the integer value of priority (" +
                     std::to_string(*spec_priority) + ") must not disagree with the " + noun +
                     "'s PriorityClass; admission computed " + std::to_string(r.priority) +
                     (class_name.empty()
                          ? std::string(" (no priorityClassName and ") +
                                (global_default ? "the global default \"" + global_default->name + "\")"
                                                : "no global default)")
                          : " from PriorityClass \"" + class_name + "\""));
    return std::nullopt;
  }
  if (d.problem == PriorityDecision::Problem::kPolicyDisagrees) {
    errors.push_back(where + "spec.preemptionPolicy: " +
                     std::string(model::PreemptionPolicyName(*spec_policy)) +
                     " disagrees with the PriorityClass, which sets " +
                     std::string(model::PreemptionPolicyName(r.policy)));
    return std::nullopt;
  }
  return r;
}

// Resolves a PodGroup's or CompositePodGroup's priority in place; false if it was rejected.
bool ResolveGroup(const manifest::Origin& origin, const std::string& noun, model::GroupPriority& p,
                  const ClassMap& classes, const model::PriorityClass* global_default,
                  std::vector<std::string>& errors) {
  auto r = Resolve(origin.ToString() + ": ", noun, p.priority_class_name, p.spec_priority,
                   p.spec_preemption_policy, classes, global_default, errors);
  if (!r) return false;
  p.priority = r->priority;
  p.preemption_policy = r->policy;
  if (p.priority_class_name.empty() && global_default != nullptr) {
    p.priority_class_name = global_default->name;
  }
  return true;
}

// Where a resolved priority came from, for messages: after resolution an empty class name means
// there was neither a class nor a global default.
std::string PrioritySource(const std::string& class_name) {
  return class_name.empty() ? "no PriorityClass" : "PriorityClass \"" + class_name + "\"";
}


// Every group's parent exists and is a CompositePodGroup of the same namespace, the links form
// no cycle, and no hierarchy is deeper than kMaxGroupHierarchyDepth. kube-scheduler marks such a
// hierarchy Invalid at run time and never schedules it; Arbiter rejects the input, naming the
// group and the field.
void CheckGroupHierarchies(const manifest::ClusterObjects& objects, std::vector<std::string>& errors) {
  state::GroupIndex index;
  std::map<std::string, const manifest::Origin*> origins;
  for (const auto& g : objects.pod_groups) {
    index.AddPodGroup(g.object);
    origins[g.object.Key()] = &g.origin;
  }
  for (const auto& g : objects.composite_pod_groups) {
    index.AddCompositePodGroup(g.object);
    origins[g.object.Key()] = &g.origin;
  }
  index.Finalize();
  for (const state::GroupNode* g : index.all()) {
    if (g->valid) continue;
    errors.push_back(origins.at(g->key)->ToString() + ": spec.parentCompositePodGroupName: the group hierarchy is "
                     "invalid: " + g->invalid_reason);
  }
}

// All pods of one pod group name the same scheduler (validatePodGroup: "all pods in a single pod
// group should have the same .spec.schedulerName set").
void CheckSchedulerNames(const manifest::ClusterObjects& objects, std::vector<std::string>& errors) {
  std::map<std::string, std::pair<std::string, const manifest::Origin*>> first;
  for (const auto& [pod, origin] : objects.pods) {
    if (pod.pod_group_name.empty()) continue;
    auto [it, inserted] = first.emplace(pod.ns + "/" + pod.pod_group_name, std::make_pair(pod.scheduler_name, &origin));
    if (inserted || it->second.first == pod.scheduler_name) continue;
    errors.push_back(origin.ToString() + ": spec.schedulerName: \"" + pod.scheduler_name + "\" differs from \"" +
                     it->second.first + "\" of " + it->second.second->ToString() + " in the same pod group " +
                     it->first + "; all pods in a single pod group should have the same .spec.schedulerName set");
  }
}

}  // namespace

std::optional<PriorityClassProblem> CheckPriorityClass(const std::string& name, int64_t value, bool global_default) {
  if (name.starts_with("system-")) {
    std::string why = name + " is not a known system priority class";
    for (const model::PriorityClass& builtin : BuiltinPriorityClasses()) {
      if (builtin.name != name) continue;
      if (builtin.value != value) {
        why = "value of " + name + " PriorityClass must be " + std::to_string(builtin.value);
      } else if (builtin.global_default != global_default) {
        why = std::string("globalDefault of ") + name + " PriorityClass must be " + (builtin.global_default ? "true" : "false");
      } else {
        return std::nullopt;
      }
    }
    return PriorityClassProblem{PriorityClassProblem::Kind::kReservedName, "metadata.name",
                                "priority class names with 'system-' prefix are reserved for system use only. error: " + why};
  }
  if (value > kHighestUserDefinablePriority) {
    return PriorityClassProblem{PriorityClassProblem::Kind::kValueTooHigh, "value",
                                "maximum allowed value of a user defined priority is " +
                                    std::to_string(kHighestUserDefinablePriority)};
  }
  return std::nullopt;
}

std::vector<std::string> AdmitPriorities(manifest::ClusterObjects& objects) {
  std::vector<std::string> errors;
  ClassMap classes;
  for (const auto& b : BuiltinPriorityClasses()) classes[b.name] = b;

  const model::PriorityClass* global_default = nullptr;
  const manifest::Origin* global_default_origin = nullptr;
  for (auto& [pc, origin] : objects.priority_classes) {
    const std::string where = origin.ToString() + ": ";
    if (auto problem = CheckPriorityClass(pc.name, pc.value, pc.global_default)) {
      if (problem->kind == PriorityClassProblem::Kind::kReservedName) {
        errors.push_back(where + "metadata.name: priority class names with the prefix \"system-\" "
                         "are reserved for the built-in classes system-cluster-critical and "
                         "system-node-critical (" + problem->detail.substr(problem->detail.find("error: ") + 7) + ")");
      } else {
        errors.push_back(where + "value: must be no greater than 1000000000 (values above are "
                         "reserved for system classes), not " + std::to_string(pc.value));
      }
      continue;
    }
    if (pc.name.starts_with("system-")) continue;  // a copy of a built-in class, as a cluster dump holds it
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

  std::set<const model::Pod*> admitted_pods;
  for (auto& [pod, origin] : objects.pods) {
    auto r = Resolve(origin.ToString() + ": ", "pod", pod.priority_class_name, pod.spec_priority,
                     pod.spec_preemption_policy, classes, global_default, errors);
    if (!r) continue;
    pod.priority = r->priority;
    pod.preemption_policy = r->policy;
    if (pod.priority_class_name.empty() && global_default != nullptr) {
      pod.priority_class_name = global_default->name;
    }
    admitted_pods.insert(&pod);
  }

  // Groups resolve exactly as pods do. Only the PodGroups admitted here take part in the member
  // checks below; a rejected group has its error already.
  std::map<std::string, const manifest::Sourced<model::PodGroup>*> admitted_groups;
  for (auto& g : objects.pod_groups) {
    if (ResolveGroup(g.origin, "PodGroup", g.object.priority, classes, global_default, errors)) {
      admitted_groups.emplace(g.object.Key(), &g);
    }
  }
  for (auto& g : objects.composite_pod_groups) {
    ResolveGroup(g.origin, "CompositePodGroup", g.object.priority, classes, global_default, errors);
  }

  // The consistency rules kube-scheduler enforces on a pod group before scheduling it
  // (validatePodGroup): each member pod has the group's numeric priority (the class names need not
  // match) and the group's preemption policy. Upstream fails the whole group; here the input is
  // rejected, one line per member pod and rule. Bound members are checked too, as upstream does.
  for (const auto& [pod, origin] : objects.pods) {
    if (pod.pod_group_name.empty() || !admitted_pods.count(&pod)) continue;
    auto it = admitted_groups.find(pod.ns + "/" + pod.pod_group_name);
    if (it == admitted_groups.end()) continue;
    const model::PodGroup& group = it->second->object;
    const std::string where = origin.ToString() + ": ";
    const std::string group_at = "PodGroup " + group.Key() + " (" + it->second->origin.ToString() + ")";
    if (pod.priority != group.priority.priority) {
      errors.push_back(where + "spec.priority: " + std::to_string(pod.priority) + " (from " +
                       PrioritySource(pod.priority_class_name) + ") differs from the priority " +
                       std::to_string(group.priority.priority) + " (from " +
                       PrioritySource(group.priority.priority_class_name) + ") of " + group_at +
                       "; all pods in a single pod group should have the same priority as the pod "
                       "group");
    }
    if (pod.preemption_policy != group.priority.preemption_policy) {
      errors.push_back(where + "spec.preemptionPolicy: " +
                       std::string(model::PreemptionPolicyName(pod.preemption_policy)) +
                       " differs from the preemption policy " +
                       std::string(model::PreemptionPolicyName(group.priority.preemption_policy)) +
                       " of " + group_at +
                       "; all pods in a single pod group should have the same preemption policy as "
                       "the pod group");
    }
  }
  CheckGroupHierarchies(objects, errors);
  CheckSchedulerNames(objects, errors);
  return errors;
}

}  // namespace arbiter::admission
