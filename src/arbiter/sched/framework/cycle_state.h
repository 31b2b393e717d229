// CycleState: what plugins compute in one scheduling cycle (PreFilter results, PreScore
// results) and read back in later extension points. Preemption dry runs Clone() it together
// with a NodeInfo, then let PreFilter extensions adjust the clone as pods are removed and
// re-added, so a clone is deep: it shares nothing mutable with the original.
// Keys are plugin-owned string constants; a cycle holds a handful, so lookups are linear.
#pragma once

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

  // Plugins whose PreFilter / PreScore returned Skip in this cycle.
  void SkipFilter(std::string_view plugin) { skip_filter_.emplace_back(plugin); }
  void SkipScore(std::string_view plugin) { skip_score_.emplace_back(plugin); }
  bool FilterSkipped(std::string_view plugin) const;
  bool ScoreSkipped(std::string_view plugin) const;
  void ClearScoreSkips() { skip_score_.clear(); }

 private:
  std::vector<std::pair<std::string, std::unique_ptr<StateData>>> data_;
  std::vector<std::string> skip_filter_;
  std::vector<std::string> skip_score_;
};

}  // namespace arbiter::sched
