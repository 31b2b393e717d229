// The dashboard's documents (docs/dashboard.md): the live service over a store and a running
// control loop, the plan and bench reports, and the page that carries them.
#include "arbiter/ui/dashboard.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/controlplane/control_loop.h"
#include "arbiter/sim/plan_simulation.h"
#include "testing/paths.h"

namespace arbiter::ui {
namespace {

using StoreJson = nlohmann::json;
constexpr Timestamp kT0 = 1'800'000'000LL * kSecond;

StoreJson Node(const std::string& name, const std::string& cpu) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"uid", "uid-" + name}}},
          {"status", {{"allocatable", {{"cpu", cpu}, {"memory", "4Gi"}, {"pods", "10"}}}}}};
}

StoreJson Pod(const std::string& name, const std::string& cpu, int priority, const std::string& node = "") {
  StoreJson spec = {{"schedulerName", "default-scheduler"},
                    {"priority", priority},
                    {"terminationGracePeriodSeconds", 30},
                    {"containers", StoreJson::array({{{"name", "c"}, {"image", "x"},
                                                      {"resources", {{"requests", {{"cpu", cpu}, {"memory", "1Gi"}}}}}}})}};
  if (!node.empty()) spec["nodeName"] = node;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
          {"spec", spec}};
}

const Json* Find(const Json& list, const std::string& key, const std::string& value) {
  for (const Json& e : list) {
    if (e.value(key, "") == value) return &e;
  }
  return nullptr;
}

// Runs the loop's passes on a thread of its own, as serve's control thread does, so that a
// dashboard read (which waits for the next pass to list the queue) is answered.
class LoopThread {
 public:
  explicit LoopThread(controlplane::ControlLoop& loop) : thread_([this, &loop] {
    while (!stop_) {
      (void)loop.RunOnce();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }) {}
  ~LoopThread() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(DashboardService, ShowsNodesTheSchedulersQueueAndAPreemptionWithItsVictimTerminating) {
  auto store = store::NewMemoryStore();
  VirtualClock clock(kT0);
  controlplane::SchedulerActivity activity;
  controlplane::LoopOptions o;
  o.simulate_nodes = false;
  o.activity = &activity;
  controlplane::ControlLoop loop(*store, clock, o);
  StoreJson cordoned = Node("n2", "4");
  cordoned["spec"] = {{"unschedulable", true},
                      {"taints", StoreJson::array({{{"key", "dedicated"}, {"value", "gpu"}, {"effect", "NoSchedule"}}})}};
  ASSERT_TRUE(store->Create("nodes", "", "n1", Node("n1", "2")).ok());
  ASSERT_TRUE(store->Create("nodes", "", "n2", cordoned).ok());
  ASSERT_TRUE(store->Create("pods", "default", "low", Pod("low", "1500m", 0)).ok());
  ASSERT_TRUE(loop.RunOnce().ok());
  ASSERT_EQ(store->Get("pods", "default", "low")->body.Copy()["spec"].value("nodeName", ""), "n1");
  ASSERT_TRUE(store->Create("pods", "default", "high", Pod("high", "1500m", 1000)).ok());
  ASSERT_TRUE(store->Create("pods", "default", "huge", Pod("huge", "64", 0)).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(loop.RunOnce().ok());

  DashboardService dashboard(*store, clock, &activity, "default-scheduler");
  StatusOr<Json> doc = Status::Ok();
  {
    LoopThread running(loop);
    doc = dashboard.Dashboard();
  }
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["kind"], "Dashboard");
  EXPECT_EQ((*doc)["mode"], "live");
  EXPECT_TRUE((*doc)["scheduler"]["running"].get<bool>());
  EXPECT_TRUE((*doc)["scheduler"]["queueFresh"].get<bool>());

  // The victim still holds its requests on n1 while it terminates.
  const Json* n1 = Find((*doc)["nodes"], "name", "n1");
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ((*n1)["cpu"]["allocatable"], 2000);
  EXPECT_EQ((*n1)["cpu"]["requested"], 1500);
  EXPECT_EQ((*n1)["memory"]["requested"], int64_t{1} << 30);
  EXPECT_EQ((*n1)["pods"], 1);
  EXPECT_EQ((*n1)["maxPriority"], 0);
  const Json* n2 = Find((*doc)["nodes"], "name", "n2");
  ASSERT_NE(n2, nullptr);
  EXPECT_TRUE((*n2)["unschedulable"].get<bool>());
  EXPECT_EQ((*n2)["taints"], Json::array({"dedicated=gpu:NoSchedule"}));
  EXPECT_TRUE((*n2)["maxPriority"].is_null());

  // The preemptor waits, nominated to n1; the pod too big for any node waits with its message.
  const Json* high = Find((*doc)["queue"], "pod", "default/high");
  ASSERT_NE(high, nullptr) << (*doc)["queue"].dump();
  EXPECT_EQ((*high)["nominatedNode"], "n1");
  EXPECT_EQ((*high)["priority"], 1000);
  EXPECT_GE((*high)["attempts"].get<int>(), 1);
  const Json* huge = Find((*doc)["queue"], "pod", "default/huge");
  ASSERT_NE(huge, nullptr);
  EXPECT_EQ((*huge)["queue"], "unschedulable");
  EXPECT_NE((*huge)["message"].get<std::string>().find("Insufficient cpu"), std::string::npos) << (*huge)["message"];

  ASSERT_EQ((*doc)["preemptions"].size(), 1u);
  const Json& p = (*doc)["preemptions"][0];
  EXPECT_EQ(p["preemptor"], "default/high");
  EXPECT_EQ(p["preemptorKind"], "Pod");
  EXPECT_EQ(p["node"], "n1");
  EXPECT_TRUE(p["preemptorNode"].is_null());
  ASSERT_EQ(p["victims"].size(), 1u);
  EXPECT_EQ(p["victims"][0]["name"], "default/low");
  EXPECT_EQ(p["victims"][0]["state"], "Terminating");
  EXPECT_EQ(p["victims"][0]["violatesPDB"], false);
  EXPECT_EQ(p["victims"][0]["gracePeriodSeconds"], 30);
  EXPECT_EQ(p["victims"][0]["deletionTime"], FormatRfc3339(kT0 + 30 * kSecond));

  // The victim goes; the preemptor binds to the node it was nominated to.
  auto low = store->Get("pods", "default", "low");
  ASSERT_TRUE(low.ok());
  ASSERT_TRUE(store->Delete("pods", "default", "low", 0).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(loop.RunOnce().ok());
  {
    LoopThread running(loop);
    doc = dashboard.Dashboard();
  }
  ASSERT_TRUE(doc.ok());
  const Json& after = (*doc)["preemptions"][0];
  EXPECT_EQ(after["victims"][0]["state"], "Deleted");
  EXPECT_EQ(after["preemptorNode"], "n1");
  EXPECT_EQ(Find((*doc)["queue"], "pod", "default/high"), nullptr);
  EXPECT_EQ((*Find((*doc)["nodes"], "name", "n1"))["maxPriority"], 1000);
}

TEST(DashboardService, WithoutASchedulerHereListsThePendingPodsAsTheStoreHasThem) {
  auto store = store::NewMemoryStore();
  VirtualClock clock(kT0);
  StoreJson waiting = Pod("waiting", "1", 5);
  waiting["status"] = {{"conditions", StoreJson::array({{{"type", "PodScheduled"}, {"status", "False"},
                                                          {"reason", "Unschedulable"},
                                                          {"message", "0/0 nodes are available."}}})}};
  ASSERT_TRUE(store->Create("pods", "default", "waiting", waiting).ok());
  DashboardService dashboard(*store, clock, nullptr, "default-scheduler");
  auto doc = dashboard.Dashboard();
  ASSERT_TRUE(doc.ok());
  EXPECT_FALSE((*doc)["scheduler"]["running"].get<bool>());
  ASSERT_EQ((*doc)["queue"].size(), 1u);
  EXPECT_EQ((*doc)["queue"][0]["queue"], "pending");
  EXPECT_EQ((*doc)["queue"][0]["message"], "0/0 nodes are available.");
  EXPECT_EQ((*doc)["queue"][0]["priority"], 5);
  // The document's revision is the store's: watches from it miss nothing.
  EXPECT_EQ((*doc)["resourceVersion"], std::to_string(*store->Revision()));
}

TEST(DashboardService, OneBadStoredObjectIsLeftOutOfAnotherPodsExplanation) {
  auto store = store::NewMemoryStore();
  VirtualClock clock(kT0);
  ASSERT_TRUE(store->Create("nodes", "", "big", Node("big", "4")).ok());
  ASSERT_TRUE(store->Create("pods", "default", "asked", Pod("asked", "2", 0)).ok());
  // Stored before the rules held: a bound pod in another namespace naming a class that does
  // not exist (the store is written directly, as an older server wrote it).
  StoreJson bad = Pod("stale", "1", 0, "big");
  bad["spec"]["priorityClassName"] = "gone-class";
  ASSERT_TRUE(store->Create("pods", "team-b", "stale", bad).ok());
  DashboardService dashboard(*store, clock, nullptr, "default-scheduler");
  auto e = dashboard.Explain("default", "asked");
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_TRUE((*e).contains("ignoredObjects")) << e->dump();
  EXPECT_NE((*e)["ignoredObjects"][0].get<std::string>().find("store:pods/team-b/stale"), std::string::npos);
  // The bad pod's own explanation says what is wrong with it.
  auto own = dashboard.Explain("team-b", "stale");
  ASSERT_FALSE(own.ok());
  EXPECT_EQ(own.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(own.status().message().find("gone-class"), std::string::npos) << own.status().message();
}

// Explanations plan from the decoded objects the dashboard keeps current: one asked again after
// the cluster changed plans the cluster as it is now.
TEST(DashboardService, AnExplanationAskedAgainAfterAChangePlansTheClusterAsItIsNow) {
  auto store = store::NewMemoryStore();
  VirtualClock clock(kT0);
  ASSERT_TRUE(store->Create("nodes", "", "small", Node("small", "1")).ok());
  ASSERT_TRUE(store->Create("pods", "default", "asked", Pod("asked", "2", 0)).ok());
  DashboardService dashboard(*store, clock, nullptr, "default-scheduler");
  auto before = dashboard.Explain("default", "asked");
  ASSERT_TRUE(before.ok()) << before.status().message();
  ASSERT_GE((*before)["cycles"].size(), 1u);
  EXPECT_EQ((*before)["cycles"][0]["result"], "Unschedulable");

  // A node with room comes, and the pod is asked for again.
  ASSERT_TRUE(store->Create("nodes", "", "big", Node("big", "4")).ok());
  auto after = dashboard.Explain("default", "asked");
  ASSERT_TRUE(after.ok()) << after.status().message();
  ASSERT_GE((*after)["cycles"].size(), 1u);
  EXPECT_EQ((*after)["cycles"][0]["result"], "Scheduled");
  EXPECT_EQ((*after)["cycles"][0]["node"], "big");

  // The big node filled by a pod bound there: the asked pod is unschedulable again.
  ASSERT_TRUE(store->Create("pods", "default", "filler", Pod("filler", "3", 0, "big")).ok());
  auto full = dashboard.Explain("default", "asked");
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ((*full)["cycles"][0]["result"], "Unschedulable");
}

TEST(DashboardService, ExplainsAPendingPodWithEachNodesFilterVerdictsAsPlanExplainDoes) {
  auto store = store::NewMemoryStore();
  VirtualClock clock(kT0);
  ASSERT_TRUE(store->Create("nodes", "", "small", Node("small", "1")).ok());
  ASSERT_TRUE(store->Create("nodes", "", "big", Node("big", "4")).ok());
  ASSERT_TRUE(store->Create("pods", "default", "filler", Pod("filler", "3", 0, "big")).ok());
  ASSERT_TRUE(store->Create("pods", "default", "asked", Pod("asked", "2", 0)).ok());
  // Another pending pod is not planned with it (it would take the room first).
  ASSERT_TRUE(store->Create("pods", "default", "other", Pod("other", "1", 100)).ok());
  DashboardService dashboard(*store, clock, nullptr, "default-scheduler");
  auto e = dashboard.Explain("default", "asked");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ((*e)["kind"], "Explanation");
  EXPECT_EQ((*e)["pod"], "default/asked");
  EXPECT_FALSE((*e)["whatIf"].get<bool>());
  EXPECT_TRUE((*e)["boundNode"].is_null());
  ASSERT_GE((*e)["cycles"].size(), 1u);
  const Json& cycle = (*e)["cycles"][0];
  EXPECT_EQ(cycle["result"], "Unschedulable");
  ASSERT_EQ(cycle["filter"].size(), 2u);
  // A node too small for the request whatever goes is unresolvable; a full one is not.
  std::map<std::string, std::string> codes;
  for (const Json& n : cycle["filter"]) {
    EXPECT_FALSE(n["feasible"].get<bool>());
    const Json* fit = Find(n["filters"], "plugin", "NodeResourcesFit");
    ASSERT_NE(fit, nullptr) << n.dump();
    EXPECT_EQ((*fit)["reason"], "Insufficient cpu");
    codes[n["node"]] = (*fit)["code"];
  }
  EXPECT_EQ(codes["small"], "UnschedulableAndUnresolvable");
  EXPECT_EQ(codes["big"], "Unschedulable");
  EXPECT_EQ((*e)["outcome"]["status"], "Pending");

  // A bound pod is explained by how it got there (the events about it, oldest first; not those
  // of an earlier pod of its name), then as a what-if: taken off its node and planned again.
  auto event = [](const std::string& name, const std::string& uid, const std::string& reason, const std::string& at) {
    return StoreJson{{"apiVersion", "v1"}, {"kind", "Event"}, {"metadata", {{"name", name}, {"namespace", "default"}}},
                     {"involvedObject", {{"kind", "Pod"}, {"name", "filler"}, {"namespace", "default"}, {"uid", uid}}},
                     {"reason", reason}, {"type", "Normal"}, {"message", reason + " message"},
                     {"source", {{"component", "default-scheduler"}}}, {"lastTimestamp", at}, {"count", 1}};
  };
  ASSERT_TRUE(store->Create("events", "default", "e2", event("e2", "uid-filler", "Scheduled", "2027-01-15T08:00:05Z")).ok());
  ASSERT_TRUE(store->Create("events", "default", "e1", event("e1", "uid-filler", "FailedScheduling", "2027-01-15T08:00:01Z")).ok());
  ASSERT_TRUE(store->Create("events", "default", "e0", event("e0", "uid-old", "Scheduled", "2027-01-15T07:00:00Z")).ok());
  auto bound = dashboard.Explain("default", "filler");
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  ASSERT_EQ((*bound)["history"]["events"].size(), 2u) << (*bound)["history"].dump();
  EXPECT_EQ((*bound)["history"]["events"][0]["reason"], "FailedScheduling");
  EXPECT_EQ((*bound)["history"]["events"][1]["reason"], "Scheduled");
  EXPECT_EQ((*bound)["history"]["events"][1]["source"], "default-scheduler");
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  EXPECT_TRUE((*bound)["whatIf"].get<bool>());
  EXPECT_EQ((*bound)["boundNode"], "big");
  ASSERT_GE((*bound)["cycles"].size(), 1u);
  EXPECT_EQ((*bound)["cycles"][0]["result"], "Scheduled");
  EXPECT_EQ((*bound)["cycles"][0]["node"], "big");
  EXPECT_EQ((*bound)["cycles"][0]["chosen"], "big");

  EXPECT_EQ(dashboard.Explain("default", "nobody").status().code(), StatusCode::kNotFound);
  const DashboardService::Answer missing = dashboard.Get("/apis/arbiter.dev/v1alpha1/namespaces/default/explanations/nobody");
  EXPECT_EQ(missing.code, 404);
  EXPECT_NE(missing.body.find("pods \\\"nobody\\\" not found"), std::string::npos) << missing.body;
  EXPECT_EQ(dashboard.Get("/apis/arbiter.dev/v1alpha1/namespaces/default/explanations").code, 404);
  const DashboardService::Answer page = dashboard.Get("/ui/");
  EXPECT_EQ(page.code, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(page.body.find("id=\"arbiter-data\""), std::string::npos);  // live: no data inline
}

// The data of a report sits in a <script> element: nothing in it can close the element.
TEST(Page, AReportsDataCannotCloseItsScriptElementAndReadsBackUnchanged) {
  const Json data = {{"kind", "Dashboard"},
                     {"message", "</script><script>alert(1)</script> & <!-- \xE2\x80\xA8"},
                     {"nodes", Json::array()}};
  const std::string page = Page(&data);
  EXPECT_EQ(page.find("<script>alert(1)"), std::string::npos);
  const std::string open = "<script type=\"application/json\" id=\"arbiter-data\">";
  const size_t at = page.find(open);
  ASSERT_NE(at, std::string::npos);
  const size_t end = page.find("</script>", at);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(Json::parse(page.substr(at + open.size(), end - at - open.size())), data);
  // The page is whole: its style and script are inline, and it names nothing to download.
  EXPECT_NE(page.find("<style>"), std::string::npos);
  EXPECT_EQ(page.find("<!--ARBITER-"), std::string::npos);
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
  EXPECT_EQ(page.find("href=\"http"), std::string::npos);
}

// A report's explanation names its cycles by index into the report's `cycles`.
Json CyclesOf(const Json& report, const std::string& pod) {
  Json out = Json::array();
  for (const Json& i : report["explanations"][pod]["cycleRefs"]) out.push_back(report["cycles"][i.get<size_t>()]);
  return out;
}

sim::PlanResult PlanOf(const std::string& example, manifest::LoadResult& loaded) {
  auto file = manifest::ReadInputFile(arbiter::testing::SourceDir() + "/examples/" + example);
  EXPECT_TRUE(file.ok());
  loaded = manifest::Load({*file});
  EXPECT_TRUE(loaded.ok());
  EXPECT_TRUE(admission::AdmitPriorities(loaded.objects).empty());
  sim::PlanOptions options;
  options.explain = true;
  auto plan = sim::RunPlan(loaded.objects, options);
  EXPECT_TRUE(plan.ok());
  return plan.ok() ? *plan : sim::PlanResult{};
}

TEST(PlanReport, TheBasicExampleShowsItsNodesThePodItLeavesPendingAndAnExplanationPerPlannedPod) {
  manifest::LoadResult loaded;
  const sim::PlanResult plan = PlanOf("basic/cluster.yaml", loaded);
  const Json report = PlanReport(loaded.objects, plan);
  EXPECT_EQ(report["kind"], "Dashboard");
  EXPECT_EQ(report["mode"], "report");
  ASSERT_EQ(report["nodes"].size(), loaded.objects.nodes.size());
  EXPECT_EQ(report["preemptions"].size(), plan.preemptions.size());
  // The pod the plan leaves pending is the queue, with the plan's message.
  size_t pending = 0;
  for (const auto& p : plan.pods) {
    if (p.scheduled) continue;
    ++pending;
    const Json* q = Find(report["queue"], "pod", p.name);
    ASSERT_NE(q, nullptr) << p.name;
    EXPECT_EQ((*q)["queue"], "pending");
    EXPECT_EQ((*q)["message"], p.message);
  }
  EXPECT_EQ(report["queue"].size(), pending);
  ASSERT_GT(pending, 0u);
  // Every planned pod has its explanation: its cycles with each node's verdicts.
  ASSERT_EQ(report["explanations"].size(), plan.pods.size());
  EXPECT_EQ(report["cycles"].size(), plan.cycles.size());
  for (const auto& p : plan.pods) {
    const Json& e = report["explanations"][p.name];
    const Json cycles = CyclesOf(report, p.name);
    ASSERT_GE(cycles.size(), 1u) << p.name;
    EXPECT_EQ(cycles[0]["pod"], p.name);
    EXPECT_EQ(cycles[0]["filter"].size(), loaded.objects.nodes.size()) << p.name;
    EXPECT_EQ(e["outcome"]["status"], p.scheduled ? "Scheduled" : "Pending");
  }
  // A node's allocation is what the pods left on it request, scheduled ones included.
  int64_t requested = 0;
  for (const Json& n : report["nodes"]) requested += n["cpu"]["requested"].get<int64_t>();
  int64_t expected = 0;
  for (const auto& s : loaded.objects.pods) {
    const bool planned_pending = std::any_of(plan.pods.begin(), plan.pods.end(),
                                             [&](const sim::PodPlan& p) { return p.name == s.object.Key() && !p.scheduled; });
    const bool bound = !s.object.node_name.empty() ||
                       std::any_of(plan.pods.begin(), plan.pods.end(),
                                   [&](const sim::PodPlan& p) { return p.name == s.object.Key() && p.scheduled; });
    if (bound && !planned_pending) expected += s.object.requests.milli_cpu;
  }
  EXPECT_EQ(requested, expected);
}

TEST(PlanReport, AGangPreemptionNamesThePodGroupAsItsPreemptor) {
  manifest::LoadResult loaded;
  const sim::PlanResult plan = PlanOf("gang/cluster.yaml", loaded);
  const Json report = PlanReport(loaded.objects, plan);
  ASSERT_FALSE(report["preemptions"].empty());
  const Json& p = report["preemptions"][0];
  EXPECT_EQ(p["preemptorKind"], "PodGroup");
  EXPECT_EQ(p["preemptor"], "ml/trainer");
  EXPECT_TRUE(p["node"].is_null());  // a group preempts over the whole cluster
  // Bound at the plan's end: every member, not "not bound yet".
  EXPECT_EQ(p["preemptorMembers"], (Json{{"bound", 4}, {"total", 4}}));
  ASSERT_EQ(p["victims"].size(), plan.preemptions[0].victims.size());
  for (const Json& v : p["victims"]) EXPECT_EQ(v["state"], "Deleted");
  // Each member's explanation names the group's cycles (kept once in the report) and the group's
  // preemption, every member alike.
  size_t members = 0;
  for (const auto& [name, e] : report["explanations"].items()) {
    if (!name.starts_with("ml/")) continue;
    ++members;
    const Json cycles = CyclesOf(report, name);
    ASSERT_EQ(cycles.size(), 2u) << name;
    EXPECT_EQ(cycles[0]["podGroup"], "ml/trainer");
    EXPECT_EQ(e["cycleRefs"], report["explanations"]["ml/trainer-0"]["cycleRefs"]) << name;
    EXPECT_EQ(e["preemptions"].size(), 1u) << name;
  }
  EXPECT_EQ(members, 4u);
  EXPECT_EQ(report["cycles"].size(), plan.cycles.size());
}

TEST(BenchReport, KeepsEachScenariosMedianUnderItsFamily) {
  const std::vector<Json> runs = {
      {{"scenario", "PreemptionBasic/500Nodes"}, {"nodes", 500}, {"podsPerSecond", 30.0}},
      {{"scenario", "PreemptionBasic/500Nodes"}, {"nodes", 500}, {"podsPerSecond", 10.0}},
      {{"scenario", "PreemptionBasic/500Nodes"}, {"nodes", 500}, {"podsPerSecond", 20.0}},
      {{"scenario", "PreemptionBasic/median"}, {"medianPodsPerSecond", 20.0}},
      {{"scenario", "ServePreemptionBasic"}, {"nodes", 100}, {"preemptorsPerSecond", 7.0}},
      {{"scenario", "NomadPlacement"}, {"nodes", 5000}, {"placementsPerSecond", 900.0}},
  };
  const Json report = BenchReport(runs);
  ASSERT_EQ(report["bench"].size(), 3u);
  EXPECT_EQ(report["bench"][2]["podsPerSecond"], 900.0);
  EXPECT_EQ(report["bench"][0]["family"], "PreemptionBasic");
  EXPECT_EQ(report["bench"][0]["nodes"], 500);
  EXPECT_EQ(report["bench"][0]["podsPerSecond"], 20.0);
  EXPECT_EQ(report["bench"][0]["runs"], 3);
  EXPECT_EQ(report["bench"][1]["podsPerSecond"], 7.0);
}

}  // namespace
}  // namespace arbiter::ui
