// Resource fit filtering and the resource-based scores.
#include "arbiter/sched/plugins/noderesources.h"

#include <array>
#include <cmath>

namespace arbiter::sched::plugins {

NodeResourcesFit::NodeResourcesFit(const model::SchedulerConfig& config)
    : strategy_(config.scoring_strategy) {
  for (const auto& r : config.scoring_resources) {
    using K = ScoredResource::Kind;
    K kind = r.name == model::kResourceCpu      ? K::kCpu
             : r.name == model::kResourceMemory ? K::kMemory
             : (r.name == model::kResourceEphemeralStorage || r.name == model::kResourcePods) ? K::kOther
                                                                                              : K::kScalar;
    resources_.push_back({kind, r.name, r.weight});
  }
  for (const auto& p : config.requested_to_capacity_shape) shape_.push_back({p.utilization, p.score * 10});
}

namespace {

// The reason lists for every combination of the four well-known reasons, built once: most
// rejections share one, so filtering thousands of full nodes allocates nothing.
Status::Reasons WellKnownReasons(unsigned mask) {
  // A plain array of pointers: nothing is destroyed at exit, so the interned lists stay
  // reachable for the whole run (as Status::Interned requires).
  static const std::array<Status::Reasons, 16> all = [] {
    static constexpr const char* kText[] = {"Too many pods", "Insufficient cpu", "Insufficient memory",
                                            "Insufficient ephemeral-storage"};
    std::array<Status::Reasons, 16> v{};
    for (unsigned m = 0; m < 16; ++m) {
      std::vector<std::string> reasons;
      for (unsigned bit = 0; bit < 4; ++bit) {
        if (m & (1u << bit)) reasons.emplace_back(kText[bit]);
      }
      v[m] = Status::Interned(std::move(reasons));
    }
    return v;
  }();
  return all[mask];
}

}  // namespace

Status NodeResourcesFit::FitsRequest(const model::Resources& req, const model::Resources& alloc,
                                     const model::Resources& used, int64_t pod_count) {
  if (state::FitsResources(req, alloc, used, pod_count)) return {};
  return StatusOf(state::CheckResourceFit(req, alloc, used, pod_count));
}

Status NodeResourcesFit::StatusOf(const state::ResourceShortage& s) {
  if (s.fits()) return {};
  const unsigned mask = (s.too_many_pods ? 1u : 0u) | (s.cpu ? 2u : 0u) | (s.memory ? 4u : 0u) |
                        (s.ephemeral_storage ? 8u : 0u);
  const Code code = s.unresolvable ? Code::kUnschedulableAndUnresolvable : Code::kUnschedulable;
  if (s.scalars.empty()) return Status(code, WellKnownReasons(mask));
  std::vector<std::string> reasons = *WellKnownReasons(mask);
  for (const auto& name : s.scalars) reasons.push_back("Insufficient " + name);
  return Status(code, std::move(reasons));
}

Status NodeResourcesFit::Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  return FitsRequest(pod.pod.requests, node.allocatable(), node.requested(),
                     static_cast<int64_t>(node.pods().size()));
}

std::optional<Status> NodeResourcesFit::FilterWithExtraPods(const CycleState&, const PodInfo& pod,
                                                            const NodeInfo& node,
                                                            std::span<const NodeInfo::Nominated* const> extra) const {
  model::Resources used = node.requested();
  for (const NodeInfo::Nominated* n : extra) {
    if (n->has_scalars) {
      used.Add(n->pod->pod.requests);
      continue;
    }
    used.milli_cpu += n->milli_cpu;  // kept inline: no visit to the pod
    used.memory += n->memory;
    used.ephemeral_storage += n->ephemeral_storage;
  }
  return FitsRequest(pod.pod.requests, node.allocatable(), used,
                     static_cast<int64_t>(node.pods().size() + extra.size()));
}

namespace {

// Requested amount (node + pod) and allocatable for a scored resource.
struct Amount {
  int64_t requested = 0;
  int64_t allocatable = 0;
};

// Fit scores with the scheduler's non-zero defaults for CPU and memory. The incoming pod counts
// by its containers alone: upstream's NodeResourcesFit builds its scorer without the
// PodLevelResources flag (v1.37.2 NewFit sets only the scorer's DRA fields, unlike
// NodeResourcesBalancedAllocation), so calculatePodResourceRequest skips pod-level
// spec.resources. The pods on the node count as the cache holds them (pod level included).
Amount ScoringAmount(const PodInfo& pod, const NodeInfo& node,
                     const NodeResourcesFit::ScoredResource& r) {
  const model::Resources& alloc = node.allocatable();
  const model::PodLevelResources* level = pod.pod.pod_level_resources.get();
  using K = NodeResourcesFit::ScoredResource::Kind;
  switch (r.kind) {
    case K::kCpu:
      return {node.non_zero_cpu() + (level != nullptr ? level->container_non_zero_milli_cpu : pod.non_zero_cpu),
              alloc.milli_cpu};
    case K::kMemory:
      return {node.non_zero_memory() + (level != nullptr ? level->container_non_zero_memory : pod.non_zero_memory),
              alloc.memory};
    case K::kOther:
    case K::kScalar: break;
  }
  const model::Resources& own = level != nullptr ? level->container_requests : pod.pod.requests;
  return {node.requested().Get(r.name) + own.Get(r.name), alloc.Get(r.name)};
}

int64_t BrokenLinear(const std::vector<model::UtilizationShapePoint>& shape, int64_t p) {
  if (shape.empty()) return 0;
  if (p <= shape.front().utilization) return shape.front().score;
  for (size_t i = 1; i < shape.size(); ++i) {
    if (p <= shape[i].utilization) {
      const auto& a = shape[i - 1];
      const auto& b = shape[i];
      return a.score + (b.score - a.score) * (p - a.utilization) / (b.utilization - a.utilization);
    }
  }
  return shape.back().score;
}

}  // namespace

ScoreResult NodeResourcesFit::Score(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  int64_t sum = 0;
  int64_t weight_sum = 0;
  for (const auto& r : resources_) {
    const model::PodLevelResources* level = pod.pod.pod_level_resources.get();
    const model::Resources& own = level != nullptr ? level->container_requests : pod.pod.requests;
    if (r.kind == ScoredResource::Kind::kScalar && own.Scalar(r.name) == 0) {
      continue;  // unrequested scalar
    }
    const Amount a = ScoringAmount(pod, node, r);
    if (a.allocatable == 0) continue;
    int64_t s = 0;
    switch (strategy_) {
      case model::ScoringStrategy::kLeastAllocated:
        s = a.requested > a.allocatable ? 0 : (a.allocatable - a.requested) * kMaxNodeScore / a.allocatable;
        break;
      case model::ScoringStrategy::kMostAllocated:
        s = std::min(a.requested, a.allocatable) * kMaxNodeScore / a.allocatable;
        break;
      case model::ScoringStrategy::kRequestedToCapacityRatio: {
        const int64_t util = a.requested > a.allocatable ? 100 : a.requested * 100 / a.allocatable;
        s = BrokenLinear(shape_, util);
        if (s <= 0) continue;  // only positive scores count, weights included
        break;
      }
    }
    sum += s * r.weight;
    weight_sum += r.weight;
  }
  if (weight_sum == 0) return {0, {}};
  if (strategy_ == model::ScoringStrategy::kRequestedToCapacityRatio) {
    return {static_cast<int64_t>(std::llround(static_cast<double>(sum) / static_cast<double>(weight_sum))), {}};
  }
  return {sum / weight_sum, {}};
}

Status NodeResourcesBalancedAllocation::PreScore(CycleState&, const PodInfo& pod,
                                                 std::span<const NodeInfo* const>) const {
  // A pod that requests neither CPU nor memory changes no balance (kube-scheduler >= 1.33).
  if (pod.pod.requests.milli_cpu == 0 && pod.pod.requests.memory == 0) return Status(Code::kSkip);
  return {};
}

namespace {

// 100 * (1 - std-dev of the requested/allocatable fractions of CPU and memory), each fraction
// capped at 1; a resource the node has none of is left out.
int64_t BalanceScore(int64_t cpu, int64_t memory, const model::Resources& alloc) {
  const Amount amounts[2] = {{cpu, alloc.milli_cpu}, {memory, alloc.memory}};
  double fractions[2];
  int n = 0;
  for (const Amount& a : amounts) {
    if (a.allocatable == 0) continue;
    double f = static_cast<double>(a.requested) / static_cast<double>(a.allocatable);
    fractions[n++] = f > 1 ? 1 : f;
  }
  double std_dev = 0;
  if (n == 2) std_dev = std::fabs((fractions[0] - fractions[1]) / 2);
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

}  // namespace

ScoreResult NodeResourcesBalancedAllocation::Score(const CycleState&, const PodInfo& pod,
                                                   const NodeInfo& node) const {
  // Actual requests (no non-zero defaults), CPU and memory. kube-scheduler >= 1.37 scores the
  // change the pod makes to the node's balance: 50 + (50 + with - without) / 2, in [50, 100]
  // (balancedResourceScorer; 75 when the pod leaves the balance as it was).
  const model::Resources& alloc = node.allocatable();
  const int64_t without = BalanceScore(node.requested().milli_cpu, node.requested().memory, alloc);
  const int64_t with = BalanceScore(node.requested().milli_cpu + pod.pod.requests.milli_cpu,
                                    node.requested().memory + pod.pod.requests.memory, alloc);
  return {kMaxNodeScore / 2 + (kMaxNodeScore / 2 + with - without) / 2, {}};
}

}  // namespace arbiter::sched::plugins
