// `arbiter simulate --nomad`'s engine: Nomad's eval broker, blocked evaluations, generic scheduler
// and preemption on a virtual clock, keeping the same books as the Kubernetes engine.
#include "arbiter/simulate/nomad_day.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <queue>
#include <set>
#include <unordered_map>

#include "arbiter/base/rng.h"
#include "arbiter/model/best_fit_victims.h"
#include "arbiter/nomad/planner.h"
#include "arbiter/simulate/ledger.h"

namespace arbiter::simulate {

std::map<std::string, int32_t> NomadPriorities(const std::vector<std::pair<std::string, int32_t>>& classes) {
  std::vector<std::pair<int32_t, std::string>> sorted;
  for (const auto& [name, value] : classes) sorted.emplace_back(value, name);
  std::sort(sorted.begin(), sorted.end());
  std::map<std::string, int32_t> out;
  const size_t m = sorted.size();
  for (size_t i = 0; i < m; ++i) {
    out[sorted[i].second] =
        m == 1 ? 50 : 10 + static_cast<int32_t>(std::lround(80.0 * static_cast<double>(i) / static_cast<double>(m - 1)));
  }
  return out;
}

namespace {

constexpr int32_t kNomadDefaultPriority = 50;
constexpr const char* kAllocPrefix = "sim-";
constexpr const char* kTaskGroup = "main";
constexpr int64_t kMiB = 1 << 20;

// A necessary condition for a placement, kept per eligible node: the room a job of priority P
// could have there, its capacity less every allocation the delta rule protects (priority above
// P - delta), for each threshold P - delta of the day's priorities, and with nothing evictable
// (pass one). If no node has the room in CPU or in memory, Nomad's scheduler cannot place the
// allocation: its answer is known without running it. The rule itself stays in the planner.
class RoomIndex {
 public:
  // `thresholds`: the day's P - delta values. Index 0 is pass one (nothing evictable).
  void Init(std::vector<int32_t> thresholds, size_t nodes) {
    std::sort(thresholds.begin(), thresholds.end());
    thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
    thresholds_ = {INT32_MAX};
    thresholds_.insert(thresholds_.end(), thresholds.begin(), thresholds.end());
    room_.assign(nodes, std::vector<nomad::Resources>(thresholds_.size()));
    eligible_.assign(nodes, false);
    cpu_.assign(thresholds_.size(), {});
    memory_.assign(thresholds_.size(), {});
  }
  size_t levels() const { return thresholds_.size(); }
  // The level of a threshold of Init's, or levels() if it was not one.
  size_t LevelOf(int32_t threshold) const {
    auto it = std::lower_bound(thresholds_.begin() + 1, thresholds_.end(), threshold);
    return it != thresholds_.end() && *it == threshold ? static_cast<size_t>(it - thresholds_.begin()) : levels();
  }
  void SetCapacity(size_t n, const nomad::Resources& capacity) {
    for (auto& r : room_[n]) r = capacity;
  }
  void SetEligible(size_t n, bool eligible) {
    if (eligible_[n] == eligible) return;
    if (eligible_[n]) Unlist(n);
    eligible_[n] = eligible;
    if (eligible_[n]) List(n);
  }
  // An allocation of `priority` placed on (sign 1) or gone from (sign -1) node `n`.
  void Change(size_t n, int32_t priority, const nomad::Resources& r, int sign) {
    if (eligible_[n]) Unlist(n);
    for (size_t k = 0; k < thresholds_.size(); ++k) {
      if (k != 0 && priority <= thresholds_[k]) continue;  // evictable at this level
      room_[n][k].cpu -= sign * r.cpu;
      room_[n][k].memory -= sign * r.memory;
    }
    if (eligible_[n]) List(n);
  }
  bool MayFit(size_t level, const nomad::Resources& ask) const {
    return !cpu_[level].empty() && *cpu_[level].rbegin() >= ask.cpu && *memory_[level].rbegin() >= ask.memory;
  }

 private:
  void List(size_t n) {
    for (size_t k = 0; k < thresholds_.size(); ++k) {
      cpu_[k].insert(room_[n][k].cpu);
      memory_[k].insert(room_[n][k].memory);
    }
  }
  void Unlist(size_t n) {
    for (size_t k = 0; k < thresholds_.size(); ++k) {
      cpu_[k].erase(cpu_[k].find(room_[n][k].cpu));
      memory_[k].erase(memory_[k].find(room_[n][k].memory));
    }
  }
  std::vector<int32_t> thresholds_;
  std::vector<std::vector<nomad::Resources>> room_;
  std::vector<bool> eligible_;
  std::vector<std::multiset<int64_t>> cpu_, memory_;
};

enum class EvalState : uint8_t { kNone, kReady, kBlocked };

struct NomadWork {
  const Arrival* arrival = nullptr;
  nomad::Job job;
  uint32_t band = 0;
  std::string key;               // namespace/job, as ClusterView::by_job keys it
  std::deque<uint32_t> waiting;  // allocations (ledger pods) to place, oldest first
  int64_t live = 0;              // placed and not stopped
  bool ended = false;
  EvalState eval = EvalState::kNone;
  uint64_t eval_seq = 0;         // the pending evaluation's place in the broker (older first)
  Timestamp evaluated_at = -1;
  uint32_t evaluations_then = 0;  // evaluations at `evaluated_at`, for the seed
  // Where the node change log stood when the job last failed to place an allocation (SIZE_MAX:
  // it has not failed since it last placed everything).
  size_t failed_at = SIZE_MAX;
};

enum class NomadEventKind : uint8_t { kCompletion, kServiceEnd, kUnblock, kNodeFail, kNodeRepair };

using NomadEvent = ClockEvent<NomadEventKind>;

uint64_t Mix(uint64_t a, uint64_t b) {
  Rng r(a ^ (b * 0x9e3779b97f4a7c15ULL));
  return r.Next();
}

class NomadDay {
 public:
  NomadDay(const manifest::ClusterObjects& cluster, const std::vector<Arrival>& arrivals, const SimulateOptions& options,
           const NomadSimulateOptions& nomad)
      : cluster_(cluster), arrivals_(arrivals), options_(options), nomad_(nomad) {}

  StatusOr<Report> Run(const std::string& config_name) {
    Setup();
    const Timestamp end = kSimulationStart + options_.duration_seconds * kSecond;
    size_t next_arrival = 0;
    for (;;) {
      Drain();
      Timestamp next = end;
      if (next_arrival < arrivals_.size()) next = std::min(next, ArrivalTime(arrivals_[next_arrival]));
      if (!events_.empty()) next = std::min(next, events_.top().at);
      if (next >= end) break;
      ledger_.Account(now_);
      now_ = next;
      while (next_arrival < arrivals_.size() && ArrivalTime(arrivals_[next_arrival]) <= now_) {
        Arrive(arrivals_[next_arrival++]);
      }
      while (!events_.empty() && events_.top().at <= now_) {
        const NomadEvent e = events_.top();
        events_.pop();
        Handle(e);
      }
    }
    now_ = end;
    ledger_.Account(now_);
    return ledger_.Finish(config_name, static_cast<int64_t>(nodes_.size()), static_cast<int64_t>(works_.size()),
                          evaluations_, node_failures_);
  }

 private:
  Timestamp ArrivalTime(const Arrival& a) const { return kSimulationStart + a.time_ms * kMillisecond; }

  void Setup() {
    // Nodes: 1 CPU = 1000 MHz; memory and ephemeral storage in MiB.
    nodes_.reserve(cluster_.nodes.size());
    for (const auto& [node, origin] : cluster_.nodes) {
      nomad::Node n;
      n.id = node.name;
      n.name = node.name;
      n.eligible = !node.unschedulable;
      n.capacity.cpu = node.allocatable.milli_cpu;
      n.capacity.memory = node.allocatable.memory / kMiB;
      n.capacity.disk = node.allocatable.ephemeral_storage / kMiB;
      node_index_.emplace(n.id, static_cast<uint32_t>(nodes_.size()));
      nodes_.push_back(std::move(n));
      ledger_.AddAllocatable(node.allocatable.milli_cpu);
    }
    view_.preemption = nomad_.preemption;
    for (const nomad::Node& n : nodes_) view_.nodes.push_back(&n);
    view_.on_node.resize(nodes_.size());
    seen_.assign(nodes_.size(), 0);
    // Bands and their Nomad priorities.
    std::vector<std::pair<std::string, int32_t>> classes;
    std::vector<std::pair<int32_t, std::string>> order;
    for (const auto& [pc, origin] : cluster_.priority_classes) {
      classes.emplace_back(pc.name, pc.value);
      order.emplace_back(pc.value, pc.name);
      if (pc.global_default) default_class_ = pc.name;
    }
    priorities_ = NomadPriorities(classes);
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (const auto& [value, name] : order) ledger_.AddBand(name, value);
    // The room index's thresholds: P - delta for every priority a job can have.
    std::vector<int32_t> thresholds{kNomadDefaultPriority - nomad_.priority_delta};
    for (const auto& [name, p] : priorities_) thresholds.push_back(p - nomad_.priority_delta);
    rooms_.Init(thresholds, nodes_.size());
    for (uint32_t n = 0; n < nodes_.size(); ++n) {
      rooms_.SetCapacity(n, nodes_[n].capacity);
      rooms_.SetEligible(n, nodes_[n].eligible);
      if (options_.node_failures_per_day > 0) ScheduleFailure(n, kSimulationStart);
    }
    now_ = kSimulationStart;
  }

  // ---- Jobs and their evaluations ------------------------------------------------------------

  void Arrive(const Arrival& a) {
    const uint32_t w = static_cast<uint32_t>(works_.size());
    NomadWork work;
    work.arrival = &a;
    const std::string cls = a.priority_class.empty() ? default_class_ : a.priority_class;
    work.job.id = a.name;
    work.job.name = a.name;
    work.job.ns = a.ns;
    work.job.type = a.kind == ArrivalKind::kDeployment ? "service" : "batch";
    work.job.priority = cls.empty() ? kNomadDefaultPriority : priorities_.at(cls);
    nomad::TaskGroup tg;
    tg.name = kTaskGroup;
    nomad::Task task;
    task.name = kTaskGroup;
    task.cpu = a.milli_cpu;
    task.memory = (a.memory_bytes + kMiB - 1) / kMiB;
    tg.tasks.push_back(std::move(task));
    work.job.groups.push_back(std::move(tg));
    work.key = a.ns + "/" + a.name;
    // Every class is a band from Setup (CheckSimulation made sure the class exists).
    work.band = ledger_.AddBand(cls.empty() ? kNoClassBand : cls, 0);
    works_.push_back(std::move(work));
    for (int32_t i = 0; i < a.count; ++i) Want(w, 0);
    if (a.kind == ArrivalKind::kDeployment) Push(AddSecondsCapped(now_, a.run_seconds), NomadEventKind::kServiceEnd, w);
    Enqueue(w);
  }

  // One more allocation for job `w` to place.
  void Want(uint32_t w, int32_t cascade) {
    NomadWork& work = works_[w];
    const uint32_t pod = ledger_.Made(w, work.band, cascade, work.arrival->milli_cpu, now_);
    work.waiting.push_back(pod);
    if (alloc_of_.size() <= pod) alloc_of_.resize(pod + 1, nullptr);
  }

  // An evaluation for job `w` (one per job at a time: a blocked one is made ready).
  void Enqueue(uint32_t w) {
    NomadWork& work = works_[w];
    if (work.ended || work.eval == EvalState::kReady) return;
    if (work.eval == EvalState::kBlocked) {
      blocked_.erase({-work.job.priority, work.eval_seq, w});
    } else {
      work.eval_seq = eval_seq_++;
    }
    work.eval = EvalState::kReady;
    ready_.insert({-work.job.priority, work.eval_seq, w});
  }

  void Unblock() {
    for (const auto& key : blocked_) {
      works_[std::get<2>(key)].eval = EvalState::kReady;
      ready_.insert(key);
    }
    blocked_.clear();
  }

  // The eval broker: highest priority first, oldest first within a priority.
  void Drain() {
    while (!ready_.empty()) {
      const auto key = *ready_.begin();
      ready_.erase(ready_.begin());
      const uint32_t w = std::get<2>(key);
      works_[w].eval = EvalState::kNone;
      Evaluate(w);
      if (!works_[w].ended && !works_[w].waiting.empty()) {
        works_[w].eval = EvalState::kBlocked;
        blocked_.insert(key);
      }
    }
  }

  void Evaluate(uint32_t w) {
    NomadWork& work = works_[w];
    if (work.ended || work.waiting.empty()) return;
    ++evaluations_;
    Tick();
    // The seed depends on the job, the time and how many evaluations it had then, and on nothing
    // skipped elsewhere: the answers known without running the scheduler change no other.
    if (work.evaluated_at != now_) work.evaluated_at = now_, work.evaluations_then = 0;
    const uint64_t seed = Mix(Mix(Mix(options_.seed, w), static_cast<uint64_t>(now_)), work.evaluations_then++);
    if (options_.fast_paths && (!MayPlace(work) || !AChangedNodeMayTake(work))) {
      work.failed_at = changes_.size();
      return;
    }
    work.job.groups[0].count = work.live + static_cast<int64_t>(work.waiting.size());
    nomad::PlannerOptions o;
    o.seed = seed;
    o.priority_delta = nomad_.priority_delta;
    o.plan_applier = true;  // a real submission: the plan applier refuses a node that overflows
    const nomad::NomadPlan plan = nomad::PlanJob(view_, work.job, o);
    for (const nomad::Placement& p : plan.placements) {
      const uint32_t pod = work.waiting.front();
      work.waiting.pop_front();
      for (const std::string& victim : p.preempted) Evict(IndexOf(victim), pod);
      Place(w, pod, p, !p.preempted.empty());
    }
    work.failed_at = work.waiting.empty() ? SIZE_MAX : changes_.size();
  }

  // Whether a node changed since the job last failed might take one of its allocations. Nomad's
  // scheduler judges each node by its own allocations, the job and its ask: on a node unchanged
  // since a failure, the same allocation fails again, so only changed nodes can make a difference.
  bool AChangedNodeMayTake(const NomadWork& work) {
    if (work.failed_at == SIZE_MAX) return true;
    ++stamp_;
    for (size_t i = work.failed_at; i < changes_.size(); ++i) {
      const uint32_t n = changes_[i];
      if (seen_[n] == stamp_) continue;
      seen_[n] = stamp_;
      if (NodeMayTake(n, work)) return true;
    }
    return false;
  }

  // A necessary condition for an allocation of the job on node `n`: it fits in what is free, or
  // (with the job type's preemption on) in what is free and what the delta rule lets it evict.
  bool NodeMayTake(uint32_t n, const NomadWork& work) const {
    const nomad::Node& node = nodes_[n];
    if (!node.eligible) return false;
    const bool may_preempt = view_.preemption.For(work.job.type);
    nomad::Resources free = node.capacity, evictable;
    for (const nomad::Alloc* a : view_.on_node[n]) {
      free -= a->resources;
      if (may_preempt && model::PriorityDeltaAllows(work.job.priority, a->job_priority, nomad_.priority_delta) &&
          !(a->job_id == work.job.id && a->ns == work.job.ns)) {
        evictable += a->resources;
      }
    }
    const nomad::Resources ask = work.job.groups[0].Ask();
    if (free.Covers(ask)) return true;
    free += evictable;
    return may_preempt && free.Covers(ask);
  }

  // Whether Nomad's scheduler might place one allocation of the job now (RoomIndex).
  bool MayPlace(const NomadWork& work) const {
    const nomad::Resources ask = work.job.groups[0].Ask();
    if (rooms_.MayFit(0, ask)) return true;
    if (!view_.preemption.For(work.job.type)) return false;
    const size_t level = rooms_.LevelOf(work.job.priority - nomad_.priority_delta);
    return level >= rooms_.levels() || rooms_.MayFit(level, ask);
  }

  static uint32_t IndexOf(const std::string& id) {
    uint32_t idx = 0;
    const char* begin = id.data() + std::char_traits<char>::length(kAllocPrefix);
    std::from_chars(begin, id.data() + id.size(), idx);
    return idx;
  }

  void Place(uint32_t w, uint32_t pod, const nomad::Placement& p, bool preempted) {
    NomadWork& work = works_[w];
    nomad::Alloc& a = allocs_.emplace_back();
    a.id = kAllocPrefix + std::to_string(pod);
    a.name = work.job.id + "." + kTaskGroup + "[" + std::to_string(p.index) + "]";
    a.ns = work.job.ns;
    a.job_id = work.job.id;
    a.job_type = work.job.type;
    a.job_priority = work.job.priority;
    a.task_group = kTaskGroup;
    a.node_id = p.node_id;
    a.resources = work.job.groups[0].Ask();
    const uint32_t n = node_index_.at(p.node_id);
    alloc_of_[pod] = &a;
    view_.on_node[n].push_back(&a);
    view_.by_job[work.key].push_back(&a);
    rooms_.Change(n, a.job_priority, a.resources, 1);
    changes_.push_back(n);
    ++work.live;
    ledger_.Bound(pod, now_);
    ledger_.pod(pod).node = n;
    if (work.arrival->kind != ArrivalKind::kDeployment) {
      // The client starts it once the victims' tasks are killed.
      const int64_t wait = preempted ? kNomadKillTimeoutSeconds : 0;
      Push(AddSecondsCapped(now_, wait + work.arrival->run_seconds), NomadEventKind::kCompletion, pod);
    }
  }

  // Takes allocation `pod` out of the cluster's state (it stopped, was evicted or was lost).
  void Remove(uint32_t pod, const char* desired, const char* client) {
    nomad::Alloc* a = alloc_of_[pod];
    const uint32_t n = ledger_.pod(pod).node;
    auto& on = view_.on_node[n];
    on.erase(std::find(on.begin(), on.end(), a));
    NomadWork& work = works_[ledger_.pod(pod).workload];
    auto& own = view_.by_job[work.key];
    own.erase(std::find(own.begin(), own.end(), a));
    rooms_.Change(n, a->job_priority, a->resources, -1);
    changes_.push_back(n);
    a->desired_status = desired;
    a->client_status = client;
    --work.live;
  }

  void Evict(uint32_t victim, uint32_t preemptor) {
    const SimPod& by = ledger_.pod(preemptor);
    const int32_t depth = by.cascade + 1;
    ledger_.Preempted(victim, by.band, depth, now_);
    ledger_.Terminated(victim, now_);
    Remove(victim, "evict", "running");
    // The victim's job gets an evaluation that places a replacement at once.
    const uint32_t w = ledger_.pod(victim).workload;
    if (!works_[w].ended) {
      Want(w, depth);
      Enqueue(w);
    }
    // Its client reports it stopped once its tasks are killed: blocked evaluations wake then.
    Push(AddSecondsCapped(now_, kNomadKillTimeoutSeconds), NomadEventKind::kUnblock, 0);
  }

  // ---- The clock's events ----------------------------------------------------------------------

  void Push(Timestamp at, NomadEventKind kind, uint32_t id) { events_.push({at, event_seq_++, kind, id}); }

  void Handle(const NomadEvent& e) {
    switch (e.kind) {
      case NomadEventKind::kCompletion: {
        if (ledger_.pod(e.id).state != PodState::kRunning) return;  // evicted or lost first
        Remove(e.id, "run", "complete");
        ledger_.Completed(e.id, now_);
        Unblock();
        return;
      }
      case NomadEventKind::kServiceEnd: {
        NomadWork& work = works_[e.id];
        work.ended = true;
        if (work.eval == EvalState::kReady) ready_.erase({-work.job.priority, work.eval_seq, e.id});
        if (work.eval == EvalState::kBlocked) blocked_.erase({-work.job.priority, work.eval_seq, e.id});
        work.eval = EvalState::kNone;
        for (uint32_t pod : work.waiting) ledger_.Withdrawn(pod);
        work.waiting.clear();
        std::vector<const nomad::Alloc*> running = view_.by_job[work.key];
        for (const nomad::Alloc* a : running) {
          const uint32_t pod = IndexOf(a->id);
          Remove(pod, "stop", "complete");
          ledger_.Completed(pod, now_);
        }
        Unblock();
        return;
      }
      case NomadEventKind::kUnblock:
        Unblock();
        return;
      case NomadEventKind::kNodeFail:
        NodeFails(e.id);
        return;
      case NomadEventKind::kNodeRepair:
        nodes_[e.id].eligible = true;
        rooms_.SetEligible(e.id, true);
        changes_.push_back(e.id);
        ScheduleFailure(e.id, now_);
        Unblock();
        return;
    }
  }

  void ScheduleFailure(uint32_t n, Timestamp after) {
    Push(NextNodeFailure(failure_rng_, after, options_.node_failures_per_day), NomadEventKind::kNodeFail, n);
  }

  void NodeFails(uint32_t n) {
    ++node_failures_;
    nodes_[n].eligible = false;
    rooms_.SetEligible(n, false);
    changes_.push_back(n);
    // Its allocations are lost, and their jobs place replacements.
    const std::vector<const nomad::Alloc*> lost = view_.on_node[n];
    for (const nomad::Alloc* a : lost) {
      const uint32_t pod = IndexOf(a->id);
      ledger_.NodeLost(pod);
      Remove(pod, "stop", "lost");
      ledger_.Left(pod, now_);
      const uint32_t w = ledger_.pod(pod).workload;
      if (!works_[w].ended) {
        Want(w, ledger_.pod(pod).cascade);
        Enqueue(w);
      }
    }
    Push(AddSecondsCapped(now_, options_.node_repair_seconds), NomadEventKind::kNodeRepair, n);
  }

  void Tick() {
    if (!options_.progress || evaluations_ % 2000 != 0) return;
    options_.progress({(now_ - kSimulationStart) / kSecond, options_.duration_seconds,
                       static_cast<int64_t>(ledger_.pods()), ledger_.pending()});
  }

  const manifest::ClusterObjects& cluster_;
  const std::vector<Arrival>& arrivals_;
  SimulateOptions options_;
  NomadSimulateOptions nomad_;
  Ledger ledger_{kSimulationStart, options_};
  Timestamp now_ = kSimulationStart;
  std::vector<nomad::Node> nodes_;
  std::unordered_map<std::string, uint32_t> node_index_;  // lookup only
  nomad::ClusterView view_;
  RoomIndex rooms_;
  std::vector<uint32_t> changes_;  // every node change, in order (allocations, eligibility)
  std::vector<uint64_t> seen_;     // per node: the last scan that looked at it
  uint64_t stamp_ = 0;
  std::deque<nomad::Alloc> allocs_;          // every allocation placed (addresses stable)
  std::vector<nomad::Alloc*> alloc_of_;      // per ledger pod: its allocation once placed
  std::map<std::string, int32_t> priorities_;
  std::string default_class_;
  std::vector<NomadWork> works_;
  // Evaluations: (-priority, seq, job). Ready ones run in this order; blocked ones wait.
  std::set<std::tuple<int32_t, uint64_t, uint32_t>> ready_, blocked_;
  uint64_t eval_seq_ = 0;
  int64_t evaluations_ = 0;
  std::priority_queue<NomadEvent, std::vector<NomadEvent>, std::greater<>> events_;
  uint64_t event_seq_ = 0;
  Rng failure_rng_{options_.seed ^ 0xfa11u};
  int64_t node_failures_ = 0;
};

}  // namespace

StatusOr<Report> SimulateNomad(const manifest::ClusterObjects& cluster, const std::string& config_name,
                               const std::vector<Arrival>& arrivals, const SimulateOptions& options,
                               const NomadSimulateOptions& nomad) {
  ARBITER_RETURN_IF_ERROR(CheckSimulation(cluster, arrivals, options));
  if (nomad.priority_delta < 0) return InvalidArgument("the priority delta must not be negative");
  NomadDay day(cluster, arrivals, options, nomad);
  return day.Run(config_name);
}

}  // namespace arbiter::simulate
