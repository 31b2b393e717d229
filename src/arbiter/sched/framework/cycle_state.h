// CycleState: what plugins compute in one scheduling cycle (PreFilter results, PreScore
// results) and read back in later extension points. Preemption dry runs Clone() it together
// with a NodeInfo, then let PreFilter extensions adjust the clone as pods are removed and
// re-added, so a clone is deep: it shares nothing mutable with the original.
// Keys are plugin-owned string constants; a cycle holds a handful, so lookups are linear.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace arbiter::sched {

class StateData {
 public:
  virtual ~StateData() = default;
  virtual std::unique_ptr<StateData> Clone() const = 0;
};

class CycleState {
 public:
  CycleState() = default;
  CycleState(CycleState&&) = default;
  CycleState& operator=(CycleState&&) = default;

  // Deep copy: every StateData is cloned; skip sets are copied.
  CycleState Clone() const;

  void Write(std::string_view key, std::unique_ptr<StateData> data);
  StateData* ReadRaw(std::string_view key) const;
  // REQUIRES: the data under `key` was written as a T (keys are private to one plugin).
  template <typename T>
  T* Read(std::string_view key) const {
    return static_cast<T*>(ReadRaw(key));
  }

  // Plugins whose PreFilter / PreScore returned Skip in this cycle, as bits indexed by the
  // plugin's position in the profile (set and read by the Framework only).
  void SkipFilter(size_t plugin_index) { skip_filter_ |= uint64_t{1} << plugin_index; }
  void SkipScore(size_t plugin_index) { skip_score_ |= uint64_t{1} << plugin_index; }
  bool FilterSkipped(size_t plugin_index) const { return (skip_filter_ >> plugin_index) & 1; }
  bool ScoreSkipped(size_t plugin_index) const { return (skip_score_ >> plugin_index) & 1; }
  void ClearScoreSkips() { skip_score_ = 0; }

 private:
  std::vector<std::pair<std::string, std::unique_ptr<StateData>>> data_;
  uint64_t skip_filter_ = 0;
  uint64_t skip_score_ = 0;
};

}  // namespace arbiter::sched
