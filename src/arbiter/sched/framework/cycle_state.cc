// CycleState storage and cloning.
#include "arbiter/sched/framework/cycle_state.h"

namespace arbiter::sched {

CycleState CycleState::Clone() const {
  CycleState c;
  c.data_.reserve(data_.size());
  for (const auto& [k, v] : data_) c.data_.emplace_back(k, v ? v->Clone() : nullptr);
  c.skip_filter_ = skip_filter_;
  c.skip_score_ = skip_score_;
  return c;
}

void CycleState::Write(std::string_view key, std::unique_ptr<StateData> data) {
  for (auto& [k, v] : data_) {
    if (k == key) {
      v = std::move(data);
      return;
    }
  }
  data_.emplace_back(std::string(key), std::move(data));
}

StateData* CycleState::ReadRaw(std::string_view key) const {
  for (const auto& [k, v] : data_) {
    if (k == key) return v.get();
  }
  return nullptr;
}

}  // namespace arbiter::sched
