// How many of a budget's pods must stay healthy (the disruption controller's desiredHealthy).
#include <gtest/gtest.h>

#include "arbiter/model/objects.h"

namespace arbiter::model {
namespace {

PodDisruptionBudget MaxUnavailable(int32_t v, bool percent = false) {
  PodDisruptionBudget pdb;
  pdb.max_unavailable = IntOrPercent{v, percent};
  return pdb;
}

PodDisruptionBudget MinAvailable(int32_t v, bool percent = false) {
  PodDisruptionBudget pdb;
  pdb.min_available = IntOrPercent{v, percent};
  return pdb;
}

TEST(DesiredHealthy, MaxUnavailableLeavesTheRestHealthy) {
  EXPECT_EQ(DesiredHealthy(MaxUnavailable(1), 3), 2);
  EXPECT_EQ(DesiredHealthy(MaxUnavailable(50, true), 3), 1);  // 1.5 unavailable rounds up to 2
}

TEST(DesiredHealthy, MaxUnavailableBeyondTheExpectedPodsWantsNoneNotFewer) {
  // Upstream clamps at 0: with one pod and maxUnavailable 2, a terminating pod leaves no
  // disruption allowed (0 healthy - 0 desired), not one (0 - (-1)).
  EXPECT_EQ(DesiredHealthy(MaxUnavailable(2), 1), 0);
  EXPECT_EQ(DesiredHealthy(MaxUnavailable(5), 0), 0);
}

TEST(DesiredHealthy, MinAvailableIsTakenAsGivenAndPercentagesRoundUp) {
  EXPECT_EQ(DesiredHealthy(MinAvailable(4), 3), 4);
  EXPECT_EQ(DesiredHealthy(MinAvailable(50, true), 3), 2);
  EXPECT_EQ(DesiredHealthy(PodDisruptionBudget{}, 3), 0);
}

TEST(AllowedDisruptions, AreTheHealthyBeyondTheDesiredNeverBelowZero) {
  EXPECT_EQ(AllowedDisruptions(MinAvailable(2), 4, 3), 1);
  EXPECT_EQ(AllowedDisruptions(MinAvailable(2), 4, 1), 0);
  EXPECT_EQ(AllowedDisruptions(MaxUnavailable(1), 3, 3), 1);
  EXPECT_EQ(AllowedDisruptions(MaxUnavailable(1), 3, 2), 0);
}

TEST(BudgetCounts, SameNamespaceAndANonEmptySelectorThatMatches) {
  LabelSelector app;
  app.requirements.push_back({"app", SelectorOp::kIn, {"web"}});
  LabelMap web, db;
  web.Set("app", "web");
  db.Set("app", "db");
  EXPECT_TRUE(BudgetCounts("prod", app, "prod", web));
  EXPECT_FALSE(BudgetCounts("prod", app, "dev", web));
  EXPECT_FALSE(BudgetCounts("prod", app, "prod", db));
  // An empty selector matches nothing (the scheduler's and the eviction subresource's reading).
  EXPECT_FALSE(BudgetCounts("prod", LabelSelector{}, "prod", web));
}

}  // namespace
}  // namespace arbiter::model
