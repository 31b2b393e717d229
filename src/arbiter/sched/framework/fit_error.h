// The FailedScheduling message, built exactly as kube-scheduler's FitError.Error():
//   "0/N nodes are available: " + (the PreFilter message + "." when PreFilter rejected the pod,
//   otherwise every reason of every node counted, printed as "<count> <reason>", sorted as
//   strings and joined by ", ", then ".") + (" " + the PostFilter message, if any).
#pragma once

#include <string>

#include "arbiter/sched/framework/interfaces.h"

namespace arbiter::sched {

struct Diagnosis {
  NodeToStatus node_to_status;
  std::string pre_filter_message;
  std::string post_filter_message;
  // Plugins whose rejection put the pod back in the queue (for requeueing on events).
  std::set<std::string> unschedulable_plugins;
};

std::string FitErrorMessage(size_t num_all_nodes, const Diagnosis& d);

}  // namespace arbiter::sched
