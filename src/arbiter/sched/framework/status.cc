// Names and messages of scheduling statuses.
#include "arbiter/sched/framework/status.h"

namespace arbiter::sched {

std::string_view CodeName(Code c) {
  switch (c) {
    case Code::kSuccess: return "Success";
    case Code::kError: return "Error";
    case Code::kUnschedulable: return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable: return "UnschedulableAndUnresolvable";
    case Code::kWait: return "Wait";
    case Code::kSkip: return "Skip";
    case Code::kPending: return "Pending";
  }
  return "?";
}

std::string Status::Message() const {
  std::string out;
  for (const auto& r : reasons()) {
    if (!out.empty()) out += ", ";
    out += r;
  }
  return out;
}

}  // namespace arbiter::sched
