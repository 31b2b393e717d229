// Reading and writing the fields of stored objects (JSON) that several controllers share:
// metadata, owner references, label selectors, pod readiness and availability, conditions,
// and upstream's int-or-percent scaling.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/base/json.h"

#include "arbiter/base/status.h"
#include "arbiter/base/time.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/model/labels.h"

namespace arbiter::controllers {

using Json = nlohmann::json;

// The value at a path of objects, or null; never copies.
const Json* Find(const Json& o, std::initializer_list<std::string_view> path);
std::string StringAt(const Json& o, std::initializer_list<std::string_view> path);
// An integer at a path, or `fallback` when absent or not an integer.
int64_t IntAt(const Json& o, std::initializer_list<std::string_view> path, int64_t fallback);
bool BoolAt(const Json& o, std::initializer_list<std::string_view> path, bool fallback);
// A time at a path (RFC 3339), or nullopt.
std::optional<Timestamp> TimeAt(const Json& o, std::initializer_list<std::string_view> path);

// The object's status, or an empty object: a reference that outlives the call.
const Json& StatusOf(const Json& o);

std::string Uid(const Json& o);
std::string NameOf(const Json& o);
std::string NamespaceOf(const Json& o);
bool BeingDeleted(const Json& o);
model::LabelMap LabelsOf(const Json& o);  // metadata.labels
using manifest::LabelMapOf;  // a metadata.labels object as a LabelMap

// A metav1.LabelSelector (null: nullopt, which matches nothing). Errors name `path`.
StatusOr<std::optional<model::LabelSelector>> DecodeSelector(const Json* selector, const std::string& path);

// The owner reference with controller: true, or null.
const Json* ControllerRef(const Json& o);
// A controller reference to `owner` (its apiVersion and kind given), with blockOwnerDeletion.
Json NewControllerRef(const Json& owner, std::string_view api_version, std::string_view kind);

// Pods.
bool PodTerminal(const Json& pod);                 // Succeeded or Failed
bool PodActive(const Json& pod);                   // not terminal, not being deleted
bool PodReady(const Json& pod);                    // condition Ready True
// Ready for at least minReadySeconds at `now` (upstream's IsPodAvailable).
bool PodAvailable(const Json& pod, int64_t min_ready_seconds, Timestamp now);
// When an unready-for-long-enough pod becomes available, if it is ready: the time to look again.
std::optional<Timestamp> PodAvailableAt(const Json& pod, int64_t min_ready_seconds);

// Sets a condition by type in `status.conditions` of a ReplicaSet or a Job: the condition
// replaces the one of its type, keeping its lastTransitionTime while the status stays the same.
// (A pod's conditions are set by rules::UpdatePodCondition, a metav1.Condition list's by
// rules::SetStatusCondition.)
void SetCondition(Json& status, Json cond);
const Json* GetCondition(const Json& status, std::string_view type);

// upstream's GetScaledValueFromIntOrPercent: an integer as is, a percentage of `total` rounded
// up or down. Errors name the value.
StatusOr<int64_t> ScaledValue(const Json* int_or_percent, int64_t total, bool round_up, int64_t fallback);

// A 32-bit FNV-1a hash in the alphabet of pod-template-hash labels ("bcdfghjklmnpqrstvwxz2456789").
std::string SafeHash(std::string_view text, uint32_t collision_count);

}  // namespace arbiter::controllers
