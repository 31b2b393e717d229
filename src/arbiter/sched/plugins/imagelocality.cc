#include "arbiter/sched/plugins/imagelocality.h"

#include <algorithm>
#include <vector>

namespace arbiter::sched::plugins {

namespace {

constexpr std::string_view kStateKey = "PreScoreImageLocality";

struct ImageState final : StateData {
  struct Image {
    std::string name;     // normalised
    int32_t nodes = 0;    // nodes that list it
    int64_t size = 0;     // the cluster's size for the name, not a node's (ImageSummary)
  };
  std::vector<Image> images;  // one per container that names an image some node holds
  int64_t total_nodes = 0;
  int64_t containers = 0;
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<ImageState>(*this); }
};

}  // namespace

std::string ImageLocality::NormalizedImageName(std::string_view image) {
  const size_t colon = image.rfind(':');
  const size_t slash = image.rfind('/');
  // Go's strings.LastIndex gives -1 when absent: no colon, or a colon before the last slash
  // (a registry port), means no tag.
  const bool tagged = colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash);
  return tagged ? std::string(image) : std::string(image) + ":latest";
}

int64_t ImageLocality::CalculatePriority(int64_t sum, int64_t containers) {
  const int64_t max_threshold = kMaxContainerThreshold * containers;
  if (sum < kMinThreshold) sum = kMinThreshold;
  if (sum > max_threshold) sum = max_threshold;
  if (max_threshold <= kMinThreshold) return 0;  // unreachable with >= 1 container
  return kMaxNodeScore * (sum - kMinThreshold) / (max_threshold - kMinThreshold);
}

Status ImageLocality::PreScore(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const>) const {
  const state::Snapshot& snap = handle_->snapshot();
  if (!snap.HasImages()) return Status(Code::kSkip);
  auto s = std::make_unique<ImageState>();
  for (const std::string& image : pod.pod.container_images) {
    if (image.empty()) continue;
    std::string name = NormalizedImageName(image);
    const int32_t n = snap.ImageNodeCount(name);
    if (n > 0) {
      const int64_t size = snap.ImageSize(name);
      s->images.push_back({std::move(name), n, size});
    }
  }
  if (s->images.empty()) return Status(Code::kSkip);
  s->total_nodes = static_cast<int64_t>(snap.size());
  s->containers = static_cast<int64_t>(pod.pod.container_images.size());
  state.Write(kStateKey, std::move(s));
  return {};
}

ScoreResult ImageLocality::Score(const CycleState& state, const PodInfo&, const NodeInfo& node) const {
  const auto* s = state.Read<ImageState>(kStateKey);
  if (s == nullptr || s->total_nodes == 0) return {0, {}};
  const auto& held = node.node().images;
  int64_t sum = 0;
  for (const auto& want : s->images) {
    bool found = false;
    for (const auto& img : held) {
      if (std::find(img.names.begin(), img.names.end(), want.name) != img.names.end()) found = true;
    }
    if (!found) continue;
    const double spread = static_cast<double>(want.nodes) / static_cast<double>(s->total_nodes);
    sum = model::SaturatingAdd(sum, static_cast<int64_t>(static_cast<double>(want.size) * spread));
  }
  return {CalculatePriority(sum, s->containers), {}};
}

}  // namespace arbiter::sched::plugins
