// The checks that need the whole input.
#include "arbiter/manifest/object_decoder.h"

#include "arbiter/model/feature_gates.h"
#include "arbiter/model/group_hierarchy.h"

namespace arbiter::manifest::internal {

using model::Quantity;

// Checks the parent links of the group hierarchy (model::CheckGroupHierarchy's rule) and reports
// each problem on the object where it shows first.
namespace {

void CheckGroupHierarchy(const ClusterObjects& objs, std::vector<std::string>& errors) {
  std::vector<model::GroupLink> links;
  std::vector<const Origin*> origins;
  for (const auto& c : objs.composite_pod_groups) {
    links.push_back({c.object.Key(), c.object.parent.empty() ? "" : c.object.ns + "/" + c.object.parent, true});
    origins.push_back(&c.origin);
  }
  for (const auto& g : objs.pod_groups) {
    links.push_back({g.object.Key(), g.object.parent.empty() ? "" : g.object.ns + "/" + g.object.parent, false});
    origins.push_back(&g.origin);
  }
  const std::string field = "spec.parentCompositePodGroupName";
  auto join = [](const std::vector<std::string>& chain) {
    std::string s;
    for (const auto& k : chain) s += (s.empty() ? "" : " -> ") + k;
    return s;
  };
  for (const model::HierarchyProblem& p : model::CheckGroupHierarchy(links)) {
    const std::string where = origins[p.link]->ToString() + ": " + field + ": ";
    switch (p.kind) {
      case model::HierarchyProblem::Kind::kMissingParent:
        errors.push_back(where + "CompositePodGroup \"" + links[p.link].parent_key + "\" is not in the input" +
                         (p.parent_is_pod_group ? " (a PodGroup of that name is; only a CompositePodGroup can be a parent)"
                                                : ""));
        break;
      case model::HierarchyProblem::Kind::kCycle:
        errors.push_back(where + "the parent links form a cycle: " + join(p.chain));
        break;
      case model::HierarchyProblem::Kind::kTooDeep:
        errors.push_back(where + "the hierarchy has " + std::to_string(p.chain.size()) + " levels, more than the " +
                         std::to_string(model::kMaxGroupHierarchyDepth) + " allowed: " + join(p.chain));
        break;
    }
  }
}

}  // namespace

void DropDisabledFields(ClusterObjects& objs) {
  if (!objs.config) return;  // every gate on
  const model::SchedulerConfig& cfg = objs.config->object;
  for (auto& p : objs.pods) model::DropDisabledFields(cfg, p.object);
  for (auto& g : objs.pod_groups) model::DropDisabledFields(cfg, g.object);
}

// Reports objects defined twice, pods bound or nominated to nodes not in the input, pods in
// PodGroups not in the input, members of one PodGroup naming different schedulers, and problems
// of the group hierarchy.
void CheckWholeInput(const ClusterObjects& objs, std::vector<std::string>& errors) {
  std::map<std::string, const Origin*> seen;
  std::set<const Origin*> duplicates;
  auto check = [&](const std::string& key, const Origin& o) {
    auto [it, inserted] = seen.emplace(key, &o);
    if (!inserted) {
      duplicates.insert(&o);
      errors.push_back(o.ToString() + ": metadata.name: duplicate object (first defined at " +
                       it->second->ToString() + ")");
    }
  };
  for (const auto& n : objs.nodes) check("Node " + n.object.name, n.origin);
  for (const auto& p : objs.pods) check("Pod " + p.object.Key(), p.origin);
  for (const auto& p : objs.priority_classes) check("PriorityClass " + p.object.name, p.origin);
  for (const auto& p : objs.pdbs) check("PodDisruptionBudget " + p.object.ns + "/" + p.object.name, p.origin);
  for (const auto& n : objs.namespaces) check("Namespace " + n.object.name, n.origin);
  for (const auto& w : objs.workloads) check("Workload " + w.object.Key(), w.origin);
  for (const auto& g : objs.pod_groups) check("PodGroup " + g.object.Key(), g.origin);
  for (const auto& c : objs.pvcs) check("PersistentVolumeClaim " + c.object.Key(), c.origin);
  for (const auto& v : objs.pvs) check("PersistentVolume " + v.object.name, v.origin);
  for (const auto& c : objs.storage_classes) check("StorageClass " + c.object.name, c.origin);
  for (const auto& c : objs.csi_nodes) check("CSINode " + c.object.name, c.origin);
  for (const auto& g : objs.composite_pod_groups) check("CompositePodGroup " + g.object.Key(), g.origin);
  for (const auto& m : objs.pod_metrics) check("PodMetrics " + m.object.Key(), m.origin);
  // Usage is for pods of the input: metrics of a pod that is not there are an input error.
  {
    std::set<std::string> pods;
    for (const auto& p : objs.pods) pods.insert(p.object.Key());
    for (const auto& m : objs.pod_metrics) {
      if (!pods.count(m.object.Key())) errors.push_back(m.origin.ToString() + ": metadata.name: no pod " + m.object.Key() + " in the input");
    }
  }
  std::map<std::string, const Origin*> uids;
  for (const auto& p : objs.pods) {
    if (duplicates.count(&p.origin)) continue;  // reported above (a missing uid is namespace/name)
    auto [it, inserted] = uids.emplace(p.object.uid, &p.origin);
    if (!inserted) {
      errors.push_back(p.origin.ToString() + ": metadata.uid: duplicate uid \"" + p.object.uid +
                       "\" (also used at " + it->second->ToString() + ")");
    }
  }
  std::map<std::string, bool> node_names;
  for (const auto& n : objs.nodes) node_names[n.object.name] = true;
  for (const auto& p : objs.pods) {
    if (!p.object.node_name.empty() && !node_names.count(p.object.node_name)) {
      errors.push_back(p.origin.ToString() + ": spec.nodeName: node \"" + p.object.node_name +
                       "\" is not in the input");
    }
    if (!p.object.node_name.empty() && !p.object.scheduling_gates.empty()) {
      // A bound pod has passed its gates: kube-apiserver refuses the pair at creation.
      errors.push_back(p.origin.ToString() + ": spec.nodeName: " + std::string(model::kGatedNodeNameForbidden));
    }
    if (!p.object.nominated_node_name.empty() && !node_names.count(p.object.nominated_node_name)) {
      errors.push_back(p.origin.ToString() + ": status.nominatedNodeName: node \"" +
                       p.object.nominated_node_name + "\" is not in the input");
    }
  }
  std::set<std::string> pod_groups;
  for (const auto& g : objs.pod_groups) pod_groups.insert(g.object.Key());
  for (const auto& p : objs.pods) {
    const std::string& group = p.object.pod_group_name;
    if (!group.empty() && !pod_groups.count(p.object.ns + "/" + group)) {
      errors.push_back(p.origin.ToString() + ": spec.schedulingGroup.podGroupName: PodGroup \"" +
                       p.object.ns + "/" + group + "\" is not in the input");
    }
  }
  // kube-scheduler schedules a group with one profile, so it refuses a group whose pods name
  // different schedulers (validatePodGroup). The first member in input order sets the name.
  std::map<std::string, const Sourced<model::Pod>*> first_member;
  for (const auto& p : objs.pods) {
    if (p.object.pod_group_name.empty() || duplicates.count(&p.origin)) continue;
    const std::string key = p.object.ns + "/" + p.object.pod_group_name;
    if (!pod_groups.count(key)) continue;  // reported above
    auto [it, inserted] = first_member.emplace(key, &p);
    const model::Pod& first = it->second->object;
    if (!inserted && p.object.scheduler_name != first.scheduler_name) {
      errors.push_back(p.origin.ToString() + ": spec.schedulerName: \"" + p.object.scheduler_name +
                       "\" differs from \"" + first.scheduler_name + "\" of the group's first member (" +
                       it->second->origin.ToString() + "); all pods in PodGroup " + key +
                       " should have the same .spec.schedulerName");
    }
  }
  CheckGroupHierarchy(objs, errors);
}

}  // namespace arbiter::manifest::internal
