// Nomad's generic and system schedulers over the preemptor.
#include "arbiter/nomad/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <optional>
#include <set>

#include "arbiter/base/rng.h"
#include "arbiter/nomad/preemptor.h"

namespace arbiter::nomad {

namespace {

// Nomad's ScoreFitBinPack: 20 - (10^freeCpu + 10^freeMem), clamped to [0, 18], normalised.
double BinPackScore(const Resources& capacity, const Resources& util) {
  auto free_pct = [](int64_t used, int64_t total) {
    return total <= 0 ? 0.0 : 1.0 - static_cast<double>(used) / static_cast<double>(total);
  };
  const double total = std::pow(10.0, free_pct(util.cpu, capacity.cpu)) + std::pow(10.0, free_pct(util.memory, capacity.memory));
  return std::clamp(20.0 - total, 0.0, 18.0) / 18.0;
}

// Nomad's preemption score over a placement's victims (§8).
double PreemptionScore(const std::vector<const Alloc*>& victims) {
  int64_t max = 0, sum = 0;
  for (const Alloc* v : victims) {
    max = std::max<int64_t>(max, v->job_priority);
    sum += v->job_priority;
  }
  const double net = static_cast<double>(max) + static_cast<double>(sum) / static_cast<double>(max);
  return 1.0 / (1.0 + std::exp(0.0048 * (net - 2048.0)));
}

std::string Uuid(Rng& rng) {
  const uint64_t a = rng.Next(), b = rng.Next();
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48), static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

// The index in an allocation name "job.group[i]", or -1.
int64_t NameIndex(const std::string& name) {
  const size_t open = name.rfind('[');
  if (open == std::string::npos || name.back() != ']') return -1;
  try {
    return std::stoll(name.substr(open + 1, name.size() - open - 2));
  } catch (const std::exception&) {
    return -1;
  }
}

class Planner {
 public:
  Planner(const ClusterView& view, const Job& job, const PlannerOptions& options)
      : view_(view), job_(job), options_(options), rng_(options.seed) {
    nodes_.reserve(view.nodes.size());
    for (size_t i = 0; i < view.nodes.size(); ++i) nodes_.push_back({view.nodes[i], &view.on_node[i]});
    // The nodes a job may use: ready, eligible, not draining (Nomad never lists the others).
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].node->eligible) order_.push_back(i);
    }
    for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng_.Uniform(i)]);
  }

  NomadPlan Run() {
    for (const TaskGroup& tg : job_.groups) {
      if (job_.type == "system" || job_.type == "sysbatch") {
        PlanSystemGroup(tg);
      } else {
        PlanGenericGroup(tg);
      }
    }
    return std::move(plan_);
  }

 private:
  // A node and what runs on it: the view's allocations until this plan changes them, then the
  // plan's own copy.
  struct NodeState {
    const Node* node;
    const std::vector<const Alloc*>* base;
    std::vector<const Alloc*> own = {};
    bool owned = false;
    const std::vector<const Alloc*>& proposed() const { return owned ? own : *base; }
    std::vector<const Alloc*>& Mutable() {
      if (!owned) own = *base, owned = true;
      return own;
    }
  };
  struct Option {
    size_t node = 0;
    std::vector<const Alloc*> victims;
    Alloc alloc;  // the new allocation, with the networks and devices it was given
    double score = 0;
    std::string overflow;  // see Placement::overflow
  };
  struct PassMetrics {
    int64_t evaluated = 0, filtered = 0, exhausted = 0;
    std::map<std::string, int64_t> dimensions;
  };

  bool IsOwn(const Alloc& a) const { return a.ns == job_.ns && a.job_id == job_.id; }

  // One node for one allocation of `tg` (BinPackIterator.Next).
  std::optional<Option> Evaluate(size_t n, const TaskGroup& tg, bool evict, bool generic, std::string* dimension) {
    const Node& node = *nodes_[n].node;
    std::vector<const Alloc*> proposed = nodes_[n].proposed();
    Option o;
    o.node = n;
    o.alloc.resources = tg.Ask();  // its identity is filled in by Apply, for the chosen option only
    Preemptor preemptor(job_, options_.priority_delta, plan_preemptions_, options_.optimal_victims);
    auto remove = [&](const std::vector<const Alloc*>& victims) {
      for (const Alloc* v : victims) {
        proposed.erase(std::remove(proposed.begin(), proposed.end(), v), proposed.end());
        o.victims.push_back(v);
      }
    };
    // Networks: ports (group and task networks) and bandwidth (task networks only).
    auto offer = [&](const NetworkUse& ask, bool bandwidth) -> bool {
      for (const auto& dev : node.networks) {
        if (!ask.device.empty() && ask.device != dev.device) continue;
        int64_t used = 0;
        std::set<int64_t> ports(node.reserved_ports.begin(), node.reserved_ports.end());
        auto count = [&](const std::vector<NetworkUse>& uses) {
          for (const auto& u : uses) {
            if (u.device != dev.device) continue;
            used += u.mbits;
            ports.insert(u.reserved_ports.begin(), u.reserved_ports.end());
          }
        };
        for (const Alloc* a : proposed) count(a->networks);
        count(o.alloc.networks);
        bool clash = false;
        for (int64_t p : ask.reserved_ports) clash = clash || ports.count(p) > 0;
        if (clash || (bandwidth && used + ask.mbits > dev.mbits)) continue;
        NetworkUse given = ask;
        given.device = dev.device;
        given.ip = dev.ip;
        if (!bandwidth) given.mbits = 0;
        bool merged = false;
        for (auto& e : o.alloc.networks) {
          if (e.device == given.device) {
            e.mbits += given.mbits;
            e.reserved_ports.insert(e.reserved_ports.end(), given.reserved_ports.begin(), given.reserved_ports.end());
            merged = true;
          }
        }
        if (!merged) o.alloc.networks.push_back(given);
        return true;
      }
      return false;
    };
    auto network = [&](const NetworkUse& ask, bool bandwidth) -> bool {
      if (ask.mbits == 0 && ask.reserved_ports.empty()) return true;
      if (offer(ask, bandwidth)) return true;
      if (node.networks.empty()) {
        *dimension = "network: no networks available";
        return false;
      }
      *dimension = bandwidth ? "network: bandwidth exceeded" : "network: port collision";
      if (!evict) return false;
      NetworkUse want = ask;
      if (!bandwidth) want.mbits = 0;
      auto victims = preemptor.ForNetwork(node, proposed, want, o.alloc.networks);
      if (victims.empty()) return false;
      remove(victims);
      if (offer(ask, bandwidth)) return true;
      *dimension = "network: unable to create network offer after considering preemption";
      return false;
    };
    for (const auto& ask : tg.networks) {
      if (!network(ask, false)) return std::nullopt;
    }
    for (const Task& t : tg.tasks) {
      for (const auto& ask : t.networks) {
        if (!network(ask, true)) return std::nullopt;
      }
      // Devices.
      for (const auto& req : t.devices) {
        auto free_instances = [&]() {
          std::map<std::string, int64_t> free;
          for (const auto& d : node.devices) free[d.Id()] += static_cast<int64_t>(d.instances.size());
          for (const Alloc* a : proposed) {
            for (const auto& d : a->devices) free[d.model] -= d.instances;
          }
          for (const auto& d : o.alloc.devices) free[d.model] -= d.instances;
          return free;
        };
        auto take = [&](const std::map<std::string, int64_t>& free) {
          for (const auto& d : node.devices) {
            auto f = free.find(d.Id());
            if (d.Matches(req.name) && f != free.end() && f->second >= req.count) {
              o.alloc.devices.push_back({d.Id(), req.count});
              return true;
            }
          }
          return false;
        };
        if (take(free_instances())) continue;
        *dimension = "devices: no devices match request";
        if (!evict) return std::nullopt;
        auto victims = preemptor.ForDevice(node, proposed, req, free_instances());
        if (victims.empty()) return std::nullopt;
        remove(victims);
        if (!take(free_instances())) return std::nullopt;
      }
    }
    // CPU, memory, disk (AllocsFit).
    auto used_now = [&]() {
      Resources used;
      for (const Alloc* a : proposed) used += a->resources;
      return used;
    };
    const Resources ask = o.alloc.resources;
    Resources used = used_now();
    Resources after = used;
    after += ask;
    Resources util = after;
    auto exhausted_dimension = [&](const Resources& total) -> std::string {
      if (total.cpu > node.capacity.cpu) return "cpu";
      if (total.memory > node.capacity.memory) return "memory";
      if (total.disk > node.capacity.disk) return "disk";
      return "";
    };
    if (std::string dim = exhausted_dimension(after); !dim.empty()) {
      *dimension = dim;
      if (!evict) return std::nullopt;
      auto victims = preemptor.ForTaskGroup(node.capacity, proposed, ask);
      if (victims.empty()) return std::nullopt;
      remove(victims);
      Resources freed = used_now();
      freed += ask;
      // The preemptor's own-allocation quirk can leave the node overflowing: `nomad job plan`
      // shows it so; the plan applier of a real submission refuses it.
      if (std::string still = exhausted_dimension(freed); !still.empty()) {
        if (options_.plan_applier) return std::nullopt;
        o.overflow = std::move(still);
      }
      // Scored on the utilisation before eviction (§8's bin-pack quirk).
    } else {
      util = after;
    }
    if (!o.victims.empty() && exhausted_dimension(after).empty()) {
      // Network or device victims only: the node scores on what is left.
      util = used_now();
      util += ask;
    }
    std::vector<double> scores{BinPackScore(node.capacity, util)};
    int64_t collisions = 0;
    for (const Alloc* a : proposed) collisions += a->job_id == job_.id && a->ns == job_.ns && a->task_group == tg.name;
    if (generic && collisions > 0 && tg.count > 0) {
      scores.push_back(-static_cast<double>(collisions + 1) / static_cast<double>(tg.count));
    }
    if (generic && !o.victims.empty()) scores.push_back(PreemptionScore(o.victims));
    double sum = 0;
    for (double s : scores) sum += s;
    o.score = sum / static_cast<double>(scores.size());
    return o;
  }

  void Apply(Option& o, const TaskGroup& tg, int64_t index) {
    NodeState& ns = nodes_[o.node];
    Alloc& a = new_allocs_.emplace_back(std::move(o.alloc));
    a.ns = job_.ns;
    a.job_id = job_.id;
    a.job_type = job_.type;
    a.job_priority = job_.priority;
    a.task_group = tg.name;
    a.node_id = ns.node->id;
    a.max_parallel = tg.max_parallel;
    a.id = Uuid(rng_);
    a.name = job_.id + "." + a.task_group + "[" + std::to_string(index) + "]";
    Placement p{a.task_group, index, ns.node->id, ns.node->name, a.id, {}, std::move(o.overflow)};
    std::vector<const Alloc*>& proposed = ns.Mutable();
    for (const Alloc* v : o.victims) {
      proposed.erase(std::remove(proposed.begin(), proposed.end(), v), proposed.end());
      p.preempted.push_back(v->id);
      plan_.preempted.push_back({v, a.id});
      ++plan_preemptions_[v->ns + "/" + v->job_id + "/" + v->task_group];
      ++plan_.desired_updates[a.task_group].preemptions;
    }
    proposed.push_back(&a);
    plan_.placements.push_back(std::move(p));
  }

  std::vector<const Alloc*> Existing(const TaskGroup& tg) const {
    std::vector<const Alloc*> out;
    auto it = view_.by_job.find(job_.ns + "/" + job_.id);
    if (it == view_.by_job.end()) return out;
    for (const Alloc* a : it->second) {
      if (a->task_group == tg.name && !a->ClientTerminal() && a->desired_status == "run") out.push_back(a);
    }
    return out;
  }

  void Fail(const TaskGroup& tg, const PassMetrics& m, int64_t also_failed) {
    FailedGroup& f = plan_.failed[tg.name];
    f.nodes_evaluated = m.evaluated;
    f.nodes_filtered = m.filtered;
    f.nodes_exhausted = m.exhausted;
    f.dimension_exhausted = m.dimensions;
    f.coalesced_failures += also_failed;
  }

  void PlanGenericGroup(const TaskGroup& tg) {
    const std::vector<const Alloc*> existing = Existing(tg);
    plan_.desired_updates[tg.name].ignore = static_cast<int64_t>(existing.size());
    std::set<int64_t> taken;
    for (const Alloc* a : existing) taken.insert(NameIndex(a->name));
    const int64_t missing = tg.count - static_cast<int64_t>(existing.size());
    // Place counts what the reconciler wants placed, including what then fails to place.
    plan_.desired_updates[tg.name].place = std::max<int64_t>(0, missing);
    const size_t n = order_.size();
    const size_t limit = job_.type == "batch"
                             ? 2
                             : std::max<size_t>(2, static_cast<size_t>(std::ceil(std::log2(std::max<size_t>(n, 1)))));
    const bool may_preempt = view_.preemption.For(job_.type);
    // Pass-one verdicts are kept while a node is unchanged: the first pass evaluates only the
    // nodes whose verdict is unknown (kept by their place in the visiting order), in the order it
    // would visit them, and so reaches the same options and the same stopping point as a visit of
    // every node.
    std::vector<std::string> infeasible_dim(nodes_.size());
    std::vector<size_t> position(nodes_.size());
    std::set<size_t> unknown;  // positions in order_
    for (size_t p = 0; p < n; ++p) {
      position[order_[p]] = p;
      unknown.insert(p);
    }
    auto pass_one_metrics = [&]() {
      PassMetrics m;
      for (size_t idx : order_) {
        ++m.evaluated;
        ++m.exhausted;
        ++m.dimensions[infeasible_dim[idx]];
      }
      return m;
    };
    // Nomad's limit iterator: `limit` options, passing over up to three that score 0 or less,
    // which are used only if too few others are found; then the highest score (first on ties).
    struct Window {
      std::vector<Option> options, skipped;
      bool Full(size_t limit) const { return options.size() >= limit; }
      void Add(Option o) {
        if (o.score <= 0 && skipped.size() < 3) {
          skipped.push_back(std::move(o));
        } else {
          options.push_back(std::move(o));
        }
      }
      std::optional<Option> Best(size_t limit) {
        for (auto& o : skipped) {
          if (options.size() >= limit) break;
          options.push_back(std::move(o));
        }
        if (options.empty()) return std::nullopt;
        size_t best = 0;
        for (size_t i = 1; i < options.size(); ++i) {
          if (options[i].score > options[best].score) best = i;
        }
        return std::move(options[best]);
      }
    };
    int64_t next_index = 0;
    for (int64_t k = 0; k < missing; ++k) {
      while (taken.count(next_index)) ++next_index;
      PassMetrics metrics;
      std::optional<Option> chosen;
      {  // Pass one: no preemption.
        Window window;
        size_t visited = n;
        std::vector<size_t> settled;
        auto visit = [&](size_t p) {  // false once the window is full
          const size_t idx = order_[p];
          std::string dim;
          auto o = Evaluate(idx, tg, false, true, &dim);
          if (!o) {
            infeasible_dim[idx] = dim;
            settled.push_back(p);
            return true;
          }
          window.Add(std::move(*o));
          if (window.Full(limit)) {
            visited = (p + n - offset_) % n + 1;
            return false;
          }
          return true;
        };
        bool more = true;
        for (auto it = unknown.lower_bound(offset_); more && it != unknown.end(); ++it) more = visit(*it);
        for (auto it = unknown.begin(); more && it != unknown.end() && *it < offset_; ++it) more = visit(*it);
        for (size_t p : settled) unknown.erase(p);
        offset_ = n == 0 ? 0 : (offset_ + visited) % n;
        chosen = window.Best(limit);
      }
      if (!chosen && may_preempt) {  // Pass two: with preemption.
        Window window;
        size_t visited = 0;
        while (visited < n && !window.Full(limit)) {
          const size_t idx = order_[(offset_ + visited) % n];
          ++visited;
          ++metrics.evaluated;
          std::string dim;
          auto o = Evaluate(idx, tg, true, true, &dim);
          if (!o) {
            ++metrics.exhausted;
            ++metrics.dimensions[dim];
            continue;
          }
          window.Add(std::move(*o));
        }
        offset_ = n == 0 ? 0 : (offset_ + visited) % n;
        chosen = window.Best(limit);
      }
      if (!chosen) {
        // The last pass's metrics: pass one's are counted only now, when they are reported.
        if (!may_preempt) metrics = pass_one_metrics();
        Fail(tg, metrics, missing - k - 1);
        return;
      }
      unknown.insert(position[chosen->node]);  // the node changed: its pass-one verdict is unknown again
      Apply(*chosen, tg, next_index);
      taken.insert(next_index);
    }
  }

  void PlanSystemGroup(const TaskGroup& tg) {
    const std::vector<const Alloc*> existing = Existing(tg);
    plan_.desired_updates[tg.name].ignore = static_cast<int64_t>(existing.size());
    std::set<std::string> has;
    for (const Alloc* a : existing) has.insert(a->node_id);
    const bool evict = view_.preemption.For(job_.type);
    PassMetrics metrics;
    int64_t failures = 0, wanted = 0;
    for (size_t idx = 0; idx < nodes_.size(); ++idx) {
      const NodeState& ns = nodes_[idx];
      if (has.count(ns.node->id) || !ns.node->eligible) continue;
      ++wanted;
      ++metrics.evaluated;
      std::string dim;
      auto o = Evaluate(idx, tg, evict, false, &dim);
      if (!o) {
        ++metrics.exhausted;
        ++metrics.dimensions[dim];
        ++failures;
        continue;
      }
      Apply(*o, tg, 0);
    }
    plan_.desired_updates[tg.name].place = wanted;
    if (failures > 0) Fail(tg, metrics, failures - 1);
  }

  const ClusterView& view_;
  const Job& job_;
  PlannerOptions options_;
  Rng rng_;
  std::vector<NodeState> nodes_;
  std::vector<size_t> order_;
  size_t offset_ = 0;
  std::deque<Alloc> new_allocs_;
  std::map<std::string, int64_t> plan_preemptions_;
  NomadPlan plan_;
};

}  // namespace

ClusterView ViewOf(const Cluster& cluster) {
  ClusterView view;
  view.preemption = cluster.preemption;
  std::map<std::string, size_t> node_index;
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    node_index[cluster.nodes[i].id] = i;
    view.nodes.push_back(&cluster.nodes[i]);
  }
  view.on_node.resize(cluster.nodes.size());
  for (const Alloc& a : cluster.allocs) {
    view.by_job[a.ns + "/" + a.job_id].push_back(&a);
    if (a.ClientTerminal()) continue;  // §2: terminal on the client, gone
    view.on_node[node_index.at(a.node_id)].push_back(&a);
  }
  return view;
}

NomadPlan PlanJob(const ClusterView& view, const Job& job, const PlannerOptions& options) {
  return Planner(view, job, options).Run();
}

NomadPlan PlanJob(const Cluster& cluster, const Job& job, const PlannerOptions& options) {
  return PlanJob(ViewOf(cluster), job, options);
}

}  // namespace arbiter::nomad
