// ImageLocality (score, weight 1): prefers nodes that already hold the pod's container images,
// scaled by how widely each image is spread so that one node holding a popular image is not
// preferred by every pod ("node heating"). As upstream's imagelocality plugin:
//   * each init and app container's image, with ":latest" added when it names no tag, is looked
//     up among the node's status.images names; a hit adds size * (nodes with the image / all
//     nodes), truncated;
//   * the sum is clamped to [23 MiB, 1000 MiB * containers] and mapped linearly onto [0, 100].
// Scores need no normalisation. PreScore skips the plugin when no node holds any of the pod's
// images (every score would be 0), which leaves the totals unchanged.
#pragma once

#include <string>
#include <string_view>

#include "arbiter/sched/framework/interfaces.h"

namespace arbiter::sched::plugins {

class ImageLocality final : public PreScorePlugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "ImageLocality";
  static constexpr int64_t kMiB = 1024 * 1024;
  static constexpr int64_t kMinThreshold = 23 * kMiB;
  static constexpr int64_t kMaxContainerThreshold = 1000 * kMiB;

  explicit ImageLocality(const Handle* handle) : handle_(handle) {}
  std::string_view Name() const override { return kName; }
  Status PreScore(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> feasible) const override;
  ScoreResult Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  Status ScoreNodes(const CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                    std::span<NodeScore> out) const override {
    return ScoreEachNode(*this, state, pod, nodes, out);
  }

  // The image name a node's status lists for a container's `image`: ":latest" added when the
  // name has no tag (no ':' after the last '/').
  static std::string NormalizedImageName(std::string_view image);
  // The score for `sum` bytes of images present over `containers` containers.
  static int64_t CalculatePriority(int64_t sum, int64_t containers);

 private:
  const Handle* handle_;
};

}  // namespace arbiter::sched::plugins
