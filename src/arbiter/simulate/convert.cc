// Trace converters: Borg 2019 and Alibaba 2018 tables to arrivals.
#include "arbiter/simulate/convert.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <optional>

#include "arbiter/base/json.h"

namespace arbiter::simulate {

namespace {

using Json = nlohmann::json;

Status RowError(const std::string& file, size_t line, const std::string& field, const std::string& msg) {
  return InvalidArgument(file + ":" + std::to_string(line) + ": " + field + ": " + msg);
}

bool NameHas(const std::string& name, const char* table) { return name.find(table) != std::string::npos; }

// Splits `content` into lines, skipping blank ones; `f(line_number, text)` returns a Status.
template <typename F>
Status EachLine(const std::string& content, F f) {
  size_t pos = 0, line = 0;
  while (pos < content.size()) {
    size_t end = content.find('\n', pos);
    if (end == std::string::npos) end = content.size();
    std::string_view l(content.data() + pos, end - pos);
    pos = end + 1;
    ++line;
    if (l.size() > kMaxLineBytes) return InvalidArgument("line " + std::to_string(line) + " is too long");
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.remove_suffix(1);
    if (l.empty()) continue;
    ARBITER_RETURN_IF_ERROR(f(line, l));
  }
  return Status::Ok();
}

// ---- Borg 2019 ----------------------------------------------------------------------------

const char* BorgTier(int64_t priority) {
  if (priority <= 99) return "free";
  if (priority <= 115) return "beb";
  if (priority <= 119) return "mid";
  if (priority <= 359) return "production";
  return "monitoring";
}

// A JSON number, or a number in a string (BigQuery's JSON export writes INT64 as strings).
std::optional<double> Number(const Json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() && *end == '\0' && std::isfinite(v)) return v;
  }
  return std::nullopt;
}

// A trace's number as an integer, within what every cast and sum below can hold.
int64_t Bounded(double v) { return static_cast<int64_t>(std::clamp(v, -1e15, 1e15)); }

// Borg marks times before the trace as 0 and after it as 2^63-1 (microseconds).
bool InTrace(double micros) { return micros > 0 && micros < 9.2e18; }

constexpr double kMaxSecondsD = 10.0 * 365 * 24 * 3600;

struct BorgJob {
  double submit = -1;
  int64_t priority = 0;
  int64_t type = 0;  // 0 job, 1 alloc set
};

struct BorgInstance {
  double cpus = 0, memory = 0;
  std::vector<std::pair<double, int64_t>> events;  // (seconds, type) of SCHEDULE and ends
};

StatusOr<std::vector<Arrival>> Borg(const std::vector<TraceFile>& files, const ConvertOptions& o) {
  std::map<std::string, BorgJob> jobs;                                    // by collection_id
  std::map<std::pair<std::string, int64_t>, BorgInstance> instances;      // by (collection, index)
  double first = -1, last = 0;
  bool any_collections = false, any_instances = false;
  auto id_of = [](const Json& j, const char* field) -> std::optional<std::string> {
    auto it = j.find(field);
    if (it == j.end()) return std::nullopt;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number_integer()) return std::to_string(it->get<int64_t>());
    return std::nullopt;
  };
  for (const TraceFile& f : files) {
    const bool collections = NameHas(f.name, "collection_events");
    const bool instance_table = NameHas(f.name, "instance_events");
    if (!collections && !instance_table) {
      return InvalidArgument(f.name + ": not a borg2019 table: the file's name must contain collection_events or "
                             "instance_events");
    }
    any_collections = any_collections || collections;
    any_instances = any_instances || instance_table;
    ARBITER_RETURN_IF_ERROR(EachLine(f.content, [&](size_t line, std::string_view text) -> Status {
      Json j = Json::parse(text.begin(), text.end(), nullptr, false);
      if (j.is_discarded() || !j.is_object()) return RowError(f.name, line, "(row)", "not a JSON object");
      auto time = Number(j, "time");
      auto type = Number(j, "type");
      auto collection = id_of(j, "collection_id");
      if (!time) return RowError(f.name, line, "time", "missing or not a number");
      if (!type) return RowError(f.name, line, "type", "missing or not a number");
      if (!collection) return RowError(f.name, line, "collection_id", "missing");
      const bool in_trace = InTrace(*time);
      const double t = in_trace ? *time / 1e6 : (*time <= 0 ? 0.0 : -1.0);  // -1: after the trace
      if (in_trace) {
        if (first < 0 || t < first) first = t;
        last = std::max(last, t);
      }
      const int64_t event = Bounded(*type);
      if (collections) {
        BorgJob& job = jobs[*collection];
        if (event == 0 && job.submit < 0 && t >= 0) {  // before the trace: there from its start
          job.submit = t;
          job.priority = Bounded(Number(j, "priority").value_or(0));
          job.type = Bounded(Number(j, "collection_type").value_or(0));
        }
        return Status::Ok();
      }
      auto index = Number(j, "instance_index");
      if (!index) return RowError(f.name, line, "instance_index", "missing or not a number");
      BorgInstance& inst = instances[{*collection, Bounded(*index)}];
      if (event == 0) {
        auto rr = j.find("resource_request");
        if (rr != j.end() && rr->is_object()) {
          inst.cpus = Number(*rr, "cpus").value_or(0);
          inst.memory = Number(*rr, "memory").value_or(0);
        }
      } else if (event >= 3 && event <= 8 && t >= 0) {
        inst.events.emplace_back(t, event);  // in time order below: an export is not sorted
      }
      return Status::Ok();
    }));
  }
  if (!any_collections || !any_instances) {
    return InvalidArgument("borg2019 needs both a collection_events and an instance_events table");
  }
  // Instances per collection, in index order.
  std::map<std::string, std::vector<const BorgInstance*>> per_job;
  for (const auto& [key, inst] : instances) per_job[key.first].push_back(&inst);
  std::vector<Arrival> out;
  for (const auto& [id, job] : jobs) {
    auto it = per_job.find(id);
    if (job.submit < 0 || it == per_job.end()) continue;  // submitted before the trace, or no instances
    Arrival a;
    a.time_ms = Bounded(std::round(std::clamp(job.submit, 0.0, kMaxSecondsD) * 1000));
    a.kind = job.type == 1 ? ArrivalKind::kDeployment : ArrivalKind::kJob;
    a.name = std::string(job.type == 1 ? "alloc-" : "job-") + id;
    a.priority_class = BorgTier(job.priority);
    double cpus = 0, memory = 0;
    std::vector<double> runs;
    for (const BorgInstance* inst : it->second) {
      cpus += std::clamp(inst->cpus, 0.0, 1e6);
      memory += std::clamp(inst->memory, 0.0, 1e6);
      // Its last run: the last SCHEDULE, to the first end after it (or the trace's end).
      std::vector<std::pair<double, int64_t>> events = inst->events;
      std::sort(events.begin(), events.end());
      double start = -1, end = -1;
      for (const auto& [t, type] : events) {
        if (type == 3) {
          start = t;
          end = -1;
        } else if (start >= 0 && end < 0) {
          end = t;
        }
      }
      if (start >= 0) runs.push_back(std::max(0.0, (end >= 0 ? end : last) - start));
    }
    const double n = static_cast<double>(it->second.size());
    a.count = static_cast<int32_t>(std::min<size_t>(it->second.size(), kMaxCountPerArrival));
    a.milli_cpu = Bounded(std::max(1.0, std::round(cpus / n * static_cast<double>(o.machine_milli_cpu))));
    a.memory_bytes = Bounded(std::round(memory / n * static_cast<double>(o.machine_memory)));
    if (runs.empty()) {
      a.run_seconds = 1;
    } else {
      std::sort(runs.begin(), runs.end());
      a.run_seconds = Bounded(std::clamp(std::round(runs[runs.size() / 2]), 1.0, kMaxSecondsD));
    }
    out.push_back(std::move(a));
  }
  std::stable_sort(out.begin(), out.end(), [](const Arrival& x, const Arrival& y) { return x.time_ms < y.time_ms; });
  return out;
}

// ---- Alibaba 2018 -------------------------------------------------------------------------

std::vector<std::string_view> Split(std::string_view line) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  for (;;) {
    size_t comma = line.find(',', pos);
    out.push_back(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::optional<double> Field(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::string copy(s);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

// A name the workload takes: lower case, [a-z0-9-], at most 52 characters.
std::string CleanName(std::string_view prefix, std::string_view raw) {
  std::string s(prefix);
  for (char c : raw) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    s += ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) ? c : '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  while (!s.empty() && s.front() == '-') s.erase(s.begin());
  if (s.size() > 52) s.resize(52);
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s;
}

StatusOr<std::vector<Arrival>> Alibaba(const std::vector<TraceFile>& files, const ConvertOptions& o) {
  struct App {
    double first = -1;
    std::map<std::string, std::pair<double, double>> containers;  // id -> (cpu_request, mem_size)
  };
  std::map<std::string, App> apps;
  std::vector<Arrival> out;
  std::set<std::string> taken;
  // A name not yet taken: `name` (or `fallback`), else with the lowest free "-N".
  auto Unique = [&](std::string name, const char* fallback) {
    if (name.empty()) name = fallback;
    std::string candidate = name;
    for (int k = 1; taken.contains(candidate); ++k) candidate = name.substr(0, 45) + "-" + std::to_string(k);
    taken.insert(candidate);
    return candidate;
  };
  double first = -1, last = 0;
  for (const TraceFile& f : files) {
    const bool tasks = NameHas(f.name, "batch_task");
    const bool containers = NameHas(f.name, "container_meta");
    if (!tasks && !containers) {
      return InvalidArgument(f.name + ": not an alibaba2018 table: the file's name must contain batch_task or "
                             "container_meta");
    }
    ARBITER_RETURN_IF_ERROR(EachLine(f.content, [&](size_t line, std::string_view text) -> Status {
      const std::vector<std::string_view> col = Split(text);
      if (tasks) {
        if (col.size() != 9) return RowError(f.name, line, "(row)", "batch_task has 9 columns, not " + std::to_string(col.size()));
        const std::string_view status = col[4];
        auto start = Field(col[5]), end = Field(col[6]), cpu = Field(col[7]), mem = Field(col[8]), n = Field(col[1]);
        if (!n || *n < 1) return RowError(f.name, line, "instance_num", "not a positive number");
        if (!start) return RowError(f.name, line, "start_time", "not a number");
        if (status != "Terminated" || !end || *end < *start) return Status::Ok();  // never ran to its end
        if (!cpu) return RowError(f.name, line, "plan_cpu", "not a number");
        if (first < 0 || *start < first) first = *start;
        last = std::max(last, *end);
        Arrival a;
        a.time_ms = Bounded(std::round(std::clamp(*start, 0.0, kMaxSecondsD) * 1000));
        a.kind = ArrivalKind::kJob;
        a.name = Unique(CleanName("", std::string(col[2]) + "-" + std::string(col[0])), "task");
        a.priority_class = "batch";
        a.count = static_cast<int32_t>(std::min<double>(*n, kMaxCountPerArrival));
        a.milli_cpu = Bounded(std::max(1.0, std::round(*cpu * 10)));  // 100 = one CPU
        a.memory_bytes = Bounded(std::round(std::clamp(mem.value_or(0), 0.0, 1e6) / 100.0 * static_cast<double>(o.machine_memory)));
        a.run_seconds = Bounded(std::clamp(std::round(*end - *start), 1.0, kMaxSecondsD));
        out.push_back(std::move(a));
        return Status::Ok();
      }
      if (col.size() != 8) return RowError(f.name, line, "(row)", "container_meta has 8 columns, not " + std::to_string(col.size()));
      auto time = Field(col[2]), cpu = Field(col[5]), mem = Field(col[7]);
      if (!time) return RowError(f.name, line, "time_stamp", "not a number");
      if (!cpu) return RowError(f.name, line, "cpu_request", "not a number");
      if (first < 0 || *time < first) first = *time;
      last = std::max(last, *time);
      App& app = apps[std::string(col[3])];
      if (app.first < 0 || *time < app.first) app.first = *time;
      app.containers.emplace(std::string(col[0]), std::make_pair(*cpu, mem.value_or(0)));
      return Status::Ok();
    }));
  }
  for (const auto& [id, app] : apps) {
    Arrival a;
    a.time_ms = Bounded(std::round(std::clamp(app.first, 0.0, kMaxSecondsD) * 1000));
    a.kind = ArrivalKind::kDeployment;
    a.name = Unique(CleanName("app-", id), "app");
    a.priority_class = "online";
    double cpu = 0, mem = 0;
    for (const auto& [c, r] : app.containers) {
      cpu += r.first;
      mem += r.second;
    }
    const double n = static_cast<double>(app.containers.size());
    a.count = static_cast<int32_t>(std::min<size_t>(app.containers.size(), kMaxCountPerArrival));
    a.milli_cpu = Bounded(std::max(1.0, std::round(std::clamp(cpu / n, 0.0, 1e9) * 10)));
    a.memory_bytes = Bounded(std::round(std::clamp(mem / n, 0.0, 1e6) / 100.0 * static_cast<double>(o.machine_memory)));
    a.run_seconds = Bounded(std::clamp(std::round(last - app.first) + 1, 1.0, kMaxSecondsD));
    out.push_back(std::move(a));
  }
  // Times from the trace's first event.
  const int64_t origin = first > 0 ? Bounded(std::round(std::clamp(first, 0.0, kMaxSecondsD) * 1000)) : 0;
  for (auto& a : out) a.time_ms = std::max<int64_t>(0, a.time_ms - origin);
  std::stable_sort(out.begin(), out.end(), [](const Arrival& x, const Arrival& y) { return x.time_ms < y.time_ms; });
  return out;
}

}  // namespace

StatusOr<std::vector<Arrival>> ConvertTrace(const std::string& format, const std::vector<TraceFile>& files,
                                            const ConvertOptions& options) {
  if (files.empty()) return InvalidArgument("give the trace's tables");
  if (format == "borg2019") return Borg(files, options);
  if (format == "alibaba2018") return Alibaba(files, options);
  return InvalidArgument("--from must be borg2019 or alibaba2018, not \"" + format + "\"");
}

}  // namespace arbiter::simulate
