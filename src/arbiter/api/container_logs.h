// The logs of simulated containers: what `kubectl logs` reads from pods/log. A real kubelet
// keeps each container's output on its node and the API server proxies to it; Arbiter's node
// simulator (controlplane/node_simulator.h) writes each container's lifecycle here instead (its
// start, its simulated work, the termination signal and grace period, its exit), and the API
// serves it. Bounded: each container keeps its last kMaxLines lines of at most kMaxLineBytes
// each, and its one previous instance (`--previous`) after a restart; a pod's logs go with it.
// Thread-safe: the control loop writes while API threads read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "arbiter/base/time.h"

namespace arbiter::api {

class ContainerLogs {
 public:
  static constexpr size_t kMaxLines = 1000;
  static constexpr size_t kMaxLineBytes = 4096;

  struct Line {
    Timestamp at = 0;
    std::string text;
    uint64_t seq = 0;  // 1, 2, ... in the order written, across restarts (a follower's place)
  };

  // Appends a line to the current instance of a container of the pod `uid`.
  void Append(const std::string& uid, const std::string& container, Timestamp at, std::string text);
  // The container restarted: its current log becomes the previous one, and a new one begins.
  void Restart(const std::string& uid, const std::string& container);
  // The pod is gone: its logs too.
  void Forget(const std::string& uid);
  // A copy of a container's current (or previous) log; nullopt when there is none.
  std::optional<std::vector<Line>> Read(const std::string& uid, const std::string& container, bool previous) const;
  size_t containers() const;

 private:
  struct Logs {
    std::vector<Line> current, previous;
    size_t first = 0;  // current is a ring once full: its oldest line
    uint64_t next_seq = 1;
  };
  static std::vector<Line> InOrder(const std::vector<Line>& ring, size_t first);
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Logs> logs_;  // by (pod uid, container)
};

}  // namespace arbiter::api
