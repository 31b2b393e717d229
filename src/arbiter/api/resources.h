// The resources `arbiter serve` exposes: which group/version each belongs to, its kind, scope,
// short names and subresources, and the discovery documents kubectl reads (/api, /apis and the
// per-group-version resource lists).
#pragma once

#include "arbiter/schema/schema.h"

#include <string>
#include <string_view>
#include <vector>

#include "arbiter/base/json.h"

namespace arbiter::api {

using Json = nlohmann::json;

struct ResourceInfo {
  std::string_view group;     // "" for the core group
  std::string_view version;
  std::string_view resource;  // plural, lower case; also the store's resource key
  std::string_view singular;
  std::string_view kind;
  bool namespaced = true;
  std::vector<std::string_view> short_names;
  std::vector<std::string_view> subresources;  // "status", "binding", "eviction"
  // Validated through the manifest decoder (the kinds the engine models) rather than accepted
  // as any object.
  bool decoded = false;
  // The store's resource key when the plural is not unique across groups (metrics.k8s.io's
  // "pods"); empty: the plural.
  std::string_view store_key;
  // A review (SelfSubjectAccessReview, SelfSubjectReview): created and answered, never stored.
  bool review = false;

  std::string StoreKey() const { return std::string(store_key.empty() ? resource : store_key); }
  // Served in this version from the storage of the same plural in another group (events.k8s.io/v1
  // Events are core v1's, converted by event_versions.h): a lister of every object skips it.
  bool AnotherVersion() const { return !store_key.empty() && store_key == resource; }
  std::string ApiVersion() const;  // "v1" or "group/version"
  bool HasSubresource(std::string_view s) const;
};

// Percent-decodes `in` ("%41b+c" -> "Ab c" when `plus_is_space`, as query strings are). With
// `keep_separators`, "%2F" and "%25" stay encoded: a request path is split into segments first
// (PathSegments), so that a name holding '/' or '%' (stored before names were validated) can
// still be read and deleted.
std::string PercentDecode(std::string_view in, bool plus_is_space, bool keep_separators = false);
// A request path's non-empty segments, each with its "%2F" and "%25" decoded: the one way the
// API and the authorizer read a path.
std::vector<std::string> PathSegments(std::string_view path);

// Every served resource, in a fixed order.
const std::vector<ResourceInfo>& Resources();
// The resource served under group/version with that plural name, or null.
const ResourceInfo* FindResource(std::string_view group, std::string_view version, std::string_view resource);
// The resource of a kind under an apiVersion, or null.
const ResourceInfo* FindKind(std::string_view api_version, std::string_view kind);

// Discovery documents.
Json CoreVersions();                                // GET /api
Json GroupList();                                   // GET /apis
Json ResourceList(std::string_view group, std::string_view version);  // null if not served
Json GroupDocument(std::string_view group);         // GET /apis/{group}; null if not served
// A kind's protobuf message name (schema.h).
using schema::ProtoMessageName;

}  // namespace arbiter::api
