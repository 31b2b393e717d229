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
//
// A success is one word and a null pointer: Filter and Score return one per node and plugin,
// so the common case allocates and frees nothing. Reasons live behind the pointer.
#pragma once

#include <memory>
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
  Status(Code code, std::string reason) : code_(code), rep_(std::make_unique<Rep>()) {
    rep_->reasons.push_back(std::move(reason));
  }
  Status(Code code, std::vector<std::string> reasons) : code_(code), rep_(std::make_unique<Rep>()) {
    rep_->reasons = std::move(reasons);
  }
  Status(const Status& o) : code_(o.code_), rep_(o.rep_ ? std::make_unique<Rep>(*o.rep_) : nullptr) {}
  Status& operator=(const Status& o) {
    if (this != &o) {
      code_ = o.code_;
      rep_ = o.rep_ ? std::make_unique<Rep>(*o.rep_) : nullptr;
    }
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status Success() { return {}; }

  Code code() const { return code_; }
  bool IsSuccess() const { return code_ == Code::kSuccess; }
  bool IsSkip() const { return code_ == Code::kSkip; }
  // Unschedulable, UnschedulableAndUnresolvable or Pending.
  bool IsRejected() const {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable ||
           code_ == Code::kPending;
  }
  const std::vector<std::string>& reasons() const {
    static const std::vector<std::string> kNone;
    return rep_ ? rep_->reasons : kNone;
  }
  // The plugin that returned this status (set by the framework).
  const std::string& plugin() const {
    static const std::string kNone;
    return rep_ ? rep_->plugin : kNone;
  }
  Status& WithPlugin(std::string_view p) {
    if (!rep_) rep_ = std::make_unique<Rep>();
    rep_->plugin = p;
    return *this;
  }
  // Reasons joined by ", ".
  std::string Message() const;

 private:
  struct Rep {
    std::vector<std::string> reasons;
    std::string plugin;
  };
  Code code_ = Code::kSuccess;
  std::unique_ptr<Rep> rep_;
};

}  // namespace arbiter::sched
