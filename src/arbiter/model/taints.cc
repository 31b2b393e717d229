// Toleration matching, as v1.Toleration.ToleratesTaint.
#include "arbiter/model/taints.h"

namespace arbiter::model {

std::string_view TaintEffectName(TaintEffect e) {
  switch (e) {
    case TaintEffect::kNoSchedule: return "NoSchedule";
    case TaintEffect::kPreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::kNoExecute: return "NoExecute";
  }
  return "?";
}

std::optional<TaintEffect> ParseTaintEffect(std::string_view name) {
  if (name == "NoSchedule") return TaintEffect::kNoSchedule;
  if (name == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (name == "NoExecute") return TaintEffect::kNoExecute;
  return std::nullopt;
}

bool Toleration::Tolerates(const Taint& t) const {
  if (effect.has_value() && *effect != t.effect) return false;
  if (!key.empty() && key != t.key) return false;
  switch (op) {
    case Op::kExists: return true;
    case Op::kEqual: return value == t.value;
  }
  return false;
}

bool TolerationsTolerate(const std::vector<Toleration>& tolerations, const Taint& t) {
  for (const auto& tol : tolerations) {
    if (tol.Tolerates(t)) return true;
  }
  return false;
}

}  // namespace arbiter::model
