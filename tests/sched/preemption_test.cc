// Scenario tests for kube-scheduler's per-pod default preemption (DefaultPreemption as a
// PostFilter plugin), run through the plan pipeline on the virtual clock: who may preempt, which
// nodes are candidates, the dry run with its PDB-aware greedy reprieve, the choice among
// candidates, candidate sampling, and how the simulation carries a decision out. Section numbers
// refer to docs/upstream-rules.md Part A.
//
// The last test is a property test: the resource-only fast path of the dry run must decide
// exactly as the general dry run on copies of the node does.
#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "arbiter/base/json.h"

#include "arbiter/plan/render.h"
#include "arbiter/sim/cluster_simulation.h"
#include "testing/manifest_builders.h"
#include "testing/plan_harness.h"

namespace arbiter::sched {
namespace {

using arbiter::testing::HostLabels;
using arbiter::testing::kZone;
using arbiter::testing::PodOf;
using arbiter::testing::PodY;
using arbiter::testing::ProfileConfig;
using arbiter::testing::RequiredPodTerm;
using arbiter::testing::SpreadWeb;
using arbiter::testing::ZoneLabels;

constexpr Timestamp kT0 = 1704067200LL * kSecond;  // 2024-01-01T00:00:00Z
// Pending pods are created at kNow unless a test says otherwise, and every other time in a
// scenario lies at or before it, so the virtual clock starts at kT0 + kNow seconds.
constexpr int kNow = 100;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

::testing::AssertionResult BeginsWith(const std::string& text, const std::string& prefix) {
  if (text.rfind(prefix, 0) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not begin with \"" << prefix << "\"";
}

std::string At(int64_t seconds) { return FormatRfc3339(kT0 + seconds * kSecond); }
Timestamp Time(int64_t seconds) { return kT0 + seconds * kSecond; }

// ---------------------------------------------------------------------------------------------
// Scenario builder. Pod priorities come from generated PriorityClasses (admission fills them in).

struct PodSpec {
  std::string name = {};
  std::string ns = "default";
  std::string uid = {};
  std::string labels = "{}";
  std::string node = {};       // empty: pending
  int64_t priority = 0;
  bool never = false;          // preemptionPolicy: Never, through its PriorityClass
  std::string cpu = "100m";
  int created = -1;            // seconds after kT0; pending pods default to kNow
  int start = -1;              // status.startTime, seconds after kT0; -1: none
  int deletion = -1;           // metadata.deletionTimestamp, seconds after kT0; -1: none
  bool preempted = false;      // status.conditions DisruptionTarget=True, reason PreemptionByScheduler
  int grace = -1;              // spec.terminationGracePeriodSeconds; -1: the default (30 s)
  std::string nominated = {};  // status.nominatedNodeName
  std::string extra = {};      // YAML under spec, indented by two spaces
};

std::string ClassName(int64_t value, bool never) {
  std::string s = value < 0 ? "prio-neg" + std::to_string(-value) : "prio-" + std::to_string(value);
  return never ? s + "-never" : s;
}

class Scenario {
 public:
  Scenario& AddNode(const std::string& name, const std::string& cpu = "1", const std::string& labels = "{}",
                    const std::string& extra_spec = "", const std::string& pods = "110") {
    docs_ += arbiter::testing::Node(name, cpu, "32Gi", pods, labels, extra_spec);
    return *this;
  }

  Scenario& AddPod(const PodSpec& p) {
    classes_.insert({p.priority, p.never});
    std::string meta;
    if (!p.uid.empty()) meta += "  uid: " + p.uid + "\n";
    const int created = p.created >= 0 ? p.created : (p.node.empty() ? kNow : -1);
    if (created >= 0) meta += "  creationTimestamp: \"" + At(created) + "\"\n";
    if (p.deletion >= 0) meta += "  deletionTimestamp: \"" + At(p.deletion) + "\"\n";
    std::string spec;
    if (p.grace >= 0) spec += "  terminationGracePeriodSeconds: " + std::to_string(p.grace) + "\n";
    spec += p.extra;
    std::string status;
    if (p.start >= 0) status += "  startTime: \"" + At(p.start) + "\"\n";
    if (!p.nominated.empty()) status += "  nominatedNodeName: " + p.nominated + "\n";
    if (p.preempted) {
      status += "  conditions:\n  - {type: DisruptionTarget, status: \"True\", reason: PreemptionByScheduler}\n";
    }
    docs_ += PodY(p.name)
                 .Ns(p.ns)
                 .Labels(p.labels)
                 .Metadata(meta)
                 .PriorityClass(ClassName(p.priority, p.never))
                 .On(p.node)
                 .Spec(spec)
                 .Cpu(p.cpu)
                 .Status(status)
                 .Y();
    return *this;
  }

  // A PodDisruptionBudget; `spec` and `status` are YAML lines indented by two spaces.
  Scenario& AddPdb(const std::string& name, const std::string& selector, const std::string& spec,
                   const std::string& status = "", const std::string& ns = "default") {
    docs_ += "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: " + name +
             ", namespace: " + ns + "}\nspec:\n  selector: " + selector + "\n" + spec;
    if (!status.empty()) docs_ += "status:\n" + status;
    return *this;
  }

  Scenario& Raw(const std::string& doc) {
    docs_ += doc;
    return *this;
  }

  std::string Yaml() const {
    std::string s;
    for (const auto& [value, never] : classes_) {
      s += "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " +
           ClassName(value, never) + "}\nvalue: " + std::to_string(value) + "\n";
      if (never) s += "preemptionPolicy: Never\n";
    }
    return s + docs_;
  }

  sim::PlanResult Plan(uint64_t seed = 0, bool explain = false) const {
    return arbiter::testing::Plan(Yaml(), seed, explain);
  }

 private:
  std::set<std::pair<int64_t, bool>> classes_;
  std::string docs_;
};

std::string SamplingConfig(int percentage, int absolute) {
  return ProfileConfig("  pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidateNodesPercentage: " +
                       std::to_string(percentage) + ", minCandidateNodesAbsolute: " + std::to_string(absolute) +
                       "}\n");
}

std::string PodAffinityToDb() { return RequiredPodTerm("podAffinity", "{app: db}", "kubernetes.io/hostname"); }

// ---------------------------------------------------------------------------------------------
// Looking at results.

std::vector<sim::Event> EventsOf(const sim::PlanResult& r, const std::string& reason, const std::string& pod) {
  std::vector<sim::Event> out;
  for (const auto& e : r.events) {
    if (e.reason == reason && e.object == "Pod " + pod) out.push_back(e);
  }
  return out;
}

size_t CountEvents(const sim::PlanResult& r, const std::string& reason) {
  return static_cast<size_t>(
      std::count_if(r.events.begin(), r.events.end(), [&](const sim::Event& e) { return e.reason == reason; }));
}

// Victim names of every preemption, in order.
std::vector<std::string> VictimNames(const sim::PlanResult& r) {
  std::vector<std::string> out;
  for (const auto& p : r.preemptions) {
    for (const auto& v : p.victims) out.push_back(v.name);
  }
  return out;
}

std::vector<bool> ViolatesPdb(const sim::Preemption& p) {
  std::vector<bool> out;
  for (const auto& v : p.victims) out.push_back(v.violates_pdb);
  return out;
}

// The PostFilter account of the first cycle of `pod` that ran preemption.
std::vector<std::string> FirstPostFilter(const sim::PlanResult& r, const std::string& pod) {
  for (const auto& c : r.cycles) {
    if (c.pod->pod.Key() == pod && !c.post_filter_explanation.empty()) return c.post_filter_explanation;
  }
  ADD_FAILURE() << "no cycle of " << pod << " ran preemption";
  return {};
}

std::string LineStartingWith(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const auto& l : lines) {
    if (l.rfind(prefix, 0) == 0) return l;
  }
  return "";
}

std::vector<std::string> CandidateLines(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) {
    if (l.rfind("candidate ", 0) == 0) out.push_back(l);
  }
  return out;
}

// The node preemption last nominated the pod to; "" if none or if the nomination was cleared
// (both are `nominatedNode: null` in -o json).
std::string NominatedNode(const sim::PodPlan& p) { return p.nominated_node.value_or(""); }

nlohmann::json JsonOf(const sim::PlanResult& r) {
  return nlohmann::json::parse(plan::Render(r, plan::Format::kJson, false));
}

// =============================================================================================
// §2 Eligibility.

TEST(PreemptionEligibility, PreemptionPolicyNeverPodNeitherPreemptsNorIsNominated) {
  Scenario s;
  s.AddNode("n1").AddPod({.name = "low", .node = "n1", .priority = 0, .cpu = "1", .start = 1});
  s.AddPod({.name = "p", .priority = 100, .never = true, .cpu = "1"});
  auto r = s.Plan();
  auto p = PodOf(r, "default/p");
  EXPECT_FALSE(p.scheduled);
  EXPECT_EQ(NominatedNode(p), "");
  EXPECT_EQ(p.message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.");
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_EQ(CountEvents(r, "Preempted"), 0u);
  EXPECT_TRUE(JsonOf(r)["pods"][0]["nominatedNode"].is_null());
}

TEST(PreemptionEligibility, PreemptionPolicyNeverPodStillQueuesAheadOfLowerPriorities) {
  // The lower-priority pod was created first, yet the Never pod is popped first and takes the
  // node's only room; the lower one cannot evict it.
  Scenario s;
  s.AddNode("n1");
  s.AddPod({.name = "early-low", .priority = 10, .cpu = "1", .created = 0});
  s.AddPod({.name = "late-never", .priority = 100, .never = true, .cpu = "1", .created = 50});
  auto r = s.Plan();
  ASSERT_EQ(r.pods.size(), 2u);
  EXPECT_EQ(r.pods[0].name, "default/late-never");
  EXPECT_EQ(PodOf(r, "default/late-never").node, "n1");
  EXPECT_FALSE(PodOf(r, "default/early-low").scheduled);
  EXPECT_TRUE(r.preemptions.empty());
}

TEST(PreemptionEligibility, PreemptionPolicyNeverPodCanItselfBeAVictim) {
  Scenario s;
  s.AddNode("n1").AddPod({.name = "calm", .node = "n1", .priority = 100, .never = true, .cpu = "1", .start = 1});
  s.AddPod({.name = "urgent", .priority = 1000, .cpu = "1"});
  auto r = s.Plan();
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(VictimNames(r), std::vector<std::string>{"default/calm"});
  EXPECT_EQ(r.preemptions[0].victims[0].priority, 100);
  EXPECT_EQ(PodOf(r, "default/urgent").node, "n1");
}

// n1 holds a lower-priority pod that is terminating (leaving at kNow + 20 s); n2 holds a
// lower-priority pod the pending pod could evict. The pending pod is nominated to n1.
Scenario TerminatingOnNominatedNode(bool preempted_condition, int64_t leaving_priority, bool taint_n1) {
  Scenario s;
  const std::string taint = "  taints:\n  - {key: maintenance, value: \"true\", effect: NoSchedule}\n";
  s.AddNode("n1", "1", "{}", taint_n1 ? taint : "");
  s.AddNode("n2");
  s.AddPod({.name = "leaving", .node = "n1", .priority = leaving_priority, .cpu = "1", .start = 10,
            .deletion = kNow + 20, .preempted = preempted_condition});
  s.AddPod({.name = "busy", .node = "n2", .priority = 0, .cpu = "1", .start = 5});
  s.AddPod({.name = "p", .priority = 100, .cpu = "1", .nominated = "n1"});
  return s;
}

TEST(PreemptionEligibility, PodWaitsWhileAPreemptionVictimTerminatesOnItsNominatedNode) {
  auto r = TerminatingOnNominatedNode(/*preempted_condition=*/true, 0, false).Plan(0, true);
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_EQ(CountEvents(r, "Preempted"), 0u);
  auto failed = EventsOf(r, "FailedScheduling", "default/p");
  ASSERT_FALSE(failed.empty());
  EXPECT_EQ(failed[0].message,
            "0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to a terminating pod on the "
            "nominated node.");
  EXPECT_EQ(FirstPostFilter(r, "default/p"),
            std::vector<std::string>{"preemption: not eligible due to a terminating pod on the nominated node."});
  // It binds where it was nominated once the victim is gone.
  auto p = PodOf(r, "default/p");
  EXPECT_EQ(p.node, "n1");
  EXPECT_EQ(NominatedNode(p), "");  // preemption never nominated it
  auto bound = EventsOf(r, "Scheduled", "default/p");
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0].time, Time(kNow + 20));
}

TEST(PreemptionEligibility, TerminatingPodWithoutThePreemptionConditionDoesNotBlock) {
  // Same cluster, but the terminating pod is leaving for another reason: the pod preempts. n1
  // wins the choice (its victim started later); as that victim is already terminating it is not
  // evicted again, so the decision nominates the pod but evicts nobody: no preemption is listed.
  auto r = TerminatingOnNominatedNode(/*preempted_condition=*/false, 0, false).Plan(0, true);
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_EQ(CountEvents(r, "Preempted"), 0u);
  for (const auto& line : FirstPostFilter(r, "default/p")) EXPECT_FALSE(Contains(line, "not eligible"));
  EXPECT_EQ(NominatedNode(PodOf(r, "default/p")), "n1");
  EXPECT_EQ(PodOf(r, "default/p").node, "n1");
}

TEST(PreemptionEligibility, TerminatingVictimOfEqualPriorityDoesNotBlock) {
  // Only strictly lower-priority terminating pods make the pod wait. Here it preempts on n2; n1
  // frees up first, so it binds there although it was nominated to n2.
  auto r = TerminatingOnNominatedNode(true, /*leaving_priority=*/100, false).Plan();
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].node, "n2");
  EXPECT_EQ(VictimNames(r), std::vector<std::string>{"default/busy"});
  auto p = PodOf(r, "default/p");
  EXPECT_EQ(NominatedNode(p), "n2");
  EXPECT_EQ(p.node, "n1");
  auto bound = EventsOf(r, "Scheduled", "default/p");
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0].time, Time(kNow + 20));
}

TEST(PreemptionEligibility, NominatedNodeThatBecameUnresolvableLetsThePodPreemptElsewhere) {
  // As in the waiting case, but n1 is now tainted: it cannot help any more, so the terminating
  // victim there does not hold the pod back.
  auto r = TerminatingOnNominatedNode(true, 0, /*taint_n1=*/true).Plan();
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].node, "n2");
  EXPECT_EQ(VictimNames(r), std::vector<std::string>{"default/busy"});
  EXPECT_EQ(NominatedNode(PodOf(r, "default/p")), "n2");
  EXPECT_EQ(PodOf(r, "default/p").node, "n2");
  // At once, without waiting for the victim on n1 to leave.
  auto preempted = EventsOf(r, "Preempted", "default/busy");
  ASSERT_EQ(preempted.size(), 1u);
  EXPECT_EQ(preempted[0].time, Time(kNow));
  auto bound = EventsOf(r, "Scheduled", "default/p");
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0].time, Time(kNow + 30));
}

// =============================================================================================
// §3 Potential nodes and §5 which pods may be victims.

// Four nodes, each full of priority-0 pods; the 2-CPU pending pod wants pool=main. Only `open`
// fails for a reason preemption can fix.
Scenario MixedRejections(bool with_open) {
  Scenario s;
  s.AddNode("tainted", "2", "{pool: main}", "  taints:\n  - {key: dedicated, value: infra, effect: NoSchedule}\n");
  s.AddNode("elsewhere", "2", "{pool: other}");
  s.AddNode("small", "1", "{pool: main}");
  if (with_open) s.AddNode("open", "2", "{pool: main}");
  s.AddPod({.name = "on-tainted", .node = "tainted", .cpu = "2", .start = 1});
  s.AddPod({.name = "on-elsewhere", .node = "elsewhere", .cpu = "2", .start = 2});
  s.AddPod({.name = "on-small", .node = "small", .cpu = "1", .start = 3});
  if (with_open) s.AddPod({.name = "on-open", .node = "open", .cpu = "2", .start = 4});
  s.AddPod({.name = "p", .priority = 100, .cpu = "2", .extra = "  nodeSelector: {pool: main}\n"});
  return s;
}

TEST(PreemptionCandidates, OnlyNodesRejectedAsUnschedulableAreTried) {
  auto r = MixedRejections(true).Plan(0, true);
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].node, "open");
  EXPECT_EQ(VictimNames(r), std::vector<std::string>{"default/on-open"});
  auto lines = FirstPostFilter(r, "default/p");
  EXPECT_EQ(LineStartingWith(lines, "preemption: 1 potential"),
            "preemption: 1 potential node(s); looking for 1 candidate(s) from offset 0");
}

TEST(PreemptionCandidates, TaintsAffinityAndOversizedRequestsAreNotHelpedByPreemption) {
  auto r = MixedRejections(false).Plan();
  auto p = PodOf(r, "default/p");
  EXPECT_FALSE(p.scheduled);
  EXPECT_EQ(NominatedNode(p), "");
  EXPECT_EQ(p.message,
            "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, 1 "
            "node(s) had untolerated taint(s). preemption: 0/3 nodes are available: 3 Preemption is "
            "not helpful for scheduling.");
  EXPECT_TRUE(r.preemptions.empty());
}

TEST(PreemptionCandidates, NodeWithoutLowerPriorityPodsOffersNoVictims) {
  Scenario s;
  s.AddNode("n1").AddPod({.name = "peer", .node = "n1", .priority = 100, .cpu = "1", .start = 1});
  s.AddPod({.name = "p", .priority = 100, .cpu = "1"});
  auto r = s.Plan();
  EXPECT_EQ(PodOf(r, "default/p").message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption "
            "victims found for incoming pod.");
  EXPECT_TRUE(r.preemptions.empty());
}

TEST(PreemptionCandidates, EqualPriorityPodsAreNeverEvicted) {
  // Evicting the priority-50 pod leaves one CPU, which is not enough; the equal-priority pod is
  // not a potential victim, so the node cannot help.
  Scenario s;
  s.AddNode("n1", "2");
  s.AddPod({.name = "peer", .node = "n1", .priority = 100, .cpu = "1", .start = 1});
  s.AddPod({.name = "lower", .node = "n1", .priority = 50, .cpu = "1", .start = 2});
  s.AddPod({.name = "p", .priority = 100, .cpu = "2"});
  auto r = s.Plan();
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_EQ(PodOf(r, "default/p").message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Insufficient cpu.");
}

TEST(PreemptionCandidates, OnlyStrictlyLowerPriorityPodsAreEvicted) {
  Scenario s;
  s.AddNode("n1", "2");
  s.AddPod({.name = "peer", .node = "n1", .priority = 100, .cpu = "1", .start = 1});
  s.AddPod({.name = "lower", .node = "n1", .priority = 99, .cpu = "1", .start = 2});
  s.AddPod({.name = "p", .priority = 100, .cpu = "1"});
  auto r = s.Plan();
  EXPECT_EQ(VictimNames(r), std::vector<std::string>{"default/lower"});
  EXPECT_EQ(PodOf(r, "default/p").node, "n1");
}

TEST(PreemptionCandidates, NominatedPodOfEqualPriorityIsCountedInTheDryRun) {
  // Without the nominee, n1 would win the choice (its victim started later). With the nominee's
  // CPU reserved on n1, evicting `low-a` does not make room there, so `p` preempts on n2.
  Scenario s;
  s.AddNode("n1", "2").AddNode("n2", "2");
  s.AddPod({.name = "low-a", .node = "n1", .priority = 0, .cpu = "1", .start = 20});
  s.AddPod({.name = "low-b", .node = "n2", .priority = 0, .cpu = "2", .start = 10});
  s.AddPod({.name = "p", .priority = 100, .cpu = "2", .created = 50});
  s.AddPod({.name = "nominee", .priority = 100, .cpu = "1", .created = 60, .nominated = "n1"});
  auto r = s.Plan();
  ASSERT_EQ(r.pods.size(), 2u);
  EXPECT_EQ(r.pods[0].name, "default/p");
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].node, "n2");
  EXPECT_EQ(VictimNames(r), std::vector<std::string>{"default/low-b"});
  EXPECT_EQ(PodOf(r, "default/nominee").node, "n1");
  EXPECT_EQ(PodOf(r, "default/p").node, "n2");
}

TEST(PreemptionCandidates, RequiredAffinityToALowerPriorityPodRulesTheNodeOut) {
  // `p` needs a db pod on its node, and the only one is of lower priority: with every
  // lower-priority pod removed the affinity fails, so the node is no candidate.
  Scenario s;
  s.AddNode("n1", "1", HostLabels("n1"));
  s.AddPod({.name = "db", .labels = "{app: db}", .node = "n1", .priority = 0, .cpu = "1", .start = 1});
  s.AddPod({.name = "p", .priority = 100, .cpu = "500m", .extra = PodAffinityToDb()});
  auto r = s.Plan();
  EXPECT_TRUE(r.preemptions.empty());
  auto p = PodOf(r, "default/p");
  EXPECT_FALSE(p.scheduled);
  EXPECT_EQ(NominatedNode(p), "");
  EXPECT_TRUE(
      Contains(p.message, "preemption: 0/1 nodes are available: 1 node(s) didn't match pod affinity rules."));

  // The same affinity towards a pod of equal priority is fine: only the filler goes.
  Scenario ok;
  ok.AddNode("n1", "2", HostLabels("n1"));
  ok.AddPod({.name = "db", .labels = "{app: db}", .node = "n1", .priority = 100, .cpu = "1", .start = 1});
  ok.AddPod({.name = "filler", .node = "n1", .priority = 0, .cpu = "1", .start = 2});
  ok.AddPod({.name = "p", .priority = 100, .cpu = "1", .extra = PodAffinityToDb()});
  auto r2 = ok.Plan();
  EXPECT_EQ(VictimNames(r2), std::vector<std::string>{"default/filler"});
  EXPECT_EQ(PodOf(r2, "default/p").node, "n1");
}

TEST(PreemptionCandidates, PodsOnOtherNodesAreNeverEvicted) {
  // `p` refuses to share a zone with app=x. `x` runs on a1, which is too small for `p` anyway;
  // a2 in the same zone would have room once its filler goes, but `x` would still be in the
  // zone. Preemption does not evict across nodes, so nothing happens.
  Scenario s;
  s.AddNode("a1", "500m", ZoneLabels("a"));
  s.AddNode("a2", "1", ZoneLabels("a"));
  s.AddPod({.name = "x", .labels = "{app: x}", .node = "a1", .priority = 0, .cpu = "100m", .start = 1});
  s.AddPod({.name = "filler", .node = "a2", .priority = 0, .cpu = "1", .start = 2});
  s.AddPod({.name = "p", .priority = 100, .cpu = "1",
            .extra = RequiredPodTerm("podAntiAffinity", "{app: x}", kZone)});
  auto r = s.Plan();
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_EQ(CountEvents(r, "Preempted"), 0u);
  EXPECT_TRUE(Contains(PodOf(r, "default/p").message,
                       "preemption: 0/2 nodes are available: 1 Preemption is not helpful for scheduling, 1 node(s) "
                        "didn't match pod anti-affinity rules."));
}

TEST(PreemptionCandidates, AntiAffinityConflictIsResolvedByEvictingOnlyTheConflictingPod) {
  Scenario s;
  s.AddNode("n1", "2", HostLabels("n1"));
  s.AddPod({.name = "noisy", .labels = "{app: noisy}", .node = "n1", .priority = 0, .cpu = "100m", .start = 1});
  s.AddPod({.name = "quiet", .node = "n1", .priority = 0, .cpu = "100m", .start = 2});
  s.AddPod({.name = "p", .priority = 100, .cpu = "1",
            .extra = RequiredPodTerm("podAntiAffinity", "{app: noisy}", "kubernetes.io/hostname")});
  auto r = s.Plan();
  EXPECT_EQ(VictimNames(r), std::vector<std::string>{"default/noisy"});
  EXPECT_EQ(PodOf(r, "default/p").node, "n1");
}

TEST(PreemptionCandidates, TopologySpreadIsRestoredByEvictingTheSurplus) {
  // n1 runs three low-priority web pods, n2 one high-priority web pod and a priority-50 filler.
  // On n1, two web pods must go for the skew to stay within 1; the oldest is reprieved. n2 would
  // need the filler gone, whose priority is higher than n1's victims, so n1 is chosen.
  Scenario s;
  s.AddNode("n1", "4", HostLabels("n1")).AddNode("n2", "1", HostLabels("n2"));
  for (int i = 1; i <= 3; ++i) {
    s.AddPod({.name = "web" + std::to_string(i), .labels = "{app: web}", .node = "n1", .priority = 0,
              .cpu = "100m", .start = i});
  }
  s.AddPod({.name = "web-high", .labels = "{app: web}", .node = "n2", .priority = 1000, .cpu = "500m", .start = 4});
  s.AddPod({.name = "filler", .node = "n2", .priority = 50, .cpu = "500m", .start = 5});
  s.AddPod({.name = "p", .labels = "{app: web}", .priority = 100, .cpu = "500m",
            .extra = SpreadWeb(1, "kubernetes.io/hostname")});
  auto r = s.Plan();
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].node, "n1");
  EXPECT_EQ(VictimNames(r), (std::vector<std::string>{"default/web2", "default/web3"}));
  EXPECT_EQ(PodOf(r, "default/p").node, "n1");
}

// =============================================================================================
// §5 Dry run: greedy reprieve and PDBs.

TEST(PreemptionDryRun, ReprieveKeepsTheOlderOfTwoEqualPods) {
  Scenario s;
  s.AddNode("n1", "2");
  s.AddPod({.name = "young", .node = "n1", .priority = 0, .cpu = "1", .start = 30});
  s.AddPod({.name = "old", .node = "n1", .priority = 0, .cpu = "1", .start = 10});
  s.AddPod({.name = "p", .priority = 100, .cpu = "1"});
  auto r = s.Plan();
  EXPECT_EQ(VictimNames(r), std::vector<std::string>{"default/young"});
}

TEST(PreemptionDryRun, SmallLowPriorityPodSurvivesWhileABiggerHigherPriorityPodGoes) {
  Scenario s;
  s.AddNode("n1", "3");
  s.AddPod({.name = "big", .node = "n1", .priority = 50, .cpu = "2", .start = 1});
  s.AddPod({.name = "small", .node = "n1", .priority = 10, .cpu = "1", .start = 2});
  s.AddPod({.name = "p", .priority = 100, .cpu = "2"});
  auto r = s.Plan();
  EXPECT_EQ(VictimNames(r), std::vector<std::string>{"default/big"});
  EXPECT_EQ(r.preemptions[0].victims[0].priority, 50);
}

Scenario GuardedAndFree(bool with_pdb) {
  Scenario s;
  s.AddNode("n1", "2");
  if (with_pdb) s.AddPdb("guard", "{matchLabels: {app: g}}", "  minAvailable: 1\n", "  disruptionsAllowed: 0\n");
  s.AddPod({.name = "free", .node = "n1", .priority = 20, .cpu = "1", .start = 1});
  s.AddPod({.name = "guarded", .labels = "{app: g}", .node = "n1", .priority = 10, .cpu = "1", .start = 2});
  s.AddPod({.name = "p", .priority = 100, .cpu = "1"});
  return s;
}

TEST(PreemptionDryRun, PdbViolatingPodsAreReprievedFirst) {
  // Without a budget the less important pod goes; with a budget that allows no disruption, the
  // guarded pod is tried first, stays, and the more important free pod goes instead.
  auto without = GuardedAndFree(false).Plan();
  EXPECT_EQ(VictimNames(without), std::vector<std::string>{"default/guarded"});
  auto with = GuardedAndFree(true).Plan();
  EXPECT_EQ(VictimNames(with), std::vector<std::string>{"default/free"});
  ASSERT_EQ(with.preemptions.size(), 1u);
  EXPECT_EQ(ViolatesPdb(with.preemptions[0]), std::vector<bool>{false});
}

// n1 (3 CPUs) runs g1, g2, g3 (priority 10, one CPU each, app=g, g1 the oldest); `p` asks for
// `cpu`. The budget over app=g is given by `spec` and `status`.
Scenario ThreeGuarded(const std::string& cpu, const std::string& spec, const std::string& status) {
  Scenario s;
  s.AddNode("n1", "3");
  s.AddPdb("guard", "{matchLabels: {app: g}}", spec, status);
  for (int i = 1; i <= 3; ++i) {
    s.AddPod({.name = "g" + std::to_string(i), .labels = "{app: g}", .node = "n1", .priority = 10, .cpu = "1",
              .start = i});
  }
  s.AddPod({.name = "p", .priority = 100, .cpu = cpu});
  return s;
}

TEST(PreemptionDryRun, ViolatesPdbIsTrueExactlyForVictimsFromTheViolatingGroup) {
  // One disruption allowed: walking g1, g2, g3 in importance order, g1 takes the budget and g2,
  // g3 are violating.
  auto all = ThreeGuarded("3", "  minAvailable: 2\n", "  disruptionsAllowed: 1\n").Plan();
  ASSERT_EQ(all.preemptions.size(), 1u);
  EXPECT_EQ(VictimNames(all), (std::vector<std::string>{"default/g1", "default/g2", "default/g3"}));
  EXPECT_EQ(ViolatesPdb(all.preemptions[0]), (std::vector<bool>{false, true, true}));

  // Two CPUs: the violating group is reprieved first, so g2 stays and g3 goes (violating), then
  // g1 goes (not violating). Victims are re-sorted by importance.
  auto two = ThreeGuarded("2", "  minAvailable: 2\n", "  disruptionsAllowed: 1\n").Plan();
  ASSERT_EQ(two.preemptions.size(), 1u);
  EXPECT_EQ(VictimNames(two), (std::vector<std::string>{"default/g1", "default/g3"}));
  EXPECT_EQ(ViolatesPdb(two.preemptions[0]), (std::vector<bool>{false, true}));
  auto j = JsonOf(two);
  EXPECT_EQ(j["preemptions"][0]["victims"][0]["violatesPDB"], false);
  EXPECT_EQ(j["preemptions"][0]["victims"][1]["violatesPDB"], true);
}

TEST(PreemptionDryRun, PdbBudgetComesFromItsStatusOrFromItsSpec) {
  struct Case {
    std::string spec;
    std::string status;
    int violations;  // of the three victims
  };
  const std::vector<Case> cases = {
      {"  minAvailable: 3\n", "  disruptionsAllowed: 2\n", 1},  // a given status wins over the spec
      {"  minAvailable: 0\n", "  disruptionsAllowed: 0\n", 3},
      {"  minAvailable: 0\n", "", 0},
      {"  minAvailable: 1\n", "", 1},
      {"  minAvailable: 3\n", "", 3},
      {"  minAvailable: \"50%\"\n", "", 2},    // 1.5 rounds up to 2 desired: one disruption
      {"  minAvailable: \"33%\"\n", "", 1},    // 0.99 rounds up to 1 desired: two disruptions
      {"  maxUnavailable: 2\n", "", 1},
      {"  maxUnavailable: \"50%\"\n", "", 1},  // 1.5 unavailable rounds up to 2
      {"  maxUnavailable: \"10%\"\n", "", 2},  // 0.3 rounds up to 1
      {"  maxUnavailable: 0\n", "", 3},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.spec + c.status);
    auto r = ThreeGuarded("3", c.spec, c.status).Plan();
    ASSERT_EQ(r.preemptions.size(), 1u);
    ASSERT_EQ(r.preemptions[0].victims.size(), 3u);
    auto flags = ViolatesPdb(r.preemptions[0]);
    EXPECT_EQ(std::count(flags.begin(), flags.end(), true), c.violations);
    // The budget is taken in importance order: the violations are the last victims.
    for (int i = 0; i < 3; ++i) EXPECT_EQ(flags[static_cast<size_t>(i)], i >= 3 - c.violations) << i;
  }
}

TEST(PreemptionDryRun, DisruptedPodsDoNotConsumeTheBudget) {
  // One disruption allowed, and g1 is already counted as disrupted: g1 is free, g2 takes the
  // budget, only g3 violates.
  auto r = ThreeGuarded("3", "  minAvailable: 2\n",
                        "  disruptionsAllowed: 1\n  disruptedPods: {g1: \"" + At(0) + "\"}\n")
               .Plan();
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(ViolatesPdb(r.preemptions[0]), (std::vector<bool>{false, false, true}));
}

TEST(PreemptionDryRun, PdbsMatchOnlyLabelledPodsOfTheirOwnNamespace) {
  // `foreign` guards app=g in another namespace; `no-app` matches pods without an app label,
  // which the unlabelled pod would satisfy, but unlabelled pods match no budget. Only `tagged`
  // (labelled, no app label) is protected.
  Scenario s;
  s.AddNode("n1", "3");
  s.AddPdb("foreign", "{matchLabels: {app: g}}", "  minAvailable: 1\n", "  disruptionsAllowed: 0\n", "other");
  s.AddPdb("no-app", "{matchExpressions: [{key: app, operator: DoesNotExist}]}", "  minAvailable: 1\n",
           "  disruptionsAllowed: 0\n");
  s.AddPod({.name = "labelled", .labels = "{app: g}", .node = "n1", .priority = 0, .cpu = "1", .start = 1});
  s.AddPod({.name = "plain", .node = "n1", .priority = 0, .cpu = "1", .start = 2});
  s.AddPod({.name = "tagged", .labels = "{tier: web}", .node = "n1", .priority = 0, .cpu = "1", .start = 3});
  s.AddPod({.name = "p", .priority = 100, .cpu = "3"});
  auto r = s.Plan();
  ASSERT_EQ(r.preemptions.size(), 1u);
  ASSERT_EQ(r.preemptions[0].victims.size(), 3u);
  for (const auto& v : r.preemptions[0].victims) {
    EXPECT_EQ(v.violates_pdb, v.name == "default/tagged") << v.name;
  }
}

// =============================================================================================
// §7 Choosing the node: each rule decides one scenario.

std::string ChoiceLine(const sim::PlanResult& r, const std::string& pod = "default/p") {
  return LineStartingWith(FirstPostFilter(r, pod), "preemption: chose ");
}

// Plans `s` as it is and with a PodDisruptionBudget that guards none of its pods; the choice and
// the victims must be the same (a budget that matches nobody changes nothing).
void ExpectChoice(Scenario s, const std::string& choice, const std::vector<std::string>& victims) {
  for (bool with_budget : {false, true}) {
    SCOPED_TRACE(with_budget ? "with an unrelated budget" : "without budgets");
    if (with_budget) s.AddPdb("nobody", "{matchLabels: {app: nobody}}", "  minAvailable: 1\n");
    auto r = s.Plan(0, true);
    EXPECT_EQ(ChoiceLine(r), choice);
    EXPECT_EQ(VictimNames(r), victims);
  }
}

TEST(PreemptionNodeChoice, FewestPdbViolationsWins) {
  // n2's victim has the higher priority, but n1's would break a budget.
  Scenario s;
  s.AddNode("n1").AddNode("n2");
  s.AddPdb("guard", "{matchLabels: {app: g}}", "  minAvailable: 1\n", "  disruptionsAllowed: 0\n");
  s.AddPod({.name = "guarded", .labels = "{app: g}", .node = "n1", .priority = 0, .cpu = "1", .start = 1});
  s.AddPod({.name = "open", .node = "n2", .priority = 50, .cpu = "1", .start = 2});
  s.AddPod({.name = "p", .priority = 100, .cpu = "1"});
  auto r = s.Plan(0, true);
  EXPECT_EQ(ChoiceLine(r), "preemption: chose n2 (fewest PDB violations)");
  EXPECT_EQ(VictimNames(r), std::vector<std::string>{"default/open"});
}

TEST(PreemptionNodeChoice, LowestHighestVictimPriorityWins) {
  // n2 needs two victims, but its most important one has a lower priority than n1's only one.
  Scenario s;
  s.AddNode("n1", "2").AddNode("n2", "2");
  s.AddPod({.name = "one", .node = "n1", .priority = 10, .cpu = "2", .start = 1});
  s.AddPod({.name = "two-a", .node = "n2", .priority = 5, .cpu = "1", .start = 2});
  s.AddPod({.name = "two-b", .node = "n2", .priority = 5, .cpu = "1", .start = 3});
  s.AddPod({.name = "p", .priority = 100, .cpu = "2"});
  ExpectChoice(s, "preemption: chose n2 (lowest priority among the most important victims)",
               std::vector<std::string>{"default/two-a", "default/two-b"});
}

TEST(PreemptionNodeChoice, SmallestOffsetSumOfPrioritiesWinsSoAnExtraVictimAlwaysCosts) {
  // Raw sums: n1 {100, -100, -100} = -100 < n2 {100, -100} = 0. With 2^31 added per victim,
  // n1's third victim costs more than any priority difference, so n2 wins.
  Scenario s;
  s.AddNode("n1", "3").AddNode("n2", "3");
  s.AddPod({.name = "a", .node = "n1", .priority = 100, .cpu = "1", .start = 1});
  s.AddPod({.name = "b", .node = "n1", .priority = -100, .cpu = "1", .start = 2});
  s.AddPod({.name = "c", .node = "n1", .priority = -100, .cpu = "1", .start = 3});
  s.AddPod({.name = "d", .node = "n2", .priority = 100, .cpu = "1500m", .start = 4});
  s.AddPod({.name = "e", .node = "n2", .priority = -100, .cpu = "1500m", .start = 5});
  s.AddPod({.name = "p", .priority = 1000, .cpu = "3"});
  ExpectChoice(s, "preemption: chose n2 (smallest sum of victim priorities)",
               std::vector<std::string>{"default/d", "default/e"});
}

TEST(PreemptionNodeChoice, FewestVictimsBreaksATieOfOffsetSums) {
  // n1 {0, -2^31} and n2 {0} have the same top priority and the same offset sum (2^31), so the
  // number of victims decides.
  Scenario s;
  s.AddNode("n1", "2").AddNode("n2", "2");
  s.AddPod({.name = "f", .node = "n1", .priority = 0, .cpu = "1", .start = 1});
  s.AddPod({.name = "g", .node = "n1", .priority = -2147483648LL, .cpu = "1", .start = 2});
  s.AddPod({.name = "h", .node = "n2", .priority = 0, .cpu = "2", .start = 3});
  s.AddPod({.name = "p", .priority = 100, .cpu = "2"});
  ExpectChoice(s, "preemption: chose n2 (fewest victims)", std::vector<std::string>{"default/h"});
}

TEST(PreemptionNodeChoice, LatestStartAmongTheHighestPriorityVictimsWins) {
  // Among the priority-10 victims n1's started later (50 > 30). Counting every victim, n2 would
  // look younger (its oldest started at 30, n1's at 10): only the top-priority ones count.
  Scenario s;
  s.AddNode("n1", "2").AddNode("n2", "2");
  s.AddPod({.name = "hi1", .node = "n1", .priority = 10, .cpu = "1", .start = 50});
  s.AddPod({.name = "lo1", .node = "n1", .priority = 0, .cpu = "1", .start = 10});
  s.AddPod({.name = "hi2", .node = "n2", .priority = 10, .cpu = "1", .start = 30});
  s.AddPod({.name = "lo2", .node = "n2", .priority = 0, .cpu = "1", .start = 90});
  s.AddPod({.name = "p", .priority = 100, .cpu = "2"});
  ExpectChoice(s, "preemption: chose n1 (latest start among the highest-priority victims)",
               std::vector<std::string>{"default/hi1", "default/lo1"});
}

// =============================================================================================
// §4 Candidate sampling.

// Ten identical full nodes n0..n9; every one is a candidate.
Scenario TenFullNodes(const std::string& config) {
  Scenario s;
  for (int i = 0; i < 10; ++i) {
    const std::string n = "n" + std::to_string(i);
    s.AddNode(n).AddPod({.name = "low-" + n, .node = n, .priority = 0, .cpu = "1", .start = i});
  }
  s.AddPod({.name = "p", .priority = 100, .cpu = "1"});
  return s.Raw(config);
}

TEST(PreemptionSampling, ConfiguredArgumentsSetHowManyCandidatesAreSought) {
  struct Case {
    std::string config;
    size_t want;
  };
  const std::vector<Case> cases = {
      {"", 10},                     // defaults: max(10% of 10, 100), at most 10
      {SamplingConfig(20, 3), 3},   // max(2, 3)
      {SamplingConfig(50, 1), 5},   // max(5, 1)
      {SamplingConfig(0, 2), 2},    // max(0, 2)
      {SamplingConfig(100, 0), 10},
      {SamplingConfig(10, 0), 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.config);
    auto r = TenFullNodes(c.config).Plan(0, true);
    auto lines = FirstPostFilter(r, "default/p");
    const std::string head = LineStartingWith(lines, "preemption: 10 potential");
    EXPECT_TRUE(BeginsWith(head, "preemption: 10 potential node(s); looking for " + std::to_string(c.want) +
                                     " candidate(s) from offset "));
    EXPECT_EQ(CandidateLines(lines).size(), c.want);
    ASSERT_EQ(r.preemptions.size(), 1u);
  }
}

TEST(PreemptionSampling, SeedChangesOnlyTheOffsetWhereTheScanStarts) {
  const Scenario s = TenFullNodes(SamplingConfig(20, 3));
  std::set<size_t> offsets;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    SCOPED_TRACE(seed);
    auto r = s.Plan(seed, true);
    auto lines = FirstPostFilter(r, "default/p");
    const std::string prefix = "preemption: 10 potential node(s); looking for 3 candidate(s) from offset ";
    const std::string head = LineStartingWith(lines, prefix);
    ASSERT_FALSE(head.empty());
    const size_t offset = std::stoul(head.substr(prefix.size()));
    ASSERT_LT(offset, 10u);
    offsets.insert(offset);
    // The scan visits n<offset>, n<offset+1>, ... and stops with three candidates.
    auto candidates = CandidateLines(lines);
    ASSERT_EQ(candidates.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_TRUE(BeginsWith(candidates[i], "candidate n" + std::to_string((offset + i) % 10) + ": 1 victim(s)"));
    }
    // Among them, the node whose victim started last (the highest index) is chosen.
    size_t youngest = 0;
    for (size_t i = 0; i < 3; ++i) youngest = std::max(youngest, (offset + i) % 10);
    EXPECT_EQ(r.preemptions.at(0).node, "n" + std::to_string(youngest));
  }
  EXPECT_GT(offsets.size(), 1u);
}

TEST(PreemptionSampling, ScanStopsOnceItHasEnoughCandidatesWithOneFreeOfViolations) {
  // Four full nodes; two candidates are sought. n0 and n3 would break a budget; n1's victim has
  // priority 20, n2's 10. The scan starts at the seeded offset and stops as soon as it holds two
  // candidates of which at least one breaks no budget, so n2 wins only when the scan reaches it
  // before stopping.
  Scenario s;
  s.AddPdb("guard", "{matchLabels: {app: g}}", "  minAvailable: 2\n", "  disruptionsAllowed: 0\n");
  for (int i = 0; i < 4; ++i) s.AddNode("n" + std::to_string(i));
  s.AddPod({.name = "guarded0", .labels = "{app: g}", .node = "n0", .priority = 0, .cpu = "1", .start = 1});
  s.AddPod({.name = "mid", .node = "n1", .priority = 20, .cpu = "1", .start = 2});
  s.AddPod({.name = "low", .node = "n2", .priority = 10, .cpu = "1", .start = 3});
  s.AddPod({.name = "guarded3", .labels = "{app: g}", .node = "n3", .priority = 0, .cpu = "1", .start = 4});
  s.AddPod({.name = "p", .priority = 100, .cpu = "1"});
  s.Raw(SamplingConfig(0, 2));
  // offset -> the chosen node: 0 scans n0 (violating), n1 and stops; 1 scans n1, n2; 2 scans n2,
  // n3; 3 scans n3, n0 (both violating, so it goes on) and n1.
  const std::vector<std::string> expected = {"n1", "n2", "n2", "n1"};
  std::set<size_t> offsets;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    SCOPED_TRACE(seed);
    auto r = s.Plan(seed, true);
    auto lines = FirstPostFilter(r, "default/p");
    const std::string prefix = "preemption: 4 potential node(s); looking for 2 candidate(s) from offset ";
    const std::string head = LineStartingWith(lines, prefix);
    ASSERT_FALSE(head.empty());
    const size_t offset = std::stoul(head.substr(prefix.size()));
    ASSERT_LT(offset, 4u);
    offsets.insert(offset);
    EXPECT_EQ(CandidateLines(lines).size(), offset == 3 ? 3u : 2u);
    ASSERT_EQ(r.preemptions.size(), 1u);
    EXPECT_EQ(r.preemptions[0].node, expected[offset]) << "offset " << offset;
  }
  EXPECT_TRUE(offsets.count(0) && offsets.count(3)) << "the seeds should cover both stopping cases";
}

// =============================================================================================
// §8 Actuation on the virtual clock.

TEST(PreemptionActuation, PreemptorIsNominatedAndBindsOnlyAfterTheVictimsGracePeriod) {
  Scenario s;
  s.AddNode("n1");
  s.AddPod({.name = "victim", .uid = "uid-victim", .node = "n1", .priority = 0, .cpu = "1", .start = 1});
  s.AddPod({.name = "p", .uid = "uid-p", .priority = 100, .cpu = "1"});
  auto r = s.Plan(0, true);
  ASSERT_EQ(r.start, Time(kNow));
  ASSERT_GE(r.cycles.size(), 2u);
  // The preempting cycle fails for the preemptor and nominates it.
  EXPECT_EQ(r.cycles[0].pod->pod.Key(), "default/p");
  EXPECT_FALSE(r.cycles[0].scheduled);
  EXPECT_EQ(r.cycles[0].nominated_node, "n1");
  // The victim gets its event at once and leaves 30 s later; the preemptor binds then.
  auto preempted = EventsOf(r, "Preempted", "default/victim");
  ASSERT_EQ(preempted.size(), 1u);
  EXPECT_EQ(preempted[0].time, Time(kNow));
  EXPECT_EQ(preempted[0].type, "Normal");
  EXPECT_EQ(preempted[0].message, "Preempted by pod uid-p on node n1");
  auto bound = EventsOf(r, "Scheduled", "default/p");
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0].time, Time(kNow + 30));
  EXPECT_EQ(bound[0].message, "Successfully assigned default/p to n1");
  auto p = PodOf(r, "default/p");
  EXPECT_TRUE(p.scheduled);
  EXPECT_EQ(p.node, "n1");
  EXPECT_EQ(NominatedNode(p), "n1");
  // The -o json contract.
  auto j = JsonOf(r);
  EXPECT_EQ(j["pods"][0]["nominatedNode"], "n1");
  ASSERT_EQ(j["preemptions"].size(), 1u);
  EXPECT_EQ(j["preemptions"][0]["preemptor"], "default/p");
  EXPECT_EQ(j["preemptions"][0]["preemptorKind"], "Pod");
  EXPECT_EQ(j["preemptions"][0]["node"], "n1");
  EXPECT_EQ(j["preemptions"][0]["victims"],
            nlohmann::json::parse(
                R"([{"name": "default/victim", "node": "n1", "priority": 0, "violatesPDB": false}])"));
}

TEST(PreemptionActuation, VictimsOwnGracePeriodSetsWhenThePreemptorBinds) {
  for (int grace : {0, 7, 45}) {
    SCOPED_TRACE(grace);
    Scenario s;
    s.AddNode("n1");
    s.AddPod({.name = "victim", .node = "n1", .priority = 0, .cpu = "1", .start = 1, .grace = grace});
    s.AddPod({.name = "p", .priority = 100, .cpu = "1"});
    auto r = s.Plan(0, true);
    ASSERT_EQ(r.preemptions.size(), 1u);
    ASSERT_GE(r.cycles.size(), 2u);
    EXPECT_FALSE(r.cycles[0].scheduled);  // never bound in the preempting cycle, even with 0 s
    auto bound = EventsOf(r, "Scheduled", "default/p");
    ASSERT_EQ(bound.size(), 1u);
    EXPECT_EQ(bound[0].time, Time(kNow + grace));
    auto killed = EventsOf(r, "Killing", "default/victim");
    ASSERT_EQ(killed.size(), 1u);
    EXPECT_EQ(killed[0].time, Time(kNow + grace));
  }
}

TEST(PreemptionActuation, AlreadyTerminatingVictimIsNeitherEvictedAgainNorListed) {
  Scenario s;
  s.AddNode("n1", "2");
  s.AddPod({.name = "going", .node = "n1", .priority = 0, .cpu = "1", .start = 1, .deletion = kNow + 10});
  s.AddPod({.name = "staying", .node = "n1", .priority = 0, .cpu = "1", .start = 2});
  s.AddPod({.name = "p", .uid = "uid-p", .priority = 100, .cpu = "2"});
  auto r = s.Plan();
  // Upstream makes no API call and records no Preempted event for a victim already being
  // deleted: the preemption's victims are the pods it evicts.
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(VictimNames(r), (std::vector<std::string>{"default/staying"}));
  EXPECT_EQ(CountEvents(r, "Preempted"), 1u);
  EXPECT_EQ(EventsOf(r, "Preempted", "default/staying").size(), 1u);
  EXPECT_TRUE(EventsOf(r, "Preempted", "default/going").empty());
  // `going` leaves at its own deletion time, `staying` after its grace period.
  ASSERT_EQ(EventsOf(r, "Killing", "default/going").size(), 1u);
  EXPECT_EQ(EventsOf(r, "Killing", "default/going")[0].time, Time(kNow + 10));
  auto bound = EventsOf(r, "Scheduled", "default/p");
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0].time, Time(kNow + 30));
}

TEST(PreemptionActuation, ANominationThatLeavesANodeLetsPodsItHeldOutTryAgain) {
  // `big` (2.2 CPU) arrives nominated to n1, which it can never fit; `small` (0.8 CPU, same
  // priority, tried first) is kept off n1 by that nomination and n0 is full. When `big` is tried,
  // preemption cannot help and clears its nomination: upstream treats the change like `big`
  // leaving n1 (hasNominatedNodeNameChanged) and tries pods of no higher priority again, so
  // `small` binds to n1 in its second attempt. Checked against kube-scheduler v1.37.2.
  Scenario s;
  s.AddNode("n0", "2").AddNode("n1", "2");
  s.AddPod({.name = "running", .node = "n0", .priority = 100, .cpu = "1400m", .start = 1});
  s.AddPod({.name = "small", .priority = 100, .cpu = "800m"});
  s.AddPod({.name = "big", .priority = 100, .cpu = "2200m", .nominated = "n1"});
  auto r = s.Plan();
  auto small = PodOf(r, "default/small");
  EXPECT_EQ(small.node, "n1");
  EXPECT_EQ(small.attempts, 2);
  auto big = PodOf(r, "default/big");
  EXPECT_FALSE(big.scheduled);
  EXPECT_EQ(NominatedNode(big), "");
  EXPECT_TRUE(r.preemptions.empty());
}

TEST(PreemptionActuation, LowerPriorityPodNominatedToTheNodeLosesItsNomination) {
  // `nominee` (50) was nominated to n1. `p` (100) preempts on n1 (its victim there has priority 0
  // against 60 on n2), which clears the nominee's nomination. The nominee cannot preempt anything
  // afterwards: n1's room is reserved for `p`, n2's pod outranks it. It ends pending and
  // unnominated.
  Scenario s;
  s.AddNode("n1", "2").AddNode("n2", "2");
  s.AddPod({.name = "low", .node = "n1", .priority = 0, .cpu = "2", .start = 1});
  s.AddPod({.name = "mid", .node = "n2", .priority = 60, .cpu = "2", .start = 2});
  s.AddPod({.name = "p", .priority = 100, .cpu = "2"});
  s.AddPod({.name = "nominee", .priority = 50, .cpu = "1", .nominated = "n1"});
  auto r = s.Plan(0, true);
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].preemptor, "default/p");
  EXPECT_EQ(r.preemptions[0].node, "n1");
  EXPECT_EQ(VictimNames(r), std::vector<std::string>{"default/low"});
  EXPECT_EQ(PodOf(r, "default/p").node, "n1");
  auto nominee = PodOf(r, "default/nominee");
  EXPECT_FALSE(nominee.scheduled);
  EXPECT_EQ(NominatedNode(nominee), "");
  // The nomination went when `p` preempted: no later cycle of the nominee tries n1 first.
  ASSERT_EQ(r.cycles.at(0).pod->pod.Key(), "default/p");
  int nominee_cycles = 0;
  for (const auto& c : r.cycles) {
    if (c.pod->pod.Key() != "default/nominee") continue;
    ++nominee_cycles;
    EXPECT_FALSE(c.explain->nominated_node_first) << "attempt " << c.attempt;
  }
  EXPECT_GT(nominee_cycles, 0);
  auto j = JsonOf(r);
  for (const auto& pod : j["pods"]) {
    if (pod["name"] == "default/nominee") {
      EXPECT_TRUE(pod["nominatedNode"].is_null());
    } else if (pod["name"] == "default/p") {
      EXPECT_EQ(pod["nominatedNode"], "n1");
    }
  }
}

TEST(PreemptionActuation, NominatedPodOfEqualPriorityKeepsItsNomination) {
  // `peer` (100) is nominated to n1 and `p` (100) preempts there, counting `peer`'s CPU: only
  // strictly lower-priority nominations are cleared, so `peer` keeps n1, waits for the victim
  // like `p` does, and both end up on n1 with a single preemption.
  Scenario s;
  s.AddNode("n1", "3");
  s.AddPod({.name = "low", .node = "n1", .priority = 0, .cpu = "2", .start = 1});
  s.AddPod({.name = "p", .priority = 100, .cpu = "1", .created = 50});
  s.AddPod({.name = "peer", .priority = 100, .cpu = "1", .created = 60, .nominated = "n1"});
  auto r = s.Plan(0, true);
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].preemptor, "default/p");
  int peer_cycles = 0;
  for (const auto& c : r.cycles) {
    if (c.pod->pod.Key() != "default/peer") continue;
    ++peer_cycles;
    EXPECT_TRUE(c.explain->nominated_node_first) << "attempt " << c.attempt;
  }
  EXPECT_GT(peer_cycles, 0);
  EXPECT_EQ(PodOf(r, "default/peer").node, "n1");
  EXPECT_EQ(PodOf(r, "default/p").node, "n1");
}

// Loads and admits `yaml` for tests that drive a ClusterSimulation themselves.
manifest::ClusterObjects Admitted(const std::string& yaml) {
  manifest::LoadResult r = manifest::Load({{"test.yaml", yaml}});
  for (const auto& e : r.errors) ADD_FAILURE() << e;
  for (const auto& e : admission::AdmitPriorities(r.objects)) ADD_FAILURE() << e;
  return r.objects;
}

TEST(PreemptionActuation, HigherPriorityPodArrivingWhileVictimsTerminateTakesTheRoom) {
  Scenario s;
  s.AddNode("n1");
  s.AddPod({.name = "victim", .node = "n1", .priority = 0, .cpu = "1", .start = 1});
  s.AddPod({.name = "mid", .priority = 100, .cpu = "1"});
  s.AddPod({.name = "urgent", .priority = 1000, .cpu = "1"});
  manifest::ClusterObjects objects = Admitted(s.Yaml());
  sim::SimulationOptions options;
  options.explain = true;
  sim::ClusterSimulation cluster(model::SchedulerConfig{}, Time(kNow), options);
  ASSERT_TRUE(cluster.Init().ok());
  for (const auto& [node, origin] : objects.nodes) ASSERT_TRUE(cluster.AddNode(node).ok());
  model::Pod urgent;
  for (const auto& [pod, origin] : objects.pods) {
    if (!pod.node_name.empty()) {
      ASSERT_TRUE(cluster.AddRunningPod(pod).ok());
    } else if (pod.name == "urgent") {
      urgent = pod;
    } else {
      cluster.AddPendingPod(pod, Time(kNow));
    }
  }
  // `mid` preempts `victim`; ten seconds into the grace period, `urgent` arrives.
  bool idle = false;
  for (int i = 0; i < 10 && cluster.result().preemptions.empty() && !idle; ++i) {
    ASSERT_TRUE(cluster.Step(&idle).ok());
  }
  ASSERT_EQ(cluster.result().preemptions.size(), 1u);
  cluster.clock().AdvanceTo(Time(kNow + 10));
  cluster.AddPendingPod(urgent);
  ASSERT_TRUE(cluster.RunUntilIdle().ok());
  const sim::PlanResult& r = cluster.result();

  auto u = PodOf(r, "default/urgent");
  EXPECT_EQ(u.node, "n1");
  EXPECT_EQ(NominatedNode(u), "n1");
  auto bound = EventsOf(r, "Scheduled", "default/urgent");
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0].time, Time(kNow + 30));  // when the victim is gone, not later
  auto m = PodOf(r, "default/mid");
  EXPECT_FALSE(m.scheduled);
  EXPECT_EQ(NominatedNode(m), "");  // its nomination was taken away...
  // ...when `urgent` preempted: from then on `mid` never tries n1 first.
  bool urgent_seen = false;
  int mid_after = 0;
  for (const auto& c : r.cycles) {
    if (c.pod->pod.Key() == "default/urgent") urgent_seen = true;
    if (urgent_seen && c.pod->pod.Key() == "default/mid") {
      ++mid_after;
      EXPECT_FALSE(c.explain->nominated_node_first) << "attempt " << c.attempt;
    }
  }
  EXPECT_GT(mid_after, 0);
  // The victim was evicted once, by `mid`; `urgent`'s decision evicts nobody new, so it is no
  // preemption of its own (upstream records no Preempted event for a pod already terminating).
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].preemptor, "default/mid");
  EXPECT_EQ(VictimNames(r), (std::vector<std::string>{"default/victim"}));
  EXPECT_EQ(CountEvents(r, "Preempted"), 1u);
}

TEST(PreemptionActuation, SameInputAndSeedGiveIdenticalJson) {
  Scenario s;
  s.AddPdb("guard", "{matchLabels: {app: g}}", "  maxUnavailable: 1\n");
  for (int i = 0; i < 8; ++i) {
    const std::string n = "n" + std::to_string(i);
    s.AddNode(n, "4", HostLabels(n));
    for (int k = 0; k < 4; ++k) {
      s.AddPod({.name = n + "-pod" + std::to_string(k), .labels = k % 2 ? "{app: g}" : "{}", .node = n,
                .priority = (i + k) % 3 * 10, .cpu = "1", .start = i * 4 + k});
    }
  }
  for (int i = 0; i < 6; ++i) {
    s.AddPod({.name = "pre" + std::to_string(i), .priority = 100 + i % 2, .cpu = std::to_string(1 + i % 3),
              .created = 60 + i});
  }
  const std::string a = plan::Render(s.Plan(5), plan::Format::kJson, false);
  const std::string b = plan::Render(s.Plan(5), plan::Format::kJson, false);
  EXPECT_EQ(a, b);
  EXPECT_GE(nlohmann::json::parse(a)["preemptions"].size(), 6u);
}

// =============================================================================================
// Switching DefaultPreemption off.

Scenario OneFullNode(const std::string& config) {
  Scenario s;
  s.AddNode("n1").AddPod({.name = "low", .node = "n1", .priority = 0, .cpu = "1", .start = 1});
  s.AddPod({.name = "p", .priority = 100, .cpu = "1"});
  return s.Raw(config);
}

TEST(PreemptionDisabled, PostFilterDisabledLeavesPodsPendingWithoutNomination) {
  auto r = OneFullNode(ProfileConfig("  plugins:\n    postFilter:\n      disabled: [{name: DefaultPreemption}]\n"))
               .Plan();
  EXPECT_TRUE(r.preemptions.empty());
  auto p = PodOf(r, "default/p");
  EXPECT_FALSE(p.scheduled);
  EXPECT_EQ(NominatedNode(p), "");
  EXPECT_EQ(p.message, "0/1 nodes are available: 1 Insufficient cpu.");
}

TEST(PreemptionDisabled, MultiPointDisabledLeavesPodsPendingWithoutNomination) {
  auto r = OneFullNode(ProfileConfig("  plugins:\n    multiPoint:\n      disabled: [{name: DefaultPreemption}]\n"))
               .Plan();
  EXPECT_TRUE(r.preemptions.empty());
  auto p = PodOf(r, "default/p");
  EXPECT_FALSE(p.scheduled);
  EXPECT_EQ(NominatedNode(p), "");
  EXPECT_EQ(p.message, "0/1 nodes are available: 1 Insufficient cpu.");
}

// =============================================================================================
// The resource-only fast path decides as the general dry run does.

struct RandomCluster {
  std::vector<model::Node> nodes;
  std::vector<model::Pod> running;
  std::vector<std::pair<model::Pod, Timestamp>> pending;  // with the time it joins the queue
  std::vector<model::PodDisruptionBudget> pdbs;
  std::vector<model::PersistentVolumeClaim> claims;
  std::vector<model::PersistentVolume> volumes;
  std::vector<model::StorageClass> classes;

  std::string Describe() const {
    std::ostringstream o;
    for (const auto& n : nodes) {
      o << "node " << n.name << " cpu=" << n.allocatable.milli_cpu << "m mem=" << n.allocatable.memory
        << " pods=" << n.allocatable.pods << "\n";
    }
    auto pod = [&](const model::Pod& p) {
      o << p.Key() << " prio=" << p.priority << " cpu=" << p.requests.milli_cpu << "m mem=" << p.requests.memory
        << (p.labels.Has("app") ? " app=" + *p.labels.Find("app") : "")
        << (p.start_time ? " start=" + FormatRfc3339(*p.start_time) : "")
        << (p.deletion_timestamp ? " deleting=" + FormatRfc3339(*p.deletion_timestamp) : "")
        << (p.preempted_by_scheduler ? " preempted" : "") << " grace=" << p.termination_grace_period_seconds
        << (p.preemption_policy == model::PreemptionPolicy::kNever ? " never" : "")
        << (p.nominated_node_name.empty() ? "" : " nominated=" + p.nominated_node_name);
      for (const auto& g : p.scheduling_gates) o << " gate=" << g;
      for (const auto& i : p.container_images) o << " image=" << i;
      for (const auto& v : p.volumes) o << " claim=" << v.claim_name;
    };
    for (const auto& n : nodes) {
      for (const auto& i : n.images) o << "node " << n.name << " image " << i.names[0] << " " << i.size_bytes << "\n";
    }
    for (const auto& cl : claims) {
      o << "claim " << cl.name << " class=" << cl.storage_class_name.value_or("") << " request=" << cl.request
        << (cl.HasAccessMode(model::kReadWriteOncePod) ? " rwop" : "") << " volume=" << cl.volume_name << "\n";
    }
    for (const auto& v : volumes) {
      o << "volume " << v.name << " class=" << v.storage_class_name << " capacity=" << v.capacity
        << (v.node_affinity ? " local=" + v.node_affinity->terms[0].match_expressions[0].values[0] : "") << "\n";
    }
    for (const auto& p : running) {
      o << "running on " << p.node_name << ": ";
      pod(p);
      o << "\n";
    }
    for (const auto& [p, at] : pending) {
      o << "pending since " << FormatRfc3339(at) << ": ";
      pod(p);
      o << "\n";
    }
    for (const auto& b : pdbs) {
      o << "pdb " << b.name << " app=" << b.selector.requirements.front().values.front();
      if (b.disruptions_allowed) o << " disruptionsAllowed=" << *b.disruptions_allowed;
      if (b.min_available) o << " minAvailable=" << b.min_available->value << (b.min_available->percent ? "%" : "");
      if (b.max_unavailable) {
        o << " maxUnavailable=" << b.max_unavailable->value << (b.max_unavailable->percent ? "%" : "");
      }
      for (const auto& d : b.disrupted_pods) o << " disrupted=" << d;
      o << "\n";
    }
    return o.str();
  }
};

RandomCluster MakeRandomCluster(std::mt19937& rng) {
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto chance = [&pick](int percent) { return pick(1, 100) <= percent; };
  constexpr int64_t kMi = 1LL << 20;
  RandomCluster c;
  auto make_pod = [&](const std::string& name) {
    model::Pod p;
    p.name = name;
    p.uid = "default/" + name;
    p.requests.milli_cpu = pick(1, 8) * 250;
    p.requests.memory = pick(0, 4) * 512 * kMi;
    p.non_zero_milli_cpu = p.requests.milli_cpu;
    p.non_zero_memory = p.requests.memory > 0 ? p.requests.memory : model::kDefaultMemoryRequest;
    if (int app = pick(0, 2); app > 0) p.labels.Set("app", app == 1 ? "a" : "b");
    const int grace[] = {0, 5, 30};
    p.termination_grace_period_seconds = grace[pick(0, 2)];
    return p;
  };
  const int nodes = pick(2, 6);
  for (int i = 0; i < nodes; ++i) {
    model::Node n;
    n.name = "n" + std::to_string(i);
    n.labels.Set("kubernetes.io/hostname", n.name);
    n.allocatable.milli_cpu = pick(2, 8) * 500;
    n.allocatable.memory = pick(2, 8) * 1024 * kMi;
    n.allocatable.pods = chance(25) ? pick(2, 4) : 110;
    c.nodes.push_back(n);
  }
  for (const auto& n : c.nodes) {
    model::Resources used;
    int64_t count = 0;
    const int want = pick(1, 6);
    for (int k = 0; k < want; ++k) {
      model::Pod p = make_pod(n.name + "-r" + std::to_string(k));
      if (used.milli_cpu + p.requests.milli_cpu > n.allocatable.milli_cpu ||
          used.memory + p.requests.memory > n.allocatable.memory || count + 1 > n.allocatable.pods) {
        continue;
      }
      used.Add(p.requests);
      ++count;
      p.node_name = n.name;
      p.priority = pick(-1, 4) * 10;
      if (!chance(10)) p.start_time = kT0 - pick(1, 600) * kSecond;
      if (chance(10)) {
        p.deletion_timestamp = kT0 + pick(1, 40) * kSecond;
        p.preempted_by_scheduler = chance(50);
      }
      c.running.push_back(std::move(p));
    }
  }
  const int pending = pick(1, 6);
  for (int k = 0; k < pending; ++k) {
    model::Pod p = make_pod("p" + std::to_string(k));
    p.priority = pick(0, 6) * 10;
    if (chance(10)) p.preemption_policy = model::PreemptionPolicy::kNever;
    if (chance(25)) p.nominated_node_name = c.nodes[static_cast<size_t>(pick(0, nodes - 1))].name;
    c.pending.emplace_back(std::move(p), kT0 - pick(0, 60) * kSecond);
  }
  if (chance(50)) {
    model::PodDisruptionBudget b;
    b.name = "pdb";
    b.selector.requirements.push_back({"app", model::SelectorOp::kIn, {"a"}});
    switch (pick(0, 2)) {
      case 0: b.disruptions_allowed = pick(0, 2); break;
      case 1: b.min_available = model::IntOrPercent{pick(0, 3), false}; break;
      default: b.max_unavailable = model::IntOrPercent{pick(0, 100), true}; break;
    }
    if (chance(30) && !c.running.empty()) {
      b.disrupted_pods.push_back(c.running[static_cast<size_t>(pick(0, static_cast<int>(c.running.size()) - 1))].Key());
    }
    c.pdbs.push_back(std::move(b));
  }
  return c;
}

// Runs the cluster to the end and prints everything the decisions show: each pod's outcome,
// every preemption with its victims, every event with its time.
// Without `messages`, failed cycles compose none, which lets the fast run skip hopeless dry runs
// (their count in `skipped`).
std::string RunAndSummarize(const RandomCluster& c, bool fast_path, uint64_t* preemption_attempts,
                            bool messages = true, uint64_t* skipped = nullptr) {
  sim::SimulationOptions o;
  o.seed = 11;
  o.max_cycles = 20'000;
  o.messages = messages;
  o.preemption.resource_fast_path = fast_path;
  o.preemption.room_bound = fast_path;
  o.reuse_verdicts = fast_path;  // the general run also filters and dry-runs every node afresh
  sim::ClusterSimulation s(model::SchedulerConfig{}, kT0, o);
  if (!s.Init().ok()) return "init failed";
  for (const auto& b : c.pdbs) s.AddPdb(b);
  for (const auto& n : c.nodes) {
    if (!s.AddNode(n).ok()) return "node rejected";
  }
  for (const auto& p : c.running) {
    if (!s.AddRunningPod(p).ok()) return "running pod rejected";
  }
  state::StorageIndex& storage = s.scheduler().storage_index();
  for (const auto& cls : c.classes) storage.SetClass(cls);
  for (const auto& v : c.volumes) storage.SetVolume(v);
  for (const auto& cl : c.claims) storage.SetClaim(cl);
  for (const auto& [p, at] : c.pending) s.AddPendingPod(p, at);
  arbiter::Status st = s.RunUntilIdle();
  if (!st.ok()) return "run failed: " + st.message();
  const sim::PlanResult& r = s.result();
  *preemption_attempts = r.preemption_metrics.attempts;
  if (skipped != nullptr) *skipped = r.preemption_metrics.dry_runs_skipped;
  std::ostringstream out;
  for (const auto& p : r.pods) {
    out << "pod " << p.name << " scheduled=" << p.scheduled << " node=" << p.node
        << " nominated=" << p.nominated_node.value_or("<unset>") << " attempts=" << p.attempts
        << " message=" << p.message << "\n";
  }
  for (const auto& pre : r.preemptions) {
    out << "preemption by " << pre.preemptor << " on " << pre.node.value_or("") << ":";
    for (const auto& v : pre.victims) out << " " << v.name << (v.violates_pdb ? "(violates PDB)" : "");
    out << "\n";
  }
  for (const auto& e : r.events) {
    out << FormatRfc3339(e.time) << " " << e.reason << " " << e.object << " " << e.message << "\n";
  }
  return out.str();
}

// Runs `c` with the fast paths and without, with messages and without; fails (fatally) unless
// each pair decides the same, and returns the summary. `skipped` counts the dry runs the fast run
// without messages left out.
std::string SameWithAndWithoutFastPaths(const RandomCluster& c, int i, uint64_t* skipped = nullptr) {
  uint64_t attempts_fast = 0, attempts_general = 0;
  const std::string fast = RunAndSummarize(c, true, &attempts_fast);
  const std::string general = RunAndSummarize(c, false, &attempts_general);
  [&] { ASSERT_EQ(fast, general) << "cluster #" << i << ":\n" << c.Describe(); }();
  EXPECT_EQ(attempts_fast, attempts_general);
  uint64_t quiet_skipped = 0;
  const std::string quiet_fast = RunAndSummarize(c, true, &attempts_fast, /*messages=*/false, &quiet_skipped);
  const std::string quiet_general = RunAndSummarize(c, false, &attempts_general, /*messages=*/false);
  [&] { ASSERT_EQ(quiet_fast, quiet_general) << "cluster #" << i << " without messages:\n" << c.Describe(); }();
  EXPECT_EQ(attempts_fast, attempts_general);
  if (skipped != nullptr) *skipped += quiet_skipped;
  return fast;
}

// The fast run uses the resource-only dry run, reuses filter verdicts and dry runs for
// equivalent pods on unchanged nodes, and (composing no messages) skips the dry runs of nodes
// where no room can be made; the general run does none of these.
TEST(PreemptionFastPath, DecidesExactlyAsTheGeneralDryRun) {
  std::mt19937 rng(20240601);
  int with_preemption = 0;
  uint64_t skipped = 0;
  constexpr int kClusters = 400;
  for (int i = 0; i < kClusters; ++i) {
    const RandomCluster c = MakeRandomCluster(rng);
    const std::string fast = SameWithAndWithoutFastPaths(c, i, &skipped);
    if (::testing::Test::HasFatalFailure()) return;
    if (fast.find("preemption by ") != std::string::npos) ++with_preemption;
  }
  // The clusters are tight enough that many of them preempt, and that many nodes cannot help.
  EXPECT_GT(with_preemption, kClusters / 4);
  EXPECT_GT(skipped, 0U);
}

// The same over clusters that use the plugins added since: images (ImageLocality), scheduling
// gates, ReadWriteOncePod claims held by running pods (VolumeRestrictions, whose holder
// preemption may evict), and WaitForFirstConsumer claims on node-local volumes (VolumeBinding).
TEST(PreemptionFastPath, DecidesExactlyAsTheGeneralDryRunWithGatesImagesAndVolumes) {
  std::mt19937 rng(20261204);
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  constexpr int64_t kMi = 1LL << 20;
  int with_preemption = 0, with_rwop_preemption = 0;
  constexpr int kClusters = 300;
  for (int i = 0; i < kClusters; ++i) {
    RandomCluster c = MakeRandomCluster(rng);
    const std::string images[] = {"app:1", "db:2", "tools"};
    for (auto& n : c.nodes) {
      for (const auto& img : images) {
        if (pick(0, 2) == 0) n.images.push_back({{img == "tools" ? "tools:latest" : img}, pick(1, 40) * 25 * kMi});
      }
    }
    auto with_image = [&](model::Pod& p) { p.container_images = {images[pick(0, 2)]}; };
    for (auto& p : c.running) with_image(p);
    for (auto& [p, at] : c.pending) {
      with_image(p);
      if (pick(0, 9) == 0) p.scheduling_gates = {"example.com/hold"};
    }
    model::StorageClass local;
    local.name = "local";
    local.provisioner = std::string(model::kNoProvisioner);
    local.binding_mode = model::VolumeBindingMode::kWaitForFirstConsumer;
    c.classes.push_back(local);
    // A ReadWriteOncePod claim held by a running pod, wanted by a pending one.
    if (!c.running.empty() && !c.pending.empty() && pick(0, 1) == 0) {
      model::Pod& holder = c.running[static_cast<size_t>(pick(0, static_cast<int>(c.running.size()) - 1))];
      model::PersistentVolumeClaim claim;
      claim.name = "solo";
      claim.storage_class_name = "local";
      claim.access_modes = {std::string(model::kReadWriteOncePod)};
      claim.volume_name = "pv-solo";
      claim.bind_completed = true;
      claim.phase = "Bound";
      model::PersistentVolume pv;
      pv.name = "pv-solo";
      pv.storage_class_name = "local";
      pv.capacity = 10 * kMi;
      pv.access_modes = claim.access_modes;
      pv.claim_ref = model::ClaimReference{"default", "solo", ""};
      pv.phase = "Bound";
      c.claims.push_back(claim);
      c.volumes.push_back(pv);
      holder.volumes.push_back({"d", "solo", false, false});
      c.pending[static_cast<size_t>(pick(0, static_cast<int>(c.pending.size()) - 1))].first.volumes.push_back(
          {"d", "solo", false, false});
    }
    // Node-local volumes and claims waiting for their first consumer.
    for (size_t k = 0; k < c.pending.size(); ++k) {
      if (pick(0, 2) != 0 || !c.pending[k].first.volumes.empty()) continue;
      model::PersistentVolumeClaim claim;
      claim.name = "data-" + std::to_string(k);
      claim.storage_class_name = "local";
      claim.access_modes = {"ReadWriteOnce"};
      claim.request = pick(1, 4) * kMi;
      c.claims.push_back(claim);
      c.pending[k].first.volumes.push_back({"d", claim.name, false, false});
    }
    for (int v = pick(0, 3); v > 0; --v) {
      model::PersistentVolume pv;
      pv.name = "local-" + std::to_string(v);
      pv.storage_class_name = "local";
      pv.capacity = pick(1, 4) * kMi;
      pv.access_modes = {"ReadWriteOnce"};
      model::NodeSelectorTerm term;
      term.match_expressions.push_back(
          {"kubernetes.io/hostname", model::SelectorOp::kIn, {c.nodes[static_cast<size_t>(pick(0, static_cast<int>(c.nodes.size()) - 1))].name}});
      pv.node_affinity = model::NodeSelector{{term}};
      c.volumes.push_back(pv);
    }
    const std::string fast = SameWithAndWithoutFastPaths(c, i);
    if (::testing::Test::HasFatalFailure()) return;
    if (fast.find("preemption by ") != std::string::npos) ++with_preemption;
    if (fast.find("ReadWriteOncePod") != std::string::npos && fast.find("preemption by ") != std::string::npos) {
      ++with_rwop_preemption;
    }
  }
  EXPECT_GT(with_preemption, kClusters / 5);
  EXPECT_GT(with_rwop_preemption, 0);
}

// Dry runs are reused with budgets too, while the allowed disruptions of every budget matching
// one of the node's lower-priority pods are unchanged: runs of equal preemptors, over budgets
// that run out as their pods are evicted, must decide exactly as dry-running afresh.
TEST(PreemptionFastPath, ReusesDryRunsUnderBudgetsExactlyAsTheGeneralDryRun) {
  std::mt19937 rng(20261203);
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int with_reuse_candidates = 0;
  constexpr int kClusters = 200;
  for (int i = 0; i < kClusters; ++i) {
    RandomCluster c = MakeRandomCluster(rng);
    // A run of equal preemptors, each wanting room only victims give.
    const int run = pick(2, 8);
    const int32_t priority = pick(3, 6) * 10;
    const int64_t cpu = pick(1, 4) * 250;
    for (int k = 0; k < run; ++k) {
      model::Pod p;
      p.name = "q" + std::to_string(k);
      p.uid = "default/" + p.name;
      p.priority = priority;
      p.requests.milli_cpu = cpu;
      p.non_zero_milli_cpu = cpu;
      p.non_zero_memory = model::kDefaultMemoryRequest;
      c.pending.emplace_back(std::move(p), kT0 - pick(0, 60) * kSecond);
    }
    // Budgets over both apps, from status or from spec.
    c.pdbs.clear();
    for (const char* app : {"a", "b"}) {
      if (pick(0, 3) == 0) continue;
      model::PodDisruptionBudget b;
      b.name = std::string("pdb-") + app;
      b.selector.requirements.push_back({"app", model::SelectorOp::kIn, {app}});
      if (pick(0, 1) == 0) {
        b.disruptions_allowed = pick(0, 3);
      } else {
        b.max_unavailable = model::IntOrPercent{pick(0, 3), false};
      }
      c.pdbs.push_back(std::move(b));
    }
    if (!c.pdbs.empty()) ++with_reuse_candidates;
    (void)SameWithAndWithoutFastPaths(c, i);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(with_reuse_candidates, kClusters / 2);
}

}  // namespace
}  // namespace arbiter::sched
