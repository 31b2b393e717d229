// The Lease-based leader election of `arbiter serve`.
#include "arbiter/controlplane/leader_election.h"

namespace arbiter::controlplane {

namespace {

using Json = nlohmann::json;

std::string MicroTime(Timestamp t) {
  // metav1.MicroTime: RFC 3339 with microseconds.
  const std::string s = FormatRfc3339(t / kSecond * kSecond);
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%06lld", static_cast<long long>(t % kSecond));
  return s.substr(0, s.size() - 1) + frac + "Z";
}

}  // namespace

LeaderElector::LeaderElector(store::Store& store, const Clock& clock, LeaderElectionOptions options)
    : store_(store), clock_(clock), options_(std::move(options)) {}

void LeaderElector::Tick() {
  const Timestamp now = clock_.Now();
  if (tried_ && now - last_try_ < options_.retry_period) return;
  tried_ = true;
  last_try_ = now;
  const bool was = IsLeader();
  const bool ok = TryAcquireOrRenew(now);
  if (ok) renewed_at_ = now;
  const bool is = IsLeader();
  if (is != was && options_.log) {
    options_.log(is ? "Acquired the lease: scheduling" : "Lost the lease: stopped scheduling",
                 "lease=\"" + options_.ns + "/" + options_.name + "\" identity=\"" + options_.identity + "\"");
  }
}

bool LeaderElector::IsLeader() const {
  return holding_ && clock_.Now() - renewed_at_ < options_.renew_deadline;
}

bool LeaderElector::TryAcquireOrRenew(Timestamp now) {
  const std::string now_text = MicroTime(now);
  const int64_t seconds = options_.lease_duration / kSecond;
  if (IsLeader() && held_) {
    // The fast path of client-go's elector: the holder of a fresh lease renews the record it
    // wrote last, without reading it first; a write that lost (someone else wrote the lease)
    // falls back to reading it.
    Json lease = held_->body.Copy();
    lease["spec"]["renewTime"] = now_text;
    auto renewed = store_.Update("leases", options_.ns, options_.name, lease, held_->revision);
    if (renewed.ok()) {
      held_ = std::make_shared<store::Object>(std::move(*renewed));
      return true;
    }
    // The store did not answer: this try failed; leadership lasts until the renew deadline.
    if (renewed.status().code() == StatusCode::kUnavailable) return false;
  }
  held_.reset();
  auto current = store_.Get("leases", options_.ns, options_.name);
  if (!current.ok()) {
    // The store did not answer: this try failed; a holder stays one until its renew deadline
    // passes, as client-go's elector keeps trying until then.
    if (current.status().code() != StatusCode::kNotFound) return false;
    Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", options_.name}, {"namespace", options_.ns}, {"creationTimestamp", FormatRfc3339(now / kSecond * kSecond)}}},
                  {"spec",
                   {{"holderIdentity", options_.identity},
                    {"leaseDurationSeconds", seconds},
                    {"acquireTime", now_text},
                    {"renewTime", now_text},
                    {"leaseTransitions", 0}}}};
    auto created = store_.Create("leases", options_.ns, options_.name, lease);
    holding_ = created.ok();
    if (holding_) {
      ++transitions_;
      held_ = std::make_shared<store::Object>(std::move(*created));
    }
    return holding_;
  }
  Json lease = current->body.Copy();
  Json& spec = lease["spec"];
  const std::string holder = spec.value("holderIdentity", "");
  if (holder != options_.identity) {
    holding_ = false;
    // Expiry is judged on our own clock: from when we last saw the record change.
    const std::string record = spec.dump();
    if (record != observed_record_) {
      observed_record_ = record;
      observed_at_ = now;
    }
    const Duration duration = spec.value("leaseDurationSeconds", seconds) * kSecond;
    if (!holder.empty() && now < observed_at_ + duration) return false;
    spec["holderIdentity"] = options_.identity;
    spec["acquireTime"] = now_text;
    spec["leaseTransitions"] = spec.value("leaseTransitions", int64_t{0}) + 1;
  }
  spec["renewTime"] = now_text;
  spec["leaseDurationSeconds"] = seconds;
  auto updated = store_.Update("leases", options_.ns, options_.name, lease, current->revision);
  if (!updated.ok() && updated.status().code() == StatusCode::kUnavailable) return false;
  const bool was_holding = holding_;
  holding_ = updated.ok();
  if (holding_ && !was_holding) ++transitions_;
  if (holding_) held_ = std::make_shared<store::Object>(std::move(*updated));
  return holding_;
}

}  // namespace arbiter::controlplane
