// Workloads of `arbiter simulate`: JSON Lines in and out, and the trace-shaped generator.
#include "arbiter/simulate/workload.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "arbiter/base/json.h"
#include "arbiter/base/rng.h"
#include "arbiter/model/quantity.h"

namespace arbiter::simulate {

std::string_view ArrivalKindName(ArrivalKind k) {
  switch (k) {
    case ArrivalKind::kPod:
      return "Pod";
    case ArrivalKind::kJob:
      return "Job";
    case ArrivalKind::kDeployment:
      return "Deployment";
    case ArrivalKind::kGang:
      return "Gang";
  }
  return "Job";
}

namespace {

using Json = nlohmann::json;

constexpr int64_t kMaxSeconds = 10LL * 365 * 24 * 3600;  // ten years: any time or run time

Status LineError(const std::string& file, size_t line, const std::string& field, const std::string& msg) {
  return InvalidArgument(file + ":" + std::to_string(line) + ": " + (field.empty() ? "" : field + ": ") + msg);
}

// A DNS-1123 label (a name the API would take for the pods' generateName prefix).
bool ValidName(const std::string& s) {
  if (s.empty() || s.size() > 52) return false;  // room for "-" and the suffixes the controllers add
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && !(c == '-' && i > 0 && i + 1 < s.size())) return false;
  }
  return true;
}

StatusOr<Arrival> DecodeArrival(const Json& j, const std::string& file, size_t line) {
  if (!j.is_object()) return LineError(file, line, "", "must be a JSON object");
  static const char* const kKnown[] = {"time", "kind", "namespace", "name", "priorityClass", "cpu",
                                       "memory", "runSeconds", "count"};
  for (const auto& [key, value] : j.items()) {
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
      return LineError(file, line, key,
                       "unknown field (time, kind, namespace, name, priorityClass, cpu, memory, runSeconds, count)");
    }
  }
  Arrival a;
  auto number = [&](const char* field, double min, double max, bool required) -> StatusOr<std::optional<double>> {
    auto it = j.find(field);
    if (it == j.end()) {
      if (required) return LineError(file, line, field, "is required");
      return std::optional<double>();
    }
    if (!it->is_number()) return LineError(file, line, field, "must be a number");
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < min || v > max) {
      return LineError(file, line, field, "must be between " + std::to_string(static_cast<int64_t>(min)) + " and " +
                                              std::to_string(static_cast<int64_t>(max)));
    }
    return std::optional<double>(v);
  };
  auto string = [&](const char* field, bool required) -> StatusOr<std::optional<std::string>> {
    auto it = j.find(field);
    if (it == j.end()) {
      if (required) return LineError(file, line, field, "is required");
      return std::optional<std::string>();
    }
    if (!it->is_string()) return LineError(file, line, field, "must be a string");
    return std::optional<std::string>(it->get<std::string>());
  };
  ARBITER_ASSIGN_OR_RETURN(time, number("time", 0, static_cast<double>(kMaxSeconds), true));
  a.time_ms = static_cast<int64_t>(std::llround(*time * 1000));
  ARBITER_ASSIGN_OR_RETURN(kind, string("kind", true));
  if (*kind == "Pod") {
    a.kind = ArrivalKind::kPod;
  } else if (*kind == "Job") {
    a.kind = ArrivalKind::kJob;
  } else if (*kind == "Deployment") {
    a.kind = ArrivalKind::kDeployment;
  } else if (*kind == "Gang") {
    a.kind = ArrivalKind::kGang;
  } else {
    return LineError(file, line, "kind", "must be Pod, Job, Deployment or Gang, not \"" + *kind + "\"");
  }
  ARBITER_ASSIGN_OR_RETURN(ns, string("namespace", false));
  if (ns) {
    if (!ValidName(*ns)) return LineError(file, line, "namespace", "must be a DNS label, not \"" + *ns + "\"");
    a.ns = *ns;
  }
  ARBITER_ASSIGN_OR_RETURN(name, string("name", true));
  if (!ValidName(*name)) {
    return LineError(file, line, "name", "must be a DNS label of at most 52 characters, not \"" + *name + "\"");
  }
  a.name = *name;
  ARBITER_ASSIGN_OR_RETURN(pc, string("priorityClass", false));
  if (pc) a.priority_class = *pc;
  for (const char* field : {"cpu", "memory"}) {
    ARBITER_ASSIGN_OR_RETURN(q, string(field, false));
    if (!q) continue;
    auto parsed = model::Quantity::Parse(*q);
    if (!parsed.ok()) return LineError(file, line, field, parsed.status().message());
    if (parsed->milli() < 0) return LineError(file, line, field, "must not be negative");
    // Both are held in milli-units on the way to the pod: at most what that can hold.
    if (parsed->value() > std::numeric_limits<int64_t>::max() / 1000) {
      return LineError(file, line, field, "is too large");
    }
    if (std::string_view(field) == "cpu") {
      a.milli_cpu = parsed->milli();
    } else {
      a.memory_bytes = parsed->value();
    }
  }
  ARBITER_ASSIGN_OR_RETURN(run, number("runSeconds", 0, static_cast<double>(kMaxSeconds), true));
  a.run_seconds = static_cast<int64_t>(std::llround(*run));
  ARBITER_ASSIGN_OR_RETURN(count, number("count", 1, kMaxCountPerArrival, false));
  if (count) {
    if (*count != std::floor(*count)) return LineError(file, line, "count", "must be a whole number");
    a.count = static_cast<int32_t>(*count);
  }
  if (a.kind == ArrivalKind::kPod && a.count != 1) return LineError(file, line, "count", "a Pod arrival is one pod");
  return a;
}

}  // namespace

StatusOr<std::vector<Arrival>> ParseWorkload(const std::string& text, const std::string& name) {
  std::vector<Arrival> out;
  std::set<std::pair<std::string, std::string>> names;
  size_t line = 0;
  size_t pos = 0;
  int64_t pods = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line;
    std::string_view l(text.data() + pos, end - pos);
    pos = end + 1;
    if (l.size() > kMaxLineBytes) return LineError(name, line, "", "longer than " + std::to_string(kMaxLineBytes) + " bytes");
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ' || l.back() == '\t')) l.remove_suffix(1);
    if (l.empty()) continue;
    Json j = Json::parse(l.begin(), l.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return LineError(name, line, "", "not a JSON object");
    auto decoded = DecodeArrival(j, name, line);
    if (!decoded.ok()) return decoded.status();
    Arrival& a = *decoded;
    if (!names.emplace(a.ns, a.name).second) {
      return LineError(name, line, "name", "\"" + a.name + "\" arrives twice in namespace " + a.ns);
    }
    pods += a.count;
    if (out.size() >= kMaxArrivals || pods > static_cast<int64_t>(kMaxArrivals)) {
      return LineError(name, line, "", "more than " + std::to_string(kMaxArrivals) + " arrivals or pods");
    }
    out.push_back(std::move(a));
  }
  std::stable_sort(out.begin(), out.end(), [](const Arrival& x, const Arrival& y) { return x.time_ms < y.time_ms; });
  return out;
}

std::string FormatWorkload(const std::vector<Arrival>& arrivals) {
  std::string out;
  for (const Arrival& a : arrivals) {
    nlohmann::ordered_json j;
    if (a.time_ms % 1000 == 0) {
      j["time"] = a.time_ms / 1000;
    } else {
      j["time"] = static_cast<double>(a.time_ms) / 1000.0;
    }
    j["kind"] = std::string(ArrivalKindName(a.kind));
    if (a.ns != "default") j["namespace"] = a.ns;
    j["name"] = a.name;
    if (!a.priority_class.empty()) j["priorityClass"] = a.priority_class;
    j["cpu"] = model::Quantity::FromMilli(a.milli_cpu).ToString();
    if (a.memory_bytes > 0) j["memory"] = model::Quantity::FromValue(a.memory_bytes, model::Quantity::Format::kBinarySI).ToString();
    j["runSeconds"] = a.run_seconds;
    j["count"] = a.count;
    out += j.dump() + "\n";
  }
  return out;
}

// ---- The generator ------------------------------------------------------------------------

std::vector<Band> BandsOf(TraceShape shape) {
  if (shape == TraceShape::kAlibaba) return {{"online", 1000}, {"batch-high", 200}, {"batch", 100}};
  return {{"monitoring", 360}, {"production", 200}, {"mid", 117}, {"beb", 110}, {"free", 0}};
}

namespace {

// One band's share of the pods and the shape of what it runs.
struct BandShape {
  std::string band;
  double share = 0;          // of all pods
  ArrivalKind kind = ArrivalKind::kJob;
  double gang_share = 0;     // of its Jobs, run as gangs
  double standing = 0;       // of its Deployments, present from the start for the whole run
  int32_t max_count = 1;     // pods per arrival: 1 + a Pareto tail up to this
  double count_alpha = 1.5;
  double cpu_median = 250;   // milli-CPU, lognormal
  double cpu_sigma = 1.0;
  double run_median = 300;   // seconds, lognormal (a Deployment: its lifetime)
  double run_sigma = 1.5;
};

std::vector<BandShape> ShapeOf(TraceShape shape) {
  if (shape == TraceShape::kAlibaba) {
    // cluster-trace-v2018: online services (containers, long-running, colocated) and batch tasks
    // of many instances; batch instances are the great majority and run for minutes.
    return {
        {"online", 0.08, ArrivalKind::kDeployment, 0, 0.7, 16, 1.2, 400, 0.6, 8 * 3600, 0.8},
        {"batch-high", 0.12, ArrivalKind::kJob, 0.2, 0, 64, 1.1, 200, 0.8, 240, 1.4},
        {"batch", 0.80, ArrivalKind::kJob, 0.05, 0, 256, 1.0, 150, 0.9, 180, 1.6},
    };
  }
  // Borg 2019 (Tirmazi et al., EuroSys 2020): five tiers; best-effort batch now holds most jobs
  // (moved there from the free tier); production runs long-lived services; a few monitoring
  // jobs; an extremely heavy tail of job sizes.
  return {
      {"monitoring", 0.02, ArrivalKind::kDeployment, 0, 0.8, 4, 2.0, 200, 0.5, 12 * 3600, 0.7},
      {"production", 0.23, ArrivalKind::kDeployment, 0, 0.5, 16, 1.3, 500, 0.9, 6 * 3600, 1.0},
      {"mid", 0.08, ArrivalKind::kJob, 0.05, 0, 32, 1.3, 300, 1.0, 900, 1.5},
      {"beb", 0.55, ArrivalKind::kJob, 0.10, 0, 64, 1.2, 250, 1.0, 300, 1.8},
      {"free", 0.12, ArrivalKind::kJob, 0, 0, 64, 1.2, 200, 1.0, 300, 1.8},
  };
}

// Deterministic draws from the seeded source.
class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  double Unit() { return (static_cast<double>(rng_.Next() >> 11) + 0.5) / 9007199254740992.0; }  // (0, 1)
  double Normal() {
    // Box-Muller; one value per call keeps the sequence simple.
    const double u = Unit(), v = Unit();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * 3.14159265358979323846 * v);
  }
  double LogNormal(double median, double sigma) { return median * std::exp(sigma * Normal()); }
  // 1 + a Pareto tail, at most `max`.
  int32_t Count(double alpha, int32_t max) {
    const double x = std::pow(Unit(), -1.0 / alpha);  // >= 1
    return static_cast<int32_t>(std::min<double>(max, std::floor(x)));
  }
  Rng& rng() { return rng_; }

 private:
  Rng rng_;
};

}  // namespace

std::vector<Arrival> GenerateWorkload(const GenerateOptions& options) {
  const std::vector<BandShape> shapes = ShapeOf(options.shape);
  Draw draw(options.seed);
  const int64_t duration_ms = options.duration_seconds * 1000;
  std::vector<Arrival> out;
  std::vector<double> cumulative;
  double total = 0;
  for (const auto& s : shapes) cumulative.push_back(total += s.share);
  int64_t pods = 0;
  size_t serial = 0;
  while (pods < options.pods) {
    const double pick = draw.Unit() * total;
    size_t b = 0;
    while (b + 1 < shapes.size() && pick > cumulative[b]) ++b;
    const BandShape& s = shapes[b];
    Arrival a;
    a.priority_class = s.band;
    a.kind = s.kind;
    a.count = draw.Count(s.count_alpha, s.max_count);
    a.count = static_cast<int32_t>(std::min<int64_t>(a.count, options.pods - pods));
    a.milli_cpu = std::clamp<int64_t>(std::llround(draw.LogNormal(s.cpu_median, s.cpu_sigma) / 10) * 10, 10, options.max_milli_cpu);
    const double gib_per_cpu = std::clamp(draw.LogNormal(2.0, 0.5), 0.25, 8.0);
    a.memory_bytes = std::clamp<int64_t>(
        static_cast<int64_t>(static_cast<double>(a.milli_cpu) / 1000.0 * gib_per_cpu * 1024) * 1024 * 1024,
        64LL * 1024 * 1024, 16LL * 1024 * 1024 * 1024);
    a.run_seconds = std::clamp<int64_t>(std::llround(draw.LogNormal(s.run_median, s.run_sigma)), 5,
                                        std::max<int64_t>(5, options.duration_seconds));
    // A trace opens on a cluster already at work: a share of the arrivals is there at the start.
    a.time_ms = draw.Unit() < options.initial_share ? 0 : static_cast<int64_t>(draw.Unit() * static_cast<double>(duration_ms));
    if (a.kind == ArrivalKind::kDeployment && draw.Unit() < s.standing) {
      a.time_ms = 0;
      a.run_seconds = options.duration_seconds;
    } else if (a.kind == ArrivalKind::kJob && a.count > 1 && draw.Unit() < s.gang_share) {
      a.kind = ArrivalKind::kGang;
      a.count = std::min(a.count, 16);
    } else if (a.kind == ArrivalKind::kJob && a.count == 1 && draw.Unit() < 0.2) {
      a.kind = ArrivalKind::kPod;
    }
    a.name = s.band + "-" + std::to_string(serial++);
    pods += a.count;
    out.push_back(std::move(a));
  }
  // The offered load: scale the run times of the batch (Job, Gang, Pod) arrivals so that the
  // work arriving within the duration is `load` times what the cluster can run in it.
  if (options.cluster_milli_cpu > 0) {
    auto work = [&](const Arrival& a, double scale) {
      const double left = static_cast<double>(duration_ms - a.time_ms) / 1000.0;
      const double run = a.kind == ArrivalKind::kDeployment ? static_cast<double>(a.run_seconds)
                                                            : static_cast<double>(a.run_seconds) * scale;
      return static_cast<double>(a.milli_cpu) * a.count * std::min(left, run);
    };
    const double target = options.load * static_cast<double>(options.cluster_milli_cpu) *
                          static_cast<double>(options.duration_seconds);
    double lo = 0.01, hi = 100000;
    for (int i = 0; i < 60; ++i) {  // bisection on the scale (work grows with it)
      const double mid = std::sqrt(lo * hi);
      double sum = 0;
      for (const auto& a : out) sum += work(a, mid);
      (sum < target ? lo : hi) = mid;
    }
    for (auto& a : out) {
      if (a.kind == ArrivalKind::kDeployment) continue;
      a.run_seconds = std::max<int64_t>(1, std::llround(static_cast<double>(a.run_seconds) * lo));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Arrival& x, const Arrival& y) { return x.time_ms < y.time_ms; });
  return out;
}

}  // namespace arbiter::simulate
