// Core v1 and events.k8s.io/v1 Events (see event_versions.h).
#include "arbiter/api/event_versions.h"

#include <utility>

namespace arbiter::api {

using Json = nlohmann::json;

namespace {

// (events.k8s.io/v1 name, core v1 name), as upstream's conversion between the two maps them.
constexpr std::pair<const char*, const char*> kRenamed[] = {
    {"regarding", "involvedObject"},
    {"note", "message"},
    {"deprecatedSource", "source"},
    {"deprecatedFirstTimestamp", "firstTimestamp"},
    {"deprecatedLastTimestamp", "lastTimestamp"},
    {"deprecatedCount", "count"},
    {"reportingController", "reportingComponent"},
};

Json Convert(const Json& from, bool to_core) {
  if (!from.is_object()) return from;
  Json out = Json::object();
  for (auto it = from.begin(); it != from.end(); ++it) {
    std::string key = it.key();
    for (const auto& [v1, core] : kRenamed) {
      if (key == (to_core ? v1 : core)) {
        key = to_core ? core : v1;
        break;
      }
    }
    out[key] = it.value();
  }
  out["apiVersion"] = to_core ? "v1" : "events.k8s.io/v1";
  out["kind"] = "Event";
  return out;
}

}  // namespace

Json CoreEventToEventsV1(const Json& core) { return Convert(core, false); }
Json EventsV1ToCoreEvent(const Json& v1) { return Convert(v1, true); }

}  // namespace arbiter::api
