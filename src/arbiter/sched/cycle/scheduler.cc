// The scheduling cycle.
#include "arbiter/sched/cycle/scheduler.h"

#include <algorithm>

#include "arbiter/sched/plugins/in_tree_registry.h"

namespace arbiter::sched {

namespace {
constexpr size_t kMinFeasibleNodesToFind = 100;
constexpr int64_t kMinFeasibleNodesPercentageToFind = 5;
}  // namespace

Scheduler::Scheduler(model::SchedulerConfig config, const Clock* clock, SchedulerOptions options)
    : config_(std::move(config)),
      clock_(clock),
      options_(options),
      rng_(options.seed),
      workload_enabled_(model::FeatureEnabled(config_, model::kGateGenericWorkload)) {
  // Nodes mirror their nominated pods, so that filtering needs no lookup.
  nominator_.set_on_change([this](const std::string& node) {
    (void)cache_.SetNominatedPods(node, nominator_.NominatedPodsForNode(node));
  });
}

arbiter::Status Scheduler::Init(preemption::PreemptionActuator* actuator) {
  std::vector<std::shared_ptr<Plugin>> post_filter;
  if (actuator != nullptr) {
    preemption_ = std::make_shared<preemption::DefaultPreemption>(this, actuator, options_.preemption);
    post_filter.push_back(preemption_);
  }
  plugins::ProfileDeps deps;
  deps.handle = this;
  deps.config = &config_;
  deps.bind = [this](const PodInfo& pod, const std::string& node) -> Status {
    arbiter::Status s = Bind(pod, node);
    return s.ok() ? Status() : Status(Code::kError, s.message());
  };
  deps.post_filter = std::move(post_filter);
  deps.storage = &storage_;
  auto profile = plugins::BuildDefaultProfile(deps);
  if (!profile.ok()) return profile.status();
  framework_ = std::make_unique<Framework>(std::move(*profile));
  QueueOptions q;
  q.initial_backoff = config_.pod_initial_backoff_seconds * kSecond;
  q.max_backoff = config_.pod_max_backoff_seconds * kSecond;
  queue_ = std::make_unique<SchedulingQueue>(framework_.get(), clock_, q);
  queue_->set_group_gate([this](const QueuedPodInfo& info) { return GroupReady(info); });
  if (actuator != nullptr) workload_preemption_ = std::make_unique<preemption::WorkloadPreemption>(this, actuator);
  return arbiter::Status::Ok();
}

const preemption::PreemptionMetrics* Scheduler::preemption_metrics() const {
  return preemption_ ? &preemption_->metrics() : nullptr;
}

void Scheduler::AddPendingPod(PodInfoPtr pod, std::optional<Timestamp> enqueue_time) {
  if (!pod->pod.nominated_node_name.empty()) nominator_.AddNominatedPod(pod, pod->pod.nominated_node_name);
  if (!pod->pod.pod_group_name.empty() && workload_enabled_) {
    // A member joins its root group's queue entry; a pod whose PodGroup does not exist waits
    // under that name until it does (GangScheduling's PreEnqueue).
    auto [key, priority] = QueueUnitOf(pod->pod);
    queue_->AddGroupMember(std::move(pod), key, priority, enqueue_time);
    return;
  }
  queue_->Add(std::move(pod), enqueue_time);
}

void Scheduler::StorageChanged() { queue_->MoveOnEvent(ClusterEvent::kStorageChange); }

void Scheduler::NominationLeft(const model::Pod& pod) {
  queue_->MoveOnEvent(ClusterEvent::kAssignedPodDelete, pod.priority);
}

arbiter::Status Scheduler::AddBoundPod(PodInfoPtr pod) {
  ARBITER_RETURN_IF_ERROR(cache_.AddPod(pod));
  if (!pod->pod.pod_group_name.empty()) bound_members_[pod->pod.ns + "/" + pod->pod.pod_group_name][pod->uid()] = pod;
  queue_->MoveOnEvent(ClusterEvent::kAssignedPodAdd);
  return arbiter::Status::Ok();
}

arbiter::Status Scheduler::UpdateBoundPod(PodInfoPtr pod) {
  ARBITER_RETURN_IF_ERROR(cache_.UpdatePod(pod));
  if (!pod->pod.pod_group_name.empty()) {
    auto& members = bound_members_[pod->pod.ns + "/" + pod->pod.pod_group_name];
    if (auto it = members.find(pod->uid()); it != members.end()) it->second = pod;
  }
  return arbiter::Status::Ok();
}

arbiter::Status Scheduler::DeleteBoundPod(const std::string& uid) {
  if (PodInfoPtr p = cache_.FindPod(uid); p && !p->pod.pod_group_name.empty()) {
    bound_members_[p->pod.ns + "/" + p->pod.pod_group_name].erase(uid);
  }
  ARBITER_RETURN_IF_ERROR(cache_.RemovePod(uid));
  queue_->MoveOnEvent(ClusterEvent::kAssignedPodDelete);
  return arbiter::Status::Ok();
}

arbiter::Status Scheduler::Bind(const PodInfo& pod, const std::string& node) {
  if (binding_ != nullptr && binding_->pod.get() == &pod && binding_->node == node && binding_->assumed) {
    // A group member: the pod as assumed in its cycle is the bound pod.
    nominator_.DeleteNominatedPod(pod.uid());
    queue_->Delete(pod.uid());
    return AddBoundPod(binding_->assumed);
  }
  model::Pod bound = pod.pod;
  bound.node_name = node;
  bound.nominated_node_name.clear();
  if (!bound.start_time) bound.start_time = clock_->Now();
  nominator_.DeleteNominatedPod(pod.uid());
  queue_->Delete(pod.uid());
  return AddBoundPod(state::MakePodInfo(std::move(bound)));
}

size_t Scheduler::NumFeasibleNodesToFind(size_t n) const {
  if (n < kMinFeasibleNodesToFind) return n;
  int64_t pct = config_.percentage_of_nodes_to_score;
  if (pct <= 0) {
    pct = 50 - static_cast<int64_t>(n) / 125;
    if (pct < kMinFeasibleNodesPercentageToFind) pct = kMinFeasibleNodesPercentageToFind;
  }
  size_t num = n * static_cast<size_t>(pct) / 100;
  return num < kMinFeasibleNodesToFind ? kMinFeasibleNodesToFind : num;
}

Scheduler::FindResult Scheduler::FindNodesThatFit(CycleState& state, const PodInfo& pod,
                                                  Explanation* explain, bool summarize) {
  FindResult r;
  const auto& all = snapshot_.nodes();
  PreFilterResult pre = framework_->RunPreFilterPlugins(state, pod, all);
  pod_class_ = 0;
  verdicts_ = nullptr;
  if (options_.reuse_verdicts && framework_->VerdictsDependOnlyOnNode(state)) {
    pod_class_ = PodClassOf(pod);
    if (verdicts_structure_ != snapshot_.structure_version()) {
      verdict_classes_.clear();  // node positions may have changed
      verdict_slot_.clear();
      verdicts_structure_ = snapshot_.structure_version();
    }
    verdicts_ = &VerdictsOf(pod_class_);
  }
  if (!pre.status.IsSuccess()) {
    // PreFilter rejected the pod everywhere: every node takes its status.
    r.diagnosis.node_to_status.absent = pre.status;
    r.diagnosis.pre_filter_message = pre.status.Message();
    if (!pre.status.plugin().empty()) r.diagnosis.unschedulable_plugins.emplace(pre.status.plugin());
    return r;
  }
  auto record = [&](const NodeInfo& n, const Status& s) {
    if (explain == nullptr) return;
    Explanation::NodeVerdict v;
    v.node = n.name();
    v.filters = framework_->RunAllFilterPlugins(state, pod, n);
    v.feasible = s.IsSuccess();
    explain->nodes.push_back(std::move(v));
  };
  // 1) The nominated node alone, first: if it passes, no other node is looked at.
  const std::string nominated = nominator_.NominatedNode(pod.uid());
  const NodeInfo* own_nomination = nominated.empty() ? nullptr : snapshot_.Get(nominated);
  if (!nominated.empty()) {
    if (const NodeInfo* n = own_nomination) {
      Status s = framework_->RunFilterPluginsWithNominatedPods(state, pod, *n);
      if (explain != nullptr) explain->nominated_node_first = true;
      record(*n, s);
      if (s.IsSuccess()) {
        r.feasible.push_back(n);
        return r;
      }
    }
  }
  // A summary stands for the scan only where the scan would visit every node in the snapshot's
  // order with the class's cached verdicts: no nominated node first, no PreFilter subset.
  summarize = summarize && explain == nullptr && verdicts_ != nullptr && !pre.node_names && nominated.empty() &&
              !all.empty();
  // 1b) Every node rejected the pod as its class's complete verdicts say (brought up to date with
  // the nodes changed since): the result is the scan's, without a status per node. The scan
  // would have visited every node, so the start index goes round once.
  if (summarize && verdicts_->complete && Sync(*verdicts_, state, pod) && verdicts_->feasible == 0) {
    rejections_.emplace(*verdicts_, snapshot_, pod.pod, next_start_node_index_ % all.size());
    r.diagnosis.node_to_status.everywhere = &*rejections_;
    for (const auto& [plugin, count] : verdicts_->rejecting) r.diagnosis.unschedulable_plugins.emplace(plugin);
    next_start_node_index_ = (next_start_node_index_ + all.size()) % all.size();
    return r;
  }
  // 2) All nodes (or PreFilter's subset), from the rotating start index.
  std::vector<const NodeInfo*> subset;
  std::span<const NodeInfo* const> nodes = all;
  if (pre.node_names) {
    for (const auto& name : *pre.node_names) {
      if (const NodeInfo* n = snapshot_.Get(name)) subset.push_back(n);
    }
    nodes = subset;
    r.diagnosis.node_to_status.absent =
        Status(Code::kUnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) [NodeAffinity]");
  }
  const size_t want = NumFeasibleNodesToFind(nodes.size());
  // The statuses vector is recycled across cycles (see Recycle), so its capacity is reused.
  r.diagnosis.node_to_status.statuses = std::move(status_scratch_);
  r.diagnosis.node_to_status.statuses.clear();
  size_t processed = 0;
  std::string_view last_rejecting_plugin;  // most rejections in a row come from one plugin
  size_t at = nodes.empty() ? 0 : next_start_node_index_ % nodes.size();
  for (size_t i = 0; i < nodes.size() && r.feasible.size() < want; ++i, at = at + 1 == nodes.size() ? 0 : at + 1) {
    const NodeInfo* n = nodes[at];
    ++processed;
    const Status& s = FilterNode(state, pod, *n, own_nomination);
    record(*n, s);
    if (s.IsSuccess()) {
      r.feasible.push_back(n);
    } else {
      // Plugin names are static strings: the same plugin is the same pointer, so the common
      // case (the same plugin as the node before) costs no string comparison.
      const std::string_view plugin = s.plugin();
      if (s.IsRejected() && !plugin.empty() && plugin.data() != last_rejecting_plugin.data() &&
          plugin != last_rejecting_plugin) {
        last_rejecting_plugin = s.plugin();
        r.diagnosis.unschedulable_plugins.emplace(s.plugin());
      }
      r.diagnosis.node_to_status.statuses.push_back({n, s});
    }
  }
  if (!all.empty()) next_start_node_index_ = (next_start_node_index_ + processed) % all.size();
  // Every node filtered with the class's verdicts: they can answer the class's next failure.
  if (summarize && !verdicts_->complete && processed == all.size()) Complete(*verdicts_, pod);
  return r;
}

uint64_t Scheduler::PodClassOf(const PodInfo& info) {
  // Everything NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts and
  // NodeResourcesFit read of the pod, plus its priority (which nominated pods count against it),
  // and what the scores of NodeResourcesFit, NodeResourcesBalancedAllocation and TaintToleration
  // read of it.
  const model::Pod& p = info.pod;
  std::string key;
  key.reserve(128);
  auto add = [&](std::string_view s) {
    key += std::to_string(s.size());
    key += ':';
    key += s;
  };
  auto add_int = [&](int64_t v) { add(std::to_string(v)); };
  add(p.node_name);
  add_int(p.priority);
  const model::Resources& r = p.requests;
  for (int64_t v : {r.milli_cpu, r.memory, r.ephemeral_storage, r.pods}) add_int(v);
  // What the resource scores read (ScoreMemo): requests with the per-container defaults.
  add_int(p.non_zero_milli_cpu);
  add_int(p.non_zero_memory);
  for (const auto& [n, v] : r.scalars) {
    add(n);
    add_int(v);
  }
  add("|tol");
  for (const auto& t : p.tolerations) {
    add(t.key);
    add_int(static_cast<int64_t>(t.op));
    add(t.value);
    add_int(t.effect ? static_cast<int64_t>(*t.effect) : -1);
  }
  add("|sel");
  for (const auto& [k, v] : p.node_selector) {
    add(k);
    add(v);
  }
  add("|aff");
  if (p.affinity.node_affinity.required) {
    for (const auto& term : p.affinity.node_affinity.required->terms) {
      add("|term");
      for (const auto* list : {&term.match_expressions, &term.match_fields}) {
        add("|list");
        for (const auto& req : *list) {
          add(req.key);
          add_int(static_cast<int64_t>(req.op));
          for (const auto& v : req.values) add(v);
        }
      }
    }
  }
  add("|ports");
  for (const auto& hp : p.host_ports) {
    add_int(hp.port);
    add(hp.protocol);
    add(hp.host_ip);
  }
  auto [it, inserted] = pod_classes_.emplace(std::move(key), pod_classes_.size() + 1);
  return it->second;
}

const Status& Scheduler::FilterNode(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                                    const NodeInfo* own_nomination) {
  // The pod's own nominated node is excluded: there its nomination does not count against it.
  if (pod_class_ == 0 || &node == own_nomination) {
    uncached_verdict_ = framework_->RunFilterPluginsWithNominatedPods(state, pod, node);
    return uncached_verdict_;
  }
  const size_t at = snapshot_.IndexOf(&node);
  Refresh(*verdicts_, at, node, state, pod);
  return verdicts_->by_node[at].status;
}

void Scheduler::Refresh(ClassVerdicts& c, size_t position, const NodeInfo& node, const CycleState& state,
                        const PodInfo& pod) {
  CachedVerdict& entry = c.by_node[position];
  if (entry.generation == node.generation() && entry.epoch == c.epoch) return;
  if (c.complete) Count(c, position, node, pod, -1);
  entry = {node.generation(), c.epoch, framework_->RunFilterPluginsWithNominatedPods(state, pod, node)};
  if (c.complete) Count(c, position, node, pod, +1);
}

void Scheduler::Count(ClassVerdicts& c, size_t position, const NodeInfo& node, const PodInfo& pod, int sign) {
  const Status& s = c.by_node[position].status;
  auto step = [sign](size_t& n) { n = sign > 0 ? n + 1 : n - 1; };
  if (s.IsSuccess()) step(c.feasible);
  // As the scan collects unschedulable plugins: rejections that name their plugin.
  if (s.IsRejected() && !s.plugin().empty()) {
    auto it = c.rejecting.emplace(s.plugin(), 0).first;
    step(it->second);
    if (it->second == 0) c.rejecting.erase(it);
  }
  if (s.code() == Code::kUnschedulable) {
    c.unschedulable.Add(position, sign);
    if (!c.roomy_known) return;
    if (sign < 0) {
      c.roomy.erase(static_cast<uint32_t>(position));
    } else if (node.CouldMakeRoomFor(pod.pod)) {
      c.roomy.insert(static_cast<uint32_t>(position));
    }
  }
}

void Scheduler::Complete(ClassVerdicts& c, const PodInfo& pod) {
  c.feasible = 0;
  c.rejecting.clear();
  c.roomy.clear();
  c.roomy_known = false;
  c.unschedulable.Reset(c.by_node.size());
  const auto& nodes = snapshot_.nodes();
  for (size_t at = 0; at < nodes.size(); ++at) Count(c, at, *nodes[at], pod, +1);
  c.complete = true;
  c.synced = snapshot_.changes_end();
}

bool Scheduler::Sync(ClassVerdicts& c, const CycleState& state, const PodInfo& pod) {
  const auto changes = snapshot_.ChangesSince(c.synced);
  if (!changes) {
    c.complete = false;
    return false;
  }
  const auto& nodes = snapshot_.nodes();
  for (uint32_t at : *changes) Refresh(c, at, *nodes[at], state, pod);
  c.synced = snapshot_.changes_end();
  return true;
}

const Status* Scheduler::ClassRejections::StatusOf(std::string_view node) const {
  const NodeInfo* n = snap_.Get(node);
  return n != nullptr ? &c_.by_node[snap_.IndexOf(n)].status : nullptr;
}

void Scheduler::ClassRejections::ForEachUnschedulable(size_t k, bool roomy_only,
                                                      const std::function<bool(size_t)>& visit) const {
  const auto total = static_cast<size_t>(c_.unschedulable.total());
  if (k >= total) return;
  // The k-th in scan order: counted from the start position, wrapping.
  const auto before = static_cast<size_t>(c_.unschedulable.Prefix(start_));
  const size_t first = c_.unschedulable.Select(static_cast<int64_t>(k < total - before ? before + k : k - (total - before)));
  if (roomy_only) {
    if (!c_.roomy_known) {
      const auto& nodes = snap_.nodes();
      for (size_t at = 0; at < c_.by_node.size(); ++at) {
        if (c_.by_node[at].status.code() == Code::kUnschedulable && nodes[at]->CouldMakeRoomFor(pod_)) {
          c_.roomy.insert(c_.roomy.end(), static_cast<uint32_t>(at));
        }
      }
      c_.roomy_known = true;
    }
    const auto from = c_.roomy.lower_bound(static_cast<uint32_t>(first));
    for (auto it = from; it != c_.roomy.end(); ++it) {
      if (!visit(*it)) return;
    }
    for (auto it = c_.roomy.begin(); it != from; ++it) {
      if (!visit(*it)) return;
    }
    return;
  }
  const size_t n = c_.by_node.size();
  for (size_t i = 0, at = first; i < n; ++i, at = at + 1 == n ? 0 : at + 1) {
    if (c_.by_node[at].status.code() == Code::kUnschedulable && !visit(at)) return;
  }
}

Scheduler::ClassVerdicts& Scheduler::VerdictsOf(uint64_t pod_class) {
  ClassVerdicts* slot = nullptr;
  if (auto it = verdict_slot_.find(pod_class); it != verdict_slot_.end()) slot = &verdict_classes_[it->second];
  if (slot == nullptr) {
    if (verdict_classes_.size() < VerdictClassLimit()) {
      verdict_classes_.reserve(kMaxVerdictClasses);  // never moved: a cycle's Rejections refer to one
      slot = &verdict_classes_.emplace_back();
    } else {
      // The least recently used of those that cover only some nodes, if any, else of all: a
      // complete class answers failures at the cost of the changes, and making one again costs a
      // scan of every node. (Uses are distinct: a total order.)
      slot = &*std::min_element(verdict_classes_.begin(), verdict_classes_.end(), [](const ClassVerdicts& a, const ClassVerdicts& b) {
        return std::pair(a.complete, a.last_used) < std::pair(b.complete, b.last_used);
      });
      verdict_slot_.erase(slot->pod_class);
    }
    verdict_slot_[pod_class] = static_cast<size_t>(slot - verdict_classes_.data());
  }
  if (slot->pod_class != pod_class || slot->by_node.size() != snapshot_.size()) {  // made afresh
    // The entries' storage is kept: the new epoch leaves every entry out of date.
    std::vector<CachedVerdict> entries = std::move(slot->by_node);
    if (entries.size() != snapshot_.size()) entries.assign(snapshot_.size(), CachedVerdict{});
    *slot = ClassVerdicts{};
    slot->pod_class = pod_class;
    slot->epoch = ++verdict_epochs_;
    slot->by_node = std::move(entries);
  }
  slot->last_used = ++verdict_uses_;
  return *slot;
}

const NodeInfo* Scheduler::SelectHost(const ScoreTable& t) {
  // The highest total wins; ties are broken uniformly at random with the seeded generator (one
  // draw per cycle, the same distribution as upstream's reservoir sampling), so a run is
  // reproducible.
  int64_t best = t.totals[0];
  size_t ties = 0;
  for (int64_t total : t.totals) {
    if (total > best) {
      best = total;
      ties = 1;
    } else if (total == best) {
      ++ties;
    }
  }
  size_t pick = ties > 1 ? rng_.Uniform(ties) : 0;
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    if (t.totals[i] == best && pick-- == 0) return t.nodes[i];
  }
  return t.nodes[0];
}

void Scheduler::RecycleStatuses(std::vector<NodeStatus>& statuses) {
  // A cycle that stopped at its nominated node never took the scratch: keep the larger buffer.
  if (statuses.capacity() > status_scratch_.capacity()) status_scratch_ = std::move(statuses);
}

const NodeInfo* Scheduler::ChooseNode(CycleState& state, const PodInfo& pod, const std::vector<const NodeInfo*>& feasible,
                                      Explanation* explain, Status* error) {
  if (feasible.size() == 1) {
    if (explain) explain->why = "the only feasible node";
    return feasible[0];
  }
  Status ps = framework_->RunPreScorePlugins(state, pod, feasible);
  if (!ps.IsSuccess()) {
    *error = ps;
    return nullptr;
  }
  ScoreTable* table = &score_table_;
  // The pod class is set when FindNodesThatFit found verdicts reusable: the same holds for
  // the scores of plugins that depend on the node alone.
  score_memo_.pod_class = pod_class_;
  score_memo_.snapshot = &snapshot_;
  if (arbiter::Status s = framework_->RunScorePlugins(state, pod, feasible, *table, &score_memo_); !s.ok()) {
    *error = Status(Code::kError, s.message());
    return nullptr;
  }
  const NodeInfo* chosen = SelectHost(*table);
  if (explain) {
    size_t ties = 0;
    int64_t best = 0;
    for (size_t i = 0; i < table->nodes.size(); ++i) {
      if (table->nodes[i] == chosen) best = table->totals[i];
    }
    for (int64_t t : table->totals) ties += t == best ? 1 : 0;
    explain->why = "highest total score " + std::to_string(best) +
                   (ties > 1 ? " (tied with " + std::to_string(ties - 1) +
                                   " other node(s); tie broken by the seeded random source)"
                             : "");
    for (const NodeInfo* n : table->nodes) explain->score_nodes.push_back(n->name());
    explain->scores = *table;
    explain->scores->nodes.clear();
    explain->scores->column.clear();
  }
  return chosen;
}

std::optional<CycleOutcome> Scheduler::ScheduleOne() {
  queue_->Flush();
  std::optional<QueuedPodInfo> qpi = queue_->Pop();
  if (!qpi) return std::nullopt;
  if (!qpi->group.empty()) return ScheduleGroup(std::move(*qpi));
  const PodInfoPtr pod = qpi->pod;
  CycleOutcome out;
  out.pod = pod;
  out.attempt = qpi->attempts;
  out.time = clock_->Now();
  Explanation* explain = nullptr;
  if (options_.explain) explain = &out.explain.emplace();

  cache_.UpdateSnapshot(snapshot_);
  // A failed cycle: PostFilter (preemption) if asked, the FailedScheduling message, and the pod
  // back to the queue.
  bool left_node = false;
  auto fail = [&](Diagnosis& d, CycleState& state, bool run_post_filter) {
    if (run_post_filter && framework_->HasPostFilterPlugins()) {
      PostFilterResult pf = framework_->RunPostFilterPlugins(state, *pod, d.node_to_status);
      if (!pf.status.IsSuccess()) d.post_filter_message = pf.status.Message();
      if (explain) out.post_filter_explanation = std::move(pf.explanation);
      if (pf.nominated_node_name) {
        out.nominated_node = pf.nominated_node_name;
        const std::string before = nominator_.NominatedNode(pod->uid());
        nominator_.AddNominatedPod(pod, *pf.nominated_node_name);
        left_node = !before.empty() && before != *pf.nominated_node_name;
      }
    }
    if (options_.messages) out.message = FitErrorMessage(snapshot_.size(), d);
    qpi->unschedulable_plugins = d.unschedulable_plugins;
    if (qpi->unschedulable_plugins.empty() && snapshot_.size() > 0) {
      // Rejected, but by no plugin in particular: wait for any event.
      qpi->unschedulable_plugins.insert("");
    }
    queue_->AddUnschedulable(std::move(*qpi));
    // The pod is back in the queue before its nomination's change is seen, as upstream requeues
    // it before the status update arrives.
    if (left_node) NominationLeft(pod->pod);
  };

  CycleState state;
  if (snapshot_.size() == 0) {
    out.message = "no nodes available to schedule pods";
    qpi->unschedulable_plugins.insert("");
    queue_->AddUnschedulable(std::move(*qpi));
    return out;
  }
  FindResult found = FindNodesThatFit(state, *pod, explain, /*summarize=*/!options_.messages);
  if (found.feasible.empty()) {
    fail(found.diagnosis, state, true);
    RecycleStatuses(found.diagnosis.node_to_status.statuses);
    return out;
  }
  RecycleStatuses(found.diagnosis.node_to_status.statuses);

  Status score_error;
  const NodeInfo* chosen = ChooseNode(state, *pod, found.feasible, explain, &score_error);
  if (chosen == nullptr) {
    Diagnosis d;
    d.pre_filter_message = score_error.Message();
    fail(d, state, false);
    return out;
  }
  const std::string node = chosen->name();
  if (explain) explain->chosen = node;

  // Reserve, Permit, Bind. Binding updates the cache, which invalidates `chosen`.
  Status rs = framework_->RunReservePlugins(state, *pod, node);
  if (!rs.IsSuccess()) {
    framework_->RunUnreservePlugins(state, *pod, node);
    Diagnosis d;
    d.pre_filter_message = rs.Message();
    fail(d, state, false);
    return out;
  }
  PermitResult pr = framework_->RunPermitPlugins(state, *pod, node);
  if (!pr.status.IsSuccess() && pr.status.code() != Code::kWait) {
    framework_->RunUnreservePlugins(state, *pod, node);
    Diagnosis d;
    d.pre_filter_message = pr.status.Message();
    fail(d, state, false);
    return out;
  }
  Status bs = framework_->RunBindPlugins(state, *pod, node);
  if (!bs.IsSuccess()) {
    framework_->RunUnreservePlugins(state, *pod, node);
    Diagnosis d;
    d.pre_filter_message = "binding rejected: " + bs.Message();
    fail(d, state, false);
    return out;
  }
  out.scheduled = true;
  out.node = node;
  return out;
}

}  // namespace arbiter::sched
