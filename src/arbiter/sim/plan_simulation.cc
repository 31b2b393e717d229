// `arbiter plan` over a ClusterSimulation.
#include "arbiter/sim/plan_simulation.h"

#include <map>
#include <set>

#include "arbiter/kubelet/node_pressure.h"

namespace arbiter::sim {

namespace {

// The virtual clock starts at the latest timestamp in the input, so every creation and start
// time lies in the past; an input without timestamps starts at 2024-01-01T00:00:00Z.
Timestamp StartTime(const manifest::ClusterObjects& objects) {
  Timestamp start = 1704067200LL * kSecond;
  bool any = false;
  for (const auto& [pod, origin] : objects.pods) {
    for (const auto& t : {pod.creation_timestamp, pod.start_time}) {
      if (t && (!any || *t > start)) {
        start = *t;
        any = true;
      }
    }
  }
  return start;
}

}  // namespace

StatusOr<PlanResult> RunPlan(const manifest::ClusterObjects& objects, const PlanOptions& options) {
  const model::SchedulerConfig config = objects.config ? objects.config->object : model::SchedulerConfig{};
  const Timestamp start = options.start ? *options.start : StartTime(objects);
  SimulationOptions so;
  so.seed = options.seed;
  so.explain = options.explain;
  so.on_cycle = options.on_cycle;
  so.max_cycles = options.max_cycles;
  so.reuse_verdicts = options.fast_paths;
  so.preemption.resource_fast_path = options.fast_paths;
  so.preemption.room_bound = options.fast_paths;
  ClusterSimulation sim(config, start, so);
  ARBITER_RETURN_IF_ERROR(sim.Init());
  for (const auto& [ns, origin] : objects.namespaces) sim.SetNamespace(ns);
  for (const auto& [pdb, origin] : objects.pdbs) sim.AddPdb(pdb);
  // The thrash guard's record from the controllers' annotations (written by a live scheduler).
  for (const auto& [w, origin] : objects.workload_controllers) {
    if (!w.is_object()) continue;
    const auto md = w.find("metadata");
    if (md == w.end() || !md->is_object()) continue;
    const auto annotations = md->find("annotations");
    if (annotations == md->end() || !annotations->is_object()) continue;
    const auto it = annotations->find(std::string(sched::preemption::kPreemptionsAnnotation));
    if (it == annotations->end() || !it->is_string()) continue;
    auto times = sched::preemption::ParsePreemptionsAnnotation(it->get_ref<const std::string&>());
    if (!times.ok()) {
      return InvalidArgument(origin.ToString() + ": metadata.annotations." + times.status().message());
    }
    const auto uid = md->find("uid");
    if (uid != md->end() && uid->is_string()) sim.SeedPreemptions(uid->get<std::string>(), *times);
  }
  for (const auto& [node, origin] : objects.nodes) ARBITER_RETURN_IF_ERROR(sim.AddNode(node));
  state::StorageIndex& storage = sim.scheduler().storage_index();
  for (const auto& [c, origin] : objects.storage_classes) storage.SetClass(c);
  for (const auto& [v, origin] : objects.pvs) storage.SetVolume(v);
  for (const auto& [c, origin] : objects.pvcs) storage.SetClaim(c);
  for (const auto& [n, origin] : objects.csi_nodes) storage.SetCsiNode(n);
  for (const auto& [g, origin] : objects.composite_pod_groups) sim.AddCompositePodGroup(g);
  for (const auto& [g, origin] : objects.pod_groups) sim.AddPodGroup(g);
  sim.result().node_count = objects.nodes.size();

  // Node pressure: with usage in the input, each node's kubelet first evicts what its thresholds
  // demand. Evicted pods are terminal (phase Failed): they neither run nor return to the queue.
  std::set<std::string> evicted;
  if (!objects.pod_metrics.empty()) {
    const model::KubeletConfig kubelet =
        objects.kubelet_config ? objects.kubelet_config->object : model::KubeletConfig::Defaults();
    std::map<std::string, const model::PodMetrics*> usage;
    for (const auto& [m, origin] : objects.pod_metrics) usage[m.Key()] = &m;
    for (const auto& [node, origin] : objects.nodes) {
      std::vector<const model::Pod*> on_node;
      for (const auto& [pod, o] : objects.pods) {
        if (pod.node_name == node.name && !pod.deletion_timestamp) on_node.push_back(&pod);
      }
      for (auto& e : kubelet::NodePressureEvictions(node, on_node, usage, kubelet)) {
        evicted.insert(e.pod);
        sim.RecordEviction({e.pod, e.node, "Evicted", e.signal, e.message});
      }
    }
  }

  // Running pods: their start time, else input order, is their start time.
  Timestamp input_order_time = start - static_cast<Timestamp>(objects.pods.size()) * kSecond;
  std::vector<std::pair<const model::Pod*, std::string>> skipped;  // pods the scheduler leaves alone
  for (const auto& [pod, origin] : objects.pods) {
    input_order_time += kSecond;
    if (evicted.count(pod.Key())) continue;
    if (!pod.node_name.empty()) {
      model::Pod running = pod;
      if (!running.start_time) running.start_time = input_order_time;
      ARBITER_RETURN_IF_ERROR(sim.AddRunningPod(std::move(running)));
    } else if (pod.scheduler_name != config.scheduler_name) {
      // kube-scheduler ignores pods whose schedulerName matches none of its profiles.
      skipped.emplace_back(&pod, "not scheduled: spec.schedulerName \"" + pod.scheduler_name +
                                     "\" is not a profile of this scheduler (\"" + config.scheduler_name + "\")");
    } else if (pod.deletion_timestamp) {
      // Nor does it schedule a pod that is being deleted (skipPodSchedule).
      skipped.emplace_back(&pod, "not scheduled: the pod is being deleted (metadata.deletionTimestamp is set)");
    } else {
      // Pods joined the queue when they were created; those without a creation time, now.
      sim.AddPendingPod(pod, pod.creation_timestamp);
    }
  }
  ARBITER_RETURN_IF_ERROR(sim.RunUntilIdle());
  PlanResult result = std::move(sim.result());
  for (const auto& [pod, why] : skipped) {
    PodPlan p;
    p.name = pod->Key();
    p.pod_group = pod->pod_group_name.empty() ? "" : pod->ns + "/" + pod->pod_group_name;
    p.priority = pod->priority;
    p.message = why;
    result.pods.push_back(std::move(p));
  }
  return result;
}

}  // namespace arbiter::sim
