// The live scheduler on a memory store and a virtual clock: a long-lived queue fed by the
// informers' changes, and decisions written back to the store.
#include "arbiter/controlplane/live_scheduler.h"

#include <gtest/gtest.h>

#include "arbiter/controlplane/metrics.h"
#include "arbiter/controlplane/pod_json.h"
#include "arbiter/sched/preemption/preemption_history.h"

namespace arbiter::controlplane {
namespace {

using Json = nlohmann::json;
constexpr Timestamp kStart = Timestamp{1'800'000'000} * kSecond;

class LiveSchedulerTest : public ::testing::Test {
 protected:
  LiveSchedulerTest()
      : store_(store::NewMemoryStore()),
        clock_(kStart),
        batch_(*store_),
        live_(*store_, batch_, clock_, {}, metrics_, Decoder(), Recorder()) {
    for (const char* r : {"nodes", "pods", "namespaces", "priorityclasses", "poddisruptionbudgets", "podgroups",
                          "compositepodgroups", "workloads", "persistentvolumeclaims", "persistentvolumes",
                          "storageclasses", "csinodes"}) {
      informers_[r] = std::make_unique<store::Informer>(*store_, r);
    }
  }

  // What every scheduler of these tests decodes with, and records events to.
  DecodeFn Decoder() {
    return [this](const store::Object& o) -> const manifest::LoadResult& {
      return decoded_[{o.resource, o.ns, o.name, o.revision}] = manifest::DecodeJson(o.resource + "/" + o.name, *o.body.tree());
    };
  }
  RecordEventFn Recorder() {
    return [this](const std::string&, const std::string& pod, const std::string&, const std::string&,
                  const std::string& reason, const std::string&) {
      events_.push_back(reason + " " + pod);
      return Status::Ok();
    };
  }

  // Syncs every informer, then one pass over what changed (of `live`, the fixture's by default).
  void Pass(LiveScheduler* live = nullptr) {
    Changes changes;
    for (auto& [r, inf] : informers_) {
      ASSERT_TRUE(inf->Sync().ok());
      changes[r] = inf->TakeChanged();
    }
    Status st = (live != nullptr ? *live : live_).Pass(informers_, changes);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  void SyncOnly() {
    for (auto& [r, inf] : informers_) ASSERT_TRUE(inf->Sync().ok());
  }

  void AddNode(const std::string& name, const std::string& cpu) {
    Json n = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}, {"uid", "uid-" + name}}},
              {"status", {{"allocatable", {{"cpu", cpu}, {"memory", "8Gi"}, {"pods", "110"}}}}}};
    ASSERT_TRUE(store_->Create("nodes", "", name, n).ok());
  }
  void AddPod(const std::string& name, const std::string& cpu, int priority, const std::string& node = "") {
    Json p = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name},
                            {"creationTimestamp", FormatRfc3339(clock_.Now())}}},
              {"spec", {{"priority", priority}, {"schedulerName", "default-scheduler"},
                        {"terminationGracePeriodSeconds", 30},
                        {"containers", Json::array({{{"name", "c"}, {"image", "x"},
                                                      {"resources", {{"requests", {{"cpu", cpu}}}}}}})}}},
              {"status", {{"phase", "Pending"}}}};
    if (!node.empty()) {
      p["spec"]["nodeName"] = node;
      p["status"]["phase"] = "Running";
    }
    ASSERT_TRUE(store_->Create("pods", "default", name, p).ok());
  }
  // A gang PodGroup of `min_count`, and a pending pod of 1 CPU in it.
  void AddGang(const std::string& name, int min_count) {
    Json group = {{"apiVersion", "scheduling.k8s.io/v1beta1"},
                  {"kind", "PodGroup"},
                  {"metadata", {{"name", name}, {"namespace", "default"}}},
                  {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", min_count}}}}}}}};
    ASSERT_TRUE(store_->Create("podgroups", "default", name, group).ok());
  }
  void AddMember(const std::string& name, const std::string& group) {
    AddPod(name, "1", 0);
    Json p = Pod(name);
    p["spec"]["schedulingGroup"] = {{"podGroupName", group}};
    ASSERT_TRUE(store_->Update("pods", "default", name, p, RevisionOf(name)).ok());
  }
  Json Pod(const std::string& name) {
    auto p = store_->Get("pods", "default", name);
    EXPECT_TRUE(p.ok()) << name;
    return p.ok() ? *p->body.tree() : Json();
  }
  int64_t RevisionOf(const std::string& name) { return store_->Get("pods", "default", name)->revision; }
  int Count(const std::string& event) { return static_cast<int>(std::count(events_.begin(), events_.end(), event)); }

  std::unique_ptr<store::Store> store_;
  VirtualClock clock_;
  WriteBatch batch_;
  LoopMetrics metrics_;
  std::map<std::tuple<std::string, std::string, std::string, int64_t>, manifest::LoadResult> decoded_;
  std::vector<std::string> events_;
  Informers informers_;
  LiveScheduler live_;
};

TEST_F(LiveSchedulerTest, APendingPodIsBoundOnceAndItsEchoChangesNothing) {
  AddNode("n1", "2");
  AddPod("p", "1", 0);
  Pass();
  EXPECT_EQ(NodeOf(Pod("p")), "n1");
  EXPECT_EQ(Count("Scheduled p"), 1);
  const int64_t rev = RevisionOf("p");
  Pass();  // the echo of the binding
  Pass();
  EXPECT_EQ(RevisionOf("p"), rev);
  EXPECT_EQ(Count("Scheduled p"), 1);
  EXPECT_EQ(metrics_.scheduled.load(), 1u);
}

// The scheduler's binding is the pods/binding subresource's (rules::BindPod): the nomination
// cleared, PodScheduled True replacing the failure, and the node's topology labels on the pod.
TEST_F(LiveSchedulerTest, ABindingIsThePodsBindingSubresourcesBinding) {
  AddNode("n1", "2");
  Json n = *store_->Get("nodes", "", "n1")->body.tree();
  n["metadata"]["labels"] = {{"topology.kubernetes.io/zone", "z1"}, {"rack", "7"}};
  ASSERT_TRUE(store_->Update("nodes", "", "n1", n, store_->Get("nodes", "", "n1")->revision).ok());
  AddPod("p", "1", 0);
  Json p = Pod("p");
  p["status"]["nominatedNodeName"] = "n9";
  p["status"]["conditions"] = Json::array({{{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"},
                                            {"message", "earlier"}, {"lastTransitionTime", "2026-01-01T00:00:00Z"}}});
  ASSERT_TRUE(store_->Update("pods", "default", "p", p, RevisionOf("p")).ok());
  Pass();
  Json bound = Pod("p");
  EXPECT_EQ(NodeOf(bound), "n1");
  EXPECT_FALSE(bound["status"].contains("nominatedNodeName"));
  EXPECT_EQ(bound["metadata"]["labels"], Json({{"topology.kubernetes.io/zone", "z1"}}));
  ASSERT_EQ(bound["status"]["conditions"].size(), 1u);
  EXPECT_EQ(bound["status"]["conditions"][0],
            Json({{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", FormatRfc3339(clock_.Now())}}));
}

TEST_F(LiveSchedulerTest, AnUnschedulablePodWaitsForAnEventItsFilterCaresAboutNotForAnyChange) {
  AddNode("n1", "1");
  AddPod("big", "1", 0, "n1");
  AddPod("p", "1", 0);
  Pass();
  EXPECT_EQ(NodeOf(Pod("p")), "");
  EXPECT_EQ(Count("FailedScheduling p"), 1);
  EXPECT_EQ(live_.queue_sizes().unschedulable, 1u);
  EXPECT_EQ(metrics_.pending_unschedulable.load(), 1u);
  EXPECT_EQ(metrics_.pending.load(), 0u);
  // A namespace is nothing NodeResourcesFit waits for: the pod stays where it is, untried.
  ASSERT_TRUE(store_->Create("namespaces", "", "other", {{"apiVersion", "v1"}, {"kind", "Namespace"},
                                                         {"metadata", {{"name", "other"}}}}).ok());
  clock_.Advance(20 * kSecond);  // well past any backoff
  Pass();
  EXPECT_EQ(live_.queue_sizes().unschedulable, 1u);
  EXPECT_EQ(NodeOf(Pod("p")), "");
  // A new node is: the pod is tried again and bound there.
  AddNode("n2", "1");
  Pass();
  EXPECT_EQ(NodeOf(Pod("p")), "n2");
  EXPECT_EQ(live_.queue_sizes().unschedulable, 0u);
}

// kube-scheduler sets the Unschedulable condition through UpdatePodCondition: a new message
// replaces the old one, and the time it last changed stays while the status stays False.
TEST_F(LiveSchedulerTest, AnUnschedulableConditionTakesANewMessageButKeepsItsTransitionTime) {
  AddNode("n1", "1");
  AddPod("big", "1", 0, "n1");
  AddPod("p", "1", 0);
  Pass();
  const std::string first = FormatRfc3339(clock_.Now() / kSecond * kSecond);
  const Json pending = Pod("p");
  const Json* before = FindCondition(pending, "PodScheduled");
  ASSERT_NE(before, nullptr);
  EXPECT_EQ((*before)["lastTransitionTime"], first);
  const std::string first_message = (*before)["message"];
  clock_.Advance(20 * kSecond);
  AddNode("n2", "500m");  // a node it does not fit either: tried again, with another message
  Pass();
  const Json still = Pod("p");
  ASSERT_NE(FindCondition(still, "PodScheduled"), nullptr);
  const Json after = *FindCondition(still, "PodScheduled");
  EXPECT_EQ(after["status"], "False");
  EXPECT_NE(after["message"], first_message);
  EXPECT_EQ(after["lastTransitionTime"], first);
}

TEST_F(LiveSchedulerTest, AGatedPodWaitsAsGatedAndIsScheduledWhenAnUpdateRemovesItsLastGate) {
  AddNode("n1", "2");
  AddPod("p", "1", 0);
  Json gated = Pod("p");
  gated["spec"]["schedulingGates"] = Json::array({{{"name", "a"}}, {{"name", "b"}}});
  ASSERT_TRUE(store_->Update("pods", "default", "p", gated, RevisionOf("p")).ok());
  Pass();
  EXPECT_EQ(NodeOf(Pod("p")), "");
  EXPECT_EQ(live_.queue_sizes().gated, 1u);
  EXPECT_EQ(metrics_.pending_gated.load(), 1u);
  EXPECT_EQ(Count("FailedScheduling p"), 0);  // a gated pod is not tried, so nothing is reported
  Json one = Pod("p");
  one["spec"]["schedulingGates"] = Json::array({{{"name", "b"}}});
  ASSERT_TRUE(store_->Update("pods", "default", "p", one, RevisionOf("p")).ok());
  Pass();
  EXPECT_EQ(NodeOf(Pod("p")), "");
  Json none = Pod("p");
  none["spec"].erase("schedulingGates");
  ASSERT_TRUE(store_->Update("pods", "default", "p", none, RevisionOf("p")).ok());
  Pass();
  EXPECT_EQ(NodeOf(Pod("p")), "n1");
  EXPECT_EQ(live_.queue_sizes().gated, 0u);
  EXPECT_EQ(metrics_.pending_gated.load(), 0u);
}

TEST_F(LiveSchedulerTest, AWaitForFirstConsumerClaimIsBoundToTheLocalVolumeOfTheChosenNode) {
  AddNode("n1", "4");
  AddNode("n2", "4");
  for (const char* n : {"n1", "n2"}) {
    Json node = store_->Get("nodes", "", n)->body.Copy();
    node["metadata"]["labels"] = {{"kubernetes.io/hostname", n}};
    ASSERT_TRUE(store_->Update("nodes", "", n, node, store_->Get("nodes", "", n)->revision).ok());
  }
  ASSERT_TRUE(store_->Create("storageclasses", "", "local",
                             {{"apiVersion", "storage.k8s.io/v1"}, {"kind", "StorageClass"}, {"metadata", {{"name", "local"}}},
                              {"provisioner", "kubernetes.io/no-provisioner"}, {"volumeBindingMode", "WaitForFirstConsumer"}})
                  .ok());
  Json affinity = {{"required", {{"nodeSelectorTerms", Json::array({{{"matchExpressions",
      Json::array({{{"key", "kubernetes.io/hostname"}, {"operator", "In"}, {"values", Json::array({"n2"})}}})}}})}}}};
  ASSERT_TRUE(store_->Create("persistentvolumes", "", "disk-n2",
                             {{"apiVersion", "v1"}, {"kind", "PersistentVolume"}, {"metadata", {{"name", "disk-n2"}}},
                              {"spec", {{"storageClassName", "local"}, {"accessModes", Json::array({"ReadWriteOnce"})},
                                        {"capacity", {{"storage", "10Gi"}}}, {"nodeAffinity", affinity}}},
                              {"status", {{"phase", "Available"}}}})
                  .ok());
  ASSERT_TRUE(store_->Create("persistentvolumeclaims", "default", "data",
                             {{"apiVersion", "v1"}, {"kind", "PersistentVolumeClaim"},
                              {"metadata", {{"name", "data"}, {"namespace", "default"}, {"uid", "uid-data"}}},
                              {"spec", {{"storageClassName", "local"}, {"accessModes", Json::array({"ReadWriteOnce"})},
                                        {"resources", {{"requests", {{"storage", "5Gi"}}}}}}},
                              {"status", {{"phase", "Pending"}}}})
                  .ok());
  AddPod("p", "1", 0);
  Json p = Pod("p");
  p["spec"]["volumes"] = Json::array({{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "data"}}}}});
  ASSERT_TRUE(store_->Update("pods", "default", "p", p, RevisionOf("p")).ok());
  Pass();
  EXPECT_EQ(NodeOf(Pod("p")), "n2");
  const Json claim = store_->Get("persistentvolumeclaims", "default", "data")->body.Copy();
  EXPECT_EQ(claim["spec"]["volumeName"], "disk-n2");
  EXPECT_EQ(claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"], "yes");
  EXPECT_EQ(claim["status"]["phase"], "Bound");
  const Json pv = store_->Get("persistentvolumes", "", "disk-n2")->body.Copy();
  EXPECT_EQ(pv["spec"]["claimRef"]["name"], "data");
  EXPECT_EQ(pv["status"]["phase"], "Bound");
  // A second pod with a claim of its own finds no volume left: it waits, and nothing else moves.
  ASSERT_TRUE(store_->Create("persistentvolumeclaims", "default", "more",
                             {{"apiVersion", "v1"}, {"kind", "PersistentVolumeClaim"},
                              {"metadata", {{"name", "more"}, {"namespace", "default"}}},
                              {"spec", {{"storageClassName", "local"}, {"accessModes", Json::array({"ReadWriteOnce"})},
                                        {"resources", {{"requests", {{"storage", "5Gi"}}}}}}}})
                  .ok());
  AddPod("q", "1", 0);
  Json q = Pod("q");
  q["spec"]["volumes"] = Json::array({{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "more"}}}}});
  ASSERT_TRUE(store_->Update("pods", "default", "q", q, RevisionOf("q")).ok());
  Pass();
  EXPECT_EQ(NodeOf(Pod("q")), "");
  EXPECT_EQ(Count("FailedScheduling q"), 1);
}

TEST_F(LiveSchedulerTest, ABindingTheStoreRefusesIsForgottenAndRetriedOnTheStoresVersion) {
  AddNode("n1", "2");
  AddNode("n2", "2");
  AddPod("p", "1", 0);
  AddPod("q", "1", 0);
  SyncOnly();
  // p changes after the informer saw it: its binding, conditional on the old revision, is
  // refused when the pass's writes are flushed (the cycles do not wait for the store). p is
  // forgotten (taken out of the cache), read again from the store, and returned to backoffQ
  // with its attempt; q is bound. A failed binding is an error, not a rejection: p waits its
  // backoff out (upstream's entityErrorBackoffQ is not popped early), then is bound by the next
  // pass, on its current version: the label written meanwhile survives, and it is bound once.
  Json p = Pod("p");
  p["metadata"]["labels"] = {{"app", "web"}};
  ASSERT_TRUE(store_->Update("pods", "default", "p", p, RevisionOf("p")).ok());
  Changes changes;
  for (auto& [r, inf] : informers_) changes[r] = inf->TakeChanged();
  ASSERT_TRUE(live_.Pass(informers_, changes).ok());
  EXPECT_EQ(NodeOf(Pod("p")), "");
  EXPECT_NE(NodeOf(Pod("q")), "");
  EXPECT_EQ(metrics_.scheduled.load(), 1u);
  EXPECT_EQ(live_.queue_sizes().backoff, 1u);
  Pass();
  EXPECT_EQ(NodeOf(Pod("p")), "") << "still backing off";
  clock_.Advance(kSecond);
  Pass();
  EXPECT_NE(NodeOf(Pod("p")), "");
  EXPECT_EQ(Pod("p")["metadata"]["labels"]["app"], "web");
  EXPECT_EQ(metrics_.scheduled.load(), 2u);
  EXPECT_EQ(Count("Scheduled p"), 1);
  ASSERT_GE(events_.size(), 2u);
  EXPECT_EQ(events_[0], "Scheduled q");
  Pass();
  EXPECT_EQ(metrics_.scheduled.load(), 2u);
}

TEST_F(LiveSchedulerTest, APreemptorEvictsItsVictimWaitsForItAndBindsWhereItWasNominated) {
  AddNode("n1", "1");
  AddPod("low", "1", 0, "n1");
  AddPod("high", "1", 100);
  Pass();
  Json low = Pod("low");
  EXPECT_TRUE(Terminating(low));
  ASSERT_TRUE(low["status"]["conditions"].is_array());
  EXPECT_EQ(low["status"]["conditions"][0]["type"], "DisruptionTarget");
  EXPECT_EQ(low["status"]["conditions"][0]["reason"], "PreemptionByScheduler");
  EXPECT_EQ(Count("Preempted low"), 1);
  EXPECT_EQ(StringAt(Pod("high"), "status", "nominatedNodeName"), "n1");
  EXPECT_EQ(NodeOf(Pod("high")), "");
  // The victim is terminating, not gone: nothing more happens, and it is not evicted twice.
  clock_.Advance(2 * kSecond);
  Pass();
  EXPECT_EQ(Count("Preempted low"), 1);
  EXPECT_EQ(NodeOf(Pod("high")), "");
  // Its grace period over, the node agent deletes it; the preemptor binds where it was nominated.
  ASSERT_TRUE(store_->Delete("pods", "default", "low", RevisionOf("low")).ok());
  clock_.Advance(30 * kSecond);
  Pass();
  EXPECT_EQ(NodeOf(Pod("high")), "n1");
  EXPECT_EQ(metrics_.preemption_attempts.load(), 1u);
}

TEST_F(LiveSchedulerTest, AVictimWithoutAGracePeriodIsDeletedCarryingItsDisruptionTargetCondition) {
  AddNode("n1", "1");
  AddPod("low", "1", 0, "n1");
  Json low = Pod("low");
  low["spec"]["terminationGracePeriodSeconds"] = 0;
  ASSERT_TRUE(store_->Update("pods", "default", "low", low, RevisionOf("low")).ok());
  AddPod("high", "1", 100);
  auto w = store_->WatchFrom("pods", "", *store_->Revision());
  ASSERT_TRUE(w.ok());
  Pass();
  // The condition is written first, then the pod deleted: its deletion event carries it.
  EXPECT_EQ(store_->Get("pods", "default", "low").status().code(), StatusCode::kNotFound);
  std::vector<std::string> seen;
  Json deleted;
  auto events = (*w)->Next(std::chrono::milliseconds(100));
  ASSERT_TRUE(events.ok());
  for (const auto& e : *events) {
    if (e->object.name != "low") continue;
    seen.push_back(store::EventTypeName(e->type));
    if (e->type == store::EventType::kDeleted) deleted = *e->object.body.tree();
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"MODIFIED", "DELETED"}));
  ASSERT_TRUE(deleted["status"]["conditions"].is_array());
  EXPECT_EQ(deleted["status"]["conditions"][0]["type"], "DisruptionTarget");
  EXPECT_EQ(Count("Preempted low"), 1);
  // The preemptor binds where it was nominated once its backoff is over.
  clock_.Advance(2 * kSecond);
  Pass();
  Pass();
  EXPECT_EQ(NodeOf(Pod("high")), "n1");
}

// The victim changes after the informer saw it (the node agent's status write, say): the
// eviction, made on the informer's version, is refused as stale and made again on the store's.
// Dropped, it would leave the cache holding the victim terminating and its preemptor waiting
// for a deletion that never comes.
TEST_F(LiveSchedulerTest, AnEvictionThatLosesARaceIsMadeAgainOnTheStoresVersion) {
  for (int grace : {30, 0}) {
    SCOPED_TRACE("grace " + std::to_string(grace));
    const std::string node = "n" + std::to_string(grace), low = "low" + std::to_string(grace),
                      high = "high" + std::to_string(grace);
    AddNode(node, "1");
    AddPod(low, "1", 0, node);
    Json v = Pod(low);
    v["spec"]["terminationGracePeriodSeconds"] = grace;
    ASSERT_TRUE(store_->Update("pods", "default", low, v, RevisionOf(low)).ok());
    Pass();
    AddPod(high, "1", 100);
    SyncOnly();
    Json changed = Pod(low);
    changed["metadata"]["labels"] = {{"seen", "by-the-node"}};
    ASSERT_TRUE(store_->Update("pods", "default", low, changed, RevisionOf(low)).ok());
    Changes changes;
    for (auto& [r, inf] : informers_) changes[r] = inf->TakeChanged();
    ASSERT_TRUE(live_.Pass(informers_, changes).ok());
    if (grace > 0) {
      Json after = Pod(low);
      EXPECT_TRUE(Terminating(after));
      EXPECT_TRUE(HasDisruptionTarget(after));
      EXPECT_EQ(after["metadata"]["labels"]["seen"], "by-the-node");  // made on the store's version
      ASSERT_TRUE(store_->Delete("pods", "default", low, RevisionOf(low)).ok());  // its grace ends
    } else {
      EXPECT_EQ(store_->Get("pods", "default", low).status().code(), StatusCode::kNotFound);
    }
    EXPECT_EQ(Count("Preempted " + low), 1);
    clock_.Advance(31 * kSecond);
    Pass();
    Pass();
    EXPECT_EQ(NodeOf(Pod(high)), node);
  }
}

TEST_F(LiveSchedulerTest, AGangWhoseMembersArriveOverTwoPassesIsBoundWhole) {
  AddNode("n1", "4");
  AddGang("g", 2);
  AddMember("m1", "g");
  Pass();
  EXPECT_EQ(NodeOf(Pod("m1")), "");  // one member of two: the gang waits
  AddMember("m2", "g");
  Pass();
  EXPECT_EQ(NodeOf(Pod("m1")), "n1");
  EXPECT_EQ(NodeOf(Pod("m2")), "n1");
  EXPECT_EQ(metrics_.scheduled.load(), 2u);
}

// The root group's condition, as `plan` reports it: False while the gang cannot be placed, True
// once it is, and then left alone; the condition's own echo rebuilds nothing and writes nothing.
TEST_F(LiveSchedulerTest, AGangsGroupGetsItsInitiallyScheduledConditionAndItsEchoChangesNothing) {
  AddNode("n1", "1");
  AddGang("g", 2);
  AddMember("m1", "g");
  AddMember("m2", "g");
  auto condition = [&]() -> Json {
    auto g = store_->Get("podgroups", "default", "g");
    EXPECT_TRUE(g.ok());
    const store::Body::Tree g_tree = g.ok() ? g->body.tree() : nullptr;
    const Json* conds = g_tree != nullptr ? At(*g_tree, "status", "conditions") : nullptr;
    if (conds == nullptr || !conds->is_array()) return Json();
    for (const Json& c : *conds) {
      if (c.value("type", "") == "PodGroupInitiallyScheduled") return c;
    }
    return Json();
  };
  Pass();  // two pods of 1 CPU on one node of 1 CPU: the gang does not fit
  EXPECT_EQ(NodeOf(Pod("m1")), "");
  Json c = condition();
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(c["status"], "False");
  EXPECT_EQ(c["reason"], "Unschedulable");
  EXPECT_NE(c.value("message", ""), "");
  const int64_t unschedulable_rev = store_->Get("podgroups", "default", "g")->revision;
  Pass();  // the echo of the condition
  EXPECT_EQ(store_->Get("podgroups", "default", "g")->revision, unschedulable_rev);

  // A failed group backs off (upstream names no rejecting plugin for it) and is tried again when
  // its backoff is over, not at the node's arrival.
  AddNode("n2", "1");
  Pass();
  EXPECT_EQ(NodeOf(Pod("m1")), "");
  clock_.Advance(kSecond);
  Pass();
  Pass();
  EXPECT_NE(NodeOf(Pod("m1")), "");
  EXPECT_NE(NodeOf(Pod("m2")), "");
  c = condition();
  EXPECT_EQ(c["status"], "True");
  EXPECT_EQ(c["reason"], "Scheduled");
  const int64_t rev = store_->Get("podgroups", "default", "g")->revision;
  clock_.Advance(10 * kSecond);
  Pass();
  Pass();
  EXPECT_EQ(store_->Get("podgroups", "default", "g")->revision, rev);
  EXPECT_EQ(metrics_.scheduled.load(), 2u);
}

TEST_F(LiveSchedulerTest, ANewLeaderRebuildsFromTheStoreAndBindsNothingTwice) {
  AddNode("n1", "2");
  AddPod("a", "1", 0);
  Pass();
  ASSERT_EQ(NodeOf(Pod("a")), "n1");
  live_.Reset();  // leadership lost, then won again
  AddPod("b", "1", 0);
  Pass();
  EXPECT_EQ(NodeOf(Pod("b")), "n1");
  EXPECT_EQ(Count("Scheduled a"), 1);
  EXPECT_EQ(metrics_.scheduled.load(), 2u);
}

TEST_F(LiveSchedulerTest, TheThrashGuardRecordsALineagesPreemptionsOnItsControllerAndSparesItThen) {
  // A scheduler with maxPreemptionsPerPod 1 within an hour (Arbiter's opt-in thrash guard).
  LiveSchedulerOptions options;
  options.config.max_preemptions_per_pod = 1;
  options.config.preemption_window_seconds = 3600;
  LiveScheduler guarded(*store_, batch_, clock_, options, metrics_, Decoder(), Recorder());
  auto pass = [&] { Pass(&guarded); };
  Json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata", {{"name", "web"}, {"namespace", "default"}, {"uid", "rs-1"}}},
             {"spec", {{"replicas", 2}}}};
  ASSERT_TRUE(store_->Create("replicasets", "default", "web", rs).ok());
  auto owned = [&](const std::string& pod) {
    Json p = Pod(pod);
    p["metadata"]["ownerReferences"] = Json::array(
        {{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", "web"}, {"uid", "rs-1"}, {"controller", true}}});
    ASSERT_TRUE(store_->Update("pods", "default", pod, p, RevisionOf(pod)).ok());
  };
  AddNode("n1", "1");
  AddNode("n2", "1");
  AddPod("web-0", "1", 0, "n1");
  AddPod("web-1", "1", 0, "n2");
  owned("web-0");
  owned("web-1");
  AddPod("high", "1", 100);
  pass();
  // One of the two goes; its lineage's time is written on the ReplicaSet.
  const bool first_on_n1 = Terminating(Pod("web-0"));
  EXPECT_NE(first_on_n1, Terminating(Pod("web-1")));
  auto owner = store_->Get("replicasets", "default", "web");
  ASSERT_TRUE(owner.ok());
  const store::Body::Tree owner_tree = owner->body.tree();
  const Json& annotations = (*owner_tree)["metadata"]["annotations"];
  ASSERT_TRUE(annotations.contains("arbiter.dev/preemptions")) << *owner->body.shared_text();
  auto times = sched::preemption::ParsePreemptionsAnnotation(annotations["arbiter.dev/preemptions"].get<std::string>());
  ASSERT_TRUE(times.ok()) << times.status().message();
  EXPECT_EQ(times->size(), 1u);
  // A second preemptor may not take the other replica: its lineage had its one preemption.
  clock_.Advance(10 * kSecond);
  AddPod("high-2", "1", 100);
  pass();
  EXPECT_FALSE(Terminating(Pod(first_on_n1 ? "web-1" : "web-0")));
  EXPECT_EQ(NodeOf(Pod("high-2")), "");
  EXPECT_EQ(Count("Preempted web-0") + Count("Preempted web-1"), 1);
}

TEST_F(LiveSchedulerTest, ANewSchedulerStartsTheThrashGuardFromTheControllersAnnotations) {
  // An earlier scheduler preempted the ReplicaSet's pods 10 s ago (its annotation); this one,
  // built afresh with one preemption allowed per hour, spares the lineage from its first cycle.
  LiveSchedulerOptions options;
  options.config.max_preemptions_per_pod = 1;
  options.config.preemption_window_seconds = 3600;
  Json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata",
              {{"name", "web"},
               {"namespace", "default"},
               {"uid", "rs-1"},
               {"annotations", {{"arbiter.dev/preemptions", "[\"" + FormatRfc3339(clock_.Now() - 10 * kSecond) + "\"]"}}}}},
             {"spec", {{"replicas", 1}}}};
  ASSERT_TRUE(store_->Create("replicasets", "default", "web", rs).ok());
  AddNode("n1", "1");
  AddPod("web-0", "1", 0, "n1");
  Json p = Pod("web-0");
  p["metadata"]["ownerReferences"] = Json::array(
      {{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", "web"}, {"uid", "rs-1"}, {"controller", true}}});
  ASSERT_TRUE(store_->Update("pods", "default", "web-0", p, RevisionOf("web-0")).ok());
  AddPod("high", "1", 100);
  LiveScheduler guarded(*store_, batch_, clock_, options, metrics_, Decoder(), Recorder());
  Pass(&guarded);
  EXPECT_FALSE(Terminating(Pod("web-0")));
  EXPECT_EQ(NodeOf(Pod("high")), "");
  EXPECT_EQ(Count("Preempted web-0"), 0);
}

}  // namespace
}  // namespace arbiter::controlplane
