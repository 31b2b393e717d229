#include "arbiter/api/container_logs.h"

namespace arbiter::api {

std::vector<ContainerLogs::Line> ContainerLogs::InOrder(const std::vector<Line>& ring, size_t first) {
  std::vector<Line> out;
  out.reserve(ring.size());
  for (size_t i = 0; i < ring.size(); ++i) out.push_back(ring[(first + i) % ring.size()]);
  return out;
}

void ContainerLogs::Append(const std::string& uid, const std::string& container, Timestamp at, std::string text) {
  if (text.size() > kMaxLineBytes) text.resize(kMaxLineBytes);
  std::lock_guard<std::mutex> lock(mu_);
  Logs& l = logs_[{uid, container}];
  const uint64_t seq = l.next_seq++;
  if (l.current.size() < kMaxLines) {
    l.current.push_back({at, std::move(text), seq});
  } else {
    l.current[l.first] = {at, std::move(text), seq};
    l.first = (l.first + 1) % kMaxLines;
  }
}

void ContainerLogs::Restart(const std::string& uid, const std::string& container) {
  std::lock_guard<std::mutex> lock(mu_);
  Logs& l = logs_[{uid, container}];
  l.previous = InOrder(l.current, l.first);
  l.current.clear();
  l.first = 0;
}

void ContainerLogs::Forget(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = logs_.lower_bound({uid, ""}); it != logs_.end() && it->first.first == uid;) it = logs_.erase(it);
}

std::optional<std::vector<ContainerLogs::Line>> ContainerLogs::Read(const std::string& uid, const std::string& container,
                                                                    bool previous) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = logs_.find({uid, container});
  if (it == logs_.end()) return std::nullopt;
  if (previous) {
    if (it->second.previous.empty()) return std::nullopt;
    return it->second.previous;
  }
  return InOrder(it->second.current, it->second.first);
}

size_t ContainerLogs::containers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return logs_.size();
}

}  // namespace arbiter::api
