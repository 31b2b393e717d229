// Status and StatusOr: how Arbiter reports failures that a user can act on (bad input, missing
// objects, failed preconditions). Scheduling verdicts use `sched::Status` instead, which carries
// plugin reasons; this one is for everything else. Neither throws.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace arbiter {

enum class StatusCode {
  kOk,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kOutOfRange,
  kInternal,
  kConflict,         // the object changed since the caller read it (optimistic concurrency)
  kGone,             // the requested history (a revision to watch from) is no longer kept
  kUnavailable,      // a backend could not be reached; retrying may succeed
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status Conflict(std::string m) { return {StatusCode::kConflict, std::move(m)}; }
inline Status Gone(std::string m) { return {StatusCode::kGone, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : v_(std::move(value)) {}            // NOLINT: implicit by design
  StatusOr(Status status) : v_(std::move(status)) {}     // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace arbiter

#define ARBITER_RETURN_IF_ERROR(expr)            \
  do {                                           \
    ::arbiter::Status arbiter_status_ = (expr);  \
    if (!arbiter_status_.ok()) return arbiter_status_; \
  } while (0)

// Declares `var` as the value of the StatusOr `expr`, or returns its error.
#define ARBITER_ASSIGN_OR_RETURN(var, expr)          \
  auto var##_or_ = (expr);                           \
  if (!var##_or_.ok()) return var##_or_.status();    \
  const auto var = *std::move(var##_or_)
