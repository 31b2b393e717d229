// Nomad plan output.
#include "arbiter/nomad/render.h"

#include "arbiter/base/text_table.h"

#include "arbiter/base/json.h"

#include <set>
#include <sstream>

namespace arbiter::nomad {

namespace {

using OrderedJson = nlohmann::ordered_json;

// `nomad job plan` separates columns by two spaces.
std::string Table(const std::vector<std::vector<std::string>>& rows) { return TextTable(rows, 2); }

}  // namespace

std::string RenderJson(const Job& job, const NomadPlan& plan) {
  OrderedJson j;
  OrderedJson updates = OrderedJson::object();
  for (const auto& tg : job.groups) {
    auto it = plan.desired_updates.find(tg.name);
    const GroupUpdate u = it == plan.desired_updates.end() ? GroupUpdate{} : it->second;
    updates[tg.name] = {{"Ignore", u.ignore}, {"Place", u.place},         {"Migrate", 0},
                        {"Stop", 0},          {"InPlaceUpdate", 0},       {"DestructiveUpdate", 0},
                        {"Canary", 0},        {"Preemptions", u.preemptions}};
  }
  OrderedJson preempted = OrderedJson::array();
  for (const auto& p : plan.preempted) {
    const Alloc& a = *p.alloc;
    preempted.push_back({{"ID", a.id},
                         {"Name", a.name},
                         {"Namespace", a.ns},
                         {"JobID", a.job_id},
                         {"JobType", a.job_type},
                         {"JobPriority", a.job_priority},
                         {"TaskGroup", a.task_group},
                         {"NodeID", a.node_id},
                         {"DesiredStatus", "evict"},
                         {"DesiredDescription", "Preempted by alloc ID " + p.by},
                         {"ClientStatus", a.client_status},
                         {"PreemptedByAllocation", p.by}});
  }
  j["Annotations"] = {{"DesiredTGUpdates", updates}, {"PreemptedAllocs", preempted}};
  OrderedJson failed = OrderedJson::object();
  for (const auto& [tg, f] : plan.failed) {
    failed[tg] = {{"NodesEvaluated", f.nodes_evaluated},
                  {"NodesFiltered", f.nodes_filtered},
                  {"NodesExhausted", f.nodes_exhausted},
                  {"DimensionExhausted", f.dimension_exhausted},
                  {"CoalescedFailures", f.coalesced_failures}};
  }
  j["FailedTGAllocs"] = failed;
  OrderedJson placements = OrderedJson::array();
  for (const auto& p : plan.placements) {
    OrderedJson entry = {{"TaskGroup", p.task_group},
                  {"Index", p.index},
                  {"NodeID", p.node_id},
                  {"NodeName", p.node_name},
                  {"AllocID", p.alloc_id},
                  {"PreemptedAllocations", p.preempted}};
    if (!p.overflow.empty()) entry["PlanApplierWouldRefuse"] = p.overflow;
    placements.push_back(std::move(entry));
  }
  j["Placements"] = placements;
  return j.dump(2) + "\n";
}

std::string RenderTable(const Job& job, const NomadPlan& plan) {
  std::ostringstream o;
  o << "+ Job: \"" << job.id << "\"\n";
  for (const auto& tg : job.groups) {
    auto it = plan.desired_updates.find(tg.name);
    const GroupUpdate u = it == plan.desired_updates.end() ? GroupUpdate{} : it->second;
    o << "+ Task Group: \"" << tg.name << "\" (";
    std::vector<std::string> parts;
    const int64_t want = u.place;
    if (want > 0) parts.push_back(std::to_string(want) + " create");
    if (u.ignore > 0) parts.push_back(std::to_string(u.ignore) + " ignore");
    for (size_t i = 0; i < parts.size(); ++i) o << (i ? ", " : "") << parts[i];
    o << ")\n";
    for (const auto& t : tg.tasks) o << "  + Task: \"" << t.name << "\" (forces create)\n";
  }
  o << "\nScheduler dry-run:\n";
  if (plan.failed.empty()) {
    o << "- All tasks successfully allocated.\n";
  } else {
    o << "- WARNING: Failed to place all allocations.\n";
    for (const auto& [tg, f] : plan.failed) {
      const int64_t n = f.coalesced_failures + 1;
      o << "  Task Group \"" << tg << "\" (failed to place " << n << " allocation" << (n == 1 ? "" : "s") << "):\n";
      if (f.nodes_filtered > 0) o << "    * Constraint filtered " << f.nodes_filtered << " nodes\n";
      if (f.nodes_exhausted > 0) o << "    * Resources exhausted on " << f.nodes_exhausted << " nodes\n";
      for (const auto& [dim, count] : f.dimension_exhausted) {
        o << "    * Dimension \"" << dim << "\" exhausted on " << count << " nodes\n";
      }
    }
  }
  if (!plan.preempted.empty()) {
    o << "\nPreemptions:\n\n";
    // `nomad job plan`'s three shapes: each allocation below ten; per job below ten jobs; per type.
    std::set<std::pair<std::string, std::string>> jobs;
    for (const auto& p : plan.preempted) jobs.insert({p.alloc->job_id, p.alloc->ns});
    std::vector<std::vector<std::string>> rows;
    if (plan.preempted.size() < 10) {
      rows.push_back({"Alloc ID", "Job ID", "Task Group"});
      for (const auto& p : plan.preempted) rows.push_back({p.alloc->id, p.alloc->job_id, p.alloc->task_group});
    } else if (jobs.size() < 10) {
      rows.push_back({"Job ID", "Namespace", "Job Type", "Preemptions"});
      for (const auto& [id, ns] : jobs) {
        int64_t n = 0;
        std::string type;
        for (const auto& p : plan.preempted) {
          if (p.alloc->job_id == id && p.alloc->ns == ns) {
            ++n;
            type = p.alloc->job_type;
          }
        }
        rows.push_back({id, ns, type, std::to_string(n)});
      }
    } else {
      rows.push_back({"Job Type", "Preemptions"});
      std::map<std::string, int64_t> by_type;
      for (const auto& p : plan.preempted) ++by_type[p.alloc->job_type];
      for (const auto& [type, n] : by_type) rows.push_back({type, std::to_string(n)});
    }
    o << Table(rows);
  }
  return o.str();
}

std::vector<std::string> ApplierNotes(const NomadPlan& plan) {
  std::vector<std::string> notes;
  for (const auto& p : plan.placements) {
    if (p.overflow.empty()) continue;
    const size_t n = p.preempted.size();
    notes.push_back("placement " + p.task_group + "[" + std::to_string(p.index) + "] on node " + p.node_name +
                    ": once its " + std::to_string(n) + " preempted allocation" + (n == 1 ? "" : "s") +
                    " leave, the node still lacks " + p.overflow +
                    " (Nomad's preemptor does not count the job's own allocations on the node). `nomad job plan` "
                    "shows this placement; a real submission's plan applier would refuse it (--plan-applier plans so)");
  }
  return notes;
}

int ExitCode(const NomadPlan& plan) { return plan.Changes() ? 1 : 0; }

}  // namespace arbiter::nomad
