// The ControllerManager: kube-controller-manager's role in `arbiter serve`. It holds the
// controllers, hands each the changes of the resources it watches (through a change consumer of
// its own on each of the control loop's informers), and runs one pass of each, in the order they
// were added, per control-loop pass. The loop runs only on the Lease holder, so controllers run
// only there; a replica that loses the lease resets them, and its next pass as leader starts
// from the informers' whole state.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "arbiter/controllers/controller.h"
#include "arbiter/controlplane/control_loop.h"

namespace arbiter::controllers {

class ControllerManager final : public controlplane::LoopJob {
 public:
  ControllerManager(const Clock& clock, ApiClient& api, LogSink log) : clock_(clock), api_(api), log_(std::move(log)) {}

  void Add(std::unique_ptr<Controller> c) { controllers_.push_back({std::move(c), {}}); }
  bool empty() const { return controllers_.empty(); }
  // Every resource some controller watches: the loop keeps an informer for each.
  std::set<std::string> Watched() const override;
  // Gives the manager the loop's informers (one for each resource of Watched()) and its events.
  void Attach(const std::map<std::string, store::Informer*>& informers, controlplane::EventRecorder& events) override;
  // One pass of every controller. REQUIRES: the informers are synced. Returns the first error;
  // every controller runs whatever an earlier one returned.
  Status RunOnce() override;
  // Leadership lost: every controller forgets its state; the next pass sees every object.
  void Reset() override;
  uint64_t passes() const { return passes_; }

 private:
  struct Entry {
    std::unique_ptr<Controller> controller;
    std::map<std::string, size_t> consumers;  // change consumer per watched resource
    bool first = true;                        // the next pass hands it every key
  };
  const Clock& clock_;
  ApiClient& api_;
  controlplane::EventRecorder* events_ = nullptr;
  LogSink log_;
  std::vector<Entry> controllers_;
  std::map<std::string, store::Informer*> informers_;
  uint64_t passes_ = 0;
};

// Adds kube-controller-manager's controllers that Arbiter has, in the order each pass runs
// them: namespace, garbage collector, Deployment, ReplicaSet, StatefulSet, Job, CronJob, disruption, resource quota, node lifecycle, taint eviction, pod
// garbage collector.
void AddDefaultControllers(ControllerManager& manager);

}  // namespace arbiter::controllers
