// The dashboard's documents (docs/dashboard.md): what the page at /ui/ draws, read live from
// `arbiter serve` or written into a report by `arbiter plan --html` and `arbiter bench --html`.
//
// The documents are built here and nowhere else, from the engine's own types: a node's allocation
// is the sum of its pods' effective requests (model::Pod::requests, the rule NodeInfo counts by),
// the queue is the scheduler's (SchedulingQueue::Pending), an explanation is `arbiter plan
// --explain`'s cycles (plan::CycleJson). The page (assets/) only draws them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "arbiter/base/json.h"

#include "arbiter/base/status.h"
#include "arbiter/base/time.h"
#include "arbiter/controlplane/decode_cache.h"
#include "arbiter/controlplane/scheduler_activity.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/sim/cluster_simulation.h"
#include "arbiter/store/informer.h"
#include "arbiter/store/store.h"

namespace arbiter::ui {

using Json = nlohmann::ordered_json;

inline constexpr const char* kApiVersion = "arbiter.dev/v1alpha1";

// What the pods bound to one node take of it.
struct NodeUsage {
  model::Resources requested;  // the sum of the pods' effective requests (terminating ones too)
  size_t pods = 0;
  std::optional<int32_t> max_priority;
};
// Adds one bound pod (of priority `priority`) to its node's usage.
void AddUsage(std::map<std::string, NodeUsage>& usage, const model::Pod& pod, int32_t priority);

// One element of the document's `nodes`.
Json NodeJson(const model::Node& node, bool ready, const NodeUsage* usage);
// One element of `queue`.
Json QueueJson(const controlplane::QueuedPodView& q);

// What the timeline shows of a pod named by a preemption, as the cluster has it now.
struct PodState {
  std::string uid;
  std::string node;
  std::string nominated_node;
  std::optional<Timestamp> deletion;    // metadata.deletionTimestamp: its grace period's end
  std::optional<Timestamp> bound_time;  // PodScheduled True since
  std::string group;                    // its PodGroup, namespace/name ("" for none)
};
// The cluster's pods as the timeline reads them: by namespace/name, and each PodGroup's members
// (how many, how many bound).
class PodIndex {
 public:
  void Add(const std::string& key, PodState state);
  // The pod named namespace/name, or nullptr when it is gone.
  const PodState* Find(const std::string& key) const;
  struct Members {
    size_t bound = 0, total = 0;
  };
  // A PodGroup's members (namespace/name), or nullptr when it has none.
  const Members* GroupMembers(const std::string& group) const;

 private:
  std::map<std::string, PodState> pods_;
  std::map<std::string, Members> groups_;
};
// One element of `preemptions`: the record, and where its victims and preemptor are now (a victim
// whose name now belongs to another pod, by UID, is Deleted; a PodGroup preemptor's members, how
// many are bound).
Json PreemptionJson(const controlplane::PreemptionView& p, const PodIndex& pods);

// The Explanation of pod `key` ("namespace/name") from a plan run with explain: its cycles (or
// its group's), the preemptions it made, and its outcome.
Json ExplanationJson(const std::string& key, const sim::PlanResult& plan, const std::optional<std::string>& bound_node,
                     bool what_if, Timestamp now);

// The report of a plan (`arbiter plan --html`): the nodes as the plan leaves them, the pods it left
// pending, its preemptions and every planned pod's explanation. Each cycle is kept once, in
// `cycles`; an explanation names its own by index (`cycleRefs`), so that a gang's cycle is not
// copied for every member. REQUIRES: `plan` was run with explain over `objects`.
Json PlanReport(const manifest::ClusterObjects& objects, const sim::PlanResult& plan);

// The report of benchmark runs (`arbiter bench --html`): `runs` are the JSON objects `arbiter
// bench -o json` prints (scenario, nodes, podsPerSecond, ...), one per run; the report keeps each
// scenario's median.
Json BenchReport(const std::vector<Json>& runs);

// The page: live (no data; it reads the endpoints) or a report with `data` inline.
std::string Page(const Json* data);

// The dashboard of a running server: GET /ui/, GET /apis/arbiter.dev/v1alpha1/dashboard and
// GET /apis/arbiter.dev/v1alpha1/namespaces/NS/explanations/NAME. It keeps informers of nodes
// and pods (made on the first request, then kept current by the store's watches) and their
// decoded forms, so that a request costs what changed since the last one. Thread-safe: requests
// are served one at a time.
class DashboardService {
 public:
  // `activity`: the scheduler of this process (null: none runs here).
  DashboardService(store::Store& store, const Clock& clock, controlplane::SchedulerActivity* activity,
                   std::string scheduler_name);
  ~DashboardService();

  struct Answer {
    int code = 200;
    std::string content_type = "application/json";
    std::string body;
  };
  // Any GET under /ui or /apis/arbiter.dev/; 404 for other paths.
  Answer Get(const std::string& path);

  StatusOr<Json> Dashboard();
  // A pending pod: its plan, cycle by cycle. A bound pod: how it got there (`history`: the
  // events about it, oldest first, and the preemptions it or its PodGroup made), then the
  // what-if of planning it again as if it were pending.
  StatusOr<Json> Explain(const std::string& ns, const std::string& name);

 private:
  Status SyncLocked();
  StatusOr<Json> History(const std::string& ns, const std::string& name, const std::string& uid, const std::string& group,
                         const std::string& node);

  store::Store& store_;
  const Clock& clock_;
  controlplane::SchedulerActivity* activity_;
  const std::string scheduler_name_;
  std::mutex mu_;
  std::unique_ptr<store::Informer> nodes_, pods_;
  controlplane::DecodeCache decoded_{"store:"};  // problems named as "store:pods/NS/NAME"
  // The last document, the store revision it was read at and when it was built.
  std::shared_ptr<const Json> last_;
  int64_t last_revision_ = -1;
  std::chrono::steady_clock::time_point last_built_;
  // The informers' watches stop (Pause) once no read has come for kIdle, so that an idle service
  // holds no stream (an etcd watch buffers what nobody reads); the next read lists afresh.
  static constexpr auto kIdle = std::chrono::seconds(60);
  std::chrono::steady_clock::time_point last_request_;
  std::condition_variable idle_cv_;
  bool stopping_ = false;
  std::thread idle_;
  // The last explanation, for the same pod at the same store revision.
  std::string explained_pod_;
  int64_t explained_revision_ = -1;
  std::shared_ptr<const Json> explained_;
  std::mutex explain_mu_;  // one explanation at a time: each plans the whole cluster
};

}  // namespace arbiter::ui
