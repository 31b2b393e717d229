#include "arbiter/sched/preemption/preemption_history.h"

#include <algorithm>

#include "arbiter/base/json.h"

namespace arbiter::sched::preemption {

namespace {

void Merge(std::deque<Timestamp>& into, Timestamp at) {
  into.insert(std::upper_bound(into.begin(), into.end(), at), at);
  while (into.size() > PreemptionHistory::kMaxTimesPerLineage) into.pop_front();
}

}  // namespace

void PreemptionHistory::Record(const std::string& owner_uid, Timestamp at) {
  if (owner_uid.empty()) return;
  Merge(times_[owner_uid], at);
}

void PreemptionHistory::Seed(const std::string& owner_uid, const std::vector<Timestamp>& times) {
  if (owner_uid.empty() || times.empty()) return;
  auto& known = times_[owner_uid];
  // A multiset union: each time as often as the more of the two records holds it (several
  // victims of one decision share a time; the annotation may be this record's own echo).
  std::vector<Timestamp> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size();) {
    const Timestamp t = sorted[i];
    size_t n = 0;
    while (i < sorted.size() && sorted[i] == t) ++i, ++n;
    const auto [lo, hi] = std::equal_range(known.begin(), known.end(), t);
    for (size_t have = static_cast<size_t>(hi - lo); have < n; ++have) Merge(known, t);
  }
}

size_t PreemptionHistory::CountSince(const std::string& owner_uid, Timestamp since) const {
  auto it = times_.find(owner_uid);
  if (it == times_.end()) return 0;
  const auto& t = it->second;
  return static_cast<size_t>(t.end() - std::lower_bound(t.begin(), t.end(), since));
}

std::vector<Timestamp> PreemptionHistory::Times(const std::string& owner_uid) const {
  auto it = times_.find(owner_uid);
  if (it == times_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

std::string FormatPreemptionsAnnotation(const std::vector<Timestamp>& times) {
  nlohmann::json list = nlohmann::json::array();
  for (Timestamp t : times) list.push_back(FormatRfc3339(t));
  return list.dump();
}

StatusOr<std::vector<Timestamp>> ParsePreemptionsAnnotation(std::string_view text) {
  constexpr size_t kMaxBytes = 4096;
  const std::string what = std::string(kPreemptionsAnnotation);
  if (text.size() > kMaxBytes) return InvalidArgument(what + ": longer than " + std::to_string(kMaxBytes) + " bytes");
  const nlohmann::json list = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) return InvalidArgument(what + ": must be a JSON list of RFC 3339 times, not \"" + std::string(text) + "\"");
  std::vector<Timestamp> out;
  for (const auto& item : list) {
    if (!item.is_string()) return InvalidArgument(what + ": every item must be an RFC 3339 time string");
    auto t = ParseRfc3339(item.get<std::string>());
    if (!t.ok()) return InvalidArgument(what + ": " + t.status().message());
    out.push_back(*t);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace arbiter::sched::preemption
