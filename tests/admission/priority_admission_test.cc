// Priority admission: built-in classes, user class validation, and resolution of pod priorities.
#include "arbiter/admission/priority_admission.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "testing/paths.h"
#include "testing/plan_harness.h"

namespace arbiter::admission {
namespace {

std::string Class(const std::string& name, const std::string& value, bool global_default = false,
                  const std::string& policy = "") {
  std::string s = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: " + name +
                  "\nvalue: " + value + "\n";
  if (global_default) s += "globalDefault: true\n";
  if (!policy.empty()) s += "preemptionPolicy: " + policy + "\n";
  return s;
}

std::string PodWith(const std::string& name, const std::string& spec) {
  return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\nspec:\n" + spec +
         "  containers:\n  - name: c\n";
}

struct Admitted {
  std::vector<std::string> errors;
  manifest::ClusterObjects objects;
};

Admitted Admit(const std::string& yaml) {
  manifest::LoadResult r = manifest::Load({{"in.yaml", yaml}});
  EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0]);
  Admitted a;
  a.errors = AdmitPriorities(r.objects);
  a.objects = std::move(r.objects);
  return a;
}

const model::Pod& PodNamed(const Admitted& a, const std::string& name) {
  for (const auto& p : a.objects.pods) {
    if (p.object.name == name) return p.object;
  }
  static model::Pod none;
  ADD_FAILURE() << name;
  return none;
}

TEST(PriorityAdmission, BuiltInClassesAlwaysExist) {
  auto a = Admit(PodWith("p", "  priorityClassName: system-node-critical\n") +
                 PodWith("q", "  priorityClassName: system-cluster-critical\n"));
  ASSERT_TRUE(a.errors.empty()) << a.errors[0];
  EXPECT_EQ(PodNamed(a, "p").priority, 2000001000);
  EXPECT_EQ(PodNamed(a, "q").priority, 2000000000);
}

TEST(PriorityAdmission, ClassNameResolvesPriorityAndPolicy) {
  auto a = Admit(Class("high", "1000", false, "Never") + PodWith("p", "  priorityClassName: high\n"));
  ASSERT_TRUE(a.errors.empty());
  EXPECT_EQ(PodNamed(a, "p").priority, 1000);
  EXPECT_EQ(PodNamed(a, "p").preemption_policy, model::PreemptionPolicy::kNever);
}

TEST(PriorityAdmission, PodWithoutClassGetsGlobalDefault) {
  auto a = Admit(Class("default-prio", "50", true) + PodWith("p", ""));
  ASSERT_TRUE(a.errors.empty());
  EXPECT_EQ(PodNamed(a, "p").priority, 50);
  EXPECT_EQ(PodNamed(a, "p").priority_class_name, "default-prio");
}

TEST(PriorityAdmission, PodWithoutClassOrDefaultGetsZero) {
  auto a = Admit(Class("other", "50") + PodWith("p", ""));
  ASSERT_TRUE(a.errors.empty());
  EXPECT_EQ(PodNamed(a, "p").priority, 0);
  EXPECT_EQ(PodNamed(a, "p").preemption_policy, model::PreemptionPolicy::kPreemptLowerPriority);
}

TEST(PriorityAdmission, UnknownClassIsRejectedNamingPodAndClass) {
  auto a = Admit(PodWith("p", "  priorityClassName: nope\n"));
  ASSERT_EQ(a.errors.size(), 1u);
  EXPECT_EQ(a.errors[0], "in.yaml: document 1: Pod default/p: spec.priorityClassName: no PriorityClass with "
                         "name \"nope\" was found");
}

TEST(PriorityAdmission, ExplicitPriorityMustAgreeWithClass) {
  auto ok = Admit(Class("high", "1000") + PodWith("p", "  priorityClassName: high\n  priority: 1000\n"));
  EXPECT_TRUE(ok.errors.empty());
  auto bad = Admit(Class("high", "1000") + PodWith("p", "  priorityClassName: high\n  priority: 5\n"));
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_NE(bad.errors[0].find("spec.priority"), std::string::npos);
  EXPECT_NE(bad.errors[0].find("1000"), std::string::npos);
  auto no_class = Admit(PodWith("p", "  priority: 7\n"));
  ASSERT_EQ(no_class.errors.size(), 1u);
  EXPECT_NE(no_class.errors[0].find("no global default"), std::string::npos);
}

TEST(PriorityAdmission, ExplicitPreemptionPolicyMustAgreeWithClass) {
  auto bad = Admit(Class("high", "1000") + PodWith("p", "  priorityClassName: high\n  preemptionPolicy: Never\n"));
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_NE(bad.errors[0].find("spec.preemptionPolicy"), std::string::npos);
}

TEST(PriorityAdmission, UserClassesAreCappedAtOneBillion) {
  EXPECT_TRUE(Admit(Class("max", "1000000000")).errors.empty());
  auto a = Admit(Class("too-high", "1000000001"));
  ASSERT_EQ(a.errors.size(), 1u);
  EXPECT_NE(a.errors[0].find("PriorityClass too-high: value: must be no greater than 1000000000"),
            std::string::npos);
}

TEST(PriorityAdmission, NegativeUserClassesAreAllowed) {
  auto a = Admit(Class("scavenger", "-10") + PodWith("p", "  priorityClassName: scavenger\n"));
  ASSERT_TRUE(a.errors.empty());
  EXPECT_EQ(PodNamed(a, "p").priority, -10);
}

TEST(PriorityAdmission, SystemPrefixIsReservedForBuiltIns) {
  auto a = Admit(Class("system-mine", "10"));
  ASSERT_EQ(a.errors.size(), 1u);
  EXPECT_NE(a.errors[0].find("reserved"), std::string::npos);
  // A copy of a built-in class, as a cluster dump contains it, is accepted.
  EXPECT_TRUE(Admit(Class("system-cluster-critical", "2000000000")).errors.empty());
  auto wrong_value = Admit(Class("system-cluster-critical", "5"));
  ASSERT_EQ(wrong_value.errors.size(), 1u);
  EXPECT_NE(wrong_value.errors[0].find("value of system-cluster-critical PriorityClass must be 2000000000"),
            std::string::npos)
      << wrong_value.errors[0];
}

TEST(PriorityAdmission, TheRuleOnNamesAndValuesIsUpstreamsValidation) {
  EXPECT_FALSE(CheckPriorityClass("system-node-critical", 2000001000, false));
  EXPECT_FALSE(CheckPriorityClass("batch", 1000000000, false));
  EXPECT_FALSE(CheckPriorityClass("batch", -5, true));
  auto too_high = CheckPriorityClass("batch", 1000000001, false);
  ASSERT_TRUE(too_high);
  EXPECT_EQ(too_high->field, "value");
  EXPECT_EQ(too_high->detail, "maximum allowed value of a user defined priority is 1000000000");
  auto as_default = CheckPriorityClass("system-node-critical", 2000001000, true);
  ASSERT_TRUE(as_default);
  EXPECT_EQ(as_default->field, "metadata.name");
  EXPECT_NE(as_default->detail.find("error: globalDefault of system-node-critical PriorityClass must be false"),
            std::string::npos);
  // A system name is never judged by the user's cap.
  auto unknown = CheckPriorityClass("system-x", 5, false);
  ASSERT_TRUE(unknown);
  EXPECT_NE(unknown->detail.find("error: system-x is not a known system priority class"), std::string::npos);
}

TEST(PriorityAdmission, AtMostOneGlobalDefault) {
  auto a = Admit(Class("a", "1", true) + Class("b", "2", true));
  ASSERT_EQ(a.errors.size(), 1u);
  EXPECT_NE(a.errors[0].find("PriorityClass b: globalDefault"), std::string::npos);
  EXPECT_NE(a.errors[0].find("\"a\""), std::string::npos);
}

// --- PodGroup and CompositePodGroup priorities, and the member consistency rules.

// A PodGroup (basic policy) whose spec gets `extra` (two-space indented lines).
std::string Group(const std::string& name, const std::string& extra) {
  return "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata:\n  name: " + name +
         "\nspec:\n  schedulingPolicy:\n    basic: {}\n" + extra;
}

std::string Composite(const std::string& name, const std::string& extra) {
  return "---\napiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata:\n  name: " +
         name + "\nspec:\n  workloadRef:\n    workloadName: w\n    templateName: root\n"
         "  schedulingPolicy:\n    basic: {}\n" + extra;
}

// A pod in PodGroup `group`, with `extra` spec lines.
std::string Member(const std::string& name, const std::string& group, const std::string& extra = "") {
  return PodWith(name, "  schedulingGroup:\n    podGroupName: " + group + "\n" + extra);
}

const model::PodGroup& GroupNamed(const Admitted& a, const std::string& name) {
  for (const auto& g : a.objects.pod_groups) {
    if (g.object.name == name) return g.object;
  }
  static model::PodGroup none;
  ADD_FAILURE() << name;
  return none;
}

TEST(GroupPriorityAdmission, ClassResolvesForPodGroupAndCompositePodGroup) {
  auto a = Admit(Class("batch", "400", false, "Never") +
                 Composite("root", "  priorityClassName: batch\n") +
                 Group("g", "  priorityClassName: batch\n  priority: 400\n"
                            "  preemptionPolicy: Never\n") +
                 Group("sys", "  priorityClassName: system-node-critical\n"));
  ASSERT_TRUE(a.errors.empty()) << a.errors[0];
  EXPECT_EQ(GroupNamed(a, "g").priority.priority, 400);
  EXPECT_EQ(GroupNamed(a, "g").priority.preemption_policy, model::PreemptionPolicy::kNever);
  EXPECT_EQ(GroupNamed(a, "sys").priority.priority, 2000001000);
  EXPECT_EQ(GroupNamed(a, "sys").priority.preemption_policy,
            model::PreemptionPolicy::kPreemptLowerPriority);
  ASSERT_EQ(a.objects.composite_pod_groups.size(), 1u);
  const model::GroupPriority& root = a.objects.composite_pod_groups[0].object.priority;
  EXPECT_EQ(root.priority, 400);
  EXPECT_EQ(root.preemption_policy, model::PreemptionPolicy::kNever);
  EXPECT_EQ(root.priority_class_name, "batch");
}

TEST(GroupPriorityAdmission, GroupWithoutClassTakesGlobalDefaultOrZero) {
  auto with_default = Admit(Class("fallback", "-5", true, "Never") + Group("g", "") +
                            Composite("root", ""));
  ASSERT_TRUE(with_default.errors.empty()) << with_default.errors[0];
  EXPECT_EQ(GroupNamed(with_default, "g").priority.priority, -5);
  EXPECT_EQ(GroupNamed(with_default, "g").priority.preemption_policy, model::PreemptionPolicy::kNever);
  EXPECT_EQ(GroupNamed(with_default, "g").priority.priority_class_name, "fallback");
  EXPECT_EQ(with_default.objects.composite_pod_groups[0].object.priority.priority, -5);

  auto without = Admit(Class("unrelated", "77") + Group("g", ""));
  ASSERT_TRUE(without.errors.empty()) << without.errors[0];
  EXPECT_EQ(GroupNamed(without, "g").priority.priority, 0);
  EXPECT_EQ(GroupNamed(without, "g").priority.preemption_policy,
            model::PreemptionPolicy::kPreemptLowerPriority);
  EXPECT_TRUE(GroupNamed(without, "g").priority.priority_class_name.empty());
}

TEST(GroupPriorityAdmission, UnknownClassIsRejected) {
  auto a = Admit(Group("g", "  priorityClassName: missing-class\n") +
                 Composite("root", "  priorityClassName: also-missing\n"));
  ASSERT_EQ(a.errors.size(), 2u);
  EXPECT_EQ(a.errors[0], "in.yaml: document 1: PodGroup default/g: spec.priorityClassName: no "
                         "PriorityClass with name \"missing-class\" was found");
  EXPECT_EQ(a.errors[1], "in.yaml: document 2: CompositePodGroup default/root: "
                         "spec.priorityClassName: no PriorityClass with name \"also-missing\" was "
                         "found");
}

TEST(GroupPriorityAdmission, ExplicitPriorityMustAgreeWithClass) {
  auto a = Admit(Class("mid", "300") + Group("g", "  priorityClassName: mid\n  priority: 301\n") +
                 Composite("root", "  priority: 9\n"));
  ASSERT_EQ(a.errors.size(), 2u);
  EXPECT_NE(a.errors[0].find("PodGroup default/g: spec.priority: the integer value of priority "
                             "(301) must not disagree with the PodGroup's PriorityClass; admission "
                             "computed 300 from PriorityClass \"mid\""),
            std::string::npos)
      << a.errors[0];
  EXPECT_NE(a.errors[1].find("CompositePodGroup default/root: spec.priority:"), std::string::npos)
      << a.errors[1];
  EXPECT_NE(a.errors[1].find("no global default"), std::string::npos) << a.errors[1];
}

TEST(GroupPriorityAdmission, ExplicitPreemptionPolicyMustAgreeWithClass) {
  auto a = Admit(Class("mid", "300", false, "Never") +
                 Group("g", "  priorityClassName: mid\n  preemptionPolicy: PreemptLowerPriority\n") +
                 Composite("root", "  preemptionPolicy: Never\n"));
  ASSERT_EQ(a.errors.size(), 2u);
  EXPECT_NE(a.errors[0].find("PodGroup default/g: spec.preemptionPolicy: PreemptLowerPriority "
                             "disagrees with the PriorityClass, which sets Never"),
            std::string::npos)
      << a.errors[0];
  EXPECT_NE(a.errors[1].find("CompositePodGroup default/root: spec.preemptionPolicy: Never "
                             "disagrees"),
            std::string::npos)
      << a.errors[1];
}

TEST(GroupPriorityAdmission, MembersWithTheGroupsNumberAreAdmittedWhateverTheirClass) {
  // Only the number is compared: a member may reach it through a different class.
  auto a = Admit(Class("gold", "600") + Class("gold-copy", "600") +
                 Group("g", "  priorityClassName: gold\n") +
                 Member("m1", "g", "  priorityClassName: gold\n") +
                 Member("m2", "g", "  priorityClassName: gold-copy\n"));
  ASSERT_TRUE(a.errors.empty()) << a.errors[0];
  EXPECT_EQ(PodNamed(a, "m1").priority, 600);
  EXPECT_EQ(PodNamed(a, "m2").priority, 600);
}

TEST(GroupPriorityAdmission, MemberWithAnotherPriorityIsRejected) {
  auto a = Admit(Class("gold", "600") + Class("bronze", "100") +
                 Group("g", "  priorityClassName: gold\n") +
                 Member("ok", "g", "  priorityClassName: gold\n") +
                 Member("off", "g", "  priorityClassName: bronze\n"));
  ASSERT_EQ(a.errors.size(), 1u);
  EXPECT_EQ(a.errors[0],
            "in.yaml: document 5: Pod default/off: spec.priority: 100 (from PriorityClass "
            "\"bronze\") differs from the priority 600 (from PriorityClass \"gold\") of PodGroup "
            "default/g (in.yaml: document 3: PodGroup default/g); all pods in a single pod group "
            "should have the same priority as the pod group");
}

TEST(GroupPriorityAdmission, GroupWithoutClassDoesNotTakeItsPodsPriority) {
  // Upstream resolves a class-less PodGroup to the global default or 0, never to its members'
  // priority, so a member with a class of its own disagrees with such a group.
  auto a = Admit(Class("gold", "600") + Group("g", "") +
                 Member("m", "g", "  priorityClassName: gold\n"));
  ASSERT_EQ(a.errors.size(), 1u);
  EXPECT_NE(a.errors[0].find("Pod default/m: spec.priority: 600 (from PriorityClass \"gold\") "
                             "differs from the priority 0 (from no PriorityClass) of PodGroup "
                             "default/g"),
            std::string::npos)
      << a.errors[0];
  // With a global default, the class-less group and class-less members both take it.
  auto d = Admit(Class("everyday", "20", true) + Group("g", "") + Member("m", "g"));
  ASSERT_TRUE(d.errors.empty()) << d.errors[0];
  EXPECT_EQ(GroupNamed(d, "g").priority.priority, 20);
  EXPECT_EQ(PodNamed(d, "m").priority, 20);
}

TEST(GroupPriorityAdmission, MemberWithAnotherPreemptionPolicyIsRejected) {
  auto a = Admit(Class("gold", "600", false, "Never") + Class("gold-preempting", "600") +
                 Group("g", "  priorityClassName: gold\n") +
                 Member("m", "g", "  priorityClassName: gold-preempting\n"));
  ASSERT_EQ(a.errors.size(), 1u);
  EXPECT_EQ(a.errors[0],
            "in.yaml: document 4: Pod default/m: spec.preemptionPolicy: PreemptLowerPriority "
            "differs from the preemption policy Never of PodGroup default/g (in.yaml: document 3: "
            "PodGroup default/g); all pods in a single pod group should have the same preemption "
            "policy as the pod group");
}

TEST(GroupPriorityAdmission, BoundMembersAreCheckedToo) {
  auto a = Admit("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n" + Class("gold", "600") +
                 Group("g", "  priorityClassName: gold\n") +
                 Member("running", "g", "  nodeName: n1\n"));
  ASSERT_EQ(a.errors.size(), 1u);
  EXPECT_NE(a.errors[0].find("Pod default/running: spec.priority: 0"), std::string::npos)
      << a.errors[0];
}

TEST(GroupPriorityAdmission, RejectedGroupOrPodIsNotReportedTwice) {
  // The group's own error stands; its members are not compared with an unresolved group.
  auto bad_group = Admit(Group("g", "  priorityClassName: missing\n") + Member("m", "g"));
  ASSERT_EQ(bad_group.errors.size(), 1u);
  EXPECT_NE(bad_group.errors[0].find("PodGroup default/g: spec.priorityClassName"),
            std::string::npos);
  auto bad_pod = Admit(Group("g", "") + Member("m", "g", "  priorityClassName: missing\n"));
  ASSERT_EQ(bad_pod.errors.size(), 1u);
  EXPECT_NE(bad_pod.errors[0].find("Pod default/m: spec.priorityClassName"), std::string::npos);
}

TEST(GroupPriorityAdmission, MembersMustNameOneScheduler) {
  const std::string yaml = Group("g", "") + Member("a", "g") +
                           Member("b", "g", "  schedulerName: default-scheduler\n") +
                           Member("c", "g", "  schedulerName: other-scheduler\n") +
                           PodWith("loner", "  schedulerName: other-scheduler\n");
  manifest::LoadResult r = manifest::Load({{"in.yaml", yaml}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0],
            "in.yaml: document 4: Pod default/c: spec.schedulerName: \"other-scheduler\" differs "
            "from \"default-scheduler\" of the group's first member (in.yaml: document 2: Pod "
            "default/a); all pods in PodGroup default/g should have the same .spec.schedulerName");
  // Members of different groups may use different schedulers.
  EXPECT_TRUE(manifest::Load({{"in.yaml", Group("g", "") + Group("h", "") + Member("a", "g") +
                                              Member("b", "h", "  schedulerName: other\n")}})
                  .ok());
}

// The shipped gang example is consistent: it loads, its groups resolve, and every member agrees
// with its group. (It lives in the repository; a missing file fails the test.)
TEST(GroupPriorityAdmission, ShippedGangExampleLoadsAndAdmits) {
  namespace fs = std::filesystem;
  const fs::path file = fs::path(testing::SourceDir()) / "examples" / "gang" / "cluster.yaml";
  std::ifstream in(file);
  ASSERT_TRUE(in) << file;
  std::ostringstream text;
  text << in.rdbuf();
  manifest::LoadResult r = manifest::Load({{file.string(), text.str()}});
  ASSERT_TRUE(r.ok()) << file << ": " << r.errors[0];
  auto errors = AdmitPriorities(r.objects);
  ASSERT_TRUE(errors.empty()) << file << ": " << errors[0];
  ASSERT_FALSE(r.objects.pod_groups.empty()) << file;
  int members = 0;
  for (const auto& g : r.objects.pod_groups) {
    EXPECT_FALSE(g.object.priority.priority_class_name.empty()) << file;
    for (const auto& p : r.objects.pods) {
      if (p.object.pod_group_name != g.object.name) continue;
      EXPECT_EQ(p.object.priority, g.object.priority.priority) << file << " " << p.object.name;
      ++members;
    }
  }
  EXPECT_GT(members, 0);
}

}  // namespace
}  // namespace arbiter::admission

// The rule itself (DecidePriority), which `plan`, `serve`'s admission and its live scheduler share.
namespace arbiter::admission {
namespace {

const model::PriorityClass kHigh{"high", 1000, false, model::PreemptionPolicy::kNever, ""};
const model::PriorityClass kDefault{"normal", 10, true, model::PreemptionPolicy::kPreemptLowerPriority, ""};

const model::PriorityClass* Find(const std::string& name) {
  if (name == kHigh.name) return &kHigh;
  if (name == kDefault.name) return &kDefault;
  return nullptr;
}

using Problem = PriorityDecision::Problem;

TEST(DecidePriority, TheNamedClassDecidesPriorityPolicyAndName) {
  PriorityDecision d = DecidePriority("high", std::nullopt, std::nullopt, Find, &kDefault);
  EXPECT_EQ(d.problem, Problem::kNone);
  EXPECT_EQ(d.priority, 1000);
  EXPECT_EQ(d.policy, model::PreemptionPolicy::kNever);
  EXPECT_EQ(d.class_name, "high");
}

TEST(DecidePriority, WithoutANameTheGlobalDefaultDecidesAndWithoutOneZero) {
  PriorityDecision d = DecidePriority("", std::nullopt, std::nullopt, Find, &kDefault);
  EXPECT_EQ(d.priority, 10);
  EXPECT_EQ(d.class_name, "normal");
  d = DecidePriority("", std::nullopt, std::nullopt, Find, nullptr);
  EXPECT_EQ(d.problem, Problem::kNone);
  EXPECT_EQ(d.priority, 0);
  EXPECT_EQ(d.policy, model::PreemptionPolicy::kPreemptLowerPriority);
  EXPECT_EQ(d.class_name, "");
}

TEST(DecidePriority, AnUnknownClassAndExplicitValuesThatDisagreeAreProblems) {
  EXPECT_EQ(DecidePriority("nope", std::nullopt, std::nullopt, Find, &kDefault).problem, Problem::kUnknownClass);
  EXPECT_EQ(DecidePriority("high", 999, std::nullopt, Find, nullptr).problem, Problem::kPriorityDisagrees);
  EXPECT_EQ(DecidePriority("high", 1000, model::PreemptionPolicy::kPreemptLowerPriority, Find, nullptr).problem,
            Problem::kPolicyDisagrees);
  // Explicit values that agree are no problem, including 0 with neither class nor default.
  EXPECT_EQ(DecidePriority("high", 1000, model::PreemptionPolicy::kNever, Find, nullptr).problem, Problem::kNone);
  EXPECT_EQ(DecidePriority("", 0, std::nullopt, Find, nullptr).problem, Problem::kNone);
}

}  // namespace
}  // namespace arbiter::admission
