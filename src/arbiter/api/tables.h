// Server-side printing: the meta.k8s.io/v1 Table that `kubectl get` asks for, with the columns
// kube-apiserver prints for each resource (pods: NAME READY STATUS RESTARTS AGE, and with -o wide
// IP NODE NOMINATED NODE READINESS GATES; nodes, priority classes, PDBs, events; NAME AGE for the rest).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "arbiter/base/json.h"

#include "arbiter/base/time.h"

namespace arbiter::api {

// What each row carries (the includeObject option of TableOptions): nothing, the object's
// metadata as a PartialObjectMetadata (kube-apiserver's default), or the whole object.
enum class TableObject { kNone, kMetadata, kObject };

// The includeObject query value ("" is the default, Metadata); nullopt for any other value.
std::optional<TableObject> ParseIncludeObject(std::string_view value);

// A Table of `objects` of `resource` as of `now`.
nlohmann::json ToTable(const std::string& resource, const std::vector<const nlohmann::json*>& objects, Timestamp now,
                       TableObject include = TableObject::kMetadata, bool with_column_definitions = true);

// kubectl's age format: "45s", "3m12s", "12m", "3h4m", "20h", "2d3h", "45d", "2y10d", "9y".
std::string HumanDuration(Duration d);

}  // namespace arbiter::api
