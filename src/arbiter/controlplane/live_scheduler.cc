// The live scheduler: a long-lived Scheduler fed by informer changes, and its store actuator.
#include "arbiter/controlplane/live_scheduler.h"

#include <algorithm>
#include <cctype>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/controlplane/metrics.h"
#include "arbiter/controlplane/pod_json.h"
#include "arbiter/model/feature_gates.h"
#include "arbiter/rules/pod_rules.h"

namespace arbiter::controlplane {

namespace {

using Json = nlohmann::json;

const store::Object* Find(const Informers& informers, const std::string& resource, const store::Informer::Key& key) {
  auto inf = informers.find(resource);
  if (inf == informers.end()) return nullptr;
  return inf->second->Find(key);
}

// What of a group (or Workload) the scheduler decides from: everything but its status and the
// metadata that any write changes.
std::string SpecOf(const Json& group) {
  Json copy = group;
  copy.erase("status");
  if (auto m = copy.find("metadata"); m != copy.end() && m->is_object()) {
    for (const char* k : {"resourceVersion", "managedFields", "generation"}) m->erase(k);
  }
  return copy.dump();
}

constexpr const char* kGroupResources[] = {"podgroups", "compositepodgroups", "workloads"};
constexpr const char* kStorageResources[] = {"persistentvolumeclaims", "persistentvolumes", "storageclasses", "csinodes"};

// Pod priorities were admitted once, at creation: the stored spec is authoritative.
model::Pod Admitted(model::Pod pod, const model::SchedulerConfig& config) {
  model::DropDisabledFields(config, pod);
  pod.priority = admission::StoredPriority(pod);
  pod.preemption_policy = pod.spec_preemption_policy.value_or(model::PreemptionPolicy::kPreemptLowerPriority);
  if (!pod.node_name.empty() && !pod.start_time) pod.start_time = pod.creation_timestamp;
  return pod;
}

}  // namespace

LiveScheduler::LiveScheduler(store::Store& store, WriteBatch& batch, const Clock& clock, LiveSchedulerOptions options,
                             LoopMetrics& metrics, DecodeFn decode, RecordEventFn record_event)
    : store_(store),
      batch_(batch),
      clock_(clock),
      options_(std::move(options)),
      metrics_(metrics),
      decode_(std::move(decode)),
      record_event_(std::move(record_event)) {}

LiveScheduler::~LiveScheduler() = default;

void LiveScheduler::Reset() {
  if (options_.activity != nullptr && scheduler_) options_.activity->SetRunning(false);
  scheduler_.reset();
  group_specs_.clear();
  pods_.clear();
  pdb_status_.ForgetPods();
  written_.clear();
  waiting_for_node_.clear();
}

LiveScheduler::QueueSizes LiveScheduler::queue_sizes() const {
  if (!scheduler_) return {};
  auto& q = const_cast<sched::Scheduler&>(*scheduler_).queue();
  return {q.active_size(), q.backoff_size(), q.unschedulable_size(), q.gated_size()};
}

Status LiveScheduler::Build(const Informers& informers) {
  Reset();
  config_ = options_.config;
  sched::SchedulerOptions so;
  so.seed = options_.seed;
  so.verdict_entries = 250'000;  // at most about 15 MB of kept verdicts beside the cluster's objects
  scheduler_ = std::make_unique<sched::Scheduler>(config_, &clock_, so);
  if (options_.activity != nullptr) options_.activity->SetRunning(true);
  pdb_status_.ForgetPods();
  scheduler_->cache().SetBoundPodObserver(
      [this](const model::Pod* before, const model::Pod* after) { pdb_status_.BoundChanged(before, after); });
  LoadBudgets(informers);
  SeedPreemptionHistory();
  ARBITER_RETURN_IF_ERROR(scheduler_->Init(this));
  for (const auto& [key, o_ptr] : informers.at("namespaces")->objects()) {
    const store::Object& o = *o_ptr;
    const auto& r = decode_(o);
    if (r.ok() && !r.objects.namespaces.empty()) scheduler_->cache().SetNamespace(r.objects.namespaces[0].object);
  }
  for (const auto& [key, o] : informers.at("nodes")->objects()) ReconcileNode(key.second, o.get());
  for (const char* r : kStorageResources) {
    auto inf = informers.find(r);
    if (inf == informers.end()) continue;
    for (const auto& [key, o] : inf->second->objects()) ReconcileStorage(r, key, o.get());
  }

  // Group priorities, by the Priority admission rule pods were admitted with. A group whose
  // class is unknown or whose own values disagree with it keeps the values it states.
  std::map<std::string, model::PriorityClass> classes;
  for (const auto& b : admission::BuiltinPriorityClasses()) classes[b.name] = b;
  const model::PriorityClass* global_default = nullptr;
  for (const auto& [key, o_ptr] : informers.at("priorityclasses")->objects()) {
    const store::Object& o = *o_ptr;
    const auto& r = decode_(o);
    if (r.ok() && !r.objects.priority_classes.empty()) classes[key.second] = r.objects.priority_classes[0].object;
  }
  for (const auto& [name, pc] : classes) {
    if (pc.global_default) global_default = &pc;
  }
  auto resolve = [&](model::GroupPriority& g) {
    const admission::PriorityDecision d = admission::DecidePriority(
        g.priority_class_name, g.spec_priority, g.spec_preemption_policy,
        [&](const std::string& name) {
          auto it = classes.find(name);
          return it == classes.end() ? nullptr : &it->second;
        },
        global_default);
    g.priority = g.spec_priority.value_or(d.priority);
    g.preemption_policy = g.spec_preemption_policy.value_or(d.policy);
  };
  for (const char* r : kGroupResources) {
    for (const auto& [key, o] : informers.at(r)->objects()) group_specs_[{r, key}] = SpecOf(*o->body.tree());
  }
  for (const auto& [key, o_ptr] : informers.at("compositepodgroups")->objects()) {
    const store::Object& o = *o_ptr;
    const auto& r = decode_(o);
    if (!r.ok() || r.objects.composite_pod_groups.empty()) continue;
    model::CompositePodGroup g = r.objects.composite_pod_groups[0].object;
    resolve(g.priority);
    scheduler_->AddCompositePodGroup(g);
  }
  for (const auto& [key, o_ptr] : informers.at("podgroups")->objects()) {
    const store::Object& o = *o_ptr;
    const auto& r = decode_(o);
    if (!r.ok() || r.objects.pod_groups.empty()) continue;
    model::PodGroup g = r.objects.pod_groups[0].object;
    resolve(g.priority);
    scheduler_->AddPodGroup(g);
  }
  for (const auto& [key, o] : informers.at("pods")->objects()) ReconcilePod(key, o.get());
  return Status::Ok();
}

const store::Object* LiveScheduler::Current(const std::string& resource, const Key& key) const {
  if (const store::Object* queued = batch_.Pending(resource, key.first, key.second)) return queued;
  const store::Object* seen = informers_ != nullptr ? Find(*informers_, resource, key) : nullptr;
  auto of = written_.find(resource);
  if (of == written_.end()) return seen;
  auto own = of->second.find(key);
  if (own == of->second.end()) return seen;
  if (seen != nullptr && seen->revision >= own->second->revision) return seen;
  return own->second.get();
}

StatusOr<const store::Object*> LiveScheduler::Refetch(const std::string& resource, const Key& key) {
  auto& own = written_[resource];
  own.erase(key);
  auto stored = store_.Get(resource, key.first, key.second);
  if (!stored.ok()) {
    if (stored.status().code() == StatusCode::kNotFound) return static_cast<const store::Object*>(nullptr);
    return stored.status();
  }
  // Newer than the informer's copy until its echo arrives.
  return (own[key] = std::make_shared<const store::Object>(std::move(*stored))).get();
}

void LiveScheduler::ReconcileNode(const std::string& name, const store::Object* stored) {
  state::ClusterCache& cache = scheduler_->cache();
  const bool known = cache.GetNode(name) != nullptr;
  const model::Node* node = nullptr;
  if (stored != nullptr) {
    const auto& r = decode_(*stored);
    if (r.ok() && !r.objects.nodes.empty()) node = &r.objects.nodes[0].object;
  }
  if (node == nullptr) {
    if (!known) return;
    // Its pods leave the cache with it; they wait for the node to come back.
    for (auto& [key, t] : pods_) {
      if (t.place == Place::kBound && t.info->pod.node_name == name) {
        (void)scheduler_->DeleteBoundPod(t.info->uid());
        t.place = Place::kNone;
        waiting_for_node_[name].insert(key);
      }
    }
    (void)cache.RemoveNode(name);
    return;
  }
  if (known) {
    (void)cache.UpdateNode(*node);
    scheduler_->queue().MoveOnEvent(sched::ClusterEvent::kNodeUpdate);
    return;
  }
  (void)cache.AddNode(*node);
  scheduler_->queue().MoveOnEvent(sched::ClusterEvent::kNodeAdd);
  auto waiting = waiting_for_node_.extract(name);
  if (!waiting.empty()) {
    for (const Key& key : waiting.mapped()) ReconcilePod(key, Current(key));
  }
}

void LiveScheduler::ReconcilePod(const Key& key, const store::Object* stored, int backoff_attempts) {
  Tracked& t = pods_[key];
  // What the store says the pod is now.
  const model::Pod* decoded = nullptr;
  if (stored != nullptr && !Terminal(*stored->body.tree())) {
    const auto& r = decode_(*stored);
    if (r.ok() && !r.objects.pods.empty()) decoded = &r.objects.pods[0].object;
  }
  Place want = Place::kNone;
  if (decoded != nullptr) {
    if (!decoded->node_name.empty()) {
      if (scheduler_->cache().GetNode(decoded->node_name) != nullptr) {
        want = Place::kBound;
      } else {
        waiting_for_node_[decoded->node_name].insert(key);
      }
    } else if (decoded->scheduler_name == config_.scheduler_name && !decoded->deletion_timestamp) {
      // kube-scheduler leaves pods of other schedulers and pods being deleted alone.
      want = Place::kPending;
    }
  }
  state::PodInfoPtr next = want == Place::kNone ? nullptr : state::MakePodInfo(Admitted(*decoded, config_));

  // Leave the old place unless the pod stays there.
  const bool same_bound = t.place == Place::kBound && want == Place::kBound && t.info->uid() == next->uid() &&
                          t.info->pod.node_name == next->pod.node_name;
  const bool same_pending = t.place == Place::kPending && want == Place::kPending && t.info->uid() == next->uid();
  if (same_bound) {
    // The echo of a bind (or any later change of a running pod). A change that matters to
    // others (labels, termination) moves the pods waiting on assigned-pod updates.
    model::Pod merged = next->pod;
    // The cache's own knowledge that this scheduler preempted it survives the echo, and so does
    // the victim's termination when the store has only its DisruptionTarget condition so far (a
    // victim without a grace period is deleted by the write after that one): the next cycles
    // must see it terminating, not as a pod to preempt again.
    if (t.info->pod.preempted_by_scheduler) {
      merged.preempted_by_scheduler = true;
      if (!merged.deletion_timestamp) merged.deletion_timestamp = t.info->pod.deletion_timestamp;
    }
    const bool moved = t.info->pod.labels != merged.labels ||
                       t.info->pod.deletion_timestamp.has_value() != merged.deletion_timestamp.has_value();
    next = state::MakePodInfo(std::move(merged));
    (void)scheduler_->UpdateBoundPod(next);
    if (moved) scheduler_->queue().MoveOnEvent(sched::ClusterEvent::kAssignedPodUpdate);
    t.info = next;
    pdb_status_.Know(next->pod);
    return;
  }
  if (same_pending) {
    scheduler_->queue().Update(next);
    t.info = next;
    pdb_status_.Know(next->pod);
    return;
  }
  if (t.place == Place::kPending) {
    scheduler_->queue().Delete(t.info->uid());
    scheduler_->nominator().DeleteNominatedPod(t.info->uid());
  } else if (t.place == Place::kBound) {
    (void)scheduler_->DeleteBoundPod(t.info->uid());
  }
  if (t.info && (!next || t.info->uid() != next->uid())) pdb_status_.Forget(t.info->uid());
  t.place = want;
  t.info = next;
  if (next) pdb_status_.Know(next->pod);
  if (want == Place::kBound) {
    (void)scheduler_->AddBoundPod(next);
  } else if (want == Place::kPending) {
    if (backoff_attempts > 0 && next->pod.pod_group_name.empty()) {
      // Back after a failed binding: it waits out its backoff first.
      if (!next->pod.nominated_node_name.empty()) scheduler_->nominator().AddNominatedPod(next, next->pod.nominated_node_name);
      scheduler_->queue().AddBackingOff(next, backoff_attempts);
    } else {
      scheduler_->AddPendingPod(next, next->pod.creation_timestamp);
    }
  } else {
    pods_.erase(key);
    last_failure_.erase(key);
  }
}

Status LiveScheduler::Pass(const Informers& informers, const Changes& changes) {
  informers_ = &informers;
  struct Done {
    const Informers*& p;
    ~Done() { p = nullptr; }
  } done{informers_};
  bool rebuild = !scheduler_;
  if (auto it = changes.find("priorityclasses"); it != changes.end() && !it->second.empty()) rebuild = true;
  // A group's own status (the condition this scheduler writes) changes nothing it decides from.
  for (const char* r : kGroupResources) {
    auto it = changes.find(r);
    if (rebuild || it == changes.end()) continue;
    for (const auto& key : it->second) {
      const store::Object* o = Find(informers, r, key);
      auto known = group_specs_.find({r, key});
      if (o == nullptr ? known != group_specs_.end() : known == group_specs_.end() || known->second != SpecOf(*o->body.tree())) {
        rebuild = true;
        break;
      }
    }
  }
  if (rebuild) {
    ARBITER_RETURN_IF_ERROR(Build(informers));
  } else {
    if (auto it = changes.find("namespaces"); it != changes.end()) {
      for (const auto& key : it->second) {
        if (const store::Object* o = Find(informers, "namespaces", key)) {
          const auto& r = decode_(*o);
          if (r.ok() && !r.objects.namespaces.empty()) scheduler_->cache().SetNamespace(r.objects.namespaces[0].object);
        }
      }
    }
    if (auto it = changes.find("poddisruptionbudgets"); it != changes.end() && !it->second.empty()) LoadBudgets(informers);
    bool storage_changed = false;
    for (const char* r : kStorageResources) {
      auto it = changes.find(r);
      if (it == changes.end()) continue;
      for (const auto& key : it->second) {
        ReconcileStorage(r, key, Find(informers, r, key));
        storage_changed = true;
      }
    }
    if (storage_changed) scheduler_->StorageChanged();
    if (auto it = changes.find("nodes"); it != changes.end()) {
      for (const auto& key : it->second) ReconcileNode(key.second, Find(informers, "nodes", key));
    }
    if (auto it = changes.find("pods"); it != changes.end()) {
      for (const auto& key : it->second) {
        // An echo older than this scheduler's own write is not news.
        const store::Object* seen = Find(informers, "pods", key);
        auto& own_pods = written_["pods"];
        auto own = own_pods.find(key);
        if (own != own_pods.end()) {
          if (seen != nullptr && seen->revision < own->second->revision) continue;
          own_pods.erase(own);
        }
        ReconcilePod(key, seen);
      }
    }
  }
  // Forget own writes the informer has caught up with (or whose object is gone).
  for (auto& [resource, own] : written_) {
    for (auto it = own.begin(); it != own.end();) {
      const store::Object* seen = Find(informers, resource, it->first);
      it = seen == nullptr || seen->revision >= it->second->revision ? own.erase(it) : std::next(it);
    }
  }

  for (size_t cycles = 0; cycles < options_.max_cycles_per_pass; ++cycles) {
    std::optional<sched::CycleOutcome> out = scheduler_->ScheduleOne();
    if (!out) break;
    ARBITER_RETURN_IF_ERROR(Actuate(*out));
    // Synchronous writes go when the batch is full. Asynchronous ones wait for the end of the
    // pass: the batch in flight must be the one written since the informers' sync at its start,
    // so that every object a cycle reads is the informer's, a queued write's or that batch's.
    if (batch_.full() && !batch_.asynchronous()) ARBITER_RETURN_IF_ERROR(batch_.Flush());
  }
  ARBITER_RETURN_IF_ERROR(batch_.Flush());
  const QueueSizes q = queue_sizes();
  metrics_.pending = q.active;
  metrics_.pending_backoff = q.backoff;
  metrics_.pending_unschedulable = q.unschedulable;
  metrics_.pending_gated = q.gated;
  if (options_.activity != nullptr && options_.activity->QueueWanted()) options_.activity->PublishQueue(QueueView());
  return Status::Ok();
}

std::vector<QueuedPodView> LiveScheduler::QueueView() const {
  std::vector<QueuedPodView> out;
  if (!scheduler_) return out;
  static constexpr const char* kPools[] = {"active", "backoff", "unschedulable", "gated"};
  for (const auto& e : scheduler_->queue().Pending()) {
    const sched::QueuedPodInfo& info = *e.info;
    // A group's entry lists its pending members; a lone pod's, the pod.
    std::vector<state::PodInfoPtr> pods = info.members;
    if (pods.empty() && info.pod) pods.push_back(info.pod);
    for (const state::PodInfoPtr& p : pods) {
      const model::Pod& pod = p->pod;
      QueuedPodView v;
      v.pod = pod.Key();
      v.uid = pod.uid;
      v.group = info.group;
      v.pool = kPools[static_cast<int>(e.pool)];
      v.priority = pod.priority;
      v.attempts = info.attempts;
      v.nominated_node = pod.nominated_node_name;
      if (e.pool == sched::SchedulingQueue::Pool::kBackoff) v.backoff_until = e.backoff_expiry;
      if (e.pool == sched::SchedulingQueue::Pool::kGated || info.attempts == 0) {
        v.message = scheduler_->WaitingReason(pod);
      }
      if (auto it = last_failure_.find(Key{pod.ns, pod.name}); it != last_failure_.end() && v.message.empty()) {
        v.message = it->second;
      }
      out.push_back(std::move(v));
    }
  }
  return out;
}

void LiveScheduler::ReconcileStorage(const std::string& resource, const store::Informer::Key& key,
                                     const store::Object* o) {
  state::StorageIndex& storage = scheduler_->storage_index();
  const manifest::LoadResult* r = o != nullptr ? &decode_(*o) : nullptr;
  const bool ok = r != nullptr && r->ok();
  if (resource == "persistentvolumeclaims") {
    if (ok && !r->objects.pvcs.empty()) {
      storage.SetClaim(r->objects.pvcs[0].object);
    } else {
      storage.RemoveClaim(key.first + "/" + key.second);
    }
  } else if (resource == "persistentvolumes") {
    if (ok && !r->objects.pvs.empty()) {
      storage.SetVolume(r->objects.pvs[0].object);
    } else {
      storage.RemoveVolume(key.second);
    }
  } else if (resource == "storageclasses") {
    if (ok && !r->objects.storage_classes.empty()) {
      storage.SetClass(r->objects.storage_classes[0].object);
    } else {
      storage.RemoveClass(key.second);
    }
  } else if (resource == "csinodes") {
    if (ok && !r->objects.csi_nodes.empty()) {
      storage.SetCsiNode(r->objects.csi_nodes[0].object);
    } else {
      storage.RemoveCsiNode(key.second);
    }
  }
}

void LiveScheduler::WriteVolumeBindings(const model::Pod& pod) {
  // kube-scheduler's PreBind (BindPodVolumes) writes what Reserve assumed: the selected node on
  // a claim to provision, the claim reference on a volume to bind; Arbiter then completes the
  // static binding on both as the PV controller would (there is no other to do it).
  const state::StorageIndex& storage = scheduler_->storage_index();
  for (const auto& v : pod.volumes) {
    const model::PersistentVolumeClaim* claim = storage.Claim(pod.ns, v.claim_name);
    const store::Object* cur = Current("persistentvolumeclaims", {pod.ns, v.claim_name});
    if (claim == nullptr || cur == nullptr) continue;
    Json next = cur->body.Copy();
    Json& ann = next["metadata"]["annotations"];
    if (!ann.is_object()) ann = Json::object();
    if (!claim->selected_node.empty()) ann[std::string(model::kAnnSelectedNode)] = claim->selected_node;
    if (claim->Bound()) {
      ann[std::string(model::kAnnBindCompleted)] = "yes";
      next["spec"]["volumeName"] = claim->volume_name;
      next["status"]["phase"] = "Bound";
      if (const model::PersistentVolume* pv = storage.Volume(claim->volume_name)) {
        if (const store::Object* pv_cur = Current("persistentvolumes", {"", pv->name})) {
          // The claim's status takes the volume's capacity and access modes, as the PV
          // controller sets them.
          const Json& pv_spec = pv_cur->body->value("spec", Json::object());
          if (pv_spec.contains("capacity")) next["status"]["capacity"] = pv_spec["capacity"];
          if (pv_spec.contains("accessModes")) next["status"]["accessModes"] = pv_spec["accessModes"];
          Json pv_next = pv_cur->body.Copy();
          if (!pv_next["spec"].contains("claimRef")) {
            pv_next["spec"]["claimRef"] = {{"kind", "PersistentVolumeClaim"}, {"namespace", claim->ns}, {"name", claim->name},
                                           {"uid", (*cur->body.tree())["metadata"].value("uid", "")}};
            pv_next["status"]["phase"] = "Bound";
            batch_.Update(*pv_cur, std::move(pv_next));
          }
        }
      }
    }
    if (next != cur->body) batch_.Update(*cur, std::move(next));
  }
}

Status LiveScheduler::Actuate(const sched::CycleOutcome& out) {
  // A group cycle's outcome carries one outcome per member tried (each naming the group too).
  if (!out.members.empty()) {
    for (const auto& m : out.members) ARBITER_RETURN_IF_ERROR(ActuatePod(m));
    if (!out.group_kind.empty()) WriteGroupCondition(out.group, out.group_kind, out.group_scheduled, out.group_message, 0);
    return Status::Ok();
  }
  if (!out.group.empty() && out.group_kind.empty()) return Status::Ok();  // the group is not there yet
  return ActuatePod(out);
}

Status LiveScheduler::ActuatePod(const sched::CycleOutcome& out) {
  if (out.nominated_node && !out.scheduled) Nominate(*out.pod, *out.nominated_node);
  return out.scheduled ? Bind(out) : Fail(out);
}

bool LiveScheduler::Lost(const Status& st) {
  return st.code() == StatusCode::kConflict || st.code() == StatusCode::kNotFound;
}

bool LiveScheduler::Refused(const Status& st) {
  return st.code() == StatusCode::kInvalidArgument || st.code() == StatusCode::kFailedPrecondition;
}

void LiveScheduler::Write(const store::Object& cur, Json next, store::WriteOp::Intent intent, WriteBatch::Done done) {
  const Key key{cur.ns, cur.name};
  WriteBatch::Done complete = [this, key, done = std::move(done)](const StatusOr<store::ObjectPtr>& r) -> Status {
    if (r.ok()) written_["pods"][key] = *r;  // shared with the write's watch event
    if (done) return done(r);
    if (!r.ok() && Refused(r.status())) return ReportRefused(r.status());
    return r.ok() || Lost(r.status()) ? Status::Ok() : r.status();
  };
  batch_.Update(cur, std::move(next), std::move(complete), intent);
}

Status LiveScheduler::ReportRefused(const Status& st) {
  ++metrics_.errors;
  if (options_.log) options_.log("Write failed", "err=\"" + st.message() + "\"");
  return Status::Ok();
}

void LiveScheduler::Forget(const Key& key, int attempts) {
  // The store refused a write made on an older version: take the pod as the store has it now
  // (as the informer last saw it when the store cannot be read).
  auto now = Refetch("pods", key);
  const store::Object* stored = now.ok() ? *now : informers_ != nullptr ? Find(*informers_, "pods", key) : nullptr;
  ReconcilePod(key, stored, attempts);
}

Status LiveScheduler::Bind(const sched::CycleOutcome& out) {
  const model::Pod& pod = out.pod->pod;
  const Key key{pod.ns, pod.name};
  Tracked& t = pods_[key];
  // The scheduler assumed the pod on the node (its cache holds it bound).
  t.place = Place::kBound;
  if (state::PodInfoPtr assumed = scheduler_->cache().FindPod(pod.uid)) t.info = assumed;
  const store::Object* cur = Current(key);
  if (cur == nullptr) {
    Forget(key, out.attempt);
    return Status::Ok();
  }
  // The binding the pods/binding subresource would make (one rule for both: rules/pod_rules.h),
  // the node's topology labels included, as PodTopologyLabels admission adds them to
  // kube-scheduler's Binding.
  rules::PodBinding binding;
  binding.node = out.node;
  if (const store::Object* n = informers_ != nullptr ? Find(*informers_, "nodes", {"", out.node}) : nullptr) {
    binding.labels = rules::TopologyLabelsOf(*n->body.tree());
  }
  Json next = cur->body.Copy();
  if (!rules::BindPod(next, binding, FormatRfc3339(clock_.Now() / kSecond * kSecond)).ok()) {
    Forget(key, out.attempt);  // bound meanwhile, or being deleted: as the store has it now
    return Status::Ok();
  }
  if (!pod.volumes.empty()) WriteVolumeBindings(pod);
  // Conditional on the revision read: a pod is never bound twice. The cycle goes on; the
  // binding's fate is known when the batch is flushed.
  const int attempt = out.attempt;
  const std::optional<Timestamp> created = pod.creation_timestamp;
  const std::string uid = pod.uid, node = out.node, pod_key = pod.Key();
  Write(*cur, std::move(next), store::WriteOp::Intent::kBind, [=, this](const StatusOr<store::ObjectPtr>& r) -> Status {
    if (!r.ok()) {
      // Whatever the reason (a lost race, a refusal, a server that did not answer), the pod
      // leaves the cache and goes back to the queue, as kube-scheduler forgets an assumed pod
      // whose binding failed; only a lost race is no error.
      if (!Lost(r.status())) (void)ReportRefused(r.status());
      Forget(key, attempt);  // back to the queue, after its backoff
      return Status::Ok();
    }
    ++metrics_.scheduled;
    last_failure_.erase(key);
    if (created) {
      const Duration d = std::max<Duration>(0, clock_.Now() - *created);
      metrics_.e2e_micros_sum += static_cast<uint64_t>(d);
      size_t b = 0;
      while (b < 15 && static_cast<double>(d) > 0.01 * kSecond * static_cast<double>(uint64_t{1} << b)) ++b;
      ++metrics_.e2e_histogram[b];
    }
    return record_event_(key.first, key.second, uid, "Normal", "Scheduled",
                         "Successfully assigned " + pod_key + " to " + node);
  });
  return Status::Ok();
}

Status LiveScheduler::Fail(const sched::CycleOutcome& out) {
  const model::Pod& pod = out.pod->pod;
  const Key key{pod.ns, pod.name};
  const store::Object* cur = Current(key);
  if (cur == nullptr || !NodeOf(*cur->body.tree()).empty()) return Status::Ok();
  ++metrics_.unschedulable;
  // Every failed attempt is an event (the recorder counts repeats on one event); the pod's
  // condition is written when its message changes.
  if (last_failure_[key] == out.message) {
    return record_event_(pod.ns, pod.name, pod.uid, "Warning", "FailedScheduling", out.message);
  }
  last_failure_[key] = out.message;
  Json next = cur->body.Copy();
  const Timestamp now = clock_.Now() / kSecond * kSecond;
  rules::UpdatePodCondition(next["status"],
                            {{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"}, {"message", out.message}},
                            FormatRfc3339(now));
  Write(*cur, std::move(next), store::WriteOp::Intent::kStatus);
  return record_event_(pod.ns, pod.name, pod.uid, "Warning", "FailedScheduling", out.message);
}

void LiveScheduler::Nominate(const state::PodInfo& pod, const std::string& node) {
  const Key key{pod.pod.ns, pod.pod.name};
  const store::Object* cur = Current(key);
  if (cur == nullptr || !NodeOf(*cur->body.tree()).empty()) return;
  if (std::string(StringAt(*cur->body.tree(), "status", "nominatedNodeName")) == node) return;
  Json next = cur->body.Copy();
  if (node.empty()) {
    if (next["status"].is_object()) next["status"].erase("nominatedNodeName");
  } else {
    next["status"]["nominatedNodeName"] = node;
  }
  Write(*cur, std::move(next), store::WriteOp::Intent::kStatus);
}

void LiveScheduler::WriteGroupCondition(const std::string& group, const std::string& kind, bool scheduled,
                                        const std::string& message, int retries) {
  const size_t slash = group.find('/');
  if (slash == std::string::npos || informers_ == nullptr) return;
  const Key key{group.substr(0, slash), group.substr(slash + 1)};
  const std::string resource = kind == "CompositePodGroup" ? "compositepodgroups" : "podgroups";
  const store::Object* cur = Current(resource, key);
  if (cur == nullptr) return;
  // <Kind>InitiallyScheduled: True (reason Scheduled) once a cycle placed the quorum, and kept
  // then; False (reason Unschedulable) with the latest message until that happens.
  const std::string type = kind + "InitiallyScheduled";
  const store::Body::Tree cur_pinned = cur->body.tree();
  if (const Json* conds = At(*cur_pinned, "status", "conditions"); conds != nullptr && conds->is_array()) {
    for (const Json& c : *conds) {
      if (!c.is_object() || c.value("type", "") != type) continue;
      if (c.value("status", "") == "True") return;
      if (!scheduled && c.value("message", "") == message) return;
    }
  }
  Json next = cur->body.Copy();
  const Timestamp now = clock_.Now() / kSecond * kSecond;
  Json cond = {{"type", type},
               {"status", scheduled ? "True" : "False"},
               {"reason", scheduled ? "Scheduled" : "Unschedulable"},
               // metav1.Condition's message is always written (Go's encoding has no omitempty on it).
               {"message", scheduled ? "" : message}};
  rules::SetStatusCondition(next["status"], std::move(cond), FormatRfc3339(now));
  // A write that lost a race with another writer of the group is made again on the store's
  // version (the True condition is written once, so it must not be dropped).
  batch_.Update(*cur, std::move(next),
                [this, group, kind, scheduled, message, retries, resource, key](const StatusOr<store::ObjectPtr>& r) -> Status {
                  if (r.ok()) {
                    written_[resource][key] = *r;
                    return Status::Ok();
                  }
                  if (r.status().code() != StatusCode::kConflict || retries >= kEvictionRetries) {
                    if (Refused(r.status())) return ReportRefused(r.status());
                    return Lost(r.status()) ? Status::Ok() : r.status();
                  }
                  ARBITER_ASSIGN_OR_RETURN(stored, Refetch(resource, key));
                  if (stored != nullptr) WriteGroupCondition(group, kind, scheduled, message, retries + 1);
                  return Status::Ok();
                });
}

}  // namespace arbiter::controlplane
