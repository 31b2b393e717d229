// Request handling of the Kubernetes-compatible API.
#include "arbiter/api/server.h"

#include "arbiter/api/event_versions.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "arbiter/api/authz.h"
#include "arbiter/api/field_validation.h"
#include "arbiter/api/openapi.h"
#include "arbiter/api/protobuf_codec.h"
#include "arbiter/schema/schema.h"
#include "arbiter/api/managed_fields.h"
#include "arbiter/api/patch.h"
#include "arbiter/api/tables.h"
#include "arbiter/api/server_internal.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/manifest/names.h"

namespace arbiter::api {

using schema::ApiSchema;
using schema::FieldDoc;
using schema::JsonField;
using schema::WireShape;
namespace pb = google::protobuf;

using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares

namespace {

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





Response WithWarnings(Response r, const std::vector<std::string>& warnings) {
  r.warnings.insert(r.warnings.end(), warnings.begin(), warnings.end());
  return r;
}

// A rejected write: an invalid object is answered with its kind and one cause per field error
// (kube-apiserver's NewInvalid); other failures name the resource, as upstream.
Response Rejected(const Status& s, const ResourceInfo& info, const std::string& name) {
  if (s.code() != StatusCode::kInvalidArgument) return Error(s, std::string(info.resource), name);
  return JsonResponse(422, InvalidStatusBody(s.message(), info.kind, info.group, name, FieldErrorsOf(s.message())));
}

// YAML (server-side apply bodies) to JSON, scalars typed as YAML 1.2's core schema reads them.
Json YamlToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      Json o = Json::object();
      for (auto it = n.begin(); it != n.end(); ++it) o[it->first.as<std::string>()] = YamlToJson(it->second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      Json a = Json::array();
      for (const auto& e : n) a.push_back(YamlToJson(e));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") return s;  // quoted
      if (s == "true" || s == "True") return true;
      if (s == "false" || s == "False") return false;
      if (s == "null" || s == "~") return nullptr;
      char* end = nullptr;
      const long long i = std::strtoll(s.c_str(), &end, 10);
      if (!s.empty() && end != nullptr && *end == '\0') return i;
      const double d = std::strtod(s.c_str(), &end);
      if (!s.empty() && end != nullptr && *end == '\0' && s.find_first_of(".eE") != std::string::npos) return d;
      return s;
    }
    default: return nullptr;
  }
}

// Request bodies are bounded in size before they are parsed; parsing itself must not make them
// bigger or deeper than that: YAML aliases (which expand a few bytes into gigabytes) are refused
// before anything is built, and nesting deeper than kMaxBodyDepth is refused in either format.
constexpr int kMaxBodyDepth = 200;

class YamlScan final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override { ++documents; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override {
    if (alias_line < 0) alias_line = m.line + 1;
  }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Open(m);
  }
  void OnSequenceEnd() override { --depth; }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Open(m);
  }
  void OnMapEnd() override { --depth; }

  int documents = 0;
  int depth = 0;
  int alias_line = -1;
  int too_deep_line = -1;

 private:
  void Open(const YAML::Mark& m) {
    if (++depth > kMaxBodyDepth && too_deep_line < 0) too_deep_line = m.line + 1;
  }
};

StatusOr<Json> ParseYamlBody(const std::string& body) {
  YamlScan scan;
  {
    std::istringstream in(body);
    YAML::Parser parser(in);
    // The scan stops at a second document: a body must hold one, and on some malformed input
    // (bytes that are not UTF-8) yaml-cpp reports empty documents without end.
    while (scan.too_deep_line < 0 && scan.documents < 2 && parser.HandleNextDocument(scan)) {
    }
  }
  if (scan.alias_line > 0) {
    return InvalidArgument("the request body uses a YAML alias (line " + std::to_string(scan.alias_line) +
                           "): aliases are not accepted in request bodies");
  }
  if (scan.too_deep_line > 0) {
    return InvalidArgument("the request body nests deeper than " + std::to_string(kMaxBodyDepth) + " levels (line " +
                           std::to_string(scan.too_deep_line) + ")");
  }
  if (scan.documents > 1) return InvalidArgument("the request body holds " + std::to_string(scan.documents) + " YAML documents; send one");
  return YamlToJson(YAML::Load(body));
}

StatusOr<Json> ParseJsonBody(const std::string& body) {
  // The parser reports each value's depth; too deep a body ends the parse (ParseBody answers 400).
  return Json::parse(body, [](int depth, Json::parse_event_t, Json&) {
    if (depth > kMaxBodyDepth) throw std::length_error("too deep");
    return true;
  });
}

StatusOr<Json> ParseBody(const Request& r) {
  const std::string ct = r.headers.count("content-type") ? r.headers.at("content-type") : "application/json";
  // A protobuf body is converted to JSON here, at the edge; every handler sees JSON.
  if (IsProtobufMediaType(ct)) return DecodeProtobufObject(r.body);
  try {
    if (ct.find("yaml") != std::string::npos) return ParseYamlBody(r.body);
    return ParseJsonBody(r.body);
  } catch (const std::length_error&) {
    return InvalidArgument("the request body nests deeper than " + std::to_string(kMaxBodyDepth) + " levels");
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("the request body is not valid ") +
                           (ct.find("yaml") != std::string::npos ? "YAML" : "JSON") + ": " + e.what());
  }
}

// Query booleans as Go's strconv.ParseBool reads them (clients send true, True and 1).



// An invalid option of a write (dryRun, fieldValidation): kube-apiserver validates the verb's
// options object (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions) and answers 422 with
// the field as its cause. `error` is "field: detail".
Response InvalidOptions(const Request& r, const std::string& error) {
  const std::string kind = r.method == "POST"    ? "CreateOptions"
                           : r.method == "PUT"   ? "UpdateOptions"
                           : r.method == "PATCH" ? "PatchOptions"
                                                 : "DeleteOptions";
  const std::string message = kind + ".meta.k8s.io \"\" is invalid: " + error;
  return JsonResponse(422, InvalidStatusBody(message, kind, "meta.k8s.io", "", FieldErrorsOf(message)));
}



// TotalAnnotationSizeLimitB of apimachinery's ValidateAnnotations.

// The dryRun parameter: "" (a real write) or "All" (everything but the write), as upstream.
StatusOr<bool> DryRunOf(const std::string& v) {
  if (v.empty()) return false;
  if (v == "All") return true;
  return InvalidArgument("dryRun: Unsupported value: [\"" + v + "\"]: supported values: \"All\"");
}


std::string ObjectName(const Json& o) {
  if (o.contains("metadata") && o["metadata"].is_object() && o["metadata"].contains("name") &&
      o["metadata"]["name"].is_string()) {
    return o["metadata"]["name"].get<std::string>();
  }
  return "";
}

// Copies what the server owns (uid, creationTimestamp, generation, deletion marks) from the
// stored object into an incoming replacement.
void KeepServerFields(Json& incoming, const Json& stored) {
  Json& md = incoming["metadata"];
  for (const char* k : {"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"}) {
    if (stored["metadata"].contains(k)) {
      md[k] = stored["metadata"][k];
    } else {
      md.erase(k);
    }
  }
}

// A metav1.LabelSelector (matchLabels and matchExpressions) against labels. An empty selector
// selects everything, as a PodDisruptionBudget's does.
bool SelectorMatches(const Json& selector, const Json& labels) {
  if (!selector.is_object()) return false;
  auto label = [&](const std::string& k) -> const Json* {
    return labels.is_object() && labels.contains(k) ? &labels[k] : nullptr;
  };
  if (const auto it = selector.find("matchLabels"); it != selector.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      const Json* l = label(k);
      if (l == nullptr || *l != v) return false;
    }
  }
  if (const auto it = selector.find("matchExpressions"); it != selector.end() && it->is_array()) {
    for (const Json& e : *it) {
      if (!e.is_object() || !e.contains("key") || !e["key"].is_string()) return false;
      const Json* l = label(e["key"].get<std::string>());
      const std::string op = e.value("operator", "");
      const Json values = e.value("values", Json::array());
      const bool listed = l != nullptr && std::find(values.begin(), values.end(), *l) != values.end();
      if (op == "In" && !listed) return false;
      if (op == "NotIn" && listed) return false;
      if (op == "Exists" && l == nullptr) return false;
      if (op == "DoesNotExist" && l != nullptr) return false;
      if (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist") return false;
    }
  }
  return true;
}

}  // namespace

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

namespace {

// The object's metadata.finalizers.
std::vector<std::string> FinalizersOf(const Json& object) {
  std::vector<std::string> out;
  if (!object.contains("metadata") || !object["metadata"].is_object()) return out;
  const Json& f = object["metadata"].value("finalizers", Json::array());
  if (!f.is_array()) return out;
  for (const Json& x : f) {
    if (x.is_string()) out.push_back(x.get<std::string>());
  }
  return out;
}

bool NamespaceSpecFinalized(const Json& ns) {
  if (!ns.contains("spec") || !ns["spec"].is_object()) return true;
  const Json& f = ns["spec"].value("finalizers", Json::array());
  return !f.is_array() || f.empty();
}

}  // namespace


namespace {

constexpr const char* kModified =
    "the object has been modified; please apply your changes to the latest version and try again";

// kube-apiserver's 409 for a write that lost a race: "Operation cannot be fulfilled on R \"N\": WHY".
Response Conflict409(const ApiServer::Target& t, const std::string& why) {
  const std::string resource(t.info->resource);
  return Error(409, "Operation cannot be fulfilled on " + resource + " \"" + t.name + "\": " + why, resource, t.name);
}

}  // namespace

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

Response ApiServer::Review(const Request& r, const Target& t) {
  auto body = ParseBody(r);
  if (!body.ok()) return Error(400, body.status().message());
  Json review = std::move(*body);
  if (!review.is_object()) return Error(400, "the request body must be an object");
  review["apiVersion"] = t.info->ApiVersion();
  review["kind"] = t.info->kind;
  if (!review.contains("metadata") || !review["metadata"].is_object()) review["metadata"] = Json::object();
  review["metadata"]["creationTimestamp"] = nullptr;
  TokenUser user;
  if (r.authenticated) {
    user = {r.user, r.uid, r.groups};
  } else {
    // Without authentication every request may do anything, as an administrator's.
    user = {"system:admin", "", {"system:masters", "system:authenticated"}};
  }
  if (t.info->kind == "SelfSubjectReview") {
    Json groups = Json::array();
    for (const auto& g : user.groups) groups.push_back(g);
    Json info = {{"username", user.name}, {"groups", groups}};
    if (!user.uid.empty()) info["uid"] = user.uid;
    review["status"] = {{"userInfo", info}};
    return JsonResponse(201, review);
  }
  const Json spec = review.value("spec", Json::object());
  if (t.info->kind == "SelfSubjectRulesReview") {
    // The rules that grant the caller something in spec.namespace, as RBAC holds them: a
    // resource rule each (apiGroups, resources, resourceNames, verbs), a non-resource rule each.
    const std::string ns = spec.is_object() ? spec.value("namespace", "") : "";
    std::vector<Json> rules;
    if (!r.authenticated || authorizer_ == nullptr) {
      rules.push_back(Json{{"apiGroups", Json::array({"*"})}, {"resources", Json::array({"*"})}, {"verbs", Json::array({"*"})}});
      rules.push_back(Json{{"nonResourceURLs", Json::array({"*"})}, {"verbs", Json::array({"*"})}});
    } else {
      rules = authorizer_->RulesOfUser(user, ns);
    }
    Json resource_rules = Json::array(), non_resource_rules = Json::array();
    for (const Json& rule : rules) {
      if (!rule.is_object()) continue;
      if (rule.contains("nonResourceURLs")) {
        non_resource_rules.push_back({{"verbs", rule.value("verbs", Json::array())}, {"nonResourceURLs", rule["nonResourceURLs"]}});
        continue;
      }
      Json out = {{"verbs", rule.value("verbs", Json::array())},
                  {"apiGroups", rule.value("apiGroups", Json::array())},
                  {"resources", rule.value("resources", Json::array())}};
      if (rule.contains("resourceNames")) out["resourceNames"] = rule["resourceNames"];
      resource_rules.push_back(std::move(out));
    }
    review["status"] = {{"resourceRules", std::move(resource_rules)}, {"nonResourceRules", std::move(non_resource_rules)},
                        {"incomplete", false}};
    return JsonResponse(201, review);
  }
  if (spec.contains("nonResourceAttributes") && spec["nonResourceAttributes"].is_object()) {
    RequestAttributes a;
    a.resource_request = false;
    a.verb = spec["nonResourceAttributes"].value("verb", "");
    a.path = spec["nonResourceAttributes"].value("path", "");
    review["status"] = {{"allowed", !r.authenticated || authorizer_ == nullptr || authorizer_->Allowed(user, a)}};
    return JsonResponse(201, review);
  }
  const Json attrs = spec.value("resourceAttributes", Json::object());
  if (!attrs.is_object()) return Error(400, "spec.resourceAttributes must be an object");
  RequestAttributes a;
  a.verb = attrs.value("verb", "");
  a.api_group = attrs.value("group", "");
  a.resource = attrs.value("resource", "");
  a.subresource = attrs.value("subresource", "");
  a.ns = attrs.value("namespace", "");
  a.name = attrs.value("name", "");
  const bool allowed = !r.authenticated || authorizer_ == nullptr ? true : authorizer_->Allowed(user, a);
  review["status"] = {{"allowed", allowed}};
  // RBAC denies without a reason, as upstream's authorizer does.
  return JsonResponse(201, review);
}

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
  if (t.info->StoreKey() == "pods" && !t.name.empty()) {
    if (t.sub == "log") {
      if (r.method != "GET") return Error(405, "the server does not allow " + r.method + " on " + r.path);
      return PodLog(r, t);
    }
    if (t.sub == "exec" || t.sub == "attach" || t.sub == "portforward" || t.sub == "proxy") return SimulatedNode(r, t);
    if (t.sub == "ephemeralcontainers") {
      if (r.method == "GET") return Get(r, t);
      if (r.method == "PUT") return Update(r, t);
      if (r.method == "PATCH") return Patch(r, t);
      return Error(405, "the server does not allow " + r.method + " on " + r.path);
    }
  }
  if (t.info->review) {
    if (r.method == "POST" && t.name.empty()) return Review(r, t);
    return Error(405, "the server does not allow " + r.method + " on " + r.path + ": reviews are only created");
  }
  const bool watch = t.watch_prefix || QueryBool(QueryOr(r, "watch"));
  if (r.method == "GET" && t.sub != "scale") {
    if (t.name.empty()) return watch ? Watch(r, t) : List(r, t);
    return Get(r, t);
  }
  if (r.method == "POST") {
    if (t.name.empty()) return Create(r, t);
    if (t.sub == "binding") return Bind(r, t);
    if (t.sub == "eviction") return Evict(r, t);
  }
  if (t.sub == "scale" && !t.name.empty() && (r.method == "GET" || r.method == "PUT" || r.method == "PATCH")) {
    return Scale(r, t);
  }
  if (r.method == "PUT" && t.sub == "finalize" && !t.name.empty()) return Finalize(r, t);
  if (r.method == "PUT" && !t.name.empty() && (t.sub.empty() || t.sub == "status")) return Update(r, t);
  if (r.method == "PATCH" && !t.name.empty() && (t.sub.empty() || t.sub == "status")) return Patch(r, t);
  if (r.method == "DELETE" && !t.name.empty() && t.sub.empty()) return Delete(r, t);
  return Error(405, "the server does not allow " + r.method + " on " + r.path);
}

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
  const Json scale = ScaleOf(current->body);
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
  Json object = current->body;
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

namespace {


Response WireResponse(int code, const ResourceInfo& info, const Json& stored) {
  return Converted(info) ? JsonResponse(code, CoreEventToEventsV1(stored)) : JsonResponse(code, stored);
}

}  // namespace

namespace {

// The ephemeralcontainers subresource changes only spec.ephemeralContainers (upstream's
// EphemeralContainers strategy); the rest stays as stored.
Json WithEphemeralContainers(const Json& current, const Json& sent) {
  Json next = current;
  const Json* spec = sent.contains("spec") && sent["spec"].is_object() ? &sent["spec"] : nullptr;
  if (spec != nullptr && spec->contains("ephemeralContainers")) {
    next["spec"]["ephemeralContainers"] = (*spec)["ephemeralContainers"];
  } else if (next.contains("spec") && next["spec"].is_object()) {
    next["spec"].erase("ephemeralContainers");
  }
  if (sent.contains("metadata") && sent["metadata"].is_object() && sent["metadata"].contains("resourceVersion")) {
    next["metadata"]["resourceVersion"] = sent["metadata"]["resourceVersion"];
  }
  return next;
}

// The string at o[a][b], or "" when absent or not a string.
std::string StringOf(const Json& o, const char* a, const char* b) {
  if (!o.is_object() || !o.contains(a) || !o[a].is_object() || !o[a].contains(b) || !o[a][b].is_string()) return "";
  return o[a][b].get<std::string>();
}

// The names of a pod's containers of one list ("containers", "initContainers", ...).
std::vector<std::string> ContainerNames(const Json& pod, const char* list) {
  std::vector<std::string> out;
  if (!pod.contains("spec") || !pod["spec"].is_object() || !pod["spec"].contains(list) || !pod["spec"][list].is_array()) {
    return out;
  }
  for (const Json& c : pod["spec"][list]) {
    if (c.is_object() && c.contains("name") && c["name"].is_string()) out.push_back(c["name"].get<std::string>());
  }
  return out;
}

// A non-negative integer query parameter, or nullopt when absent; an error names it.
StatusOr<std::optional<int64_t>> QueryInt(const Request& r, const std::string& key, int64_t min) {
  auto it = r.query.find(key);
  if (it == r.query.end() || it->second.empty()) return std::optional<int64_t>();
  int64_t v = 0;
  const char* b = it->second.data();
  const auto res = std::from_chars(b, b + it->second.size(), v);
  if (res.ec != std::errc() || res.ptr != b + it->second.size() || v < min) {
    return InvalidArgument(key + ": Invalid value: \"" + it->second + "\": must be an integer of at least " +
                           std::to_string(min));
  }
  return std::optional<int64_t>(v);
}

}  // namespace

Response ApiServer::PodLog(const Request& r, const Target& t) {
  auto current = store_.Get("pods", t.ns, t.name);
  if (!current.ok()) return Error(404, "pods \"" + t.name + "\" not found", "pods", t.name);
  const Json& pod = current->body;
  std::vector<std::string> names = ContainerNames(pod, "containers");
  std::vector<std::string> all = names;
  for (const char* list : {"initContainers", "ephemeralContainers"}) {
    for (std::string& n : ContainerNames(pod, list)) all.push_back(std::move(n));
  }
  std::string container = QueryOr(r, "container");
  if (container.empty()) {
    if (names.size() != 1) {
      std::string choices;
      for (const std::string& n : names) choices += (choices.empty() ? "" : " ") + n;
      return Error(400, "a container name must be specified for pod " + t.name + ", choose one of: [" + choices + "]",
                   "pods", t.name);
    }
    container = names.front();
  } else if (std::find(all.begin(), all.end(), container) == all.end()) {
    return Error(400, "container " + container + " is not valid for pod " + t.name, "pods", t.name);
  }
  // The options, validated as upstream's PodLogOptions.
  auto tail = QueryInt(r, "tailLines", 0);
  auto since_seconds = QueryInt(r, "sinceSeconds", 1);
  auto limit = QueryInt(r, "limitBytes", 1);
  for (const auto* q : {&tail, &since_seconds, &limit}) {
    if (!q->ok()) return Error(400, "PodLogOptions is invalid: " + q->status().message(), "pods", t.name);
  }
  std::optional<Timestamp> since;
  if (const std::string st = QueryOr(r, "sinceTime"); !st.empty()) {
    if (*since_seconds) return Error(400, "PodLogOptions is invalid: at most one of `sinceTime` or `sinceSeconds` may be specified", "pods", t.name);
    auto parsed = ParseRfc3339(st);
    if (!parsed.ok()) return Error(400, "PodLogOptions is invalid: sinceTime: " + parsed.status().message(), "pods", t.name);
    since = *parsed;
  } else if (*since_seconds) {
    since = clock_.Now() - **since_seconds * kSecond;
  }
  const bool previous = QueryBool(QueryOr(r, "previous"));
  const bool timestamps = QueryBool(QueryOr(r, "timestamps"));
  Response out;
  out.code = 200;
  out.content_type = "text/plain";
  // A pod not yet on a node has no log (kube-apiserver answers empty: there is no kubelet to ask).
  if (StringOf(pod, "spec", "nodeName").empty()) return out;
  std::optional<std::vector<ContainerLogs::Line>> lines;
  if (logs_ != nullptr) lines = logs_->Read(StringOf(pod, "metadata", "uid"), container, previous);
  if (previous && !lines) {
    return Error(400, "previous terminated container \"" + container + "\" in pod \"" + t.name + "\" not found",
                 "pods", t.name);
  }
  if (!lines) {
    if (StringOf(pod, "status", "phase") == "Pending") {
      return Error(400, "container \"" + container + "\" in pod \"" + t.name + "\" is waiting to start: ContainerCreating",
                   "pods", t.name);
    }
    return out;  // a node Arbiter does not simulate keeps its logs itself
  }
  size_t from = 0;
  if (since) {
    while (from < lines->size() && (*lines)[from].at < *since) ++from;
  }
  if (*tail && static_cast<int64_t>(lines->size() - from) > **tail) from = lines->size() - static_cast<size_t>(**tail);
  auto text = [timestamps](const ContainerLogs::Line& l) {
    return (timestamps ? FormatRfc3339(l.at) + " " : std::string()) + l.text + "\n";
  };
  bool limited = false;
  for (size_t i = from; i < lines->size(); ++i) {
    const std::string line = text((*lines)[i]);
    if (*limit && static_cast<int64_t>(out.body.size() + line.size()) > **limit) {
      out.body += line.substr(0, static_cast<size_t>(**limit) - out.body.size());
      limited = true;
      break;
    }
    out.body += line;
  }
  // follow: what the container logs next, until it ends or its pod goes.
  const std::string phase = StringOf(pod, "status", "phase");
  if (QueryBool(QueryOr(r, "follow")) && !previous && !limited && phase != "Succeeded" && phase != "Failed") {
    const std::string uid = StringOf(pod, "metadata", "uid");
    uint64_t last = lines->empty() ? 0 : lines->back().seq;
    auto stream = std::make_shared<TextStream>();
    stream->next = [this, ns = t.ns, name = t.name, uid, container, last, text]() mutable -> std::optional<std::string> {
      // Through restarts: the end of the instance that exited (now the previous log), then the
      // new one.
      std::string chunk;
      for (const bool prev : {true, false}) {
        const auto lines_now = logs_->Read(uid, container, prev);
        if (!lines_now) continue;
        for (const ContainerLogs::Line& l : *lines_now) {
          if (l.seq <= last) continue;
          chunk += text(l);
          last = l.seq;
        }
      }
      if (!chunk.empty()) return chunk;
      auto stored = store_.Get("pods", ns, name);
      if (!stored.ok() || StringOf(stored->body, "metadata", "uid") != uid) return std::nullopt;  // gone
      const std::string now_phase = StringOf(stored->body, "status", "phase");
      if (now_phase == "Succeeded" || now_phase == "Failed") return std::nullopt;  // ended, all said
      return std::string();
    };
    out.stream = std::move(stream);
  }
  return out;
}

Response ApiServer::SimulatedNode(const Request& r, const Target& t) {
  auto current = store_.Get("pods", t.ns, t.name);
  if (!current.ok()) return Error(404, "pods \"" + t.name + "\" not found", "pods", t.name);
  const std::string node = StringOf(current->body, "spec", "nodeName");
  const std::string what = t.sub == "exec"          ? "run commands in its containers (kubectl exec, cp)"
                           : t.sub == "attach"      ? "attach to its containers (kubectl attach, debug -it)"
                           : t.sub == "portforward" ? "forward ports to it (kubectl port-forward)"
                                                    : "proxy requests to it";
  (void)r;
  return Error(400, "pod " + t.name + (node.empty() ? " is on no node yet" : " runs on " + node) +
                        ", a node Arbiter simulates: it has no container runtime, so Arbiter cannot " + what +
                        "; its containers' logs are served (kubectl logs)",
               "pods", t.name);
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
  const Json& body = (*o)->body;
  if (WantsTable(r)) {
    const auto include = ParseIncludeObject(QueryOr(r, "includeObject"));
    if (!include) return Error(400, IncludeObjectError(r));
    Json table = ToTable(resource, {&body}, clock_.Now(), *include);
    table["metadata"]["resourceVersion"] = body.value("/metadata/resourceVersion"_json_pointer, Json(""));
    return JsonResponse(200, table);
  }
  return WireResponse(200, *t.info, body);
}



bool ApiServer::Selected(const WatchStream& w, const Json& object) {
  return w.labels.MatchesLabels(object) && w.fields.MatchesFields(object);
}

std::string ApiServer::WatchLine(const WatchStream& w, const store::Event& e) const {
  return WatchLine(w, e.type, e.object, /*shared=*/true);
}

std::string ApiServer::WatchLine(const WatchStream& w, store::EventType type, const store::Object& object,
                                 bool shared) const {
  if (w.as_table) {
    const Json table = ToTable(w.resource, {&object.body}, clock_.Now(), w.table_object);
    return Json{{"type", store::EventTypeName(type)}, {"object", table}}.dump() + "\n";
  }
  if (w.protobuf) {
    const Json wire = w.events_v1 ? CoreEventToEventsV1(object.body) : object.body;
    auto encoded = EncodeProtobufObject(wire);
    if (!encoded.ok()) {
      return WatchErrorLine(w, StatusBody(500, "InternalError", "the object has no protobuf form: " + encoded.status().message()));
    }
    return EncodeWatchFrame(store::EventTypeName(type), *encoded);
  }
  if (w.events_v1) {
    return Json{{"type", store::EventTypeName(type)}, {"object", CoreEventToEventsV1(object.body)}}.dump() + "\n";
  }
  if (!shared) return "{\"type\":\"" + std::string(store::EventTypeName(type)) + "\",\"object\":" + object.body.dump() + "}\n";
  {
    std::lock_guard<std::mutex> lock(lines_mu_);
    if (auto it = lines_.find(LineKey{object.revision, static_cast<int>(type), object.resource, object.ns,
                                      object.name});
        it != lines_.end()) {
      return it->second;
    }
  }
  std::string line = "{\"type\":\"" + std::string(store::EventTypeName(type)) + "\",\"object\":" + object.body.dump() + "}\n";
  std::lock_guard<std::mutex> lock(lines_mu_);
  if (lines_.emplace(LineKey{object.revision, static_cast<int>(type), object.resource, object.ns, object.name},
                     line)
          .second) {
    lines_bytes_ += line.size();
  }
  // Bounded by count and by bytes: 4,096 lines of a 200 KiB object would be 800 MiB.
  while (!lines_.empty() && (lines_.size() > kMaxCachedLines || lines_bytes_ > kMaxCachedLineBytes)) {
    lines_bytes_ -= lines_.begin()->second.size();
    lines_.erase(lines_.begin());
  }
  return line;
}

std::string ApiServer::WatchErrorLine(const WatchStream& w, const Json& status) {
  if (w.protobuf) {
    Json object = status;
    object["apiVersion"] = "v1";
    object["kind"] = "Status";
    if (auto encoded = EncodeProtobufObject(object); encoded.ok()) return EncodeWatchFrame("ERROR", *encoded);
  }
  return Json{{"type", "ERROR"}, {"object", status}}.dump() + "\n";
}

Response ApiServer::Watch(const Request& r, const Target& t) {
  auto labels = Selector::ParseLabels(QueryOr(r, "labelSelector"));
  if (!labels.ok()) return Error(400, labels.status().message());
  auto fields = Selector::ParseFields(QueryOr(r, "fieldSelector"), std::string(t.info->resource));
  if (!fields.ok()) return Error(400, fields.status().message());
  auto w = std::make_shared<WatchStream>();
  w->resource = t.info->StoreKey();
  w->events_v1 = Converted(*t.info);
  w->labels = *labels;
  w->fields = *fields;
  w->as_table = WantsTable(r);
  if (w->as_table) {
    const auto include = ParseIncludeObject(QueryOr(r, "includeObject"));
    if (!include) return Error(400, IncludeObjectError(r));
    w->table_object = *include;
  }
  if (auto accept = r.headers.find("accept"); !w->as_table && accept != r.headers.end() &&
                                              IsProtobufMediaType(accept->second)) {
    w->protobuf = ApiSchema::Get().Find(ProtoMessageName(t.info->group, t.info->version, t.info->kind)) != nullptr;
  }
  if (auto ts = QueryOr(r, "timeoutSeconds"); !ts.empty()) {
    const int64_t v = ParseRevision(ts);
    if (v < 0 && ts != "0") return Error(400, "timeoutSeconds \"" + ts + "\" is not a number of seconds");
    // kube-apiserver ends a watch within twice its minimum request timeout (1800 s).
    w->timeout_seconds = std::clamp<int64_t>(v, 1, 3600);
  }
  const std::string rv = QueryOr(r, "resourceVersion");
  int64_t from = ParseRevision(rv);
  if (from < 0 && rv != "0") return Error(400, "resourceVersion \"" + rv + "\" is not a revision");
  if (rv.empty() || rv == "0") {
    // No revision: the current state as ADDED events (from the list cache, read through the
    // selectors' index as a list is), then what follows.
    store::WatchCache::Query q;
    q.ns = t.ns;
    q.index = IndexFor(w->resource, *labels, *fields);
    q.match = [&w](const store::Object& o) { return Selected(*w, o.body); };
    auto page = ListPage(w->resource, q);
    if (!page.ok()) return Error(page.status());
    w->initial = std::move(page->items);
    from = page->revision;
  }
  if (auto latest = store_.Revision(); latest.ok() && from > *latest) {
    // A revision the store has not reached: kube-apiserver gives up after a short wait with 504
    // ResourceVersionTooLarge rather than hanging; Arbiter answers at once.
    Json body = StatusBody(504, "Timeout", "Too large resource version: " + rv + ", current: " + std::to_string(*latest));
    body["details"] = {{"causes", Json::array({{{"reason", "ResourceVersionTooLarge"},
                                                {"message", "Too large resource version"}}})},
                       {"retryAfterSeconds", 1}};
    return JsonResponse(504, body);
  }
  auto watch = store_.WatchFrom(t.info->StoreKey(), t.ns, from);
  if (!watch.ok()) {
    if (watch.status().code() == StatusCode::kGone) {
      return Error(410, "too old resource version: " + rv + " (" + watch.status().message() + ")");
    }
    return Error(watch.status());
  }
  w->watch = std::move(*watch);
  Response out;
  out.watch = std::move(w);
  return out;
}

std::optional<Response> ApiServer::CheckEscalation(const Request& r, const ResourceInfo& info, const Json& object,
                                                   const std::string& ns, const Json* old) {
  if (!r.authenticated || authorizer_ == nullptr || info.group != "rbac.authorization.k8s.io") return std::nullopt;
  const TokenUser user{r.user, r.uid, r.groups};
  // rbac's EscalationAllowed: a superuser may grant anything.
  if (user.groups.contains("system:masters")) return std::nullopt;
  const bool binding = info.kind == "RoleBinding" || info.kind == "ClusterRoleBinding";
  Json rules;
  if (binding) {
    // BindingAuthorized: the `bind` verb on the referenced role grants it whatever it holds.
    const Json role_ref = object.value("roleRef", Json::object());
    const std::string ref_kind = role_ref.is_object() ? role_ref.value("kind", "") : "";
    const std::string ref_name = role_ref.is_object() ? role_ref.value("name", "") : "";
    RequestAttributes bind;
    bind.verb = "bind";
    bind.api_group = "rbac.authorization.k8s.io";
    bind.resource = ref_kind == "ClusterRole" ? "clusterroles" : "roles";
    bind.name = ref_name;
    bind.ns = ns;
    if (authorizer_->Allowed(user, bind)) return std::nullopt;
    // Else the grantor must hold the role's rules, and a role that does not exist has none to
    // compare: NotFound, never a binding that would grant what the role holds later.
    auto held = authorizer_->RulesOf(role_ref, ns);
    if (!held) {
      const std::string resource = bind.resource + ".rbac.authorization.k8s.io";
      return Error(404, resource + " \"" + ref_name + "\" not found", bind.resource, ref_name);
    }
    rules = std::move(*held);
  } else {
    // The `escalate` verb on a role lets its holder write any rules into it.
    RequestAttributes escalate;
    escalate.verb = "escalate";
    escalate.api_group = "rbac.authorization.k8s.io";
    escalate.resource = std::string(info.resource);
    escalate.name = ObjectName(object);
    escalate.ns = ns;
    if (authorizer_->Allowed(user, escalate)) return std::nullopt;
    rules = object.value("rules", Json::array());
    // An aggregation rule can gather anything (and, kept on an update, stop a role from being
    // tightened): setting one, or writing a role that has one, needs cluster-admin's authority
    // (upstream's clusterrole storage, fullAuthority).
    if (info.kind == "ClusterRole" && (HasAggregationRule(object) || (old != nullptr && HasAggregationRule(*old)))) {
      const Json full = Json::array({{{"apiGroups", {"*"}}, {"resources", {"*"}}, {"verbs", {"*"}}},
                                     {{"nonResourceURLs", {"*"}}, {"verbs", {"*"}}}});
      if (!authorizer_->Covers(user, full, "")) {
        return Error(403, "clusterroles.rbac.authorization.k8s.io \"" + ObjectName(object) +
                              "\" is forbidden: must have cluster-admin privileges to use the aggregationRule");
      }
    }
  }
  if (authorizer_->Covers(user, rules, ns)) return std::nullopt;
  return Error(403, std::string(info.resource) + "." + std::string(info.group) + " \"" + ObjectName(object) +
                        "\" is forbidden: user \"" + r.user +
                        "\" is attempting to grant RBAC permissions not currently held");
}

std::optional<Response> ApiServer::CheckFields(const Request& r, const ResourceInfo& info, Json& object,
                                               std::vector<std::string>& warnings) {
  auto mode = ParseFieldValidation(QueryOr(r, "fieldValidation"));
  if (!mode.ok()) return InvalidOptions(r, mode.status().message());
  const pb::Descriptor* d = ApiSchema::Get().Find(ProtoMessageName(info.group, info.version, info.kind));
  if (d == nullptr || !object.is_object()) return std::nullopt;
  SchemaCheck check = CheckAgainstSchema(object, d);
  const std::string cannot = std::string(info.kind) + " in version \"" + std::string(info.version) +
                             "\" cannot be handled as a " + std::string(info.kind) + ": ";
  if (!check.wrong_types.empty()) {
    std::string msg = cannot;
    for (size_t i = 0; i < check.wrong_types.size(); ++i) msg += (i > 0 ? "; " : "") + check.wrong_types[i];
    return Error(400, msg);
  }
  if (!check.unknown.empty() && *mode != FieldValidation::kIgnore) {
    if (*mode == FieldValidation::kStrict) {
      std::string msg = cannot + "strict decoding error: ";
      for (size_t i = 0; i < check.unknown.size(); ++i) {
        msg += (i > 0 ? ", " : "") + std::string("unknown field \"") + check.unknown[i] + "\"";
      }
      return Error(400, msg);
    }
    for (const auto& f : check.unknown) warnings.push_back("unknown field \"" + f + "\"");
  }
  if (!check.missing.empty()) {
    std::string msg = std::string(info.kind) + " \"" + ObjectName(object) + "\" is invalid: ";
    for (size_t i = 0; i < check.missing.size(); ++i) {
      msg += (i > 0 ? "; " : "") + check.missing[i].field + ": " + check.missing[i].detail;
    }
    return JsonResponse(422, InvalidStatusBody(msg, info.kind, info.group, ObjectName(object), check.missing));
  }
  return std::nullopt;
}

Status ApiServer::Validate(const ResourceInfo& info, Json& object, const Json* old, const std::string& ns,
                           const std::string& name) {
  if (!object.is_object()) return InvalidArgument("the body must be a JSON object");
  if (object.contains("kind") && object["kind"] != info.kind) {
    return Status(StatusCode::kOutOfRange, "the body is a " + object["kind"].dump() + ", not a " + std::string(info.kind));
  }
  if (object.contains("apiVersion") && object["apiVersion"] != info.ApiVersion()) {
    return Status(StatusCode::kOutOfRange, "the body's apiVersion is " + object["apiVersion"].dump() + ", not " +
                                               info.ApiVersion());
  }
  object["kind"] = info.kind;
  object["apiVersion"] = info.ApiVersion();
  if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = Json::object();
  Json& md = object["metadata"];
  if (md.contains("namespace") && info.namespaced && md["namespace"] != ns) {
    return Status(StatusCode::kOutOfRange,
                  "the namespace of the provided object does not match the namespace sent on the request");
  }
  if (info.namespaced) {
    md["namespace"] = ns;
  } else {
    md.erase("namespace");
  }
  if (!name.empty() && ObjectName(object) != name) {
    return Status(StatusCode::kOutOfRange, "the name of the object (" + ObjectName(object) +
                                               ") does not match the name on the URL (" + name + ")");
  }
  // ValidateObjectMeta, for every kind served: the name by the kind's rule (on create: a stored
  // name is never refused again, so an object stored before a rule existed can still be
  // updated and deleted), labels and annotations.
  if (auto problems = manifest::ObjectMetaProblems(info.kind, md, /*check_name=*/old == nullptr); !problems.empty()) {
    std::string message;
    for (const auto& p : problems) message += (message.empty() ? "" : "; ") + p.message;
    const std::string what = std::string(info.kind) + (info.group.empty() ? "" : "." + std::string(info.group));
    return InvalidArgument(what + " " + Json(ObjectName(object)).dump() + " is invalid: " +
                           (problems.size() > 1 ? "[" + message + "]" : message));
  }
  if (old != nullptr && old->contains("metadata") && (*old)["metadata"].contains("deletionTimestamp")) {
    // ValidateObjectMetaUpdate: an object being deleted takes no new finalizer.
    const std::vector<std::string> before = FinalizersOf(*old);
    std::string added;
    for (const std::string& f : FinalizersOf(object)) {
      if (std::find(before.begin(), before.end(), f) == before.end()) added += (added.empty() ? "\"" : ", \"") + f + "\"";
    }
    if (!added.empty()) {
      return InvalidArgument(std::string(info.kind) + " \"" + name + "\" is invalid: metadata.finalizers: Forbidden: no new "
                             "finalizers can be added if the object is being deleted, found new finalizers []string{" +
                             added + "}");
    }
  }
  if (info.decoded) {
    // The engine's own decoder is the schema: wrong types and invalid values are caught here,
    // with the field named.
    manifest::LoadResult decoded = manifest::DecodeJson("request", object, /*strict_strings=*/true);
    if (!decoded.ok()) {
      std::string msg;
      for (const auto& e : decoded.errors) {
        std::string line = e;
        if (line.starts_with("request: document 1: ")) line = line.substr(std::string("request: document 1: ").size());
        // The decoder names the object it read ("Pod ns/name: "); the message names it already, and
        // what follows is the field, as each cause's field.
        if (const std::string origin = std::string(info.kind) + " "; line.starts_with(origin)) {
          if (const size_t colon = line.find(": "); colon != std::string::npos && line.find(' ', origin.size()) > colon) {
            line = line.substr(colon + 2);
          }
        }
        msg += (msg.empty() ? "" : "; ") + line;
      }
      return InvalidArgument(std::string(info.kind) + " \"" + ObjectName(object) + "\" is invalid: " + msg);
    }
  }
  return RunAdmission(info, object, old);
}

Status ApiServer::RunAdmission(const ResourceInfo& info, Json& object, const Json* old) {
  for (const auto& hook : admission_) ARBITER_RETURN_IF_ERROR(hook(info, object, old, admission_store_));
  return Status::Ok();
}

namespace {

// The group/version a resource is written at ("apps/v1", "v1").
std::string ApiVersionOf(const ResourceInfo& info) {
  return info.group.empty() ? std::string(info.version) : std::string(info.group) + "/" + std::string(info.version);
}

std::string UserAgentOf(const Request& r) {
  auto it = r.headers.find("user-agent");
  return it != r.headers.end() ? it->second : "";
}

}  // namespace

Response ApiServer::Create(const Request& r, const Target& t, bool applied) {
  const auto dry_run = DryRunOf(QueryOr(r, "dryRun"));
  if (!dry_run.ok()) return InvalidOptions(r, dry_run.status().message());
  if (t.info->namespaced && t.ns.empty()) {
    return Error(405, "create " + std::string(t.info->resource) + " in a namespace: POST to /namespaces/NS/" +
                          std::string(t.info->resource));
  }
  auto body = ParseBody(r);
  if (!body.ok()) return Error(400, body.status().message());
  Json object = std::move(*body);
  const Json sent = object;  // the configuration as the client sent it (an apply's: what it owns)
  if (!object.is_object()) return Error(400, "the request body must be an object");
  if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = Json::object();
  Json& md = object["metadata"];
  if (ObjectName(object).empty()) {
    if (md.contains("generateName") && md["generateName"].is_string() && !md["generateName"].get<std::string>().empty()) {
      std::string suffix;
      {
        std::lock_guard<std::mutex> lock(rng_mu_);
        suffix = manifest::GeneratedNameSuffix(rng_);
      }
      md["name"] = md["generateName"].get<std::string>() + suffix;
    } else {
      return Error(422, std::string(t.info->kind) + " is invalid: metadata.name: Required value: name or generateName is required",
                   std::string(t.info->resource));
    }
  }
  const std::string name = ObjectName(object);
  if (md.contains("resourceVersion") && !(md["resourceVersion"].is_string() && md["resourceVersion"].get<std::string>().empty())) {
    return Error(422, std::string(t.info->kind) + " \"" + name + "\" is invalid: metadata.resourceVersion: "
                      "Invalid value: resourceVersion should not be set on objects to be created");
  }
  if (t.info->namespaced) {
    auto ns = admission_store_.Get("namespaces", "", t.ns);
    if (!ns.ok()) return Error(404, "namespaces \"" + t.ns + "\" not found", "namespaces", t.ns);
    // The NamespaceLifecycle admission plugin: nothing new in a namespace being deleted.
    if (ns->body.contains("metadata") && ns->body["metadata"].contains("deletionTimestamp")) {
      Json refused = StatusBody(403, "Forbidden",
                                std::string(t.info->resource) + " \"" + name +
                                    "\" is forbidden: unable to create new content in namespace " + t.ns +
                                    " because it is being terminated",
                                std::string(t.info->resource), name);
      refused["details"]["causes"] = Json::array({{{"reason", "NamespaceTerminating"},
                                                   {"message", "namespace " + t.ns + " is being terminated"},
                                                   {"field", "metadata.namespace"}}});
      return JsonResponse(403, refused);
    }
  }
  md["uid"] = NewUid();
  md["creationTimestamp"] = Now();
  md.erase("deletionTimestamp");
  md.erase("deletionGracePeriodSeconds");
  if (object.contains("spec")) md["generation"] = 1;
  if (t.info->StoreKey() == "pods") {
    object["status"] = {{"phase", "Pending"}};  // a new pod's status is the cluster's to write, as upstream
  }
  if (t.info->StoreKey() == "namespaces") {
    // NamespaceDefaultLabelName: every namespace carries its own name as a label, for selectors.
    if (!md["labels"].is_object()) md["labels"] = Json::object();
    md["labels"]["kubernetes.io/metadata.name"] = ObjectName(object);
    object["status"] = {{"phase", "Active"}};
    // The namespace strategy's PrepareForCreate: the namespace controller's finalizer.
    object["spec"] = {{"finalizers", {"kubernetes"}}};
  }
  std::vector<std::string> warnings;
  if (auto rejected = CheckFields(r, *t.info, object, warnings)) return WithWarnings(std::move(*rejected), warnings);
  if (auto forbidden = CheckEscalation(r, *t.info, object, t.ns)) return *forbidden;
  if (Status v = Validate(*t.info, object, nullptr, t.ns, ""); !v.ok()) {
    return WithWarnings(Rejected(v, *t.info, name), warnings);
  }
  {
    auto manager = ManagerOf(QueryOr(r, "fieldManager"), UserAgentOf(r));
    if (!manager.ok()) return Error(422, manager.status().message(), std::string(t.info->resource), name);
    if (applied) {
      std::vector<ApplyConflict> none;
      (void)RecordApply(nullptr, sent, object, *manager, ApiVersionOf(*t.info), true, Now(), &none);
    } else {
      RecordUpdate(nullptr, object, *manager, ApiVersionOf(*t.info), "", Now());
    }
  }
  if (*dry_run) {
    // Everything ran (validation, admission, quota); nothing is stored.
    if (store_.Get(t.info->StoreKey(), t.ns, name).ok()) {
      return Error(409, std::string(t.info->resource) + " \"" + name + "\" already exists", std::string(t.info->resource), name);
    }
    return WithWarnings(JsonResponse(201, object), warnings);
  }
  if (Converted(*t.info)) object = EventsV1ToCoreEvent(object);
  auto created = store_.Create(t.info->StoreKey(), t.ns, name, object);
  if (!created.ok()) {
    if (created.status().code() == StatusCode::kAlreadyExists) {
      return Error(409, std::string(t.info->resource) + " \"" + name + "\" already exists",
                   std::string(t.info->resource), name);
    }
    return Error(created.status());
  }
  Response out = WireResponse(201, *t.info, created->body);
  out.warnings = std::move(warnings);
  return out;
}

Response ApiServer::Update(const Request& r, const Target& t) {
  const auto dry_run = DryRunOf(QueryOr(r, "dryRun"));
  if (!dry_run.ok()) return InvalidOptions(r, dry_run.status().message());
  auto body = ParseBody(r);
  if (!body.ok()) return Error(400, body.status().message());
  Json object = std::move(*body);
  if (!object.is_object()) return Error(400, "the request body must be an object");
  auto current = store_.Get(t.info->StoreKey(), t.ns, t.name);
  if (!current.ok()) {
    return Error(404, std::string(t.info->resource) + " \"" + t.name + "\" not found", std::string(t.info->resource),
                 t.name);
  }
  if (Converted(*t.info)) current->body = CoreEventToEventsV1(current->body);
  int64_t expected = 0;
  if (object.contains("metadata") && object["metadata"].is_object() && object["metadata"].contains("resourceVersion")) {
    const Json& rv = object["metadata"]["resourceVersion"];
    expected = rv.is_string() ? ParseRevision(rv.get<std::string>()) : -1;
    if (expected < 0) return Error(400, "metadata.resourceVersion must be a revision string");
  }
  if (t.sub == "status") {
    // The status subresource changes only the status.
    Json next = current->body;
    next["status"] = object.contains("status") ? object["status"] : Json::object();
    object = std::move(next);
  } else if (t.sub == "ephemeralcontainers") {
    object = WithEphemeralContainers(current->body, object);
  } else if (t.info->HasSubresource("status") && current->body.contains("status")) {
    object["status"] = current->body["status"];  // the main resource does not change the status
  }
  if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = Json::object();
  KeepServerFields(object, current->body);
  if (object.contains("spec") && current->body.contains("spec") && object["spec"] != current->body["spec"]) {
    object["metadata"]["generation"] = current->body["metadata"].value("generation", int64_t{1}) + 1;
  }
  std::vector<std::string> warnings;
  if (auto rejected = CheckFields(r, *t.info, object, warnings)) return WithWarnings(std::move(*rejected), warnings);
  if (auto forbidden = CheckEscalation(r, *t.info, object, t.ns, &current->body)) return *forbidden;
  if (Status v = Validate(*t.info, object, &current->body, t.ns, t.name); !v.ok()) {
    return WithWarnings(Rejected(v, *t.info, t.name), warnings);
  }
  {
    auto manager = ManagerOf(QueryOr(r, "fieldManager"), UserAgentOf(r));
    if (!manager.ok()) return Error(422, manager.status().message(), std::string(t.info->resource), t.name);
    RecordUpdate(&current->body, object, *manager, ApiVersionOf(*t.info), t.sub, Now());
  }
  if (*dry_run) {
    if (expected > 0 && expected != current->revision) return Conflict409(t, kModified);
    return WithWarnings(JsonResponse(200, object), warnings);
  }
  if (Converted(*t.info)) object = EventsV1ToCoreEvent(object);
  auto updated = WriteOrDelete(*t.info, t.ns, t.name, object, expected);
  if (!updated.ok()) {
    if (updated.status().code() == StatusCode::kConflict) {
      return Conflict409(t, kModified);
    }
    return Error(updated.status(), std::string(t.info->resource), t.name);
  }
  Response out = WireResponse(200, *t.info, updated->body);
  out.warnings = std::move(warnings);
  return out;
}

Response ApiServer::Patch(const Request& r, const Target& t) {
  const auto dry_run = DryRunOf(QueryOr(r, "dryRun"));
  if (!dry_run.ok()) return InvalidOptions(r, dry_run.status().message());
  const std::string ct = r.headers.count("content-type") ? r.headers.at("content-type") : "";
  auto type = PatchTypeOf(ct);
  if (!type.ok()) return Error(415, type.status().message());
  auto patch = ParseBody(r);
  if (!patch.ok()) return Error(400, patch.status().message());
  if (*type == PatchType::kApply && QueryOr(r, "fieldManager").empty()) {
    return Error(422, "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                 std::string(t.info->resource), t.name);
  }
  const auto manager = ManagerOf(QueryOr(r, "fieldManager"), UserAgentOf(r));
  if (!manager.ok()) return Error(422, manager.status().message(), std::string(t.info->resource), t.name);
  for (RaceRetry retry(clock_); retry.Again();) {
    auto current = store_.Get(t.info->StoreKey(), t.ns, t.name);
    if (!current.ok()) {
      if (*type == PatchType::kApply && t.sub.empty()) {
        // Server-side apply of an absent object creates it.
        Request create = r;
        create.body = patch->dump();
        create.headers["content-type"] = "application/json";
        Target ct_target = t;
        ct_target.name.clear();
        return Create(create, ct_target, /*applied=*/true);
      }
      return Error(404, std::string(t.info->resource) + " \"" + t.name + "\" not found",
                   std::string(t.info->resource), t.name);
    }
    if (Converted(*t.info)) current->body = CoreEventToEventsV1(current->body);
    auto next = ApplyPatch(current->body, *patch, *type);
    if (!next.ok()) return Error(422, next.status().message(), std::string(t.info->resource), t.name);
    Json object = std::move(*next);
    int64_t expected = current->revision;
    // A resourceVersion in the patch is a precondition, as upstream.
    if (patch->is_object() && patch->contains("metadata") && (*patch)["metadata"].is_object() &&
        (*patch)["metadata"].contains("resourceVersion") && (*patch)["metadata"]["resourceVersion"].is_string()) {
      expected = ParseRevision((*patch)["metadata"]["resourceVersion"].get<std::string>());
      if (expected != current->revision) {
        return Conflict409(t, kModified);
      }
    }
    if (!object.is_object()) return Error(422, "the patched object is not an object");
    if (t.sub == "status") {
      Json keep = current->body;
      keep["status"] = object.contains("status") ? object["status"] : Json::object();
      object = std::move(keep);
    } else if (t.sub == "ephemeralcontainers") {
      object = WithEphemeralContainers(current->body, object);
    } else if (t.info->HasSubresource("status") && current->body.contains("status") &&
               !(t.info->StoreKey() == "nodes" || t.info->StoreKey() == "namespaces")) {
      object["status"] = current->body["status"];
    }
    if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = Json::object();
    KeepServerFields(object, current->body);
    object["metadata"]["resourceVersion"] = std::to_string(current->revision);
    if (object.contains("spec") && current->body.contains("spec") && object["spec"] != current->body["spec"]) {
      object["metadata"]["generation"] = current->body["metadata"].value("generation", int64_t{1}) + 1;
    }
    std::vector<std::string> warnings;
    if (auto rejected = CheckFields(r, *t.info, object, warnings)) return WithWarnings(std::move(*rejected), warnings);
    if (auto forbidden = CheckEscalation(r, *t.info, object, t.ns, &current->body)) return *forbidden;
    if (Status v = Validate(*t.info, object, &current->body, t.ns, t.name); !v.ok()) {
      return WithWarnings(Rejected(v, *t.info, t.name), warnings);
    }
    if (*type == PatchType::kApply) {
      // Server-side apply: the fields the configuration holds become the manager's, and a
      // field another manager holds with another value is a conflict unless forced.
      std::vector<ApplyConflict> conflicts;
      if (Status a = RecordApply(&current->body, *patch, object, *manager, ApiVersionOf(*t.info),
                                 QueryBool(QueryOr(r, "force")), Now(), &conflicts);
          !a.ok()) {
        return JsonResponse(409, ConflictStatus(conflicts, t.info->kind, t.info->group, t.name));
      }
    } else {
      RecordUpdate(&current->body, object, *manager, ApiVersionOf(*t.info), t.sub, Now());
    }
    if (*dry_run) return WithWarnings(JsonResponse(200, object), warnings);
    if (Converted(*t.info)) object = EventsV1ToCoreEvent(object);
    auto updated = WriteOrDelete(*t.info, t.ns, t.name, object, expected);
    if (updated.ok()) {
      Response out = WireResponse(200, *t.info, updated->body);
      out.warnings = std::move(warnings);
      return out;
    }
    if (updated.status().code() != StatusCode::kConflict) return Error(updated.status());
    // Someone wrote in between: patch the newer object.
  }
  return Conflict409(t, "the object keeps changing; try again");
}

bool ApiServer::DeletesOnWrite(const ResourceInfo& info, const Json& object) {
  // Upstream's ShouldDeleteDuringUpdate: the write that removes the last finalizer of an object
  // being deleted deletes it, unless it is a pod its node has not finished (grace left), or a
  // namespace whose own spec.finalizers remain.
  if (!object.contains("metadata") || !object["metadata"].is_object()) return false;
  const Json& md = object["metadata"];
  if (!md.contains("deletionTimestamp") || !FinalizersOf(object).empty()) return false;
  if (info.StoreKey() == "pods" && md.value("deletionGracePeriodSeconds", int64_t{0}) > 0) return false;
  if (info.StoreKey() == "namespaces" && !NamespaceSpecFinalized(object)) return false;
  return true;
}

StatusOr<store::Object> ApiServer::WriteOrDelete(const ResourceInfo& info, const std::string& ns,
                                                 const std::string& name, Json object, int64_t expected_revision) {
  if (DeletesOnWrite(info, object)) return store_.Delete(info.StoreKey(), ns, name, expected_revision);
  return store_.Update(info.StoreKey(), ns, name, std::move(object), expected_revision);
}

StatusOr<store::Object> ApiServer::DeleteObject(const ResourceInfo& info, const std::string& ns,
                                                const std::string& name, std::optional<int64_t> grace,
                                                int64_t expected_revision, const std::string& expected_uid,
                                                bool dry_run, const std::string& propagation) {
  const std::string resource = info.StoreKey();
  for (RaceRetry retry(clock_); retry.Again();) {
    ARBITER_ASSIGN_OR_RETURN(current, store_.Get(resource, ns, name));
    if (expected_revision > 0 && current.revision != expected_revision) {
      return Conflict("the object has been modified");
    }
    if (!expected_uid.empty()) {
      const std::string uid = current.body["metadata"].value("uid", "");
      if (uid != expected_uid) {
        return Conflict("Precondition failed: UID in precondition: " + expected_uid + ", UID in object meta: " + uid);
      }
    }
    if (dry_run) return current;
    const Json& body = current.body;
    Json next = body;
    Json& md = next["metadata"];
    const bool deleting = md.contains("deletionTimestamp");
    // The propagation policy's finalizer, as kube-apiserver adds it: the garbage collector orphans
    // the dependents ("orphan") or deletes them first ("foregroundDeletion"), then removes it.
    std::vector<std::string> finalizers = FinalizersOf(body);
    auto without = [&finalizers](const std::string& f) { std::erase(finalizers, f); };
    auto with = [&finalizers](const std::string& f) {
      if (std::find(finalizers.begin(), finalizers.end(), f) == finalizers.end()) finalizers.push_back(f);
    };
    if (propagation == "Orphan") {
      without("foregroundDeletion");
      with("orphan");
    } else if (propagation == "Foreground") {
      without("orphan");
      with("foregroundDeletion");
    }
    if (finalizers.empty()) {
      md.erase("finalizers");
    } else {
      md["finalizers"] = finalizers;
    }
    const bool finalizers_changed = FinalizersOf(next) != FinalizersOf(body);
    auto write = [&](const Json& object) -> StatusOr<store::Object> {
      return WriteOrDelete(info, ns, name, object, current.revision);
    };
    if (resource == "namespaces") {
      // NamespaceLifecycle: a namespace terminates (phase Terminating); the namespace controller
      // deletes its content, then finalizes it, which deletes it.
      if (deleting && !finalizers_changed) return current;
      if (!deleting) md["deletionTimestamp"] = Now();
      next["status"]["phase"] = "Terminating";
      auto r = write(next);
      if (r.ok() || r.status().code() != StatusCode::kConflict || expected_revision > 0) return r;
      continue;
    }
    const bool bound = body.contains("spec") && body["spec"].is_object() && body["spec"].contains("nodeName") &&
                       body["spec"]["nodeName"].is_string() && !body["spec"]["nodeName"].get<std::string>().empty();
    const bool terminal = body.contains("status") && body["status"].is_object() &&
                          (body["status"].value("phase", "") == "Succeeded" || body["status"].value("phase", "") == "Failed");
    int64_t g = grace.value_or(body.contains("spec") && body["spec"].is_object()
                                   ? body["spec"].value("terminationGracePeriodSeconds", int64_t{30})
                                   : int64_t{30});
    if (resource == "pods" && bound && !terminal && g > 0) {
      // A running pod terminates first: the node finishes the deletion after the grace period.
      // A grace period past the year 9999 ends then (RFC 3339's last second).
      const Timestamp deadline = AddSecondsCapped(clock_.Now() / kSecond * kSecond, g);
      bool move = !deleting;
      if (deleting) {
        // Already terminating: a shorter grace period brings the deadline forward, never back.
        auto existing = ParseRfc3339(md["deletionTimestamp"].is_string() ? md["deletionTimestamp"].get<std::string>() : "");
        move = !existing.ok() || *existing > deadline;
        if (!move && !finalizers_changed) return current;
      }
      if (move) {
        md["deletionTimestamp"] = FormatRfc3339(deadline);
        md["deletionGracePeriodSeconds"] = g;
      }
      auto updated = write(next);
      if (updated.ok() || updated.status().code() != StatusCode::kConflict) return updated;
      continue;
    }
    if (!finalizers.empty()) {
      // Marked, not deleted: whoever owns each finalizer removes it, and the last removal
      // deletes the object.
      if (deleting && !finalizers_changed) return current;
      if (!deleting) md["deletionTimestamp"] = Now();
      md["deletionGracePeriodSeconds"] = 0;
      auto updated = write(next);
      if (updated.ok() || updated.status().code() != StatusCode::kConflict || expected_revision > 0) return updated;
      continue;
    }
    auto deleted = store_.Delete(resource, ns, name, current.revision);
    if (deleted.ok() || deleted.status().code() != StatusCode::kConflict || expected_revision > 0) return deleted;
  }
  return Conflict("the object keeps changing");
}

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
    Json next = current->body;
    const Json& spec = body->contains("spec") && (*body)["spec"].is_object() ? (*body)["spec"] : Json::object();
    next["spec"]["finalizers"] = spec.contains("finalizers") ? spec["finalizers"] : Json::array();
    if (next["spec"]["finalizers"].empty()) next["spec"].erase("finalizers");
    auto written = WriteOrDelete(*t.info, t.ns, t.name, next, current->revision);
    if (written.ok()) return JsonResponse(200, written->body);
    if (written.status().code() != StatusCode::kConflict) return Error(written.status());
  }
  return Conflict409(t, "the object keeps changing; try again");
}

Response ApiServer::Delete(const Request& r, const Target& t) {
  std::optional<int64_t> grace;
  int64_t expected = 0;
  std::string expected_uid;
  bool dry_run = false;
  // The query's policy, which a DeleteOptions body overrides.
  std::string propagation = QueryOr(r, "propagationPolicy");
  if (auto g = QueryOr(r, "gracePeriodSeconds"); !g.empty()) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(g.data(), g.data() + g.size(), v);
    if (ec != std::errc() || end != g.data() + g.size()) {
      return Error(400, "gracePeriodSeconds \"" + g + "\" is not an integer");
    }
    grace = v;
  }
  if (auto d = DryRunOf(QueryOr(r, "dryRun")); !d.ok()) {
    return InvalidOptions(r, d.status().message());
  } else {
    dry_run = *d;
  }
  if (!r.body.empty()) {
    auto opts = ParseBody(r);
    if (!opts.ok()) return Error(400, opts.status().message());
    if (!opts->is_object()) return Error(400, "the DeleteOptions body must be an object");
    if (opts->contains("gracePeriodSeconds") && !(*opts)["gracePeriodSeconds"].is_null()) {
      if (!(*opts)["gracePeriodSeconds"].is_number_integer()) return Error(400, "gracePeriodSeconds must be an integer");
      grace = (*opts)["gracePeriodSeconds"].get<int64_t>();
    }
    if (opts->contains("dryRun") && (*opts)["dryRun"].is_array()) {
      for (const Json& d : (*opts)["dryRun"]) {
        auto one = DryRunOf(d.is_string() ? d.get<std::string>() : d.dump());
        if (!one.ok()) return InvalidOptions(r, one.status().message());
        dry_run = dry_run || *one;
      }
    }
    if (opts->contains("propagationPolicy") && !(*opts)["propagationPolicy"].is_null()) {
      const Json& p = (*opts)["propagationPolicy"];
      propagation = p.is_string() ? p.get<std::string>() : "";
      if (propagation != "Orphan" && propagation != "Background" && propagation != "Foreground") {
        return JsonResponse(422, InvalidStatusBody("DeleteOptions is invalid: propagationPolicy: Unsupported value: " + p.dump() +
                                                       ": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
                                                   "DeleteOptions", "", t.name,
                                                   {{"FieldValueNotSupported", "propagationPolicy",
                                                     "Unsupported value: " + p.dump()}}));
      }
    } else if (opts->contains("orphanDependents") && (*opts)["orphanDependents"].is_boolean()) {
      propagation = (*opts)["orphanDependents"].get<bool>() ? "Orphan" : "Background";
    }
    if (opts->contains("preconditions") && (*opts)["preconditions"].is_object()) {
      const Json& pre = (*opts)["preconditions"];
      if (pre.contains("resourceVersion") && !pre["resourceVersion"].is_null()) {
        const Json& rv = pre["resourceVersion"];
        expected = rv.is_string() ? ParseRevision(rv.get<std::string>()) : -1;
        if (expected < 0) return Error(400, "preconditions.resourceVersion must be a revision string");
      }
      if (pre.contains("uid") && !pre["uid"].is_null()) {
        if (!pre["uid"].is_string()) return Error(400, "preconditions.uid must be a string");
        expected_uid = pre["uid"].get<std::string>();
      }
    }
  }
  if (grace && *grace < 0) {
    return JsonResponse(422, InvalidStatusBody("DeleteOptions is invalid: gracePeriodSeconds: Invalid value: " +
                                                   std::to_string(*grace) + ": must be greater than or equal to 0",
                                               "DeleteOptions", "", t.name,
                                               {{"FieldValueInvalid", "gracePeriodSeconds",
                                                 "Invalid value: " + std::to_string(*grace) + ": must be greater than or equal to 0"}}));
  }
  auto deleted = DeleteObject(*t.info, t.ns, t.name, grace, expected, expected_uid, dry_run, propagation);
  if (!deleted.ok()) {
    if (deleted.status().code() == StatusCode::kNotFound) {
      return Error(404, std::string(t.info->resource) + " \"" + t.name + "\" not found",
                   std::string(t.info->resource), t.name);
    }
    if (deleted.status().code() == StatusCode::kConflict) {
      return Conflict409(t, deleted.status().message().starts_with("Precondition failed")
                                ? deleted.status().message()
                                : std::string("the object has been modified"));
    }
    return Error(deleted.status());
  }
  // An object that is gone is answered with a Status of Success naming it (the generic store's
  // delete; Pods and Services return the object, as their stores set ReturnDeletedObject). One
  // still there (graceful termination, finalizers) or a dry run is answered with the object.
  if (!dry_run && t.info->StoreKey() != "services" && t.info->StoreKey() != "pods" &&
      store_.Get(t.info->StoreKey(), t.ns, t.name).status().code() == StatusCode::kNotFound) {
    Json details = {{"name", t.name}, {"kind", std::string(t.info->resource)}};
    if (!t.info->group.empty()) details["group"] = std::string(t.info->group);
    if (const Json uid = deleted->body.value("/metadata/uid"_json_pointer, Json()); uid.is_string()) details["uid"] = uid;
    return JsonResponse(200, {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", Json::object()},
                              {"status", "Success"}, {"details", std::move(details)}});
  }
  return WireResponse(200, *t.info, deleted->body);
}

Response ApiServer::Bind(const Request& r, const Target& t) {
  auto body = ParseBody(r);
  if (!body.ok()) return Error(400, body.status().message());
  std::string node;
  if (body->is_object() && body->contains("target") && (*body)["target"].is_object()) {
    const Json& target = (*body)["target"];
    if (target.contains("name") && !target["name"].is_string()) {
      return Error(422, "Binding \"" + t.name + "\" is invalid: target.name: must be a string");
    }
    node = target.value("name", "");
  }
  if (node.empty()) return Error(422, "Binding \"" + t.name + "\" is invalid: target.name: Required value");
  for (RaceRetry retry(clock_); retry.Again();) {
    auto pod = store_.Get("pods", t.ns, t.name);
    if (!pod.ok()) return Error(404, "pods \"" + t.name + "\" not found", "pods", t.name);
    Json next = pod->body;
    const std::string current = next["spec"].value("nodeName", "");
    if (!current.empty()) {
      return Error(409, "Operation cannot be fulfilled on pods/binding \"" + t.name + "\": pod " + t.name +
                            " is already assigned to node \"" + current + "\"", "pods", t.name);
    }
    if (next["metadata"].contains("deletionTimestamp")) {
      return Error(409, "Operation cannot be fulfilled on pods/binding \"" + t.name + "\": pod is being deleted",
                   "pods", t.name);
    }
    if (const Json& gates = next["spec"].value("schedulingGates", Json::array()); gates.is_array() && !gates.empty()) {
      // setPodNodeAndMetadata's check: a gated pod is not the scheduler's yet.
      return Error(409, "Operation cannot be fulfilled on pods/binding \"" + t.name + "\": pod " + t.name +
                            " has non-empty .spec.schedulingGates", "pods", t.name);
    }
    if (body->contains("metadata") && (*body)["metadata"].is_object() && (*body)["metadata"].contains("uid") &&
        (*body)["metadata"]["uid"] != next["metadata"].value("uid", "")) {
      return Error(409, "Operation cannot be fulfilled on pods/binding \"" + t.name +
                            "\": the UID in the binding does not match the pod's", "pods", t.name);
    }
    next["spec"]["nodeName"] = node;
    Json& conds = next["status"]["conditions"];
    if (!conds.is_array()) conds = Json::array();
    Json cond = {{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", Now()}};
    bool replaced = false;
    for (Json& c : conds) {
      if (c.value("type", "") == "PodScheduled") {
        c = cond;
        replaced = true;
      }
    }
    if (!replaced) conds.push_back(cond);
    auto updated = store_.Update("pods", t.ns, t.name, next, pod->revision);
    if (updated.ok()) {
      return JsonResponse(201, {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", Json::object()},
                                {"status", "Success"}, {"code", 201}});
    }
    if (updated.status().code() != StatusCode::kConflict) return Error(updated.status());
  }
  return Error(409, "Operation cannot be fulfilled on pods/binding \"" + t.name + "\": the pod keeps changing",
               "pods", t.name);
}

Response ApiServer::Evict(const Request& r, const Target& t) {
  auto body = ParseBody(r);
  if (!body.ok()) return Error(400, body.status().message());
  // The body is a policy/v1 Eviction of this very pod (upstream: "name in URL does not match
  // name in Eviction object").
  if (!body->is_object()) return Error(400, "the eviction body must be an Eviction object");
  if (body->value("kind", "Eviction") != "Eviction") {
    return Error(400, "the eviction body is a " + body->value("kind", std::string()) + ", not an Eviction");
  }
  if (const std::string named = ObjectName(*body); !named.empty() && named != t.name) {
    return Error(400, "name in URL does not match name in Eviction object");
  }
  if (body->contains("deleteOptions") && !(*body)["deleteOptions"].is_object() && !(*body)["deleteOptions"].is_null()) {
    return Error(400, "deleteOptions must be an object");
  }
  auto pod = store_.Get("pods", t.ns, t.name);
  if (!pod.ok()) return Error(404, "pods \"" + t.name + "\" not found", "pods", t.name);
  // The PodDisruptionBudget selecting the pod must allow one more disruption (upstream's
  // eviction REST: at most one budget; its status as the disruption controller keeps it).
  auto pdbs = store_.List("poddisruptionbudgets", t.ns);
  if (!pdbs.ok()) return Error(pdbs.status());
  const Json pod_labels = pod->body["metadata"].value("labels", Json::object());
  std::vector<const store::Object*> covering;
  for (const auto& pdb : pdbs->items) {
    const Json sel = pdb.body.value("spec", Json::object()).value("selector", Json::object());
    if (!sel.empty() && SelectorMatches(sel, pod_labels)) covering.push_back(&pdb);
  }
  if (covering.size() > 1) {
    return Error(500, "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                 "pods", t.name);
  }
  bool pod_ready = false;
  for (const Json& c : pod->body.value("status", Json::object()).value("conditions", Json::array())) {
    pod_ready = pod_ready || (c.value("type", "") == "Ready" && c.value("status", "") == "True");
  }
  const bool terminal = pod->body.value("status", Json::object()).value("phase", "") == "Succeeded" ||
                        pod->body.value("status", Json::object()).value("phase", "") == "Failed";
  if (!covering.empty() && !terminal && !pod->body["metadata"].contains("deletionTimestamp")) {
    const store::Object& pdb = *covering.front();
    const Json& status = pdb.body.value("status", Json::object());
    manifest::LoadResult decoded = manifest::DecodeJson("poddisruptionbudget", pdb.body);
    if (!decoded.ok() || decoded.objects.pdbs.empty()) return Error(500, "the pod's disruption budget cannot be read");
    const model::PodDisruptionBudget& budget = decoded.objects.pdbs.front().object;
    auto refused = [&](int64_t desired, int64_t current) {
      Json b = StatusBody(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.",
                          "pods", t.name);
      b["details"]["causes"] = Json::array({{{"reason", "DisruptionBudget"},
                                             {"message", "The disruption budget " + pdb.name + " needs " + std::to_string(desired) +
                                                             " healthy pods and has " + std::to_string(current) + " currently"}}});
      return JsonResponse(429, b);
    };
    if (status.contains("disruptionsAllowed")) {
      const int64_t allowed = status.value("disruptionsAllowed", int64_t{0});
      const int64_t desired = status.value("desiredHealthy", int64_t{0});
      const int64_t current = status.value("currentHealthy", int64_t{0});
      // IfHealthyBudget: an unready pod may go while the budget is met, without using it up.
      if (pod_ready || current < desired) {
        if (allowed <= 0) return refused(desired, current);
        Json next = pdb.body;
        next["status"]["disruptionsAllowed"] = allowed - 1;
        next["status"]["disruptedPods"][t.name] = Now();
        auto charged = store_.Update("poddisruptionbudgets", t.ns, pdb.name, next, pdb.revision);
        if (!charged.ok()) {
          return charged.status().code() == StatusCode::kConflict
                     ? Error(429, "Cannot evict pod: the disruption budget changed; try again", "pods", t.name)
                     : Error(charged.status());
        }
      }
    } else {
      // No controller has computed the budget: its pods as the scheduler's fallback counts them
      // (running and not terminating are healthy), with the shared model::DesiredHealthy.
      auto pods = store_.List("pods", t.ns);
      if (!pods.ok()) return Error(pods.status());
      const Json sel = pdb.body["spec"].value("selector", Json::object());
      int64_t expected = 0, healthy = 0;
      for (const auto& p : pods->items) {
        if (!SelectorMatches(sel, p.body["metadata"].value("labels", Json::object()))) continue;
        ++expected;
        if (p.body.value("status", Json::object()).value("phase", "") == "Running" &&
            !p.body["metadata"].contains("deletionTimestamp")) {
          ++healthy;
        }
      }
      const int64_t desired = model::DesiredHealthy(budget, expected);
      const bool running = pod->body.value("status", Json::object()).value("phase", "") == "Running";
      if (running && healthy - desired <= 0) return refused(desired, healthy);
    }
  }
  std::optional<int64_t> grace;
  if (body->is_object() && body->contains("deleteOptions") && (*body)["deleteOptions"].is_object() &&
      (*body)["deleteOptions"].contains("gracePeriodSeconds")) {
    const Json& g = (*body)["deleteOptions"]["gracePeriodSeconds"];
    if (!g.is_number_integer()) return Error(400, "deleteOptions.gracePeriodSeconds must be an integer");
    grace = g.get<int64_t>();
  }
  auto deleted = DeleteObject(*t.info, t.ns, t.name, grace, 0);
  if (!deleted.ok()) return Error(deleted.status(), "pods", t.name);
  return JsonResponse(201, {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", Json::object()},
                            {"status", "Success"}, {"code", 201}});
}

}  // namespace arbiter::api
