// PDB status kept by increments (see pdb_status.h); CurrentPdbViews is the rule it follows.
#include "arbiter/sched/preemption/pdb_status.h"

#include <cstdio>
#include <cstdlib>

namespace arbiter::sched::preemption {

void PdbStatusTracker::SetBudgets(std::vector<model::PodDisruptionBudget> pdbs) {
  pdbs_ = std::move(pdbs);
  gone_evicted_.clear();
  Recount();
}

void PdbStatusTracker::AddBudget(model::PodDisruptionBudget pdb) {
  pdbs_.push_back(std::move(pdb));
  Recount();
}

void PdbStatusTracker::Recount() {
  ++version_;
  disrupted_.assign(pdbs_.size(), {});
  for (size_t i = 0; i < pdbs_.size(); ++i) disrupted_[i].insert(pdbs_[i].disrupted_pods.begin(), pdbs_[i].disrupted_pods.end());
  counts_.assign(pdbs_.size(), Counts{});
  for (auto& [uid, e] : entries_) {  // sums only: the order does not matter
    MatchAll(e);
    Apply(e, +1);
  }
  for (const auto& [key, g] : gone_evicted_) ApplyGone(g, +1);
}

void PdbStatusTracker::ApplyGone(const GonePod& g, int sign) {
  const std::string key = g.ns + "/" + g.name;
  for (size_t i = 0; i < pdbs_.size(); ++i) {
    if (!BudgetCounts(pdbs_[i].ns, pdbs_[i].selector, g.ns, g.labels) || disrupted_[i].count(key)) continue;
    counts_[i].evicted += sign;
  }
}

void PdbStatusTracker::MatchAll(Entry& e) const {
  e.matches.clear();
  if (!e.known) return;
  std::string key;
  for (size_t i = 0; i < pdbs_.size(); ++i) {
    const model::PodDisruptionBudget& pdb = pdbs_[i];
    if (!BudgetCounts(pdb.ns, pdb.selector, e.ns, e.labels)) continue;
    if (key.empty()) key = e.Key();
    e.matches.push_back({static_cast<uint32_t>(i), disrupted_[i].count(key) > 0});
  }
}

void PdbStatusTracker::Apply(const Entry& e, int sign) {
  if (!e.known) return;
  const bool evicted = !e.matches.empty() && !evicted_.empty() && evicted_.count(e.Key()) > 0;
  for (const Match& m : e.matches) {
    Counts& c = counts_[m.pdb];
    c.expected += sign;
    if (m.disrupted) continue;
    if (e.healthy) c.healthy += sign;
    if (evicted) c.evicted += sign;
  }
}

void PdbStatusTracker::Know(const model::Pod& pod) {
  Entry& e = entries_[pod.uid];
  const bool same = e.known && e.ns == pod.ns && e.name == pod.name && e.labels == pod.labels;
  if (same) return;  // nothing it is counted by changed
  Apply(e, -1);
  if (e.known) Unindex(e.Key(), pod.uid);
  e.known = true;
  e.ns = pod.ns;
  e.name = pod.name;
  e.labels = pod.labels;
  // A pod of the name of an evicted one that went counts as itself now (and as evicted, by name).
  if (auto g = gone_evicted_.find(e.Key()); g != gone_evicted_.end()) {
    ApplyGone(g->second, -1);
    gone_evicted_.erase(g);
  }
  uids_by_key_[e.Key()].insert(pod.uid);
  MatchAll(e);
  Apply(e, +1);
}

void PdbStatusTracker::Unindex(const std::string& key, const std::string& uid) {
  auto k = uids_by_key_.find(key);
  if (k == uids_by_key_.end()) return;
  k->second.erase(uid);
  if (k->second.empty()) uids_by_key_.erase(k);
}

void PdbStatusTracker::Forget(const std::string& uid) {
  auto it = entries_.find(uid);
  if (it == entries_.end() || !it->second.known) return;
  Entry& e = it->second;
  Apply(e, -1);
  Unindex(e.Key(), uid);
  if (evicted_.count(e.Key()) && !uids_by_key_.count(e.Key())) {
    GonePod& g = gone_evicted_[e.Key()];
    g = {e.ns, e.name, e.labels};
    ApplyGone(g, +1);
  }
  if (!e.healthy) {
    entries_.erase(it);
    return;
  }
  e.known = false;
  e.ns.clear();
  e.name.clear();
  e.labels = {};
  e.matches.clear();
}

void PdbStatusTracker::BoundChanged(const model::Pod* before, const model::Pod* after) {
  const model::Pod* any = after != nullptr ? after : before;
  if (any == nullptr) return;
  const bool healthy = after != nullptr && !after->deletion_timestamp;
  auto it = entries_.find(any->uid);
  if (it == entries_.end()) {
    if (healthy) entries_[any->uid].healthy = true;  // bound before it is known: counts once known
    return;
  }
  Entry& e = it->second;
  if (e.healthy == healthy) return;
  Apply(e, -1);
  e.healthy = healthy;
  Apply(e, +1);
  if (!e.known && !e.healthy) entries_.erase(it);
}

void PdbStatusTracker::Evicted(const std::string& key) {
  if (evicted_.count(key)) return;
  auto k = uids_by_key_.find(key);
  if (k != uids_by_key_.end()) {
    for (const auto& uid : k->second) Apply(entries_.at(uid), -1);
  }
  evicted_.insert(key);
  if (k != uids_by_key_.end()) {
    for (const auto& uid : k->second) Apply(entries_.at(uid), +1);
  }
}

std::vector<PdbView> PdbStatusTracker::Views() const {
  std::vector<PdbView> out;
  out.reserve(pdbs_.size());
  for (size_t i = 0; i < pdbs_.size(); ++i) {
    const model::PodDisruptionBudget& pdb = pdbs_[i];
    const Counts& c = counts_[i];
    PdbView v;
    v.ns = pdb.ns;
    v.name = pdb.name;
    v.selector = pdb.selector;
    v.disrupted_pods.insert(disrupted_[i].begin(), disrupted_[i].end());
    v.disruptions_allowed = DisruptionsAllowed(pdb, c.expected, c.healthy, c.evicted);
    v.budgets_version = version_;
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<PdbView> PdbStatusTracker::RecountedViews(
    const std::function<const model::Pod*(const std::string& uid)>& bound,
    const std::vector<const model::Pod*>* known_pods) const {
  std::vector<model::Pod> known;
  std::vector<const model::Pod*> pods;
  if (known_pods != nullptr) {
    pods = *known_pods;
  } else {
    for (const auto& [uid, e] : entries_) {  // CurrentPdbViews only counts: the order does not matter
      if (!e.known) continue;
      model::Pod& p = known.emplace_back();
      p.uid = uid;
      p.ns = e.ns;
      p.name = e.name;
      p.labels = e.labels;
    }
    for (const auto& p : known) pods.push_back(&p);
  }
  std::set<std::string> evicted(evicted_.begin(), evicted_.end());
  std::vector<model::Pod> gone;
  gone.reserve(gone_evicted_.size());
  for (const auto& [key, g] : gone_evicted_) {
    model::Pod& p = gone.emplace_back();
    p.ns = g.ns;
    p.name = g.name;
    p.labels = g.labels;
  }
  std::vector<const model::Pod*> gone_pods;
  for (const auto& p : gone) gone_pods.push_back(&p);
  return CurrentPdbViews(
      pdbs_, pods,
      [&](const model::Pod& pod) {
        const model::Pod* b = bound(pod.uid);
        return b != nullptr && !b->deletion_timestamp;
      },
      evicted, gone_pods);
}

void PdbStatusTracker::CheckAgainstRecount(
    [[maybe_unused]] const std::function<const model::Pod*(const std::string& uid)>& bound,
    [[maybe_unused]] const std::vector<const model::Pod*>* known_pods) const {
#ifndef NDEBUG
  const std::vector<PdbView> kept = Views(), recounted = RecountedViews(bound, known_pods);
  for (size_t i = 0; i < kept.size(); ++i) {
    if (kept[i].disruptions_allowed == recounted[i].disruptions_allowed) continue;
    std::fprintf(stderr, "arbiter: internal error: PodDisruptionBudget %s/%s allows %d disruptions as counted, %d as recounted\n",
                 kept[i].ns.c_str(), kept[i].name.c_str(), kept[i].disruptions_allowed, recounted[i].disruptions_allowed);
    std::abort();
  }
#endif
}

void PdbStatusTracker::ForgetPods() {
  counts_.assign(pdbs_.size(), Counts{});
  entries_.clear();
  uids_by_key_.clear();
  for (const auto& [key, g] : gone_evicted_) ApplyGone(g, +1);
}

}  // namespace arbiter::sched::preemption
