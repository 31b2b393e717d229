// The pod rules the API server and the live scheduler share (rules/pod_rules.h).
#include "arbiter/rules/pod_rules.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace arbiter::rules {
namespace {

using Json = nlohmann::json;

Json Pending() {
  return {{"metadata", {{"name", "web"}, {"uid", "u1"}, {"labels", {{"app", "web"}}}}},
          {"spec", {{"containers", Json::array()}}},
          {"status",
           {{"nominatedNodeName", "n2"},
            {"conditions", Json::array({{{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"},
                                         {"message", "0/3 nodes are available"},
                                         {"lastTransitionTime", "2026-12-01T00:00:00Z"}}})}}}};
}

// meta.SetStatusCondition: a new type is appended at `now` unless it says its time; an existing
// one changes field by field and keeps its time while its status stays the same.
TEST(SetStatusCondition, ChangesAConditionFieldByFieldAndMovesItsTimeOnlyWithItsStatus) {
  Json status = Json::object();
  EXPECT_TRUE(SetStatusCondition(status, {{"type", "DisruptionAllowed"}, {"status", "True"}, {"reason", "SufficientPods"},
                                          {"message", "3 healthy"}, {"observedGeneration", 1}},
                                 "2026-12-01T00:00:00Z"));
  ASSERT_EQ(status["conditions"].size(), 1u);
  EXPECT_EQ(status["conditions"][0]["lastTransitionTime"], "2026-12-01T00:00:00Z");
  // The same status with a new message and generation: those change, the time stays.
  EXPECT_TRUE(SetStatusCondition(status, {{"type", "DisruptionAllowed"}, {"status", "True"}, {"reason", "SufficientPods"},
                                          {"message", "4 healthy"}, {"observedGeneration", 2}},
                                 "2026-12-02T00:00:00Z"));
  EXPECT_EQ(status["conditions"][0],
            Json({{"type", "DisruptionAllowed"}, {"status", "True"}, {"reason", "SufficientPods"}, {"message", "4 healthy"},
                  {"observedGeneration", 2}, {"lastTransitionTime", "2026-12-01T00:00:00Z"}}));
  // Nothing new: no change.
  EXPECT_FALSE(SetStatusCondition(status, {{"type", "DisruptionAllowed"}, {"status", "True"}, {"reason", "SufficientPods"},
                                           {"message", "4 healthy"}, {"observedGeneration", 2}},
                                  "2026-12-03T00:00:00Z"));
  // A new status takes the time it carries, or `now`.
  EXPECT_TRUE(SetStatusCondition(status, {{"type", "DisruptionAllowed"}, {"status", "False"}, {"reason", "InsufficientPods"},
                                          {"message", "1 healthy"}, {"observedGeneration", 2}},
                                 "2026-12-04T00:00:00Z"));
  EXPECT_EQ(status["conditions"][0]["lastTransitionTime"], "2026-12-04T00:00:00Z");
  EXPECT_EQ(status["conditions"][0]["reason"], "InsufficientPods");
  EXPECT_TRUE(SetStatusCondition(status, {{"type", "Other"}, {"status", "True"}, {"lastTransitionTime", "2026-11-30T00:00:00Z"}},
                                 "2026-12-05T00:00:00Z"));
  EXPECT_EQ(status["conditions"][1]["lastTransitionTime"], "2026-11-30T00:00:00Z");
}

TEST(UpdatePodCondition, AChangedStatusReplacesTheConditionWholeAtTheNewTime) {
  Json status = Pending()["status"];
  EXPECT_TRUE(UpdatePodCondition(status, {{"type", "PodScheduled"}, {"status", "True"}}, "2026-12-02T00:00:00Z"));
  ASSERT_EQ(status["conditions"].size(), 1u);
  EXPECT_EQ(status["conditions"][0],
            Json({{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", "2026-12-02T00:00:00Z"}}));
}

TEST(UpdatePodCondition, TheSameStatusKeepsItsTransitionTimeAndReportsOnlyARealChange) {
  Json status = Pending()["status"];
  Json same = status["conditions"][0];
  same.erase("lastTransitionTime");
  EXPECT_FALSE(UpdatePodCondition(status, same, "2026-12-02T00:00:00Z"));
  EXPECT_EQ(status["conditions"][0]["lastTransitionTime"], "2026-12-01T00:00:00Z");
  same["message"] = "0/4 nodes are available";
  EXPECT_TRUE(UpdatePodCondition(status, same, "2026-12-02T00:00:00Z"));
  EXPECT_EQ(status["conditions"][0]["message"], "0/4 nodes are available");
  EXPECT_EQ(status["conditions"][0]["lastTransitionTime"], "2026-12-01T00:00:00Z");
}

TEST(UpdatePodCondition, ANewTypeIsAppended) {
  Json status = Json::object();
  EXPECT_TRUE(UpdatePodCondition(status, {{"type", "DisruptionTarget"}, {"status", "True"}}, "2026-12-02T00:00:00Z"));
  EXPECT_EQ(status["conditions"].size(), 1u);
}

TEST(BindPod, SetsTheNodeClearsTheNominationMergesMetadataAndMarksPodScheduled) {
  Json pod = Pending();
  PodBinding b{"n1", "u1", {{"note", "x"}}, {{"topology.kubernetes.io/zone", "z1"}}};
  ASSERT_TRUE(BindPod(pod, b, "2026-12-02T00:00:00Z").ok());
  EXPECT_EQ(pod["spec"]["nodeName"], "n1");
  EXPECT_FALSE(pod["status"].contains("nominatedNodeName"));
  EXPECT_EQ(pod["metadata"]["annotations"], Json({{"note", "x"}}));
  EXPECT_EQ(pod["metadata"]["labels"], Json({{"app", "web"}, {"topology.kubernetes.io/zone", "z1"}}));
  EXPECT_EQ(pod["status"]["conditions"][0],
            Json({{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", "2026-12-02T00:00:00Z"}}));
}

TEST(BindPod, RefusesInUpstreamsWordsAndLeavesThePodAsItWas) {
  struct Case {
    const char* what;
    std::function<void(Json&)> make;
    StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"assigned", [](Json& p) { p["spec"]["nodeName"] = "n3"; }, StatusCode::kFailedPrecondition,
       "pod web is already assigned to node \"n3\""},
      {"deleting", [](Json& p) { p["metadata"]["deletionTimestamp"] = "2026-12-01T00:00:00Z"; },
       StatusCode::kFailedPrecondition, "pod web is being deleted, cannot be assigned to a host"},
      {"gated", [](Json& p) { p["spec"]["schedulingGates"] = Json::array({{{"name", "g"}}}); },
       StatusCode::kFailedPrecondition, "pod web has non-empty .spec.schedulingGates"},
      {"another uid", [](Json& p) { p["metadata"]["uid"] = "u2"; }, StatusCode::kConflict,
       "Precondition failed: UID in precondition: u1, UID in object meta: u2"},
  };
  for (const Case& c : cases) {
    Json pod = Pending();
    c.make(pod);
    const Json before = pod;
    Status st = BindPod(pod, {"n1", "u1", {}, {}}, "2026-12-02T00:00:00Z");
    EXPECT_EQ(st.code(), c.code) << c.what;
    EXPECT_EQ(st.message(), c.message) << c.what;
    EXPECT_EQ(pod, before) << c.what;
  }
}

TEST(TopologyLabelsOf, TakesTheNodesZoneAndRegionOnly) {
  Json node = {{"metadata",
                {{"labels",
                  {{"topology.kubernetes.io/zone", "z"}, {"topology.kubernetes.io/region", "r"}, {"rack", "7"}}}}}};
  EXPECT_EQ(TopologyLabelsOf(node),
            (std::map<std::string, std::string>{{"topology.kubernetes.io/region", "r"}, {"topology.kubernetes.io/zone", "z"}}));
  EXPECT_TRUE(TopologyLabelsOf(Json::object()).empty());
}

}  // namespace
}  // namespace arbiter::rules
