// Per-pod default preemption.
#include "arbiter/sched/preemption/default_preemption.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <deque>
#include <limits>
#include <tuple>

#include "arbiter/base/small_vector.h"
#include "arbiter/model/best_fit_victims.h"
#include "arbiter/sched/framework/fit_error.h"
#include "arbiter/sched/framework/nominator.h"
#include "arbiter/sched/preemption/reprieve.h"
#include "arbiter/sched/preemption/victim_units.h"
#include "arbiter/state/resource_fit.h"

namespace arbiter::sched::preemption {

namespace {
// Interned reason lists: a rejection per node allocates nothing.
const Status::Reasons& FixedNoVictims() {
  static const Status::Reasons r = Status::Interned(DefaultPreemption::kNoVictims);
  return r;
}
const Status::Reasons& FixedNotHelpful() {
  static const Status::Reasons r = Status::Interned(DefaultPreemption::kNotHelpful);
  return r;
}
}  // namespace


bool MoreImportantPod(const model::Pod& a, const model::Pod& b, Timestamp now) {
  if (a.priority != b.priority) return a.priority > b.priority;
  const Timestamp sa = a.start_time.value_or(now);
  const Timestamp sb = b.start_time.value_or(now);
  if (sa != sb) return sa < sb;
  return a.uid < b.uid;
}

namespace {

constexpr int64_t kPriorityOffset = int64_t{std::numeric_limits<int32_t>::max()} + 1;  // 2^31

// Keeps the candidates with the best value of `key` (lower is better).
template <typename Key>
std::vector<size_t> KeepBest(const std::vector<const Candidate*>& c, const std::vector<size_t>& in, Key key) {
  std::vector<size_t> out;
  auto best = key(*c[in[0]]);
  for (size_t i : in) {
    auto k = key(*c[i]);
    if (k < best) {
      best = k;
      out.clear();
    }
    if (k == best) out.push_back(i);
  }
  return out;
}

std::string Describe(const Candidate& c) {
  std::string s = "candidate " + c.node->name() + ": " + std::to_string(c.victims.size()) + " victim(s) [";
  for (size_t i = 0; i < c.victims.size(); ++i) {
    const auto& v = c.victims[i]->pod;
    s += (i ? ", " : "") + v.Key() + " (priority " + std::to_string(c.VictimPriority(i)) +
         (c.violates_pdb[i] ? ", violates PDB" : "") + ")";
  }
  return s + "], " + std::to_string(c.num_pdb_violations) + " PDB violation(s)";
}

}  // namespace

void Candidate::Materialize() {
  if (!victims.empty() || victim_indices.empty()) return;
  for (uint32_t i : victim_indices) victims.push_back(node->pods()[i]);
  violates_pdb.assign(victims.size(), false);
}

namespace {

// The §7 keys of a candidate whose `victims` are known.
void ComputeKeys(Candidate& c, Timestamp now) {
  c.victim_count = c.victims.size();
  c.top_priority = c.VictimPriority(0);
  c.priority_sum = 0;
  c.earliest_top_start = std::numeric_limits<Timestamp>::max();
  for (size_t i = 0; i < c.victims.size(); ++i) {
    const int32_t priority = c.VictimPriority(i);
    c.priority_sum += int64_t{priority} + kPriorityOffset;
    if (priority == c.top_priority) {
      c.earliest_top_start = std::min(c.earliest_top_start, c.victims[i]->pod.start_time.value_or(now));
    }
  }
}

}  // namespace

std::pair<size_t, std::string> PickOneNodeForPreemption(const std::vector<Candidate>& candidates, Timestamp now) {
  // Candidates built by hand (tests, other engines) may carry victims without keys.
  std::vector<Candidate> keyed = candidates;
  for (auto& x : keyed) {
    if (x.victim_count == 0 && !x.victims.empty()) ComputeKeys(x, now);
  }
  std::vector<const Candidate*> ptrs;
  for (const auto& x : keyed) ptrs.push_back(&x);
  return PickOneNodeForPreemption(ptrs, now);
}

std::pair<size_t, std::string> PickOneNodeForPreemption(const std::vector<const Candidate*>& candidates, Timestamp) {
  if (candidates.size() == 1) return {0, "the only candidate"};
  const auto& c = candidates;
  std::vector<size_t> left(c.size());
  for (size_t i = 0; i < c.size(); ++i) left[i] = i;
  // 1) Fewest PDB violations.
  left = KeepBest(c, left, [](const Candidate& x) { return x.num_pdb_violations; });
  if (left.size() == 1) return {left[0], "fewest PDB violations"};
  // 2) Lowest priority of the most important victim.
  left = KeepBest(c, left, [](const Candidate& x) { return x.top_priority; });
  if (left.size() == 1) return {left[0], "lowest priority among the most important victims"};
  // 3) Smallest sum of (priority + 2^31): one more victim always costs more.
  left = KeepBest(c, left, [](const Candidate& x) { return x.priority_sum; });
  if (left.size() == 1) return {left[0], "smallest sum of victim priorities"};
  // 4) Fewest victims.
  left = KeepBest(c, left, [](const Candidate& x) { return x.victim_count; });
  if (left.size() == 1) return {left[0], "fewest victims"};
  // 5) Latest earliest start time among the highest-priority victims (the youngest).
  left = KeepBest(c, left, [](const Candidate& x) { return -x.earliest_top_start; });
  if (left.size() == 1) return {left[0], "latest start among the highest-priority victims"};
  // 6) The first in scan order.
  return {left[0], "first in scan order among exact ties"};
}

DefaultPreemption::DefaultPreemption(Handle* handle, PreemptionActuator* actuator, Options options)
    : handle_(handle), actuator_(actuator), options_(options) {}

DefaultPreemption::FastPath DefaultPreemption::PlanFastPath(const CycleState& state) const {
  FastPath fp;
  if (!options_.resource_fast_path) return fp;
  const Framework& fw = handle_->framework();
  if (fw.HasActivePreFilterExtensions(state)) return fp;
  for (const FilterPlugin* f : fw.ActiveFilterPlugins(state)) {
    if (!f->ReadsNodePods()) {
      fp.pod_independent.push_back(f);
    } else if (f->ChecksOnlyNodeResources()) {
      fp.resources = f;
    } else {
      return fp;
    }
  }
  fp.applies = true;
  return fp;
}

Status DefaultPreemption::FastPath::Shortage(const model::Resources& request, const model::Resources& allocatable,
                                             const model::Resources& used, int64_t pod_count) const {
  if (resources == nullptr) return Status(Code::kUnschedulable);
  Status s = resources->ShortageStatus(state::CheckResourceFit(request, allocatable, used, pod_count));
  return std::move(s.WithPlugin(resources->Name()));
}

size_t DefaultPreemption::NumCandidates(size_t potential) const {
  const auto& cfg = handle_->config();
  size_t n = potential * static_cast<size_t>(cfg.min_candidate_nodes_percentage) / 100;
  n = std::max(n, static_cast<size_t>(cfg.min_candidate_nodes_absolute));
  return std::min(n, potential);
}

bool DefaultPreemption::PodEligibleToPreemptOthers(const PodInfo& pod, const NodeToStatus& filtered,
                                                   std::string* reason) const {
  if (pod.pod.preemption_policy == model::PreemptionPolicy::kNever) {
    *reason = "not eligible due to preemptionPolicy=Never.";
    return false;
  }
  const std::string nominated = handle_->nominator().NominatedNode(pod.uid());
  if (nominated.empty()) return true;
  // The nominated node can no longer help: the pod may look elsewhere.
  if (filtered.Get(nominated).code() == Code::kUnschedulableAndUnresolvable) return true;
  if (const NodeInfo* n = handle_->snapshot().Get(nominated)) {
    for (const auto& p : n->pods()) {
      if (p->pod.deletion_timestamp && p->pod.preempted_by_scheduler && EffectivePriority(*handle_, p->pod) < pod.pod.priority) {
        *reason = "not eligible due to a terminating pod on the nominated node.";
        return false;
      }
    }
  }
  return true;
}

namespace {

// Victims from both groups are re-sorted so victims[0] is the most important (§5 step 8).
void SortVictims(Candidate& c, Timestamp now) {
  std::vector<size_t> order(c.victims.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return MoreImportantPod(c.victims[a]->pod, c.victims[b]->pod, now);
  });
  Candidate sorted;
  sorted.node = c.node;
  sorted.num_pdb_violations = c.num_pdb_violations;
  for (size_t i : order) {
    sorted.victims.push_back(c.victims[i]);
    sorted.violates_pdb.push_back(c.violates_pdb[i]);
  }
  c = std::move(sorted);
}

}  // namespace

std::pair<std::optional<Candidate>, Status> DefaultPreemption::SelectVictimsOnNode(
    const CycleState& state, const PodInfo& pod, const NodeInfo& node, const std::vector<PdbView>& pdbs) const {
  // From v1.37 a lone pod preempts group members as units (§7 of the workload notes): group
  // priority, the shared importance order, and `all`-mode groups evicted whole. Units come
  // first under either victim policy: an `all` group is never broken up.
  if (handle_->groups() != nullptr && node.has_group_members()) return DryRunWithUnits(state, pod, node, pdbs);
  if (handle_->config().victim_selection == model::VictimSelection::kNomad) return DryRunNomad(state, pod, node, pdbs);
  if (fast_path_.applies) {
    if (auto r = DryRunOnSummaries(state, pod, node, pdbs)) return std::move(*r);
  }
  // 1) Potential victims: strictly lower priority (§14.1: equal priority never).
  std::vector<PodInfoPtr> potential;
  for (const auto& p : node.pods()) {
    if (p->pod.priority < pod.pod.priority) potential.push_back(p);
  }
  // §14.5: no lower-priority pod, no filters run.
  if (potential.empty()) return {std::nullopt, Status(Code::kUnschedulableAndUnresolvable, FixedNoVictims())};
  if (fast_path_.applies) return DryRunOnResources(state, pod, node, std::move(potential), pdbs);
  return DryRunOnCopy(state, pod, node, std::move(potential), pdbs);
}

std::optional<std::pair<std::optional<Candidate>, Status>> DefaultPreemption::DryRunOnSummaries(
    const CycleState& state, const PodInfo& pod, const NodeInfo& node, const std::vector<PdbView>& pdbs) const {
  if (!pdbs.empty() || !pod.pod.requests.scalars.empty()) return std::nullopt;
  const auto& sums = node.pod_summaries();
  const int32_t prio = pod.pod.priority;
  // 1) Potential victims, as indices; the pods' resources without them.
  SmallVector<uint32_t, 16> potential;
  int64_t cpu = node.requested().milli_cpu, mem = node.requested().memory, eph = node.requested().ephemeral_storage;
  for (uint32_t i = 0; i < sums.size(); ++i) {
    const auto& p = sums[i];
    if (p.priority >= prio) continue;
    if (p.has_scalars) return std::nullopt;  // extended resources: the general resource path
    potential.push_back(i);
    cpu -= p.milli_cpu;
    mem -= p.memory;
    eph -= p.ephemeral_storage;
  }
  if (potential.empty()) {
    return std::make_pair(std::optional<Candidate>(), Status(Code::kUnschedulableAndUnresolvable, FixedNoVictims()));
  }
  // 2) Filters that ignore the node's pods give the same verdict on the reduced node.
  for (const FilterPlugin* f : fast_path_.pod_independent) {
    Status s = f->Filter(state, pod, node);
    if (!s.IsSuccess()) return std::make_pair(std::optional<Candidate>(), std::move(s.WithPlugin(f->Name())));
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
    return std::make_pair(std::optional<Candidate>(), fast_path_.Shortage(want, alloc, used, count));
  }
  // 4) Importance order (priority, then earlier start; no start = now; then UID), then the greedy
  // reprieve. Without PDBs every pod is in the non-violating group.
  const Timestamp now = handle_->clock().Now();
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
  if (c.victim_indices.empty()) {
    return std::make_pair(std::optional<Candidate>(),
                          Status(Code::kError, "expected at least one victim pod on node " + node.name()));
  }
  c.victim_count = c.victim_indices.size();
  c.top_priority = sums[c.victim_indices.front()].priority;
  c.earliest_top_start = std::numeric_limits<Timestamp>::max();
  for (uint32_t i : c.victim_indices) {
    const auto& p = sums[i];
    c.priority_sum += int64_t{p.priority} + kPriorityOffset;
    if (p.priority == c.top_priority) c.earliest_top_start = std::min(c.earliest_top_start, p.has_start ? p.start : now);
  }
  return std::make_pair(std::optional<Candidate>(std::move(c)), Status());
}

std::pair<std::optional<Candidate>, Status> DefaultPreemption::DryRunOnCopy(
    const CycleState& cycle_state, const PodInfo& pod, const NodeInfo& original, std::vector<PodInfoPtr> potential,
    const std::vector<PdbView>& pdbs) const {
  const Framework& fw = handle_->framework();
  const Timestamp now = handle_->clock().Now();
  // 2) Remove them all from a copy of the node, keeping plugin state consistent.
  NodeInfo node = original;
  CycleState state = cycle_state.Clone();
  for (const auto& v : potential) {
    node.RemovePod(v->uid());
    Status s = fw.RunPreFilterExtensionRemovePod(state, pod, *v, node);
    if (!s.IsSuccess()) return {std::nullopt, s};
  }
  // 3) If the pod does not fit even then, this node cannot help. Nominated pods of equal or
  // higher priority count (§14.2).
  Status fits = fw.RunFilterPluginsWithNominatedPods(state, pod, node);
  if (!fits.IsSuccess()) return {std::nullopt, fits};
  // 4) Importance order, then PDB classification (stable, §14.4), then the greedy reprieve:
  // violating pods first, then the rest (§14.3).
  std::sort(potential.begin(), potential.end(),
            [now](const PodInfoPtr& a, const PodInfoPtr& b) { return MoreImportantPod(a->pod, b->pod, now); });
  PdbSplit split = SplitByPdb(potential, pdbs);
  Candidate c;
  c.node = &original;
  auto stays = [&](const PodInfoPtr& v, Status* error) {
    node.AddPod(v);
    if (*error = fw.RunPreFilterExtensionAddPod(state, pod, *v, node); !error->IsSuccess()) return false;
    if (fw.RunFilterPluginsWithNominatedPods(state, pod, node).IsSuccess()) return true;
    node.RemovePod(v->uid());
    *error = fw.RunPreFilterExtensionRemovePod(state, pod, *v, node);
    return false;
  };
  auto evict = [&c](bool violating) { return [&c, violating](const PodInfoPtr& v) { c.AddVictim(v, violating); }; };
  if (Status s = GreedyReprieve(split.violating, stays, evict(true)); !s.IsSuccess()) return {std::nullopt, s};
  if (Status s = GreedyReprieve(split.non_violating, stays, evict(false)); !s.IsSuccess()) return {std::nullopt, s};
  if (c.victims.empty()) {
    return {std::nullopt, Status(Code::kError, "expected at least one victim pod on node " + original.name())};
  }
  if (!split.violating.empty() && !split.non_violating.empty()) SortVictims(c, now);
  ComputeKeys(c, now);
  return {std::move(c), {}};
}

std::pair<std::optional<Candidate>, Status> DefaultPreemption::DryRunWithUnits(const CycleState& cycle_state,
                                                                              const PodInfo& pod,
                                                                              const NodeInfo& original,
                                                                              const std::vector<PdbView>& pdbs) const {
  const Framework& fw = handle_->framework();
  const Timestamp now = handle_->clock().Now();
  // 1) Units of the strictly lower-priority pods on the node (by effective priority). Units are
  // shared by every node of this PostFilter call.
  if (!units_) units_ = std::make_unique<UnitBuilder>(*handle_);
  UnitBuilder& builder = *units_;
  std::vector<size_t> ids;
  for (const auto& p : original.pods()) {
    if (builder.PriorityOf(p->pod) >= pod.pod.priority) continue;
    const size_t id = builder.UnitOf(p);
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  if (ids.empty()) return {std::nullopt, Status(Code::kUnschedulableAndUnresolvable, FixedNoVictims())};
  std::vector<VictimUnit*> units;
  for (size_t id : ids) {
    units.push_back(&builder.units()[id]);
    units.back()->violates_pdb = false;  // classified afresh for this node's set
  }
  // 2) Remove each unit's pods on this node (its pods elsewhere free no room here): from resource
  // sums when only resources can change the verdict, else from a copy of the node.
  const bool sums = fast_path_.applies && pod.pod.requests.scalars.empty();
  if (sums) {
    for (const FilterPlugin* f : fast_path_.pod_independent) {
      Status s = f->Filter(cycle_state, pod, original);
      if (!s.IsSuccess()) return {std::nullopt, std::move(s.WithPlugin(f->Name()))};
    }
  }
  model::Resources used = original.requested();
  int64_t count = static_cast<int64_t>(original.pods().size());
  std::optional<NodeInfo> node;
  CycleState state;
  if (!sums) {
    node.emplace(original);
    state = cycle_state.Clone();
  } else {
    SmallVector<const NodeInfo::Nominated*, 8> nominated;
    original.NominatedAtLeast(pod, nominated);
    for (const NodeInfo::Nominated* np : nominated) {
      used.Add(np->pod->pod.requests);
      ++count;
    }
  }
  auto each_on_node = [&](const VictimUnit& u, bool add) -> Status {
    for (const auto& v : u.pods) {
      if (v->pod.node_name != original.name()) continue;
      if (sums) {
        if (add) {
          used.Add(v->pod.requests);
          ++count;
        } else {
          used.Sub(v->pod.requests);
          --count;
        }
        continue;
      }
      Status s;
      if (add) {
        node->AddPod(v);
        s = fw.RunPreFilterExtensionAddPod(state, pod, *v, *node);
      } else {
        node->RemovePod(v->uid());
        s = fw.RunPreFilterExtensionRemovePod(state, pod, *v, *node);
      }
      if (!s.IsSuccess()) return s;
    }
    return {};
  };
  auto fits = [&]() {
    if (sums) {
      if (state::FitsResources(pod.pod.requests, original.allocatable(), used, count)) return Status();
      return fast_path_.Shortage(pod.pod.requests, original.allocatable(), used, count);
    }
    return fw.RunFilterPluginsWithNominatedPods(state, pod, *node);
  };
  for (const VictimUnit* u : units) {
    if (Status s = each_on_node(*u, false); !s.IsSuccess()) return {std::nullopt, s};
  }
  if (Status s = fits(); !s.IsSuccess()) return {std::nullopt, s};
  // 3) Importance order, PDB classification per unit, then the greedy reprieve by unit:
  // violating units first, then the rest.
  std::stable_sort(units.begin(), units.end(),
                   [](const VictimUnit* a, const VictimUnit* b) { return MoreImportantUnit(*a, *b); });
  ClassifyByPdb(units, pdbs);
  std::stable_partition(units.begin(), units.end(), [](const VictimUnit* u) { return u->violates_pdb; });
  std::vector<const VictimUnit*> victims;
  Status reprieved = GreedyReprieve(
      units,
      [&](const VictimUnit* u, Status* error) {
        if (*error = each_on_node(*u, true); !error->IsSuccess()) return false;
        if (fits().IsSuccess()) return true;
        *error = each_on_node(*u, false);
        return false;
      },
      [&](const VictimUnit* u) { victims.push_back(u); });
  if (!reprieved.IsSuccess()) return {std::nullopt, reprieved};
  if (victims.empty()) {
    return {std::nullopt, Status(Code::kError, "expected at least one victim pod on node " + original.name())};
  }
  std::stable_sort(victims.begin(), victims.end(),
                   [](const VictimUnit* a, const VictimUnit* b) { return MoreImportantUnit(*a, *b); });
  Candidate c;
  c.node = &original;
  for (const VictimUnit* u : victims) {
    for (const auto& v : u->pods) {
      c.victims.push_back(v);
      c.violates_pdb.push_back(u->violates_pdb);
      c.victim_priorities.push_back(u->priority);
      if (u->violates_pdb) ++c.num_pdb_violations;
    }
  }
  ComputeKeys(c, now);
  return {std::move(c), {}};
}

namespace {

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

std::pair<std::optional<Candidate>, Status> DefaultPreemption::DryRunNomad(const CycleState& cycle_state,
                                                                          const PodInfo& pod, const NodeInfo& original,
                                                                          const std::vector<PdbView>& pdbs) const {
  const Framework& fw = handle_->framework();
  const Timestamp now = handle_->clock().Now();
  // Free room now: allocatable less every pod and the nominated pods that count against this one;
  // `pods` is the count of free slots after this pod.
  model::Resources available = original.allocatable();
  available.Sub(original.requested());
  available.pods = original.allocatable().pods - static_cast<int64_t>(original.pods().size()) - 1;
  SmallVector<const NodeInfo::Nominated*, 8> nominated;
  original.NominatedAtLeast(pod, nominated);
  for (const NodeInfo::Nominated* np : nominated) {
    available.Sub(np->pod->pod.requests);
    --available.pods;
  }
  std::map<int64_t, std::vector<PodInfoPtr>> buckets;  // by priority
  for (const auto& p : original.pods()) {
    const int64_t priority = EffectivePriority(*handle_, p->pod);
    if (model::NomadEligible(pod.pod.priority, priority, handle_->config().nomad_priority_delta)) buckets[priority].push_back(p);
  }
  if (buckets.empty()) return {std::nullopt, Status(Code::kUnschedulableAndUnresolvable, FixedNoVictims())};
  model::Resources ask = pod.pod.requests;
  ask.pods = 0;
  const PodPolicy policy;
  std::vector<PodInfoPtr> chosen;
  // The pod's resources may fit already (it failed on something else): no victim frees that.
  if (!policy.Covers(available, ask)) {
    chosen = model::BestFitVictims(std::move(buckets), available, ask, policy);
    if (chosen.empty()) return {std::nullopt, Status(Code::kUnschedulable, FixedNotHelpful())};
  }
  // Every filter must pass with the victims gone (extended resources, ports and the rest).
  NodeInfo node = original;
  CycleState state = cycle_state.Clone();
  for (const auto& v : chosen) {
    node.RemovePod(v->uid());
    Status s = fw.RunPreFilterExtensionRemovePod(state, pod, *v, node);
    if (!s.IsSuccess()) return {std::nullopt, s};
  }
  Status fits = fw.RunFilterPluginsWithNominatedPods(state, pod, node);
  if (!fits.IsSuccess()) return {std::nullopt, fits};
  std::sort(chosen.begin(), chosen.end(),
            [now](const PodInfoPtr& a, const PodInfoPtr& b) { return MoreImportantPod(a->pod, b->pod, now); });
  Candidate c;
  c.node = &original;
  PdbBudgets budgets(pdbs);
  for (const auto& v : chosen) {
    const bool violating = budgets.Consume(v->pod);
    c.victims.push_back(v);
    c.violates_pdb.push_back(violating);
    c.victim_priorities.push_back(EffectivePriority(*handle_, v->pod));
    if (violating) ++c.num_pdb_violations;
  }
  ComputeKeys(c, now);
  return {std::move(c), {}};
}

std::pair<std::optional<Candidate>, Status> DefaultPreemption::DryRunOnResources(
    const CycleState& state, const PodInfo& pod, const NodeInfo& node, std::vector<PodInfoPtr> potential,
    const std::vector<PdbView>& pdbs) const {
  const Timestamp now = handle_->clock().Now();
  // The filters that ignore the node's pods give the same verdict on the reduced node.
  for (const FilterPlugin* f : fast_path_.pod_independent) {
    Status s = f->Filter(state, pod, node);
    if (!s.IsSuccess()) return {std::nullopt, std::move(s.WithPlugin(f->Name()))};
  }
  // Resources in use once every potential victim is gone, counting the pods nominated to the
  // node with equal or higher priority (with them present the fit is only harder, so the
  // second pass without them that RunFilterPluginsWithNominatedPods makes cannot differ).
  model::Resources used = node.requested();
  int64_t count = static_cast<int64_t>(node.pods().size());
  for (const auto& v : potential) used.Sub(v->pod.requests);
  count -= static_cast<int64_t>(potential.size());
  SmallVector<const NodeInfo::Nominated*, 8> nominated;
  node.NominatedAtLeast(pod, nominated);
  for (const NodeInfo::Nominated* np : nominated) {
    used.Add(np->pod->pod.requests);
    ++count;
  }
  const model::Resources& alloc = node.allocatable();
  if (!state::FitsResources(pod.pod.requests, alloc, used, count)) {
    return {std::nullopt, fast_path_.Shortage(pod.pod.requests, alloc, used, count)};
  }
  std::sort(potential.begin(), potential.end(),
            [now](const PodInfoPtr& a, const PodInfoPtr& b) { return MoreImportantPod(a->pod, b->pod, now); });
  PdbSplit split = SplitByPdb(potential, pdbs);
  Candidate c;
  c.node = &node;
  auto stays = [&](const PodInfoPtr& v, Status*) {
    used.Add(v->pod.requests);
    if (state::FitsResources(pod.pod.requests, alloc, used, count + 1)) {
      ++count;
      return true;
    }
    used.Sub(v->pod.requests);
    return false;
  };
  auto evict = [&c](bool violating) { return [&c, violating](const PodInfoPtr& v) { c.AddVictim(v, violating); }; };
  (void)GreedyReprieve(split.violating, stays, evict(true));
  (void)GreedyReprieve(split.non_violating, stays, evict(false));
  if (c.victims.empty()) {
    return {std::nullopt, Status(Code::kError, "expected at least one victim pod on node " + node.name())};
  }
  if (!split.violating.empty() && !split.non_violating.empty()) SortVictims(c, now);
  ComputeKeys(c, now);
  return {std::move(c), {}};
}

PostFilterResult DefaultPreemption::PostFilter(CycleState& state, const PodInfo& pod,
                                               const NodeToStatus& filtered) {
  ++metrics_.attempts;
  units_.reset();  // victim units are built afresh for each call
  const Clock* wall = handle_->wall_clock();
  const Timestamp started = wall != nullptr ? wall->Now() : 0;
  struct Timer {  // records the evaluation time on every return path
    const Clock* wall;
    Timestamp started;
    PreemptionMetrics* m;
    ~Timer() {
      if (wall == nullptr) return;
      m->evaluation_seconds_sum += static_cast<double>(wall->Now() - started) / static_cast<double>(kSecond);
      ++m->evaluation_seconds_count;
    }
  } timer{wall, started, &metrics_};
  const bool explain = handle_->explaining();
  PostFilterResult out;
  auto unschedulable = [](std::string msg) { return Status(Code::kUnschedulable, "preemption: " + std::move(msg)); };

  // 1) Eligibility. Not eligible: the nomination stays as it is.
  std::string why;
  if (!PodEligibleToPreemptOthers(pod, filtered, &why)) {
    out.status = unschedulable(why);
    out.explanation.push_back("preemption: " + why);
    return out;
  }
  // 2) Potential nodes: those that failed filtering with Unschedulable, in filtering order.
  const state::Snapshot& snap = handle_->snapshot();
  std::vector<const NodeInfo*>& potential = potential_scratch_;
  potential.clear();
  potential.reserve(snap.size());
  if (filtered.absent.code() == Code::kUnschedulable) {
    for (const NodeInfo* n : snap.nodes()) {
      if (filtered.Get(n->name()).code() == Code::kUnschedulable) potential.push_back(n);
    }
  } else {
    for (const auto& ns : filtered.statuses) {
      if (ns.status.code() != Code::kUnschedulable) continue;
      if (ns.node != nullptr) potential.push_back(ns.node);
    }
  }
  Diagnosis diagnosis;
  diagnosis.node_to_status.absent = Status(Code::kUnschedulableAndUnresolvable, FixedNotHelpful());
  // Nodes without a candidate are many once most nodes run preemptors: their statuses go into
  // a buffer kept across calls.
  diagnosis.node_to_status.statuses = std::move(no_candidate_scratch_);
  diagnosis.node_to_status.statuses.clear();
  struct Recycle {
    std::vector<NodeStatus>& from;
    std::vector<NodeStatus>& to;
    ~Recycle() { to = std::move(from); }
  } recycle{diagnosis.node_to_status.statuses, no_candidate_scratch_};
  // Candidates by pointer: into the dry-run cache, or into `fresh` for dry runs made now.
  std::deque<Candidate> fresh;
  std::vector<const Candidate*> candidates;
  if (!potential.empty()) {
    // 3) Sampling from a seeded random offset.
    const size_t want = NumCandidates(potential.size());
    const size_t offset = static_cast<size_t>(handle_->rng().Uniform(potential.size()));
    if (explain) out.explanation.push_back("preemption: " + std::to_string(potential.size()) +
                              " potential node(s); looking for " + std::to_string(want) +
                              " candidate(s) from offset " + std::to_string(offset));
    const std::vector<PdbView> pdbs = actuator_ != nullptr ? actuator_->Pdbs() : std::vector<PdbView>{};
    fast_path_ = PlanFastPath(state);
    std::vector<const Candidate*> violating;
    std::vector<const Candidate*> non_violating;
    // Dry runs are reused for an equivalent pod on an unchanged node when nothing else can
    // change their result (the pod's own nominated node excepted: there it does not count).
    // With budgets, only when they are the tracker's (a known version, the same for all).
    const uint64_t budgets_version = pdbs.empty() ? 0 : pdbs.front().budgets_version;
    const bool budgets_known = std::all_of(pdbs.begin(), pdbs.end(), [&](const PdbView& v) {
      return v.budgets_version != 0 && v.budgets_version == budgets_version;
    });
    const uint64_t pod_class = fast_path_.applies && budgets_known ? handle_->pod_class() : 0;
    // The budgets a dry run on `node` reads: those matching one of its pods of lower priority (the
    // only pods it may take as victims; equal priority too, so that a victim policy reaching
    // them would still be covered), with their allowed disruptions now.
    auto budgets_of = [&](const NodeInfo& node, std::vector<std::pair<uint32_t, int32_t>>& read) {
      read.clear();
      if (pdbs.empty()) return;
      for (const auto& p : node.pods()) {
        if (p->pod.priority > pod.pod.priority || p->pod.labels.empty()) continue;
        for (uint32_t i = 0; i < pdbs.size(); ++i) {
          if (pdbs[i].Matches(p->pod)) read.emplace_back(i, pdbs[i].disruptions_allowed);
        }
      }
      std::sort(read.begin(), read.end());
      read.erase(std::unique(read.begin(), read.end()), read.end());
    };
    auto budgets_unchanged = [&](const CachedDryRun& e) {
      if (e.budgets_version != budgets_version) return false;
      return std::all_of(e.budgets.begin(), e.budgets.end(),
                         [&](const auto& b) { return pdbs[b.first].disruptions_allowed == b.second; });
    };
    const Timestamp now = handle_->clock().Now();
    const NodeInfo* own_nomination = snap.Get(handle_->nominator().NominatedNode(pod.uid()));
    if (pod_class != 0 && (dry_runs_structure_ != snap.structure_version() || dry_runs_.size() != snap.size())) {
      dry_runs_.assign(snap.size(), CachedDryRun{});
      dry_runs_structure_ = snap.structure_version();
    }
    const bool have_groups = handle_->groups() != nullptr;
    non_violating.reserve(want);
    violating.reserve(want);
    size_t at = offset;  // walks the potential nodes from the offset, wrapping once
    for (size_t i = 0; i < potential.size(); ++i, at = at + 1 == potential.size() ? 0 : at + 1) {
      const NodeInfo& node = *potential[at];
      const Candidate* candidate = nullptr;
      Status fresh_status;
      const Status* status = &fresh_status;  // read only when the node yields no candidate
      // A dry run by victim unit reads other nodes (an `all`-mode unit's pods): never reused.
      const bool by_units = have_groups && node.has_group_members();
      if (pod_class != 0 && &node != own_nomination && !by_units) {
        CachedDryRun& e = dry_runs_[snap.IndexOf(&node)];
        if (e.generation != node.generation() || e.pod_class != pod_class || (e.reads_now && e.now != now) ||
            !budgets_unchanged(e)) {
          auto r = SelectVictimsOnNode(state, pod, node, pdbs);
          const auto& sums = node.pod_summaries();
          const bool reads_now =
              std::any_of(sums.begin(), sums.end(), [](const NodeInfo::PodSummary& p) { return !p.has_start; });
          e.generation = node.generation();
          e.pod_class = pod_class;
          e.reads_now = reads_now;
          e.now = now;
          e.budgets_version = budgets_version;
          budgets_of(node, e.budgets);
          e.candidate = std::move(r.first);
          e.status = std::move(r.second);
        }
        if (e.candidate) candidate = &*e.candidate;
        status = &e.status;
      } else {
        auto r = SelectVictimsOnNode(state, pod, node, pdbs);
        if (r.first) candidate = &fresh.emplace_back(std::move(*r.first));
        fresh_status = std::move(r.second);
      }
      if (candidate != nullptr) {
        auto& list = candidate->num_pdb_violations == 0 ? non_violating : violating;
        if (list.size() < want) list.push_back(candidate);
      } else {
        if (explain) out.explanation.push_back("node " + node.name() + ": " + status->Message());
        diagnosis.node_to_status.statuses.push_back({&node, *status});
      }
      if (!non_violating.empty() && non_violating.size() + violating.size() >= want) break;
    }
    candidates = std::move(non_violating);
    candidates.insert(candidates.end(), violating.begin(), violating.end());
  }
  if (candidates.empty()) {
    // No node can help: the nomination is cleared.
    out.status = unschedulable(FitErrorMessage(snap.size(), diagnosis));
    out.nominated_node_name = "";
    if (explain) out.explanation.push_back("preemption: no candidate node");
    return out;
  }
  if (explain) {
    for (const Candidate* c : candidates) {
      Candidate shown = *c;
      shown.Materialize();
      out.explanation.push_back(Describe(shown));
    }
  }
  // 4) Choose.
  const Timestamp now = handle_->clock().Now();
  auto [best, rule] = PickOneNodeForPreemption(candidates, now);
  Candidate chosen = *candidates[best];
  chosen.Materialize();
  const std::string node = chosen.node->name();
  if (explain) out.explanation.push_back("preemption: chose " + node + " (" + rule + ")");
  // 5) Carry it out: evict, then clear lower-priority nominations to that node.
  std::vector<Eviction> evictions;
  for (size_t i = 0; i < chosen.victims.size(); ++i) {
    evictions.push_back({chosen.victims[i], chosen.violates_pdb[i], chosen.VictimPriority(i)});
  }
  metrics_.ObserveVictims(evictions.size());
  if (actuator_ != nullptr) {
    actuator_->Preempt(pod, node, evictions);
    std::vector<PodInfoPtr> lower;
    for (const auto& p : handle_->nominator().NominatedPodsForNode(node)) {
      if (EffectivePriority(*handle_, p->pod) < pod.pod.priority && p->uid() != pod.uid()) lower.push_back(p);
    }
    for (const auto& p : lower) actuator_->ClearNomination(p);
  }
  out.status = Status();
  out.nominated_node_name = node;
  return out;
}

}  // namespace arbiter::sched::preemption
