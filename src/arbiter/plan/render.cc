// Table, JSON and YAML renderings of a plan.
#include "arbiter/plan/render.h"

#include "arbiter/base/text_table.h"

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace arbiter::plan {

namespace {

using Json = nlohmann::ordered_json;

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

Json PlanJson(const sim::PlanResult& r, bool explain) {
  Json j;
  j["kind"] = "Plan";
  Json pods = Json::array();
  for (const auto& p : r.pods) {
    Json pj;
    pj["name"] = p.name;
    pj["podGroup"] = p.pod_group.empty() ? Json(nullptr) : Json(p.pod_group);
    pj["status"] = p.scheduled ? "Scheduled" : "Pending";
    pj["node"] = p.scheduled ? Json(p.node) : Json(nullptr);
    pj["nominatedNode"] = p.nominated_node && !p.nominated_node->empty() ? Json(*p.nominated_node) : Json(nullptr);
    pj["message"] = p.message;
    pj["priority"] = p.priority;
    pj["attempts"] = p.attempts;
    pods.push_back(std::move(pj));
  }
  j["pods"] = std::move(pods);
  Json pre = Json::array();
  for (const auto& p : r.preemptions) {
    Json pj;
    pj["preemptor"] = p.preemptor;
    pj["preemptorKind"] = p.preemptor_kind;
    pj["node"] = p.node ? Json(*p.node) : Json(nullptr);
    Json victims = Json::array();
    for (const auto& v : p.victims) {
      victims.push_back({{"name", v.name}, {"node", v.node}, {"priority", v.priority}, {"violatesPDB", v.violates_pdb}});
    }
    pj["victims"] = std::move(victims);
    pre.push_back(std::move(pj));
  }
  j["preemptions"] = std::move(pre);
  if (!r.evictions.empty()) {
    Json ev = Json::array();
    for (const auto& e : r.evictions) {
      ev.push_back({{"name", e.name}, {"node", e.node}, {"reason", e.reason}, {"signal", e.signal}, {"message", e.message}});
    }
    j["evictions"] = std::move(ev);
  }
  Json groups = Json::array();
  for (const auto& g : r.groups) {
    groups.push_back({{"name", g.name},
                      {"kind", g.kind},
                      {"conditions",
                       Json::array({{{"type", g.kind + "InitiallyScheduled"},
                                     {"status", g.initially_scheduled ? "True" : "False"},
                                     {"reason", g.initially_scheduled ? "Scheduled" : "Unschedulable"},
                                     {"message", g.initially_scheduled ? "" : g.message}}})}});
  }
  j["podGroups"] = std::move(groups);
  Json events = Json::array();
  for (const auto& e : r.events) {
    events.push_back({{"time", FormatRfc3339(e.time)}, {"type", e.type}, {"reason", e.reason},
                      {"object", e.object}, {"message", e.message}});
  }
  j["events"] = std::move(events);
  const auto& m = r.preemption_metrics;
  Json buckets = Json::array();
  for (int i = 0; i < sched::preemption::PreemptionMetrics::kVictimBuckets; ++i) {
    buckets.push_back({{"le", 1 << i}, {"count", m.victims_buckets[i]}});
  }
  j["metrics"] = {{"scheduler_preemption_attempts_total", m.attempts},
                  {"scheduler_preemption_victims", {{"count", m.preemptions}, {"sum", m.victims}, {"buckets", buckets}}}};
  const auto& w = r.workload_preemption_metrics;
  j["metrics"]["scheduler_podgroup_preemption_attempts_total"] = w.attempts;
  j["metrics"]["scheduler_podgroup_preemption_victims"] = {{"count", w.preemptions}, {"sum", w.victims}};
  j["metrics"]["scheduler_podgroup_preemption_reprieved_total"] = w.reprieved;
  j["startTime"] = FormatRfc3339(r.start);
  j["endTime"] = FormatRfc3339(r.end);
  if (explain) {
    Json cycles = Json::array();
    for (const auto& c : r.cycles) cycles.push_back(CycleJson(c));
    j["cycles"] = std::move(cycles);
  }
  return j;
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

std::string ExplainText(const sim::PlanResult& r) {
  std::ostringstream o;
  size_t n = 0;
  for (const auto& c : r.cycles) {
    if (!c.group.empty()) {
      o << "\nCycle " << ++n << " at " << FormatRfc3339(c.time) << ": " << c.group_kind << " " << c.group
        << " (attempt " << c.attempt << ", " << c.members.size() << " pending member(s))\n";
      for (const auto& m : c.members) {
        o << "  " << m.pod->pod.Key() << ": " << (m.scheduled ? "placed on " + m.node : "unschedulable: " + m.message)
          << "\n";
      }
      if (!c.members.empty()) {
        for (const auto& line : c.members.front().post_filter_explanation) o << "  " << line << "\n";
      }
      o << "  " << (c.group_scheduled ? "the gang is complete: bound" : c.group_message) << "\n";
      continue;
    }
    o << "\nCycle " << ++n << " at " << FormatRfc3339(c.time) << ": " << c.pod->pod.Key() << " (attempt "
      << c.attempt << ", priority " << c.pod->pod.priority << ")\n";
    if (!c.explain) continue;
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
  }
  return o.str();
}

}  // namespace

std::string Render(const sim::PlanResult& r, Format format, bool explain) {
  switch (format) {
    case Format::kJson:
      return PlanJson(r, explain).dump(2) + "\n";
    case Format::kYaml: {
      YAML::Emitter out;
      EmitYaml(out, PlanJson(r, explain));
      return std::string(out.c_str()) + "\n";
    }
    case Format::kTable:
      break;
  }
  std::vector<std::vector<std::string>> rows{{"NAME", "STATUS", "NODE", "NOMINATED NODE", "MESSAGE"}};
  for (const auto& p : r.pods) {
    rows.push_back({p.name, p.scheduled ? "Scheduled" : "Pending", p.scheduled ? p.node : "<none>",
                    p.nominated_node && !p.nominated_node->empty() ? *p.nominated_node : "<none>",
                    p.message.empty() ? "" : p.message});
  }
  std::string out = Table(rows);
  if (r.pods.empty()) out = "No pending pods.\n";
  if (!r.preemptions.empty()) {
    std::vector<std::vector<std::string>> pre{{"VICTIM", "NODE", "PRIORITY", "PREEMPTOR"}};
    for (const auto& p : r.preemptions) {
      for (const auto& v : p.victims) {
        pre.push_back({v.name, v.node, std::to_string(v.priority), p.preemptor});
      }
    }
    out += "\nPreemptions:\n" + Table(pre);
  }
  if (!r.evictions.empty()) {
    std::vector<std::vector<std::string>> ev{{"POD", "NODE", "REASON", "SIGNAL"}};
    for (const auto& e : r.evictions) ev.push_back({e.name, e.node, e.reason, e.signal});
    out += "\nEvictions:\n" + Table(ev);
  }
  if (!r.groups.empty()) {
    std::vector<std::vector<std::string>> groups{{"GROUP", "KIND", "INITIALLY SCHEDULED", "MESSAGE"}};
    for (const auto& g : r.groups) {
      groups.push_back({g.name, g.kind, g.initially_scheduled ? "True" : "False", g.initially_scheduled ? "" : g.message});
    }
    out += "\nPod groups:\n" + Table(groups);
  }
  if (explain) out += ExplainText(r);
  return out;
}

}  // namespace arbiter::plan
