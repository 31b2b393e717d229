// The simulated kubelets' node-pressure evictions in `arbiter serve`: from the PodMetrics usage
// in the store, each node's kubelet evicts what kubelet::NodePressureEvictions ranks (see
// kubelet/node_pressure.h for the rule). An evicted pod becomes Failed with reason Evicted, the
// kubelet's message, the DisruptionTarget condition (reason TerminationByKubelet), Ready False
// and its containers terminated with exit code 137; an Evicted event (source kubelet, host the
// node) is recorded. Pods already terminal or terminating are left alone.
//
// Writes are queued in the WriteBatch, each conditional on the version read; a pod that changed
// meanwhile is considered again on the next pass. Not thread-safe.
#pragma once

#include <functional>
#include <string>

#include "arbiter/base/time.h"
#include "arbiter/controlplane/event_recorder.h"
#include "arbiter/controlplane/write_batch.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/model/objects.h"
#include "arbiter/store/informer.h"

namespace arbiter::controlplane {

class PressureEviction {
 public:
  // The decoded form of a stored object (cached by the caller per revision).
  using Decode = std::function<const manifest::LoadResult&(const store::Object&)>;
  using Log = std::function<void(const std::string& msg, const std::string& kv)>;

  PressureEviction(WriteBatch& batch, EventRecorder& events, const Clock& clock, model::KubeletConfig config,
                   Decode decode, Log log = nullptr);
  // One pass over the informers' current state: queues the evictions due now.
  void Run(const store::Informer& nodes, const store::Informer& pods, const store::Informer& pod_metrics);

 private:
  WriteBatch& batch_;
  EventRecorder& events_;
  const Clock& clock_;
  model::KubeletConfig config_;
  Decode decode_;
  Log log_;
};

}  // namespace arbiter::controlplane
