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
// A success is a code and two empty pointers: Filter and Score return one per node and plugin,
// so the common case allocates and frees nothing. Reasons live behind a shared pointer.
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
  // A reason list that lives for the whole run (see Interned); statuses refer to it by pointer,
  // so a rejection per node neither allocates nor touches a reference count.
  using Reasons = const std::vector<std::string>*;

  Status() = default;
  explicit Status(Code code) : code_(code) {}
  Status(Code code, std::string reason)
      : code_(code), owned_(std::make_shared<const std::vector<std::string>>(1, std::move(reason))) {
    reasons_ = owned_.get();
  }
  Status(Code code, std::vector<std::string> reasons)
      : code_(code), owned_(std::make_shared<const std::vector<std::string>>(std::move(reasons))) {
    reasons_ = owned_.get();
  }
  // REQUIRES: `reasons` outlives every Status made from it (use Interned).
  Status(Code code, Reasons reasons) : code_(code), reasons_(reasons) {}

  // A reason list for a fixed text that is never freed. Call once per text (keep the result in
  // a function-local static).
  static Reasons Interned(std::string_view reason) { return new std::vector<std::string>(1, std::string(reason)); }
  static Reasons Interned(std::vector<std::string> reasons) { return new std::vector<std::string>(std::move(reasons)); }
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
    return reasons_ != nullptr ? *reasons_ : kNone;
  }
  // Identifies the reason list; statuses built from one interned list share it.
  const void* reasons_identity() const { return reasons_; }
  // The plugin that returned this status (set by the framework to the plugin's static name).
  std::string_view plugin() const { return plugin_; }
  Status& WithPlugin(std::string_view p) {
    plugin_ = p;
    return *this;
  }
  // Reasons joined by ", ".
  std::string Message() const;

 private:
  Code code_ = Code::kSuccess;
  Reasons reasons_ = nullptr;
  std::shared_ptr<const std::vector<std::string>> owned_;  // for reasons made per status
  std::string_view plugin_;  // points at a plugin's static name
};

}  // namespace arbiter::sched
