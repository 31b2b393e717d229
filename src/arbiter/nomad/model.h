// Nomad's scheduling objects as Arbiter holds them: nodes (capacity less reserved), allocations
// (running units with their job's priority), the job being planned and the cluster's preemption
// configuration. Units are Nomad's: CPU in MHz (CpuShares), memory and disk in MB, bandwidth in
// Mbit/s. input.h builds these from what Nomad's HTTP API and `nomad job run -output` print.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "arbiter/model/best_fit_victims.h"

namespace arbiter::nomad {

struct Resources {
  int64_t cpu = 0;     // MHz
  int64_t memory = 0;  // MB
  int64_t disk = 0;    // MB

  Resources& operator+=(const Resources& o) {
    cpu += o.cpu, memory += o.memory, disk += o.disk;
    return *this;
  }
  Resources& operator-=(const Resources& o) {
    cpu -= o.cpu, memory -= o.memory, disk -= o.disk;
    return *this;
  }
  // Nomad's ComparableResources.Superset for the three dimensions: every one at least `o`'s.
  bool Covers(const Resources& o) const { return cpu >= o.cpu && memory >= o.memory && disk >= o.disk; }
};

// A node's network interface.
struct NodeNetwork {
  std::string device;
  std::string ip;
  int64_t mbits = 0;
};

// A device model on a node (vendor/type/name) and its healthy instances.
struct DeviceGroup {
  std::string vendor, type, name;
  std::vector<std::string> instances;  // healthy instance IDs
  std::string Id() const { return vendor + "/" + type + "/" + name; }
  // Whether a request name ("gpu", "nvidia/gpu" or "nvidia/gpu/1080ti") names this model.
  bool Matches(const std::string& request) const;
};

struct Node {
  std::string id;
  std::string name;
  bool eligible = true;  // Status ready, SchedulingEligibility eligible, not draining
  Resources capacity;  // NodeResources less ReservedResources
  std::vector<NodeNetwork> networks;
  std::set<int64_t> reserved_ports;  // ReservedResources.Networks.ReservedHostPorts
  std::vector<DeviceGroup> devices;
};

// One network an allocation holds on a device (Nomad's first flattened network entry) or that
// a task asks for.
struct NetworkUse {
  std::string device;
  std::string ip;
  int64_t mbits = 0;
  std::vector<int64_t> reserved_ports;
};

struct DeviceUse {
  std::string model;  // vendor/type/name
  int64_t instances = 0;
};

struct Alloc {
  std::string id;
  std::string name;
  std::string ns = "default";
  std::string job_id;
  std::string job_type = "service";
  int32_t job_priority = 50;
  std::string task_group;
  std::string node_id;
  std::string desired_status = "run";
  std::string client_status = "running";
  int32_t max_parallel = 0;  // the task group's migrate.max_parallel
  bool has_job = true;       // Nomad never preempts an allocation without its Job (§2)
  Resources resources;
  std::vector<NetworkUse> networks;  // per device: at most one entry, the first seen
  std::vector<DeviceUse> devices;
  bool ClientTerminal() const {
    return client_status == "complete" || client_status == "failed" || client_status == "lost";
  }
};

struct DeviceRequest {
  std::string name;
  int64_t count = 1;
};

struct Task {
  std::string name;
  int64_t cpu = 0;
  int64_t memory = 0;
  std::vector<NetworkUse> networks;  // resources.network asks (device optional)
  std::vector<DeviceRequest> devices;
};

struct TaskGroup {
  std::string name;
  int64_t count = 1;
  int64_t disk = 0;  // ephemeral_disk.size
  int32_t max_parallel = 0;
  std::vector<Task> tasks;
  std::vector<NetworkUse> networks;  // group network asks (ports only)
  // The whole group's ask: the tasks' CPU and memory plus the ephemeral disk.
  Resources Ask() const;
};

struct Job {
  std::string id;
  std::string name;
  std::string ns = "default";
  std::string type = "service";  // service, batch, system, sysbatch
  int32_t priority = 50;
  std::vector<TaskGroup> groups;
};

// GET /v1/operator/scheduler/configuration's PreemptionConfig (Nomad's defaults).
struct PreemptionConfig {
  bool system = true;
  bool sysbatch = false;
  bool batch = false;
  bool service = false;
  bool For(const std::string& job_type) const {
    if (job_type == "system") return system;
    if (job_type == "sysbatch") return sysbatch;
    if (job_type == "batch") return batch;
    return service;
  }
};

struct Cluster {
  PreemptionConfig preemption;
  std::vector<Node> nodes;
  std::vector<Alloc> allocs;
};

// Arbiter's knob beyond Nomad's: how far below the placing job a victim's priority must be.
inline constexpr int32_t kDefaultPriorityDelta = model::kNomadPriorityDelta;

}  // namespace arbiter::nomad
