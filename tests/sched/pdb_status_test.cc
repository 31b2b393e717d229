// PdbStatusTracker keeps, by increments, the budgets CurrentPdbViews computes from every pod:
// random sequences of pods known and forgotten, bound, updated, terminating and evicted, over
// budgets with a status or a spec, must give the recount's answer after every step.
#include "arbiter/sched/preemption/pdb_status.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace arbiter::sched::preemption {
namespace {

model::PodDisruptionBudget Budget(const std::string& name, const std::string& ns, const std::string& app) {
  model::PodDisruptionBudget b;
  b.name = name;
  b.ns = ns;
  if (!app.empty()) b.selector.requirements.push_back({"app", model::SelectorOp::kIn, {app}});
  return b;
}

// A pod "p" (UID "u", app=a) that `t` knows and the cache holds bound.
model::Pod KnownAndBound(PdbStatusTracker& t) {
  model::Pod p;
  p.name = "p";
  p.uid = "u";
  p.labels.Set("app", "a");
  t.Know(p);
  t.BoundChanged(nullptr, &p);
  return p;
}

TEST(PdbStatusTracker, KeepsTheRecountsAnswerThroughRandomChanges) {
  std::mt19937 rng(31);
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < 60; ++round) {
    std::vector<model::PodDisruptionBudget> budgets;
    for (int i = 0; i < pick(1, 4); ++i) {
      model::PodDisruptionBudget b =
          Budget("b" + std::to_string(i), pick(0, 3) == 0 ? "other" : "default", pick(0, 5) == 0 ? "" : (pick(0, 1) ? "a" : "b"));
      switch (pick(0, 2)) {
        case 0: b.disruptions_allowed = pick(0, 3); break;
        case 1: b.min_available = model::IntOrPercent{pick(0, 80), pick(0, 1) == 1}; break;
        default: b.max_unavailable = model::IntOrPercent{pick(0, 3), false}; break;
      }
      if (pick(0, 3) == 0) b.disrupted_pods.push_back("default/p" + std::to_string(pick(0, 9)));
      budgets.push_back(std::move(b));
    }
    PdbStatusTracker t;
    t.SetBudgets(budgets);
    std::map<std::string, model::Pod> known;  // by UID
    std::map<std::string, model::Pod> bound;  // the cache, by UID
    std::set<std::string> evicted;
    std::map<std::string, model::Pod> gone;  // evicted, then forgotten: by "namespace/name"
    int serial = 0;
    for (int step = 0; step < 120; ++step) {
      const std::string name = "p" + std::to_string(pick(0, 9));
      // The UID of the pod known by that name, or a new one.
      std::string uid;
      for (const auto& [u, p] : known) {
        if (p.name == name) uid = u;
      }
      switch (pick(0, 6)) {
        case 0: {  // known (new, or its labels change)
          model::Pod p;
          p.name = name;
          p.uid = uid.empty() ? name + "-" + std::to_string(serial++) : uid;
          if (pick(0, 4) > 0) p.labels.Set("app", pick(0, 1) ? "a" : "b");
          known[p.uid] = p;
          gone.erase(p.Key());
          t.Know(p);
          break;
        }
        case 1:  // forgotten
          if (!uid.empty()) {
            const model::Pod p = known[uid];
            known.erase(uid);
            if (evicted.count(p.Key())) gone[p.Key()] = p;
            t.Forget(uid);
          }
          break;
        case 2:  // bound
          if (!uid.empty() && !bound.count(uid)) {
            bound[uid] = known[uid];
            t.BoundChanged(nullptr, &bound[uid]);
          }
          break;
        case 3:  // terminating in the cache
          if (bound.count(uid)) {
            model::Pod before = bound[uid];
            bound[uid].deletion_timestamp = Timestamp{1};
            t.BoundChanged(&before, &bound[uid]);
          }
          break;
        case 4:  // leaves the cache
          if (bound.count(uid)) {
            model::Pod before = bound[uid];
            bound.erase(uid);
            t.BoundChanged(&before, nullptr);
          }
          break;
        case 5:  // evicted
          evicted.insert("default/" + name);
          t.Evicted("default/" + name);
          break;
        default:  // the budgets replaced (a new status)
          if (pick(0, 5) == 0) {
            budgets[0].disruptions_allowed = pick(0, 4);
            gone.clear();
            t.SetBudgets(budgets);
          }
          break;
      }
      std::vector<const model::Pod*> pods, gone_pods;
      for (const auto& [u, p] : known) pods.push_back(&p);
      for (const auto& [k, p] : gone) gone_pods.push_back(&p);
      const auto want = CurrentPdbViews(
          budgets, pods,
          [&](const model::Pod& p) {
            auto it = bound.find(p.uid);
            return it != bound.end() && !it->second.deletion_timestamp;
          },
          evicted, gone_pods);
      const auto got = t.Views();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i].disruptions_allowed, want[i].disruptions_allowed)
            << "round " << round << " step " << step << " budget " << got[i].name;
        EXPECT_EQ(got[i].name, want[i].name);
        EXPECT_EQ(got[i].disrupted_pods, want[i].disrupted_pods);
        EXPECT_NE(got[i].budgets_version, 0u);
      }
    }
  }
}

TEST(PdbStatusTracker, AnEvictedPodThatWentKeepsCountingUntilANewStatus) {
  // A status of one allowed disruption; `p` is evicted, then deleted: the status was counted
  // while `p` ran, so its going does not give the disruption back. A new status does.
  model::PodDisruptionBudget b = Budget("b", "default", "a");
  b.disruptions_allowed = 1;
  PdbStatusTracker t;
  t.SetBudgets({b});
  const model::Pod p = KnownAndBound(t);
  t.Evicted("default/p");
  EXPECT_EQ(t.Views().front().disruptions_allowed, 0);
  t.BoundChanged(&p, nullptr);
  t.Forget("u");
  EXPECT_EQ(t.Views().front().disruptions_allowed, 0);
  t.SetBudgets({b});
  EXPECT_EQ(t.Views().front().disruptions_allowed, 1);
}

TEST(PdbStatusTracker, ANewSetOfBudgetsGetsANewVersion) {
  PdbStatusTracker t;
  t.SetBudgets({Budget("b", "default", "a")});
  const uint64_t first = t.Views().front().budgets_version;
  const model::Pod p = KnownAndBound(t);
  EXPECT_EQ(t.Views().front().budgets_version, first) << "pods changing the counts keep the version";
  t.SetBudgets({Budget("b", "default", "b")});
  EXPECT_NE(t.Views().front().budgets_version, first);
}

}  // namespace
}  // namespace arbiter::sched::preemption
