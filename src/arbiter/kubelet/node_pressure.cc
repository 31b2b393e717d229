// The kubelet's node-pressure eviction: signals, thresholds, ranking and messages.
#include "arbiter/kubelet/node_pressure.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "arbiter/model/quantity.h"

namespace arbiter::kubelet {

namespace {

int64_t Amount(const model::Resources& r, const std::string& resource) {
  return resource == model::kResourceMemory ? r.memory : r.ephemeral_storage;
}

std::string Bytes(int64_t v) {
  return model::Quantity::FromValue(v, model::Quantity::Format::kBinarySI).ToString();
}

}  // namespace

std::string ResourceOfSignal(const std::string& signal) {
  if (signal == "memory.available") return std::string(model::kResourceMemory);
  if (signal == "nodefs.available") return "ephemeral-storage";
  return "";
}

std::vector<Eviction> NodePressureEvictions(const model::Node& node, const std::vector<const model::Pod*>& pods,
                                            const std::map<std::string, const model::PodMetrics*>& usage,
                                            const model::KubeletConfig& config) {
  std::vector<Eviction> out;
  std::set<std::string> evicted;
  auto usage_of = [&](const model::Pod& p) {
    auto it = usage.find(p.Key());
    return it == usage.end() ? model::Resources{} : it->second->Usage();
  };
  // Memory first, then the node filesystem, as the kubelet orders its signals.
  for (const char* signal : {"memory.available", "nodefs.available"}) {
    const auto t = std::find_if(config.eviction_hard.begin(), config.eviction_hard.end(),
                                [&](const model::EvictionThreshold& e) { return e.signal == signal; });
    if (t == config.eviction_hard.end()) continue;
    const std::string resource = ResourceOfSignal(signal);
    const int64_t capacity = Amount(node.capacity, resource);
    if (capacity <= 0) continue;
    const int64_t threshold =
        t->percentage ? static_cast<int64_t>(std::ceil(static_cast<double>(capacity) * *t->percentage / 100.0)) : t->quantity;
    int64_t available = capacity;
    std::vector<const model::Pod*> candidates;
    for (const model::Pod* p : pods) {
      if (evicted.count(p->Key())) continue;
      available -= Amount(usage_of(*p), resource);
      candidates.push_back(p);
    }
    if (available >= threshold) continue;
    struct Ranked {
      const model::Pod* pod;
      int64_t used;
      int64_t request;
    };
    std::vector<Ranked> ranked;
    for (const model::Pod* p : candidates) ranked.push_back({p, Amount(usage_of(*p), resource), Amount(p->requests, resource)});
    std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
      const bool a_exceeds = a.used > a.request, b_exceeds = b.used > b.request;
      if (a_exceeds != b_exceeds) return a_exceeds;                          // over their requests first
      if (a.pod->priority != b.pod->priority) return a.pod->priority < b.pod->priority;  // lower priority first
      if (a.used - a.request != b.used - b.request) return a.used - a.request > b.used - b.request;
      return a.pod->Key() < b.pod->Key();
    });
    for (const Ranked& r : ranked) {
      if (available >= threshold) break;
      // The kubelet's message: the signal, then each container using more than it requested.
      std::string msg = "The node was low on resource: " + resource + ". Threshold quantity: " + Bytes(threshold) +
                        ", available: " + Bytes(std::max<int64_t>(available, 0)) + ". ";
      auto metrics = usage.find(r.pod->Key());
      if (metrics != usage.end()) {
        for (const auto& [container, used] : metrics->second->containers) {
          int64_t request = 0;
          for (const auto& [name, req] : r.pod->container_requests) {
            if (name == container) request = Amount(req, resource);
          }
          if (Amount(used, resource) > request) {
            msg += "Container " + container + " was using " + Bytes(Amount(used, resource)) + ", request is " +
                   Bytes(request) + ", has larger consumption of " + resource + ". ";
          }
        }
      }
      out.push_back({r.pod->Key(), node.name, signal, msg});
      evicted.insert(r.pod->Key());
      available += r.used;
    }
  }
  return out;
}

}  // namespace arbiter::kubelet
