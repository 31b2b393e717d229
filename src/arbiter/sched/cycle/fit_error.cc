// FailedScheduling message construction.
#include "arbiter/sched/cycle/fit_error.h"

#include <algorithm>
#include <map>

namespace arbiter::sched {

std::string FitErrorMessage(size_t num_all_nodes, const Diagnosis& d) {
  std::string msg = "0/" + std::to_string(num_all_nodes) + " nodes are available:";
  if (!d.pre_filter_message.empty()) {
    msg += " " + d.pre_filter_message + ".";
  } else {
    std::map<std::string, size_t> histogram;
    for (const auto& [node, status] : d.node_to_status.statuses) {
      for (const auto& r : status.reasons()) histogram[r]++;
    }
    const size_t explicit_count = d.node_to_status.statuses.size();
    if (explicit_count < num_all_nodes) {
      for (const auto& r : d.node_to_status.absent.reasons()) histogram[r] += num_all_nodes - explicit_count;
    }
    std::vector<std::string> parts;
    for (const auto& [reason, count] : histogram) parts.push_back(std::to_string(count) + " " + reason);
    std::sort(parts.begin(), parts.end());  // as strings: "10 x" sorts before "2 y"
    if (!parts.empty()) {
      msg += " ";
      for (size_t i = 0; i < parts.size(); ++i) msg += (i ? ", " : "") + parts[i];
      msg += ".";
    }
  }
  if (!d.post_filter_message.empty()) msg += " " + d.post_filter_message;
  return msg;
}

}  // namespace arbiter::sched
