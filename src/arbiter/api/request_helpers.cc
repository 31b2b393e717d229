// What the handlers of ApiServer share: request bodies parsed within bounds, write options, and the
// answers several handlers give.
#include "arbiter/api/server_internal.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <sstream>

#include "arbiter/api/field_validation.h"
#include "arbiter/api/protobuf_codec.h"
#include "arbiter/manifest/loader.h"

namespace arbiter::api {
namespace internal {

using Json = nlohmann::json;

namespace {

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

}  // namespace

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

// kube-apiserver's 409 for a write that lost a race: "Operation cannot be fulfilled on R \"N\": WHY".
Response Conflict409(const ApiServer::Target& t, const std::string& why) {
  const std::string resource(t.info->resource);
  return Error(409, "Operation cannot be fulfilled on " + resource + " \"" + t.name + "\": " + why, resource, t.name);
}

Response WireResponse(int code, const ResourceInfo& info, const Json& stored) {
  return Converted(info) ? JsonResponse(code, CoreEventToEventsV1(stored)) : JsonResponse(code, stored);
}

Response WireResponse(int code, const ResourceInfo& info, const store::Body& stored) {
  if (Converted(info)) return WireResponse(code, info, *stored.tree());
  Response r;
  r.code = code;
  r.body = *stored.shared_text();
  return r;
}

}  // namespace internal
}  // namespace arbiter::api
