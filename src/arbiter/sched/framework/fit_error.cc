// FailedScheduling message construction.
#include "arbiter/sched/framework/fit_error.h"

#include <algorithm>
#include <map>

namespace arbiter::sched {

std::string FitErrorMessage(size_t num_all_nodes, const Diagnosis& d) {
  std::string msg = "0/" + std::to_string(num_all_nodes) + " nodes are available:";
  if (!d.pre_filter_message.empty()) {
    msg += " " + d.pre_filter_message + ".";
  } else {
    // Count statuses per shared reason list first: thousands of nodes usually share a handful.
    std::vector<std::pair<const Status*, size_t>> distinct;
    for (const auto& [node, status] : d.node_to_status.statuses) {
      if (!distinct.empty() && distinct.back().first->reasons_identity() == status.reasons_identity() &&
          status.reasons_identity() != nullptr) {
        distinct.back().second++;
        continue;
      }
      distinct.emplace_back(&status, 1);
    }
    std::map<std::string, size_t> histogram;
    for (const auto& [status, count] : distinct) {
      for (const auto& r : status->reasons()) histogram[r] += count;
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
