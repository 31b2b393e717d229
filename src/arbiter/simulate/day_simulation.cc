// `arbiter simulate`'s engine: arrivals, runs, completions and preemptions on a virtual clock
// around sim::ClusterSimulation.
#include "arbiter/simulate/day_simulation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/base/rng.h"
#include "arbiter/controllers/workload_objects.h"
#include "arbiter/manifest/names.h"
#include "arbiter/model/quantity.h"
#include "arbiter/sim/cluster_simulation.h"
#include "arbiter/simulate/ledger.h"

namespace arbiter::simulate {

namespace {

using Json = nlohmann::json;

constexpr Timestamp kStart = kSimulationStart;
constexpr const char* kUidPrefix = "sim-";
// The node lifecycle controller's taint for a node that stopped reporting, and how long the
// API's default toleration keeps a pod on it (DefaultTolerationSeconds).
constexpr const char* kUnreachableTaint = "node.kubernetes.io/unreachable";
constexpr int64_t kUnreachableTolerationSeconds = 300;

struct SimWorkload {
  const Arrival* arrival = nullptr;
  model::Pod prototype;  // admitted; name and uid are set per pod
  std::string generate_name;
  std::vector<uint32_t> pods;
  bool ended = false;
  int32_t cascade = 0;  // the deepest of its pods' (a group preempts as one)
};

enum class EventKind : uint8_t { kCompletion, kDeploymentEnd, kNodeFail, kNodeEvict, kNodeRepair };

using Event = ClockEvent<EventKind>;

class Day {
 public:
  Day(const manifest::ClusterObjects& cluster, const std::vector<Arrival>& arrivals, const SimulateOptions& options)
      : cluster_(cluster), arrivals_(arrivals), options_(options), rng_(options.seed ^ 0x5157u),
        sim_(cluster.config ? cluster.config->object : model::SchedulerConfig{}, kStart, SimOptions()) {}

  StatusOr<Report> Run(const std::string& config_name) {
    ARBITER_RETURN_IF_ERROR(Setup());
    const Timestamp end = kStart + options_.duration_seconds * kSecond;
    size_t next_arrival = 0;
    VirtualClock& clock = sim_.clock();
    for (;;) {
      Timestamp next = end;
      for (;;) {
        // The next outside change (a cycle may just have added a completion).
        next = end;
        if (next_arrival < arrivals_.size()) next = std::min(next, ArrivalTime(arrivals_[next_arrival]));
        if (!events_.empty()) next = std::min(next, events_.top().at);
        bool blocked = false;
        auto out = sim_.StepUntil(next, &blocked);
        if (!out.ok()) return out.status();
        if (*out) {
          ++cycles_;
          OnOutcome(**out);
        }
        ARBITER_RETURN_IF_ERROR(Replace());
        Tick();
        if (blocked) break;
      }
      if (next >= end) break;
      Account();
      clock.AdvanceTo(next);
      while (next_arrival < arrivals_.size() && ArrivalTime(arrivals_[next_arrival]) <= clock.Now()) {
        ARBITER_RETURN_IF_ERROR(Arrive(arrivals_[next_arrival++]));
      }
      while (!events_.empty() && events_.top().at <= clock.Now()) {
        const Event e = events_.top();
        events_.pop();
        ARBITER_RETURN_IF_ERROR(Handle(e));
      }
    }
    clock.AdvanceTo(end);
    Account();
    return Finish(config_name);
  }

 private:
  sim::SimulationOptions SimOptions() {
    sim::SimulationOptions o;
    o.seed = options_.seed;
    o.record = false;
    o.max_cycles = SIZE_MAX;
    o.reuse_verdicts = options_.fast_paths;
    o.verdict_entries = 4'000'000;  // a day keeps many classes waiting at once (docs/benchmarks.md)
    o.preemption.resource_fast_path = options_.fast_paths;
    o.preemption.room_bound = options_.fast_paths;
    o.on_evicted = [this](const model::Pod& victim, const std::string& preemptor, std::string_view kind) {
      OnEvicted(victim, preemptor, kind);
    };
    o.on_terminated = [this](const model::Pod& pod) { OnTerminated(pod); };
    return o;
  }

  Timestamp ArrivalTime(const Arrival& a) const { return kStart + a.time_ms * kMillisecond; }

  Status Setup() {
    ARBITER_RETURN_IF_ERROR(sim_.Init());
    ReserveNames();
    for (const auto& [ns, origin] : cluster_.namespaces) sim_.SetNamespace(ns);
    for (const auto& [pdb, origin] : cluster_.pdbs) sim_.AddPdb(pdb);
    for (const auto& [node, origin] : cluster_.nodes) {
      ARBITER_RETURN_IF_ERROR(sim_.AddNode(node));
      ledger_.AddAllocatable(node.allocatable.milli_cpu);
      node_index_.emplace(node.name, static_cast<uint32_t>(nodes_.size()));
      nodes_.push_back(node);
    }
    on_node_.resize(nodes_.size());
    lost_on_node_.resize(nodes_.size());
    if (options_.node_failures_per_day > 0) {
      for (uint32_t n = 0; n < nodes_.size(); ++n) ScheduleFailure(n, kStart);
    }
    // Bands: the cluster's classes, highest first (then by name), and pods without one.
    std::vector<std::pair<int32_t, std::string>> classes;
    for (const auto& [pc, origin] : cluster_.priority_classes) classes.emplace_back(pc.value, pc.name);
    std::sort(classes.begin(), classes.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (const auto& [value, name] : classes) AddBand(name, value);
    return Status::Ok();
  }

  uint32_t AddBand(const std::string& name, int32_t priority) { return ledger_.AddBand(name, priority); }

  // ---- Making pods, by the controllers' rules ----------------------------------------------

  Json PodTemplate(const Arrival& a, bool restart_always) const {
    Json requests = {{"cpu", model::Quantity::FromMilli(a.milli_cpu).ToString()}};
    if (a.memory_bytes > 0) {
      requests["memory"] = model::Quantity::FromValue(a.memory_bytes, model::Quantity::Format::kBinarySI).ToString();
    }
    Json spec = {{"restartPolicy", restart_always ? "Always" : "Never"},
                 {"containers", Json::array({{{"name", "main"},
                                              {"image", "registry.k8s.io/pause:3.10"},
                                              {"resources", {{"requests", requests}}}}})}};
    if (!a.priority_class.empty()) spec["priorityClassName"] = a.priority_class;
    if (a.kind == ArrivalKind::kGang) spec["schedulingGroup"] = {{"podGroupName", a.name}};
    return {{"metadata", {{"labels", {{"app", a.name}}}}}, {"spec", spec}};
  }

  // The pod the workload's controller makes (a Job's, a ReplicaSet's), or the bare pod.
  Json MadePod(const Arrival& a, const std::string& owner_uid) const {
    const Json metadata = {{"name", a.name}, {"namespace", a.ns}, {"uid", owner_uid}};
    switch (a.kind) {
      case ArrivalKind::kPod: {
        Json pod = PodTemplate(a, false);
        pod["apiVersion"] = "v1";
        pod["kind"] = "Pod";
        pod["metadata"]["name"] = a.name;
        pod["metadata"]["namespace"] = a.ns;
        return pod;
      }
      case ArrivalKind::kDeployment: {
        const Json deployment = {{"apiVersion", controllers::kDeploymentApiVersion},
                                 {"kind", controllers::kDeploymentKind},
                                 {"metadata", metadata},
                                 {"spec",
                                  {{"replicas", a.count},
                                   {"selector", {{"matchLabels", {{"app", a.name}}}}},
                                   {"template", PodTemplate(a, true)}}}};
        Json rs = controllers::NewReplicaSetOf(deployment, a.count);
        rs["metadata"]["uid"] = owner_uid + "-rs";
        const std::string rs_name = rs["metadata"].value("name", a.name);
        return controllers::PodFromTemplate(rs["spec"]["template"], rs, controllers::kReplicaSetApiVersion,
                                            controllers::kReplicaSetKind, rs_name + "-");
      }
      case ArrivalKind::kJob:
      case ArrivalKind::kGang: {
        // Disruptions are not failures: preemption never uses up the Job's backoffLimit.
        const Json policy = {{"rules", Json::array({{{"action", "Ignore"},
                                                     {"onPodConditions", Json::array({{{"type", "DisruptionTarget"}}})}}})}};
        const Json job = {{"apiVersion", controllers::kJobApiVersion},
                          {"kind", controllers::kJobKind},
                          {"metadata", metadata},
                          {"spec",
                           {{"parallelism", a.count},
                            {"completions", a.count},
                            {"podFailurePolicy", policy},
                            {"template", PodTemplate(a, false)}}}};
        return controllers::JobPod(job, std::nullopt);
      }
    }
    return Json::object();
  }

  Status Arrive(const Arrival& a) {
    const uint32_t w = static_cast<uint32_t>(workloads_.size());
    SimWorkload work;
    work.arrival = &a;
    const std::string where = "workload arrival " + a.ns + "/" + a.name;
    Json pod = MadePod(a, "workload-" + std::to_string(w));
    work.generate_name = pod["metadata"].value("generateName", "");
    if (pod["metadata"].contains("generateName")) pod["metadata"]["name"] = work.generate_name + "prototype";
    manifest::LoadResult decoded = manifest::DecodeJson(where, pod);
    if (!decoded.ok() || decoded.objects.pods.size() != 1) {
      return InvalidArgument(where + ": its pod does not decode: " +
                             (decoded.errors.empty() ? std::string("no pod") : decoded.errors.front()));
    }
    // Admission, as `plan` admits its input: the pod's priority from the cluster's classes, and
    // the gang's PodGroup with the same class.
    manifest::ClusterObjects admit;
    admit.priority_classes = cluster_.priority_classes;
    admit.pods.push_back(std::move(decoded.objects.pods.front()));
    if (a.kind == ArrivalKind::kGang) {
      model::PodGroup g;
      g.ns = a.ns;
      g.name = a.name;
      g.policy = model::GroupPolicy::kGang;
      g.min_count = a.count;
      g.priority.priority_class_name = a.priority_class;
      manifest::Origin origin;
      origin.file = where;
      origin.kind = "PodGroup";
      origin.object = a.ns + "/" + a.name;
      admit.pod_groups.push_back({g, origin});
    }
    std::vector<std::string> errors = admission::AdmitPriorities(admit);
    if (!errors.empty()) return InvalidArgument(errors.front());  // it names the arrival (its origin)
    if (a.kind == ArrivalKind::kGang) sim_.AddPodGroup(admit.pod_groups.front().object);
    work.prototype = std::move(admit.pods.front().object);
    const std::string band = work.prototype.priority_class_name.empty() ? kNoClassBand : work.prototype.priority_class_name;
    band_of_workload_.push_back(AddBand(band, work.prototype.priority));
    workloads_.push_back(std::move(work));
    if (a.kind == ArrivalKind::kDeployment) {
      events_.push({AddSecondsCapped(sim_.clock().Now(), a.run_seconds), seq_++, EventKind::kDeploymentEnd, w});
    }
    if (a.kind == ArrivalKind::kGang) by_group_.emplace(a.ns + "/" + a.name, w);
    for (int32_t i = 0; i < a.count; ++i) MakePod(w, 0);
    return Status::Ok();
  }

  void MakePod(uint32_t w, int32_t cascade) {
    SimWorkload& work = workloads_[w];
    model::Pod pod = work.prototype;
    if (!work.generate_name.empty()) {
      std::string name;
      do {
        name = work.generate_name + manifest::GeneratedNameSuffix(rng_);
      } while (by_key_.contains(pod.ns + "/" + name) || reserved_.contains(pod.ns + "/" + name));
      pod.name = std::move(name);
    }
    const uint32_t idx = ledger_.Made(w, band_of_workload_[w], cascade, pod.requests.milli_cpu, sim_.clock().Now());
    pod.uid = kUidPrefix + std::to_string(idx);
    pod.creation_timestamp = sim_.clock().Now();
    work.pods.push_back(idx);
    work.cascade = std::max(work.cascade, cascade);
    by_key_.emplace(pod.Key(), idx);
    sim_.AddPendingPod(std::move(pod), sim_.clock().Now());
  }

  // The names of bare Pod arrivals, so that no generated name takes one before it arrives.
  void ReserveNames() {
    for (const Arrival& a : arrivals_) {
      if (a.kind == ArrivalKind::kPod) reserved_.insert(a.ns + "/" + a.name);
    }
  }

  static std::optional<uint32_t> IndexOf(const std::string& uid) {
    if (uid.rfind(kUidPrefix, 0) != 0) return std::nullopt;
    uint32_t idx = 0;
    const char* begin = uid.data() + std::char_traits<char>::length(kUidPrefix);
    auto [ptr, ec] = std::from_chars(begin, uid.data() + uid.size(), idx);
    if (ec != std::errc() || ptr != uid.data() + uid.size()) return std::nullopt;
    return idx;
  }

  // ---- What the scheduler did --------------------------------------------------------------

  void OnOutcome(const sched::CycleOutcome& out) {
    if (!out.group.empty()) {
      for (const auto& m : out.members) {
        if (m.scheduled && m.pod) OnBound(m.pod->uid(), m.node);
      }
      return;
    }
    if (out.scheduled && out.pod) OnBound(out.pod->uid(), out.node);
  }

  void OnBound(const std::string& uid, const std::string& node) {
    auto idx = IndexOf(uid);
    if (!idx || *idx >= ledger_.pods() || ledger_.pod(*idx).state != PodState::kPending) return;
    SimPod& p = ledger_.pod(*idx);
    const Timestamp now = sim_.clock().Now();
    ledger_.Bound(*idx, now);
    if (auto it = node_index_.find(node); it != node_index_.end()) {
      p.node = it->second;
      on_node_[it->second].push_back(*idx);
    }
    const Arrival& a = *workloads_[p.workload].arrival;
    if (a.kind != ArrivalKind::kDeployment) {
      events_.push({AddSecondsCapped(now, a.run_seconds), seq_++, EventKind::kCompletion, *idx});
    }
  }

  void OnEvicted(const model::Pod& victim, const std::string& preemptor, std::string_view kind) {
    auto idx = IndexOf(victim.uid);
    if (!idx || *idx >= ledger_.pods()) return;
    SimPod& v = ledger_.pod(*idx);
    if (v.state != PodState::kRunning) return;
    const Timestamp now = sim_.clock().Now();
    // The preemptor: a pod, or a group preempting as one.
    int32_t depth = 1;
    std::optional<uint32_t> band;
    if (kind == "Pod") {
      if (auto it = by_key_.find(preemptor); it != by_key_.end()) {
        depth = ledger_.pod(it->second).cascade + 1;
        band = ledger_.pod(it->second).band;
      }
    } else if (auto it = by_group_.find(preemptor); it != by_group_.end()) {
      depth = workloads_[it->second].cascade + 1;
      band = band_of_workload_[it->second];
    }
    ledger_.Preempted(*idx, band, depth, now);
    // A ReplicaSet replaces a terminating pod at once (it counts only active pods). A Job with a
    // podFailurePolicy replaces it once it has terminated (podReplacementPolicy Failed, the only
    // one the API allows with that policy): OnTerminated.
    if (workloads_[v.workload].arrival->kind == ArrivalKind::kDeployment) to_replace_.emplace_back(*idx, depth);
  }

  void OnTerminated(const model::Pod& pod) {
    auto idx = IndexOf(pod.uid);
    if (!idx || *idx >= ledger_.pods()) return;
    SimPod& p = ledger_.pod(*idx);
    if (p.state == PodState::kLost && p.node != kGone) {
      // A pod its node's failure stopped, evicted by a preemption before the taint manager's
      // eviction: it leaves now, and the taint manager finds it gone.
      ledger_.Left(*idx, sim_.clock().Now());
      p.node = kGone;
      to_replace_.emplace_back(*idx, p.cascade);
      return;
    }
    if (p.state != PodState::kTerminating) return;
    ledger_.Terminated(*idx, sim_.clock().Now());
    if (workloads_[p.workload].arrival->kind != ArrivalKind::kDeployment) to_replace_.emplace_back(*idx, p.evicted_depth);
  }

  // The controllers' replacements for this step's victims (made after the cycle that evicted
  // them, as the controllers see the terminating pods through their informers).
  Status Replace() {
    for (const auto& [idx, depth] : to_replace_) {
      const uint32_t w = ledger_.pod(idx).workload;
      if (workloads_[w].ended || workloads_[w].arrival->kind == ArrivalKind::kPod) continue;
      MakePod(w, depth);
    }
    to_replace_.clear();
    return Status::Ok();
  }

  // The next failure of node `n` after `after`: exponential gaps at the configured rate.
  void ScheduleFailure(uint32_t n, Timestamp after) {
    events_.push({NextNodeFailure(failure_rng_, after, options_.node_failures_per_day), seq_++, EventKind::kNodeFail, n});
  }

  Status SetUnreachable(uint32_t n, bool unreachable) {
    model::Node& node = nodes_[n];
    std::erase_if(node.taints, [](const model::Taint& t) { return t.key == kUnreachableTaint; });
    if (unreachable) {
      node.taints.push_back({kUnreachableTaint, "", model::TaintEffect::kNoSchedule});
      node.taints.push_back({kUnreachableTaint, "", model::TaintEffect::kNoExecute});
    }
    return sim_.UpdateNode(node);
  }

  Status NodeEvent(const Event& e) {
    const uint32_t n = e.id;
    const Timestamp now = sim_.clock().Now();
    if (e.kind == EventKind::kNodeFail) {
      ++node_failures_;
      ARBITER_RETURN_IF_ERROR(SetUnreachable(n, true));
      // The pods running there stop now; their work is lost.
      for (uint32_t idx : on_node_[n]) {
        SimPod& p = ledger_.pod(idx);
        if (p.state != PodState::kRunning || p.node != n) continue;
        ledger_.NodeLost(idx);
        lost_on_node_[n].push_back(idx);
      }
      on_node_[n].clear();
      events_.push({AddSecondsCapped(now, kUnreachableTolerationSeconds), seq_++, EventKind::kNodeEvict, n});
      // Repaired no earlier than the eviction: the node stays tainted while its lost pods are bound.
      events_.push({AddSecondsCapped(now, std::max(options_.node_repair_seconds, kUnreachableTolerationSeconds)), seq_++,
                    EventKind::kNodeRepair, n});
      return Status::Ok();
    }
    if (e.kind == EventKind::kNodeEvict) {
      // The taint manager evicts them; their controllers replace them.
      for (uint32_t idx : lost_on_node_[n]) {
        SimPod& p = ledger_.pod(idx);
        if (p.node == kGone) continue;  // already left (OnTerminated)
        ARBITER_RETURN_IF_ERROR(sim_.RemoveBoundPod(kUidPrefix + std::to_string(idx)));
        ledger_.Left(idx, now);
        p.node = kGone;
        to_replace_.emplace_back(idx, p.cascade);
      }
      lost_on_node_[n].clear();
      return Replace();
    }
    ARBITER_RETURN_IF_ERROR(SetUnreachable(n, false));
    ScheduleFailure(n, now);
    return Status::Ok();
  }

  Status Handle(const Event& e) {
    if (e.kind == EventKind::kNodeFail || e.kind == EventKind::kNodeEvict || e.kind == EventKind::kNodeRepair) {
      return NodeEvent(e);
    }
    if (e.kind == EventKind::kCompletion) {
      SimPod& p = ledger_.pod(e.id);
      if (p.state != PodState::kRunning) return Status::Ok();  // preempted before it finished
      ARBITER_RETURN_IF_ERROR(Complete(e.id));
      return Status::Ok();
    }
    SimWorkload& work = workloads_[e.id];
    work.ended = true;
    for (uint32_t idx : work.pods) {
      SimPod& p = ledger_.pod(idx);
      if (p.state == PodState::kRunning) {
        ARBITER_RETURN_IF_ERROR(Complete(idx));
      } else if (p.state == PodState::kPending) {
        sim_.RemovePendingPod(kUidPrefix + std::to_string(idx));
        ledger_.Withdrawn(idx);
      }
    }
    return Status::Ok();
  }

  Status Complete(uint32_t idx) {
    ARBITER_RETURN_IF_ERROR(sim_.RemoveBoundPod(kUidPrefix + std::to_string(idx)));
    ledger_.Completed(idx, sim_.clock().Now());
    return Status::Ok();
  }

  // ---- Utilisation and progress ------------------------------------------------------------

  void Account() { ledger_.Account(sim_.clock().Now()); }

  void Tick() {
    if (!options_.progress || ++ticks_ % 2000 != 0) return;
    options_.progress({(sim_.clock().Now() - kStart) / kSecond, options_.duration_seconds,
                       static_cast<int64_t>(ledger_.pods()), ledger_.pending()});
  }

  StatusOr<Report> Finish(const std::string& config_name) {
    return ledger_.Finish(config_name, static_cast<int64_t>(cluster_.nodes.size()),
                          static_cast<int64_t>(workloads_.size()), cycles_, node_failures_);
  }

  const manifest::ClusterObjects& cluster_;
  const std::vector<Arrival>& arrivals_;
  SimulateOptions options_;
  Ledger ledger_{kStart, options_};
  Rng rng_;
  sim::ClusterSimulation sim_;
  std::vector<model::Node> nodes_;
  std::unordered_map<std::string, uint32_t> node_index_;  // lookup only
  std::vector<std::vector<uint32_t>> on_node_;       // pods bound there since its last failure
  std::vector<std::vector<uint32_t>> lost_on_node_;  // pods its last failure stopped, until evicted
  Rng failure_rng_{options_.seed ^ 0xfa11u};
  int64_t node_failures_ = 0;
  std::vector<SimWorkload> workloads_;
  std::vector<uint32_t> band_of_workload_;
  // Lookups only (never iterated): pods by namespace/name, gangs by their group.
  std::unordered_map<std::string, uint32_t> by_key_;
  std::unordered_map<std::string, uint32_t> by_group_;
  std::unordered_set<std::string> reserved_;  // lookup only
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  uint64_t seq_ = 0;
  std::vector<std::pair<uint32_t, int32_t>> to_replace_;  // victim, depth of its preemption
  int64_t cycles_ = 0;
  uint64_t ticks_ = 0;
};

}  // namespace

Status CheckSimulation(const manifest::ClusterObjects& cluster, const std::vector<Arrival>& arrivals,
                       const SimulateOptions& options) {
  if (options.duration_seconds <= 0) return InvalidArgument("the duration must be positive");
  if (cluster.nodes.empty()) return InvalidArgument("the cluster has no nodes");
  // Every class an arrival names exists, before a day is spent on the arrivals before it.
  std::set<std::string> classes;
  for (const auto& [pc, origin] : cluster.priority_classes) classes.insert(pc.name);
  for (const Arrival& a : arrivals) {
    if (!a.priority_class.empty() && !classes.contains(a.priority_class)) {
      return InvalidArgument("workload arrival " + a.ns + "/" + a.name + ": priorityClass \"" + a.priority_class +
                             "\": the cluster has no PriorityClass of that name");
    }
  }
  return Status::Ok();
}

StatusOr<Report> Simulate(const manifest::ClusterObjects& cluster, const std::string& config_name,
                          const std::vector<Arrival>& arrivals, const SimulateOptions& options) {
  ARBITER_RETURN_IF_ERROR(CheckSimulation(cluster, arrivals, options));
  Day day(cluster, arrivals, options);
  return day.Run(config_name);
}

}  // namespace arbiter::simulate
