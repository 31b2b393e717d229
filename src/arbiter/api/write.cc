// Creates, updates and patches (the status and ephemeralcontainers subresources included).
#include "arbiter/api/server.h"

#include "arbiter/api/event_versions.h"

#include "arbiter/api/field_validation.h"
#include "arbiter/schema/schema.h"
#include "arbiter/api/patch.h"
#include "arbiter/api/managed_fields.h"
#include "arbiter/api/server_internal.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/manifest/names.h"

namespace arbiter::api {

using schema::ApiSchema;
using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares

namespace {

constexpr const char* kModified =
    "the object has been modified; please apply your changes to the latest version and try again";

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

}  // namespace

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
    if (ns->body->contains("metadata") && (*ns->body.tree())["metadata"].contains("deletionTimestamp")) {
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
  if (Converted(*t.info)) current->body = CoreEventToEventsV1(*current->body.tree());
  int64_t expected = 0;
  if (object.contains("metadata") && object["metadata"].is_object() && object["metadata"].contains("resourceVersion")) {
    const Json& rv = object["metadata"]["resourceVersion"];
    expected = rv.is_string() ? ParseRevision(rv.get<std::string>()) : -1;
    if (expected < 0) return Error(400, "metadata.resourceVersion must be a revision string");
  }
  if (t.sub == "status") {
    // The status subresource changes only the status.
    Json next = current->body.Copy();
    next["status"] = object.contains("status") ? object["status"] : Json::object();
    object = std::move(next);
  } else if (t.sub == "ephemeralcontainers") {
    object = WithEphemeralContainers(*current->body.tree(), object);
  } else if (t.info->HasSubresource("status") && current->body->contains("status")) {
    object["status"] = (*current->body.tree())["status"];  // the main resource does not change the status
  }
  if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = Json::object();
  KeepServerFields(object, *current->body.tree());
  if (object.contains("spec") && current->body->contains("spec") && object["spec"] != (*current->body.tree())["spec"]) {
    object["metadata"]["generation"] = (*current->body.tree())["metadata"].value("generation", int64_t{1}) + 1;
  }
  std::vector<std::string> warnings;
  if (auto rejected = CheckFields(r, *t.info, object, warnings)) return WithWarnings(std::move(*rejected), warnings);
  if (auto forbidden = CheckEscalation(r, *t.info, object, t.ns, &*current->body.tree())) return *forbidden;
  if (Status v = Validate(*t.info, object, &*current->body.tree(), t.ns, t.name); !v.ok()) {
    return WithWarnings(Rejected(v, *t.info, t.name), warnings);
  }
  {
    auto manager = ManagerOf(QueryOr(r, "fieldManager"), UserAgentOf(r));
    if (!manager.ok()) return Error(422, manager.status().message(), std::string(t.info->resource), t.name);
    RecordUpdate(&*current->body.tree(), object, *manager, ApiVersionOf(*t.info), t.sub, Now());
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
    if (Converted(*t.info)) current->body = CoreEventToEventsV1(*current->body.tree());
    auto next = ApplyPatch(*current->body.tree(), *patch, *type);
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
      Json keep = current->body.Copy();
      keep["status"] = object.contains("status") ? object["status"] : Json::object();
      object = std::move(keep);
    } else if (t.sub == "ephemeralcontainers") {
      object = WithEphemeralContainers(*current->body.tree(), object);
    } else if (t.info->HasSubresource("status") && current->body->contains("status") &&
               !(t.info->StoreKey() == "nodes" || t.info->StoreKey() == "namespaces")) {
      object["status"] = (*current->body.tree())["status"];
    }
    if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = Json::object();
    KeepServerFields(object, *current->body.tree());
    object["metadata"]["resourceVersion"] = std::to_string(current->revision);
    if (object.contains("spec") && current->body->contains("spec") && object["spec"] != (*current->body.tree())["spec"]) {
      object["metadata"]["generation"] = (*current->body.tree())["metadata"].value("generation", int64_t{1}) + 1;
    }
    std::vector<std::string> warnings;
    if (auto rejected = CheckFields(r, *t.info, object, warnings)) return WithWarnings(std::move(*rejected), warnings);
    if (auto forbidden = CheckEscalation(r, *t.info, object, t.ns, &*current->body.tree())) return *forbidden;
    if (Status v = Validate(*t.info, object, &*current->body.tree(), t.ns, t.name); !v.ok()) {
      return WithWarnings(Rejected(v, *t.info, t.name), warnings);
    }
    if (*type == PatchType::kApply) {
      // Server-side apply: the fields the configuration holds become the manager's, and a
      // field another manager holds with another value is a conflict unless forced.
      std::vector<ApplyConflict> conflicts;
      if (Status a = RecordApply(&*current->body.tree(), *patch, object, *manager, ApiVersionOf(*t.info),
                                 QueryBool(QueryOr(r, "force")), Now(), &conflicts);
          !a.ok()) {
        return JsonResponse(409, ConflictStatus(conflicts, t.info->kind, t.info->group, t.name));
      }
    } else {
      RecordUpdate(&*current->body.tree(), object, *manager, ApiVersionOf(*t.info), t.sub, Now());
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

}  // namespace arbiter::api
