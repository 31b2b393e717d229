// Merge, JSON and strategic merge patches.
#include "arbiter/api/patch.h"

#include <algorithm>
#include <map>

namespace arbiter::api {

using Json = nlohmann::json;

namespace {

// Merge keys of the lists Kubernetes merges element by element (patchStrategy: merge).
const std::map<std::string, std::string>& MergeKeys() {
  static const std::map<std::string, std::string> kKeys = {
      {"containers", "name"},        {"initContainers", "name"}, {"ephemeralContainers", "name"},
      {"volumes", "name"},           {"env", "name"},            {"volumeMounts", "mountPath"},
      {"imagePullSecrets", "name"},  {"conditions", "type"},     {"ownerReferences", "uid"},
      {"ports", "containerPort"},    {"hostAliases", "ip"},      {"topologySpreadConstraints", "topologyKey"},
      {"resourceClaims", "name"},
  };
  return kKeys;
}

Status StrategicMerge(Json& target, const Json& patch);

Status MergeList(Json& target, const Json& patch, const std::string& key) {
  if (!target.is_array()) target = Json::array();
  for (const Json& item : patch) {
    if (!item.is_object() || !item.contains(key)) {
      return InvalidArgument("strategic merge patch: an element of a list merged by \"" + key + "\" lacks that key");
    }
    auto it = std::find_if(target.begin(), target.end(),
                           [&](const Json& e) { return e.is_object() && e.contains(key) && e[key] == item[key]; });
    const bool remove = item.contains("$patch") && item["$patch"] == "delete";
    if (remove) {
      if (it != target.end()) target.erase(it);
      continue;
    }
    if (it == target.end()) {
      Json fresh = Json::object();
      ARBITER_RETURN_IF_ERROR(StrategicMerge(fresh, item));
      target.push_back(std::move(fresh));
    } else {
      ARBITER_RETURN_IF_ERROR(StrategicMerge(*it, item));
    }
  }
  return Status::Ok();
}

Status StrategicMerge(Json& target, const Json& patch) {
  if (!patch.is_object()) {
    target = patch;
    return Status::Ok();
  }
  if (!target.is_object()) target = Json::object();
  if (patch.contains("$patch") && patch["$patch"] == "replace") {
    Json copy = patch;
    copy.erase("$patch");
    target = Json::object();
    return StrategicMerge(target, copy);
  }
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const std::string& k = it.key();
    if (k.starts_with("$setElementOrder/") || k == "$retainKeys" || k == "$patch") continue;
    if (k.starts_with("$deleteFromPrimitiveList/")) {
      const std::string field = k.substr(std::string("$deleteFromPrimitiveList/").size());
      if (target.contains(field) && target[field].is_array() && it.value().is_array()) {
        Json kept = Json::array();
        for (const Json& v : target[field]) {
          if (std::find(it.value().begin(), it.value().end(), v) == it.value().end()) kept.push_back(v);
        }
        target[field] = kept;
      }
      continue;
    }
    if (it.value().is_null()) {
      target.erase(k);
      continue;
    }
    const auto key = MergeKeys().find(k);
    if (it.value().is_array() && key != MergeKeys().end() &&
        std::all_of(it.value().begin(), it.value().end(), [](const Json& e) { return e.is_object(); })) {
      ARBITER_RETURN_IF_ERROR(MergeList(target[k], it.value(), key->second));
    } else if (it.value().is_object()) {
      ARBITER_RETURN_IF_ERROR(StrategicMerge(target[k], it.value()));
    } else {
      target[k] = it.value();
    }
  }
  return Status::Ok();
}

// A list merged by `key` whose elements all carry it (else it is patched whole).
bool MergeableList(const Json& list, const std::string& key) {
  return list.is_array() &&
         std::all_of(list.begin(), list.end(), [&](const Json& e) { return e.is_object() && e.contains(key); });
}

}  // namespace

Json TwoWayStrategicMergePatch(const Json& before, const Json& after) {
  if (!before.is_object() || !after.is_object()) return after;
  Json patch = Json::object();
  for (auto it = before.begin(); it != before.end(); ++it) {
    if (!after.contains(it.key())) patch[it.key()] = nullptr;
  }
  for (auto it = after.begin(); it != after.end(); ++it) {
    const std::string& k = it.key();
    const Json& now = it.value();
    auto was = before.find(k);
    if (was != before.end() && *was == now) continue;
    if (was == before.end() || now.is_null()) {
      patch[k] = now;
      continue;
    }
    const auto key = MergeKeys().find(k);
    if (key != MergeKeys().end() && MergeableList(*was, key->second) && MergeableList(now, key->second)) {
      const std::string& mk = key->second;
      Json items = Json::array();
      Json order = Json::array();
      for (const Json& e : now) {
        order.push_back({{mk, e[mk]}});
        auto old = std::find_if(was->begin(), was->end(), [&](const Json& o) { return o[mk] == e[mk]; });
        if (old == was->end()) {
          items.push_back(e);
        } else if (*old != e) {
          Json d = TwoWayStrategicMergePatch(*old, e);
          d[mk] = e[mk];
          items.push_back(std::move(d));
        }
      }
      for (const Json& o : *was) {
        const bool kept = std::any_of(now.begin(), now.end(), [&](const Json& e) { return e[mk] == o[mk]; });
        if (!kept) items.push_back({{mk, o[mk]}, {"$patch", "delete"}});
      }
      patch["$setElementOrder/" + k] = std::move(order);
      patch[k] = std::move(items);
    } else if (was->is_object() && now.is_object()) {
      patch[k] = TwoWayStrategicMergePatch(*was, now);
    } else {
      patch[k] = now;
    }
  }
  return patch;
}

const std::string* MergeKeyOf(std::string_view field) {
  auto it = MergeKeys().find(std::string(field));
  return it != MergeKeys().end() ? &it->second : nullptr;
}

StatusOr<PatchType> PatchTypeOf(const std::string& content_type) {
  const std::string ct = content_type.substr(0, content_type.find(';'));
  if (ct == "application/merge-patch+json") return PatchType::kMerge;
  if (ct == "application/json-patch+json") return PatchType::kJson;
  if (ct == "application/strategic-merge-patch+json") return PatchType::kStrategic;
  if (ct == "application/apply-patch+yaml" || ct == "application/apply-patch+json") return PatchType::kApply;
  return InvalidArgument("the patch Content-Type \"" + content_type +
                         "\" is not supported (application/merge-patch+json, application/json-patch+json, "
                         "application/strategic-merge-patch+json, application/apply-patch+yaml)");
}

StatusOr<Json> ApplyPatch(const Json& target, const Json& patch, PatchType type) {
  try {
    switch (type) {
      case PatchType::kMerge: {
        if (!patch.is_object()) return InvalidArgument("a merge patch must be a JSON object");
        Json out = target;
        out.merge_patch(patch);
        return out;
      }
      case PatchType::kJson:
        if (!patch.is_array()) return InvalidArgument("a JSON patch must be an array of operations");
        return target.patch(patch);
      case PatchType::kStrategic:
      case PatchType::kApply: {
        if (!patch.is_object()) return InvalidArgument("a strategic merge patch must be a JSON object");
        Json out = target;
        ARBITER_RETURN_IF_ERROR(StrategicMerge(out, patch));
        return out;
      }
    }
  } catch (const Json::exception& e) {
    return InvalidArgument(std::string("the patch cannot be applied: ") + e.what());
  }
  return InvalidArgument("unknown patch type");
}

}  // namespace arbiter::api
