// The simulated node agents of `arbiter serve` as one actor with its own view of the store, as
// KWOK and the kubelets are processes of their own beside kube-scheduler: the NodeSimulator
// (readiness, heartbeats, Leases, pods started and deleted) and the kubelets' PressureEviction,
// over informers and a WriteBatch of their own. Events go to the shared (thread-safe)
// EventRecorder. Driven on the control loop's own thread, the agents may instead share the loop's
// informers and decode cache (Shared): one watch and one decoded form per object, not two.
//
// Two ways to drive it:
//   * RunOnce, on the caller's thread (the control loop's inline mode, and tests);
//   * Start: a thread of its own runs a pass whenever its informers report news, and at least
//     every `tick`, while it is active (SetActive: only the leading replica simulates nodes), so
//     that the node agents' writes (a Lease renewal per node every 10 s, every pod's start) never
//     take the scheduler's time. The agents write on their own view like any other client: a
//     write that loses a race to the scheduler's is made again on their next pass (and the
//     scheduler's evictions are retried the same way).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "arbiter/base/time.h"
#include "arbiter/controlplane/decode_cache.h"
#include "arbiter/controlplane/event_recorder.h"
#include "arbiter/controlplane/node_simulator.h"
#include "arbiter/controlplane/pressure_eviction.h"
#include "arbiter/controlplane/write_batch.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/store/informer.h"
#include "arbiter/store/store.h"

namespace arbiter::controlplane {

// What node agents borrow from their owner instead of keeping their own: informers by resource
// (read through a change consumer of the agents' own) and the decode cache. Only for RunOnce on
// the owner's thread: Start refuses node agents that borrow.
struct NodeAgentsShared {
  std::map<std::string, store::Informer*> informers;
  DecodeCache* decoded = nullptr;
};

class NodeAgents {
 public:
  using Shared = NodeAgentsShared;
  NodeAgents(store::Store& store, const Clock& clock, EventRecorder& events, NodeSimOptions nodes,
             model::KubeletConfig kubelet, PressureEviction::Log log, Shared shared = {});
  ~NodeAgents();  // stops the thread, if started

  // One pass on the caller's thread: sync, simulate, write. Not while the thread runs.
  Status RunOnce();
  // Runs passes on a thread of the agents' own while active (see the top of this file); the
  // first error of a pass is kept for LastError. FailedPrecondition when the agents borrow.
  Status Start(std::chrono::milliseconds tick);
  void SetActive(bool active);
  Status LastError();

 private:
  void Loop(std::chrono::milliseconds tick);
  void Wake();

  store::Store& store_;
  WriteBatch batch_;
  std::map<std::string, std::unique_ptr<store::Informer>> owned_;  // those not borrowed
  std::map<std::string, store::Informer*> informers_;  // nodes, pods, leases, pod metrics
  std::map<std::string, size_t> consumer_;             // the agents' change consumer of each
  bool borrows_ = false;
  DecodeCache own_decoded_;
  DecodeCache* decoded_ = &own_decoded_;
  NodeSimulator nodes_;
  PressureEviction pressure_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false, active_ = false, stopping_ = false;  // guarded by mu_
  Status error_ = Status::Ok();                             // guarded by mu_
  std::thread thread_;
};

}  // namespace arbiter::controlplane
