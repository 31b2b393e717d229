// Nomad's victim selection.
#include "arbiter/nomad/preemptor.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "arbiter/model/best_fit_victims.h"
#include "arbiter/model/exact_victims.h"

namespace arbiter::nomad {

double ResourceDistance(const Resources& need, const Resources& alloc) {
  return model::NormalizedDistance({{need.cpu, alloc.cpu}, {need.memory, alloc.memory}, {need.disk, alloc.disk}});
}

double Preemptor::Penalty(const Alloc& a) const {
  if (a.max_parallel <= 0 || plan_preemptions_.empty()) return 0;
  auto it = plan_preemptions_.find(a.ns + "/" + a.job_id + "/" + a.task_group);
  const int64_t n = it == plan_preemptions_.end() ? 0 : it->second;
  return n >= a.max_parallel ? 50.0 * static_cast<double>(n + 1 - a.max_parallel) : 0.0;
}

namespace {

// What model::BestFitVictims needs to know of allocations (§4).
struct TaskGroupPolicy {
  using Amount = Resources;
  struct Candidate {
    const Alloc* alloc;
    double penalty;  // the max_parallel penalty, counted once per call as Nomad does
  };
  Amount Frees(const Candidate& c) const { return c.alloc->resources; }
  double Distance(const Amount& need, const Candidate& c) const { return ResourceDistance(need, c.alloc->resources) + c.penalty; }
  double AskDistance(const Amount& ask, const Candidate& c) const { return ResourceDistance(ask, c.alloc->resources); }
  void Add(Amount& a, const Amount& b) const { a += b; }
  void Sub(Amount& a, const Amount& b) const { a -= b; }
  bool Covers(const Amount& available, const Amount& ask) const { return available.Covers(ask); }
};

}  // namespace

std::vector<const Alloc*> Preemptor::ForTaskGroup(const Resources& capacity, const std::vector<const Alloc*>& proposed,
                                                  const Resources& ask) const {
  // Available: capacity less every candidate (not the placing job's own allocations: §12 #1).
  Resources available = capacity;
  std::map<int64_t, std::vector<TaskGroupPolicy::Candidate>> buckets;  // by priority
  for (const Alloc* a : proposed) {
    if (a->ns == job_.ns && a->job_id == job_.id) continue;
    available -= a->resources;
    if (Eligible(*a)) buckets[a->job_priority].push_back({a, Penalty(*a)});
  }
  std::vector<const Alloc*> victims;
  std::vector<const Alloc*> eligible;
  for (const auto& [priority, list] : buckets) {
    for (const auto& c : list) eligible.push_back(c.alloc);
  }
  for (const auto& c : model::BestFitVictims(std::move(buckets), available, ask, TaskGroupPolicy{})) {
    victims.push_back(c.alloc);
  }
  if (!optimal_ || victims.empty()) return victims;
  // What must be freed in each dimension the ask names.
  std::vector<model::ExactAmount> need;
  std::vector<int64_t Resources::*> dims;
  for (int64_t Resources::* d : {&Resources::cpu, &Resources::memory, &Resources::disk}) {
    if (ask.*d <= 0) continue;
    need.push_back(model::ExactAmount{ask.*d} - model::ExactAmount{available.*d});
    dims.push_back(d);
  }
  model::ExactVictimSearch<const Alloc*> search(std::move(need), 0, {}, kOptimalSteps);
  std::vector<model::ExactVictimSearch<const Alloc*>::Member> members;
  for (const Alloc* v : victims) members.push_back({v->job_priority, 0, nullptr});
  for (const Alloc* a : eligible) {
    std::vector<model::ExactAmount> frees;
    for (auto d : dims) frees.push_back(a->resources.*d);
    search.Add(a, a->job_priority, 0, std::move(frees), {});
  }
  if (!search.Run(search.RankOf(members)) || !search.improved()) return victims;  // Nomad's stands
  return search.Victims();
}

std::vector<const Alloc*> Preemptor::ForNetwork(const Node& node, const std::vector<const Alloc*>& proposed,
                                                const NetworkUse& ask, const std::vector<NetworkUse>& held) const {
  // Candidates per device, from each allocation's first network; ineligible holders block ports.
  std::map<std::string, std::vector<const Alloc*>> by_device;
  std::map<std::string, std::set<int64_t>> blocked;
  std::map<std::string, int64_t> used;
  for (const auto& n : held) {
    used[n.device] += n.mbits;
    blocked[n.device].insert(n.reserved_ports.begin(), n.reserved_ports.end());
  }
  for (const Alloc* a : proposed) {
    for (const auto& n : a->networks) used[n.device] += n.mbits;
    if (a->networks.empty()) continue;
    const NetworkUse& first = a->networks.front();
    if (!Eligible(*a)) {
      blocked[first.device].insert(first.reserved_ports.begin(), first.reserved_ports.end());
      continue;
    }
    by_device[first.device].push_back(a);
  }
  for (const auto& dev : node.networks) {
    if (dev.mbits < ask.mbits) continue;
    const int64_t free = dev.mbits - used[dev.device];
    std::vector<const Alloc*> candidates = by_device[dev.device];
    std::vector<const Alloc*> victims;
    int64_t freed = 0;
    bool port_blocked = false;
    for (int64_t port : ask.reserved_ports) {
      if (node.reserved_ports.count(port) || blocked[dev.device].count(port)) {
        port_blocked = true;
        break;
      }
      auto holder = std::find_if(candidates.begin(), candidates.end(), [&](const Alloc* a) {
        const auto& p = a->networks.front().reserved_ports;
        return std::find(p.begin(), p.end(), port) != p.end();
      });
      if (holder == candidates.end()) continue;
      victims.push_back(*holder);
      freed += (*holder)->networks.front().mbits;
      candidates.erase(holder);
    }
    if (port_blocked) continue;
    auto bandwidth_distance = [&](const Alloc* a) {
      if (ask.mbits <= 0) return 0.0;
      return std::abs(static_cast<double>(ask.mbits - a->networks.front().mbits)) / static_cast<double>(ask.mbits);
    };
    if (freed + free < ask.mbits) {
      std::map<int32_t, std::vector<const Alloc*>> buckets;
      for (const Alloc* a : candidates) buckets[a->job_priority].push_back(a);
      for (auto& [priority, bucket] : buckets) {
        std::stable_sort(bucket.begin(), bucket.end(), [&](const Alloc* a, const Alloc* b) {
          return bandwidth_distance(a) + Penalty(*a) < bandwidth_distance(b) + Penalty(*b);
        });
        for (const Alloc* a : bucket) {
          if (freed + free >= ask.mbits) break;
          victims.push_back(a);
          freed += a->networks.front().mbits;
        }
        if (freed + free >= ask.mbits) break;
      }
    }
    if (freed + free < ask.mbits) continue;
    // The final filter looks at bandwidth only (§12 #2); with no bandwidth asked it keeps all.
    if (ask.mbits > 0) {
      std::stable_sort(victims.begin(), victims.end(),
                       [&](const Alloc* a, const Alloc* b) { return bandwidth_distance(a) > bandwidth_distance(b); });
      int64_t acc = free;
      for (size_t i = 0; i < victims.size(); ++i) {
        acc += victims[i]->networks.front().mbits;
        if (acc >= ask.mbits) {
          victims.resize(i + 1);
          break;
        }
      }
    }
    return victims;
  }
  return {};
}

std::vector<const Alloc*> Preemptor::ForDevice(const Node& node, const std::vector<const Alloc*>& proposed,
                                               const DeviceRequest& request,
                                               const std::map<std::string, int64_t>& free) const {
  struct Option {
    std::vector<std::pair<const Alloc*, int64_t>> allocs;
    int64_t net_priority = 0;
  };
  std::vector<Option> options;
  for (const auto& model : node.devices) {
    if (!model.Matches(request.name)) continue;
    const std::string id = model.Id();
    std::map<int32_t, std::vector<std::pair<const Alloc*, int64_t>>> buckets;
    for (const Alloc* a : proposed) {
      if (!Eligible(*a)) continue;
      int64_t held = 0;
      for (const auto& d : a->devices) held += d.model == id ? d.instances : 0;
      if (held > 0) buckets[a->job_priority].push_back({a, held});
    }
    auto f = free.find(id);
    int64_t have = f == free.end() ? 0 : f->second;
    Option o;
    for (auto& [priority, bucket] : buckets) {
      for (const auto& e : bucket) {
        if (have >= request.count) break;
        o.allocs.push_back(e);
        have += e.second;
      }
      if (have >= request.count) break;
    }
    if (have < request.count || o.allocs.empty()) continue;
    // Trim: most instances first, until the kept ones alone reach the count.
    std::stable_sort(o.allocs.begin(), o.allocs.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    int64_t kept = 0;
    for (size_t i = 0; i < o.allocs.size(); ++i) {
      kept += o.allocs[i].second;
      if (kept >= request.count) {
        o.allocs.resize(i + 1);
        break;
      }
    }
    std::set<int32_t> priorities;
    for (const auto& e : o.allocs) priorities.insert(e.first->job_priority);
    for (int32_t p : priorities) o.net_priority += p;
    options.push_back(std::move(o));
  }
  if (options.empty()) return {};
  size_t best = 0;
  for (size_t i = 1; i < options.size(); ++i) {
    if (options[i].net_priority < options[best].net_priority) best = i;
  }
  std::vector<const Alloc*> out;
  for (const auto& e : options[best].allocs) out.push_back(e.first);
  return out;
}

}  // namespace arbiter::nomad
