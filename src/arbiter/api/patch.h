// PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902), and the strategic merge
// patch that kubectl apply, edit, label and annotate send.
//
// The strategic merge follows Kubernetes' rules for the fields Arbiter holds: lists of objects
// with a merge key (containers and volumes by name, conditions by type, ...) merge element by
// element; `$patch: delete` removes an element; `$deleteFromPrimitiveList/<field>` removes
// values; `$setElementOrder` and `$retainKeys` directives are accepted and dropped; other lists
// are replaced; null removes a key.
#pragma once

#include <string>
#include <string_view>

#include "arbiter/base/json.h"

#include "arbiter/base/status.h"

namespace arbiter::api {

enum class PatchType { kMerge, kJson, kStrategic, kApply };

// The key a list field's elements merge by (patchStrategy merge: "name" for containers, "type"
// for conditions, ...), or null for a list replaced whole. Server-side apply names list elements
// by it too (managed_fields.h).
const std::string* MergeKeyOf(std::string_view field);

// From the request's Content-Type; InvalidArgument (415 at the edge) for anything else.
StatusOr<PatchType> PatchTypeOf(const std::string& content_type);

// Applies `patch` to `target`; InvalidArgument with the reason when the patch cannot apply.
StatusOr<nlohmann::json> ApplyPatch(const nlohmann::json& target, const nlohmann::json& patch, PatchType type);

// The strategic merge patch that takes `before` to `after` (both objects), as client-go's
// CreateTwoWayMergePatch computes it for the fields Arbiter holds: changed and new keys with
// their new values, removed keys as null; lists with a merge key (conditions by type, ...) patch
// only the elements that changed, each by its key (a removed element as `$patch: delete`), with
// `$setElementOrder/<list>` giving the new order; other lists are replaced whole. An empty
// object when nothing changed. ApplyPatch(before, patch, kStrategic) yields `after`.
nlohmann::json TwoWayStrategicMergePatch(const nlohmann::json& before, const nlohmann::json& after);

}  // namespace arbiter::api
