// Node and Pod.
#include "arbiter/manifest/object_decoder.h"

#include <algorithm>

namespace arbiter::manifest::internal {

using model::Quantity;

void ObjectDecoder::DecodeNode(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/false);
  model::Node node;
  node.name = m.name;
  node.labels = m.labels;
  Node spec = D::Child(root, "spec");
  if (d_.ExpectMap(spec, "spec")) {
    node.unschedulable = d_.Bool(D::Child(spec, "unschedulable"), "spec.unschedulable").value_or(false);
    Node taints = D::Child(spec, "taints");
    if (D::Present(taints) && d_.ExpectSeq(taints, "spec.taints")) {
      size_t i = 0;
      for (const auto& t : taints) {
        const std::string p = Idx("spec.taints", i++);
        if (!d_.ExpectMap(t, p)) continue;
        model::Taint taint;
        auto key = d_.String(D::Child(t, "key"), p + ".key");
        if (!key || key->empty()) {
          d_.Error(p + ".key", "is required");
          continue;
        }
        if (std::string err = ValidateLabelKey(*key); !err.empty()) {
          d_.Error(p + ".key", "invalid taint key \"" + *key + "\": " + err);
          continue;
        }
        taint.key = *key;
        taint.value = d_.String(D::Child(t, "value"), p + ".value").value_or("");
        auto eff = d_.String(D::Child(t, "effect"), p + ".effect");
        auto parsed = eff ? model::ParseTaintEffect(*eff) : std::nullopt;
        if (!parsed) {
          d_.Error(p + ".effect", eff ? "unsupported effect \"" + *eff +
                                            "\" (want NoSchedule, PreferNoSchedule or NoExecute)"
                                      : std::string("is required"));
          continue;
        }
        taint.effect = *parsed;
        node.taints.push_back(std::move(taint));
      }
    }
  }
  Node status = D::Child(root, "status");
  if (d_.ExpectMap(status, "status")) {
    Node alloc = D::Child(status, "allocatable");
    Node cap = D::Child(status, "capacity");
    if (D::Present(cap)) node.capacity = DecodeResourceList(cap, "status.capacity");
    if (D::Present(alloc)) {
      node.allocatable = DecodeResourceList(alloc, "status.allocatable");
    } else {
      node.allocatable = node.capacity;
    }
    if (!D::Present(cap)) node.capacity = node.allocatable;
    Node images = D::Child(status, "images");
    if (D::Present(images) && d_.ExpectSeq(images, "status.images")) {
      size_t i = 0;
      for (const auto& img : images) {
        const std::string p = Idx("status.images", i++);
        if (!d_.ExpectMap(img, p)) continue;
        model::ContainerImage ci;
        ci.names = d_.StringList(D::Child(img, "names"), p + ".names");
        ci.size_bytes = d_.Int(D::Child(img, "sizeBytes"), p + ".sizeBytes", 0, model::kMaxResourceAmount).value_or(0);
        if (!ci.names.empty()) node.images.push_back(std::move(ci));
      }
    }
  }
  out_.nodes.push_back({std::move(node), std::move(origin)});
}

void ObjectDecoder::DecodePod(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/true);
  model::Pod pod;
  pod.ns = m.ns;
  pod.name = m.name;
  pod.uid = m.uid;
  pod.labels = m.labels;
  pod.creation_timestamp = m.creation;
  pod.deletion_timestamp = m.deletion;
  Node spec = D::Child(root, "spec");
  if (!D::Present(spec)) {
    d_.Error("spec.containers", "is required");
  } else if (d_.ExpectMap(spec, "spec")) {
    pod.node_name = d_.String(D::Child(spec, "nodeName"), "spec.nodeName").value_or("");
    pod.scheduler_name =
        d_.String(D::Child(spec, "schedulerName"), "spec.schedulerName").value_or("default-scheduler");
    pod.priority_class_name =
        d_.String(D::Child(spec, "priorityClassName"), "spec.priorityClassName").value_or("");
    if (auto p = d_.Int(D::Child(spec, "priority"), "spec.priority", kInt32Min, kInt32Max)) {
      pod.spec_priority = static_cast<int32_t>(*p);
    }
    if (auto pp = d_.String(D::Child(spec, "preemptionPolicy"), "spec.preemptionPolicy")) {
      pod.spec_preemption_policy = model::ParsePreemptionPolicy(*pp);
      if (!pod.spec_preemption_policy) {
        d_.Error("spec.preemptionPolicy",
                 "unsupported value \"" + *pp + "\" (want PreemptLowerPriority or Never)");
      }
    }
    // Containers, init containers and overhead make the effective request.
    std::vector<model::ContainerRequests> containers;
    std::vector<model::ContainerRequests> non_zero;  // with the scoring defaults filled in
    bool any_cpu_stated = false, any_memory_stated = false;
    auto decode_containers = [&](std::string_view field, bool init) {
      Node list = D::Child(spec, field);
      const std::string path = "spec." + std::string(field);
      if (!init && (!D::Present(list) || (list.IsSequence() && list.size() == 0))) {
        d_.Error(path, "must have at least one container");
        return;
      }
      if (!D::Present(list) || !d_.ExpectSeq(list, path)) return;
      size_t i = 0;
      for (const auto& c : list) {
        const std::string p = Idx(path, i++);
        if (!d_.ExpectMap(c, p)) continue;
        model::ContainerRequests cr;
        cr.init = init;
        Node res = D::Child(c, "resources");
        if (D::Present(res) && d_.ExpectMap(res, p + ".resources")) {
          cr.requests = DecodeResourceList(D::Child(res, "requests"), p + ".resources.requests");
          model::Resources limits =
              DecodeResourceList(D::Child(res, "limits"), p + ".resources.limits");
          // A limit without a request makes the request equal to the limit (API defaulting).
          Node req_node = D::Child(res, "requests");
          Node lim_node = D::Child(res, "limits");
          if (lim_node.IsMap()) {
            for (auto it = lim_node.begin(); it != lim_node.end(); ++it) {
              if (!it->first.IsScalar()) continue;
              const std::string name = it->first.Scalar();
              if (!D::Present(D::Child(req_node, name))) cr.requests.Set(name, limits.Get(name));
              else if (cr.requests.Get(name) > limits.Get(name)) {
                d_.Error(p + ".resources.requests." + name, "must be less than or equal to the " + name + " limit");
              }
            }
          }
        }
        if (init) {
          if (auto rp = d_.String(D::Child(c, "restartPolicy"), p + ".restartPolicy")) {
            if (*rp != "Always") {
              d_.Error(p + ".restartPolicy", "unsupported value \"" + *rp + "\" (only Always)");
            }
            cr.restartable = true;
          }
        }
        Node ports = D::Child(c, "ports");
        if (D::Present(ports) && d_.ExpectSeq(ports, p + ".ports")) {
          size_t j = 0;
          for (const auto& port : ports) {
            const std::string pp = Idx(p + ".ports", j++);
            if (!d_.ExpectMap(port, pp)) continue;
            auto hp = d_.Int(D::Child(port, "hostPort"), pp + ".hostPort", 0, 65535);
            d_.Int(D::Child(port, "containerPort"), pp + ".containerPort", 1, 65535);
            std::string proto = d_.String(D::Child(port, "protocol"), pp + ".protocol").value_or("TCP");
            if (proto != "TCP" && proto != "UDP" && proto != "SCTP") {
              d_.Error(pp + ".protocol", "unsupported value \"" + proto + "\" (want TCP, UDP or SCTP)");
              continue;
            }
            // Only app containers and restartable (sidecar) init containers hold host ports
            // while the pod runs; a one-shot init container's ports are not reserved.
            if (hp && *hp > 0 && (!init || cr.restartable)) {
              model::HostPort h;
              h.port = static_cast<int32_t>(*hp);
              h.protocol = proto;
              h.host_ip = d_.String(D::Child(port, "hostIP"), pp + ".hostIP").value_or("0.0.0.0");
              if (h.host_ip.empty()) h.host_ip = "0.0.0.0";
              pod.host_ports.push_back(std::move(h));
            }
          }
        }
        // One entry per container ("" when it names no image): ImageLocality scales by the count.
        pod.container_images.push_back(d_.String(D::Child(c, "image"), p + ".image").value_or(""));
        if (!init) {
          pod.container_requests.emplace_back(d_.String(D::Child(c, "name"), p + ".name").value_or(""), cr.requests);
        }
        model::ContainerRequests nz = cr;
        Node req_node = D::Child(res, "requests");
        Node lim_node = D::Child(res, "limits");
        auto stated = [&](std::string_view name) {
          return D::Present(D::Child(req_node, name)) || D::Present(D::Child(lim_node, name));
        };
        if (!stated(model::kResourceCpu)) nz.requests.milli_cpu = model::kDefaultMilliCpuRequest;
        if (!stated(model::kResourceMemory)) nz.requests.memory = model::kDefaultMemoryRequest;
        any_cpu_stated = any_cpu_stated || stated(model::kResourceCpu);
        any_memory_stated = any_memory_stated || stated(model::kResourceMemory);
        non_zero.push_back(std::move(nz));
        containers.push_back(std::move(cr));
      }
    };
    decode_containers("initContainers", true);
    decode_containers("containers", false);
    model::Resources overhead = DecodeResourceList(D::Child(spec, "overhead"), "spec.overhead");
    // Pod-level spec.resources (PodLevelResources): requests, defaulted from limits as for a
    // container, for the resources that may be set at pod level.
    std::vector<std::pair<std::string, int64_t>> pod_level;
    Node pres = D::Child(spec, "resources");
    if (D::Present(pres) && d_.ExpectMap(pres, "spec.resources")) {
      Node req_node = D::Child(pres, "requests");
      Node lim_node = D::Child(pres, "limits");
      const model::Resources req = DecodeResourceList(req_node, "spec.resources.requests");
      const model::Resources lim = DecodeResourceList(lim_node, "spec.resources.limits");
      std::vector<std::string> names;
      for (const Node* list : {&req_node, &lim_node}) {
        if (!list->IsMap()) continue;
        const std::string field = list == &req_node ? "spec.resources.requests." : "spec.resources.limits.";
        for (auto it = list->begin(); it != list->end(); ++it) {
          if (!it->first.IsScalar()) continue;
          const std::string name = it->first.Scalar();
          if (!model::IsSupportedPodLevelResource(name)) {
            d_.Error(field + name, "unsupported pod-level resource \"" + name + "\" (supported: cpu, memory, hugepages-<size>)");
            continue;
          }
          if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        }
      }
      std::sort(names.begin(), names.end());
      for (const auto& name : names) {
        const bool has_request = D::Present(D::Child(req_node, name));
        const int64_t amount = has_request ? req.Get(name) : lim.Get(name);
        if (has_request && D::Present(D::Child(lim_node, name)) && amount > lim.Get(name)) {
          d_.Error("spec.resources.requests." + name, "must be less than or equal to the " + name + " limit");
        }
        pod_level.emplace_back(name, amount);
      }
    }
    if (!pod_level.empty()) {
      auto before = std::make_shared<model::PodLevelResources>();
      before->requests = pod_level;
      before->container_requests = model::EffectivePodRequests(containers, overhead);
      const model::Resources nz = model::EffectivePodRequests(non_zero, overhead);
      before->container_non_zero_milli_cpu = nz.milli_cpu;
      before->container_non_zero_memory = nz.memory;
      pod.pod_level_resources = std::move(before);
    }
    pod.requests = model::EffectivePodRequests(containers, overhead, pod_level);
    for (const std::string_view r : {model::kResourceCpu, model::kResourceMemory, model::kResourceEphemeralStorage}) {
      if (pod.requests.Get(r) > model::kMaxResourceAmount) {
        d_.Error("spec.containers", "the pod's " + std::string(r) + " requests add up to more than Arbiter accepts (2^53 " +
                                        (r == model::kResourceCpu ? "millicores" : "bytes") + ")");
      }
    }
    if (!pod_level.empty()) {
      // With pod-level requests, a scoring default applies only to a resource that neither the
      // containers nor the pod level state (getNonMissingContainerRequests).
      auto at_pod_level = [&](std::string_view r) {
        return std::any_of(pod_level.begin(), pod_level.end(), [&](const auto& e) { return e.first == r; });
      };
      const bool cpu_default = !any_cpu_stated && !at_pod_level(model::kResourceCpu);
      const bool memory_default = !any_memory_stated && !at_pod_level(model::kResourceMemory);
      non_zero = containers;
      for (auto& c : non_zero) {
        if (cpu_default) c.requests.milli_cpu = model::kDefaultMilliCpuRequest;
        if (memory_default) c.requests.memory = model::kDefaultMemoryRequest;
      }
    }
    const model::Resources nz = model::EffectivePodRequests(non_zero, overhead, pod_level);
    pod.non_zero_milli_cpu = nz.milli_cpu;
    pod.non_zero_memory = nz.memory;
    pod.node_selector = model::LabelMap(d_.StringMap(D::Child(spec, "nodeSelector"), "spec.nodeSelector"));
    DecodeAffinity(D::Child(spec, "affinity"), "spec.affinity", pod.affinity);
    pod.tolerations = DecodeTolerations(D::Child(spec, "tolerations"), "spec.tolerations");
    pod.topology_spread_constraints =
        DecodeSpread(D::Child(spec, "topologySpreadConstraints"), "spec.topologySpreadConstraints");
    if (auto g = d_.Int(D::Child(spec, "terminationGracePeriodSeconds"),
                        "spec.terminationGracePeriodSeconds", 0, INT64_MAX / kSecond)) {
      pod.termination_grace_period_seconds = *g;
    }
    DecodePodVolumes(spec, pod.name, pod);
    Node gates = D::Child(spec, "schedulingGates");
    if (D::Present(gates) && d_.ExpectSeq(gates, "spec.schedulingGates")) {
      size_t i = 0;
      for (const auto& g : gates) {
        const std::string p = Idx("spec.schedulingGates", i++);
        if (!d_.ExpectMap(g, p)) continue;
        auto name = d_.String(D::Child(g, "name"), p + ".name");
        if (!name || name->empty()) {
          if (!D::Present(D::Child(g, "name")) || name) d_.Error(p + ".name", "is required");
          continue;
        }
        if (std::string err = ValidateLabelKey(*name); !err.empty()) {
          d_.Error(p + ".name", "invalid scheduling gate name \"" + *name + "\": " + err);
          continue;
        }
        if (std::find(pod.scheduling_gates.begin(), pod.scheduling_gates.end(), *name) != pod.scheduling_gates.end()) {
          d_.Error(p + ".name", "Duplicate value: \"" + *name + "\"");
          continue;
        }
        pod.scheduling_gates.push_back(std::move(*name));
      }
    }
    Node sg = D::Child(spec, "schedulingGroup");
    if (D::Present(sg) && d_.ExpectMap(sg, "spec.schedulingGroup")) {
      const std::string gp = "spec.schedulingGroup.podGroupName";
      auto group = d_.String(D::Child(sg, "podGroupName"), gp);
      if (!group || group->empty()) {
        if (!D::Present(D::Child(sg, "podGroupName")) || group) d_.Error(gp, "is required");
      } else if (std::string err = ValidateDnsSubdomain(*group); !err.empty()) {
        d_.Error(gp, "invalid name \"" + *group + "\": " + err);
      } else {
        pod.pod_group_name = *group;
      }
    }
  }
  Node status = D::Child(root, "status");
  if (d_.ExpectMap(status, "status")) {
    pod.start_time = d_.Timestamp(D::Child(status, "startTime"), "status.startTime");
    Node conditions = D::Child(status, "conditions");
    if (D::Present(conditions) && d_.ExpectSeq(conditions, "status.conditions")) {
      size_t i = 0;
      for (const auto& c : conditions) {
        const std::string cp = Idx("status.conditions", i++);
        if (!d_.ExpectMap(c, cp)) continue;
        const std::string type = d_.String(D::Child(c, "type"), cp + ".type").value_or("");
        const std::string st = d_.String(D::Child(c, "status"), cp + ".status").value_or("");
        const std::string reason = d_.String(D::Child(c, "reason"), cp + ".reason").value_or("");
        if (type == "DisruptionTarget" && st == "True" && reason == "PreemptionByScheduler") {
          pod.preempted_by_scheduler = true;
        }
      }
    }
    pod.nominated_node_name =
        d_.String(D::Child(status, "nominatedNodeName"), "status.nominatedNodeName").value_or("");
  }
  if (pod.uid.empty()) pod.uid = pod.ns + "/" + pod.name;  // stable, unique within the input
  Node refs = D::Child(D::Child(root, "metadata"), "ownerReferences");
  if (refs.IsSequence()) {
    for (const auto& ref : refs) {
      const Node controller = D::Child(ref, "controller");
      if (!controller.IsScalar() || controller.Scalar() != "true") continue;
      ClusterObjects::ControllerRef c;
      for (auto [field, value] : {std::pair{"kind", &c.kind}, {"name", &c.name}, {"uid", &c.uid}}) {
        if (const Node v = D::Child(ref, field); v.IsScalar()) *value = v.Scalar();
      }
      pod.controller_uid = c.uid;
      out_.pod_controllers[pod.ns + "/" + pod.name] = std::move(c);
    }
  }
  out_.pods.push_back({std::move(pod), std::move(origin)});
}

}  // namespace arbiter::manifest::internal
