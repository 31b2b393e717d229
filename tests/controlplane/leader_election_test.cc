// Leader election over a shared store: one holder at a time, takeover only after a whole lease
// duration without renewal, and the old holder stops before a new one can start.
#include "testing/forwarding_store.h"
#include "arbiter/controlplane/leader_election.h"

#include <gtest/gtest.h>

namespace arbiter::controlplane {
namespace {

constexpr Timestamp kT0 = 1'800'000'000LL * kSecond;

LeaderElectionOptions Options(const std::string& identity) {
  LeaderElectionOptions o;
  o.identity = identity;
  return o;  // 15 s lease, 10 s renew deadline, 2 s retry
}

TEST(LeaderElection, TheFirstCandidateAcquiresAndTheSecondWaits) {
  auto store = store::NewMemoryStore();
  VirtualClock clock(kT0);
  LeaderElector a(*store, clock, Options("a")), b(*store, clock, Options("b"));
  a.Tick();
  b.Tick();
  EXPECT_TRUE(a.IsLeader());
  EXPECT_FALSE(b.IsLeader());
  // While a renews every retry period, b never takes over.
  for (int i = 0; i < 30; ++i) {
    clock.Advance(2 * kSecond);
    a.Tick();
    b.Tick();
    ASSERT_TRUE(a.IsLeader()) << i;
    ASSERT_FALSE(b.IsLeader()) << i;
  }
  auto lease = store->Get("leases", "kube-system", "arbiter-scheduler");
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ((*lease->body.tree())["spec"]["holderIdentity"], "a");
  EXPECT_EQ((*lease->body.tree())["spec"]["leaseDurationSeconds"], 15);
  EXPECT_EQ((*lease->body.tree())["apiVersion"], "coordination.k8s.io/v1");
}

TEST(LeaderElection, AStalledHolderStopsBeforeTheOtherCanStart) {
  auto store = store::NewMemoryStore();
  VirtualClock clock(kT0);
  LeaderElector a(*store, clock, Options("a")), b(*store, clock, Options("b"));
  a.Tick();
  b.Tick();  // b observes a's record now
  ASSERT_TRUE(a.IsLeader());
  // a stops renewing (paused or killed). Every second, check that never both are leaders, and
  // record when a stops and when b starts.
  Timestamp a_stopped = 0, b_started = 0;
  for (int s = 1; s <= 40; ++s) {
    clock.Advance(kSecond);
    b.Tick();
    if (a_stopped == 0 && !a.IsLeader()) a_stopped = clock.Now();
    if (b_started == 0 && b.IsLeader()) b_started = clock.Now();
    ASSERT_FALSE(a.IsLeader() && b.IsLeader()) << "two leaders at +" << s << "s";
  }
  EXPECT_EQ(a_stopped - kT0, 10 * kSecond);  // the renew deadline
  ASSERT_NE(b_started, 0);
  EXPECT_GE(b_started - kT0, 15 * kSecond);  // a whole lease duration unrenewed
  EXPECT_LE(b_started - kT0, 17 * kSecond);  // within a retry period of expiry
  auto lease = store->Get("leases", "kube-system", "arbiter-scheduler");
  EXPECT_EQ((*lease->body.tree())["spec"]["holderIdentity"], "b");
  EXPECT_EQ((*lease->body.tree())["spec"]["leaseTransitions"], 1);
  // a comes back: it sees b's lease and does not take it.
  a.Tick();
  EXPECT_FALSE(a.IsLeader());
}

TEST(LeaderElection, TwoCandidatesRacingForAnExpiredLeaseNeverBothWin) {
  auto store = store::NewMemoryStore();
  VirtualClock clock(kT0);
  LeaderElector old(*store, clock, Options("old"));
  old.Tick();
  LeaderElector b(*store, clock, Options("b")), c(*store, clock, Options("c"));
  b.Tick();
  c.Tick();
  clock.Advance(20 * kSecond);
  b.Tick();
  c.Tick();
  EXPECT_NE(b.IsLeader(), c.IsLeader());
  EXPECT_FALSE(old.IsLeader());
}

// A store that stops answering (its API server restarting): every call Unavailable while down.
using Json = nlohmann::json;

class FlakyStore final : public test_support::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  bool down = false;
  StatusOr<store::Object> Create(const std::string& r, const std::string& ns, const std::string& n, Json b) override {
    if (down) return Unavailable("down");
    return inner_.Create(r, ns, n, std::move(b));
  }
  StatusOr<store::Object> Get(const std::string& r, const std::string& ns, const std::string& n) override {
    if (down) return Unavailable("down");
    return inner_.Get(r, ns, n);
  }
  StatusOr<store::Object> Update(const std::string& r, const std::string& ns, const std::string& n, Json b,
                                 int64_t rev) override {
    if (down) return Unavailable("down");
    return inner_.Update(r, ns, n, std::move(b), rev);
  }
  StatusOr<store::Object> Delete(const std::string& r, const std::string& ns, const std::string& n, int64_t rev) override {
    if (down) return Unavailable("down");
    return inner_.Delete(r, ns, n, rev);
  }
};

TEST(LeaderElection, AHolderRidesOutAnUnreachableStoreUntilItsRenewDeadline) {
  auto inner = store::NewMemoryStore();
  FlakyStore store(*inner);
  VirtualClock clock(kT0);
  LeaderElector a(store, clock, Options("a"));
  a.Tick();
  ASSERT_TRUE(a.IsLeader());
  // Down for 6 s (a restart): tries fail, but a stays the leader and renews once it is back.
  store.down = true;
  for (int i = 0; i < 3; ++i) {
    clock.Advance(2 * kSecond);
    a.Tick();
    ASSERT_TRUE(a.IsLeader()) << i;
  }
  store.down = false;
  clock.Advance(2 * kSecond);
  a.Tick();
  EXPECT_TRUE(a.IsLeader());
  EXPECT_EQ(a.transitions(), 1u);
  // Down past the renew deadline: a stops leading 10 s after its last renewal.
  store.down = true;
  const Timestamp renewed = clock.Now();
  while (a.IsLeader()) {
    clock.Advance(kSecond);
    a.Tick();
  }
  EXPECT_EQ(clock.Now() - renewed, 10 * kSecond);
}

}  // namespace
}  // namespace arbiter::controlplane
