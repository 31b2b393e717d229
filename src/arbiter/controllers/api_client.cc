// The controllers' in-process API client.
#include "arbiter/controllers/api_client.h"

#include <cstdlib>
#include <iostream>

namespace arbiter::controllers {

StatusOr<Json> ApiClient::Call(const std::string& method, const std::string& path, const Json& body,
                               std::string_view content_type) {
  ++requests_;
  api::Request r;
  r.method = method;
  r.path = path;
  // In process, the controllers are part of the server: like kube-apiserver's loopback client
  // they are not put through the authorizer, which guards the network edge (http.h).
  r.user = user_;
  if (!body.is_null()) {
    r.body = body.dump();
    r.headers["content-type"] = std::string(content_type);
  }
  r.headers["accept"] = "application/json";
  api::Response resp = server_.Handle(r);
  Json out = Json::parse(resp.body, nullptr, /*allow_exceptions=*/false);
  if (resp.code >= 200 && resp.code < 300) {
    if (out.is_discarded()) return Internal(method + " " + path + ": the response is not JSON");
    return out;
  }
  std::string message = out.is_object() ? out.value("message", "") : "";
  if (message.empty()) message = method + " " + path + ": HTTP " + std::to_string(resp.code);
  const std::string reason = out.is_object() ? out.value("reason", "") : "";
  switch (resp.code) {
    case 404: return NotFound(message);
    case 409: return reason == "AlreadyExists" ? AlreadyExists(message) : Conflict(message);
    case 422: return InvalidArgument(message);
    case 403: return FailedPrecondition(message);
    default: return Internal(message);
  }
}

StatusOr<Json> ApiClient::Get(const std::string& path) { return Call("GET", path, Json(), "application/json"); }

StatusOr<Json> ApiClient::Create(const std::string& collection, const Json& body) {
  return Call("POST", collection, body, "application/json");
}
StatusOr<Json> ApiClient::Update(const std::string& path, const Json& body) {
  return Call("PUT", path, body, "application/json");
}
StatusOr<Json> ApiClient::MergePatch(const std::string& path, const Json& patch) {
  return Call("PATCH", path, patch, "application/merge-patch+json");
}
StatusOr<Json> ApiClient::Delete(const std::string& path, const Json& options) {
  return Call("DELETE", path, options.empty() ? Json() : options, "application/json");
}

const api::ResourceInfo& Resource(std::string_view group, std::string_view version, std::string_view resource) {
  const api::ResourceInfo* info = api::FindResource(group, version, resource);
  if (info == nullptr) {
    std::cerr << "arbiter: internal error: a controller names the unserved resource " << group << "/" << version << "/"
              << resource << "\n";
    std::abort();
  }
  return *info;
}

std::string CollectionPath(const api::ResourceInfo& info, const std::string& ns) {
  std::string p = info.group.empty() ? "/api/" + std::string(info.version)
                                     : "/apis/" + std::string(info.group) + "/" + std::string(info.version);
  if (info.namespaced && !ns.empty()) p += "/namespaces/" + ns;
  return p + "/" + std::string(info.resource);
}

std::string ObjectPath(const api::ResourceInfo& info, const std::string& ns, const std::string& name,
                       std::string_view subresource) {
  std::string p = CollectionPath(info, ns) + "/" + name;
  if (!subresource.empty()) p += "/" + std::string(subresource);
  return p;
}

}  // namespace arbiter::controllers
