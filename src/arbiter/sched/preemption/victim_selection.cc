// Victim selection on one node: the trials, the Kubernetes and Nomad policies, and the dry run
// by victim unit.
#include "arbiter/sched/preemption/victim_selection.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "arbiter/model/best_fit_victims.h"
#include "arbiter/sched/preemption/reprieve.h"
#include "arbiter/state/resource_fit.h"

namespace arbiter::sched::preemption {

Status::Reasons NoVictimsReasons() {
  static const Status::Reasons r = Status::Interned(kNoVictims);
  return r;
}
Status::Reasons NotHelpfulReasons() {
  static const Status::Reasons r = Status::Interned(kNotHelpful);
  return r;
}

namespace {

Status NoVictims() { return Status(Code::kUnschedulableAndUnresolvable, NoVictimsReasons()); }
Status NotHelpful() { return Status(Code::kUnschedulable, NotHelpfulReasons()); }
DryRun Fail(Status s) { return {std::nullopt, std::move(s)}; }
DryRun NoVictimLeft(const NodeInfo& node) {
  return Fail(Status(Code::kError, "expected at least one victim pod on node " + node.name()));
}

// The trials (see the header). Both offer:
//   Open()     the checks the trial settles once, before any pod is taken out;
//   Remove(v)  takes a pod out; Add(v) puts it back (a PreFilter extension's error stops the run);
//   Check()    whether the preemptor fits, as a status naming what does not fit;
//   Fits()     the same as a bool, for the reprieve loop.
class FilterTrial {
 public:
  FilterTrial(const Evaluation& ev, const NodeInfo& original)
      : fw_(ev.handle.framework()), pod_(ev.pod), node_(original), state_(ev.state.Clone()) {}
  const std::string& node_name() const { return node_.name(); }
  Status Open() { return {}; }
  Status Remove(const PodInfoPtr& v) {
    node_.RemovePod(v->uid());
    return fw_.RunPreFilterExtensionRemovePod(state_, pod_, *v, node_);
  }
  Status Add(const PodInfoPtr& v) {
    node_.AddPod(v);
    return fw_.RunPreFilterExtensionAddPod(state_, pod_, *v, node_);
  }
  // Nominated pods of equal or higher priority count (§14.2).
  Status Check() { return fw_.RunFilterPluginsWithNominatedPods(state_, pod_, node_); }
  bool Fits() { return Check().IsSuccess(); }

 private:
  const Framework& fw_;
  const PodInfo& pod_;
  NodeInfo node_;
  CycleState state_;
};

// A trial on the candidate node that can also take out pods of other nodes: those leave the
// PreFilter state (told with their own node), never the candidate node's copy.
class CrossTrial {
 public:
  CrossTrial(const Evaluation& ev, const NodeInfo& original)
      : fw_(ev.handle.framework()), snap_(ev.handle.snapshot()), pod_(ev.pod), node_(original), state_(ev.state.Clone()) {}
  const std::string& node_name() const { return node_.name(); }
  Status Open() { return {}; }
  Status Remove(const PodInfoPtr& v) {
    if (v->pod.node_name == node_.name()) {
      node_.RemovePod(v->uid());
      return fw_.RunPreFilterExtensionRemovePod(state_, pod_, *v, node_);
    }
    const NodeInfo* other = snap_.Get(v->pod.node_name);
    return other == nullptr ? Status() : fw_.RunPreFilterExtensionRemovePod(state_, pod_, *v, *other);
  }
  Status Add(const PodInfoPtr& v) {
    if (v->pod.node_name == node_.name()) {
      node_.AddPod(v);
      return fw_.RunPreFilterExtensionAddPod(state_, pod_, *v, node_);
    }
    const NodeInfo* other = snap_.Get(v->pod.node_name);
    return other == nullptr ? Status() : fw_.RunPreFilterExtensionAddPod(state_, pod_, *v, *other);
  }
  Status Check() { return fw_.RunFilterPluginsWithNominatedPods(state_, pod_, node_); }
  bool Fits() { return Check().IsSuccess(); }

 private:
  const Framework& fw_;
  const state::Snapshot& snap_;
  const PodInfo& pod_;
  NodeInfo node_;
  CycleState state_;
};

class ResourceTrial {
 public:
  // The pods nominated to the node with equal or higher priority count from the start: with
  // them present the fit is only harder, so the second pass without them that
  // RunFilterPluginsWithNominatedPods makes cannot differ.
  ResourceTrial(const Evaluation& ev, const NodeInfo& node)
      : ev_(ev), node_(node), used_(node.requested()), count_(static_cast<int64_t>(node.pods().size())) {
    SmallVector<const NodeInfo::Nominated*, 8> nominated;
    node.NominatedAtLeast(ev.pod, nominated);
    for (const NodeInfo::Nominated* np : nominated) {
      used_.Add(np->pod->pod.requests);
      ++count_;
    }
  }
  const std::string& node_name() const { return node_.name(); }
  // The filters that ignore the node's pods give the same verdict on the trial node.
  Status Open() {
    for (const FilterPlugin* f : ev_.fast_path.pod_independent) {
      Status s = f->Filter(ev_.state, ev_.pod, node_);
      if (!s.IsSuccess()) return std::move(s.WithPlugin(f->Name()));
    }
    return {};
  }
  Status Remove(const PodInfoPtr& v) {
    used_.Sub(v->pod.requests);
    --count_;
    return {};
  }
  Status Add(const PodInfoPtr& v) {
    used_.Add(v->pod.requests);
    ++count_;
    return {};
  }
  bool Fits() const { return state::FitsResources(ev_.pod.pod.requests, node_.allocatable(), used_, count_); }
  Status Check() const {
    return Fits() ? Status() : ev_.fast_path.Shortage(ev_.pod.pod.requests, node_.allocatable(), used_, count_);
  }

 private:
  const Evaluation& ev_;
  const NodeInfo& node_;
  model::Resources used_;
  int64_t count_;
};

// Taking a victim out of a trial and putting it back: a pod, or a unit's pods on the trial's node
// (its pods elsewhere free no room here).
template <typename Trial>
Status Take(Trial& t, const PodInfoPtr& v) { return t.Remove(v); }
template <typename Trial>
Status Put(Trial& t, const PodInfoPtr& v) { return t.Add(v); }
template <typename Trial>
Status Take(Trial& t, const VictimUnit* u) {
  for (const auto& v : u->pods) {
    if (v->pod.node_name != t.node_name()) continue;
    if (Status s = t.Remove(v); !s.IsSuccess()) return s;
  }
  return {};
}
template <typename Trial>
Status Put(Trial& t, const VictimUnit* u) {
  for (const auto& v : u->pods) {
    if (v->pod.node_name != t.node_name()) continue;
    if (Status s = t.Add(v); !s.IsSuccess()) return s;
  }
  return {};
}

// §5 steps 2–3: takes every potential victim out; the status says whether the preemptor then fits.
template <typename Trial, typename Victims>
Status TakeAllOut(Trial& trial, const Victims& potential) {
  if (Status s = trial.Open(); !s.IsSuccess()) return s;
  for (const auto& v : potential) {
    if (Status s = Take(trial, v); !s.IsSuccess()) return s;
  }
  return trial.Check();
}

// §5 step 8 on a trial: the greedy reprieve, putting victims back in `ordered` order.
template <typename Trial, typename Victims, typename Evict>
Status Reprieve(Trial& trial, const Victims& ordered, Evict&& evict) {
  return GreedyReprieve(
      ordered,
      [&](const auto& v, Status* error) {
        if (*error = Put(trial, v); !error->IsSuccess()) return false;
        if (trial.Fits()) return true;
        *error = Take(trial, v);
        return false;
      },
      evict);
}

// The Kubernetes policy by pod on a trial: importance order, then the PDB split (stable,
// §14.4), then the reprieve, violating pods first (§14.3).
template <typename Trial>
DryRun ReprieveByPod(const Evaluation& ev, const NodeInfo& node, Trial& trial, std::vector<PodInfoPtr> potential) {
  if (Status s = TakeAllOut(trial, potential); !s.IsSuccess()) return Fail(std::move(s));
  const Timestamp now = ev.now;
  std::sort(potential.begin(), potential.end(),
            [now](const PodInfoPtr& a, const PodInfoPtr& b) { return MoreImportantPod(a->pod, b->pod, now); });
  PdbSplit split = SplitByPdb(potential, ev.pdbs);
  Candidate c;
  c.node = &node;
  auto evict = [&c](bool violating) { return [&c, violating](const PodInfoPtr& v) { c.AddVictim(v, violating); }; };
  if (Status s = Reprieve(trial, split.violating, evict(true)); !s.IsSuccess()) return Fail(std::move(s));
  if (Status s = Reprieve(trial, split.non_violating, evict(false)); !s.IsSuccess()) return Fail(std::move(s));
  if (c.victims.empty()) return NoVictimLeft(node);
  if (!split.violating.empty() && !split.non_violating.empty()) c.SortVictims(now);
  c.SetKeys(now);
  return {std::move(c), {}};
}

// crossNodePreemption (docs/upstream-rules.md Part F§6): after the node's own pods could not
// make room (`local` says why), and the reason is inter-pod anti-affinity or topology spread,
// the dry run again with the lower-priority pods of other nodes in the node's domains that those
// rules count taken out too, then upstream's reprieve over all of them. nullopt where it does
// not apply or does not help (upstream's answer stands).
std::optional<DryRun> CrossNodeVictims(Evaluation& ev, const NodeInfo& node, const Status& local) {
  if (!ev.handle.config().cross_node_preemption || local.code() != Code::kUnschedulable) return std::nullopt;
  if (local.plugin() != "InterPodAffinity" && local.plugin() != "PodTopologySpread") return std::nullopt;
  if (!ev.cross_node) {
    ev.cross_node.emplace();
    ev.cross_node->Build(ev);
  }
  std::vector<PodInfoPtr> potential = ev.cross_node->OtherNodesPods(node);
  if (potential.empty()) return std::nullopt;
  if (potential.size() > kMaxCrossNodeVictims) {
    ++ev.cross_node_skipped;
    return std::nullopt;
  }
  for (const auto& p : node.pods()) {
    if (ev.eligible.MayEvict(p->pod.priority, p->pod)) potential.push_back(p);
  }
  CrossTrial trial(ev, node);
  DryRun r = ReprieveByPod(ev, node, trial, std::move(potential));
  if (!r.first) return std::nullopt;
  ++ev.cross_node_candidates;
  return r;
}

// The same by victim unit: importance by MoreImportantUnit, PDB classification per unit,
// violating units first; a unit goes or stays whole.
template <typename Trial>
DryRun ReprieveByUnit(const Evaluation& ev, const NodeInfo& node, Trial& trial, std::vector<VictimUnit*> units) {
  if (Status s = TakeAllOut(trial, units); !s.IsSuccess()) return Fail(std::move(s));
  auto more_important = [](const VictimUnit* a, const VictimUnit* b) { return MoreImportantUnit(*a, *b); };
  std::stable_sort(units.begin(), units.end(), more_important);
  ClassifyByPdb(units, ev.pdbs);
  std::stable_partition(units.begin(), units.end(), [](const VictimUnit* u) { return u->violates_pdb; });
  std::vector<const VictimUnit*> victims;
  if (Status s = Reprieve(trial, units, [&](const VictimUnit* u) { victims.push_back(u); }); !s.IsSuccess()) {
    return Fail(std::move(s));
  }
  if (victims.empty()) return NoVictimLeft(node);
  std::stable_sort(victims.begin(), victims.end(), more_important);
  Candidate c;
  c.node = &node;
  for (const VictimUnit* u : victims) {
    for (const auto& v : u->pods) {
      c.AddVictim(v, u->violates_pdb);
      c.victim_priorities.push_back(u->priority);
    }
  }
  c.SetKeys(ev.now);
  return {std::move(c), {}};
}

// The Kubernetes policy on the node's pod summaries: a ResourceTrial that never touches a pod
// (no reference count, no pointer chase), for a preemptor asking only CPU, memory and ephemeral
// storage beside pods that ask no more, with no budget in play. nullopt where it does not apply.
std::optional<DryRun> ReprieveOnSummaries(const Evaluation& ev, const NodeInfo& node) {
  const PodInfo& pod = ev.pod;
  if (!ev.pdbs.empty() || !pod.pod.requests.scalars.empty() || ev.eligible.ReadsPods()) return std::nullopt;
  const auto& sums = node.pod_summaries();
  // 1) Potential victims, as indices; the pods' resources without them.
  SmallVector<uint32_t, 16> potential;
  int64_t cpu = node.requested().milli_cpu, mem = node.requested().memory, eph = node.requested().ephemeral_storage;
  for (uint32_t i = 0; i < sums.size(); ++i) {
    const auto& p = sums[i];
    if (!ev.eligible.MayEvict(p.priority, p.has_start, p.start)) continue;
    if (p.has_scalars) return std::nullopt;  // extended resources: the general resource trial
    potential.push_back(i);
    cpu -= p.milli_cpu;
    mem -= p.memory;
    eph -= p.ephemeral_storage;
  }
  if (potential.empty()) return Fail(NoVictims());
  // 2) Filters that ignore the node's pods give the same verdict on the reduced node.
  for (const FilterPlugin* f : ev.fast_path.pod_independent) {
    Status s = f->Filter(ev.state, pod, node);
    if (!s.IsSuccess()) return Fail(std::move(s.WithPlugin(f->Name())));
  }
  // 3) Nominated pods of equal or higher priority count.
  int64_t count = static_cast<int64_t>(sums.size() - potential.size());
  SmallVector<const NodeInfo::Nominated*, 8> nominated;
  node.NominatedAtLeast(pod, nominated);
  for (const NodeInfo::Nominated* np : nominated) {
    if (np->has_scalars) return std::nullopt;
    cpu += np->milli_cpu;
    mem += np->memory;
    eph += np->ephemeral_storage;
    ++count;
  }
  const model::Resources& alloc = node.allocatable();
  const model::Resources& want = pod.pod.requests;
  auto fits = [&](int64_t c, int64_t m, int64_t e, int64_t n) {
    // state::FitsResources over the three well-known resources (the pod asks for no other).
    return n + 1 <= alloc.pods && !state::ShortOf(want.milli_cpu, alloc.milli_cpu, c) &&
           !state::ShortOf(want.memory, alloc.memory, m) && !state::ShortOf(want.ephemeral_storage, alloc.ephemeral_storage, e);
  };
  if (!fits(cpu, mem, eph, count)) {
    model::Resources used;
    used.milli_cpu = cpu;
    used.memory = mem;
    used.ephemeral_storage = eph;
    return Fail(ev.fast_path.Shortage(want, alloc, used, count));
  }
  // 4) Importance order (priority, then earlier start; no start = now; then UID), then the greedy
  // reprieve. Without PDBs every pod is in the non-violating group.
  const Timestamp now = ev.now;
  std::sort(potential.begin(), potential.end(), [&](uint32_t a, uint32_t b) {
    const auto& x = sums[a];
    const auto& y = sums[b];
    if (x.priority != y.priority) return x.priority > y.priority;
    const Timestamp sx = x.has_start ? x.start : now;
    const Timestamp sy = y.has_start ? y.start : now;
    if (sx != sy) return sx < sy;
    return node.pods()[a]->uid() < node.pods()[b]->uid();
  });
  Candidate c;
  c.node = &node;
  (void)GreedyReprieve(
      potential,
      [&](uint32_t i, Status*) {
        const auto& p = sums[i];
        if (!fits(cpu + p.milli_cpu, mem + p.memory, eph + p.ephemeral_storage, count + 1)) return false;
        cpu += p.milli_cpu;
        mem += p.memory;
        eph += p.ephemeral_storage;
        ++count;
        return true;
      },
      [&](uint32_t i) { c.victim_indices.push_back(i); });
  if (c.victim_indices.empty()) return NoVictimLeft(node);
  // The §7 keys, from the summaries (Candidate::SetKeys would need the pods).
  c.victim_count = c.victim_indices.size();
  c.top_priority = sums[c.victim_indices.front()].priority;
  c.earliest_top_start = std::numeric_limits<Timestamp>::max();
  for (uint32_t i : c.victim_indices) {
    const auto& p = sums[i];
    c.priority_sum += int64_t{p.priority} + kPriorityOffset;
    if (p.priority == c.top_priority) c.earliest_top_start = std::min(c.earliest_top_start, p.has_start ? p.start : now);
  }
  return DryRun{std::move(c), {}};
}

// What model::BestFitVictims needs to know of pods: a pod frees its requests and one pod slot
// (`pods`, which the ask leaves at 0: enough slots means a count of at least 0); the distance is
// Nomad's over CPU, memory, ephemeral storage and each extended resource the pod asks for.
struct PodPolicy {
  using Amount = model::Resources;
  Amount Frees(const PodInfoPtr& p) const {
    Amount r = p->pod.requests;
    r.pods = 1;
    return r;
  }
  double Distance(const Amount& need, const PodInfoPtr& p) const { return PodDistance(need, p->pod.requests); }
  double AskDistance(const Amount& ask, const PodInfoPtr& p) const { return PodDistance(ask, p->pod.requests); }
  void Add(Amount& a, const Amount& b) const { a.Add(b); }
  void Sub(Amount& a, const Amount& b) const { a.Sub(b); }
  bool Covers(const Amount& available, const Amount& ask) const {
    if (available.milli_cpu < ask.milli_cpu || available.memory < ask.memory ||
        available.ephemeral_storage < ask.ephemeral_storage || available.pods < 0) {
      return false;
    }
    for (const auto& [name, want] : ask.scalars) {
      if (want > 0 && available.Scalar(name) < want) return false;
    }
    return true;
  }
  static double PodDistance(const Amount& need, const Amount& v) {
    double sum = model::DistanceTerm(need.milli_cpu, v.milli_cpu);
    sum += model::DistanceTerm(need.memory, v.memory);
    sum += model::DistanceTerm(need.ephemeral_storage, v.ephemeral_storage);
    for (const auto& [name, n] : need.scalars) sum += model::DistanceTerm(n, v.Scalar(name));
    return std::sqrt(sum);
  }
};

}  // namespace

Evaluation::Evaluation(Handle& h, const CycleState& s, const PodInfo& p, std::vector<PdbView> budgets, FastPath fp,
                       const PreemptionHistory* history)
    : handle(h),
      state(s),
      pod(p),
      pdbs(std::move(budgets)),
      fast_path(std::move(fp)),
      now(h.clock().Now()),
      eligible(h.config(), p.pod.priority, now, history),
      unit_eligible(h.config(), p.pod.priority, now, history, VictimEligibility::Scope::kUnits) {}

void CrossNodeIndex::Build(const Evaluation& ev) {
  const model::Pod& preemptor = ev.pod.pod;
  // What can make another node's pod reject the preemptor: the preemptor's required
  // anti-affinity terms and DoNotSchedule spread constraints (pods their selectors match), and
  // the required anti-affinity terms of existing pods (those that match the preemptor).
  struct Rule {
    std::string key;
    const model::LabelSelector* selector;  // over the other pod's labels
  };
  std::vector<Rule> rules;
  for (const auto& t : preemptor.affinity.pod_anti_affinity.required) {
    if (t.label_selector) rules.push_back({t.topology_key, &*t.label_selector});
  }
  for (const auto& c : preemptor.topology_spread_constraints) {
    if (c.when_unsatisfiable == model::UnsatisfiableAction::kDoNotSchedule && c.label_selector) {
      rules.push_back({c.topology_key, &*c.label_selector});
    }
  }
  const state::Snapshot& snap = ev.handle.snapshot();
  for (const NodeInfo* n : snap.nodes()) {
    const model::LabelMap& labels = n->node().labels;
    auto index = [&](const std::string& key, const PodInfoPtr& p) {
      const std::string* value = labels.Find(key);
      if (value == nullptr) return;
      auto& list = by_domain_[{key, *value}];
      if (list.empty() || list.back() != p) list.push_back(p);
      keys_.insert(key);
    };
    for (const auto& p : n->pods()) {
      // A pod group's member goes only with its unit (B§7), which this path does not weigh.
      if (!p->pod.pod_group_name.empty() || !ev.eligible.MayEvict(p->pod.priority, p->pod)) continue;
      for (const Rule& r : rules) {
        if (r.selector->Matches(p->pod.labels)) index(r.key, p);
      }
    }
    for (const auto& p : n->pods_with_required_anti_affinity()) {
      if (!p->pod.pod_group_name.empty() || !ev.eligible.MayEvict(p->pod.priority, p->pod)) continue;
      for (const auto& t : p->pod.affinity.pod_anti_affinity.required) {
        if (t.label_selector && t.label_selector->Matches(preemptor.labels)) index(t.topology_key, p);
      }
    }
  }
}

std::vector<PodInfoPtr> CrossNodeIndex::OtherNodesPods(const NodeInfo& node) const {
  std::vector<PodInfoPtr> out;
  std::set<const PodInfo*> seen;
  for (const std::string& key : keys_) {
    const std::string* value = node.node().labels.Find(key);
    if (value == nullptr) continue;
    auto it = by_domain_.find({key, *value});
    if (it == by_domain_.end()) continue;
    for (const auto& p : it->second) {
      if (p->pod.node_name != node.name() && seen.insert(p.get()).second) out.push_back(p);
    }
  }
  return out;
}

FastPath FastPath::For(const Framework& fw, const CycleState& state, bool enabled) {
  FastPath fp;
  if (!enabled || fw.HasActivePreFilterExtensions(state)) return fp;
  for (const FilterPlugin* f : fw.ActiveFilterPlugins(state)) {
    if (!f->ReadsNodePods()) {
      fp.pod_independent.push_back(f);
    } else if (f->ChecksOnlyNodeResources()) {
      fp.resources = f;
    } else {
      return FastPath{};
    }
  }
  fp.applies = true;
  return fp;
}

Status FastPath::Shortage(const model::Resources& request, const model::Resources& allocatable,
                          const model::Resources& used, int64_t pod_count) const {
  if (resources == nullptr) return Status(Code::kUnschedulable);
  Status s = resources->ShortageStatus(state::CheckResourceFit(request, allocatable, used, pod_count));
  return std::move(s.WithPlugin(resources->Name()));
}

DryRun KubernetesVictimSelection::SelectVictimsOnNode(Evaluation& ev, const NodeInfo& node) const {
  if (ev.fast_path.applies) {
    if (auto r = ReprieveOnSummaries(ev, node)) return std::move(*r);
  }
  // 1) Potential victims: strictly lower priority (§14.1: equal priority never), or as the
  // options narrow it (Evaluation::MayEvict).
  std::vector<PodInfoPtr> potential;
  for (const auto& p : node.pods()) {
    if (ev.eligible.MayEvict(p->pod.priority, p->pod)) potential.push_back(p);
  }
  // §14.5: no lower-priority pod, no filters run (unless crossNodePreemption may find victims
  // elsewhere: then the filters say why the node rejects the pod).
  if (potential.empty()) {
    if (ev.handle.config().cross_node_preemption && !ev.fast_path.applies) {
      FilterTrial as_is(ev, node);
      if (auto cross = CrossNodeVictims(ev, node, as_is.Check())) return std::move(*cross);
    }
    return Fail(NoVictims());
  }
  if (ev.fast_path.applies) {
    ResourceTrial trial(ev, node);
    return ReprieveByPod(ev, node, trial, std::move(potential));
  }
  FilterTrial trial(ev, node);
  DryRun local = ReprieveByPod(ev, node, trial, std::move(potential));
  if (!local.first) {
    if (auto cross = CrossNodeVictims(ev, node, local.second)) return std::move(*cross);
  }
  return local;
}

DryRun NomadVictimSelection::SelectVictimsOnNode(Evaluation& ev, const NodeInfo& node) const {
  const PodInfo& pod = ev.pod;
  // Free room now: allocatable less every pod and the nominated pods that count against this one;
  // `pods` is the count of free slots after this pod.
  model::Resources available = node.allocatable();
  available.Sub(node.requested());
  available.pods = node.allocatable().pods - static_cast<int64_t>(node.pods().size()) - 1;
  SmallVector<const NodeInfo::Nominated*, 8> nominated;
  node.NominatedAtLeast(pod, nominated);
  for (const NodeInfo::Nominated* np : nominated) {
    available.Sub(np->pod->pod.requests);
    --available.pods;
  }
  std::map<int64_t, std::vector<PodInfoPtr>> buckets;  // by priority
  for (const auto& p : node.pods()) {
    const int64_t priority = EffectivePriority(ev.handle, p->pod);
    if (ev.eligible.MayEvict(priority, p->pod)) {  // Nomad's delta rule (model::PriorityDeltaAllows) and the options
      buckets[priority].push_back(p);
    }
  }
  if (buckets.empty()) return Fail(NoVictims());
  model::Resources ask = pod.pod.requests;
  ask.pods = 0;
  const PodPolicy policy;
  std::vector<PodInfoPtr> chosen;
  // The pod's resources may fit already (it failed on something else): no victim frees that.
  if (!policy.Covers(available, ask)) {
    chosen = model::BestFitVictims(std::move(buckets), available, ask, policy);
    if (chosen.empty()) return Fail(NotHelpful());
  }
  // Every filter must pass with the victims gone (extended resources, ports and the rest).
  FilterTrial trial(ev, node);
  if (Status s = TakeAllOut(trial, chosen); !s.IsSuccess()) return Fail(std::move(s));
  const Timestamp now = ev.now;
  std::sort(chosen.begin(), chosen.end(),
            [now](const PodInfoPtr& a, const PodInfoPtr& b) { return MoreImportantPod(a->pod, b->pod, now); });
  Candidate c;
  c.node = &node;
  PdbBudgets budgets(ev.pdbs);
  for (const auto& v : chosen) {
    c.AddVictim(v, budgets.Consume(v->pod));
    c.victim_priorities.push_back(EffectivePriority(ev.handle, v->pod));
  }
  c.SetKeys(now);
  return {std::move(c), {}};
}

DryRun SelectUnitVictimsOnNode(Evaluation& ev, const NodeInfo& node) {
  // 1) Units of the strictly lower-priority pods on the node (by effective priority). A unit goes
  // whole, so with minRuntimeSeconds one member too young to go keeps the whole unit.
  UnitBuilder& builder = ev.units();
  std::vector<size_t> ids;
  // A pod in no group has its own priority as its effective one, so unless eligibility reads the
  // pods themselves (the thrash guard), its summary rules it out without a read of the pod: most
  // pods of a full node are no victims of a given preemptor, and reading each was most of the
  // dry run's time (docs/benchmarks.md).
  const auto& sums = node.pod_summaries();
  const bool by_summary = !ev.unit_eligible.ReadsPods();
  for (size_t i = 0; i < node.pods().size(); ++i) {
    if (by_summary && !sums[i].in_group && !ev.unit_eligible.MayEvict(sums[i].priority, sums[i].has_start, sums[i].start)) {
      continue;
    }
    const auto& p = node.pods()[i];
    const UnitBuilder::Looked looked = builder.Look(p->pod);
    if (!ev.unit_eligible.MayEvict(looked.priority, p->pod)) continue;
    const size_t id = builder.UnitOf(p, looked);
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) continue;
    const VictimUnit& unit = builder.units()[id];
    if (ev.unit_eligible.MayEvictAll(unit.priority, unit.pods)) ids.push_back(id);
  }
  if (ids.empty()) return Fail(NoVictims());
  std::vector<VictimUnit*> units;
  for (size_t id : ids) {
    units.push_back(&builder.units()[id]);
    units.back()->violates_pdb = false;  // classified afresh for this node's set
  }
  // 2) On resource sums when only resources can change the verdict, else on a copy of the node.
  if (ev.fast_path.applies && ev.pod.pod.requests.scalars.empty()) {
    ResourceTrial trial(ev, node);
    return ReprieveByUnit(ev, node, trial, std::move(units));
  }
  FilterTrial trial(ev, node);
  return ReprieveByUnit(ev, node, trial, std::move(units));
}

}  // namespace arbiter::sched::preemption
