// Reading and writing the few fields of stored pods (JSON) that the control loop's jobs share.
#pragma once

#include <string>
#include <string_view>

#include "arbiter/base/json.h"

namespace arbiter::controlplane {

// The value at `a`.`b` of an object, or null; never copies.
inline const nlohmann::json* At(const nlohmann::json& o, const char* a, const char* b) {
  if (!o.is_object()) return nullptr;
  auto i = o.find(a);
  if (i == o.end() || !i->is_object()) return nullptr;
  auto j = i->find(b);
  return j == i->end() ? nullptr : &*j;
}

inline std::string_view StringAt(const nlohmann::json& o, const char* a, const char* b) {
  const nlohmann::json* v = At(o, a, b);
  return v != nullptr && v->is_string() ? std::string_view(v->get_ref<const std::string&>()) : std::string_view();
}

// Succeeded or Failed.
inline bool Terminal(const nlohmann::json& pod) {
  const std::string_view phase = StringAt(pod, "status", "phase");
  return phase == "Succeeded" || phase == "Failed";
}

inline std::string NodeOf(const nlohmann::json& pod) { return std::string(StringAt(pod, "spec", "nodeName")); }

inline bool Terminating(const nlohmann::json& o) { return At(o, "metadata", "deletionTimestamp") != nullptr; }

// The condition of `type` in the object's status.conditions, or null.
inline const nlohmann::json* FindCondition(const nlohmann::json& o, std::string_view type) {
  const nlohmann::json* conds = At(o, "status", "conditions");
  if (conds == nullptr || !conds->is_array()) return nullptr;
  for (const nlohmann::json& c : *conds) {
    if (c.is_object() && c.value("type", "") == type) return &c;
  }
  return nullptr;
}

// The scheduler has marked the pod as its preemption's victim (a DisruptionTarget condition,
// reason PreemptionByScheduler).
inline bool HasDisruptionTarget(const nlohmann::json& pod) {
  const nlohmann::json* c = FindCondition(pod, "DisruptionTarget");
  return c != nullptr && c->value("status", "") == "True" && c->value("reason", "") == "PreemptionByScheduler";
}

}  // namespace arbiter::controlplane
