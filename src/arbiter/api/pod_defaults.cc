#include "arbiter/api/pod_defaults.h"

#include <map>
#include <optional>
#include <set>

#include "arbiter/model/quantity.h"

namespace arbiter::api {

using Json = nlohmann::json;

void SetDefault(Json& parent, const char* key, Json value) {
  if (!parent.contains(key) || parent[key].is_null()) parent[key] = std::move(value);
}

namespace {

// parsers.ParseImageName's tag: "latest" when the reference names neither a tag nor a digest.
bool PullsAlways(const std::string& image) {
  if (image.find('@') != std::string::npos) return false;  // by digest
  const size_t slash = image.rfind('/');
  const size_t colon = image.rfind(':');
  const bool tagged = colon != std::string::npos && (slash == std::string::npos || colon > slash);
  return !tagged || image.substr(colon + 1) == "latest";
}

void DefaultContainer(Json& c) {
  if (!c.is_object()) return;
  if (c.contains("image") && c["image"].is_string()) {
    SetDefault(c, "imagePullPolicy", PullsAlways(c["image"].get<std::string>()) ? "Always" : "IfNotPresent");
  }
  SetDefault(c, "terminationMessagePath", "/dev/termination-log");
  SetDefault(c, "terminationMessagePolicy", "File");
  SetDefault(c, "resources", Json::object());
  if (c.contains("ports") && c["ports"].is_array()) {
    for (Json& p : c["ports"]) {
      if (p.is_object()) SetDefault(p, "protocol", "TCP");
    }
  }
}

}  // namespace

void DefaultPodSpec(Json& spec) {
  if (!spec.is_object()) return;
  SetDefault(spec, "dnsPolicy", "ClusterFirst");
  SetDefault(spec, "restartPolicy", "Always");
  SetDefault(spec, "securityContext", Json::object());
  SetDefault(spec, "schedulerName", "default-scheduler");
  SetDefault(spec, "terminationGracePeriodSeconds", 30);
  for (const char* list : {"initContainers", "containers"}) {
    if (!spec.contains(list) || !spec[list].is_array()) continue;
    for (Json& c : spec[list]) DefaultContainer(c);
  }
}

void DefaultPod(Json& spec) {
  if (!spec.is_object()) return;
  DefaultPodSpec(spec);
  SetDefault(spec, "enableServiceLinks", true);
  for (const char* list : {"initContainers", "containers"}) {
    if (!spec.contains(list) || !spec[list].is_array()) continue;
    for (Json& c : spec[list]) {
      if (!c.is_object() || !c["resources"].is_object()) continue;
      Json& res = c["resources"];
      if (!res.contains("limits") || !res["limits"].is_object() || res["limits"].empty()) continue;
      SetDefault(res, "requests", Json::object());
      if (!res["requests"].is_object()) continue;
      for (const auto& [name, q] : res["limits"].items()) SetDefault(res["requests"], name.c_str(), q);
    }
  }
}

std::string PodQosClass(const Json& spec) {
  std::map<std::string, int64_t> requests, limits;
  bool guaranteed = true;
  auto milli = [](const Json& q) -> std::optional<int64_t> {
    if (!q.is_string() && !q.is_number()) return std::nullopt;
    auto parsed = model::Quantity::Parse(q.is_string() ? q.get<std::string>() : q.dump());
    if (!parsed.ok() || parsed->milli() == 0) return std::nullopt;
    return parsed->milli();
  };
  for (const char* list : {"initContainers", "containers"}) {
    if (!spec.is_object() || !spec.contains(list) || !spec[list].is_array()) continue;
    for (const Json& c : spec[list]) {
      const Json res = c.is_object() ? c.value("resources", Json::object()) : Json::object();
      std::set<std::string> limited;
      for (const char* name : {"cpu", "memory"}) {
        if (res.is_object() && res.contains("requests") && res["requests"].is_object() && res["requests"].contains(name)) {
          if (auto m = milli(res["requests"][name])) requests[name] += *m;
        }
        if (res.is_object() && res.contains("limits") && res["limits"].is_object() && res["limits"].contains(name)) {
          if (auto m = milli(res["limits"][name])) {
            limits[name] += *m;
            limited.insert(name);
          }
        }
      }
      guaranteed = guaranteed && limited.size() == 2;
    }
  }
  if (requests.empty() && limits.empty()) return "BestEffort";
  if (guaranteed && requests == limits) return "Guaranteed";
  return "Burstable";
}

}  // namespace arbiter::api
