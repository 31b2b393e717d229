// Per-pod default preemption: the evaluator's steps and the dry-run cache.
#include "arbiter/sched/preemption/default_preemption.h"

#include <algorithm>

#include "arbiter/sched/framework/nominator.h"

namespace arbiter::sched::preemption {

Status StrictPdbStatus(const std::vector<PdbView>& pdbs, const Candidate& c) {
  std::vector<const model::Pod*> victims;
  for (const auto& v : c.victims) victims.push_back(&v->pod);
  std::string violation = StrictPdbViolation(pdbs, victims);
  return violation.empty() ? Status() : Status(Code::kUnschedulable, std::move(violation));
}

namespace {

// Whether the profile's resource filter is in play for this cycle: only then must a candidate
// make room for the preemptor's requests.
bool ResourcesFiltered(const Framework& fw, const CycleState& state) {
  const auto active = fw.ActiveFilterPlugins(state);
  return std::any_of(active.begin(), active.end(), [](const FilterPlugin* f) { return f->ChecksOnlyNodeResources(); });
}

}  // namespace

DefaultPreemption::DefaultPreemption(Handle* handle, PreemptionActuator* actuator, Options options)
    : handle_(handle), actuator_(actuator), options_(options) {}

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

const std::vector<const NodeInfo*>& DefaultPreemption::NodesWherePreemptionMightHelp(const NodeToStatus& filtered) {
  const state::Snapshot& snap = handle_->snapshot();
  std::vector<const NodeInfo*>& potential = buffers_.potential;
  potential.clear();
  potential.reserve(snap.size());
  if (filtered.everywhere != nullptr) {
    filtered.everywhere->ForEachUnschedulable(0, /*roomy_only=*/false, [&](size_t position) {
      potential.push_back(snap.nodes()[position]);
      return true;
    });
  } else if (filtered.absent.code() == Code::kUnschedulable) {
    for (const NodeInfo* n : snap.nodes()) {
      if (filtered.Get(n->name()).code() == Code::kUnschedulable) potential.push_back(n);
    }
  } else {
    for (const auto& ns : filtered.statuses) {
      if (ns.status.code() != Code::kUnschedulable) continue;
      if (ns.node != nullptr) potential.push_back(ns.node);
    }
  }
  return potential;
}

DryRun DefaultPreemption::SelectVictimsOnNode(Evaluation& ev, const NodeInfo& node) const {
  // From v1.37 a lone pod preempts group members as units (Part B §7): group priority, the
  // shared importance order, and `all`-mode groups evicted whole. Units come first under either
  // victim policy: an `all` group is never broken up.
  if (ev.ByUnits(node)) {
    DryRun r = SelectUnitVictimsOnNode(ev, node);
    if (r.first && handle_->config().victim_selection == model::VictimSelection::kOptimal) {
      // Optimal compares every candidate by the exact count of evictions beyond the budgets.
      std::vector<const model::Pod*> victims;
      for (const auto& v : r.first->victims) victims.push_back(&v->pod);
      r.first->num_pdb_violations = static_cast<int>(EvictionsBeyondBudgets(ev.pdbs, victims));
    }
    return r;
  }
  switch (handle_->config().victim_selection) {
    case model::VictimSelection::kNomad: return nomad_.SelectVictimsOnNode(ev, node);
    case model::VictimSelection::kOptimal: return optimal_.SelectVictimsOnNode(ev, node);
    case model::VictimSelection::kKubernetes: break;
  }
  return kubernetes_.SelectVictimsOnNode(ev, node);
}

bool DefaultPreemption::DryRunCache::Begin(const Evaluation& ev, const state::Snapshot& snap) {
  // With budgets, only when they are the tracker's (a known version, the same for all).
  const auto& pdbs = ev.pdbs;
  budgets_version_ = pdbs.empty() ? 0 : pdbs.front().budgets_version;
  const bool budgets_known = std::all_of(pdbs.begin(), pdbs.end(), [&](const PdbView& v) {
    return v.budgets_version != 0 && v.budgets_version == budgets_version_;
  });
  // Not with the thrash guard: its answers change with every preemption anywhere.
  pod_class_ = ev.fast_path.applies && budgets_known && !ev.eligible.ReadsPods() ? ev.handle.pod_class() : 0;
  if (pod_class_ == 0) return false;
  if (structure_ != snap.structure_version() || entries_.size() != snap.size()) {
    entries_.assign(snap.size(), Entry{});
    structure_ = snap.structure_version();
  }
  return true;
}

bool DefaultPreemption::DryRunCache::Holds(const Evaluation& ev, const NodeInfo& node, const Entry& e) const {
  if (e.generation != node.generation() || e.pod_class != pod_class_ || (e.reads_now && e.now != ev.now)) return false;
  if (e.budgets_version != budgets_version_) return false;
  return std::all_of(e.budgets.begin(), e.budgets.end(),
                     [&](const auto& b) { return ev.pdbs[b.first].disruptions_allowed == b.second; });
}

template <typename DryRunFn>
const DryRun& DefaultPreemption::DryRunCache::Get(const Evaluation& ev, const NodeInfo& node, size_t index,
                                                  DryRunFn&& dry_run) {
  Entry& e = entries_[index];
  if (Holds(ev, node, e)) return e.result;
  e.result = dry_run();
  const auto& sums = node.pod_summaries();
  e.generation = node.generation();
  e.pod_class = pod_class_;
  // With minRuntimeSeconds every started pod's eligibility reads the time.
  e.reads_now = ev.eligible.ReadsNow() ||
                std::any_of(sums.begin(), sums.end(), [](const NodeInfo::PodSummary& p) { return !p.has_start; });
  e.now = ev.now;
  e.budgets_version = budgets_version_;
  // The budgets the dry run read: those matching one of the node's pods of at most the
  // preemptor's priority (the only pods it may take as victims; equal priority too, so that a
  // victim policy reaching them would still be covered), with their allowed disruptions now.
  e.budgets.clear();
  if (!ev.pdbs.empty()) {
    for (const auto& p : node.pods()) {
      if (p->pod.priority > ev.pod.pod.priority || p->pod.labels.empty()) continue;
      for (uint32_t i = 0; i < ev.pdbs.size(); ++i) {
        if (ev.pdbs[i].Matches(p->pod)) e.budgets.emplace_back(i, ev.pdbs[i].disruptions_allowed);
      }
    }
    std::sort(e.budgets.begin(), e.budgets.end());
    e.budgets.erase(std::unique(e.budgets.begin(), e.budgets.end()), e.budgets.end());
  }
  return e.result;
}

DefaultPreemption::Candidates DefaultPreemption::FindCandidates(Evaluation& ev, const Potential& potential,
                                                                Diagnosis& diagnosis,
                                                                std::vector<std::string>* explanation) {
  Candidates found;
  const state::Snapshot& snap = handle_->snapshot();
  // Sampling from a seeded random offset.
  const size_t want = NumCandidates(potential.count);
  const size_t offset = static_cast<size_t>(handle_->rng().Uniform(potential.count));
  if (explanation != nullptr) {
    explanation->push_back("preemption: " + std::to_string(potential.count) + " potential node(s); looking for " +
                           std::to_string(want) + " candidate(s) from offset " + std::to_string(offset));
  }
  // Dry runs are reused for an equivalent pod on an unchanged node when nothing else can change
  // their result. Not on the pod's own nominated node (there its nomination does not count), and
  // not by victim unit (a unit's pods on other nodes are read too).
  const bool cached = dry_runs_.Begin(ev, snap);
  const bool strict_pdbs = handle_->config().pdb_policy == model::PdbPolicy::kStrict;
  const NodeInfo* own_nomination = snap.Get(handle_->nominator().NominatedNode(ev.pod.uid()));
  std::vector<const Candidate*> violating;
  std::vector<const Candidate*> non_violating;
  non_violating.reserve(want);
  violating.reserve(want);
  // One potential node, in scan order; false once enough candidates are found.
  auto visit = [&](const NodeInfo& node) -> bool {
    const Candidate* candidate = nullptr;
    const Status* status = nullptr;  // read only when the node yields no candidate
    Status fresh_status;
    if (cached && &node != own_nomination && !ev.ByUnits(node)) {
      const DryRun& r = dry_runs_.Get(ev, node, snap.IndexOf(&node), [&] { return SelectVictimsOnNode(ev, node); });
      if (r.first) candidate = &*r.first;
      status = &r.second;
    } else {
      DryRun r = SelectVictimsOnNode(ev, node);
      if (r.first) candidate = &found.fresh.emplace_back(std::move(*r.first));
      fresh_status = std::move(r.second);
      status = &fresh_status;
    }
    if (candidate != nullptr && strict_pdbs && candidate->num_pdb_violations > 0) {
      // pdbPolicy Strict: a candidate that evicts more of a budget's pods than it allows is none.
      fresh_status = StrictPdbStatus(ev.pdbs, *candidate);
      if (!fresh_status.IsSuccess()) {
        candidate = nullptr;
        status = &fresh_status;
      }
    }
    if (candidate != nullptr) {
      auto& list = candidate->num_pdb_violations == 0 ? non_violating : violating;
      if (list.size() < want) list.push_back(candidate);
    } else {
      if (explanation != nullptr) explanation->push_back("node " + node.name() + ": " + status->Message());
      diagnosis.node_to_status.statuses.push_back({&node, *status});
    }
    return non_violating.empty() || non_violating.size() + violating.size() < want;
  };
  if (potential.list == nullptr) {
    // The scheduler's rejections list the nodes where room can be made: only those are visited.
    potential.rejections->ForEachUnschedulable(offset, /*roomy_only=*/true,
                                               [&](size_t position) { return visit(*snap.nodes()[position]); });
  } else {
    const auto& list = *potential.list;
    size_t at = offset;  // walks the potential nodes from the offset, wrapping once
    for (size_t i = 0; i < list.size(); ++i, at = at + 1 == list.size() ? 0 : at + 1) {
      const NodeInfo& node = *list[at];
      if (potential.by_room && !node.CouldMakeRoomFor(ev.pod.pod)) {
        ++metrics_.dry_runs_skipped;
        continue;
      }
      if (!visit(node)) break;
    }
  }
  found.list = std::move(non_violating);
  found.list.insert(found.list.end(), violating.begin(), violating.end());
  return found;
}

void DefaultPreemption::PrepareCandidate(const PodInfo& pod, const Candidate& chosen) {
  std::vector<Eviction> evictions;
  for (size_t i = 0; i < chosen.victims.size(); ++i) {
    evictions.push_back({chosen.victims[i], chosen.violates_pdb[i], chosen.VictimPriority(i)});
  }
  metrics_.ObserveVictims(evictions.size());
  if (actuator_ == nullptr) return;
  const std::string& node = chosen.node->name();
  actuator_->Preempt(pod, node, evictions);
  std::vector<PodInfoPtr> lower;
  for (const auto& p : handle_->nominator().NominatedPodsForNode(node)) {
    if (EffectivePriority(*handle_, p->pod) < pod.pod.priority && p->uid() != pod.uid()) lower.push_back(p);
  }
  for (const auto& p : lower) actuator_->ClearNomination(p);
}

PostFilterResult DefaultPreemption::PostFilter(CycleState& state, const PodInfo& pod, const NodeToStatus& filtered) {
  ++metrics_.attempts;
  const Clock* wall = handle_->wall_clock();
  struct Timer {  // records the evaluation time on every return path
    const Clock* wall;
    Timestamp started;
    PreemptionMetrics* m;
    ~Timer() {
      if (wall == nullptr) return;
      m->evaluation_seconds_sum += static_cast<double>(wall->Now() - started) / static_cast<double>(kSecond);
      ++m->evaluation_seconds_count;
    }
  } timer{wall, wall != nullptr ? wall->Now() : 0, &metrics_};
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
  // 2) Potential nodes. Where no room can be made is skipped when nobody reads why (see the
  // header); when the scheduler answered from its class's rejections, those list the nodes.
  Potential potential;
  potential.by_room = options_.room_bound && !explain && !handle_->composing_messages() &&
                      ResourcesFiltered(handle_->framework(), state);
  if (potential.by_room && filtered.everywhere != nullptr) {
    potential.rejections = filtered.everywhere;
    potential.count = filtered.everywhere->unschedulable();
  } else {
    potential.list = &NodesWherePreemptionMightHelp(filtered);
    potential.count = potential.list->size();
  }
  // 3) Candidates. Nodes without one are many once most nodes run preemptors: their statuses go
  // into a buffer kept across calls.
  Diagnosis diagnosis;
  diagnosis.node_to_status.absent = Status(Code::kUnschedulableAndUnresolvable, NotHelpfulReasons());
  diagnosis.node_to_status.statuses = std::move(buffers_.no_candidate);
  diagnosis.node_to_status.statuses.clear();
  struct Recycle {
    std::vector<NodeStatus>& from;
    std::vector<NodeStatus>& to;
    ~Recycle() { to = std::move(from); }
  } recycle{diagnosis.node_to_status.statuses, buffers_.no_candidate};
  std::optional<Evaluation> ev;
  Candidates candidates;
  if (potential.count > 0) {
    ev.emplace(*handle_, state, pod, actuator_ != nullptr ? actuator_->Pdbs() : std::vector<PdbView>{},
               FastPath::For(handle_->framework(), state, options_.resource_fast_path),
               actuator_ != nullptr ? actuator_->History() : nullptr);
    candidates = FindCandidates(*ev, potential, diagnosis, explain ? &out.explanation : nullptr);
  }
  if (ev && ev->optimal.searched + ev->optimal.not_applicable > 0) {
    const auto& o = ev->optimal;
    metrics_.optimal_searches += o.searched;
    metrics_.optimal_fallbacks += o.fallbacks;
    metrics_.optimal_not_applicable += o.not_applicable;
    if (explain) {
      std::string line = "preemption: victimSelection Optimal searched " + std::to_string(o.searched) + " node(s) in " +
                         std::to_string(o.steps) + " step(s)";
      if (o.fallbacks > 0) {
        line += "; the search bound was hit on " + std::to_string(o.fallbacks) + " node(s), which keep the greedy victims:";
        for (const auto& n : o.fallback_nodes) line += " " + n;
      }
      if (o.not_applicable > 0) {
        line += "; " + std::to_string(o.not_applicable) +
                " node(s) keep the greedy victims because filters other than resources read their pods";
      }
      out.explanation.push_back(line);
    }
  }
  if (explain && ev && ev->cross_node_candidates + ev->cross_node_skipped > 0) {
    std::string line = "preemption: crossNodePreemption: " + std::to_string(ev->cross_node_candidates) +
                       " candidate(s) evict pods of other nodes in their topology domains";
    if (ev->cross_node_skipped > 0) {
      line += "; " + std::to_string(ev->cross_node_skipped) + " node(s) had more than " +
              std::to_string(kMaxCrossNodeVictims) + " such pods in play and keep upstream's answer";
    }
    out.explanation.push_back(line);
  }
  if (candidates.list.empty()) {
    // No node can help: the nomination is cleared.
    out.status = unschedulable(FitErrorMessage(handle_->snapshot().size(), diagnosis));
    out.nominated_node_name = "";
    if (explain) out.explanation.push_back("preemption: no candidate node");
    return out;
  }
  if (explain) {
    for (const Candidate* c : candidates.list) {
      Candidate shown = *c;
      shown.Materialize();
      out.explanation.push_back(shown.Describe());
    }
  }
  // 4) Choose.
  PickOptions pick;
  pick.lost_work = handle_->config().victim_cost == model::VictimCost::kLostWork;
  pick.now = ev->now;
  auto [best, rule] = PickOneNodeForPreemption(candidates.list, pick);
  Candidate chosen = *candidates.list[best];
  chosen.Materialize();
  if (explain) out.explanation.push_back("preemption: chose " + chosen.node->name() + " (" + rule + ")");
  // 5) Carry it out: evict, then clear lower-priority nominations to that node.
  PrepareCandidate(pod, chosen);
  out.status = Status();
  out.nominated_node_name = chosen.node->name();
  return out;
}

}  // namespace arbiter::sched::preemption
