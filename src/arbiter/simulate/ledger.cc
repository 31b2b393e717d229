// The books of a simulated day.
#include "arbiter/simulate/ledger.h"

#include <algorithm>
#include <cmath>

namespace arbiter::simulate {

Percentiles NearestRank(std::vector<float>& v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return static_cast<double>(v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)]);
  };
  p.p50 = at(0.50);
  p.p95 = at(0.95);
  p.p99 = at(0.99);
  return p;
}

Timestamp NextNodeFailure(Rng& rng, Timestamp after, double per_day) {
  const double unit = (static_cast<double>(rng.Next() >> 11) + 0.5) / 9007199254740992.0;
  const double days = -std::log(unit) / per_day;
  const double us = std::min(days * 86400.0 * kSecond, 1e15);
  return after + static_cast<Timestamp>(us);
}

Ledger::Ledger(Timestamp start, const SimulateOptions& options)
    : start_(start), duration_seconds_(options.duration_seconds) {
  sample_every_ =
      (options.sample_seconds > 0 ? options.sample_seconds : std::max<int64_t>(1, options.duration_seconds / 288)) *
      kSecond;
  next_sample_ = start;
  last_account_ = start;
}

uint32_t Ledger::AddBand(const std::string& name, int32_t priority) {
  auto [it, added] = band_index_.emplace(name, static_cast<uint32_t>(bands_.size()));
  if (added) {
    BandStats b;
    b.report.name = name;
    b.report.priority = priority;
    bands_.push_back(std::move(b));
  }
  return it->second;
}

uint32_t Ledger::Made(uint32_t workload, uint32_t band, int32_t cascade, int64_t milli_cpu, Timestamp now) {
  const uint32_t idx = static_cast<uint32_t>(pods_.size());
  SimPod sp;
  sp.workload = workload;
  sp.band = band;
  sp.cascade = cascade;
  sp.created = now;
  sp.milli_cpu = milli_cpu;
  pods_.push_back(sp);
  ++bands_[band].report.pods;
  ++pending_;
  return idx;
}

void Ledger::Bound(uint32_t pod, Timestamp now) {
  Account(now);
  SimPod& p = pods_[pod];
  p.state = PodState::kRunning;
  p.started = now;
  used_milli_cpu_ += p.milli_cpu;
  --pending_;
  BandStats& b = bands_[p.band];
  ++b.report.scheduled;
  b.pending_seconds.push_back(static_cast<float>(static_cast<double>(now - p.created) / kSecond));
}

void Ledger::Release(const SimPod& p, Timestamp now) {
  Account(now);
  used_milli_cpu_ -= p.milli_cpu;
}

void Ledger::Completed(uint32_t pod, Timestamp now) {
  SimPod& p = pods_[pod];
  Release(p, now);
  p.state = PodState::kCompleted;
  ++bands_[p.band].report.completed;
}

void Ledger::Withdrawn(uint32_t pod) {
  SimPod& p = pods_[pod];
  p.state = PodState::kWithdrawn;
  --pending_;
  ++bands_[p.band].report.withdrawn;
}

void Ledger::Preempted(uint32_t pod, std::optional<uint32_t> by_band, int32_t depth, Timestamp now) {
  if (by_band) {
    BandReport& caused = bands_[*by_band].report;
    ++caused.preemptions_caused;
    caused.cascade_depth = std::max(caused.cascade_depth, depth);
  }
  SimPod& v = pods_[pod];
  v.state = PodState::kTerminating;
  v.evicted_depth = depth;
  BandReport& suffered = bands_[v.band].report;
  ++suffered.preemptions;
  suffered.lost_cpu_seconds += static_cast<double>(v.milli_cpu) / 1000.0 * static_cast<double>(now - v.started) / kSecond;
}

void Ledger::Terminated(uint32_t pod, Timestamp now) {
  SimPod& p = pods_[pod];
  Release(p, now);
  p.state = PodState::kPreempted;
}

void Ledger::NodeLost(uint32_t pod) {
  SimPod& p = pods_[pod];
  p.state = PodState::kLost;
  ++bands_[p.band].report.node_failure_losses;
}

void Ledger::Left(uint32_t pod, Timestamp now) { Release(pods_[pod], now); }

void Ledger::Account(Timestamp now) {
  const double share =
      allocatable_milli_cpu_ > 0 ? static_cast<double>(used_milli_cpu_) / static_cast<double>(allocatable_milli_cpu_) : 0;
  const Timestamp end = start_ + duration_seconds_ * kSecond;
  while (next_sample_ <= now && next_sample_ < end) {
    samples_.push_back({(next_sample_ - start_) / kSecond, share});
    next_sample_ += sample_every_;
  }
  if (now > last_account_) {
    cpu_time_ += share * static_cast<double>(now - last_account_);
    last_account_ = now;
  }
}

Report Ledger::Finish(const std::string& config_name, int64_t nodes, int64_t arrivals, int64_t cycles,
                      int64_t node_failures) {
  Report r;
  r.config = config_name;
  r.nodes = nodes;
  r.duration_seconds = duration_seconds_;
  r.arrivals = arrivals;
  r.cycles = cycles;
  r.node_failures = node_failures;
  for (const SimPod& p : pods_) {
    if (p.state == PodState::kRunning) ++bands_[p.band].report.running_at_end;
    if (p.state == PodState::kPending) ++bands_[p.band].report.pending_at_end;
  }
  std::vector<float> all;
  BandReport& t = r.totals;
  t.name = "total";
  for (BandStats& b : bands_) {
    all.insert(all.end(), b.pending_seconds.begin(), b.pending_seconds.end());
    b.report.pending_seconds = NearestRank(b.pending_seconds);
    const BandReport& x = b.report;
    t.pods += x.pods;
    t.scheduled += x.scheduled;
    t.completed += x.completed;
    t.withdrawn += x.withdrawn;
    t.node_failure_losses += x.node_failure_losses;
    t.running_at_end += x.running_at_end;
    t.pending_at_end += x.pending_at_end;
    t.preemptions += x.preemptions;
    t.preemptions_caused += x.preemptions_caused;
    t.lost_cpu_seconds += x.lost_cpu_seconds;
    t.cascade_depth = std::max(t.cascade_depth, x.cascade_depth);
    r.bands.push_back(x);
  }
  t.pending_seconds = NearestRank(all);
  std::stable_sort(r.bands.begin(), r.bands.end(), [](const BandReport& a, const BandReport& b) {
    return a.priority != b.priority ? a.priority > b.priority : a.name < b.name;
  });
  r.utilisation = duration_seconds_ > 0 ? cpu_time_ / static_cast<double>(duration_seconds_ * kSecond) : 0;
  r.samples = std::move(samples_);
  return r;
}

}  // namespace arbiter::simulate
