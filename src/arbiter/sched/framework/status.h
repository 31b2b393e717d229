// The verdict of a scheduling extension point. Codes mean exactly what kube-scheduler's
// framework codes mean, including what each does to the queue and to preemption:
//   kSuccess                      the plugin is satisfied.
//   kError                        an internal failure; the pod is retried with backoff and
//                                 preemption does not run.
//   kUnschedulable                the node does not fit now, but might after preemption or a
//                                 cluster change; the node is a preemption candidate.
//   kUnschedulableAndUnresolvable the node cannot fit whatever is evicted; preemption skips it.
//   kWait                         (Permit) hold the pod until allowed or timed out.
//   kSkip                         (PreFilter/PreScore) the plugin has nothing to do for this
//                                 pod; its Filter/Score is not called in this cycle.
//   kPending                      the pod waits for something outside the scheduler.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace arbiter::sched {

enum class Code { kSuccess, kError, kUnschedulable, kUnschedulableAndUnresolvable, kWait, kSkip, kPending };

std::string_view CodeName(Code c);

class Status {
 public:
  Status() = default;
  explicit Status(Code code) : code_(code) {}
  Status(Code code, std::string reason) : code_(code) { reasons_.push_back(std::move(reason)); }
  Status(Code code, std::vector<std::string> reasons) : code_(code), reasons_(std::move(reasons)) {}

  static Status Success() { return {}; }

  Code code() const { return code_; }
  bool IsSuccess() const { return code_ == Code::kSuccess; }
  bool IsSkip() const { return code_ == Code::kSkip; }
  // Unschedulable or UnschedulableAndUnresolvable.
  bool IsRejected() const {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable ||
           code_ == Code::kPending;
  }
  const std::vector<std::string>& reasons() const { return reasons_; }
  // The plugin that returned this status (set by the framework).
  const std::string& plugin() const { return plugin_; }
  Status& WithPlugin(std::string_view p) {
    plugin_ = p;
    return *this;
  }
  // Reasons joined by ", ".
  std::string Message() const;

 private:
  Code code_ = Code::kSuccess;
  std::vector<std::string> reasons_;
  std::string plugin_;
};

}  // namespace arbiter::sched
