// The two versions of an Event: core v1 (what is stored, and what `kubectl get events` reads) and
// events.k8s.io/v1 (what kube-scheduler and other components of today write). kube-apiserver
// stores one Event for both; so does Arbiter, in the core form. The conversion renames the fields
// that the newer API renamed (involvedObject → regarding, message → note, source, firstTimestamp,
// lastTimestamp and count → their deprecated* names, reportingComponent → reportingController)
// and keeps every other field as it is, so that each form round-trips through the other.
#pragma once

#include "arbiter/base/json.h"

namespace arbiter::api {

nlohmann::json CoreEventToEventsV1(const nlohmann::json& core);
nlohmann::json EventsV1ToCoreEvent(const nlohmann::json& v1);

}  // namespace arbiter::api
