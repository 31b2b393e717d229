// Leader election among `arbiter serve` replicas that share a store, through a
// coordination.k8s.io/v1 Lease as kube-scheduler does (client-go's leaderelection): the holder
// renews the lease every retry period; a candidate takes it over only after observing no renewal
// for a whole lease duration (measured on its own clock, so clock skew between replicas does not
// matter); the holder stops acting as leader when it has not renewed within the renew deadline,
// which is shorter than the lease duration, so it has stopped before anyone else can start. Every
// write is conditional on the revision read, so two candidates never both win.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "arbiter/base/time.h"
#include "arbiter/store/store.h"

namespace arbiter::controlplane {

struct LeaderElectionOptions {
  std::string identity;                       // unique per replica
  std::string ns = "kube-system";
  std::string name = "arbiter-scheduler";
  Duration lease_duration = 15 * kSecond;     // kube-scheduler's defaults
  Duration renew_deadline = 10 * kSecond;
  Duration retry_period = 2 * kSecond;
  std::function<void(const std::string& msg, const std::string& kv)> log;
};

class LeaderElector {
 public:
  LeaderElector(store::Store& store, const Clock& clock, LeaderElectionOptions options);
  // Tries to acquire or renew the lease when a retry period has passed since the last try.
  void Tick();
  // Whether this replica may act as the leader now.
  bool IsLeader() const;
  const std::string& identity() const { return options_.identity; }
  uint64_t transitions() const { return transitions_; }

 private:
  bool TryAcquireOrRenew(Timestamp now);

  store::Store& store_;
  const Clock& clock_;
  LeaderElectionOptions options_;
  Timestamp last_try_ = 0;
  bool tried_ = false;
  Timestamp renewed_at_ = 0;  // last successful write of the lease by us
  bool holding_ = false;
  std::shared_ptr<store::Object> held_;  // the lease as our last write stored it
  // The other holder's record as last observed, and when we observed it change.
  std::string observed_record_;
  Timestamp observed_at_ = 0;
  uint64_t transitions_ = 0;
};

}  // namespace arbiter::controlplane
