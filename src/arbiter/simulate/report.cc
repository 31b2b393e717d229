// The simulation report as JSON and HTML.
#include "arbiter/simulate/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "arbiter/base/json.h"

namespace arbiter::simulate {

namespace {

using OrderedJson = nlohmann::ordered_json;

double Round3(double v) { return std::round(v * 1000.0) / 1000.0; }

OrderedJson BandJson(const BandReport& b) {
  OrderedJson j;
  j["name"] = b.name;
  j["priority"] = b.priority;
  j["pods"] = b.pods;
  j["scheduled"] = b.scheduled;
  j["completed"] = b.completed;
  j["withdrawn"] = b.withdrawn;
  j["nodeFailureLosses"] = b.node_failure_losses;
  j["runningAtEnd"] = b.running_at_end;
  j["pendingAtEnd"] = b.pending_at_end;
  j["pendingSeconds"] = {{"p50", Round3(b.pending_seconds.p50)},
                         {"p95", Round3(b.pending_seconds.p95)},
                         {"p99", Round3(b.pending_seconds.p99)}};
  j["preemptions"] = b.preemptions;
  j["preemptionsCaused"] = b.preemptions_caused;
  j["lostCpuSeconds"] = Round3(b.lost_cpu_seconds);
  j["cascadeDepth"] = b.cascade_depth;
  return j;
}

OrderedJson ToJson(const Report& r) {
  OrderedJson j;
  j["config"] = r.config;
  j["nodes"] = r.nodes;
  j["durationSeconds"] = r.duration_seconds;
  j["arrivals"] = r.arrivals;
  j["cycles"] = r.cycles;
  j["bands"] = OrderedJson::array();
  for (const auto& b : r.bands) j["bands"].push_back(BandJson(b));
  j["totals"] = BandJson(r.totals);
  j["totals"]["utilisation"] = Round3(r.utilisation);
  j["totals"]["nodeFailures"] = r.node_failures;
  j["samples"] = OrderedJson::array();
  for (const auto& s : r.samples) j["samples"].push_back({{"seconds", s.seconds}, {"cpu", Round3(s.cpu)}});
  return j;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Num(double v, int decimals = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string Table(const Report& r) {
  std::string h = "<table><tr><th>band</th><th>priority</th><th>pods</th><th>pending p50 / p95 / p99 (s)</th>"
                  "<th>preempted</th><th>caused</th><th>lost CPU·s</th><th>cascade</th><th>pending at end</th></tr>";
  auto row = [&](const BandReport& b, bool total) {
    h += std::string(total ? "<tr class=total>" : "<tr>") + "<td>" + Escape(b.name) + "</td><td>" +
         (total ? "" : std::to_string(b.priority)) + "</td><td>" + std::to_string(b.pods) + "</td><td>" +
         Num(b.pending_seconds.p50) + " / " + Num(b.pending_seconds.p95) + " / " + Num(b.pending_seconds.p99) +
         "</td><td>" + std::to_string(b.preemptions) + "</td><td>" + std::to_string(b.preemptions_caused) + "</td><td>" +
         Num(b.lost_cpu_seconds, 0) + "</td><td>" + std::to_string(b.cascade_depth) + "</td><td>" +
         std::to_string(b.pending_at_end) + "</td></tr>";
  };
  for (const auto& b : r.bands) row(b, false);
  row(r.totals, true);
  return h + "</table><p>Mean utilisation (requested CPU over allocatable): <b>" + Num(r.utilisation * 100) +
         "%</b>; " + std::to_string(r.nodes) + " nodes, " + std::to_string(r.arrivals) + " arrivals, " +
         std::to_string(r.cycles) + " scheduling cycles.</p>";
}

// Utilisation over time, one line per report.
std::string UtilisationPlot(const std::vector<const Report*>& reports) {
  const int w = 640, h = 220, pad = 36;
  static const char* const kColours[] = {"#1f6feb", "#d1242f"};
  std::string s = "<svg xmlns='http://www.w3.org/2000/svg' width='" + std::to_string(w) + "' height='" +
                  std::to_string(h) + "' role='img' aria-label='utilisation over time'>";
  s += "<rect x='" + std::to_string(pad) + "' y='10' width='" + std::to_string(w - pad - 10) + "' height='" +
       std::to_string(h - pad - 10) + "' fill='none' stroke='#999'/>";
  for (int pct : {0, 50, 100}) {
    const double y = 10 + (h - pad - 10) * (1.0 - pct / 100.0);
    s += "<text x='2' y='" + Num(y + 4, 0) + "' font-size='11'>" + std::to_string(pct) + "%</text>";
  }
  for (size_t k = 0; k < reports.size() && k < 2; ++k) {
    const Report& r = *reports[k];
    if (r.samples.empty() || r.duration_seconds <= 0) continue;
    std::string pts;
    for (const auto& p : r.samples) {
      const double x = pad + (w - pad - 10) * static_cast<double>(p.seconds) / static_cast<double>(r.duration_seconds);
      const double y = 10 + (h - pad - 10) * (1.0 - std::min(1.0, p.cpu));
      pts += Num(x) + "," + Num(y) + " ";
    }
    s += "<polyline fill='none' stroke='" + std::string(kColours[k]) + "' stroke-width='1.5' points='" + pts + "'/>";
    s += "<text x='" + std::to_string(pad + 4 + 220 * static_cast<int>(k)) + "' y='" + std::to_string(h - 8) +
         "' font-size='12' fill='" + kColours[k] + "'>" + Escape(r.config) + "</text>";
  }
  return s + "</svg>";
}

// Pending p95 by band, bars side by side per report.
std::string PendingPlot(const std::vector<const Report*>& reports) {
  static const char* const kColours[] = {"#1f6feb", "#d1242f"};
  const Report& first = *reports[0];
  const int bar = 14, gap = 18, left = 110, w = 640;
  double max = 1;
  for (const Report* r : reports) {
    for (const auto& b : r->bands) max = std::max(max, b.pending_seconds.p95);
  }
  const int h = static_cast<int>(first.bands.size()) * (bar * static_cast<int>(reports.size()) + gap) + 20;
  std::string s = "<svg xmlns='http://www.w3.org/2000/svg' width='" + std::to_string(w) + "' height='" +
                  std::to_string(h) + "' role='img' aria-label='pending time p95 by band'>";
  int y = 10;
  for (const auto& band : first.bands) {
    s += "<text x='2' y='" + std::to_string(y + bar) + "' font-size='12'>" + Escape(band.name) + "</text>";
    for (size_t k = 0; k < reports.size() && k < 2; ++k) {
      double v = 0;
      for (const auto& b : reports[k]->bands) {
        if (b.name == band.name) v = b.pending_seconds.p95;
      }
      const double len = (w - left - 80) * v / max;
      s += "<rect x='" + std::to_string(left) + "' y='" + std::to_string(y) + "' width='" + Num(len) + "' height='" +
           std::to_string(bar - 2) + "' fill='" + kColours[k] + "'/>";
      s += "<text x='" + Num(left + len + 4) + "' y='" + std::to_string(y + bar - 3) + "' font-size='11'>" + Num(v) +
           " s</text>";
      y += bar;
    }
    y += gap;
  }
  return s + "</svg>";
}

}  // namespace

std::string ReportJson(const Report& report, const Report* compare) {
  OrderedJson j = ToJson(report);
  if (compare != nullptr) j["compare"] = ToJson(*compare);
  return j.dump(2) + "\n";
}

std::string ReportHtml(const Report& report, const Report* compare) {
  std::vector<const Report*> reports = {&report};
  if (compare != nullptr) reports.push_back(compare);
  std::string page =
      "<!DOCTYPE html><html><head><meta charset='utf-8'><title>arbiter simulate</title><style>"
      "body{font:14px system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0}"
      "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}"
      "tr.total td{font-weight:bold}.side{display:flex;gap:32px;flex-wrap:wrap}</style></head><body>"
      "<h1>arbiter simulate</h1><p>" +
      std::to_string(report.nodes) + " nodes over " + Num(static_cast<double>(report.duration_seconds) / 3600.0) +
      " h of simulated time.</p><div class=side>";
  for (const Report* r : reports) page += "<div><h2>" + Escape(r->config) + "</h2>" + Table(*r) + "</div>";
  page += "</div><h2>Utilisation over time</h2>" + UtilisationPlot(reports) + "<h2>Pending time by band (p95)</h2>" +
          PendingPlot(reports) + "</body></html>\n";
  return page;
}

}  // namespace arbiter::simulate
