// Taints on nodes and the tolerations on pods that let them through, as core/v1 defines them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace arbiter::model {

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };
std::string_view TaintEffectName(TaintEffect e);
std::optional<TaintEffect> ParseTaintEffect(std::string_view name);

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
};

struct Toleration {
  enum class Op { kEqual, kExists };
  std::string key;  // empty with kExists tolerates every key
  Op op = Op::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // empty tolerates every effect
  std::optional<int64_t> toleration_seconds;

  // v1.Toleration.ToleratesTaint.
  bool Tolerates(const Taint& t) const;
};

bool TolerationsTolerate(const std::vector<Toleration>& tolerations, const Taint& t);

// The taint a cordoned node carries implicitly (NodeUnschedulable checks for its toleration).
inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

}  // namespace arbiter::model
