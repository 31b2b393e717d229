// What the parts of ApiServer (server.cc and the handlers beside it) share: the parsed request path, responses
// and errors, and the reading of common query parameters. Not for use outside api/.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arbiter/base/time.h"

#include "arbiter/api/event_versions.h"
#include "arbiter/api/resources.h"
#include "arbiter/api/server.h"

namespace arbiter::api {

struct ApiServer::Target {
  const ResourceInfo* info = nullptr;
  std::string ns;
  std::string name;
  std::string sub;
  bool watch_prefix = false;
};

namespace internal {

inline Response JsonResponse(int code, const nlohmann::json& body) {
  Response r;
  r.code = code;
  r.body = body.dump();
  return r;
}

// The reason of a Status with this code, as kube-apiserver names it.
inline const char* ReasonFor(int code) {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return "Conflict";
    case 410: return "Expired";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 503: return "ServiceUnavailable";
    default: return "InternalError";
  }
}

inline Response Error(int code, const std::string& message, const std::string& kind = "", const std::string& name = "") {
  std::string reason = ReasonFor(code);
  if (code == 409 && message.find("already exists") != std::string::npos) reason = "AlreadyExists";
  return JsonResponse(code, StatusBody(code, reason, message, kind, name));
}

inline Response Error(const Status& s, const std::string& kind = "", const std::string& name = "") {
  return Error(StatusToHttp(s), s.message(), kind, name);
}

// Whether the client asked for a Table (Accept: ...;as=Table;...).
inline bool WantsTable(const Request& r) {
  auto it = r.headers.find("accept");
  return it != r.headers.end() && it->second.find("as=Table") != std::string::npos;
}

inline std::string QueryOr(const Request& r, const std::string& k, const std::string& fallback = "") {
  auto it = r.query.find(k);
  return it == r.query.end() ? fallback : it->second;
}

// TableOptions.includeObject's error, for a value that is none of its three.
inline std::string IncludeObjectError(const Request& r) {
  return "includeObject: Unsupported value: " + nlohmann::json(QueryOr(r, "includeObject")).dump() +
         ": supported values: \"None\", \"Metadata\", \"Object\"";
}

// A resourceVersion as a revision: 0 for "", -1 for anything but a positive decimal.
inline int64_t ParseRevision(const std::string& s) {
  if (s.empty()) return 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  return end != nullptr && *end == '\0' && v > 0 ? v : -1;
}

// events.k8s.io/v1 Events are stored as core v1 Events (event_versions.h): converted on the way in
// and out.
inline bool Converted(const ResourceInfo& info) { return info.AnotherVersion(); }

// A read-modify-write that lost a race to another writer reads again and retries, as kube-apiserver's
// storage does: its etcd3 store's GuaranteedUpdate and conditionalDelete loop until they win, so a
// delete or a patch without a precondition never answers 409 because others wrote meanwhile. The
// request's time bounds the loop here: 30 s of the server's clock, and at most 10,000 tries (a
// clock that stands still, as in tests, cannot make it endless).
class RaceRetry {
 public:
  explicit RaceRetry(const Clock& clock) : clock_(clock), deadline_(clock.Now() + 30 * kSecond) {}
  // Whether to try (again): always the first time, then while time and tries remain.
  bool Again() { return tries_++ < 5 || (tries_ <= 10000 && clock_.Now() < deadline_); }

 private:
  const Clock& clock_;
  const Timestamp deadline_;
  int tries_ = 0;
};

// The body of a request as JSON: from JSON, YAML (aliases and nesting beyond a bound refused
// before anything is built) or Kubernetes protobuf, by its Content-Type.
StatusOr<nlohmann::json> ParseBody(const Request& r);

// An invalid option of a write (dryRun, fieldValidation): 422 naming the verb's options object
// (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions). `error` is "field: detail".
Response InvalidOptions(const Request& r, const std::string& error);

// The dryRun parameter: "" (a real write) or "All" (everything but the write), as upstream.
StatusOr<bool> DryRunOf(const std::string& v);

// metadata.name, or "" when absent or not a string.
std::string ObjectName(const nlohmann::json& o);

// The object's metadata.finalizers.
std::vector<std::string> FinalizersOf(const nlohmann::json& object);

// Whether a Namespace's spec.finalizers is empty (or absent).
bool NamespaceSpecFinalized(const nlohmann::json& ns);

// kube-apiserver's 409 for a write that lost a race: "Operation cannot be fulfilled on R \"N\": WHY".
Response Conflict409(const ApiServer::Target& t, const std::string& why);

// A stored object as the answer of a write or read, converted to the version the client asked
// for (events.k8s.io/v1 Events are stored as core v1 Events).
Response WireResponse(int code, const ResourceInfo& info, const nlohmann::json& stored);
// The same for a stored version: its own text, unless the kind is converted.
Response WireResponse(int code, const ResourceInfo& info, const store::Body& stored);

// The list cache's index a read of `resource` with these selectors draws its candidates from (a
// pod's node or phase, else a pinned label), if any; the selectors still decide (list.cc).
std::optional<std::pair<std::string, std::string>> IndexFor(const std::string& resource, const Selector& labels,
                                                            const Selector& fields);

}  // namespace internal
}  // namespace arbiter::api
