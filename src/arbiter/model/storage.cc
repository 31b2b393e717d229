#include "arbiter/model/storage.h"

#include <algorithm>

namespace arbiter::model {

bool PersistentVolumeClaim::HasAccessMode(std::string_view m) const {
  return std::find(access_modes.begin(), access_modes.end(), m) != access_modes.end();
}

bool PersistentVolume::HasAccessMode(std::string_view m) const {
  return std::find(access_modes.begin(), access_modes.end(), m) != access_modes.end();
}

bool TopologySelectorTerm::Matches(const LabelMap& node_labels) const {
  for (const auto& [key, values] : match_label_expressions) {
    const std::string* v = node_labels.Find(key);
    if (v == nullptr || std::find(values.begin(), values.end(), *v) == values.end()) return false;
  }
  return true;
}

}  // namespace arbiter::model
