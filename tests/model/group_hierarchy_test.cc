// The group hierarchy rule shared by `plan` and `serve`'s admission.
#include "arbiter/model/group_hierarchy.h"

#include <gtest/gtest.h>

#include "arbiter/model/objects.h"

namespace arbiter::model {
namespace {

using Kind = HierarchyProblem::Kind;

GroupLink Composite(const std::string& name, const std::string& parent = "") {
  return {"ns/" + name, parent.empty() ? "" : "ns/" + parent, true};
}
GroupLink Leaf(const std::string& name, const std::string& parent) { return {"ns/" + name, "ns/" + parent, false}; }

TEST(GroupHierarchyTest, AWellFormedTreeHasNoProblems) {
  EXPECT_TRUE(CheckGroupHierarchy({Composite("top"), Composite("mid", "top"), Leaf("a", "mid"), Leaf("b", "top")}).empty());
}

TEST(GroupHierarchyTest, ACycleIsReportedOnceOnItsFirstMemberWithTheWholeLoop) {
  // x hangs below the cycle b -> c -> b; the cycle is reported on b, listed first among its members.
  auto problems = CheckGroupHierarchy({Composite("x", "b"), Composite("b", "c"), Composite("c", "b"), Leaf("p", "c")});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].kind, Kind::kCycle);
  EXPECT_EQ(problems[0].link, 1u);
  EXPECT_EQ(problems[0].chain, (std::vector<std::string>{"ns/b", "ns/c", "ns/b"}));
}

TEST(GroupHierarchyTest, AGroupThatIsItsOwnParentIsACycle) {
  auto problems = CheckGroupHierarchy({Composite("self", "self")});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].chain, (std::vector<std::string>{"ns/self", "ns/self"}));
}

TEST(GroupHierarchyTest, OnlyTheFirstLevelPastTheLimitIsReported) {
  std::vector<GroupLink> links{Composite("l1")};
  for (int i = 2; i <= 7; ++i) links.push_back(Composite("l" + std::to_string(i), "l" + std::to_string(i - 1)));
  links.push_back(Leaf("pg", "l4"));  // the fifth level under l1
  auto problems = CheckGroupHierarchy(links);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].kind, Kind::kTooDeep);
  EXPECT_EQ(problems[0].chain, (std::vector<std::string>{"ns/l5", "ns/l4", "ns/l3", "ns/l2", "ns/l1"}));
  EXPECT_EQ(problems[1].link, links.size() - 1);
  EXPECT_EQ(problems[1].chain.size(), static_cast<size_t>(kMaxGroupHierarchyDepth) + 1);
}

TEST(GroupHierarchyTest, AMissingParentNamesWhetherAPodGroupHasItsName) {
  auto problems = CheckGroupHierarchy({Composite("c", "pg"), {"ns/pg", "", false}, Leaf("orphan", "gone")});
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].kind, Kind::kMissingParent);
  EXPECT_TRUE(problems[0].parent_is_pod_group);
  EXPECT_EQ(problems[1].link, 2u);
  EXPECT_FALSE(problems[1].parent_is_pod_group);
}

TEST(GroupHierarchyTest, ALongChainIsCheckedInOnePass) {
  // 200,000 composites in one chain, listed leaf first (the worst order for a walk per object);
  // a walk per object would take 2 * 10^10 steps.
  constexpr int kLength = 200000;
  std::vector<GroupLink> links;
  for (int i = kLength; i >= 1; --i) links.push_back(Composite("g" + std::to_string(i), i > 1 ? "g" + std::to_string(i - 1) : ""));
  auto problems = CheckGroupHierarchy(links);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].chain.front(), "ns/g5");
  // Closing the chain into one cycle: one problem, the whole loop.
  links.back().parent_key = "ns/g" + std::to_string(kLength);
  problems = CheckGroupHierarchy(links);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].kind, Kind::kCycle);
  EXPECT_EQ(problems[0].chain.size(), static_cast<size_t>(kLength) + 1);
}

}  // namespace
}  // namespace arbiter::model
