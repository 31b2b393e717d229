// The control loop: node simulation and scheduling over the store.
#include "arbiter/controlplane/control_loop.h"

#include <chrono>
#include <utility>

#include "arbiter/manifest/loader.h"

namespace arbiter::controlplane {

// What the scheduler watches (the node agents have informers of their own).
constexpr const char* kWatched[] = {"nodes",         "pods",          "namespaces",          "priorityclasses",
                                    "poddisruptionbudgets", "podgroups", "compositepodgroups", "workloads",
                                    "persistentvolumeclaims", "persistentvolumes", "storageclasses", "csinodes"};

ControlLoop::ControlLoop(store::Store& store, const Clock& clock, LoopOptions options)
    : store_(store),
      clock_(clock),
      options_(options),
      batch_(store, 512, options.async_writes),
      events_(store, clock, options.event_ttl, options.background_events),
      informers_(MakeInformers(store, options.controllers)),
      // Inline, the node agents read the loop's informers and decode cache: one watch and one
      // decoded form per object. On their own thread they keep their own; without simulated
      // nodes they never run, and take no change records of the loop's informers (nobody would
      // empty them).
      agents_(store, clock, events_, options.nodes, options.kubelet, options.log,
              options.node_thread || !options.simulate_nodes ? NodeAgents::Shared{}
                                  : NodeAgents::Shared{{{"nodes", informers_.at("nodes").get()},
                                                        {"pods", informers_.at("pods").get()}},
                                                       &decoded_}),
      live_(store, batch_, clock, {options.scheduler, options.seed, 20000, options.log, options.activity}, metrics_,
            // The scheduler copies each pod it admits into its own cache, so its pods are not kept
            // decoded as well; everything else it decodes (nodes, budgets, groups) is kept.
            [this](const store::Object& o) -> const manifest::LoadResult& {
              return o.resource == "pods" ? decoded_.Decode(o) : decoded_.Get(o);
            },
            [this](const std::string& ns, const std::string& pod, const std::string& uid, const std::string& type,
                   const std::string& reason, const std::string& message) {
              events_.Record({ns, pod, uid, type, reason, message, options_.scheduler.scheduler_name, ""});
              return Status::Ok();
            }) {
  if (options_.simulate_nodes && options_.node_thread) (void)agents_.Start(std::chrono::milliseconds(100));
  if (options_.controllers != nullptr) {
    std::map<std::string, store::Informer*> shared;
    for (auto& [resource, informer] : informers_) shared[resource] = informer.get();
    options_.controllers->Attach(shared, events_);
  }
}

std::map<std::string, std::unique_ptr<store::Informer>> ControlLoop::MakeInformers(store::Store& store,
                                                                                 const LoopJob* controllers) {
  std::map<std::string, std::unique_ptr<store::Informer>> informers;
  for (const char* r : kWatched) informers[r] = std::make_unique<store::Informer>(store, r);
  if (controllers != nullptr) {
    for (const std::string& r : controllers->Watched()) {
      if (!informers.contains(r)) informers[r] = std::make_unique<store::Informer>(store, r);
    }
  }
  return informers;
}

Status ControlLoop::RunOnce() {
  // What a pass writes is read in the next: its informers take the changes, then its controllers
  // and its scheduler read each changed object's tree. So the trees written since the last pass
  // began are kept until this one ends, however long either takes (store/body.h): marking at this
  // pass's start instead let the last pass's trees go before the controllers read them, and they
  // were parsed again (a tenth of the loop's time in the preemption benchmark).
  const auto start = std::chrono::steady_clock::now();
  store::KeepBodyTreesWrittenSince(last_pass_start_.value_or(start));
  last_pass_start_ = start;
  for (auto& [name, informer] : informers_) ARBITER_RETURN_IF_ERROR(informer->Sync());
  if (options_.simulate_nodes && options_.node_thread) {
    if (!std::exchange(agents_active_, true)) agents_.SetActive(true);
    ARBITER_RETURN_IF_ERROR(agents_.LastError());
  } else if (options_.simulate_nodes) {
    ARBITER_RETURN_IF_ERROR(agents_.RunOnce());
    // The scheduler starts from the nodes' writes just made (a pod's Running status, say), not
    // from the versions they replaced, which any write of its own would find stale.
    for (auto& [name, informer] : informers_) ARBITER_RETURN_IF_ERROR(informer->Sync());
  }
  // A controller's error (one object it could not reconcile, retried later) is reported after
  // the pass: it does not hold the scheduler up.
  Status controllers = Status::Ok();
  if (options_.controllers != nullptr) {
    controllers = options_.controllers->RunOnce();
    if (!controllers.ok()) ++metrics_.errors;
    // The scheduler starts from the controllers' writes (new pods, deletions).
    for (auto& [name, informer] : informers_) ARBITER_RETURN_IF_ERROR(informer->Sync());
  }
  if (options_.schedule) {
    Status st = Schedule();
    // Synchronous: after an error, what was queued before it. Asynchronous: the pass sent its
    // writes; the next pass completes them (unless an error cut the pass short).
    Status flushed = batch_.asynchronous() && st.ok() ? Status::Ok() : batch_.Flush();
    ARBITER_RETURN_IF_ERROR(st);
    ARBITER_RETURN_IF_ERROR(flushed);
  }
  // Events are written on the recorder's own thread in the background mode; otherwise now.
  if (!options_.background_events) ARBITER_RETURN_IF_ERROR(events_.Flush());
  if (options_.expire_events) ARBITER_RETURN_IF_ERROR(events_.ExpireOld());
  return controllers;
}

Status ControlLoop::Schedule() {
  // The changes since the last pass go to the live scheduler, which reconciles only those.
  Changes changes;
  for (const char* r : kWatched) changes[r] = informers_[r]->TakeChanged();
  // The informers only controllers watch give them their changes through consumers of their own;
  // this record of theirs is emptied so that it does not keep every key ever changed.
  for (auto& [resource, informer] : informers_) {
    if (!changes.contains(resource)) informer->TakeChanged();
  }
  Status st = live_.Pass(informers_, changes);
  if (!st.ok()) ++metrics_.errors;
  // Forget the decoded form of objects that are gone (of those that changed: a pass costs what
  // changed, not the cluster's size).
  for (const auto& [resource, keys] : changes) {
    const store::Informer& informer = *informers_[resource];
    for (const auto& key : keys) {
      if (informer.Find(key) == nullptr) decoded_.Forget(resource, key.first, key.second);
    }
  }
  return st;
}

void ControlLoop::Pause() {
  if (std::exchange(agents_active_, false)) agents_.SetActive(false);
  // The writes of the scheduler being dropped finish first: their completions use it.
  (void)batch_.Drain();
  live_.Reset();
  if (options_.controllers != nullptr) options_.controllers->Reset();
  // Nothing syncs the informers until leadership returns: their watches stop meanwhile.
  for (auto& [resource, informer] : informers_) informer->Pause();
}

ControlLoop::~ControlLoop() { (void)batch_.Drain(); }

void ControlLoop::SetChangeNotifier(const std::function<void()>& notify) {
  for (auto& [resource, informer] : informers_) {
    // Node leases and metrics change on their own clock; the tick covers them.
    if (resource == "leases" || resource == "podmetrics.metrics.k8s.io") continue;
    informer->SetNotifier(notify);
  }
}

std::string ControlLoop::MetricsText() const {
  return SchedulerMetricsText(metrics_, {batch_.applies(), batch_.writes(), events_.dropped()});
}

}  // namespace arbiter::controlplane
