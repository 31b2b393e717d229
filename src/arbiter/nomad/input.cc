// Nomad JSON into the model, with field-level errors.
#include "arbiter/nomad/input.h"

#include "arbiter/base/json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

namespace arbiter::nomad {

namespace {

using Json = nlohmann::json;

// A value as a message shows it: its JSON, shortened.
std::string Shown(const Json& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// Where problems go: each line once (a wrong parent object is met once per field read below it).
struct Errors {
  std::vector<std::string>& lines;
  std::set<std::string> seen;
  void Add(std::string line) {
    if (seen.insert(line).second) lines.push_back(std::move(line));
  }
};

// Reads fields of one object, reporting problems as "WHERE: FIELD: message".
class Reader {
 public:
  Reader(Errors& errors, std::string where) : errors_(errors), where_(std::move(where)) {}

  // A reader for a nested object, e.g. Sub("TaskGroups[0] (web)").
  Reader Sub(const std::string& suffix) const { return Reader(errors_, where_ + ": " + suffix); }

  void Error(const std::string& field, const std::string& msg) { errors_.Add(where_ + ": " + field + ": " + msg); }

  // The value at a dotted path, or nullptr when any step is absent or null. Does not report.
  static const Json* At(const Json& j, const std::string& path) {
    const Json* at = &j;
    size_t start = 0;
    while (start <= path.size()) {
      const size_t dot = path.find('.', start);
      const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (!at->is_object()) return nullptr;
      auto it = at->find(key);
      if (it == at->end() || it->is_null()) return nullptr;
      at = &*it;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    return at;
  }

  // As At, but a step on the way that is present and not an object ("Resources": "big") is an
  // error, not an absent value that would silently take its default.
  const Json* Find(const Json& j, const std::string& path) {
    const Json* at = &j;
    size_t start = 0;
    while (start <= path.size()) {
      const size_t dot = path.find('.', start);
      if (!at->is_object()) {
        if (start > 0) Error(path.substr(0, start - 1), "must be an object, not " + Shown(*at));
        return nullptr;
      }
      auto it = at->find(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
      if (it == at->end() || it->is_null()) return nullptr;
      at = &*it;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    return at;
  }

  // A string field that must be one of `allowed` (absent: `fallback`).
  std::string OneOf(const Json& j, const std::string& path, const std::string& fallback,
                    const std::vector<std::string>& allowed) {
    std::string v = String(j, path, fallback);
    if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
    std::string list;
    for (size_t i = 0; i < allowed.size(); ++i) {
      list += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i];
    }
    Error(path, "must be " + list + ", not \"" + v + "\"");
    return fallback;
  }

  int64_t Int(const Json& j, const std::string& path, int64_t fallback, int64_t min = 0,
              int64_t max = std::numeric_limits<int32_t>::max()) {
    const Json* v = Find(j, path);
    if (v == nullptr) return fallback;
    int64_t n = 0;
    if (v->is_number_integer()) {
      n = v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(max) ? max + 1 : v->get<int64_t>();
    } else if (v->is_number_float() && std::abs(v->get<double>()) < 9.0e15 && std::trunc(v->get<double>()) == v->get<double>()) {
      n = static_cast<int64_t>(v->get<double>());  // 2.0 as Go's JSON decoder accepts it
    } else {
      Error(path, "must be an integer, not " + Shown(*v));
      return fallback;
    }
    if (n < min || n > max) {
      Error(path, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", not " + std::to_string(n));
      return fallback;
    }
    return n;
  }

  std::string String(const Json& j, const std::string& path, const std::string& fallback, bool required = false) {
    const Json* v = Find(j, path);
    if (v == nullptr) {
      if (required) Error(path, "is required");
      return fallback;
    }
    if (!v->is_string()) {
      Error(path, "must be a string, not " + Shown(*v));
      return fallback;
    }
    if (required && v->get<std::string>().empty()) Error(path, "must not be empty");
    return v->get<std::string>();
  }

  bool Bool(const Json& j, const std::string& path, bool fallback) {
    const Json* v = Find(j, path);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) {
      Error(path, "must be true or false, not " + Shown(*v));
      return fallback;
    }
    return v->get<bool>();
  }

  // A list (absent = empty); anything else is an error.
  const Json* List(const Json& j, const std::string& path) {
    const Json* v = Find(j, path);
    if (v == nullptr) return nullptr;
    if (!v->is_array()) {
      Error(path, "must be a list");
      return nullptr;
    }
    return v;
  }
  // A list whose entries must be objects; each other entry is reported.
  const Json* ObjectList(const Json& j, const std::string& path) {
    const Json* v = List(j, path);
    if (v == nullptr) return nullptr;
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_object()) Error(path + "[" + std::to_string(i) + "]", "must be an object, not " + Shown((*v)[i]));
    }
    return v;
  }
  const Json* Object(const Json& j, const std::string& path) {
    const Json* v = Find(j, path);
    if (v == nullptr) return nullptr;
    if (!v->is_object()) {
      Error(path, "must be an object");
      return nullptr;
    }
    return v;
  }

 private:
  Errors& errors_;
  std::string where_;
};

// "22,80-90" into ports.
void ParsePortList(Reader& r, const std::string& field, const std::string& text, std::set<int64_t>& out) {
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() : comma + 1;
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    if (part.empty()) continue;
    const size_t dash = part.find('-');
    try {
      size_t used = 0;
      const int64_t lo = std::stoll(part.substr(0, dash), &used);
      if (used != part.substr(0, dash).size()) throw std::invalid_argument(part);
      int64_t hi = lo;
      if (dash != std::string::npos) {
        const std::string rest = part.substr(dash + 1);
        hi = std::stoll(rest, &used);
        if (used != rest.size()) throw std::invalid_argument(part);
      }
      if (lo < 1 || hi > 65535 || lo > hi) throw std::out_of_range(part);
      for (int64_t p = lo; p <= hi; ++p) out.insert(p);
    } catch (const std::exception&) {
      r.Error(field, "\"" + part + "\" is not a port or a port range (1-65535)");
    }
  }
}

std::vector<int64_t> Ports(Reader& r, const Json& network, const std::string& prefix) {
  std::vector<int64_t> out;
  if (const Json* ports = r.ObjectList(network, "ReservedPorts")) {
    for (size_t i = 0; i < ports->size(); ++i) {
      out.push_back(r.Int((*ports)[i], "Value", 0, 1, 65535));
      if (Reader::At((*ports)[i], "Value") == nullptr) r.Error(prefix + "ReservedPorts[" + std::to_string(i) + "].Value", "is required");
    }
  }
  return out;
}

void ReadNode(Reader& r, const Json& j, Node& n) {
  n.id = r.String(j, "ID", "", true);
  n.name = r.String(j, "Name", n.id);
  n.eligible = r.String(j, "Status", "ready") == "ready" && r.String(j, "SchedulingEligibility", "eligible") == "eligible" &&
               !r.Bool(j, "Drain", false);
  n.capacity.cpu = r.Int(j, "NodeResources.Cpu.CpuShares", 0) - r.Int(j, "ReservedResources.Cpu.CpuShares", 0);
  n.capacity.memory = r.Int(j, "NodeResources.Memory.MemoryMB", 0) - r.Int(j, "ReservedResources.Memory.MemoryMB", 0);
  n.capacity.disk = r.Int(j, "NodeResources.Disk.DiskMB", 0) - r.Int(j, "ReservedResources.Disk.DiskMB", 0);
  if (n.capacity.cpu < 0 || n.capacity.memory < 0 || n.capacity.disk < 0) {
    r.Error("ReservedResources", "reserves more than the node has");
  }
  if (const Json* nets = r.ObjectList(j, "NodeResources.Networks")) {
    for (const auto& net : *nets) {
      if (r.String(net, "Mode", "host") != "host") continue;
      n.networks.push_back({r.String(net, "Device", ""), r.String(net, "IP", ""), r.Int(net, "MBits", 0)});
    }
  }
  ParsePortList(r, "ReservedResources.Networks.ReservedHostPorts",
                r.String(j, "ReservedResources.Networks.ReservedHostPorts", ""), n.reserved_ports);
  if (const Json* devs = r.ObjectList(j, "NodeResources.Devices")) {
    for (const auto& d : *devs) {
      DeviceGroup g{r.String(d, "Vendor", ""), r.String(d, "Type", ""), r.String(d, "Name", ""), {}};
      if (const Json* inst = r.ObjectList(d, "Instances")) {
        for (const auto& i : *inst) {
          if (r.Bool(i, "Healthy", true)) g.instances.push_back(r.String(i, "ID", ""));
        }
      }
      n.devices.push_back(std::move(g));
    }
  }
}

void AddNetwork(std::vector<NetworkUse>& uses, NetworkUse u) {
  // Nomad flattens an allocation's networks per device; the preemptor reads the first entry.
  for (auto& e : uses) {
    if (e.device == u.device) {
      e.mbits += u.mbits;
      e.reserved_ports.insert(e.reserved_ports.end(), u.reserved_ports.begin(), u.reserved_ports.end());
      return;
    }
  }
  uses.push_back(std::move(u));
}

void ReadAlloc(Reader& r, const Json& j, Alloc& a) {
  a.id = r.String(j, "ID", "", true);
  a.name = r.String(j, "Name", a.id);
  a.ns = r.String(j, "Namespace", "default");
  a.job_id = r.String(j, "JobID", "", true);
  a.task_group = r.String(j, "TaskGroup", "", true);
  a.node_id = r.String(j, "NodeID", "", true);
  // The values of Nomad's structs.AllocDesiredStatus* and AllocClientStatus* constants.
  a.desired_status = r.OneOf(j, "DesiredStatus", "run", {"run", "stop", "evict"});
  a.client_status = r.OneOf(j, "ClientStatus", "running", {"pending", "running", "complete", "failed", "lost", "unknown"});
  // Nomad stores every allocation with its job (GET /v1/allocation/:id prints it); the list
  // endpoint's stubs carry no job priority, so an allocation without one cannot be judged.
  if (Reader::At(j, "Job") == nullptr) {
    r.Error("Job", "is required: the allocation as GET /v1/allocation/:id prints it, with its job's Priority and Type");
  }
  a.job_priority = static_cast<int32_t>(r.Int(j, "Job.Priority", 50, 1, 32766));
  a.job_type = r.OneOf(j, "Job.Type", "service", {"service", "batch", "system", "sysbatch"});
  a.max_parallel = a.job_type == "service" ? 1 : 0;  // canonical defaults
  if (const Json* groups = r.ObjectList(j, "Job.TaskGroups")) {
    for (const auto& g : *groups) {
      if (r.String(g, "Name", "") == a.task_group && Reader::At(g, "Migrate.MaxParallel") != nullptr) {
        a.max_parallel = static_cast<int32_t>(r.Int(g, "Migrate.MaxParallel", a.max_parallel));
      }
    }
  }
  const Json* tasks = r.Object(j, "AllocatedResources.Tasks");
  if (tasks != nullptr) {
    for (const auto& [name, t] : tasks->items()) {  // by task name: a deterministic order
      a.resources.cpu += r.Int(t, "Cpu.CpuShares", 0);
      a.resources.memory += r.Int(t, "Memory.MemoryMB", 0);
      if (const Json* nets = r.ObjectList(t, "Networks")) {
        for (const auto& net : *nets) {
          AddNetwork(a.networks, {r.String(net, "Device", ""), r.String(net, "IP", ""), r.Int(net, "MBits", 0),
                                  Ports(r, net, "AllocatedResources.Tasks." + name + ".Networks[].")});
        }
      }
      if (const Json* devs = r.ObjectList(t, "Devices")) {
        for (const auto& d : *devs) {
          const Json* ids = r.List(d, "DeviceIDs");
          a.devices.push_back({r.String(d, "Vendor", "") + "/" + r.String(d, "Type", "") + "/" + r.String(d, "Name", ""),
                               ids != nullptr ? static_cast<int64_t>(ids->size()) : 0});
        }
      }
    }
  }
  a.resources.disk = r.Int(j, "AllocatedResources.Shared.DiskMB", 0);
  if (const Json* nets = r.ObjectList(j, "AllocatedResources.Shared.Networks")) {
    for (const auto& net : *nets) {
      AddNetwork(a.networks, {r.String(net, "Device", ""), r.String(net, "IP", ""), r.Int(net, "MBits", 0),
                              Ports(r, net, "AllocatedResources.Shared.Networks[].")});
    }
  }
}

void ReadJob(Reader& r, const Json& j, Job& job) {
  job.id = r.String(j, "ID", "", true);
  job.name = r.String(j, "Name", job.id);
  job.ns = r.String(j, "Namespace", "default");
  job.type = r.String(j, "Type", "service");
  if (job.type != "service" && job.type != "batch" && job.type != "system" && job.type != "sysbatch") {
    r.Error("Type", "must be service, batch, system or sysbatch, not \"" + job.type + "\"");
  }
  job.priority = static_cast<int32_t>(r.Int(j, "Priority", 50, 1, 32766));
  const Json* groups = r.ObjectList(j, "TaskGroups");
  if (groups == nullptr || groups->empty()) r.Error("TaskGroups", "a job needs at least one task group");
  if (groups == nullptr) return;
  for (size_t gi = 0; gi < groups->size(); ++gi) {
    const Json& g = (*groups)[gi];
    if (!g.is_object()) {
      r.Error("TaskGroups[" + std::to_string(gi) + "]", "must be an object");
      continue;
    }
    const std::string p = "";
    Reader gr = r.Sub("TaskGroups[" + std::to_string(gi) + "]" +
                              (g.is_object() && g.contains("Name") && g["Name"].is_string() ? " (" + g["Name"].get<std::string>() + ")" : ""));
    TaskGroup tg;
    tg.name = gr.String(g, "Name", "");
    if (tg.name.empty()) gr.Error(p + "Name", "is required");
    tg.count = gr.Int(g, "Count", 1, 0, 1000000);
    tg.disk = gr.Int(g, "EphemeralDisk.SizeMB", 300);  // Nomad's DefaultEphemeralDisk when unset
    tg.max_parallel = static_cast<int32_t>(gr.Int(g, "Migrate.MaxParallel", job.type == "service" ? 1 : 0));
    if (const Json* nets = gr.ObjectList(g, "Networks")) {
      for (const auto& net : *nets) tg.networks.push_back({"", "", gr.Int(net, "MBits", 0), Ports(gr, net, p + "Networks[].")});
    }
    const Json* tasks = gr.ObjectList(g, "Tasks");
    if (tasks == nullptr || tasks->empty()) gr.Error(p + "Tasks", "a task group needs at least one task");
    if (tasks != nullptr) {
      for (size_t ti = 0; ti < tasks->size(); ++ti) {
        const Json& t = (*tasks)[ti];
        Task task;
        task.name = gr.String(t, "Name", "");
        task.cpu = gr.Int(t, "Resources.CPU", 100);
        task.memory = gr.Int(t, "Resources.MemoryMB", 300);
        if (const Json* nets = gr.ObjectList(t, "Resources.Networks")) {
          for (const auto& net : *nets) {
            task.networks.push_back({gr.String(net, "Device", ""), "", gr.Int(net, "MBits", 0),
                                     Ports(gr, net, p + "Tasks[" + std::to_string(ti) + "].Resources.Networks[].")});
          }
        }
        if (const Json* devs = gr.ObjectList(t, "Resources.Devices")) {
          for (const auto& d : *devs) task.devices.push_back({gr.String(d, "Name", ""), gr.Int(d, "Count", 1, 1)});
        }
        tg.tasks.push_back(std::move(task));
      }
    }
    for (const auto& other : job.groups) {
      if (!tg.name.empty() && other.name == tg.name) gr.Error("Name", "another task group of the job is named \"" + tg.name + "\"");
    }
    job.groups.push_back(std::move(tg));
  }
}

std::optional<Json> Parse(std::vector<std::string>& errors, const std::string& file, const std::string& text) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {  // syntax, and numbers out of range ([1e400])
    errors.push_back(file + ": not valid JSON: " + e.what());
    return std::nullopt;
  }
}

// A list entry that must be an object; reports it and returns false otherwise.
bool IsObjectEntry(Reader& r, const Json& entry) {
  if (entry.is_object()) return true;
  r.Error("(the entry)", "must be an object, not " + Shown(entry));
  return false;
}

}  // namespace

bool DeviceGroup::Matches(const std::string& request) const {
  const size_t slashes = static_cast<size_t>(std::count(request.begin(), request.end(), '/'));
  if (slashes == 0) return request == type;
  if (slashes == 1) return request == vendor + "/" + type;
  return request == Id();
}

Resources TaskGroup::Ask() const {
  Resources r;
  for (const auto& t : tasks) {
    r.cpu += t.cpu;
    r.memory += t.memory;
  }
  r.disk = disk;
  return r;
}

NomadInput LoadNomad(const std::string& cluster_file, const std::string& cluster_text, const std::string& job_file,
                     const std::string& job_text) {
  NomadInput in;
  Errors errors{in.errors, {}};
  auto cluster = Parse(in.errors, cluster_file, cluster_text);
  auto job = Parse(in.errors, job_file, job_text);
  if (cluster) {
    Reader top(errors, cluster_file);
    if (!cluster->is_object()) {
      top.Error("(top level)", "must be an object with SchedulerConfig, Nodes and Allocations");
    } else {
      Reader cfg(errors, cluster_file + ": SchedulerConfig");
      const Json& c = *cluster;
      PreemptionConfig& p = in.cluster.preemption;
      p.system = cfg.Bool(c, "SchedulerConfig.PreemptionConfig.SystemSchedulerEnabled", p.system);
      p.sysbatch = cfg.Bool(c, "SchedulerConfig.PreemptionConfig.SysBatchSchedulerEnabled", p.sysbatch);
      p.batch = cfg.Bool(c, "SchedulerConfig.PreemptionConfig.BatchSchedulerEnabled", p.batch);
      p.service = cfg.Bool(c, "SchedulerConfig.PreemptionConfig.ServiceSchedulerEnabled", p.service);
      std::set<std::string> node_ids, alloc_ids;
      if (const Json* nodes = top.List(c, "Nodes")) {
        for (size_t i = 0; i < nodes->size(); ++i) {
          const Json& nj = (*nodes)[i];
          Reader r(errors, cluster_file + ": Nodes[" + std::to_string(i) + "]" +
                                  (nj.is_object() && nj.contains("ID") && nj["ID"].is_string() ? " (" + nj["ID"].get<std::string>() + ")" : ""));
          if (!IsObjectEntry(r, nj)) continue;
          Node n;
          ReadNode(r, nj, n);
          if (!n.id.empty() && !node_ids.insert(n.id).second) r.Error("ID", "another node has the same ID");
          in.cluster.nodes.push_back(std::move(n));
        }
      }
      if (const Json* allocs = top.List(c, "Allocations")) {
        for (size_t i = 0; i < allocs->size(); ++i) {
          const Json& aj = (*allocs)[i];
          Reader r(errors, cluster_file + ": Allocations[" + std::to_string(i) + "]" +
                                  (aj.is_object() && aj.contains("ID") && aj["ID"].is_string() ? " (" + aj["ID"].get<std::string>() + ")" : ""));
          if (!IsObjectEntry(r, aj)) continue;
          Alloc a;
          ReadAlloc(r, aj, a);
          if (!a.id.empty() && !alloc_ids.insert(a.id).second) r.Error("ID", "another allocation has the same ID");
          if (!a.node_id.empty() && !node_ids.count(a.node_id)) r.Error("NodeID", "no node has the ID \"" + a.node_id + "\"");
          in.cluster.allocs.push_back(std::move(a));
        }
      }
    }
  }
  if (job) {
    const Json* j = job->is_object() ? Reader::At(*job, "Job") : nullptr;
    if (j == nullptr || !j->is_object()) {
      in.errors.push_back(job_file + ": Job: is required (the file `nomad job run -output` prints: {\"Job\": {...}})");
    } else {
      Reader r(errors, job_file + ": Job" + (j->contains("ID") && (*j)["ID"].is_string() ? " (" + (*j)["ID"].get<std::string>() + ")" : ""));
      ReadJob(r, *j, in.job);
    }
  }
  return in;
}

}  // namespace arbiter::nomad
