// Simulated nodes, as KWOK makes them, for `arbiter serve` without real node agents:
//   * node IPAM (kube-controller-manager's range allocator): a node without spec.podCIDR gets
//     the lowest free /24 of the cluster CIDR;
//   * node initialisation: Ready=True and the pressure conditions False, an InternalIP (the
//     lowest free address of the node network) and a Hostname address, the kubelet endpoint
//     port, status.nodeInfo;
//   * heartbeats on the real clock: a Lease per node in kube-node-lease (holder the node,
//     leaseDurationSeconds 40, renewed every 10 s, owned by the Node) and the conditions'
//     lastHeartbeatTime refreshed every 5 minutes (the kubelet's nodeStatusReportFrequency);
//   * pods bound to a node start Running with a pod IP unique on the node, the lowest free
//     address of its podCIDR (freed when the pod ends), hostIP the node's InternalIP, and
//     Ready containers;
//   * a terminating pod gets the kubelet's Killing event per container, and is deleted when its
//     grace period ends; one that still has finalizers is marked ended instead (phase Failed
//     unless it had finished, containers terminated with exit code 137, deletionGracePeriodSeconds
//     0), as the kubelet's final status and deletion leave it, and the last finalizer's removal
//     deletes it;
//   * a node annotated arbiter.dev/stopped: "true" is switched off: no Lease renewal, no pod
//     started (the node lifecycle controller then marks it unreachable);
//   * simulated work: a pod annotated arbiter.dev/run-duration (a Go duration, "30s", "2m")
//     runs that long, then its containers exit with arbiter.dev/exit-code (default 0): with
//     restartPolicy Never, or OnFailure and exit code 0, the pod ends (Succeeded for 0, else
//     Failed; Ready False with reason PodCompleted); otherwise the containers restart (their
//     restartCount goes up) and run again. A pod that does not restart (restartPolicy Never or
//     OnFailure: a Job's, `kubectl run --restart=Never`) and has no annotation runs
//     NodeSimOptions::default_run_duration (0: until deleted) and exits 0;
//   * each container's log (NodeSimOptions::logs, what `kubectl logs` reads): its start, its
//     simulated work, the termination signal with the grace period, its exit and restarts.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "arbiter/api/container_logs.h"
#include "arbiter/base/ipv4.h"
#include "arbiter/base/time.h"
#include "arbiter/controlplane/write_batch.h"
#include "arbiter/store/informer.h"
#include "arbiter/store/store.h"

namespace arbiter::controlplane {

struct NodeSimOptions {
  std::string cluster_cidr = "10.64.0.0/10";  // pod CIDRs, one /24 per node
  std::string node_cidr = "10.0.0.0/16";      // node InternalIPs
  int64_t lease_duration_seconds = 40;
  Duration lease_renew_interval = 10 * kSecond;           // a quarter of the duration, as the kubelet
  Duration status_report_interval = 5 * kMinute;          // nodeStatusReportFrequency
  std::string kubelet_version = "v1.32.0-arbiter";
  // How long a pod that does not restart runs when it has no arbiter.dev/run-duration (0: until
  // deleted); serve's --default-run-duration.
  Duration default_run_duration = 0;
  // Where each container's log goes (pods/log serves it); none when null.
  api::ContainerLogs* logs = nullptr;
};

// Records an event about a pod: namespace, name, uid, type, reason, message, component, host.
using PodEventRecorder = std::function<Status(const std::string&, const std::string&, const std::string&,
                                              const std::string&, const std::string&, const std::string&,
                                              const std::string&, const std::string&)>;


class NodeSimulator {
 public:
  // Its writes are queued in `batch`; the caller flushes it after Run.
  NodeSimulator(WriteBatch& batch, const Clock& clock, NodeSimOptions options, PodEventRecorder record);
  // One pass over the informers' current state; writes what is due now. Nodes, Leases and pods
  // are followed through change consumers of their informers (added on the first call), so that
  // a pass costs what changed and what is due, not the cluster's size: a node's body is read when
  // it changes and when its status report or Lease renewal is due, not each pass.
  Status Run(store::Informer& nodes, store::Informer& pods, store::Informer& leases);

 private:
  using Key = store::Informer::Key;
  static constexpr size_t kNoConsumer = static_cast<size_t>(-1);
  struct Killing {
    std::string ns, name, uid, message, node;
  };
  static constexpr Timestamp kNever = std::numeric_limits<Timestamp>::max();
  // What a pass needs of a node, taken from the version the informer last delivered.
  struct NodeFacts {
    bool stopped = false;
    std::string pod_cidr, internal_ip, uid;
    Timestamp status_due = kNever;  // when InitializeNodes looks at it next (0: every pass)
  };
  // Applies the nodes and Leases changed since the last pass to what is kept of them.
  void FollowNodes(store::Informer& nodes, store::Informer& leases);
  void ObserveNode(const std::string& name, const store::Object* n);
  void ObserveLease(const std::string& node, const store::Informer& leases);
  Status InitializeNodes(const store::Informer& nodes);
  Status RenewLeases(const store::Informer& nodes, const store::Informer& leases);
  Status RunPods(store::Informer& pods);
  // Brings what the simulator keeps about one pod in line with `p` (nullptr: gone).
  void Observe(const Key& key, const store::Object* p);
  // The pod's simulated work ended now: its containers exit (and the pod ends, or they restart).
  // The run time a pod's containers work for before they exit (nullopt: until deleted).
  std::optional<Duration> RunTime(const nlohmann::json& body) const;
  void Log(const Key& key, const std::string& uid, const std::string& container, const std::string& text);
  void FinishRun(const store::Object& p, const std::string& now_text);
  // The grace period of a pod with finalizers ended: it is marked as the kubelet leaves it.
  void EndWithFinalizers(const store::Object& p, const std::string& now_text);

  WriteBatch& batch_;
  const Clock& clock_;
  NodeSimOptions options_;
  PodEventRecorder record_;
  size_t consumer_ = kNoConsumer;  // of the pods informer's changes
  size_t node_consumer_ = kNoConsumer, lease_consumer_ = kNoConsumer;
  std::map<std::string, NodeFacts> node_facts_;                // by node name
  std::set<std::pair<Timestamp, std::string>> status_due_;     // nodes by NodeFacts::status_due
  std::set<std::pair<Timestamp, std::string>> lease_due_;      // running nodes by their Lease's renewal
  std::map<std::string, Timestamp> lease_due_of_;
  std::set<std::string> orphan_leases_;  // node Leases whose node is gone, deleted each pass until gone
  std::map<Key, std::string> killing_sent_;  // terminating pods that have their Killing events (uid)
  std::vector<Killing> killing_;              // Killing events due
  std::set<Key> to_start_;                    // bound pods still Pending
  std::set<std::pair<Timestamp, Key>> deadlines_;  // terminating pods by the end of their grace
  std::set<std::pair<Timestamp, Key>> runs_;       // running pods with simulated work, by its end
  std::map<Key, Timestamp> run_end_of_;
  std::map<Key, std::string> logged_;
  std::set<Key> ephemeral_;  // running pods with ephemeral containers to start  // pods with container logs (uid), forgotten when gone
  std::map<Key, Timestamp> deadline_of_;
  std::map<Key, std::pair<std::string, uint32_t>> ip_of_;  // pod IPs in use: node and address
  std::map<std::string, std::set<uint32_t>> used_ips_;     // by node
};

}  // namespace arbiter::controlplane
