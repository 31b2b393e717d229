// Workload-aware preemption: remove every potential victim, place the group once, reprieve.
#include "arbiter/sched/preemption/workload_preemption.h"

#include <algorithm>
#include <map>
#include <set>

#include "arbiter/sched/framework/framework.h"
#include "arbiter/sched/framework/nominator.h"
#include "arbiter/sched/preemption/candidate.h"
#include "arbiter/sched/preemption/eligibility.h"
#include "arbiter/sched/preemption/reprieve.h"
#include "arbiter/sched/preemption/victim_units.h"

namespace arbiter::sched::preemption {

std::vector<const model::Pod*> WorkloadPreemption::PodsOf(const std::vector<const VictimUnit*>& victims) {
  std::vector<const model::Pod*> all;
  for (const VictimUnit* u : victims) {
    for (const auto& p : u->pods) all.push_back(&p->pod);
  }
  return all;
}

WorkloadPreemption::GroupAttempt WorkloadPreemption::Attempt(const state::GroupNode& root,
                                                             const std::vector<PodInfoPtr>& pods,
                                                             const std::vector<VictimUnit*>& units,
                                                             const NodePositions& where) {
  GroupAttempt r;
  state::Snapshot& snap = host_->mutable_snapshot();
  constexpr size_t kNowhere = SIZE_MAX;
  auto position = [&](const PodInfoPtr& p) {
    if (auto it = where.find(p.get()); it != where.end()) return static_cast<size_t>(it->second);
    const NodeInfo* n = snap.Get(p->pod.node_name);
    return n != nullptr ? snap.IndexOf(n) : kNowhere;
  };
  // 4) Remove every potential victim: gathered by node, and each node's in one pass over its pods
  // (the snapshot ends as removing them one by one leaves it).
  std::vector<std::pair<size_t, const PodInfo*>> gone;
  for (const VictimUnit* u : units) {
    for (const auto& p : u->pods) gone.emplace_back(position(p), p.get());
  }
  std::stable_sort(gone.begin(), gone.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const PodInfo*> batch;
  for (size_t i = 0, j = 0; i < gone.size(); i = j) {
    batch.clear();
    for (j = i; j < gone.size() && gone[j].first == gone[i].first; ++j) batch.push_back(gone[j].second);
    if (gone[i].first != kNowhere) snap.RemovePodsAt(gone[i].first, batch);
  }
  // 5) Place the group once.
  GroupPlacement placement = host_->PlaceGroup(root, pods);
  // The placement left the placed pods assumed; reprieval replays them, so take them off.
  const Framework& fw = host_->framework();
  for (auto& pp : placement.placed) {
    snap.RemovePod(pp.node, pp.pod->uid());
    fw.RunUnreservePlugins(pp.state, *pp.pod, pp.node);
  }
  if (!placement.feasible || placement.placed.empty()) {
    host_->RestoreSnapshot();
    r.reason = placement.reason;
    return r;
  }
  r.placed_any = true;
  for (const auto& pp : placement.placed) r.nominations.emplace_back(pp.pod, pp.node);

  // 6) Reprieve in place.
  bool node_local = true;
  for (const auto& pp : placement.placed) {
    node_local = node_local && fw.VerdictsDependOnlyOnNode(pp.state) && !fw.HasActivePreFilterExtensions(pp.state);
  }
  std::map<size_t, std::vector<size_t>> placed_on;  // node position -> placed pods, in order
  for (size_t i = 0; i < placement.placed.size(); ++i) {
    if (const NodeInfo* n = snap.Get(placement.placed[i].node)) placed_on[snap.IndexOf(n)].push_back(i);
  }
  std::vector<size_t> all_placed(placement.placed.size());
  for (size_t i = 0; i < all_placed.size(); ++i) all_placed[i] = i;

  auto extension = [&](const PodInfoPtr& p, bool add) {
    if (node_local) return;  // no placed pod has an active PreFilter extension
    const NodeInfo* n = snap.Get(p->pod.node_name);
    if (n == nullptr) return;
    for (auto& pp : placement.placed) {
      if (!fw.HasActivePreFilterExtensions(pp.state)) continue;
      if (add) {
        (void)fw.RunPreFilterExtensionAddPod(pp.state, *pp.pod, *p, *n);
      } else {
        (void)fw.RunPreFilterExtensionRemovePod(pp.state, *pp.pod, *p, *n);
      }
    }
  };
  // Replays `which` (indices into placement.placed, in order); true if all pass. Always rolls
  // the replayed pods back.
  auto replay = [&](const std::vector<size_t>& which) {
    size_t added = 0;
    bool ok = true;
    for (size_t i : which) {
      PlacedPod& pp = placement.placed[i];
      const NodeInfo* n = snap.Get(pp.node);
      if (n == nullptr || !fw.RunFilterPluginsWithNominatedPods(pp.state, *pp.pod, *n).IsSuccess()) {
        ok = false;
        break;
      }
      model::Pod assumed = pp.pod->pod;
      assumed.node_name = pp.node;
      snap.AddPod(state::MakePodInfo(std::move(assumed)));
      (void)fw.RunReservePlugins(pp.state, *pp.pod, pp.node);
      ++added;
    }
    for (size_t k = 0; k < added; ++k) {
      PlacedPod& pp = placement.placed[which[k]];
      snap.RemovePod(pp.node, pp.pod->uid());
      fw.RunUnreservePlugins(pp.state, *pp.pod, pp.node);
    }
    return ok;
  };

  (void)GreedyReprieve(
      units,
      [&](const VictimUnit* u, Status*) {
        // The placed pods' nodes the unit has a pod on (replayed when only those can change).
        std::set<size_t> touched;
        if (node_local) {
          for (const auto& p : u->pods) {
            if (const size_t at = position(p); placed_on.contains(at)) touched.insert(at);
          }
          if (touched.empty()) {
            // Every verdict in play is decided by its node alone, so putting the unit back would
            // change no replay and it stays. It is left out of the snapshot, restored below.
            ++r.reprieved;
            return true;
          }
        }
        for (const auto& p : u->pods) {
          snap.AddPod(p);
          extension(p, true);
        }
        bool keep = true;
        if (node_local) {
          for (size_t at : touched) {
            if (!replay(placed_on.at(at))) {
              keep = false;
              break;
            }
          }
        } else {
          keep = replay(all_placed);
        }
        if (keep) {
          ++r.reprieved;
          return true;
        }
        for (const auto& p : u->pods) {
          extension(p, false);
          snap.RemovePod(p->pod.node_name, p->uid());
        }
        return false;
      },
      [&](const VictimUnit* u) { r.victims.push_back(u); });
  host_->RestoreSnapshot();
  return r;
}

namespace {

// An attempt's whole victim set as node choice sees a candidate: victims most important first,
// each at its unit's priority, budgets counted as evictions beyond their allowances.
Candidate Ranked(const std::vector<const VictimUnit*>& victims, const std::vector<PdbView>& pdbs,
                 const std::vector<const model::Pod*>& pods, Timestamp now) {
  std::vector<const VictimUnit*> sorted = victims;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const VictimUnit* a, const VictimUnit* b) { return MoreImportantUnit(*a, *b); });
  Candidate c;
  for (const VictimUnit* u : sorted) {
    for (const auto& p : u->pods) {
      c.AddVictim(p, false);
      c.victim_priorities.push_back(u->priority);
    }
  }
  c.num_pdb_violations = static_cast<int>(EvictionsBeyondBudgets(pdbs, pods));
  c.SetKeys(now);
  return c;
}

}  // namespace

void WorkloadPreemption::ChooseAmongDomains(const state::GroupNode& root, const std::vector<PodInfoPtr>& pods,
                                            const std::vector<VictimUnit*>& units, const NodePositions& where,
                                            const std::vector<PdbView>& pdbs, GroupAttempt& chosen, std::string& strict_violation,
                                            std::vector<std::string>& explanation) {
  if (chosen.victims.empty()) return;  // nothing to improve on
  const bool explain = host_->explaining();
  const bool strict = host_->config().pdb_policy == model::PdbPolicy::kStrict;
  const Timestamp now = host_->clock().Now();
  // The keys whose domains the group could use, in a fixed order.
  std::vector<std::string> keys;
  auto add_key = [&](const std::string& k) {
    if (!k.empty() && std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  };
  for (const auto& p : pods) {
    for (const auto& t : p->pod.affinity.pod_affinity.required) add_key(t.topology_key);
    for (const auto& t : p->pod.affinity.pod_anti_affinity.required) add_key(t.topology_key);
    for (const auto& c : p->pod.topology_spread_constraints) add_key(c.topology_key);
  }
  add_key("topology.kubernetes.io/zone");
  const state::Snapshot& snap = host_->snapshot();
  std::vector<std::pair<std::string, std::string>> domains;  // (key, value)
  size_t left_out = 0;
  for (const std::string& key : keys) {
    std::set<std::string> values;
    for (const NodeInfo* n : snap.nodes()) {
      if (const std::string* v = n->node().labels.Find(key)) values.insert(*v);
    }
    for (const std::string& v : values) {
      if (domains.size() < kMaxGroupAlternatives) {
        domains.emplace_back(key, v);
      } else {
        ++left_out;
      }
    }
  }

  // Candidates: the upstream attempt first (when it may be chosen), then one per domain.
  std::vector<GroupAttempt> attempts;
  std::vector<std::string> labels;
  std::vector<Candidate> ranked;
  auto consider = [&](GroupAttempt a, std::string label) {
    if (!a.placed_any || a.victims.empty()) return;
    const std::vector<const model::Pod*> victim_pods = PodsOf(a.victims);
    if (strict && !StrictPdbViolation(pdbs, victim_pods).empty()) return;
    ranked.push_back(Ranked(a.victims, pdbs, victim_pods, now));
    attempts.push_back(std::move(a));
    labels.push_back(std::move(label));
  };
  consider(chosen, "the whole cluster (upstream's placement)");
  size_t tried = 0;
  for (const auto& [key, value] : domains) {
    std::vector<VictimUnit*> within;
    for (VictimUnit* u : units) {
      for (const auto& p : u->pods) {
        const NodeInfo* n = snap.Get(p->pod.node_name);
        if (n == nullptr) continue;
        const std::string* v = n->node().labels.Find(key);
        if (v != nullptr && *v == value) {
          within.push_back(u);
          break;
        }
      }
    }
    if (within.empty() || within.size() == units.size()) continue;  // nothing to evict, or upstream's own attempt
    ++tried;
    consider(Attempt(root, pods, within, where), key + "=" + value);
  }
  if (explain) {
    explanation.push_back("preemption (victimSelection Optimal): " + std::to_string(tried) +
                          " alternative placement(s) by topology domain tried" +
                          (left_out > 0 ? ", " + std::to_string(left_out) + " domain(s) beyond the bound of " +
                                              std::to_string(kMaxGroupAlternatives) + " left out"
                                        : std::string()));
  }
  if (ranked.empty()) return;  // no attempt is allowed: the upstream attempt's outcome stands
  std::vector<const Candidate*> pointers;
  for (const Candidate& c : ranked) pointers.push_back(&c);
  PickOptions options;
  options.lost_work = host_->config().victim_cost == model::VictimCost::kLostWork;
  options.now = now;
  const auto [best, rule] = PickOneNodeForPreemption(pointers, options);
  if (explain) {
    explanation.push_back("preemption (victimSelection Optimal): preempting within " + labels[best] + ", " +
                          std::to_string(ranked[best].victim_count) + " victim(s), ranks best (" + rule + ")");
  }
  chosen = std::move(attempts[best]);
  strict_violation.clear();
}

GroupPostFilterResult WorkloadPreemption::PodGroupPostFilter(const state::GroupNode& root,
                                                            const std::vector<PodInfoPtr>& pods) {
  ++metrics_.attempts;
  GroupPostFilterResult out;
  const int32_t priority = root.priority;
  const bool explain = host_->explaining();
  auto fail = [&](std::string msg) {
    out.message = "preemption: " + std::move(msg);
    if (explain) out.explanation.push_back(out.message);
    return out;
  };

  // 0) Eligibility.
  if (root.preemption_policy == model::PreemptionPolicy::kNever) {
    return fail("not eligible due to preemptionPolicy=Never.");
  }
  const UnitBuilder priorities(*host_);
  Nominator& nominator = host_->nominator();
  for (const auto& p : pods) {
    const std::string n = nominator.NominatedNode(p->uid());
    const NodeInfo* node = n.empty() ? nullptr : host_->snapshot().Get(n);
    if (node == nullptr) continue;
    for (const auto& q : node->pods()) {
      if (q->pod.deletion_timestamp && q->pod.preempted_by_scheduler && priorities.PriorityOf(q->pod) < priority) {
        out.waiting = true;
        for (const auto& m : pods) {
          const std::string at = nominator.NominatedNode(m->uid());
          if (!at.empty()) out.nominations.emplace_back(m, at);
        }
        return fail("pod group is waiting for podgroup preemption to complete");
      }
    }
  }

  // 1-2) Units of strictly lower priority (or as the options narrow it: eligibility.h), over the
  // whole cluster.
  UnitBuilder builder(*host_);
  const VictimEligibility eligible(host_->config(), priority, host_->clock().Now(),
                                   actuator_ != nullptr ? actuator_->History() : nullptr,
                                   VictimEligibility::Scope::kUnits);
  // A node that can hold no victim is passed over, and a pod in no group that may not go is
  // ruled out by its summary, without reading the pod.
  std::vector<size_t> ids;
  std::set<size_t> seen;
  NodePositions where;  // each pod looked at, by its node's position
  const state::Snapshot& snap = host_->snapshot();
  for (const NodeInfo* n : snap.nodes()) {
    if (!eligible.MayHoldVictims(*n)) continue;
    const auto position = static_cast<uint32_t>(snap.IndexOf(n));
    const auto& summaries = n->pod_summaries();
    for (size_t i = 0; i < n->pods().size(); ++i) {
      const NodeInfo::PodSummary& s = summaries[i];
      if (!s.in_group && !eligible.MayEvict(s.priority, s.has_start, s.start)) continue;
      const PodInfoPtr& p = n->pods()[i];
      const UnitBuilder::Looked looked = builder.Look(p->pod);
      if (!eligible.MayEvict(looked.priority, p->pod)) continue;
      where.emplace(p.get(), position);
      const size_t id = builder.UnitOf(p, looked);
      if (!seen.insert(id).second) continue;
      const VictimUnit& unit = builder.units()[id];
      if (eligible.MayEvictAll(unit.priority, unit.pods)) ids.push_back(id);
    }
  }
  if (ids.empty()) return fail("No preemption victims found for incoming pod group.");
  std::vector<VictimUnit*> units;
  for (size_t id : ids) units.push_back(&builder.units()[id]);
  // 3) Importance, then PDB classification; violating units are tried first.
  std::stable_sort(units.begin(), units.end(),
                   [](const VictimUnit* a, const VictimUnit* b) { return MoreImportantUnit(*a, *b); });
  const std::vector<PdbView> pdbs = actuator_ != nullptr ? actuator_->Pdbs() : std::vector<PdbView>{};
  ClassifyByPdb(units, pdbs);
  std::stable_partition(units.begin(), units.end(), [](const VictimUnit* u) { return u->violates_pdb; });

  // 4-6) The upstream attempt: every potential victim removed, the group placed once, reprieval.
  GroupAttempt chosen = Attempt(root, pods, units, where);
  if (!chosen.placed_any) {
    return fail("the pod group does not fit even with all " + std::to_string(units.size()) +
                " lower-priority victim unit(s) removed" +
                (chosen.reason.empty() ? std::string(".") : ": " + chosen.reason + "."));
  }
  if (explain) {
    out.explanation.push_back("preemption: " + std::to_string(units.size()) + " potential victim unit(s); the group places " +
                              std::to_string(chosen.nominations.size()) + " pod(s) with all of them removed");
  }
  const bool strict = host_->config().pdb_policy == model::PdbPolicy::kStrict;
  // pdbPolicy Strict: the group stays pending rather than exceed a budget.
  std::string strict_violation = strict ? StrictPdbViolation(pdbs, PodsOf(chosen.victims)) : std::string();
  if (host_->config().victim_selection == model::VictimSelection::kOptimal) {
    // victimSelection Optimal (Arbiter's, off by default): alternative placements, one per
    // topology domain the group could use, each preempting only within its domain; the attempt
    // whose whole victim set ranks best under the node choice's order wins (upstream's on ties).
    ChooseAmongDomains(root, pods, units, where, pdbs, chosen, strict_violation, out.explanation);
  }
  if (chosen.victims.empty()) return fail("Preemption is not helpful for scheduling the pod group.");
  if (!strict_violation.empty()) return fail(strict_violation + ".");
  metrics_.reprieved += chosen.reprieved;
  std::vector<const VictimUnit*>& victims = chosen.victims;

  // 7-8) Evict whole units, most important first, and nominate the placed pods.
  std::stable_sort(victims.begin(), victims.end(),
                   [](const VictimUnit* a, const VictimUnit* b) { return MoreImportantUnit(*a, *b); });
  std::vector<Eviction> evictions;
  for (const VictimUnit* u : victims) {
    for (const auto& p : u->pods) evictions.push_back({p, u->violates_pdb, u->priority});
  }
  ++metrics_.preemptions;
  metrics_.victims += evictions.size();
  if (actuator_ != nullptr) actuator_->PreemptForGroup(root.key, root.Kind(), evictions);
  for (const auto& [pod, node] : chosen.nominations) {
    nominator.AddNominatedPod(pod, node);
    out.nominations.emplace_back(pod, node);
  }
  out.preempted = true;
  out.message = "preemption: found a placement for " + std::string(root.composite ? "compositepodgroup" : "podgroup") +
                ", preempting " + std::to_string(evictions.size()) + " victims.";
  if (explain) {
    out.explanation.push_back(out.message);
    for (const auto& e : evictions) {
      out.explanation.push_back("  victim " + e.victim->pod.Key() + " on " + e.victim->pod.node_name + " (priority " +
                                std::to_string(e.priority) + (e.violates_pdb ? ", violates PDB" : "") + ")");
    }
  }
  return out;
}

}  // namespace arbiter::sched::preemption
