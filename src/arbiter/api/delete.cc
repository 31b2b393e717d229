// Deletes: graceful deletion, finalizers and the garbage collector's propagation policies.
#include "arbiter/api/server.h"

#include <algorithm>
#include <charconv>

#include "arbiter/api/field_validation.h"
#include "arbiter/schema/schema.h"
#include "arbiter/api/server_internal.h"

namespace arbiter::api {

using schema::ApiSchema;
using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares

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
      const std::string uid = (*current.body.tree())["metadata"].value("uid", "");
      if (uid != expected_uid) {
        return Conflict("Precondition failed: UID in precondition: " + expected_uid + ", UID in object meta: " + uid);
      }
    }
    if (dry_run) return current;
    const store::Body::Tree body_tree = current.body.tree();
    const Json& body = *body_tree;
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
    if (const Json uid = deleted->body->value("/metadata/uid"_json_pointer, Json()); uid.is_string()) details["uid"] = uid;
    return JsonResponse(200, {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", Json::object()},
                              {"status", "Success"}, {"details", std::move(details)}});
  }
  return WireResponse(200, *t.info, deleted->body);
}

}  // namespace arbiter::api
