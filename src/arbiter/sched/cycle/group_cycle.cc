// The pod group scheduling cycle (kube-scheduler's schedule_one_podgroup, v1.37; see
// docs/upstream-rules.md Part B §3):
//
//   1. The queue holds the root group; it was poppable once every gang in the hierarchy had
//      its quorum of members (GroupReady, the GangScheduling PreEnqueue check).
//   2. One snapshot for the cycle. Members in scheduling order; each runs Filter and Score as a
//      lone pod would (no PostFilter), and a placed member is assumed into the snapshot and
//      reserved, so later members see it. The cycle stops early once the hierarchy can no longer
//      reach its quorum even if every remaining member fits (PlacementFeasible).
//   3. Feasible (every gang reaches its quorum counting members already running) and at least
//      one member placed: the placed members pass Permit — the gang is complete, so
//      GangScheduling's Permit allows at once and its wait (permitTimeoutDuration, 5 minutes
//      upstream, for members that arrive one by one) never starts — and are bound; members that did
//      not fit go straight back to activeQ with their old timestamp. Binding and preemption
//      never happen in the same cycle.
//   4. Otherwise workload-aware preemption runs once for the whole group (PodGroupPostFilter);
//      the group returns to the queue either way, its placed members nominated if it preempted.
#include <algorithm>

#include "arbiter/sched/cycle/scheduler.h"

namespace arbiter::sched {

namespace {
}  // namespace

void Scheduler::AddPodGroup(const model::PodGroup& group) {
  if (!workload_enabled_) return;
  model::PodGroup g = group;
  model::DropDisabledFields(config_, g);
  groups_.AddPodGroup(g);
  groups_dirty_ = true;
  GroupsChanged();
}

void Scheduler::AddCompositePodGroup(const model::CompositePodGroup& group) {
  if (!workload_enabled_ || !model::FeatureEnabled(config_, model::kGateCompositePodGroup)) return;
  groups_.AddCompositePodGroup(group);
  groups_dirty_ = true;
  GroupsChanged();
}

std::pair<std::string, int32_t> Scheduler::QueueUnitOf(const model::Pod& pod) const {
  const state::GroupNode* leaf = LeafOf(pod);
  if (leaf == nullptr) return {pod.ns + "/" + pod.pod_group_name, pod.priority};
  return {leaf->root->key, leaf->root->priority};
}

void Scheduler::GroupsChanged() {
  if (!queue_) return;
  // Pods that arrived before their group (or before its parent) move to their root's entry.
  queue_->Regroup([this](const PodInfo& p) { return QueueUnitOf(p.pod); });
  queue_->MoveOnEvent(ClusterEvent::kPodGroupChange);
}

void Scheduler::EnsureGroups() const {
  if (!groups_dirty_) return;
  groups_.Finalize();
  groups_dirty_ = false;
}

const state::GroupIndex* Scheduler::groups() const {
  // Read on every preemption dry run: nullptr as soon as there is nothing to consult.
  if (!workload_enabled_ || groups_.empty()) return nullptr;
  EnsureGroups();
  return &groups_;
}

const state::GroupNode* Scheduler::LeafOf(const model::Pod& pod) const {
  EnsureGroups();
  const state::GroupNode* leaf = groups_.PodGroupOf(pod);
  return leaf != nullptr && leaf->valid ? leaf : nullptr;
}

void Scheduler::BoundGroupMembers(const state::GroupNode& leaf, std::vector<PodInfoPtr>& out) const {
  auto it = bound_members_.find(leaf.key);
  if (it == bound_members_.end()) return;
  for (const auto& [uid, pod] : it->second) out.push_back(pod);
}

const preemption::WorkloadPreemptionMetrics* Scheduler::workload_preemption_metrics() const {
  return workload_preemption_ ? &workload_preemption_->metrics() : nullptr;
}

bool Scheduler::QuorumMet(const state::GroupNode& node, const MemberCounts& counts) {
  if (!node.composite) {
    auto it = counts.find(&node);
    return (it == counts.end() ? 0 : it->second) >= node.Quorum();
  }
  int64_t met = 0;
  for (const state::GroupNode* c : node.children) met += QuorumMet(*c, counts) ? 1 : 0;
  return met >= node.Quorum();
}

bool Scheduler::GroupReady(const QueuedPodInfo& info) const {
  EnsureGroups();
  const state::GroupNode* root = groups_.Find(info.group);
  if (root == nullptr || !root->valid || root->root != root) return false;
  if (!root->composite) {
    // A lone PodGroup: every member of the entry is its own (checked as members join).
    auto it = bound_members_.find(root->key);
    const size_t running = it == bound_members_.end() ? 0 : it->second.size();
    return static_cast<int64_t>(info.members.size() + running) >= root->Quorum();
  }
  MemberCounts counts;
  for (const auto& m : info.members) {
    if (const state::GroupNode* leaf = LeafOf(m->pod)) ++counts[leaf];
  }
  std::vector<const state::GroupNode*> leaves;
  state::GroupIndex::LeavesUnder(*root, leaves);
  for (const state::GroupNode* leaf : leaves) {
    auto it = bound_members_.find(leaf->key);
    if (it != bound_members_.end()) counts[leaf] += static_cast<int64_t>(it->second.size());
  }
  // Every gang of the hierarchy has its own quorum: a gang PodGroup its minCount of members, a
  // gang CompositePodGroup its minGroupCount of children that meet theirs.
  auto every_gang = [&](auto&& self, const state::GroupNode& node) -> bool {
    if (node.composite) {
      for (const state::GroupNode* c : node.children) {
        if (!self(self, *c)) return false;
      }
    }
    return node.policy != model::GroupPolicy::kGang || QuorumMet(node, counts);
  };
  return every_gang(every_gang, *root);
}

std::string Scheduler::WaitingReason(const model::Pod& pod) const {
  if (!pod.scheduling_gates.empty()) return std::string(model::kSchedulingGatedMessage);
  const std::string key = pod.ns + "/" + pod.pod_group_name;
  EnsureGroups();
  const state::GroupNode* leaf = groups_.Find(key);
  if (leaf == nullptr || leaf->composite) {
    return "waiting for PodGroup " + key + ", which does not exist";
  }
  if (!leaf->valid) return "PodGroup " + key + " is not scheduled: its hierarchy is invalid: " + leaf->invalid_reason;
  return "waiting for the members of pod group " + leaf->root->key +
         ": every gang in it needs its minCount of pods (and a CompositePodGroup its minGroupCount of groups) "
         "before it is scheduled";
}

std::vector<PodInfoPtr> Scheduler::OrderMembers(const state::GroupNode& root, const QueuedPodInfo& info) const {
  // Upstream keeps each leaf PodGroup's queued members sorted by PodGroupMemberPodsOrderingFunc:
  // priority (higher first), attempts (more first: older members, as timestamps are renewed
  // every cycle), queue timestamp (earlier first), then pod name; a hierarchy's leaves follow one
  // another in the tree's order (GetUnscheduledPods).
  auto queueing = [&info](const PodInfoPtr& p) {
    auto it = info.member_queueing.find(p->uid());
    return it == info.member_queueing.end() ? MemberQueueing{} : it->second;
  };
  auto before = [&](const PodInfoPtr& a, const PodInfoPtr& b) {
    if (a->pod.priority != b->pod.priority) return a->pod.priority > b->pod.priority;
    const MemberQueueing qa = queueing(a), qb = queueing(b);
    if (qa.attempts != qb.attempts) return qa.attempts > qb.attempts;
    if (qa.timestamp != qb.timestamp) return qa.timestamp < qb.timestamp;
    if (a->pod.name != b->pod.name) return a->pod.name < b->pod.name;
    return a->uid() < b->uid();
  };
  std::vector<const state::GroupNode*> leaves;
  state::GroupIndex::LeavesUnder(root, leaves);
  std::vector<PodInfoPtr> out;
  out.reserve(info.members.size());
  for (const state::GroupNode* leaf : leaves) {
    const size_t first = out.size();
    for (const auto& m : info.members) {
      if (LeafOf(m->pod) == leaf) out.push_back(m);
    }
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(), before);
  }
  return out;
}

GroupPlacement Scheduler::PlaceGroup(const state::GroupNode& root, const std::vector<PodInfoPtr>& pods) {
  GroupPlacement r;
  // Members are placed by this cycle itself: nominations they carry from an earlier preemption
  // must not count against one another.
  for (const auto& p : pods) {
    const std::string n = nominator_.NominatedNode(p->uid());
    if (!n.empty()) snapshot_.DropNominatedPod(n, p->uid());
  }
  MemberCounts placed;     // running + placed, per PodGroup
  MemberCounts reachable;  // running + placed + not yet tried
  std::vector<const state::GroupNode*> leaves;
  state::GroupIndex::LeavesUnder(root, leaves);
  for (const state::GroupNode* leaf : leaves) {
    auto it = bound_members_.find(leaf->key);
    const int64_t running = it == bound_members_.end() ? 0 : static_cast<int64_t>(it->second.size());
    placed[leaf] = running;
    reachable[leaf] = running;
  }
  for (const auto& p : pods) ++reachable[LeafOf(p->pod)];

  size_t i = 0;
  for (; i < pods.size(); ++i) {
    const PodInfoPtr& pod = pods[i];
    const state::GroupNode* leaf = LeafOf(pod->pod);
    CycleState st;
    FindResult found = FindNodesThatFit(st, *pod, nullptr);
    const NodeInfo* chosen = nullptr;
    Status error;
    if (!found.feasible.empty()) chosen = ChooseNode(st, *pod, found.feasible, nullptr, &error);
    bool ok = false;
    if (chosen != nullptr) {
      const std::string node = chosen->name();
      model::Pod copy = pod->pod;
      copy.node_name = node;
      copy.nominated_node_name.clear();
      if (!copy.start_time) copy.start_time = clock_->Now();
      PodInfoPtr assumed = state::MakePodInfo(std::move(copy));
      snapshot_.AddPod(assumed);
      Status rs = framework_->RunReservePlugins(st, *pod, node);
      if (rs.IsSuccess()) {
        r.placed.push_back({pod, node, std::move(st), std::move(assumed)});
        ++placed[leaf];
        ok = true;
      } else {
        framework_->RunUnreservePlugins(st, *pod, node);
        snapshot_.RemovePod(node, pod->uid());
        error = rs;
      }
    }
    if (!ok) {
      UnplacedPod u;
      u.pod = pod;
      if (found.feasible.empty()) {
        u.message = FitErrorMessage(snapshot_.size(), found.diagnosis);
        u.unschedulable_plugins = found.diagnosis.unschedulable_plugins;
        u.resolvable = found.diagnosis.node_to_status.absent.code() == Code::kUnschedulable;
        for (const auto& ns : found.diagnosis.node_to_status.statuses) {
          u.resolvable = u.resolvable || ns.status.code() == Code::kUnschedulable;
        }
      } else {
        u.message = error.Message();
      }
      r.unplaced.push_back(std::move(u));
      --reachable[leaf];
    }
    RecycleStatuses(found.diagnosis.node_to_status.statuses);
    if (!QuorumMet(root, reachable)) {
      ++i;
      break;  // the hierarchy can no longer reach its quorum: stop early
    }
  }
  for (; i < pods.size(); ++i) {
    r.unplaced.push_back({pods[i], "not tried: the pod group can no longer reach its quorum in this cycle.", {}, true});
  }
  // A gang inside the hierarchy that misses its own quorum binds nothing, even when the root's
  // quorum holds without it (a basic root, or minGroupCount below the number of child gangs):
  // its placed pods are taken back, deepest gangs first.
  auto prune = [&](auto&& self, const state::GroupNode& node) -> void {
    if (node.composite) {
      for (const state::GroupNode* c : node.children) self(self, *c);
    }
    if (node.policy != model::GroupPolicy::kGang || &node == &root || QuorumMet(node, placed)) return;
    std::vector<const state::GroupNode*> under;
    state::GroupIndex::LeavesUnder(node, under);
    for (auto it = r.placed.begin(); it != r.placed.end();) {
      const state::GroupNode* leaf = LeafOf(it->pod->pod);
      if (std::find(under.begin(), under.end(), leaf) == under.end()) {
        ++it;
        continue;
      }
      framework_->RunUnreservePlugins(it->state, *it->pod, it->node);
      snapshot_.RemovePod(it->node, it->pod->uid());
      --placed[leaf];
      r.unplaced.push_back({it->pod,
                            "placed, but its " + std::string(node.composite ? "composite pod group " : "pod group ") +
                                node.key + " cannot reach its quorum in this cycle.",
                            {}, true});
      it = r.placed.erase(it);
    }
  };
  if (root.composite) prune(prune, root);
  r.feasible = QuorumMet(root, placed);
  if (!r.feasible) {
    if (!root.composite) {
      // `reachable` counts members not tried after an early stop as if they fitted: an upper bound.
      r.reason = "at most " + std::to_string(reachable[&root]) + " of the " + std::to_string(root.Quorum()) +
                 " pods its minCount requires can run (members already running included)";
    } else {
      int64_t met = 0;
      for (const state::GroupNode* c : root.children) met += QuorumMet(*c, reachable) ? 1 : 0;
      r.reason = "at most " + std::to_string(met) + " of the " + std::to_string(root.Quorum()) +
                 " child groups its minGroupCount requires can be placed whole";
    }
  }
  return r;
}

std::optional<CycleOutcome> Scheduler::ScheduleGroup(QueuedPodInfo qpi) {
  CycleOutcome out;
  out.pod = qpi.pod;
  out.attempt = qpi.attempts;
  out.time = clock_->Now();
  out.group = qpi.group;
  cache_.UpdateSnapshot(snapshot_);
  EnsureGroups();
  const state::GroupNode* root = groups_.Find(qpi.group);
  if (root == nullptr || !root->valid) {
    qpi.unschedulable_plugins = {"GangScheduling"};
    queue_->AddUnschedulable(std::move(qpi));
    return out;
  }
  out.group_kind = std::string(root->Kind());
  const std::vector<PodInfoPtr> pods = OrderMembers(*root, qpi);
  auto member = [&](const PodInfoPtr& p) {
    CycleOutcome m;
    m.pod = p;
    m.attempt = qpi.attempts;
    m.time = out.time;
    m.group = qpi.group;
    return m;
  };

  if (snapshot_.size() == 0) {
    for (const auto& p : pods) {
      out.members.push_back(member(p));
      out.members.back().message = "no nodes available to schedule pods";
    }
    out.group_message = "no nodes available to schedule pods";
    qpi.unschedulable_plugins = {""};
    queue_->AddUnschedulable(std::move(qpi));
    return out;
  }

  GroupPlacement placement = PlaceGroup(*root, pods);
  if (placement.feasible && !placement.placed.empty()) {
    // Bind every placed member; the gang is complete, so Permit allows each at once.
    std::set<std::string> bound;
    for (auto& pp : placement.placed) {
      CycleOutcome m = member(pp.pod);
      PermitResult pr = framework_->RunPermitPlugins(pp.state, *pp.pod, pp.node);
      binding_ = &pp;  // Bind takes the assumed pod rather than copying it again
      Status bs = pr.status.IsSuccess() || pr.status.code() == Code::kWait
                      ? framework_->RunBindPlugins(pp.state, *pp.pod, pp.node)
                      : pr.status;
      binding_ = nullptr;
      if (bs.IsSuccess()) {
        m.scheduled = true;
        m.node = pp.node;
        bound.insert(pp.pod->uid());
      } else {
        framework_->RunUnreservePlugins(pp.state, *pp.pod, pp.node);
        m.message = "binding rejected: " + bs.Message();
      }
      out.members.push_back(std::move(m));
    }
    for (const auto& u : placement.unplaced) {
      CycleOutcome m = member(u.pod);
      m.message = u.message;
      out.members.push_back(std::move(m));
    }
    out.group_scheduled = true;
    out.group_message = "Scheduled";
    // The members that did not fit go back to activeQ at once (their old timestamp), so that the
    // next cycle may preempt for them.
    queue_->Requeue(std::move(qpi));
    return out;
  }

  // Unschedulable: the group as a whole may preempt (PodGroupPostFilter).
  std::set<std::string> fitted;  // members that found a node before the group failed
  for (auto& pp : placement.placed) {
    framework_->RunUnreservePlugins(pp.state, *pp.pod, pp.node);
    fitted.insert(pp.pod->uid());
  }
  RestoreSnapshot();
  std::map<std::string, std::string> nominated_before;  // by member UID, those nominated
  for (const auto& p : pods) {
    if (std::string n = nominator_.NominatedNode(p->uid()); !n.empty()) nominated_before[p->uid()] = std::move(n);
  }
  GroupPostFilterResult wap;
  if (workload_preemption_ != nullptr) wap = workload_preemption_->PodGroupPostFilter(*root, pods);
  std::map<std::string, std::string> nominated;
  for (const auto& [p, node] : wap.nominations) nominated[p->uid()] = node;
  std::map<std::string, const UnplacedPod*> unplaced;
  for (const auto& u : placement.unplaced) unplaced[u.pod->uid()] = &u;
  const std::string group_reason = std::string(root->composite ? "composite pod group " : "pod group ") + root->key +
                                   " is unschedulable: " +
                                   (placement.reason.empty() ? "no member could be placed" : placement.reason) + ".";
  for (const auto& p : pods) {
    CycleOutcome m = member(p);
    auto it = unplaced.find(p->uid());
    m.message = it != unplaced.end() ? it->second->message : group_reason;
    if (!wap.message.empty()) m.message += " " + wap.message;
    if (auto n = nominated.find(p->uid()); n != nominated.end()) {
      if (!wap.waiting) m.nominated_node = n->second;
    } else if (!wap.waiting && fitted.count(p->uid()) && !nominator_.NominatedNode(p->uid()).empty()) {
      // A member that fitted in a group that failed loses its nomination (upstream hands it
      // clearNominatedNode); one that did not fit, or was not tried, keeps it: its own result
      // nominates nothing (a pod group cycle runs no PostFilter per pod) and the failure handler
      // leaves nominatedNodeName as it is.
      nominator_.DeleteNominatedPod(p->uid());
      m.nominated_node = "";
    }
    if (options_.explain) m.post_filter_explanation = wap.explanation;
    out.members.push_back(std::move(m));
  }
  out.group_message = wap.preempted ? "pod group is waiting for podgroup preemption to complete; " + wap.message
                                    : group_reason + (wap.message.empty() ? "" : " " + wap.message);
  qpi.unschedulable_plugins.clear();
  if (wap.preempted) {
    // Upstream requeues the group while its preemption is still under way, and the PreEnqueue
    // check ("waiting for the preemption for this pod group to be finished") parks it among the
    // unschedulable, moved by any event: its victims going.
    qpi.unschedulable_plugins.insert("");
  }
  // Otherwise the group backs off and is tried again when its backoff is over, event or not:
  // upstream's AddAttemptedPodGroupIfNeeded names no rejecting plugin for a group, so it goes to
  // the error backoff queue (not taken early when activeQ is empty), never to the pool.
  queue_->AddUnschedulable(std::move(qpi));
  // Members whose nomination left its node free it for pods of no higher priority (after the
  // group is back in the queue, as upstream sees the members' status updates).
  for (const auto& p : pods) {
    auto b = nominated_before.find(p->uid());
    if (b != nominated_before.end() && nominator_.NominatedNode(p->uid()) != b->second) NominationLeft(p->pod);
  }
  return out;
}

}  // namespace arbiter::sched
