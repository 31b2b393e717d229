// The live scheduler's preemption actuator: the budgets it reads, and victims evicted through the
// store as kube-scheduler evicts them (the DisruptionTarget condition, a Preempted event, a
// graceful deletion).
#include "arbiter/controlplane/live_scheduler.h"

#include <algorithm>
#include <map>
#include <utility>

#include "arbiter/controlplane/metrics.h"
#include "arbiter/controlplane/pod_json.h"
#include "arbiter/rules/pod_rules.h"

namespace arbiter::controlplane {

using Json = nlohmann::json;

void LiveScheduler::LoadBudgets(const Informers& informers) {
  std::vector<model::PodDisruptionBudget> pdbs;
  for (const auto& [key, o_ptr] : informers.at("poddisruptionbudgets")->objects()) {
    const auto& r = decode_(*o_ptr);
    if (r.ok() && !r.objects.pdbs.empty()) pdbs.push_back(r.objects.pdbs[0].object);
  }
  pdb_status_.SetBudgets(std::move(pdbs));
}

std::vector<sched::preemption::PdbView> LiveScheduler::Pdbs() const {
  if (pdb_status_.empty()) return {};
#ifndef NDEBUG
  // Debug builds (the sanitizer tests) check the counts kept against a recount over pods_, which
  // checks that every change of pods_ was told.
  std::vector<const model::Pod*> known;
  for (const auto& [key, t] : pods_) {
    if (t.info) known.push_back(&t.info->pod);
  }
  pdb_status_.CheckAgainstRecount(
      [&](const std::string& uid) -> const model::Pod* {
        state::PodInfoPtr bound = scheduler_->cache().FindPod(uid);
        return bound ? &bound->pod : nullptr;
      },
      &known);
#endif
  return pdb_status_.Views();
}

void LiveScheduler::Preempt(const state::PodInfo& preemptor, const std::string& node,
                            const std::vector<sched::preemption::Eviction>& victims) {
  if (options_.log) {
    for (const auto& v : victims) {
      options_.log("Preemptor Pod preempted victim Pod", "preemptor=\"" + preemptor.pod.Key() + "\" victim=\"" +
                                                            v.victim->pod.Key() + "\" node=\"" + node + "\"");
    }
  }
  Evict(victims, "Preempted by pod " + preemptor.uid() + " on node " + node);
  RecordPreemption(preemptor.pod.Key(), "Pod", preemptor.uid(), node, victims);
}

void LiveScheduler::RecordPreemption(const std::string& preemptor, std::string_view kind, const std::string& uid,
                                     const std::string& node, const std::vector<sched::preemption::Eviction>& victims) {
  if (options_.activity == nullptr) return;
  PreemptionView p;
  p.time = clock_.Now();
  p.preemptor = preemptor;
  p.preemptor_kind = std::string(kind);
  p.preemptor_uid = uid;
  p.node = node;
  for (const auto& e : victims) {
    if (sched::preemption::AlreadyTerminating(e)) continue;  // its first preemptor's victim
    const model::Pod& v = e.victim->pod;
    p.victims.push_back({v.Key(), v.uid, v.node_name, e.priority, e.violates_pdb, v.termination_grace_period_seconds});
  }
  options_.activity->AddPreemption(std::move(p));
}

void LiveScheduler::PreemptForGroup(const std::string& group, std::string_view kind,
                                    const std::vector<sched::preemption::Eviction>& victims) {
  std::string lower(kind);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  Evict(victims, "Preempted by " + lower + " " + group);
  RecordPreemption(group, kind, "", "", victims);
}

void LiveScheduler::Evict(const std::vector<sched::preemption::Eviction>& victims, const std::string& message) {
  ++metrics_.preemption_attempts;
  metrics_.preemption_victims += victims.size();
  size_t bucket = 0;
  while (bucket < 7 && (size_t{1} << bucket) < victims.size()) ++bucket;
  ++metrics_.victim_histogram[bucket];
  const Timestamp now = clock_.Now() / kSecond * kSecond;
  bool updated = false;
  for (const auto& e : victims) {
    const model::Pod& v = e.victim->pod;
    if (sched::preemption::AlreadyTerminating(e)) continue;
    const Key key{v.ns, v.name};
    // The cache sees the victim terminating at once, whatever the store write's fate: the next
    // cycle must not count it as room to preempt again.
    model::Pod evicted = v;
    evicted.deletion_timestamp = AddSecondsCapped(now, v.termination_grace_period_seconds);
    evicted.preempted_by_scheduler = true;
    state::PodInfoPtr info = state::MakePodInfo(std::move(evicted));
    (void)scheduler_->UpdateBoundPod(info);
    if (auto it = pods_.find(key); it != pods_.end() && it->second.place == Place::kBound) it->second.info = info;
    pdb_status_.Evicted(v.Key());
    updated = true;

    if (config_.ThrashGuard() && !v.controller_uid.empty()) {
      if (const store::Object* cur = Current(key)) RecordLineagePreemption(*cur, v.controller_uid, now);
    }
    WriteEviction(key, v.uid, v.termination_grace_period_seconds, message, now, 0);
  }
  if (updated) scheduler_->queue().MoveOnEvent(sched::ClusterEvent::kAssignedPodUpdate);
}

void LiveScheduler::WriteEviction(const Key& key, const std::string& uid, int64_t grace, const std::string& message,
                                  Timestamp now, int retries) {
  const store::Object* cur = Current(key);
  if (cur == nullptr || Terminating(*cur->body.tree())) return;
  if (StringAt(*cur->body.tree(), "metadata", "uid") != uid) return;  // another pod of that name: the victim is gone
  // A write that lost a race with another writer (the node agent's status, say) is made again
  // on the store's current version: the cache already holds the victim terminating, so an
  // eviction dropped here would leave its preemptor waiting for good.
  auto retry = [this, key, uid, grace, message, now, retries](const StatusOr<store::ObjectPtr>& r) -> Status {
    if (r.status().code() != StatusCode::kConflict || retries >= kEvictionRetries) {
      if (!r.ok() && Refused(r.status())) return ReportRefused(r.status());
      return r.ok() || Lost(r.status()) ? Status::Ok() : r.status();
    }
    ARBITER_ASSIGN_OR_RETURN(fresh, Refetch("pods", key));
    if (fresh != nullptr) WriteEviction(key, uid, grace, message, now, retries + 1);
    return Status::Ok();
  };
  // The Preempted event follows the victim's deletion, as kube-scheduler's does.
  auto deleted = [this, key, uid, grace, message, now, retry](const StatusOr<store::ObjectPtr>& r) -> Status {
    if (!r.ok()) return retry(r);
    return record_event_(key.first, key.second, uid, "Normal", "Preempted", message);
  };
  if (HasDisruptionTarget(*cur->body.tree()) && (NodeOf(*cur->body.tree()).empty() || grace <= 0)) {
    // The condition is there (an earlier attempt wrote it): only the deletion is left.
    batch_.Delete(*cur, deleted);
    return;
  }
  Json next = cur->body.Copy();
  rules::UpdatePodCondition(next["status"],
                            {{"type", "DisruptionTarget"},
                             {"status", "True"},
                             {"reason", "PreemptionByScheduler"},
                             {"message", config_.scheduler_name + ": preempting to accommodate a higher priority pod"}},
                            FormatRfc3339(now));
  if (NodeOf(next).empty() || grace <= 0) {
    // Deleted at once: the condition is written first, then the pod deleted as it then is, so
    // that the deletion (and its watch event) carries the DisruptionTarget condition
    // (kube-scheduler patches the victim's status, then deletes it).
    auto then_delete = [this, retry, deleted](const StatusOr<store::ObjectPtr>& r) -> Status {
      if (!r.ok()) return retry(r);
      batch_.Delete(**r, deleted);
      return Status::Ok();
    };
    Write(*cur, std::move(next), store::WriteOp::Intent::kStatus, then_delete);
  } else {
    // A graceful deletion: the condition and the deletion timestamp in one write; the node
    // deletes the pod when its grace period ends.
    next["metadata"]["deletionTimestamp"] = FormatRfc3339(AddSecondsCapped(now, grace));
    next["metadata"]["deletionGracePeriodSeconds"] = grace;
    Write(*cur, std::move(next), store::WriteOp::Intent::kEvict, deleted);
  }
}

namespace {

// The resource of a controller kind that owns pods (its lineage's annotation is written there);
// empty for another kind.
std::string ControllerResource(const std::string& api_version, const std::string& kind) {
  static const std::map<std::pair<std::string, std::string>, std::string> kResources = {
      {{"apps/v1", "ReplicaSet"}, "replicasets"},   {{"apps/v1", "StatefulSet"}, "statefulsets"},
      {{"apps/v1", "DaemonSet"}, "daemonsets"},     {{"batch/v1", "Job"}, "jobs"},
      {{"v1", "ReplicationController"}, "replicationcontrollers"}};
  auto it = kResources.find({api_version, kind});
  return it == kResources.end() ? std::string() : it->second;
}

}  // namespace

void LiveScheduler::SeedPreemptionHistory() {
  if (!config_.ThrashGuard()) return;
  // The times earlier schedulers wrote on the controllers (arbiter.dev/preemptions), merged in
  // each time this one is built, so that a restarted or newly elected scheduler guards as its
  // predecessor did. A resource that cannot be listed is only logged.
  const std::string name(sched::preemption::kPreemptionsAnnotation);
  for (const char* resource : {"replicasets", "statefulsets", "daemonsets", "jobs", "replicationcontrollers"}) {
    auto listed = store_.List(resource, "");
    if (!listed.ok()) {
      if (options_.log) {
        options_.log("Reading preemption history failed",
                     "resource=\"" + std::string(resource) + "\" err=\"" + listed.status().message() + "\"");
      }
      continue;
    }
    for (const store::Object& o : listed->items) {
      const store::Body::Tree o_pinned = o.body.tree();
      const Json* annotations = At(*o_pinned, "metadata", "annotations");
      if (annotations == nullptr || !annotations->is_object()) continue;
      auto it = annotations->find(name);
      if (it == annotations->end() || !it->is_string()) continue;
      auto times = sched::preemption::ParsePreemptionsAnnotation(it->get_ref<const std::string&>());
      if (times.ok()) history_.Seed(std::string(StringAt(*o.body.tree(), "metadata", "uid")), *times);
    }
  }
}

void LiveScheduler::RecordLineagePreemption(const store::Object& victim, const std::string& owner_uid, Timestamp now) {
  history_.Record(owner_uid, now);
  const Json* refs = nullptr;
  const store::Body::Tree victim_tree = victim.body.tree();  // `refs` points into it
  if (auto md = victim_tree->find("metadata"); md != victim_tree->end() && md->is_object()) {
    if (auto r = md->find("ownerReferences"); r != md->end() && r->is_array()) refs = &*r;
  }
  if (refs == nullptr) return;
  for (const Json& ref : *refs) {
    if (!ref.is_object() || ref.value("controller", false) != true || ref.value("uid", "") != owner_uid) continue;
    const std::string resource = ControllerResource(ref.value("apiVersion", ""), ref.value("kind", ""));
    if (!resource.empty()) WriteLineageAnnotation(resource, {victim.ns, ref.value("name", "")}, owner_uid, 0);
    return;
  }
}

void LiveScheduler::WriteLineageAnnotation(const std::string& resource, const Key& owner, const std::string& owner_uid,
                                           int retries) {
  auto stored = store_.Get(resource, owner.first, owner.second);
  // Gone, or the store unreachable: the record kept here still guards this scheduler's decisions.
  if (!stored.ok() || StringAt(*stored->body.tree(), "metadata", "uid") != owner_uid) return;
  Json next = stored->body.Copy();
  Json& annotations = next["metadata"]["annotations"];
  if (!annotations.is_object()) annotations = Json::object();
  const std::string name(sched::preemption::kPreemptionsAnnotation);
  // Times the annotation already holds (another scheduler's, an earlier run's) count too.
  if (auto it = annotations.find(name); it != annotations.end() && it->is_string()) {
    if (auto times = sched::preemption::ParsePreemptionsAnnotation(it->get_ref<const std::string&>()); times.ok()) {
      history_.Seed(owner_uid, *times);
    }
  }
  annotations[name] = sched::preemption::FormatPreemptionsAnnotation(history_.Times(owner_uid));
  batch_.Update(*stored, std::move(next), [this, resource, owner, owner_uid, retries](const StatusOr<store::ObjectPtr>& r) -> Status {
    if (r.ok()) return Status::Ok();
    if (r.status().code() == StatusCode::kConflict && retries < kEvictionRetries) {
      WriteLineageAnnotation(resource, owner, owner_uid, retries + 1);
      return Status::Ok();
    }
    if (Refused(r.status())) return ReportRefused(r.status());
    return Lost(r.status()) ? Status::Ok() : r.status();
  });
}

void LiveScheduler::ClearNomination(const state::PodInfoPtr& pod) {
  scheduler_->nominator().DeleteNominatedPod(pod->uid());
  model::Pod cleared = pod->pod;
  cleared.nominated_node_name.clear();
  state::PodInfoPtr info = state::MakePodInfo(std::move(cleared));
  scheduler_->queue().Update(info);
  if (auto it = pods_.find({pod->pod.ns, pod->pod.name}); it != pods_.end() && it->second.place == Place::kPending) {
    it->second.info = info;
  }
  scheduler_->NominationLeft(pod->pod);
  Nominate(*pod, "");
}

}  // namespace arbiter::controlplane
