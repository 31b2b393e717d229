// Priority admission: built-in classes, user class validation, and resolution of pod priorities.
#include "arbiter/admission/priority_admission.h"

#include <gtest/gtest.h>

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
  EXPECT_FALSE(Admit(Class("system-cluster-critical", "5")).errors.empty());
}

TEST(PriorityAdmission, AtMostOneGlobalDefault) {
  auto a = Admit(Class("a", "1", true) + Class("b", "2", true));
  ASSERT_EQ(a.errors.size(), 1u);
  EXPECT_NE(a.errors[0].find("PriorityClass b: globalDefault"), std::string::npos);
  EXPECT_NE(a.errors[0].find("\"a\""), std::string::npos);
}

}  // namespace
}  // namespace arbiter::admission
