// Table, JSON and YAML renderings of a plan.
#include "arbiter/plan/render.h"

#include "arbiter/base/text_table.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <sstream>

#include "arbiter/base/json.h"
#include <yaml-cpp/yaml.h>

namespace arbiter::plan {

namespace {

using Json = nlohmann::ordered_json;

}  // namespace

Json CycleJson(const sched::CycleOutcome& c) {
  Json j;
  j["pod"] = c.pod->pod.Key();
  j["attempt"] = c.attempt;
  j["time"] = FormatRfc3339(c.time);
  j["result"] = c.scheduled ? "Scheduled" : "Unschedulable";
  if (c.scheduled) j["node"] = c.node;
  else j["message"] = c.message;
  if (c.explain) {
    const auto& e = *c.explain;
    j["nominatedNodeFirst"] = e.nominated_node_first;
    Json nodes = Json::array();
    for (const auto& v : e.nodes) {
      Json n;
      n["node"] = v.node;
      n["feasible"] = v.feasible;
      Json filters = Json::array();
      for (const auto& f : v.filters) {
        Json fj;
        fj["plugin"] = std::string(f.plugin());
        fj["code"] = std::string(sched::CodeName(f.code()));
        if (!f.reasons().empty()) fj["reason"] = f.Message();
        filters.push_back(std::move(fj));
      }
      n["filters"] = std::move(filters);
      nodes.push_back(std::move(n));
    }
    j["filter"] = std::move(nodes);
    if (e.scores) {
      const auto& t = *e.scores;
      Json scores = Json::array();
      for (size_t i = 0; i < e.score_nodes.size(); ++i) {
        Json s;
        s["node"] = e.score_nodes[i];
        Json per = Json::object();
        for (size_t k = 0; k < t.plugins.size(); ++k) per[std::string(t.plugins[k])] = t.score(i, k);
        s["plugins"] = std::move(per);
        s["total"] = t.totals[i];
        scores.push_back(std::move(s));
      }
      j["scores"] = std::move(scores);
      Json weights = Json::object();
      for (size_t k = 0; k < t.plugins.size(); ++k) weights[std::string(t.plugins[k])] = t.weights[k];
      j["weights"] = std::move(weights);
    }
    if (!e.chosen.empty()) {
      j["chosen"] = e.chosen;
      j["why"] = e.why;
    }
  }
  if (!c.post_filter_explanation.empty()) j["postFilter"] = c.post_filter_explanation;
  if (!c.group.empty()) {
    j["podGroup"] = c.group;
    j["podGroupKind"] = c.group_kind;
    Json members = Json::array();
    for (const auto& m : c.members) members.push_back(CycleJson(m));
    j["members"] = std::move(members);
    j["groupMessage"] = c.group_message;
  }
  return j;
}

Json PodPlanJson(const sim::PodPlan& p) {
  Json pj;
  pj["name"] = p.name;
  pj["podGroup"] = p.pod_group.empty() ? Json(nullptr) : Json(p.pod_group);
  pj["status"] = p.scheduled ? "Scheduled" : "Pending";
  pj["node"] = p.scheduled ? Json(p.node) : Json(nullptr);
  pj["nominatedNode"] = p.nominated_node && !p.nominated_node->empty() ? Json(*p.nominated_node) : Json(nullptr);
  pj["message"] = p.message;
  pj["priority"] = p.priority;
  pj["attempts"] = p.attempts;
  return pj;
}

Json PreemptionJson(const sim::Preemption& p) {
  Json pj;
  pj["preemptor"] = p.preemptor;
  pj["preemptorKind"] = p.preemptor_kind;
  pj["node"] = p.node ? Json(*p.node) : Json(nullptr);
  Json victims = Json::array();
  for (const auto& v : p.victims) {
    victims.push_back({{"name", v.name}, {"node", v.node}, {"priority", v.priority}, {"violatesPDB", v.violates_pdb}});
  }
  pj["victims"] = std::move(victims);
  return pj;
}

namespace {

// The plan's top-level fields after `kind` (and `cycles`), in order: each a whole value, or a
// list written element by element.
struct Field {
  std::string key;
  Json value;  // when not a list
  std::optional<size_t> count;  // a list of this many elements
  std::function<Json(size_t)> element;
};

Field List(std::string key, size_t count, std::function<Json(size_t)> element) {
  return {std::move(key), Json(), count, std::move(element)};
}

std::vector<Field> OutcomeFields(const sim::PlanResult& r) {
  std::vector<Field> f;
  f.push_back(List("pods", r.pods.size(), [&r](size_t i) { return PodPlanJson(r.pods[i]); }));
  f.push_back(List("preemptions", r.preemptions.size(), [&r](size_t i) { return PreemptionJson(r.preemptions[i]); }));
  if (!r.evictions.empty()) {
    f.push_back(List("evictions", r.evictions.size(), [&r](size_t i) {
      const auto& e = r.evictions[i];
      return Json{{"name", e.name}, {"node", e.node}, {"reason", e.reason}, {"signal", e.signal}, {"message", e.message}};
    }));
  }
  f.push_back(List("podGroups", r.groups.size(), [&r](size_t i) {
    const auto& g = r.groups[i];
    return Json{{"name", g.name},
                {"kind", g.kind},
                {"conditions",
                 Json::array({{{"type", g.kind + "InitiallyScheduled"},
                               {"status", g.initially_scheduled ? "True" : "False"},
                               {"reason", g.initially_scheduled ? "Scheduled" : "Unschedulable"},
                               {"message", g.initially_scheduled ? "" : g.message}}})}};
  }));
  f.push_back(List("events", r.events.size(), [&r](size_t i) {
    const auto& e = r.events[i];
    return Json{{"time", FormatRfc3339(e.time)}, {"type", e.type}, {"reason", e.reason},
                {"object", e.object}, {"message", e.message}};
  }));
  const auto& m = r.preemption_metrics;
  Json buckets = Json::array();
  for (int i = 0; i < sched::preemption::PreemptionMetrics::kVictimBuckets; ++i) {
    buckets.push_back({{"le", 1 << i}, {"count", m.victims_buckets[i]}});
  }
  Json metrics = {{"scheduler_preemption_attempts_total", m.attempts},
                  {"scheduler_preemption_victims", {{"count", m.preemptions}, {"sum", m.victims}, {"buckets", buckets}}}};
  const auto& w = r.workload_preemption_metrics;
  metrics["scheduler_podgroup_preemption_attempts_total"] = w.attempts;
  metrics["scheduler_podgroup_preemption_victims"] = {{"count", w.preemptions}, {"sum", w.victims}};
  metrics["scheduler_podgroup_preemption_reprieved_total"] = w.reprieved;
  f.push_back({"metrics", std::move(metrics), std::nullopt, nullptr});
  f.push_back({"startTime", FormatRfc3339(r.start), std::nullopt, nullptr});
  f.push_back({"endTime", FormatRfc3339(r.end), std::nullopt, nullptr});
  return f;
}

// `text` (a value dumped with an indent of 2) written at `indent` spaces: every line after the
// first is shifted, as nlohmann's dump(2) shifts a nested value.
void WriteIndented(std::ostream& out, const std::string& text, size_t indent) {
  size_t from = 0;
  const std::string pad = "\n" + std::string(indent, ' ');
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
    out.write(text.data() + from, static_cast<std::streamsize>(nl - from));
    out << pad;
    from = nl + 1;
  }
  out.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
}

void EmitYaml(YAML::Emitter& out, const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [k, v] : j.items()) {
        out << YAML::Key << k << YAML::Value;
        EmitYaml(out, v);
      }
      out << YAML::EndMap;
      break;
    case Json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& v : j) EmitYaml(out, v);
      out << YAML::EndSeq;
      break;
    case Json::value_t::string: {
      // Quote strings that would read back as another type.
      const std::string s = j.get<std::string>();
      bool quote = s.empty() || s == "true" || s == "false" || s == "null" || s == "~" ||
                   s.find_first_not_of("0123456789.-+eE") == std::string::npos;
      if (quote) out << YAML::DoubleQuoted;
      out << s;
      break;
    }
    case Json::value_t::null:
      out << YAML::Null;
      break;
    case Json::value_t::boolean:
      out << j.get<bool>();
      break;
    default:
      out << j.dump();
      break;
  }
}

// Columns padded to the widest cell plus three spaces, as kubectl's tabwriter does.
std::string Table(const std::vector<std::vector<std::string>>& rows) { return TextTable(rows, 3); }

// One explained cycle for a person, numbered `n`; a blank line after it.
void WriteCycleText(std::ostream& o, const sched::CycleOutcome& c, size_t n) {
  if (!c.group.empty()) {
    o << "Cycle " << n << " at " << FormatRfc3339(c.time) << ": " << c.group_kind << " " << c.group
      << " (attempt " << c.attempt << ", " << c.members.size() << " pending member(s))\n";
    for (const auto& m : c.members) {
      o << "  " << m.pod->pod.Key() << ": " << (m.scheduled ? "placed on " + m.node : "unschedulable: " + m.message)
        << "\n";
    }
    if (!c.members.empty()) {
      for (const auto& line : c.members.front().post_filter_explanation) o << "  " << line << "\n";
    }
    o << "  " << (c.group_scheduled ? "the gang is complete: bound" : c.group_message) << "\n\n";
    return;
  }
  o << "Cycle " << n << " at " << FormatRfc3339(c.time) << ": " << c.pod->pod.Key() << " (attempt "
    << c.attempt << ", priority " << c.pod->pod.priority << ")\n";
  if (!c.explain) {
    o << "\n";
    return;
  }
  const auto& e = *c.explain;
  if (e.nominated_node_first) o << "  nominated node tried first\n";
  if (e.nodes.empty()) o << "  no node was filtered (PreFilter rejected the pod)\n";
  for (const auto& v : e.nodes) {
    o << "  " << v.node << ": " << (v.feasible ? "feasible" : "infeasible") << "\n";
    for (const auto& f : v.filters) {
      o << "    " << f.plugin() << ": " << sched::CodeName(f.code());
      if (!f.reasons().empty()) o << " (" << f.Message() << ")";
      o << "\n";
    }
  }
  if (e.scores) {
    const auto& t = *e.scores;
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> header{"NODE"};
    for (size_t k = 0; k < t.plugins.size(); ++k) {
      header.push_back(std::string(t.plugins[k]) + "x" + std::to_string(t.weights[k]));
    }
    header.push_back("TOTAL");
    rows.push_back(header);
    for (size_t i = 0; i < e.score_nodes.size(); ++i) {
      std::vector<std::string> row{e.score_nodes[i]};
      for (size_t k = 0; k < t.plugins.size(); ++k) row.push_back(std::to_string(t.score(i, k)));
      row.push_back(std::to_string(t.totals[i]));
      rows.push_back(std::move(row));
    }
    o << "  scores:\n";
    std::istringstream lines(Table(rows));
    for (std::string line; std::getline(lines, line);) o << "    " << line << "\n";
  }
  for (const auto& line : c.post_filter_explanation) o << "  " << line << "\n";
  if (c.scheduled) {
    o << "  chosen: " << c.node << (e.why.empty() ? "" : " (" + e.why + ")") << "\n";
  } else {
    o << "  unschedulable: " << c.message << "\n";
  }
  o << "\n";
}

void WriteTables(std::ostream& o, const sim::PlanResult& r) {
  std::vector<std::vector<std::string>> rows{{"NAME", "STATUS", "NODE", "NOMINATED NODE", "MESSAGE"}};
  for (const auto& p : r.pods) {
    rows.push_back({p.name, p.scheduled ? "Scheduled" : "Pending", p.scheduled ? p.node : "<none>",
                    p.nominated_node && !p.nominated_node->empty() ? *p.nominated_node : "<none>",
                    p.message.empty() ? "" : p.message});
  }
  o << (r.pods.empty() ? "No pending pods.\n" : Table(rows));
  if (!r.preemptions.empty()) {
    std::vector<std::vector<std::string>> pre{{"VICTIM", "NODE", "PRIORITY", "PREEMPTOR"}};
    for (const auto& p : r.preemptions) {
      for (const auto& v : p.victims) {
        pre.push_back({v.name, v.node, std::to_string(v.priority), p.preemptor});
      }
    }
    o << "\nPreemptions:\n" << Table(pre);
  }
  if (!r.evictions.empty()) {
    std::vector<std::vector<std::string>> ev{{"POD", "NODE", "REASON", "SIGNAL"}};
    for (const auto& e : r.evictions) ev.push_back({e.name, e.node, e.reason, e.signal});
    o << "\nEvictions:\n" << Table(ev);
  }
  if (!r.groups.empty()) {
    std::vector<std::vector<std::string>> groups{{"GROUP", "KIND", "INITIALLY SCHEDULED", "MESSAGE"}};
    for (const auto& g : r.groups) {
      groups.push_back({g.name, g.kind, g.initially_scheduled ? "True" : "False", g.initially_scheduled ? "" : g.message});
    }
    o << "\nPod groups:\n" << Table(groups);
  }
}

// Closes the cycles (when explaining) and the document with `fields`: JSON, or YAML on `yaml`.
void CloseDocument(std::ostream& out, YAML::Emitter* yaml, bool explain, size_t cycles, const std::vector<Field>& fields) {
  if (yaml == nullptr) {
    if (explain) out << (cycles == 0 ? "]" : "\n  ]");
    for (const Field& f : fields) {
      out << ",\n  " << Json(f.key).dump(-1, ' ', false, Json::error_handler_t::replace) << ": ";
      if (!f.count) {
        WriteIndented(out, f.value.dump(2, ' ', false, Json::error_handler_t::replace), 2);
      } else if (*f.count == 0) {
        out << "[]";
      } else {
        out << "[\n";
        for (size_t i = 0; i < *f.count; ++i) {
          out << "    ";
          WriteIndented(out, f.element(i).dump(2, ' ', false, Json::error_handler_t::replace), 4);
          out << (i + 1 == *f.count ? "\n" : ",\n");
        }
        out << "  ]";
      }
    }
    out << "\n}\n";
  } else {
    YAML::Emitter& em = *yaml;
    if (explain) em << YAML::EndSeq;
    for (const Field& f : fields) {
      em << YAML::Key << f.key << YAML::Value;
      if (!f.count) {
        EmitYaml(em, f.value);
        continue;
      }
      em << YAML::BeginSeq;
      for (size_t i = 0; i < *f.count; ++i) EmitYaml(em, f.element(i));
      em << YAML::EndSeq;
    }
    em << YAML::EndMap;
    out << "\n";
  }
  out.flush();
}

}  // namespace

struct PlanWriter::Impl {
  Format format;
  bool explain;
  std::ostream& out;
  size_t cycles = 0;
  std::optional<YAML::Emitter> yaml;
};

PlanWriter::PlanWriter(Format format, bool explain, std::ostream& out) : impl_(new Impl{format, explain, out, 0, {}}) {
  if (format == Format::kJson) {
    out << "{\n  \"kind\": \"Plan\"";
    if (explain) out << ",\n  \"cycles\": [";
  } else if (format == Format::kYaml) {
    YAML::Emitter& em = impl_->yaml.emplace(out);
    em << YAML::BeginMap << YAML::Key << "kind" << YAML::Value;
    EmitYaml(em, Json("Plan"));
    if (explain) em << YAML::Key << "cycles" << YAML::Value << YAML::BeginSeq;
  }
}

PlanWriter::~PlanWriter() = default;

void PlanWriter::Cycle(const sched::CycleOutcome& cycle) {
  Impl& w = *impl_;
  if (!w.explain) return;
  ++w.cycles;
  switch (w.format) {
    case Format::kJson:
      w.out << (w.cycles == 1 ? "\n    " : ",\n    ");
      WriteIndented(w.out, CycleJson(cycle).dump(2, ' ', false, Json::error_handler_t::replace), 4);
      break;
    case Format::kYaml:
      EmitYaml(*w.yaml, CycleJson(cycle));
      break;
    case Format::kTable:
      WriteCycleText(w.out, cycle, w.cycles);
      break;
  }
}

void PlanWriter::Finish(const sim::PlanResult& r) {
  if (impl_->format == Format::kTable) {
    WriteTables(impl_->out, r);
    impl_->out.flush();
    return;
  }
  CloseDocument(impl_->out, impl_->yaml ? &*impl_->yaml : nullptr, impl_->explain, impl_->cycles, OutcomeFields(r));
}

void PlanWriter::Abort(const std::string& message) {
  if (impl_->format == Format::kTable) {
    impl_->out << "error: " << message << "\n";
    impl_->out.flush();
    return;
  }
  CloseDocument(impl_->out, impl_->yaml ? &*impl_->yaml : nullptr, impl_->explain, impl_->cycles,
                {Field{"error", Json(message), std::nullopt, nullptr}});
}

std::string Render(const sim::PlanResult& r, Format format, bool explain) {
  std::ostringstream out;
  PlanWriter writer(format, explain, out);
  if (explain) {
    for (const auto& c : r.cycles) writer.Cycle(c);
  }
  writer.Finish(r);
  return out.str();
}

}  // namespace arbiter::plan
