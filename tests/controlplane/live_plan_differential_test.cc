// The live scheduler of `arbiter serve` against `arbiter plan` on the same state: random clusters
// (nodes of several sizes, zones, taints and cordons; running pods; pending pods with selectors
// and tolerations) are written to a memory store and scheduled by the live scheduler pass after
// pass on a virtual clock, and the store's state as listed before the first pass is planned by
// the plan pipeline (load, admission, simulation) with the same seed. Every pending pod must end on the same node, or be unschedulable
// in both. Both drive one sched::Scheduler; what differs, and what this checks, is how each feeds
// it: the live path through informers, incremental cache updates and a queue kept across passes.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/controlplane/live_scheduler.h"
#include "arbiter/controlplane/metrics.h"
#include "arbiter/controlplane/pod_json.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/sim/plan_simulation.h"

namespace arbiter::controlplane {
namespace {

using Json = nlohmann::json;
constexpr Timestamp kDifferentialStart = Timestamp{1'800'000'000} * kSecond;

struct Cluster {
  std::vector<Json> objects;         // nodes, then running pods, then pending pods
  std::vector<std::string> pending;  // names of the pending pods
};

// A random cluster; `rng` is the test's own data source (the schedulers' seed is separate).
Cluster RandomCluster(std::mt19937_64& rng) {
  auto pick = [&](auto const& v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  Cluster c;
  const std::vector<int> cpus = {2, 4, 8};
  const std::vector<std::string> zones = {"a", "b", "c"};
  const int nodes = std::uniform_int_distribution<int>(3, 12)(rng);
  int64_t created = kDifferentialStart / kSecond - 1000;
  auto meta = [&](const std::string& name) {
    return Json{{"name", name},
                {"namespace", "default"},
                {"uid", "uid-" + name},
                {"creationTimestamp", FormatRfc3339(created++ * kSecond)}};
  };
  std::vector<std::pair<std::string, int>> free_milli;  // per node
  for (int i = 0; i < nodes; ++i) {
    const std::string name = "node-" + std::to_string(i);
    const int cpu = pick(cpus);
    Json n = {{"apiVersion", "v1"},
              {"kind", "Node"},
              {"metadata", {{"name", name}, {"uid", "uid-" + name}, {"labels", {{"zone", pick(zones)}}}}},
              {"spec", Json::object()},
              {"status", {{"allocatable", {{"cpu", std::to_string(cpu)}, {"memory", "16Gi"}, {"pods", "110"}}}}}};
    if (chance(0.2)) {
      n["spec"]["taints"] = Json::array({{{"key", "dedicated"}, {"value", "gpu"}, {"effect", "NoSchedule"}}});
    }
    if (chance(0.1)) n["spec"]["unschedulable"] = true;
    c.objects.push_back(n);
    free_milli.emplace_back(name, cpu * 1000);
  }
  auto pod = [&](const std::string& name, int milli) {
    return Json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", meta(name)},
                {"spec",
                 {{"priority", 0},
                  {"schedulerName", "default-scheduler"},
                  {"containers", Json::array({{{"name", "c"},
                                               {"image", "x"},
                                               {"resources", {{"requests", {{"cpu", std::to_string(milli) + "m"}}}}}}})}}},
                {"status", {{"phase", "Pending"}}}};
  };
  int running = 0;
  for (auto& [node, free] : free_milli) {
    const int count = std::uniform_int_distribution<int>(0, 3)(rng);
    for (int k = 0; k < count; ++k) {
      const int milli = pick(std::vector<int>{250, 500, 1000});
      if (milli > free) break;
      free -= milli;
      Json p = pod("running-" + std::to_string(running++), milli);
      p["spec"]["nodeName"] = node;
      p["status"]["phase"] = "Running";
      c.objects.push_back(p);
    }
  }
  const int pending = std::uniform_int_distribution<int>(5, 25)(rng);
  for (int i = 0; i < pending; ++i) {
    const std::string name = "pending-" + std::to_string(i);
    Json p = pod(name, pick(std::vector<int>{100, 500, 1000, 2000, 3000}));
    if (chance(0.3)) p["spec"]["nodeSelector"] = {{"zone", pick(zones)}};
    if (chance(0.3)) {
      p["spec"]["tolerations"] =
          Json::array({{{"key", "dedicated"}, {"operator", "Equal"}, {"value", "gpu"}, {"effect", "NoSchedule"}}});
    }
    c.objects.push_back(p);
    c.pending.push_back(name);
  }
  return c;
}

// Where `arbiter plan` puts each pending pod of `dump` ("" when it stays pending).
std::map<std::string, std::string> Planned(const std::vector<Json>& dump, uint64_t seed) {
  std::string yaml;
  for (const Json& o : dump) yaml += "---\n" + o.dump() + "\n";
  manifest::LoadResult loaded = manifest::Load({{"cluster.yaml", yaml}});
  std::vector<std::string> errors = loaded.errors;
  if (errors.empty()) errors = admission::AdmitPriorities(loaded.objects);
  for (const auto& e : errors) ADD_FAILURE() << e;
  sim::PlanOptions o;
  o.seed = seed;
  o.start = kDifferentialStart;
  auto r = sim::RunPlan(loaded.objects, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  std::map<std::string, std::string> out;
  if (!r.ok()) return out;
  for (const auto& p : r->pods) out[p.name.substr(p.name.find('/') + 1)] = p.scheduled ? p.node : "";
  return out;
}

// Where the live scheduler puts them: the objects are written to a memory store and passes run
// (the clock moving a second each) until the queue is settled. `dump` receives the store's
// state before the first pass, as `kubectl get nodes,pods -o yaml` would list it (by name).
std::map<std::string, std::string> Live(const Cluster& c, uint64_t seed, bool async_writes, std::vector<Json>& dump) {
  auto store = store::NewMemoryStore();
  VirtualClock clock(kDifferentialStart);
  WriteBatch batch(*store, 512, async_writes);
  LoopMetrics metrics;
  std::map<std::tuple<std::string, std::string, std::string, int64_t>, manifest::LoadResult> decoded;
  LiveSchedulerOptions options;
  options.seed = seed;
  LiveScheduler live(
      *store, batch, clock, options, metrics,
      [&](const store::Object& o) -> const manifest::LoadResult& {
        return decoded[{o.resource, o.ns, o.name, o.revision}] = manifest::DecodeJson(o.resource + "/" + o.name, *o.body.tree());
      },
      [](const std::string&, const std::string&, const std::string&, const std::string&, const std::string&,
         const std::string&) { return Status::Ok(); });
  Informers informers;
  for (const char* r : {"nodes", "pods", "namespaces", "priorityclasses", "poddisruptionbudgets", "podgroups",
                        "compositepodgroups", "workloads"}) {
    informers[r] = std::make_unique<store::Informer>(*store, r);
  }
  for (const Json& o : c.objects) {
    const std::string kind = o["kind"];
    const std::string name = o["metadata"]["name"];
    auto created = kind == "Node" ? store->Create("nodes", "", name, o) : store->Create("pods", "default", name, o);
    EXPECT_TRUE(created.ok()) << created.status().message();
  }
  for (const char* resource : {"nodes", "pods"}) {
    auto listed = store->List(resource, "");
    EXPECT_TRUE(listed.ok());
    if (listed.ok()) {
      for (const auto& o : listed->items) dump.push_back(o.body.Copy());
    }
  }
  for (int pass = 0; pass < 30; ++pass) {
    Changes changes;
    for (auto& [r, inf] : informers) {
      EXPECT_TRUE(inf->Sync().ok());
      changes[r] = inf->TakeChanged();
    }
    Status st = live.Pass(informers, changes);
    EXPECT_TRUE(st.ok()) << st.message();
    const LiveScheduler::QueueSizes q = live.queue_sizes();
    if (pass > 0 && q.active == 0 && q.backoff == 0) break;
    clock.Advance(kSecond);
  }
  Status drained = batch.Drain();
  EXPECT_TRUE(drained.ok()) << drained.message();
  std::map<std::string, std::string> out;
  for (const std::string& name : c.pending) {
    auto p = store->Get("pods", "default", name);
    EXPECT_TRUE(p.ok()) << name;
    out[name] = p.ok() ? std::string(NodeOf(*p->body.tree())) : "";
  }
  return out;
}

// Synchronous writes, and writes the store commits while the next pass runs (serve's setting).
class LiveAgainstPlan : public ::testing::TestWithParam<bool> {};

TEST_P(LiveAgainstPlan, EveryPendingPodLandsWhereThePlanPutsItOnRandomClusters) {
  std::mt19937_64 rng(20261202);
  int placed = 0, left_pending = 0;
  for (int round = 0; round < 60; ++round) {
    const Cluster c = RandomCluster(rng);
    const uint64_t seed = 1000 + static_cast<uint64_t>(round);
    std::vector<Json> dump;
    const std::map<std::string, std::string> live = Live(c, seed, GetParam(), dump);
    const std::map<std::string, std::string> planned = Planned(dump, seed);
    for (const std::string& name : c.pending) {
      ASSERT_TRUE(planned.count(name)) << "round " << round << ": " << name << " is not in the plan";
      EXPECT_EQ(live.at(name), planned.at(name)) << "round " << round << ", seed " << seed << ": pod " << name;
      (planned.at(name).empty() ? left_pending : placed) += 1;
    }
  }
  // The clusters exercise both outcomes.
  EXPECT_GT(placed, 100);
  EXPECT_GT(left_pending, 20);
}

INSTANTIATE_TEST_SUITE_P(Writes, LiveAgainstPlan, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Async" : "Sync"; });

}  // namespace
}  // namespace arbiter::controlplane
