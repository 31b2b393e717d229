// Where a resource is served, and the reading of a Kubernetes API server's answers.
#include "arbiter/kubeclient/kube_internal.h"

#include <unistd.h>

#include <charconv>

#include "arbiter/api/protobuf_codec.h"
#include "arbiter/api/resources.h"

namespace arbiter::kubeclient::internal {

std::string Collection(const Route& r, const std::string& ns) {
  std::string p = r.prefix;
  if (r.namespaced && !ns.empty()) p += "/namespaces/" + PercentEncode(ns);
  return p + "/" + r.resource;
}

std::string Item(const Route& r, const std::string& ns, const std::string& name) {
  return Collection(r, ns) + "/" + PercentEncode(name);
}

// A string or integer member of an object, or the fallback (whatever the JSON holds instead).
std::string StringOf(const Json& j, const char* key, const std::string& fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}
int64_t IntOf(const Json& j, const char* key, int64_t fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

// A response's body as JSON, whichever of JSON and protobuf the server answered in (discarded
// when it is neither).
Json BodyJson(const Response& r) {
  if (api::IsProtobufMediaType(r.content_type)) {
    auto decoded = api::DecodeProtobufObject(r.body);
    return decoded.ok() ? std::move(*decoded) : Json(Json::value_t::discarded);
  }
  return Json::parse(r.body, nullptr, false);
}

// The server's message in a Status body, or the body's start.
std::string ServerMessage(const Response& r) {
  Json j = BodyJson(r);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  return r.body.substr(0, 200);
}

Status FromHttp(const std::string& method, const std::string& target, const Response& r) {
  const std::string what = method + " " + target + ": HTTP " + std::to_string(r.status) + ": " + ServerMessage(r);
  switch (r.status) {
    case 404:
      return NotFound(what);
    case 409: {
      Json j = BodyJson(r);
      if (StringOf(j, "reason") == "AlreadyExists") return AlreadyExists(what);
      return Conflict(what);
    }
    case 410:
      return Gone(what);
    case 400:
    case 422:
      return InvalidArgument(what);
    case 401:
    case 403:
      return FailedPrecondition(what);
    default:
      return Unavailable(what);
  }
}

StatusOr<int64_t> ParseRevision(const Json& rv, const std::string& what) {
  if (!rv.is_string()) return Internal(what + ": no metadata.resourceVersion");
  const std::string& s = rv.get_ref<const std::string&>();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) {
    return Internal(what + ": resourceVersion \"" + s + "\" is not a decimal revision");
  }
  return v;
}

const Json* Meta(const Json& body) {
  auto m = body.find("metadata");
  return m != body.end() && m->is_object() ? &*m : nullptr;
}

std::string MetaString(const Json& body, const char* key) {
  const Json* m = Meta(body);
  if (m == nullptr) return "";
  auto it = m->find(key);
  return it != m->end() && it->is_string() ? it->get<std::string>() : "";
}

const Json& Field(const Json& body, const char* key) {
  static const Json kNull;
  if (!body.is_object()) return kNull;
  auto it = body.find(key);
  return it == body.end() ? kNull : *it;
}

std::string NodeNameOf(const Json& pod) {
  const Json& spec = Field(pod, "spec");
  const Json& n = Field(spec, "nodeName");
  return n.is_string() ? n.get<std::string>() : "";
}

// "…:05Z" as a MicroTime ("…:05.000000Z").
std::string MicroTime(const std::string& t) {
  if (t.size() < 2 || t.back() != 'Z' || t.find('.') != std::string::npos) return t;
  return t.substr(0, t.size() - 1) + ".000000Z";
}

std::string Hostname() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace arbiter::kubeclient::internal
