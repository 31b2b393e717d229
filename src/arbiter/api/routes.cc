// Routing: a request's path parsed into its resource, namespace, name and subresource, then the
// route table that picks its handler.
#include "arbiter/api/server.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "arbiter/api/protobuf_codec.h"
#include "arbiter/api/server_internal.h"

namespace arbiter::api {

using namespace internal;  // NOLINT: the helpers every part of the server shares

Response ApiServer::HandleUnchecked(const Request& r) {
  if (r.body.size() > options_.max_body_bytes) {
    return Error(413, "the request body is " + std::to_string(r.body.size()) + " bytes; the limit is " +
                          std::to_string(options_.max_body_bytes));
  }
  if (auto ct = r.headers.find("content-type"); ct != r.headers.end() && !r.body.empty() &&
      !IsProtobufMediaType(ct->second) &&
      (ct->second.find("protobuf") != std::string::npos || ct->second.find("cbor") != std::string::npos)) {
    // Kubernetes protobuf is read by ParseBody; CBOR is not spoken (clients retry with JSON).
    return Error(415, "the Content-Type \"" + ct->second +
                          "\" is not supported: send application/json, application/yaml or application/vnd.kubernetes.protobuf");
  }
  if (auto ct = r.headers.find("content-type");
      ct != r.headers.end() && !r.body.empty() && (r.method == "POST" || r.method == "PUT")) {
    // An object is sent as JSON, YAML or protobuf (patches name their own types, checked by Patch).
    std::string media = ct->second.substr(0, ct->second.find(';'));
    while (!media.empty() && media.back() == ' ') media.pop_back();
    std::transform(media.begin(), media.end(), media.begin(), [](unsigned char c) { return std::tolower(c); });
    if (!media.empty() && media != "application/json" && media != "application/yaml" && media != "*/*" &&
        !IsProtobufMediaType(media)) {
      return Error(415, "the body of the request was in an unknown format - accepted media types include: "
                        "application/json, application/yaml, application/vnd.kubernetes.protobuf");
    }
  }
  bool handled = false;
  Response d = Discovery(r, &handled);
  if (handled) return d;

  const std::vector<std::string> s = PathSegments(r.path);
  std::string group, version;
  size_t at = 0;
  if (s.size() >= 2 && s[0] == "api" && s[1] == "v1") {
    version = "v1";
    at = 2;
  } else if (s.size() >= 3 && s[0] == "apis") {
    group = s[1];
    version = s[2];
    at = 3;
  } else {
    return Error(404, "the server could not find the requested resource (" + r.path + ")");
  }
  std::vector<std::string> rest(s.begin() + static_cast<long>(at), s.end());
  Target t;
  if (!rest.empty() && rest[0] == "watch") {
    t.watch_prefix = true;
    rest.erase(rest.begin());
  }
  if (rest.empty()) return Error(404, "the server could not find the requested resource (" + r.path + ")");
  if (rest[0] == "namespaces" && rest.size() >= 3) {
    if (const ResourceInfo* info = FindResource(group, version, rest[2]); info != nullptr && info->namespaced) {
      t.info = info;
      t.ns = rest[1];
      if (rest.size() > 3) t.name = rest[3];
      if (rest.size() > 4) t.sub = rest[4];
      if (rest.size() > 5) return Error(404, "the server could not find the requested resource (" + r.path + ")");
    }
  }
  if (t.info == nullptr) {
    t.info = FindResource(group, version, rest[0]);
    if (t.info == nullptr) {
      return Error(404, "the server could not find the requested resource (" + r.path + ")");
    }
    if (rest.size() > 1) t.name = rest[1];
    if (rest.size() > 2) t.sub = rest[2];
    if (rest.size() > 3) return Error(404, "the server could not find the requested resource (" + r.path + ")");
    if (t.info->namespaced && !t.name.empty()) {
      return Error(404, "the server could not find the requested resource (" + r.path + "): " +
                            std::string(t.info->resource) + " are namespaced");
    }
  }
  if (!t.sub.empty() && !t.info->HasSubresource(t.sub)) {
    return Error(404, std::string(t.info->resource) + " have no subresource \"" + t.sub + "\"",
                 std::string(t.info->resource), t.name);
  }
  return Dispatch(r, t);
}

// The route table: which handler serves a method on a collection or on a named object and its
// subresource. The path names a resource and a subresource that exists (checked above), so a
// route is chosen by the method, whether a name is given, and the subresource alone.
Response ApiServer::Dispatch(const Request& r, const Target& t) {
  using Handler = Response (*)(ApiServer&, const Request&, const Target&);
  struct Route {
    std::string_view method;  // "*": any
    bool named;               // a name in the path (an object) or none (the collection)
    std::string_view sub;     // "*": any subresource, the object itself included
    Handler handler;
  };
  // First match wins; no match is 405.
  static const Route kRoutes[] = {
      {"POST", false, "", [](ApiServer& s, const Request& q, const Target& x) { return s.Create(q, x); }},
      {"GET", false, "", [](ApiServer& s, const Request& q, const Target& x) {
         return x.watch_prefix || QueryBool(QueryOr(q, "watch")) ? s.Watch(q, x) : s.List(q, x);
       }},
      // pods/log reads only; the node's streams (exec, attach, portforward, proxy) take any method.
      {"GET", true, "log", [](ApiServer& s, const Request& q, const Target& x) { return s.PodLog(q, x); }},
      {"*", true, "exec", [](ApiServer& s, const Request& q, const Target& x) { return s.SimulatedNode(q, x); }},
      {"*", true, "attach", [](ApiServer& s, const Request& q, const Target& x) { return s.SimulatedNode(q, x); }},
      {"*", true, "portforward", [](ApiServer& s, const Request& q, const Target& x) { return s.SimulatedNode(q, x); }},
      {"*", true, "proxy", [](ApiServer& s, const Request& q, const Target& x) { return s.SimulatedNode(q, x); }},
      {"GET", true, "scale", [](ApiServer& s, const Request& q, const Target& x) { return s.Scale(q, x); }},
      {"PUT", true, "scale", [](ApiServer& s, const Request& q, const Target& x) { return s.Scale(q, x); }},
      {"PATCH", true, "scale", [](ApiServer& s, const Request& q, const Target& x) { return s.Scale(q, x); }},
      {"POST", true, "binding", [](ApiServer& s, const Request& q, const Target& x) { return s.Bind(q, x); }},
      {"POST", true, "eviction", [](ApiServer& s, const Request& q, const Target& x) { return s.Evict(q, x); }},
      {"PUT", true, "finalize", [](ApiServer& s, const Request& q, const Target& x) { return s.Finalize(q, x); }},
      // Any other subresource reads as the object itself.
      {"GET", true, "*", [](ApiServer& s, const Request& q, const Target& x) { return s.Get(q, x); }},
      {"PUT", true, "", [](ApiServer& s, const Request& q, const Target& x) { return s.Update(q, x); }},
      {"PUT", true, "status", [](ApiServer& s, const Request& q, const Target& x) { return s.Update(q, x); }},
      {"PUT", true, "ephemeralcontainers", [](ApiServer& s, const Request& q, const Target& x) { return s.Update(q, x); }},
      {"PATCH", true, "", [](ApiServer& s, const Request& q, const Target& x) { return s.Patch(q, x); }},
      {"PATCH", true, "status", [](ApiServer& s, const Request& q, const Target& x) { return s.Patch(q, x); }},
      {"PATCH", true, "ephemeralcontainers", [](ApiServer& s, const Request& q, const Target& x) { return s.Patch(q, x); }},
      {"DELETE", true, "", [](ApiServer& s, const Request& q, const Target& x) { return s.Delete(q, x); }},
  };
  const bool named = !t.name.empty();
  if (t.info->review) {
    // Reviews are only created, and only on the collection.
    if (r.method == "POST" && !named) return Review(r, t);
    return Error(405, "the server does not allow " + r.method + " on " + r.path + ": reviews are only created");
  }
  for (const Route& route : kRoutes) {
    if ((route.method == "*" || route.method == r.method) && route.named == named &&
        (route.sub == "*" || route.sub == t.sub)) {
      return route.handler(*this, r, t);
    }
  }
  return Error(405, "the server does not allow " + r.method + " on " + r.path);
}

}  // namespace arbiter::api
