// Request handling of the Kubernetes-compatible API.
#include "arbiter/api/server.h"

#include <stdexcept>

#include "arbiter/api/field_validation.h"
#include "arbiter/api/openapi.h"
#include "arbiter/api/protobuf_codec.h"
#include "arbiter/schema/schema.h"
#include "arbiter/api/tables.h"
#include "arbiter/api/server_internal.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/manifest/names.h"

namespace arbiter::api {

using schema::ApiSchema;

using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares


int StatusToHttp(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument: return 422;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kAlreadyExists: return 409;
    case StatusCode::kConflict: return 409;
    case StatusCode::kGone: return 410;
    case StatusCode::kFailedPrecondition: return 403;
    case StatusCode::kOutOfRange: return 400;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kInternal: return 500;
  }
  return 500;
}

Json StatusBody(int code, const std::string& reason, const std::string& message, const std::string& kind,
                const std::string& name) {
  Json s = {{"kind", "Status"},       {"apiVersion", "v1"}, {"metadata", Json::object()}, {"status", "Failure"},
            {"message", message},     {"reason", reason},   {"code", code}};
  // StatusDetails' fields are omitempty: an empty name or kind is left out, as upstream.
  if (!kind.empty() || !name.empty()) s["details"] = Json::object();
  if (!name.empty()) s["details"]["name"] = name;
  if (!kind.empty()) s["details"]["kind"] = kind;
  return s;
}


bool QueryBool(const std::string& v) {
  return v == "true" || v == "True" || v == "TRUE" || v == "1" || v == "t" || v == "T";
}

ApiServer::ApiServer(store::Store& store, const Clock& clock, uint64_t seed, Options options)
    : store_(store), clock_(clock), options_(std::move(options)), rng_(seed) {
  if (options_.sync_list_caches && store_.WatchIsSynchronous()) syncer_ = std::thread([this] { SyncListCaches(); });
}

ApiServer::~ApiServer() {
  {
    std::lock_guard<std::mutex> lock(syncer_mu_);
    syncer_stop_ = true;
  }
  syncer_cv_.notify_all();
  if (syncer_.joinable()) syncer_.join();
}

std::string ApiServer::NewUid() {
  std::lock_guard<std::mutex> lock(rng_mu_);
  return manifest::GeneratedUid(rng_);
}

std::string ApiServer::Now() const { return FormatRfc3339(clock_.Now() / kSecond * kSecond); }

Response ApiServer::Discovery(const Request& r, bool* handled) {
  *handled = true;
  const std::vector<std::string> s = PathSegments(r.path);
  if (r.method == "GET") {
    if (s.size() == 1 && s[0] == "api") return JsonResponse(200, CoreVersions());
    if (s.size() == 2 && s[0] == "api" && s[1] == "v1") return JsonResponse(200, ResourceList("", "v1"));
    if (s.size() == 1 && s[0] == "apis") return JsonResponse(200, GroupList());
    if (s.size() == 2 && s[0] == "apis") {
      Json g = GroupDocument(s[1]);
      if (!g.is_null()) return JsonResponse(200, g);
    }
    if (s.size() == 3 && s[0] == "apis") {
      Json l = ResourceList(s[1], s[2]);
      if (!l.is_null()) return JsonResponse(200, l);
      return Error(404, "the server could not find the requested resource");
    }
    if (s.size() == 2 && s[0] == "openapi" && s[1] == "v2") {
      // kubectl and client-go read the protobuf form; browsers and scripts the JSON one.
      auto accept = r.headers.find("accept");
      if (accept != r.headers.end() && accept->second.find("protobuf") != std::string::npos) {
        Response p;
        p.code = 200;
        p.content_type = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
        p.body = OpenApiV2Protobuf();
        return p;
      }
      return JsonResponse(200, OpenApiV2Document());
    }
    if (s.size() == 2 && s[0] == "openapi" && s[1] == "v3") return JsonResponse(200, OpenApiIndex());
    if (s.size() >= 3 && s[0] == "openapi" && s[1] == "v3") {
      Json doc = s.size() == 4 && s[2] == "api" ? OpenApiV3Document("", s[3])
                 : s.size() == 5 && s[2] == "apis" ? OpenApiV3Document(s[3], s[4])
                                                   : Json(nullptr);
      if (!doc.is_null()) return JsonResponse(200, doc);
      return Error(404, "no OpenAPI document for " + r.path);
    }
    if (s.size() == 1 && s[0] == "version") {
      return JsonResponse(200, {{"major", "1"},
                                {"minor", "32"},
                                {"gitVersion", options_.version},
                                {"platform", "linux/amd64"},
                                {"goVersion", "n/a"},
                                {"compiler", "g++"}});
    }
  }
  *handled = false;
  return {};
}

Response ApiServer::Handle(const Request& r) {
  Response out;
  try {
    out = HandleUnchecked(r);
  } catch (const std::exception& e) {
    // A body of an unexpected shape that slipped past a check: the request fails, the server and
    // the store do not.
    out = Error(400, std::string("the request could not be processed: ") + e.what());
  }
  // Answered in protobuf when the client prefers it and the object has a protobuf form.
  auto accept = r.headers.find("accept");
  if (!out.watch && !out.stream && accept != r.headers.end() && IsProtobufMediaType(accept->second) &&
      out.content_type == "application/json" && !out.body.empty()) {
    const Json body = Json::parse(out.body, nullptr, /*allow_exceptions=*/false);
    if (auto encoded = EncodeProtobufObject(body); encoded.ok()) {
      out.body = std::move(*encoded);
      out.content_type = std::string(kProtobufMediaType);
    }
  }
  return out;
}

Response ApiServer::Get(const Request& r, const Target& t) {
  // From the resource's list cache when it has one (as current as the store, and never waiting on
  // its writes), else from the store.
  const std::string resource(t.info->StoreKey());
  store::WatchCache* cache = nullptr;
  if (store_.WatchIsSynchronous()) {
    std::lock_guard<std::mutex> lock(caches_mu_);
    if (auto it = caches_.find(resource); it != caches_.end()) cache = it->second.get();
  }
  auto o = cache != nullptr ? cache->Get({t.ns, t.name}) : store::Shared(store_.Get(resource, t.ns, t.name));
  if (!o.ok()) {
    return Error(404, std::string(t.info->resource) + " \"" + t.name + "\" not found", std::string(t.info->resource),
                 t.name);
  }
  if (WantsTable(r)) {
    const store::Body::Tree body_tree = (*o)->body.tree();
    const Json& body = *body_tree;
    const auto include = ParseIncludeObject(QueryOr(r, "includeObject"));
    if (!include) return Error(400, IncludeObjectError(r));
    Json table = ToTable(resource, {&body}, clock_.Now(), *include);
    table["metadata"]["resourceVersion"] = body.value("/metadata/resourceVersion"_json_pointer, Json(""));
    return JsonResponse(200, table);
  }
  return WireResponse(200, *t.info, (*o)->body);
}



}  // namespace arbiter::api
