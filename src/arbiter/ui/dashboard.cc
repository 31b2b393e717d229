// The dashboard's documents, its live service and its page.
#include "arbiter/ui/dashboard.h"

#include <algorithm>
#include <deque>
#include <set>
#include <string_view>
#include <utility>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/controlplane/pod_json.h"
#include "arbiter/model/taints.h"
#include "arbiter/plan/render.h"
#include "arbiter/sim/plan_simulation.h"

// The page's files (cmake/EmbedFile.cmake).
extern const unsigned char kDashboardHtml[];
extern const unsigned long kDashboardHtmlSize;
extern const unsigned char kDashboardCss[];
extern const unsigned long kDashboardCssSize;
extern const unsigned char kDashboardJs[];
extern const unsigned long kDashboardJsSize;

namespace arbiter::ui {

namespace {

std::string_view Embedded(const unsigned char* data, unsigned long size) {
  return {reinterpret_cast<const char*>(data), size};
}

Json OrNull(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }
Json OrNull(const std::optional<Timestamp>& t) { return t ? Json(FormatRfc3339(*t)) : Json(nullptr); }

// Replaces the one `placeholder` in `page` with `with`.
void Fill(std::string& page, std::string_view placeholder, std::string_view with) {
  const size_t at = page.find(placeholder);
  if (at != std::string::npos) page.replace(at, placeholder.size(), with);
}

// JSON text that is safe inside a <script> element: "</" (which could close it) and the
// characters HTML or JavaScript read as line ends are escaped; the JSON value is unchanged.
std::string ScriptSafeJson(const Json& data) {
  const std::string text = data.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (static_cast<unsigned char>(c) == 0xE2 && i + 2 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(text[i + 2]) == 0xA8 || static_cast<unsigned char>(text[i + 2]) == 0xA9)) {
      out += static_cast<unsigned char>(text[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

// The node's Ready condition: a node with no Ready condition yet counts as ready (the scheduler
// does not read the condition; the node lifecycle controller taints a node that is not).
bool NodeReady(const nlohmann::json& body) {
  const nlohmann::json* ready = controlplane::FindCondition(body, "Ready");
  return ready == nullptr || ready->value("status", "") == "True";
}

// The PodScheduled condition's lastTransitionTime when it is True.
std::optional<Timestamp> BoundTime(const nlohmann::json& body) {
  const nlohmann::json* c = controlplane::FindCondition(body, "PodScheduled");
  if (c == nullptr || c->value("status", "") != "True") return std::nullopt;
  auto t = ParseRfc3339(c->value("lastTransitionTime", ""));
  return t.ok() ? std::optional<Timestamp>(*t) : std::nullopt;
}

}  // namespace

void AddUsage(std::map<std::string, NodeUsage>& usage, const model::Pod& pod, int32_t priority) {
  if (pod.node_name.empty()) return;
  NodeUsage& u = usage[pod.node_name];
  u.requested.Add(pod.requests);
  ++u.pods;
  u.max_priority = std::max(u.max_priority.value_or(priority), priority);
}

Json NodeJson(const model::Node& node, bool ready, const NodeUsage* usage) {
  static const NodeUsage kNone;
  const NodeUsage& u = usage != nullptr ? *usage : kNone;
  Json taints = Json::array();
  for (const auto& t : node.taints) {
    taints.push_back(t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + std::string(model::TaintEffectName(t.effect)));
  }
  return Json{{"name", node.name},
              {"cpu", {{"allocatable", node.allocatable.milli_cpu}, {"requested", u.requested.milli_cpu}}},
              {"memory", {{"allocatable", node.allocatable.memory}, {"requested", u.requested.memory}}},
              {"pods", u.pods},
              {"maxPriority", u.max_priority ? Json(*u.max_priority) : Json(nullptr)},
              {"unschedulable", node.unschedulable},
              {"ready", ready},
              {"taints", std::move(taints)}};
}

Json QueueJson(const controlplane::QueuedPodView& q) {
  return Json{{"pod", q.pod},
              {"uid", q.uid},
              {"podGroup", OrNull(q.group)},
              {"queue", q.pool},
              {"priority", q.priority},
              {"attempts", q.attempts},
              {"message", q.message},
              {"nominatedNode", OrNull(q.nominated_node)},
              {"backoffUntil", OrNull(q.backoff_until)}};
}

void PodIndex::Add(const std::string& key, PodState state) {
  if (!state.group.empty()) {
    Members& m = groups_[state.group];
    ++m.total;
    m.bound += !state.node.empty();
  }
  pods_[key] = std::move(state);
}

const PodState* PodIndex::Find(const std::string& key) const {
  auto it = pods_.find(key);
  return it != pods_.end() ? &it->second : nullptr;
}

const PodIndex::Members* PodIndex::GroupMembers(const std::string& group) const {
  auto it = groups_.find(group);
  return it != groups_.end() ? &it->second : nullptr;
}

Json PreemptionJson(const controlplane::PreemptionView& p, const PodIndex& pods) {
  const auto lookup = [&pods](const std::string& key) { return pods.Find(key); };
  Json victims = Json::array();
  for (const auto& v : p.victims) {
    const PodState* now = lookup(v.pod);
    if (now != nullptr && !v.uid.empty() && now->uid != v.uid) now = nullptr;  // a new pod of the same name
    const char* state = now == nullptr ? "Deleted" : now->deletion ? "Terminating" : "Running";
    // The grace period runs out at the deletion timestamp the eviction set (the record's time
    // plus the grace period when the pod is already gone).
    std::optional<Timestamp> deletion = now != nullptr ? now->deletion : std::nullopt;
    if (!deletion) deletion = AddSecondsCapped(p.time / kSecond * kSecond, v.grace_seconds);
    victims.push_back(Json{{"name", v.pod},
                           {"node", v.node},
                           {"priority", v.priority},
                           {"violatesPDB", v.violates_pdb},
                           {"gracePeriodSeconds", v.grace_seconds},
                           {"deletionTime", OrNull(deletion)},
                           {"state", state}});
  }
  const PodState* preemptor = p.preemptor_kind == "Pod" ? lookup(p.preemptor) : nullptr;
  if (preemptor != nullptr && !p.preemptor_uid.empty() && preemptor->uid != p.preemptor_uid) preemptor = nullptr;
  // A PodGroup preemptor is bound when its members are (a CompositePodGroup's members are its
  // groups': not counted here).
  const PodIndex::Members* members = p.preemptor_kind == "PodGroup" ? pods.GroupMembers(p.preemptor) : nullptr;
  return Json{{"time", FormatRfc3339(p.time)},
              {"preemptor", p.preemptor},
              {"preemptorKind", p.preemptor_kind},
              {"node", OrNull(p.node)},
              {"victims", std::move(victims)},
              {"preemptorNode", preemptor != nullptr ? OrNull(preemptor->node) : Json(nullptr)},
              {"preemptorBoundTime", preemptor != nullptr ? OrNull(preemptor->bound_time) : Json(nullptr)},
              {"preemptorNominatedNode", preemptor != nullptr ? OrNull(preemptor->nominated_node) : Json(nullptr)},
              {"preemptorMembers", members != nullptr ? Json{{"bound", members->bound}, {"total", members->total}}
                                                      : Json(nullptr)}};
}

namespace {

// Whether a cycle concerns pod `key` (of group `group`, "" for a lone pod): its own, its group's,
// or one that lists it among the members.
bool CycleOf(const sched::CycleOutcome& c, const std::string& key, const std::string& group) {
  if (c.pod && c.pod->pod.Key() == key) return true;
  if (!group.empty() && c.group == group) return true;
  return std::any_of(c.members.begin(), c.members.end(),
                     [&](const sched::CycleOutcome& m) { return m.pod && m.pod->pod.Key() == key; });
}

// The explanation's fields after its cycles: the preemptions the pod (or its group) made, and its
// outcome.
void ExplanationOutcome(Json& j, const std::string& key, const std::string& group, const sim::PlanResult& plan) {
  Json preemptions = Json::array();
  for (const auto& p : plan.preemptions) {
    if (p.preemptor == key || (!group.empty() && p.preemptor == group)) preemptions.push_back(plan::PreemptionJson(p));
  }
  Json outcome = nullptr;
  for (const auto& p : plan.pods) {
    if (p.name != key) continue;
    outcome = Json{{"status", p.scheduled ? "Scheduled" : "Pending"},
                   {"node", OrNull(p.scheduled ? p.node : std::string())},
                   {"nominatedNode", p.nominated_node ? OrNull(*p.nominated_node) : Json(nullptr)},
                   {"message", p.message}};
  }
  j["preemptions"] = std::move(preemptions);
  j["outcome"] = std::move(outcome);
}

Json ExplanationHead(const std::string& key, const std::optional<std::string>& bound_node, bool what_if, Timestamp now) {
  return Json{{"kind", "Explanation"},
              {"apiVersion", kApiVersion},
              {"pod", key},
              {"boundNode", bound_node ? Json(*bound_node) : Json(nullptr)},
              {"whatIf", what_if},
              {"time", FormatRfc3339(now)}};
}

// The root group a planned pod's cycles name (its PodGroup's key, as PodPlan::pod_group gives it).
std::string GroupOf(const sim::PlanResult& plan, const std::string& key) {
  for (const auto& p : plan.pods) {
    if (p.name == key) return p.pod_group;
  }
  return "";
}

}  // namespace

Json ExplanationJson(const std::string& key, const sim::PlanResult& plan, const std::optional<std::string>& bound_node,
                     bool what_if, Timestamp now) {
  std::string group = GroupOf(plan, key);
  Json cycles = Json::array();
  for (const auto& c : plan.cycles) {
    if (!CycleOf(c, key, group)) continue;
    cycles.push_back(plan::CycleJson(c));
    if (group.empty() && !c.group.empty()) group = c.group;
  }
  Json j = ExplanationHead(key, bound_node, what_if, now);
  j["cycles"] = std::move(cycles);
  ExplanationOutcome(j, key, group, plan);
  return j;
}

Json PlanReport(const manifest::ClusterObjects& objects, const sim::PlanResult& plan) {
  // Where each pod is at the end: the input's binding, the plan's decision, or gone (a victim,
  // or evicted under node pressure).
  std::map<std::string, const sim::PodPlan*> planned;
  for (const auto& p : plan.pods) planned[p.name] = &p;
  std::set<std::string> gone;
  for (const auto& p : plan.preemptions) {
    for (const auto& v : p.victims) gone.insert(v.name);
  }
  for (const auto& e : plan.evictions) gone.insert(e.name);
  // A pod that was terminating in the input is gone by the plan's end (the plan runs until every
  // termination is over).
  for (const auto& s : objects.pods) {
    if (s.object.deletion_timestamp) gone.insert(s.object.Key());
  }
  std::map<std::string, NodeUsage> usage;
  std::map<std::string, PodState> states;
  for (const auto& s : objects.pods) {
    const model::Pod& pod = s.object;
    const std::string key = pod.Key();
    if (gone.count(key)) continue;
    model::Pod final_pod = pod;
    if (auto it = planned.find(key); it != planned.end()) {
      final_pod.node_name = it->second->scheduled ? it->second->node : "";
      final_pod.nominated_node_name = it->second->nominated_node.value_or("");
    }
    AddUsage(usage, final_pod, final_pod.priority);
    states[key] = PodState{pod.uid, final_pod.node_name, final_pod.nominated_node_name, std::nullopt, std::nullopt,
                           pod.pod_group_name.empty() ? "" : pod.ns + "/" + pod.pod_group_name};
  }
  // A pod's first Preempted and Scheduled events give the timeline its times.
  std::map<std::string, Timestamp> preempted_at, scheduled_at;
  for (const auto& e : plan.events) {
    if (!e.object.starts_with("Pod ")) continue;
    const std::string key = e.object.substr(4);
    if (e.reason == "Preempted") preempted_at.emplace(key, e.time);
    if (e.reason == "Scheduled") scheduled_at.emplace(key, e.time);
  }
  for (auto& [key, st] : states) {
    if (auto it = scheduled_at.find(key); it != scheduled_at.end() && !st.node.empty()) st.bound_time = it->second;
  }
  std::map<std::string, int64_t> grace;
  for (const auto& s : objects.pods) grace[s.object.Key()] = s.object.termination_grace_period_seconds;

  Json nodes = Json::array();
  for (const auto& s : objects.nodes) {
    auto it = usage.find(s.object.name);
    nodes.push_back(NodeJson(s.object, true, it != usage.end() ? &it->second : nullptr));
  }
  Json queue = Json::array();
  for (const auto& p : plan.pods) {
    if (p.scheduled) continue;
    controlplane::QueuedPodView q;
    q.pod = p.name;
    q.group = p.pod_group;
    q.pool = "pending";
    q.priority = p.priority;
    q.attempts = p.attempts;
    q.message = p.message;
    q.nominated_node = p.nominated_node.value_or("");
    queue.push_back(QueueJson(q));
  }
  PodIndex index;
  for (auto& [key, st] : states) index.Add(key, std::move(st));  // the index holds them from here
  Json preemptions = Json::array();
  for (const auto& p : plan.preemptions) {
    controlplane::PreemptionView v;
    v.preemptor = p.preemptor;
    v.preemptor_kind = p.preemptor_kind;
    v.node = p.node.value_or("");
    v.time = plan.start;
    for (const auto& victim : p.victims) {
      if (auto it = preempted_at.find(victim.name); it != preempted_at.end()) {
        v.time = it->second;
        break;
      }
    }
    for (const auto& victim : p.victims) {
      v.victims.push_back({victim.name, "", victim.node, victim.priority, victim.violates_pdb, grace[victim.name]});
    }
    preemptions.push_back(PreemptionJson(v, index));
  }
  // Newest first, as the live document.
  std::reverse(preemptions.begin(), preemptions.end());
  // Each cycle once; each pod's explanation names its cycles by index (one pass over the cycles,
  // indexed by the pods and groups they concern).
  Json cycles = Json::array();
  std::map<std::string, std::vector<size_t>> refs;  // pod or group key -> cycle indexes
  for (size_t i = 0; i < plan.cycles.size(); ++i) {
    const auto& c = plan.cycles[i];
    cycles.push_back(plan::CycleJson(c));
    std::set<std::string> keys;
    if (c.pod) keys.insert(c.pod->pod.Key());
    if (!c.group.empty()) keys.insert("group:" + c.group);
    for (const auto& m : c.members) {
      if (m.pod) keys.insert(m.pod->pod.Key());
    }
    for (const auto& k : keys) refs[k].push_back(i);
  }
  Json explanations = Json::object();
  for (const auto& p : plan.pods) {
    std::set<size_t> mine;
    if (auto it = refs.find(p.name); it != refs.end()) mine.insert(it->second.begin(), it->second.end());
    if (!p.pod_group.empty()) {
      if (auto it = refs.find("group:" + p.pod_group); it != refs.end()) mine.insert(it->second.begin(), it->second.end());
    }
    Json j = ExplanationHead(p.name, std::nullopt, false, plan.end);
    j["cycleRefs"] = Json(std::vector<size_t>(mine.begin(), mine.end()));
    ExplanationOutcome(j, p.name, p.pod_group, plan);
    explanations[p.name] = std::move(j);
  }
  return Json{{"kind", "Dashboard"},
              {"apiVersion", kApiVersion},
              {"mode", "report"},
              {"resourceVersion", nullptr},
              {"time", FormatRfc3339(plan.end)},
              {"scheduler", {{"running", false}, {"name", objects.config ? objects.config->object.scheduler_name : "default-scheduler"}}},
              {"nodes", std::move(nodes)},
              {"queue", std::move(queue)},
              {"preemptions", std::move(preemptions)},
              {"cycles", std::move(cycles)},
              {"explanations", std::move(explanations)}};
}

Json BenchReport(const std::vector<Json>& runs) {
  // Each scenario's runs, in the order first seen; the median of its pods/s.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Json*>> by_scenario;
  for (const Json& r : runs) {
    if (!r.is_object() || !r.contains("scenario")) continue;
    const std::string name = r["scenario"].is_string() ? r["scenario"].get<std::string>() : r["scenario"].dump();
    if (!by_scenario.count(name)) order.push_back(name);
    by_scenario[name].push_back(&r);
  }
  Json bench = Json::array();
  for (const std::string& name : order) {
    std::vector<double> rates;
    int64_t nodes = 0;
    for (const Json* r : by_scenario[name]) {
      // The scenario's rate: pods bound, preemptors bound, or Nomad placements a second.
      for (const auto& ptr : {"/podsPerSecond"_json_pointer, "/preemptorsPerSecond"_json_pointer,
                              "/placementsPerSecond"_json_pointer, "/nomad/placementsPerSecond"_json_pointer}) {
        if (r->contains(ptr) && r->at(ptr).is_number()) {
          rates.push_back(r->at(ptr).get<double>());
          break;
        }
      }
      if (auto it = r->find("nodes"); it != r->end() && it->is_number_integer()) nodes = it->get<int64_t>();
    }
    if (rates.empty()) continue;
    std::sort(rates.begin(), rates.end());
    const double median = rates.size() % 2 == 1 ? rates[rates.size() / 2]
                                                : (rates[rates.size() / 2 - 1] + rates[rates.size() / 2]) / 2;
    // The family is the name before its sizes: "PreemptionBasic/5000Nodes" -> "PreemptionBasic".
    const std::string family = name.substr(0, name.find('/'));
    bench.push_back(Json{{"scenario", name}, {"family", family}, {"nodes", nodes}, {"podsPerSecond", median},
                         {"runs", rates.size()}});
  }
  return Json{{"kind", "Dashboard"},
              {"apiVersion", kApiVersion},
              {"mode", "report"},
              {"resourceVersion", nullptr},
              {"time", nullptr},
              {"scheduler", {{"running", false}, {"name", nullptr}}},
              {"nodes", Json::array()},
              {"queue", Json::array()},
              {"preemptions", Json::array()},
              {"bench", std::move(bench)}};
}

std::string Page(const Json* data) {
  std::string page(Embedded(kDashboardHtml, kDashboardHtmlSize));
  Fill(page, "<!--ARBITER-STYLE-->", "<style>\n" + std::string(Embedded(kDashboardCss, kDashboardCssSize)) + "</style>");
  Fill(page, "<!--ARBITER-DATA-->",
       data == nullptr ? std::string()
                       : "<script type=\"application/json\" id=\"arbiter-data\">" + ScriptSafeJson(*data) + "</script>");
  Fill(page, "<!--ARBITER-SCRIPT-->", "<script>\n" + std::string(Embedded(kDashboardJs, kDashboardJsSize)) + "</script>");
  return page;
}

// The live service.

DashboardService::DashboardService(store::Store& store, const Clock& clock, controlplane::SchedulerActivity* activity,
                                   std::string scheduler_name)
    : store_(store), clock_(clock), activity_(activity), scheduler_name_(std::move(scheduler_name)) {
  idle_ = std::thread([this] {
    std::unique_lock<std::mutex> lk(mu_);
    while (!stopping_) {
      idle_cv_.wait_for(lk, kIdle / 4, [this] { return stopping_; });
      if (stopping_ || !nodes_ || std::chrono::steady_clock::now() - last_request_ < kIdle) continue;
      nodes_->Pause();
      pods_->Pause();
    }
  });
}

DashboardService::~DashboardService() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
  }
  idle_cv_.notify_all();
  idle_.join();
}

Status DashboardService::SyncLocked() {
  if (!nodes_) {
    nodes_ = std::make_unique<store::Informer>(store_, "nodes");
    pods_ = std::make_unique<store::Informer>(store_, "pods");
  }
  ARBITER_RETURN_IF_ERROR(nodes_->Sync());
  ARBITER_RETURN_IF_ERROR(pods_->Sync());
  // The decoded forms of objects that went.
  for (auto [informer, resource] : {std::pair{nodes_.get(), "nodes"}, std::pair{pods_.get(), "pods"}}) {
    for (const auto& key : informer->TakeChanged()) {
      if (informer->Find(key) == nullptr) decoded_.Forget(resource, key.first, key.second);
    }
  }
  return Status::Ok();
}

StatusOr<Json> DashboardService::Dashboard() {
  // Many pages open at once cost one document at a time: a read that comes within kReuse of the
  // last one, with the store unchanged, gets that document (built after it asked) again.
  constexpr auto kReuse = std::chrono::milliseconds(250);
  const auto asked = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto revision = store_.Revision();
    if (!revision.ok()) return revision.status();
    if (last_ && last_revision_ == *revision && asked - last_built_ < kReuse) return *last_;
  }
  // The scheduler's queue (it may wait for the next pass), outside the lock.
  controlplane::SchedulerActivity::View activity;
  if (activity_ != nullptr) activity = activity_->Read(std::chrono::seconds(1));
  std::lock_guard<std::mutex> lk(mu_);
  last_request_ = std::chrono::steady_clock::now();
  // Reads that waited together share one document: one built after this read asked will do.
  if (last_ && last_built_ > asked) return *last_;
  auto revision = store_.Revision();
  if (!revision.ok()) return revision.status();
  ARBITER_RETURN_IF_ERROR(SyncLocked());

  std::map<std::string, NodeUsage> usage;
  std::map<std::string, PodState> states;
  std::vector<std::pair<const model::Pod*, int32_t>> pending;  // with the priority as stored
  for (const auto& [key, object] : pods_->objects()) {
    // A pod that ended takes no room (the scheduler's cache drops it too).
    if (controlplane::Terminal(*object->body.tree())) continue;
    const manifest::LoadResult& d = decoded_.Get(*object);
    if (!d.ok() || d.objects.pods.empty()) continue;
    const model::Pod& pod = d.objects.pods.front().object;
    const int32_t priority = admission::StoredPriority(pod);
    AddUsage(usage, pod, priority);
    states[pod.Key()] = PodState{pod.uid, pod.node_name, pod.nominated_node_name, pod.deletion_timestamp,
                                 pod.node_name.empty() ? std::nullopt : BoundTime(*object->body.tree()),
                                 pod.pod_group_name.empty() ? "" : pod.ns + "/" + pod.pod_group_name};
    if (pod.node_name.empty() && !pod.deletion_timestamp) pending.emplace_back(&pod, priority);
  }
  Json nodes = Json::array();
  for (const auto& [key, object] : nodes_->objects()) {
    const manifest::LoadResult& d = decoded_.Get(*object);
    if (!d.ok() || d.objects.nodes.empty()) continue;
    const model::Node& node = d.objects.nodes.front().object;
    auto it = usage.find(node.name);
    nodes.push_back(NodeJson(node, NodeReady(*object->body.tree()), it != usage.end() ? &it->second : nullptr));
  }
  Json queue = Json::array();
  if (activity.running) {
    for (const auto& q : activity.queue) {
      Json j = QueueJson(q);
      // The nomination as the store has it (the queue's copy may predate the write).
      if (auto it = states.find(q.pod); it != states.end() && !it->second.nominated_node.empty()) {
        j["nominatedNode"] = it->second.nominated_node;
      }
      queue.push_back(std::move(j));
    }
  } else {
    // No scheduler here (another process schedules, or this replica does not lead): the pending
    // pods as the store has them, with the PodScheduled condition's message.
    for (const auto& [p, priority] : pending) {
      controlplane::QueuedPodView q;
      q.pod = p->Key();
      q.uid = p->uid;
      q.pool = "pending";
      q.priority = priority;
      q.nominated_node = p->nominated_node_name;
      if (const store::Object* o = pods_->Find({p->ns, p->name}); o != nullptr) {
        const store::Body::Tree o_pinned = o->body.tree();
        const nlohmann::json* c = controlplane::FindCondition(*o_pinned, "PodScheduled");
        if (c != nullptr && c->value("status", "") == "False") q.message = c->value("message", "");
      }
      queue.push_back(QueueJson(q));
    }
  }
  PodIndex index;
  for (auto& [key, st] : states) index.Add(key, std::move(st));  // the index holds them from here
  Json preemptions = Json::array();
  for (auto it = activity.preemptions.rbegin(); it != activity.preemptions.rend(); ++it) {
    preemptions.push_back(PreemptionJson(*it, index));
  }
  Json doc{{"kind", "Dashboard"},
           {"apiVersion", kApiVersion},
           {"mode", "live"},
           {"resourceVersion", std::to_string(*revision)},
           {"time", FormatRfc3339(clock_.Now())},
           {"scheduler", {{"running", activity.running}, {"name", scheduler_name_}, {"queueFresh", activity.queue_fresh}}},
           {"nodes", std::move(nodes)},
           {"queue", std::move(queue)},
           {"preemptions", std::move(preemptions)}};
  last_ = std::make_shared<const Json>(doc);
  last_revision_ = *revision;
  last_built_ = std::chrono::steady_clock::now();
  return doc;
}

namespace {

// What the explanation plans over, as `arbiter plan --server` reads a live cluster: each
// resource as a List, its items typed.
struct Collection {
  const char* resource;
  const char* api_version;
  const char* kind;
};
constexpr Collection kCollections[] = {
    {"namespaces", "v1", "Namespace"},
    {"priorityclasses", "scheduling.k8s.io/v1", "PriorityClass"},
    {"nodes", "v1", "Node"},
    {"poddisruptionbudgets", "policy/v1", "PodDisruptionBudget"},
    {"workloads", "scheduling.k8s.io/v1beta1", "Workload"},
    {"compositepodgroups", "scheduling.k8s.io/v1alpha3", "CompositePodGroup"},
    {"podgroups", "scheduling.k8s.io/v1beta1", "PodGroup"},
    {"pods", "v1", "Pod"},
};

}  // namespace

StatusOr<Json> DashboardService::History(const std::string& ns, const std::string& name, const std::string& uid,
                                          const std::string& group, const std::string& node) {
  // The events about the pod (this uid: not an earlier pod of the name), oldest first.
  std::vector<std::pair<std::string, Json>> events;
  auto list = store_.List("events", ns);
  if (!list.ok()) return list.status();
  for (const store::Object& e : list->items) {
    const nlohmann::json& about = e.body->value("involvedObject", nlohmann::json::object());
    if (about.value("kind", "") != "Pod" || about.value("name", "") != name) continue;
    if (!uid.empty() && about.value("uid", uid) != uid) continue;
    std::string last = e.body->value("lastTimestamp", nlohmann::json()).is_string() ? (*e.body.tree())["lastTimestamp"].get<std::string>() : "";
    if (last.empty()) last = e.body->value("eventTime", nlohmann::json()).is_string() ? (*e.body.tree())["eventTime"].get<std::string>() : "";
    if (last.empty()) last = e.body->value("/metadata/creationTimestamp"_json_pointer, std::string());
    const nlohmann::json& source = e.body->value("source", nlohmann::json::object());
    events.emplace_back(last + "\n" + e.name,  // by time, then name: a total order
                        Json{{"time", last},
                             {"type", e.body->value("type", "")},
                             {"reason", e.body->value("reason", "")},
                             {"message", e.body->value("message", "")},
                             {"source", source.value("component", e.body->value("reportingComponent", ""))},
                             {"count", e.body->value("count", int64_t{1})}});
  }
  std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Json out = {{"events", Json::array()}, {"preemptions", Json::array()}};
  for (auto& [order, e] : events) out["events"].push_back(std::move(e));
  // The preemptions it (or its PodGroup) made, as this scheduler recorded them.
  if (activity_ != nullptr) {
    const controlplane::SchedulerActivity::View view = activity_->Read(std::chrono::seconds(0));
    const std::string key = ns + "/" + name;
    const std::string group_key = group.empty() ? "" : ns + "/" + group;
    for (auto it = view.preemptions.rbegin(); it != view.preemptions.rend(); ++it) {
      if (it->preemptor != key && (group_key.empty() || it->preemptor != group_key)) continue;
      // The pod itself, bound, and its victims as the store has them now.
      PodIndex now;
      now.Add(key, PodState{uid, node, "", std::nullopt, std::nullopt, group_key});
      for (const auto& v : it->victims) {
        const size_t slash = v.pod.find('/');
        auto victim = store_.Get("pods", v.pod.substr(0, slash), v.pod.substr(slash + 1));
        if (!victim.ok()) continue;  // gone
        std::optional<Timestamp> deletion;
        if (auto t = ParseRfc3339(victim->body->value("/metadata/deletionTimestamp"_json_pointer, std::string())); t.ok()) deletion = *t;
        now.Add(v.pod, PodState{victim->body->value("/metadata/uid"_json_pointer, std::string()), controlplane::NodeOf(*victim->body.tree()),
                                "", deletion, std::nullopt, ""});
      }
      out["preemptions"].push_back(PreemptionJson(*it, now));
    }
  }
  return out;
}

StatusOr<Json> DashboardService::Explain(const std::string& ns, const std::string& name) {
  // One at a time: a request that finds one running is told to come back (503) rather than hold
  // an API worker while it waits, so that explanations cannot crowd out other clients.
  std::unique_lock<std::mutex> one_at_a_time(explain_mu_, std::try_to_lock);
  if (!one_at_a_time.owns_lock()) {
    return Unavailable("another explanation is being computed; try again in a second");
  }
  const std::string key = ns + "/" + name;
  // The same pod at the same store revision is explained as before.
  const auto revision = store_.Revision();
  if (!revision.ok()) return revision.status();
  if (explained_ && explained_pod_ == key && explained_revision_ == *revision) return *explained_;
  // Every stored object the plan weighs, each decoded on its own: a problem in one (an object
  // stored before a rule existed) names it, and it is left out rather than failing every
  // explanation. Pods and nodes come decoded from the dashboard's cache (each version decoded
  // once, whatever the number of explanations); the other kinds are few and decoded here.
  struct Part {
    std::string name;                         // "store:RESOURCE/NAMESPACE/NAME", as its problems name it
    const manifest::LoadResult* decoded;      // in decoded_ or in `own`
  };
  std::vector<Part> parts;
  std::deque<manifest::LoadResult> own;  // stable addresses as it grows
  const std::string asked_input = "store:pods/" + ns + "/" + name;
  std::unique_lock<std::mutex> lk(mu_);
  last_request_ = std::chrono::steady_clock::now();
  ARBITER_RETURN_IF_ERROR(SyncLocked());
  const store::Object* asked = pods_->Find({ns, name});
  if (asked == nullptr) return NotFound("pods \"" + name + "\" not found in namespace \"" + ns + "\"");
  const std::string group = asked->body->value("/spec/schedulingGroup/podGroupName"_json_pointer, std::string());
  const std::string asked_uid = asked->body->value("/metadata/uid"_json_pointer, std::string());
  std::optional<std::string> bound_node;
  if (std::string node = controlplane::NodeOf(*asked->body.tree()); !node.empty()) bound_node = std::move(node);
  for (const Collection& c : kCollections) {
    const std::string resource = c.resource;
    if (resource == "nodes") {
      for (const auto& [k, object] : nodes_->objects()) {
        parts.push_back({"store:nodes/" + object->ns + "/" + object->name, &decoded_.Get(*object)});
      }
      continue;
    }
    if (resource == "pods") {
      for (const auto& [k, object] : pods_->objects()) {
        const bool is_asked = object->ns == ns && object->name == name;
        if (!is_asked) {
          const std::string node = controlplane::NodeOf(*object->body.tree());
          const std::string its_group =
              object->body->value("/spec/schedulingGroup/podGroupName"_json_pointer, std::string());
          // Of the other pending pods only the asked pod's group's members are planned with it.
          if (node.empty() && (group.empty() || object->ns != ns || its_group != group)) continue;
          if (controlplane::Terminal(*object->body.tree())) continue;  // an ended pod takes no room
        }
        parts.push_back({"store:pods/" + object->ns + "/" + object->name, &decoded_.Get(*object)});
      }
      continue;
    }
    auto list = store_.List(c.resource, "");
    if (!list.ok()) return list.status();
    for (auto& o : list->items) {
      Json body = std::move(*o.body.tree());
      body["apiVersion"] = c.api_version;
      body["kind"] = c.kind;
      std::string input = "store:" + resource + "/" + o.ns + "/" + o.name;
      own.push_back(manifest::DecodeJson(input, body));
      parts.push_back({std::move(input), &own.back()});
    }
  }
  // The objects the parts hold, but for those left out; the asked pod planned as pending (taken
  // off its node and its nomination for the what-if).
  std::set<std::string> left_out;
  std::vector<std::string> ignored;
  auto gather = [&] {
    manifest::LoadResult loaded;
    for (const Part& p : parts) {
      if (!left_out.contains(p.name)) manifest::Append(loaded.objects, p.decoded->objects);
    }
    for (auto& pod : loaded.objects.pods) {
      if (pod.object.ns == ns && pod.object.name == name) {
        pod.object.node_name.clear();
        pod.object.nominated_node_name.clear();
      }
    }
    manifest::CheckDecoded(loaded);
    return loaded;
  };
  // Leaves out each object a problem names (the asked pod's own problem is the answer). A
  // problem starts with its object's name and a colon; the name has a colon of its own.
  std::set<std::string_view> part_names;
  for (const Part& p : parts) part_names.insert(p.name);
  auto leave_out = [&](const std::vector<std::string>& errors) -> Status {
    std::set<std::string> named;
    for (const std::string& e : errors) {
      for (size_t colon = e.find(':'); colon != std::string::npos; colon = e.find(':', colon + 1)) {
        if (part_names.contains(std::string_view(e).substr(0, colon))) named.emplace(e, 0, colon);
      }
    }
    if (named.empty() || named.contains(asked_input)) {
      std::string message = "the cluster cannot be planned: " + errors.front();
      if (errors.size() > 1) message += " (and " + std::to_string(errors.size() - 1) + " more problems)";
      return FailedPrecondition(message);
    }
    for (const std::string& e : errors) {
      if (ignored.size() < 20) ignored.push_back(e);
    }
    left_out.insert(named.begin(), named.end());
    return Status::Ok();
  };
  std::vector<std::string> decode_errors;
  for (const Part& p : parts) {
    decode_errors.insert(decode_errors.end(), p.decoded->errors.begin(), p.decoded->errors.end());
  }
  if (!decode_errors.empty()) ARBITER_RETURN_IF_ERROR(leave_out(decode_errors));
  manifest::LoadResult loaded;
  for (;;) {
    loaded = gather();
    std::vector<std::string> errors = loaded.errors;
    if (errors.empty()) errors = admission::AdmitPriorities(loaded.objects);
    if (errors.empty()) break;
    ARBITER_RETURN_IF_ERROR(leave_out(errors));
  }
  lk.unlock();  // the plan reads only its own copy
  sim::PlanOptions options;
  options.explain = true;
  options.start = clock_.Now();
  auto plan = sim::RunPlan(loaded.objects, options);
  if (!plan.ok()) return plan.status();
  Json doc = ExplanationJson(key, *plan, bound_node, bound_node.has_value(), clock_.Now());
  if (!ignored.empty()) doc["ignoredObjects"] = ignored;  // what was left out, and why
  if (bound_node) {
    auto history = History(ns, name, asked_uid, group, *bound_node);
    if (!history.ok()) return history.status();
    doc["history"] = std::move(*history);
  }
  explained_ = std::make_shared<const Json>(doc);
  explained_pod_ = key;
  explained_revision_ = *revision;
  return doc;
}

DashboardService::Answer DashboardService::Get(const std::string& path) {
  auto status_answer = [](const Status& st) {
    const int code = st.code() == StatusCode::kNotFound             ? 404
                     : st.code() == StatusCode::kFailedPrecondition ? 409
                     : st.code() == StatusCode::kUnavailable        ? 503
                                                                    : 500;
    const char* reason = code == 404   ? "NotFound"
                         : code == 409 ? "Conflict"
                         : code == 503 ? "ServiceUnavailable"
                                       : "InternalError";
    return Answer{code, "application/json",
                  Json{{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", Json::object()}, {"status", "Failure"},
                       {"message", st.message()}, {"reason", reason}, {"code", code}}
                      .dump()};
  };
  if (path == "/ui" || path == "/ui/" || path == "/ui/index.html") {
    return Answer{200, "text/html; charset=utf-8", Page(nullptr)};
  }
  static constexpr std::string_view kRoot = "/apis/arbiter.dev/v1alpha1/";
  if (path.starts_with(kRoot)) {
    const std::string_view rest = std::string_view(path).substr(kRoot.size());
    if (rest == "dashboard") {
      auto doc = Dashboard();
      if (!doc.ok()) return status_answer(doc.status());
      return Answer{200, "application/json", doc->dump(-1, ' ', false, Json::error_handler_t::replace)};
    }
    // namespaces/NS/explanations/NAME
    std::vector<std::string> parts;
    for (size_t at = 0; at <= rest.size();) {
      const size_t slash = rest.find('/', at);
      parts.emplace_back(rest.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at));
      if (slash == std::string_view::npos) break;
      at = slash + 1;
    }
    if (parts.size() == 4 && parts[0] == "namespaces" && parts[2] == "explanations" && !parts[1].empty() && !parts[3].empty()) {
      auto doc = Explain(parts[1], parts[3]);
      if (!doc.ok()) {
        if (doc.status().code() == StatusCode::kNotFound) {
          return status_answer(NotFound("pods \"" + parts[3] + "\" not found in namespace \"" + parts[1] + "\""));
        }
        return status_answer(doc.status());
      }
      return Answer{200, "application/json", doc->dump(-1, ' ', false, Json::error_handler_t::replace)};
    }
  }
  return status_answer(NotFound("the page \"" + path + "\" is not served here"));
}

}  // namespace arbiter::ui
