// The scale subresource: a Scale read from and written to an object's spec.replicas.
#include "arbiter/api/server.h"

#include "arbiter/api/field_validation.h"
#include "arbiter/api/patch.h"
#include "arbiter/api/server_internal.h"

namespace arbiter::api {

using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares

namespace {

// The autoscaling/v1 Scale of an object with spec.replicas.
Json ScaleOf(const Json& object) {
  const Json& md = object["metadata"];
  Json scale = {{"kind", "Scale"}, {"apiVersion", "autoscaling/v1"}, {"metadata", Json::object()}};
  for (const char* k : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    if (md.contains(k)) scale["metadata"][k] = md[k];
  }
  const Json& spec = object.contains("spec") && object["spec"].is_object() ? object["spec"] : Json::object();
  const Json& status = object.contains("status") && object["status"].is_object() ? object["status"] : Json::object();
  scale["spec"] = {{"replicas", spec.value("replicas", int64_t{1})}};
  scale["status"] = {{"replicas", status.value("replicas", int64_t{0})}};
  if (spec.contains("selector") && spec["selector"].is_object()) {
    scale["status"]["selector"] = FormatLabelSelector(spec["selector"]);
  }
  return scale;
}

}  // namespace

namespace {

// A Scale as it travels: ScaleSpec.replicas is omitempty, so zero replicas are no field (a patch
// applies to the Scale with the field, as the stored object has it).
Json ScaleWire(Json scale) {
  if (scale.contains("spec") && scale["spec"].is_object() && scale["spec"].value("replicas", Json()) == Json(0)) {
    scale["spec"].erase("replicas");
  }
  return scale;
}

}  // namespace

Response ApiServer::Scale(const Request& r, const Target& t) {
  // A write of the Scale is an update of the object at the revision read here, unless the client
  // names one: a race lost to another writer (a controller's status) is tried again, as upstream's
  // GuaranteedUpdate does; a stale resourceVersion of the client's is its 409.
  for (RaceRetry retry(clock_); retry.Again();) {
    bool raced = false;
    Response out = ScaleOnce(r, t, &raced);
    if (!raced) return out;
  }
  return Conflict409(t, "the object has been modified");
}

Response ApiServer::ScaleOnce(const Request& r, const Target& t, bool* raced) {
  auto current = store_.Get(t.info->StoreKey(), t.ns, t.name);
  if (!current.ok()) {
    return Error(404, std::string(t.info->resource) + " \"" + t.name + "\" not found", std::string(t.info->resource),
                 t.name);
  }
  const Json scale = ScaleOf(*current->body.tree());
  if (r.method == "GET") return JsonResponse(200, ScaleWire(scale));
  auto body = ParseBody(r);
  if (!body.ok()) return Error(400, body.status().message());
  // Whether the client named a resourceVersion (in its Scale, or in its merge patch): a
  // precondition of its own, never retried.
  const Json client_rv_value = body->is_object() ? body->value("/metadata/resourceVersion"_json_pointer, Json()) : Json();
  const bool client_rv = client_rv_value.is_string() && !client_rv_value.get<std::string>().empty();
  Json next;
  if (r.method == "PUT") {
    next = std::move(*body);
  } else {
    const std::string ct = r.headers.count("content-type") ? r.headers.at("content-type") : "";
    auto type = PatchTypeOf(ct);
    if (!type.ok()) return Error(415, type.status().message());
    auto patched = ApplyPatch(scale, *body, *type);
    if (!patched.ok()) return Error(422, patched.status().message(), "Scale", t.name);
    next = std::move(*patched);
  }
  const Json* replicas = next.is_object() && next.contains("spec") && next["spec"].is_object() && next["spec"].contains("replicas")
                             ? &next["spec"]["replicas"]
                             : nullptr;
  if (replicas == nullptr || !replicas->is_number_integer() || replicas->get<int64_t>() < 0 ||
      replicas->get<int64_t>() > INT32_MAX) {
    const std::string shown = replicas == nullptr ? "null" : replicas->dump();
    return JsonResponse(422, InvalidStatusBody("Scale.autoscaling \"" + t.name + "\" is invalid: spec.replicas: Invalid value: " +
                                                   shown + ": must be greater than or equal to 0",
                                               "Scale", "autoscaling", t.name,
                                               {{"FieldValueInvalid", "spec.replicas",
                                                 "Invalid value: " + shown + ": must be greater than or equal to 0"}}));
  }
  // The write is an update of the object itself (its own validation and preconditions): a
  // resourceVersion in the Scale is the object's.
  Json object = current->body.Copy();
  object["spec"]["replicas"] = replicas->get<int64_t>();
  std::string rv = std::to_string(current->revision);
  if (next.contains("metadata") && next["metadata"].is_object() && next["metadata"].contains("resourceVersion") &&
      next["metadata"]["resourceVersion"].is_string() && (client_rv || r.method == "PUT")) {
    rv = next["metadata"]["resourceVersion"].get<std::string>();
  }
  object["metadata"]["resourceVersion"] = rv;
  Request inner = r;
  inner.method = "PUT";
  inner.body = object.dump();
  inner.headers["content-type"] = "application/json";
  Target whole = t;
  whole.sub.clear();
  Response updated = Update(inner, whole);
  if (updated.code == 409 && !client_rv) *raced = true;
  if (updated.code != 200) return updated;
  auto stored = Json::parse(updated.body, nullptr, false);
  if (stored.is_discarded() || r.query.count("dryRun")) return JsonResponse(200, ScaleWire(ScaleOf(object)));
  return JsonResponse(200, ScaleWire(ScaleOf(stored)));
}

}  // namespace arbiter::api
