// Shared readers and writers of stored objects' fields.
#include "arbiter/controllers/object_json.h"

#include <cmath>

#include "arbiter/manifest/loader.h"

namespace arbiter::controllers {

const Json* Find(const Json& o, std::initializer_list<std::string_view> path) {
  const Json* at = &o;
  for (std::string_view part : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(part);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

std::string StringAt(const Json& o, std::initializer_list<std::string_view> path) {
  const Json* v = Find(o, path);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

int64_t IntAt(const Json& o, std::initializer_list<std::string_view> path, int64_t fallback) {
  const Json* v = Find(o, path);
  return v != nullptr && v->is_number_integer() ? v->get<int64_t>() : fallback;
}

bool BoolAt(const Json& o, std::initializer_list<std::string_view> path, bool fallback) {
  const Json* v = Find(o, path);
  return v != nullptr && v->is_boolean() ? v->get<bool>() : fallback;
}

std::optional<Timestamp> TimeAt(const Json& o, std::initializer_list<std::string_view> path) {
  const Json* v = Find(o, path);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  auto t = ParseRfc3339(v->get_ref<const std::string&>());
  if (!t.ok()) return std::nullopt;
  return *t;
}

const Json& StatusOf(const Json& o) {
  static const Json kEmpty = Json::object();
  const Json* s = Find(o, {"status"});
  return s != nullptr && s->is_object() ? *s : kEmpty;
}

std::string Uid(const Json& o) { return StringAt(o, {"metadata", "uid"}); }
std::string NameOf(const Json& o) { return StringAt(o, {"metadata", "name"}); }
std::string NamespaceOf(const Json& o) { return StringAt(o, {"metadata", "namespace"}); }
bool BeingDeleted(const Json& o) { return Find(o, {"metadata", "deletionTimestamp"}) != nullptr; }


model::LabelMap LabelsOf(const Json& o) { return manifest::LabelMapOf(Find(o, {"metadata", "labels"})); }

StatusOr<std::optional<model::LabelSelector>> DecodeSelector(const Json* selector, const std::string& path) {
  if (selector == nullptr || selector->is_null()) return std::optional<model::LabelSelector>();
  return manifest::DecodeLabelSelectorJson(*selector, path);
}

const Json* ControllerRef(const Json& o) {
  const Json* refs = Find(o, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->is_array()) return nullptr;
  for (const Json& r : *refs) {
    if (r.is_object() && r.value("controller", false)) return &r;
  }
  return nullptr;
}

Json NewControllerRef(const Json& owner, std::string_view api_version, std::string_view kind) {
  return Json{{"apiVersion", api_version}, {"kind", kind},      {"name", NameOf(owner)},
              {"uid", Uid(owner)},         {"controller", true}, {"blockOwnerDeletion", true}};
}

bool PodTerminal(const Json& pod) {
  const std::string phase = StringAt(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed";
}

bool PodActive(const Json& pod) { return !PodTerminal(pod) && !BeingDeleted(pod); }

bool PodReady(const Json& pod) {
  const Json* status = Find(pod, {"status"});
  const Json* c = status != nullptr ? GetCondition(*status, "Ready") : nullptr;
  return c != nullptr && c->value("status", "") == "True";
}

std::optional<Timestamp> PodAvailableAt(const Json& pod, int64_t min_ready_seconds) {
  const Json* status = Find(pod, {"status"});
  const Json* c = status != nullptr ? GetCondition(*status, "Ready") : nullptr;
  if (c == nullptr || c->value("status", "") != "True") return std::nullopt;
  if (min_ready_seconds <= 0) return Timestamp{0};
  auto since = TimeAt(*c, {"lastTransitionTime"});
  if (!since) return Timestamp{0};  // no time recorded: upstream treats it as available
  return *since + min_ready_seconds * kSecond;
}

bool PodAvailable(const Json& pod, int64_t min_ready_seconds, Timestamp now) {
  auto at = PodAvailableAt(pod, min_ready_seconds);
  return at && *at <= now;
}

const Json* GetCondition(const Json& status, std::string_view type) {
  const Json* conds = Find(status, {"conditions"});
  if (conds == nullptr || !conds->is_array()) return nullptr;
  for (const Json& c : *conds) {
    if (c.is_object() && c.value("type", "") == type) return &c;
  }
  return nullptr;
}

void SetCondition(Json& status, Json cond) {
  Json& conds = status["conditions"];
  if (!conds.is_array()) conds = Json::array();
  for (Json& c : conds) {
    if (c.value("type", "") != cond.value("type", "")) continue;
    if (c.value("status", "") == cond.value("status", "") && cond.contains("lastTransitionTime") &&
        c.contains("lastTransitionTime")) {
      cond["lastTransitionTime"] = c["lastTransitionTime"];
    }
    c = std::move(cond);
    return;
  }
  conds.push_back(std::move(cond));
}

StatusOr<int64_t> ScaledValue(const Json* v, int64_t total, bool round_up, int64_t fallback) {
  if (v == nullptr || v->is_null()) return fallback;
  if (v->is_number_integer()) return v->get<int64_t>();
  if (!v->is_string()) return InvalidArgument("invalid value for IntOrString: " + v->dump());
  const std::string& s = v->get_ref<const std::string&>();
  if (s.empty() || s.back() != '%') return InvalidArgument("invalid value for IntOrString: invalid type: string is not a percentage");
  int64_t pct = 0;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || pct > 1000000) return InvalidArgument("invalid value \"" + s + "\": not a percentage");
    pct = pct * 10 + (s[i] - '0');
  }
  if (s.size() == 1) return InvalidArgument("invalid value \"" + s + "\": not a percentage");
  // Integer arithmetic for upstream's math.Ceil / math.Floor of pct*total/100.
  const int64_t product = pct * total;
  return round_up ? (product + 99) / 100 : product / 100;
}

std::string SafeHash(std::string_view text, uint32_t collision_count) {
  uint32_t h = 2166136261u;
  auto add = [&h](unsigned char b) {
    h ^= b;
    h *= 16777619u;
  };
  for (char c : text) add(static_cast<unsigned char>(c));
  if (collision_count > 0) {
    for (int i = 0; i < 4; ++i) add(static_cast<unsigned char>(collision_count >> (8 * i)));
  }
  static constexpr std::string_view kAlphanums = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (char d : std::to_string(h)) out += kAlphanums[static_cast<unsigned char>(d) % kAlphanums.size()];
  return out;
}

}  // namespace arbiter::controllers
