// victimSelection: Optimal for pods (Arbiter's option, docs/upstream-rules.md Part F§4):
// upstream's greedy answer, then model::ExactVictimSearch over the node's potential victims for a
// set that ranks strictly better under the order kube-scheduler's node choice compares (§7).
#include <algorithm>
#include <string>
#include <vector>

#include "arbiter/model/exact_victims.h"
#include "arbiter/sched/preemption/victim_selection.h"

namespace arbiter::sched::preemption {

namespace {

using model::ExactAmount;

// A resource dimension the preemptor asks for.
struct Dim {
  enum Kind { kCpu, kMemory, kEphemeral, kScalar } kind;
  std::string name;  // kScalar
  int64_t Of(const model::Resources& r) const {
    switch (kind) {
      case kCpu: return r.milli_cpu;
      case kMemory: return r.memory;
      case kEphemeral: return r.ephemeral_storage;
      case kScalar: return r.Scalar(name);
    }
    return 0;
  }
};

// What must be freed on the node for the preemptor to fit (state::FitsResources, with the
// nominated pods of equal or higher priority counted, §14.2): per dimension it asks for, and in
// pods for its slot.
struct Needs {
  std::vector<Dim> dims;
  std::vector<ExactAmount> amounts;
  int64_t pods = 0;
};

Needs NeedsOf(const Evaluation& ev, const NodeInfo& node) {
  const model::Resources& want = ev.pod.pod.requests;
  const model::Resources& alloc = node.allocatable();
  model::Resources used = node.requested();
  int64_t count = static_cast<int64_t>(node.pods().size());
  SmallVector<const NodeInfo::Nominated*, 8> nominated;
  node.NominatedAtLeast(ev.pod, nominated);
  for (const NodeInfo::Nominated* np : nominated) {
    used.Add(np->pod->pod.requests);
    ++count;
  }
  Needs n;
  auto dim = [&](Dim d, int64_t w, int64_t have, int64_t in_use) {
    if (w <= 0) return;  // only a positive request must fit
    n.amounts.push_back(ExactAmount{w} - (ExactAmount{have} - ExactAmount{in_use}));
    n.dims.push_back(std::move(d));
  };
  dim({Dim::kCpu, {}}, want.milli_cpu, alloc.milli_cpu, used.milli_cpu);
  dim({Dim::kMemory, {}}, want.memory, alloc.memory, used.memory);
  dim({Dim::kEphemeral, {}}, want.ephemeral_storage, alloc.ephemeral_storage, used.ephemeral_storage);
  for (const auto& [name, w] : want.scalars) dim({Dim::kScalar, name}, w, alloc.Scalar(name), used.Scalar(name));
  n.pods = count + 1 - alloc.pods;
  return n;
}

// The budgets a pod is charged to (those matching it that do not count it as disrupted already).
std::vector<uint32_t> BudgetsOf(const Evaluation& ev, const model::Pod& p) {
  std::vector<uint32_t> out;
  const std::string key = p.Key();
  for (uint32_t b = 0; b < ev.pdbs.size(); ++b) {
    if (ev.pdbs[b].Charges(p, key)) out.push_back(b);
  }
  return out;
}

}  // namespace

DryRun OptimalVictimSelection::SelectVictimsOnNode(Evaluation& ev, const NodeInfo& node) const {
  // Upstream's greedy answer first: it says whether any set fits (all potential victims gone) and
  // is the set to beat.
  DryRun greedy = KubernetesVictimSelection().SelectVictimsOnNode(ev, node);
  if (!greedy.first) return greedy;
  if (!ev.fast_path.applies) {
    // The exact search weighs resources only; here other filters read the node's pods.
    ++ev.optimal.not_applicable;
    return greedy;
  }
  Candidate& g = *greedy.first;
  g.Materialize();
  const Needs needs = NeedsOf(ev, node);
  std::vector<int64_t> allowed;
  for (const PdbView& v : ev.pdbs) allowed.push_back(v.disruptions_allowed);
  // A bound per node only, so that a node's answer depends on nothing else (the dry-run cache
  // keeps it for the next equivalent pod).
  model::ExactVictimSearch<PodInfoPtr> search(needs.amounts, needs.pods, std::move(allowed), kStepsPerNode);
  const Timestamp now = ev.now;
  std::vector<std::vector<uint32_t>> greedy_budgets;
  for (const auto& v : g.victims) greedy_budgets.push_back(BudgetsOf(ev, v->pod));
  std::vector<model::ExactVictimSearch<PodInfoPtr>::Member> members;
  for (size_t i = 0; i < g.victims.size(); ++i) {
    members.push_back({g.victims[i]->pod.priority, g.victims[i]->pod.start_time.value_or(now), &greedy_budgets[i]});
  }
  const model::ExactRank greedy_rank = search.RankOf(members);
  // The node choice compares every candidate's exact count of evictions beyond the budgets.
  g.num_pdb_violations = static_cast<int>(greedy_rank.violations);
  std::vector<PodInfoPtr> potential;
  for (const auto& p : node.pods()) {
    if (ev.eligible.MayEvict(p->pod.priority, p->pod)) potential.push_back(p);
  }
  // Every potential victim goes: the reprieve found that none could stay with all the others
  // gone, so no smaller set fits (removing fewer pods never frees more).
  if (g.victims.size() == potential.size()) return greedy;
  ++ev.optimal.searched;
  // Most important first, so that a class's last pods (the ones the search takes) are its least
  // important.
  std::sort(potential.begin(), potential.end(),
            [now](const PodInfoPtr& a, const PodInfoPtr& b) { return MoreImportantPod(a->pod, b->pod, now); });
  for (const auto& p : potential) {
    std::vector<ExactAmount> frees;
    for (const Dim& d : needs.dims) frees.push_back(d.Of(p->pod.requests));
    search.Add(p, p->pod.priority, p->pod.start_time.value_or(now), std::move(frees), BudgetsOf(ev, p->pod));
  }
  const bool finished = search.Run(greedy_rank);
  ev.optimal.steps += search.steps();
  if (!finished) {
    ++ev.optimal.fallbacks;
    ev.optimal.fallback_nodes.push_back(node.name());
    return greedy;
  }
  if (!search.improved()) return greedy;
  std::vector<PodInfoPtr> victims = search.Victims();
  std::sort(victims.begin(), victims.end(),
            [now](const PodInfoPtr& a, const PodInfoPtr& b) { return MoreImportantPod(a->pod, b->pod, now); });
  Candidate c;
  c.node = &node;
  PdbBudgets budgets(ev.pdbs);
  for (auto& v : victims) {
    const bool violating = budgets.Consume(v->pod);
    c.AddVictim(std::move(v), violating);
  }
  c.num_pdb_violations = static_cast<int>(search.best().violations);
  c.SetKeys(now);
  return {std::move(c), {}};
}

}  // namespace arbiter::sched::preemption
