// The namespaces/finalize subresource.
#include "arbiter/api/server.h"

#include "arbiter/api/field_validation.h"
#include "arbiter/api/server_internal.h"

namespace arbiter::api {

using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares

Response ApiServer::Finalize(const Request& r, const Target& t) {
  auto body = ParseBody(r);
  if (!body.ok()) return Error(400, body.status().message());
  if (!body->is_object()) return Error(400, "the request body must be an object");
  for (RaceRetry retry(clock_); retry.Again();) {
    auto current = store_.Get(t.info->StoreKey(), t.ns, t.name);
    if (!current.ok()) {
      return Error(404, std::string(t.info->resource) + " \"" + t.name + "\" not found", std::string(t.info->resource),
                   t.name);
    }
    // Only spec.finalizers change (the namespace registry's finalize strategy).
    Json next = current->body.Copy();
    const Json& spec = body->contains("spec") && (*body)["spec"].is_object() ? (*body)["spec"] : Json::object();
    next["spec"]["finalizers"] = spec.contains("finalizers") ? spec["finalizers"] : Json::array();
    if (next["spec"]["finalizers"].empty()) next["spec"].erase("finalizers");
    auto written = WriteOrDelete(*t.info, t.ns, t.name, next, current->revision);
    if (written.ok()) return JsonResponse(200, *written->body.tree());
    if (written.status().code() != StatusCode::kConflict) return Error(written.status());
  }
  return Conflict409(t, "the object keeps changing; try again");
}

}  // namespace arbiter::api
