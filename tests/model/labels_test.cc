// Label selectors, node selector terms, taints and tolerations.
#include "arbiter/model/labels.h"

#include <gtest/gtest.h>

#include "arbiter/model/taints.h"

namespace arbiter::model {
namespace {

LabelMap L(std::vector<std::pair<std::string, std::string>> e) { return LabelMap(std::move(e)); }

TEST(LabelMap, KeepsKeysSortedAndUnique) {
  LabelMap m = L({{"b", "1"}, {"a", "2"}, {"b", "3"}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m.entries()[0].first, "a");
  EXPECT_EQ(*m.Find("b"), "3");
  EXPECT_EQ(m.Find("c"), nullptr);
}

TEST(Requirement, InAndNotIn) {
  Requirement in{"env", SelectorOp::kIn, {"prod", "staging"}};
  EXPECT_TRUE(in.Matches(L({{"env", "prod"}})));
  EXPECT_FALSE(in.Matches(L({{"env", "dev"}})));
  EXPECT_FALSE(in.Matches(L({})));
  Requirement notin{"env", SelectorOp::kNotIn, {"prod"}};
  EXPECT_TRUE(notin.Matches(L({{"env", "dev"}})));
  EXPECT_TRUE(notin.Matches(L({})));  // an absent key is not in the set
  EXPECT_FALSE(notin.Matches(L({{"env", "prod"}})));
}

TEST(Requirement, ExistsAndDoesNotExist) {
  EXPECT_TRUE((Requirement{"gpu", SelectorOp::kExists, {}}).Matches(L({{"gpu", ""}})));
  EXPECT_FALSE((Requirement{"gpu", SelectorOp::kExists, {}}).Matches(L({})));
  EXPECT_TRUE((Requirement{"gpu", SelectorOp::kDoesNotExist, {}}).Matches(L({})));
  EXPECT_FALSE((Requirement{"gpu", SelectorOp::kDoesNotExist, {}}).Matches(L({{"gpu", "a"}})));
}

TEST(Requirement, GtAndLtCompareIntegers) {
  Requirement gt{"cores", SelectorOp::kGt, {"8"}};
  EXPECT_TRUE(gt.Matches(L({{"cores", "16"}})));
  EXPECT_FALSE(gt.Matches(L({{"cores", "8"}})));
  EXPECT_FALSE(gt.Matches(L({{"cores", "lots"}})));  // not an integer: no match
  EXPECT_FALSE(gt.Matches(L({})));
  Requirement lt{"cores", SelectorOp::kLt, {"8"}};
  EXPECT_TRUE(lt.Matches(L({{"cores", "-3"}})));
  EXPECT_FALSE(lt.Matches(L({{"cores", "9"}})));
}

TEST(LabelSelector, EmptySelectorMatchesEverything) {
  EXPECT_TRUE(LabelSelector{}.Matches(L({})));
  EXPECT_TRUE(LabelSelector{}.Matches(L({{"a", "b"}})));
}

TEST(LabelSelector, AllRequirementsMustMatch) {
  LabelSelector s{{{"app", SelectorOp::kIn, {"web"}}, {"tier", SelectorOp::kExists, {}}}};
  EXPECT_TRUE(s.Matches(L({{"app", "web"}, {"tier", "front"}})));
  EXPECT_FALSE(s.Matches(L({{"app", "web"}})));
}

TEST(NodeSelector, TermsAreOredAndATermWithNothingMatchesNothing) {
  NodeSelectorTerm zone_a{{{"zone", SelectorOp::kIn, {"a"}}}, {}};
  NodeSelectorTerm named{{}, {{"metadata.name", SelectorOp::kIn, {"n2"}}}};
  NodeSelector sel{{zone_a, named}};
  EXPECT_TRUE(sel.Matches(L({{"zone", "a"}}), "n1"));
  EXPECT_TRUE(sel.Matches(L({{"zone", "b"}}), "n2"));
  EXPECT_FALSE(sel.Matches(L({{"zone", "b"}}), "n3"));
  EXPECT_FALSE((NodeSelector{{NodeSelectorTerm{}}}).Matches(L({{"zone", "a"}}), "n1"));
}

TEST(NodeSelectorTerm, ExpressionsAndFieldsAreAnded) {
  NodeSelectorTerm t{{{"zone", SelectorOp::kIn, {"a"}}}, {{"metadata.name", SelectorOp::kNotIn, {"n1"}}}};
  EXPECT_FALSE(t.Matches(L({{"zone", "a"}}), "n1"));
  EXPECT_TRUE(t.Matches(L({{"zone", "a"}}), "n2"));
}

TEST(Toleration, EqualNeedsKeyValueAndEffect) {
  Taint t{"dedicated", "gpu", TaintEffect::kNoSchedule};
  EXPECT_TRUE((Toleration{"dedicated", Toleration::Op::kEqual, "gpu", TaintEffect::kNoSchedule, {}}).Tolerates(t));
  EXPECT_FALSE((Toleration{"dedicated", Toleration::Op::kEqual, "cpu", TaintEffect::kNoSchedule, {}}).Tolerates(t));
  EXPECT_FALSE((Toleration{"dedicated", Toleration::Op::kEqual, "gpu", TaintEffect::kNoExecute, {}}).Tolerates(t));
  EXPECT_TRUE((Toleration{"dedicated", Toleration::Op::kEqual, "gpu", std::nullopt, {}}).Tolerates(t));
}

TEST(Toleration, ExistsIgnoresValueAndEmptyKeyToleratesAll) {
  Taint t{"dedicated", "gpu", TaintEffect::kNoExecute};
  EXPECT_TRUE((Toleration{"dedicated", Toleration::Op::kExists, "", std::nullopt, {}}).Tolerates(t));
  EXPECT_TRUE((Toleration{"", Toleration::Op::kExists, "", std::nullopt, {}}).Tolerates(t));
  EXPECT_FALSE((Toleration{"other", Toleration::Op::kExists, "", std::nullopt, {}}).Tolerates(t));
  EXPECT_FALSE((Toleration{"", Toleration::Op::kExists, "", TaintEffect::kNoSchedule, {}}).Tolerates(t));
}

}  // namespace
}  // namespace arbiter::model
