// Configuration: KubeSchedulerConfiguration, KubeletConfiguration, and PodMetrics.
#include "arbiter/manifest/object_decoder.h"

#include <algorithm>

namespace arbiter::manifest::internal {

using model::Quantity;

void ObjectDecoder::DecodePodMetrics(const Node& root, Origin origin) {
  Meta m = DecodeMeta(root, /*namespaced=*/true);
  model::PodMetrics pm;
  pm.ns = m.ns;
  pm.name = m.name;
  Node list = D::Child(root, "containers");
  if (D::Present(list) && d_.ExpectSeq(list, "containers")) {
    size_t i = 0;
    for (const auto& c : list) {
      const std::string p = Idx("containers", i++);
      if (!d_.ExpectMap(c, p)) continue;
      const std::string name = d_.String(D::Child(c, "name"), p + ".name").value_or("");
      if (name.empty()) d_.Error(p + ".name", "is required");
      pm.containers.emplace_back(name, DecodeResourceList(D::Child(c, "usage"), p + ".usage"));
    }
  }
  out_.pod_metrics.push_back({std::move(pm), std::move(origin)});
}

// KubeletConfiguration v1beta1's fields (k8s.io/kubelet v0.37): Arbiter reads evictionHard; the
// others are accepted, so that a real kubelet's file reads, and a typo is an error.
constexpr std::string_view kKubeletConfigFields[] = {
    "apiVersion", "kind",
    "enableServer", "staticPodPath", "podLogsDir", "syncFrequency", "fileCheckFrequency",
    "httpCheckFrequency", "staticPodURL", "staticPodURLHeader", "address", "port", "readOnlyPort",
    "tlsCertFile", "tlsPrivateKeyFile", "tlsCipherSuites", "tlsCurvePreferences", "tlsMinVersion",
    "rotateCertificates", "serverTLSBootstrap", "authentication", "authorization", "registryPullQPS",
    "registryBurst", "imagePullCredentialsVerificationPolicy",
    "preloadedImagesVerificationAllowlist", "eventRecordQPS", "eventBurst",
    "enableDebuggingHandlers", "enableContentionProfiling", "healthzPort", "healthzBindAddress",
    "oomScoreAdj", "clusterDomain", "clusterDNS", "streamingConnectionIdleTimeout",
    "nodeStatusUpdateFrequency", "nodeStatusReportFrequency", "nodeLeaseDurationSeconds",
    "imageMinimumGCAge", "imageMaximumGCAge", "imageGCHighThresholdPercent",
    "imageGCLowThresholdPercent", "volumeStatsAggPeriod", "kubeletCgroups", "systemCgroups",
    "cgroupRoot", "cgroupsPerQOS", "cgroupDriver", "cpuManagerPolicy", "singleProcessOOMKill",
    "cpuManagerPolicyOptions", "cpuManagerReconcilePeriod", "memoryManagerPolicy",
    "topologyManagerPolicy", "topologyManagerScope", "topologyManagerPolicyOptions", "qosReserved",
    "runtimeRequestTimeout", "hairpinMode", "maxPods", "podCIDR", "podPidsLimit", "resolvConf",
    "runOnce", "cpuCFSQuota", "cpuCFSQuotaPeriod", "nodeStatusMaxImages", "maxOpenFiles",
    "contentType", "kubeAPIQPS", "kubeAPIBurst", "serializeImagePulls", "maxParallelImagePulls",
    "evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionPressureTransitionPeriod",
    "evictionMaxPodGracePeriod", "evictionMinimumReclaim", "mergeDefaultEvictionSettings",
    "podsPerCore", "enableControllerAttachDetach", "protectKernelDefaults", "makeIPTablesUtilChains",
    "iptablesMasqueradeBit", "iptablesDropBit", "featureGates", "failSwapOn", "memorySwap",
    "containerLogMaxSize", "containerLogMaxFiles", "containerLogMaxWorkers",
    "containerLogMonitorInterval", "configMapAndSecretChangeDetectionStrategy", "systemReserved",
    "kubeReserved", "reservedSystemCPUs", "showHiddenMetricsForVersion", "systemReservedCgroup",
    "kubeReservedCgroup", "enforceNodeAllocatable", "allowedUnsafeSysctls", "defaultPodSysctls",
    "volumePluginDir", "providerID", "kernelMemcgNotification", "logging", "enableSystemLogHandler",
    "enableSystemLogQuery", "shutdownGracePeriod", "shutdownGracePeriodCriticalPods",
    "shutdownGracePeriodByPodPriority", "crashLoopBackOff", "reservedMemory",
    "enableProfilingHandler", "enableDebugFlagsHandler", "seccompDefault", "memoryThrottlingFactor",
    "memoryReservationPolicy", "registerWithTaints", "registerNode", "tracing",
    "localStorageCapacityIsolation", "containerRuntimeEndpoint", "imageServiceEndpoint",
    "failCgroupV1", "userNamespaces"};

void ObjectDecoder::DecodeKubeletConfig(const Node& root, Origin origin) {
  model::KubeletConfig cfg = model::KubeletConfig::Defaults();
  d_.KnownFields(root, "", kKubeletConfigFields);
  Node hard = D::Child(root, "evictionHard");
  if (D::Present(hard) && d_.ExpectMap(hard, "evictionHard")) {
    cfg.eviction_hard.clear();
    for (auto it = hard.begin(); it != hard.end(); ++it) {
      const std::string signal = it->first.IsScalar() ? it->first.Scalar() : "";
      const std::string field = "evictionHard." + signal;
      if (signal != "memory.available" && signal != "nodefs.available" && signal != "imagefs.available" &&
          signal != "nodefs.inodesFree" && signal != "imagefs.inodesFree" && signal != "pid.available") {
        d_.Error(field, "unknown eviction signal (memory.available, nodefs.available, nodefs.inodesFree, "
                        "imagefs.available, imagefs.inodesFree, pid.available)");
        continue;
      }
      auto text = d_.String(it->second, field);
      if (!text) continue;
      model::EvictionThreshold t;
      t.signal = signal;
      t.text = *text;
      if (!text->empty() && text->back() == '%') {
        char* end = nullptr;
        const double v = std::strtod(text->c_str(), &end);
        if (end != text->c_str() + text->size() - 1 || v < 0 || v > 100) {
          d_.Error(field, "invalid percentage \"" + *text + "\" (want 0% to 100%)");
          continue;
        }
        t.percentage = v;
      } else {
        auto q = model::Quantity::Parse(*text);
        if (!q.ok()) {
          d_.Error(field, q.status().message());
          continue;
        }
        t.quantity = q->value();
      }
      cfg.eviction_hard.push_back(std::move(t));
    }
  }
  if (out_.kubelet_config) {
    d_.Error("", "a second KubeletConfiguration (the first is at " + out_.kubelet_config->origin.ToString() + ")");
    return;
  }
  out_.kubelet_config = Sourced<model::KubeletConfig>{std::move(cfg), std::move(origin)};
}

void ObjectDecoder::DecodeConfig(const Node& root, Origin origin) {
  model::SchedulerConfig cfg;
  // KubeSchedulerConfiguration v1's fields (and Arbiter's featureGates): the ones Arbiter does
  // not act on are accepted, so that a real scheduler's file reads, and a typo is an error.
  d_.KnownFields(root, "", {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
                            "healthzBindAddress", "metricsBindAddress", "enableProfiling", "enableContentionProfiling",
                            "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles",
                            "extenders", "delayCacheUntilActive", "featureGates"});
  if (auto p = d_.Int(D::Child(root, "percentageOfNodesToScore"), "percentageOfNodesToScore", 0, 100)) {
    cfg.percentage_of_nodes_to_score = static_cast<int32_t>(*p);
  }
  if (auto b = d_.Int(D::Child(root, "podInitialBackoffSeconds"), "podInitialBackoffSeconds", 1, 3600)) {
    cfg.pod_initial_backoff_seconds = *b;
  }
  if (auto b = d_.Int(D::Child(root, "podMaxBackoffSeconds"), "podMaxBackoffSeconds", 1, 3600)) {
    cfg.pod_max_backoff_seconds = *b;
  }
  if (cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds) {
    d_.Error("podMaxBackoffSeconds", "must be at least podInitialBackoffSeconds");
  }
  Node gates = D::Child(root, "featureGates");
  if (D::Present(gates) && d_.ExpectMap(gates, "featureGates")) {
    for (auto it = gates.begin(); it != gates.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      const std::string name = it->first.Scalar();
      if (auto v = d_.Bool(it->second, "featureGates." + name)) cfg.feature_gates[name] = *v;
    }
  }
  Node profiles = D::Child(root, "profiles");
  if (D::Present(profiles) && d_.ExpectSeq(profiles, "profiles")) {
    if (profiles.size() > 1) d_.Error("profiles", "only one profile is supported");
    size_t i = 0;
    for (const auto& prof : profiles) {
      const std::string p = Idx("profiles", i++);
      if (!d_.ExpectMap(prof, p)) continue;
      d_.KnownFields(prof, p, {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"});
      cfg.scheduler_name =
          d_.String(D::Child(prof, "schedulerName"), p + ".schedulerName").value_or(cfg.scheduler_name);
      Node plugins = D::Child(prof, "plugins");
      if (D::Present(plugins) && d_.ExpectMap(plugins, p + ".plugins")) {
        d_.KnownFields(plugins, p + ".plugins", {"preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
                                                 "score", "reserve", "permit", "preBind", "bind", "postBind", "multiPoint"});
        for (auto it = plugins.begin(); it != plugins.end(); ++it) {
          if (!it->first.IsScalar()) continue;
          const std::string point = it->first.Scalar();
          const std::string pp = p + ".plugins." + point;
          if (!d_.ExpectMap(it->second, pp)) continue;
          d_.KnownFields(it->second, pp, {"enabled", "disabled"});
          Node enabled = D::Child(it->second, "enabled");
          if (D::Present(enabled) && d_.ExpectSeq(enabled, pp + ".enabled")) {
            size_t j = 0;
            for (const auto& e : enabled) {
              const std::string ep = Idx(pp + ".enabled", j++);
              if (!d_.ExpectMap(e, ep)) continue;
              d_.KnownFields(e, ep, {"name", "weight"});
              auto name = d_.String(D::Child(e, "name"), ep + ".name");
              if (!D::Present(D::Child(e, "name"))) d_.Error(ep + ".name", "is required");
              auto weight = d_.Int(D::Child(e, "weight"), ep + ".weight", 0, 100);
              if (name && weight && point == "score") cfg.score_weights[*name] = static_cast<int32_t>(*weight);
            }
          }
          Node disabled = D::Child(it->second, "disabled");
          if (D::Present(disabled) && d_.ExpectSeq(disabled, pp + ".disabled")) {
            size_t j = 0;
            for (const auto& e : disabled) {
              const std::string dp = Idx(pp + ".disabled", j++);
              if (!d_.ExpectMap(e, dp)) continue;
              d_.KnownFields(e, dp, {"name", "weight"});
              auto name = d_.String(D::Child(e, "name"), dp + ".name");
              if (!D::Present(D::Child(e, "name"))) d_.Error(dp + ".name", "is required");
              // A plugin disabled at multiPoint, preFilter, filter or postFilter leaves the
              // profile; at score it keeps filtering but stops scoring.
              if (!name) continue;
              if (point == "multiPoint" || point == "preFilter" || point == "filter" || point == "postFilter") {
                cfg.disabled_plugins.push_back(*name);
              } else if (point == "score") {
                cfg.disabled_plugins.push_back(*name + "/score");
              } else {
                d_.Error(dp + ".name", "Arbiter cannot disable plugins at the " + point +
                                          " extension point (multiPoint, preFilter, filter, postFilter and "
                                          "score are supported)");
              }
            }
          }
        }
      }
      Node pcs = D::Child(prof, "pluginConfig");
      if (!D::Present(pcs) || !d_.ExpectSeq(pcs, p + ".pluginConfig")) continue;
      size_t j = 0;
      for (const auto& pc : pcs) {
        const std::string cp = Idx(p + ".pluginConfig", j++);
        if (!d_.ExpectMap(pc, cp)) continue;
        d_.KnownFields(pc, cp, {"name", "args"});
        std::string name = d_.String(D::Child(pc, "name"), cp + ".name").value_or("");
        if (!D::Present(D::Child(pc, "name"))) d_.Error(cp + ".name", "is required");
        Node args = D::Child(pc, "args");
        if (!d_.ExpectMap(args, cp + ".args")) continue;
        const std::string ap = cp + ".args";
        if (name == "DefaultPreemption") {
          d_.KnownFields(args, ap, {"apiVersion", "kind", "minCandidateNodesPercentage", "minCandidateNodesAbsolute",
                                    "victimSelection", "priorityDelta", "pdbPolicy", "minRuntimeSeconds", "victimCost", "maxPreemptionsPerPod",
                                    "preemptionWindowSeconds", "crossNodePreemption"});
          if (auto v = d_.Int(D::Child(args, "minCandidateNodesPercentage"),
                              ap + ".minCandidateNodesPercentage", 0, 100)) {
            cfg.min_candidate_nodes_percentage = static_cast<int32_t>(*v);
          }
          if (auto v = d_.Int(D::Child(args, "minCandidateNodesAbsolute"),
                              ap + ".minCandidateNodesAbsolute", 0, kInt32Max)) {
            cfg.min_candidate_nodes_absolute = static_cast<int32_t>(*v);
          }
          if (cfg.min_candidate_nodes_percentage == 0 && cfg.min_candidate_nodes_absolute == 0) {
            d_.Error(ap, "minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero");
          }
          // Arbiter's extensions (model::SchedulerConfig), each off unless set. An enumerated
          // value must be one of `values`; the error lists them.
          auto one_of = [&]<typename E>(const char* field, E& out,
                                        std::initializer_list<std::pair<std::string_view, E>> values) {
            auto v = d_.String(D::Child(args, field), ap + "." + field);
            if (!v) return;
            std::string names;
            size_t k = 0;
            for (const auto& [allowed, value] : values) {
              if (allowed == *v) {
                out = value;
                return;
              }
              names += std::string(k == 0 ? "" : k + 1 == values.size() ? " or " : ", ") + std::string(allowed);
              ++k;
            }
            d_.Error(ap + "." + field, "must be " + names + ", not \"" + *v + "\"");
          };
          one_of("victimSelection", cfg.victim_selection,
                 {{"Kubernetes", model::VictimSelection::kKubernetes},
                  {"Nomad", model::VictimSelection::kNomad},
                  {"Optimal", model::VictimSelection::kOptimal}});
          if (auto v = d_.Int(D::Child(args, "priorityDelta"), ap + ".priorityDelta", 1, kInt32Max)) {
            cfg.priority_delta = static_cast<int32_t>(*v);
          }
          one_of("pdbPolicy", cfg.pdb_policy,
                 {{"BestEffort", model::PdbPolicy::kBestEffort}, {"Strict", model::PdbPolicy::kStrict}});
          if (auto v = d_.Int(D::Child(args, "minRuntimeSeconds"), ap + ".minRuntimeSeconds", 0, kMaxMinRuntimeSeconds)) {
            cfg.min_runtime_seconds = *v;
          }
          one_of("victimCost", cfg.victim_cost,
                 {{"None", model::VictimCost::kNone}, {"LostWork", model::VictimCost::kLostWork}});
          const auto max_preemptions = d_.Int(D::Child(args, "maxPreemptionsPerPod"), ap + ".maxPreemptionsPerPod", 0,
                                              int64_t{model::kMaxPreemptionsPerPod});
          if (max_preemptions) cfg.max_preemptions_per_pod = static_cast<int32_t>(*max_preemptions);
          const auto window = d_.Int(D::Child(args, "preemptionWindowSeconds"), ap + ".preemptionWindowSeconds", 0,
                                     kMaxMinRuntimeSeconds);
          if (window) cfg.preemption_window_seconds = *window;
          // (Checked together only when each decoded: a bad one is reported once, by itself.)
          const bool guard_decoded = (max_preemptions || !D::Present(D::Child(args, "maxPreemptionsPerPod"))) &&
                                     (window || !D::Present(D::Child(args, "preemptionWindowSeconds")));
          if (auto v = d_.Bool(D::Child(args, "crossNodePreemption"), ap + ".crossNodePreemption")) {
            cfg.cross_node_preemption = *v;
          }
          if (guard_decoded && (cfg.max_preemptions_per_pod > 0) != (cfg.preemption_window_seconds > 0)) {
            d_.Error(ap, "maxPreemptionsPerPod and preemptionWindowSeconds must be set together (or neither)");
          }
        } else if (name == "NodeResourcesFit") {
          d_.KnownFields(args, ap, {"apiVersion", "kind", "ignoredResources", "ignoredResourceGroups", "scoringStrategy"});
          Node ss = D::Child(args, "scoringStrategy");
          if (!D::Present(ss) || !d_.ExpectMap(ss, ap + ".scoringStrategy")) continue;
          const std::string sp = ap + ".scoringStrategy";
          d_.KnownFields(ss, sp, {"type", "resources", "requestedToCapacityRatio"});
          if (auto t = d_.String(D::Child(ss, "type"), sp + ".type")) {
            if (*t == "LeastAllocated") {
              cfg.scoring_strategy = model::ScoringStrategy::kLeastAllocated;
            } else if (*t == "MostAllocated") {
              cfg.scoring_strategy = model::ScoringStrategy::kMostAllocated;
            } else if (*t == "RequestedToCapacityRatio") {
              cfg.scoring_strategy = model::ScoringStrategy::kRequestedToCapacityRatio;
            } else {
              d_.Error(sp + ".type", "unsupported value \"" + *t +
                                         "\" (want LeastAllocated, MostAllocated or "
                                         "RequestedToCapacityRatio)");
            }
          }
          Node res = D::Child(ss, "resources");
          if (D::Present(res) && d_.ExpectSeq(res, sp + ".resources")) {
            cfg.scoring_resources.clear();
            size_t k = 0;
            for (const auto& r : res) {
              const std::string rp = Idx(sp + ".resources", k++);
              if (!d_.ExpectMap(r, rp)) continue;
              d_.KnownFields(r, rp, {"name", "weight"});
              auto rn = d_.String(D::Child(r, "name"), rp + ".name");
              if (!D::Present(D::Child(r, "name"))) d_.Error(rp + ".name", "is required");
              auto w = d_.Int(D::Child(r, "weight"), rp + ".weight", 1, 100);
              if (rn) cfg.scoring_resources.push_back({*rn, w.value_or(1)});
            }
          }
          Node rtc = D::Child(ss, "requestedToCapacityRatio");
          if (D::Present(rtc) && d_.ExpectMap(rtc, sp + ".requestedToCapacityRatio")) {
            d_.KnownFields(rtc, sp + ".requestedToCapacityRatio", {"shape"});
            Node shape = D::Child(rtc, "shape");
            const std::string shp = sp + ".requestedToCapacityRatio.shape";
            if (D::Present(shape) && d_.ExpectSeq(shape, shp)) {
              cfg.requested_to_capacity_shape.clear();
              size_t k = 0;
              for (const auto& pt : shape) {
                const std::string pp = Idx(shp, k++);
                if (!d_.ExpectMap(pt, pp)) continue;
                d_.KnownFields(pt, pp, {"utilization", "score"});
                auto u = d_.Int(D::Child(pt, "utilization"), pp + ".utilization", 0, 100);
                auto s = d_.Int(D::Child(pt, "score"), pp + ".score", 0, 10);
                if (u && s) {
                  if (!cfg.requested_to_capacity_shape.empty() &&
                      *u <= cfg.requested_to_capacity_shape.back().utilization) {
                    d_.Error(pp + ".utilization", "must be strictly increasing");
                  }
                  cfg.requested_to_capacity_shape.push_back({*u, *s});
                }
              }
              if (cfg.requested_to_capacity_shape.empty()) d_.Error(shp, "must not be empty");
            }
          }
        } else if (name == "InterPodAffinity") {
          d_.KnownFields(args, ap, {"apiVersion", "kind", "hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"});
          if (auto v = d_.Int(D::Child(args, "hardPodAffinityWeight"), ap + ".hardPodAffinityWeight", 0, 100)) {
            cfg.hard_pod_affinity_weight = static_cast<int32_t>(*v);
          }
        }
      }
    }
  }
  if (out_.config) {
    d_.Error("", "a second KubeSchedulerConfiguration (the first is at " +
                     out_.config->origin.ToString() + ")");
    return;
  }
  out_.config = Sourced<model::SchedulerConfig>{std::move(cfg), std::move(origin)};
}

}  // namespace arbiter::manifest::internal
