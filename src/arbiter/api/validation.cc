// What a write is checked against before it is stored: RBAC escalation, field validation, the
// resource's rules and the admission plugins.
#include "arbiter/api/server.h"

#include <algorithm>

#include "arbiter/api/authz.h"
#include "arbiter/api/field_validation.h"
#include "arbiter/api/protobuf_codec.h"
#include "arbiter/schema/schema.h"
#include "arbiter/api/server_internal.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/manifest/names.h"

namespace arbiter::api {

using schema::ApiSchema;
namespace pb = google::protobuf;
using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares

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

}  // namespace arbiter::api
