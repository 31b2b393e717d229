// The Deployment controller.
#include "arbiter/controllers/deployment.h"

#include <algorithm>
#include <cmath>

#include "arbiter/controllers/object_json.h"
#include "arbiter/controllers/pod_control.h"

namespace arbiter::controllers {

namespace {

constexpr const char* kRevision = "deployment.kubernetes.io/revision";
constexpr const char* kRevisionHistory = "deployment.kubernetes.io/revision-history";
constexpr const char* kDesiredReplicas = "deployment.kubernetes.io/desired-replicas";
constexpr const char* kMaxReplicas = "deployment.kubernetes.io/max-replicas";
constexpr size_t kMaxRevisionHistoryChars = 2000;

int64_t SpecReplicas(const Json& o) { return IntAt(o, {"spec", "replicas"}, 1); }
int64_t StatusInt(const Json& o, const char* field) { return IntAt(o, {"status", field}, 0); }
std::string Annotation(const Json& o, const char* key) { return StringAt(o, {"metadata", "annotations", key}); }
std::optional<int64_t> IntAnnotation(const Json& o, const char* key) {
  const std::string v = Annotation(o, key);
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return x;
}
int64_t Revision(const Json& rs) { return IntAnnotation(rs, kRevision).value_or(0); }
Timestamp Created(const Json& o) { return TimeAt(o, {"metadata", "creationTimestamp"}).value_or(0); }

// ReplicaSetsByCreationTimestamp: older first, then by name.
bool OlderFirst(const Json* a, const Json* b) {
  const Timestamp ca = Created(*a), cb = Created(*b);
  if (ca != cb) return ca < cb;
  return NameOf(*a) < NameOf(*b);
}

Json NewCondition(std::string_view type, std::string_view status, std::string_view reason, std::string message,
                  Timestamp now) {
  const std::string t = FormatRfc3339(now / kSecond * kSecond);
  return Json{{"type", type},          {"status", status},         {"lastUpdateTime", t},
              {"lastTransitionTime", t}, {"reason", reason},         {"message", std::move(message)}};
}

// SetDeploymentCondition: the same status and reason leave the condition as it is; the same
// status keeps its lastTransitionTime; the condition moves to the end.
void SetDeploymentCondition(Json& status, Json cond) {
  Json kept = Json::array();
  const Json* current = GetCondition(status, cond.value("type", ""));
  if (current != nullptr) {
    if (current->value("status", "") == cond.value("status", "") && current->value("reason", "") == cond.value("reason", "")) {
      return;
    }
    if (current->value("status", "") == cond.value("status", "")) cond["lastTransitionTime"] = (*current)["lastTransitionTime"];
  }
  if (status.contains("conditions") && status["conditions"].is_array()) {
    for (const Json& c : status["conditions"]) {
      if (c.value("type", "") != cond.value("type", "")) kept.push_back(c);
    }
  }
  kept.push_back(std::move(cond));
  status["conditions"] = std::move(kept);
}

void RemoveCondition(Json& status, std::string_view type) {
  if (!status.contains("conditions") || !status["conditions"].is_array()) return;
  Json kept = Json::array();
  for (const Json& c : status["conditions"]) {
    if (c.value("type", "") != type) kept.push_back(c);
  }
  status["conditions"] = std::move(kept);
  if (status["conditions"].empty()) status.erase("conditions");
}

}  // namespace

struct DeploymentController::Run {
  Context& ctx;
  DeploymentController& self;
  Json d;
  std::string ns, name;
  std::vector<Json> owned;  // the claimed ReplicaSets, as last written
  Timestamp now;

  const api::ResourceInfo& rs_info = Resource("apps", "v1", "replicasets");
  const api::ResourceInfo& d_info = Resource("apps", "v1", "deployments");

  bool RollingUpdate() const { return StringAt(d, {"spec", "strategy", "type"}) != "Recreate"; }
  int64_t Replicas() const { return SpecReplicas(d); }
  bool HasProgressDeadline() const {
    const Json* p = Find(d, {"spec", "progressDeadlineSeconds"});
    return p == nullptr || (p->is_number_integer() && p->get<int64_t>() != INT32_MAX);
  }
  int64_t ProgressDeadlineSeconds() const { return IntAt(d, {"spec", "progressDeadlineSeconds"}, 600); }

  // ResolveFenceposts: maxSurge rounded up, maxUnavailable down; both 0 means 1 unavailable.
  std::pair<int64_t, int64_t> Fenceposts() const {
    const Json* ru = Find(d, {"spec", "strategy", "rollingUpdate"});
    static const Json kQuarter = "25%";
    const Json* surge = ru != nullptr && ru->contains("maxSurge") ? &(*ru)["maxSurge"] : &kQuarter;
    const Json* unavailable = ru != nullptr && ru->contains("maxUnavailable") ? &(*ru)["maxUnavailable"] : &kQuarter;
    const int64_t desired = Replicas();
    // An invalid value counts as 0 (validation refuses it upstream).
    auto scaled_surge = ScaledValue(surge, desired, true, 0);
    auto scaled_unavailable = ScaledValue(unavailable, desired, false, 0);
    int64_t s = scaled_surge.ok() ? *scaled_surge : 0;
    int64_t u = scaled_unavailable.ok() ? *scaled_unavailable : 0;
    if (s == 0 && u == 0) u = 1;
    return {s, u};
  }
  int64_t MaxSurge() const { return RollingUpdate() ? Fenceposts().first : 0; }
  int64_t MaxUnavailable() const {
    if (!RollingUpdate() || Replicas() == 0) return 0;
    return std::min(Fenceposts().second, Replicas());
  }

  // --- Writes ---

  Status UpdateRs(Json& rs, Json next) {
    next["metadata"]["resourceVersion"] = rs["metadata"]["resourceVersion"];
    auto r = ctx.api().Update(ObjectPath(rs_info, ns, NameOf(rs)), next);
    if (!r.ok()) return r.status();
    rs = std::move(*r);
    return Status::Ok();
  }

  // SetReplicasAnnotations; true if they changed.
  bool SetReplicasAnnotations(Json& rs, int64_t desired, int64_t max) const {
    Json& a = rs["metadata"]["annotations"];
    if (!a.is_object()) a = Json::object();
    bool changed = false;
    for (auto [key, value] : {std::pair{kDesiredReplicas, desired}, std::pair{kMaxReplicas, max}}) {
      const std::string v = std::to_string(value);
      if (a.value(key, "") != v) {
        a[key] = v;
        changed = true;
      }
    }
    return changed;
  }

  // scaleReplicaSetAndRecordEvent.
  Status ScaleRs(Json& rs, int64_t to) {
    const int64_t from = SpecReplicas(rs);
    Json next = rs;
    const bool annotations = SetReplicasAnnotations(next, Replicas(), Replicas() + MaxSurge());
    if (from == to && !annotations) return Status::Ok();
    next["spec"]["replicas"] = to;
    ARBITER_RETURN_IF_ERROR(UpdateRs(rs, std::move(next)));
    if (from != to) {
      ctx.Event(d, kDeploymentKind, kDeploymentApiVersion, "Normal", "ScalingReplicaSet",
                std::string("Scaled ") + (to > from ? "up" : "down") + " replica set " + NameOf(rs) + " from " +
                    std::to_string(from) + " to " + std::to_string(to),
                std::string(self.Name()));
    }
    return Status::Ok();
  }

  Status UpdateStatus(Json status) {
    if (Find(d, {"status"}) != nullptr && d["status"] == status) return Status::Ok();
    Json body = d;
    body["status"] = std::move(status);
    auto r = ctx.api().Update(ObjectPath(d_info, ns, name, "status"), body);
    if (!r.ok()) return r.status();
    d = std::move(*r);
    return Status::Ok();
  }

  // --- Reading the ReplicaSets ---

  Status Claim(const std::optional<model::LabelSelector>& selector) {
    return ClaimObjects(ctx.api(), rs_info, ctx.informer("replicasets"), ns, d, kDeploymentApiVersion, kDeploymentKind, selector,
                        [](const Json&) { return true; }, [this](const Json& rs) { owned.push_back(rs); });
  }

  // FindNewReplicaSet: the oldest whose template equals the Deployment's, ignoring the hash.
  Json* FindNew() {
    std::vector<Json*> sorted;
    for (Json& rs : owned) sorted.push_back(&rs);
    std::sort(sorted.begin(), sorted.end(), [](const Json* a, const Json* b) { return OlderFirst(a, b); });
    const Json want = TemplateWithoutHash(Find(d, {"spec", "template"}));
    for (Json* rs : sorted) {
      if (TemplateWithoutHash(Find(*rs, {"spec", "template"})) == want) return rs;
    }
    return nullptr;
  }

  std::vector<Json*> Olds(const Json* new_rs) {
    std::vector<Json*> out;
    for (Json& rs : owned) {
      if (&rs != new_rs) out.push_back(&rs);
    }
    return out;
  }

  // copyDeploymentAnnotationsToReplicaSet.
  bool CopyAnnotations(Json& rs) const {
    const Json* from = Find(d, {"metadata", "annotations"});
    if (from == nullptr || !from->is_object()) return false;
    Json& to = rs["metadata"]["annotations"];
    if (!to.is_object()) to = Json::object();
    bool changed = false;
    for (const auto& [k, v] : from->items()) {
      if (k == "kubectl.kubernetes.io/last-applied-configuration" || k == kRevision || k == kRevisionHistory ||
          k == kDesiredReplicas || k == kMaxReplicas || k == "deprecated.deployment.rollback.to") {
        continue;
      }
      if (to.contains(k) && to[k] == v) continue;
      to[k] = v;
      changed = true;
    }
    return changed;
  }

  // SetNewReplicaSetAnnotations.
  bool SetNewRsAnnotations(Json& rs, int64_t new_revision, bool exists) const {
    bool changed = CopyAnnotations(rs);
    Json& a = rs["metadata"]["annotations"];
    if (!a.is_object()) a = Json::object();
    const std::string old = a.value(kRevision, "");
    const std::optional<int64_t> old_int = IntAnnotation(rs, kRevision);
    if (!old.empty() && !old_int) return changed;
    if (old_int.value_or(0) < new_revision) {
      a[kRevision] = std::to_string(new_revision);
      changed = true;
      if (!old.empty()) {
        std::string history = a.value(kRevisionHistory, "");
        history = history.empty() ? old : history + "," + old;
        while (history.size() > kMaxRevisionHistoryChars && history.find(',') != std::string::npos) {
          history.erase(0, history.find(',') + 1);
        }
        a[kRevisionHistory] = history;
      }
    }
    if (!exists && SetReplicasAnnotations(rs, Replicas(), Replicas() + MaxSurge())) changed = true;
    return changed;
  }

  // NewRSNewReplicas.
  int64_t NewRsReplicas(const Json* new_rs) {
    if (!RollingUpdate()) return Replicas();
    int64_t current = 0;
    for (const Json& rs : owned) current += SpecReplicas(rs);
    const int64_t max_total = Replicas() + MaxSurge();
    if (current >= max_total) return new_rs != nullptr ? SpecReplicas(*new_rs) : 0;
    const int64_t have = new_rs != nullptr ? SpecReplicas(*new_rs) : 0;
    return have + std::min(max_total - current, Replicas() - have);
  }

  // getNewReplicaSet: finds (and keeps its annotations current) or, when `create`, makes the
  // new ReplicaSet. Returns it as an index into `owned`, or -1.
  StatusOr<int> NewRs(bool create) {
    int64_t max_old = 0;
    Json* existing = FindNew();
    for (Json* rs : Olds(existing)) max_old = std::max(max_old, Revision(*rs));
    const int64_t new_revision = max_old + 1;
    if (existing != nullptr) {
      Json next = *existing;
      bool changed = SetNewRsAnnotations(next, new_revision, true);
      const int64_t min_ready = IntAt(d, {"spec", "minReadySeconds"}, 0);
      if (IntAt(next, {"spec", "minReadySeconds"}, 0) != min_ready) {
        next["spec"]["minReadySeconds"] = min_ready;
        changed = true;
      }
      if (changed) ARBITER_RETURN_IF_ERROR(UpdateRs(*existing, std::move(next)));
      ARBITER_RETURN_IF_ERROR(SyncRevision(Annotation(*existing, kRevision), *existing, false));
      return static_cast<int>(existing - owned.data());
    }
    if (!create) return -1;
    // A new ReplicaSet: the template with its hash label, and the selector with it too.
    const Json* tmpl = Find(d, {"spec", "template"});
    Json rs = NewReplicaSetOf(d, 0);
    const std::string rs_name = NameOf(rs);
    SetNewRsAnnotations(rs, new_revision, false);
    const int64_t replicas = NewRsReplicas(nullptr);
    rs["spec"]["replicas"] = replicas;
    auto created = ctx.api().Create(CollectionPath(rs_info, ns), rs);
    if (!created.ok()) {
      if (created.status().code() != StatusCode::kAlreadyExists) {
        if (HasProgressDeadline()) {
          Json status = StatusOf(d);
          SetDeploymentCondition(status, NewCondition("ReplicaFailure", "True", "FailedCreate",
                                                      created.status().message(), now));
          (void)UpdateStatus(std::move(status));
        }
        return created.status();
      }
      // A ReplicaSet of that name: ours with the same template is the one; anything else is a
      // hash collision, resolved by counting it (the next hash differs).
      auto taken = ctx.api().Get(ObjectPath(rs_info, ns, rs_name));
      if (taken.ok()) {
        const Json* ref = ControllerRef(*taken);
        if (ref != nullptr && ref->value("uid", "") == Uid(d) &&
            TemplateWithoutHash(Find(*taken, {"spec", "template"})) == TemplateWithoutHash(tmpl)) {
          owned.push_back(std::move(*taken));
          return static_cast<int>(owned.size() - 1);
        }
      }
      Json status = StatusOf(d);
      status["collisionCount"] = IntAt(d, {"status", "collisionCount"}, 0) + 1;
      ARBITER_RETURN_IF_ERROR(UpdateStatus(std::move(status)));
      return Conflict("found a hash collision for the ReplicaSet of deployment " + name + ": will retry");
    }
    if (replicas > 0) {
      ctx.Event(d, kDeploymentKind, kDeploymentApiVersion, "Normal", "ScalingReplicaSet",
                "Scaled up replica set " + rs_name + " from 0 to " + std::to_string(replicas), std::string(self.Name()));
    }
    owned.push_back(std::move(*created));
    ARBITER_RETURN_IF_ERROR(SyncRevision(std::to_string(new_revision), owned.back(), true));
    return static_cast<int>(owned.size() - 1);
  }

  // The Deployment's revision annotation follows its new ReplicaSet's; a Deployment with a
  // progress deadline records that it found or created it.
  Status SyncRevision(const std::string& revision, const Json& rs, bool created) {
    if (!revision.empty() && Annotation(d, kRevision) != revision) {
      auto r = ctx.api().MergePatch(ObjectPath(d_info, ns, name),
                                    {{"metadata", {{"annotations", {{kRevision, revision}}},
                                                   {"resourceVersion", d["metadata"]["resourceVersion"]}}}});
      if (!r.ok()) return r.status();
      d = std::move(*r);
    }
    if (!HasProgressDeadline()) return Status::Ok();
    Json status = StatusOf(d);
    if (created) {
      SetDeploymentCondition(status, NewCondition("Progressing", "True", "NewReplicaSetCreated",
                                                  "Created new replica set \"" + NameOf(rs) + "\"", now));
    } else if (GetCondition(status, "Progressing") == nullptr) {
      SetDeploymentCondition(status, NewCondition("Progressing", "True", "FoundNewReplicaSet",
                                                  "Found new replica set \"" + NameOf(rs) + "\"", now));
    } else {
      return Status::Ok();
    }
    return UpdateStatus(std::move(status));
  }

  // --- Status ---

  Json CalculateStatus(const Json* new_rs) {
    int64_t available = 0, total = 0, actual = 0, ready = 0;
    for (const Json& rs : owned) {
      available += StatusInt(rs, "availableReplicas");
      total += SpecReplicas(rs);
      actual += StatusInt(rs, "replicas");
      ready += StatusInt(rs, "readyReplicas");
    }
    Json status = StatusOf(d);
    status["observedGeneration"] = IntAt(d, {"metadata", "generation"}, 0);
    status["replicas"] = actual;
    status["updatedReplicas"] = new_rs != nullptr ? StatusInt(*new_rs, "replicas") : 0;
    status["readyReplicas"] = ready;
    status["availableReplicas"] = available;
    status["unavailableReplicas"] = std::max<int64_t>(total - available, 0);
    for (const char* f : {"replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"}) {
      if (status[f] == 0) status.erase(f);
    }
    if (available >= Replicas() - MaxUnavailable()) {
      SetDeploymentCondition(status, NewCondition("Available", "True", "MinimumReplicasAvailable",
                                                  "Deployment has minimum availability.", now));
    } else {
      SetDeploymentCondition(status, NewCondition("Available", "False", "MinimumReplicasUnavailable",
                                                  "Deployment does not have minimum availability.", now));
    }
    return status;
  }

  static int64_t Get(const Json& status, const char* f) { return status.value(f, int64_t{0}); }

  bool Complete(const Json& status) const {
    return Get(status, "updatedReplicas") == Replicas() && Get(status, "replicas") == Replicas() &&
           Get(status, "availableReplicas") == Replicas() &&
           Get(status, "observedGeneration") >= IntAt(d, {"metadata", "generation"}, 0);
  }

  bool Progressing(const Json& next) const {
    const Json old = StatusOf(d);
    const int64_t old_old = Get(old, "replicas") - Get(old, "updatedReplicas");
    const int64_t new_old = Get(next, "replicas") - Get(next, "updatedReplicas");
    return Get(next, "updatedReplicas") > Get(old, "updatedReplicas") || new_old < old_old ||
           Get(next, "readyReplicas") > Get(old, "readyReplicas") ||
           Get(next, "availableReplicas") > Get(old, "availableReplicas");
  }

  bool TimedOut(const Json& status) const {
    const Json* c = GetCondition(status, "Progressing");
    if (c == nullptr) return false;
    const std::string reason = c->value("reason", "");
    if (reason == "ProgressDeadlineExceeded") return true;
    if (reason == "NewReplicaSetAvailable") return false;
    auto from = TimeAt(*c, {"lastUpdateTime"});
    return from && *from + ProgressDeadlineSeconds() * kSecond < now;
  }

  // syncRolloutStatus.
  Status SyncRolloutStatus(const Json* new_rs) {
    Json status = CalculateStatus(new_rs);
    if (!HasProgressDeadline()) RemoveCondition(status, "Progressing");
    const Json* current = GetCondition(StatusOf(d), "Progressing");
    const bool complete_before = Get(status, "replicas") == Get(status, "updatedReplicas") && current != nullptr &&
                                 current->value("reason", "") == "NewReplicaSetAvailable";
    const std::string rs_name = new_rs != nullptr ? NameOf(*new_rs) : "";
    if (HasProgressDeadline() && !complete_before) {
      if (Complete(status)) {
        SetDeploymentCondition(status, NewCondition("Progressing", "True", "NewReplicaSetAvailable",
                                                    new_rs != nullptr ? "ReplicaSet \"" + rs_name + "\" has successfully progressed."
                                                                      : "Deployment has successfully progressed.",
                                                    now));
      } else if (Progressing(status)) {
        Json cond = NewCondition("Progressing", "True", "ReplicaSetUpdated",
                                 new_rs != nullptr ? "ReplicaSet \"" + rs_name + "\" is progressing."
                                                   : "Deployment is progressing.",
                                 now);
        if (const Json* c = GetCondition(status, "Progressing"); c != nullptr) {
          if (c->value("status", "") == "True") cond["lastTransitionTime"] = (*c)["lastTransitionTime"];
          RemoveCondition(status, "Progressing");
        }
        SetDeploymentCondition(status, std::move(cond));
      } else if (TimedOut(status)) {
        SetDeploymentCondition(status, NewCondition("Progressing", "False", "ProgressDeadlineExceeded",
                                                    "ReplicaSet \"" + rs_name + "\" has timed out progressing.", now));
      }
    }
    // The first ReplicaSet failure becomes the Deployment's.
    const Json* failure = nullptr;
    for (const Json& rs : owned) {
      if (const Json* s = Find(rs, {"status"}); s != nullptr && (failure = GetCondition(*s, "ReplicaFailure"))) break;
    }
    if (failure != nullptr) {
      SetDeploymentCondition(status, NewCondition("ReplicaFailure", failure->value("status", "True"),
                                                  failure->value("reason", ""), failure->value("message", ""), now));
    } else {
      RemoveCondition(status, "ReplicaFailure");
    }
    // requeueStuckDeployment: a rollout in progress is looked at again at its deadline.
    if (const Json* c = GetCondition(status, "Progressing");
        c != nullptr && HasProgressDeadline() && !Complete(status) && c->value("reason", "") != "ProgressDeadlineExceeded") {
      if (auto at = TimeAt(*c, {"lastUpdateTime"})) {
        self.queue_.AddAfter({ns, name}, *at + ProgressDeadlineSeconds() * kSecond + kSecond);
      }
    }
    return UpdateStatus(std::move(status));
  }

  // checkPausedConditions.
  Status CheckPaused() {
    if (!HasProgressDeadline()) return Status::Ok();
    Json status = StatusOf(d);
    const Json* c = GetCondition(status, "Progressing");
    if (c != nullptr && c->value("reason", "") == "ProgressDeadlineExceeded") return Status::Ok();
    const bool paused_cond = c != nullptr && c->value("reason", "") == "DeploymentPaused";
    const bool paused = BoolAt(d, {"spec", "paused"}, false);
    if (paused && !paused_cond) {
      SetDeploymentCondition(status, NewCondition("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused", now));
    } else if (!paused && paused_cond) {
      SetDeploymentCondition(status, NewCondition("Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed", now));
    } else {
      return Status::Ok();
    }
    return UpdateStatus(std::move(status));
  }

  // --- Scaling (a change of replicas alone, or a paused Deployment) ---

  // isScalingEvent: an active ReplicaSet was sized for another replica count.
  bool IsScalingEvent() const {
    for (const Json& rs : owned) {
      if (SpecReplicas(rs) == 0) continue;
      if (auto desired = IntAnnotation(rs, kDesiredReplicas); desired && *desired != Replicas()) return true;
    }
    return false;
  }

  int64_t Proportion(const Json& rs, int64_t to_add, int64_t added) const {
    if (SpecReplicas(rs) == 0 || to_add == 0 || to_add == added) return 0;
    int64_t fraction;
    if (Replicas() == 0) {
      fraction = -SpecReplicas(rs);
    } else {
      const int64_t deployment_replicas = Replicas() + MaxSurge();
      int64_t annotated = IntAnnotation(rs, kMaxReplicas).value_or(StatusInt(d, "replicas"));
      if (annotated == 0) annotated = 1;
      const double size = static_cast<double>(SpecReplicas(rs) * deployment_replicas) / static_cast<double>(annotated);
      fraction = static_cast<int64_t>(std::lround(size)) - SpecReplicas(rs);
    }
    const int64_t allowed = to_add - added;
    return to_add > 0 ? std::min(fraction, allowed) : std::max(fraction, allowed);
  }

  Status Scale(Json* new_rs) {
    std::vector<Json*> active;
    for (Json& rs : owned) {
      if (SpecReplicas(rs) > 0) active.push_back(&rs);
    }
    // FindActiveOrLatest.
    Json* single = nullptr;
    if (active.size() == 1) {
      single = active[0];
    } else if (active.empty() && !owned.empty()) {
      if (new_rs != nullptr) {
        single = new_rs;
      } else {
        std::vector<Json*> olds = Olds(nullptr);
        single = *std::max_element(olds.begin(), olds.end(), [](const Json* a, const Json* b) { return OlderFirst(a, b); });
      }
    }
    if (single != nullptr) return SpecReplicas(*single) == Replicas() ? Status::Ok() : ScaleRs(*single, Replicas());
    // IsSaturated: the new ReplicaSet has all it needs; the old ones go.
    if (new_rs != nullptr && IntAnnotation(*new_rs, kDesiredReplicas) == Replicas() && SpecReplicas(*new_rs) == Replicas() &&
        StatusInt(*new_rs, "availableReplicas") == Replicas()) {
      for (Json* rs : active) {
        if (rs != new_rs) ARBITER_RETURN_IF_ERROR(ScaleRs(*rs, 0));
      }
      return Status::Ok();
    }
    if (!RollingUpdate()) return Status::Ok();
    int64_t current = 0;
    for (const Json* rs : active) current += SpecReplicas(*rs);
    const int64_t allowed = Replicas() > 0 ? Replicas() + MaxSurge() : 0;
    const int64_t to_add = allowed - current;
    if (to_add > 0) {  // ReplicaSetsBySizeNewer
      std::sort(active.begin(), active.end(), [](const Json* a, const Json* b) {
        if (SpecReplicas(*a) != SpecReplicas(*b)) return SpecReplicas(*a) > SpecReplicas(*b);
        return OlderFirst(b, a);
      });
    } else if (to_add < 0) {  // ReplicaSetsBySizeOlder
      std::sort(active.begin(), active.end(), [](const Json* a, const Json* b) {
        if (SpecReplicas(*a) != SpecReplicas(*b)) return SpecReplicas(*a) > SpecReplicas(*b);
        return OlderFirst(a, b);
      });
    }
    std::vector<int64_t> sizes;
    int64_t added = 0;
    for (const Json* rs : active) {
      const int64_t p = to_add != 0 ? Proportion(*rs, to_add, added) : 0;
      sizes.push_back(SpecReplicas(*rs) + p);
      added += p;
    }
    for (size_t i = 0; i < active.size(); ++i) {
      if (i == 0 && to_add != 0) sizes[0] = std::max<int64_t>(sizes[0] + to_add - added, 0);
      ARBITER_RETURN_IF_ERROR(ScaleRs(*active[i], sizes[i]));
    }
    return Status::Ok();
  }

  // cleanupDeployment: old ReplicaSets beyond revisionHistoryLimit, lowest revisions first, once
  // they are empty.
  Status Cleanup(const Json* new_rs) {
    const Json* limit = Find(d, {"spec", "revisionHistoryLimit"});
    const int64_t keep = limit != nullptr && limit->is_number_integer() ? limit->get<int64_t>() : 10;
    std::vector<Json*> cleanable;
    for (Json* rs : Olds(new_rs)) {
      if (!BeingDeleted(*rs)) cleanable.push_back(rs);
    }
    const int64_t diff = static_cast<int64_t>(cleanable.size()) - keep;
    if (diff <= 0) return Status::Ok();
    std::sort(cleanable.begin(), cleanable.end(), [](const Json* a, const Json* b) {
      if (Revision(*a) != Revision(*b)) return Revision(*a) < Revision(*b);
      return OlderFirst(a, b);
    });
    for (int64_t i = 0; i < diff; ++i) {
      const Json& rs = *cleanable[static_cast<size_t>(i)];
      if (StatusInt(rs, "replicas") != 0 || SpecReplicas(rs) != 0 ||
          IntAt(rs, {"metadata", "generation"}, 0) > StatusInt(rs, "observedGeneration")) {
        continue;
      }
      auto r = ctx.api().Delete(ObjectPath(rs_info, ns, NameOf(rs)));
      if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
    }
    return Status::Ok();
  }

  // --- Rollouts ---

  Status Rolling() {
    ARBITER_ASSIGN_OR_RETURN(at, NewRs(true));
    Json* new_rs = at >= 0 ? &owned[static_cast<size_t>(at)] : nullptr;
    // reconcileNewReplicaSet.
    if (new_rs != nullptr && SpecReplicas(*new_rs) != Replicas()) {
      const int64_t to = SpecReplicas(*new_rs) > Replicas() ? Replicas() : NewRsReplicas(new_rs);
      if (to != SpecReplicas(*new_rs)) {
        ARBITER_RETURN_IF_ERROR(ScaleRs(*new_rs, to));
        return SyncRolloutStatus(new_rs);
      }
    }
    // reconcileOldReplicaSets.
    std::vector<Json*> olds;
    for (Json* rs : Olds(new_rs)) {
      if (SpecReplicas(*rs) > 0) olds.push_back(rs);
    }
    if (!olds.empty()) {
      int64_t all = 0;
      for (const Json& rs : owned) all += SpecReplicas(rs);
      const int64_t min_available = Replicas() - MaxUnavailable();
      const int64_t new_unavailable = new_rs != nullptr ? SpecReplicas(*new_rs) - StatusInt(*new_rs, "availableReplicas") : 0;
      const int64_t max_scaled_down = all - min_available - new_unavailable;
      if (max_scaled_down > 0) {
        std::sort(olds.begin(), olds.end(), [](const Json* a, const Json* b) { return OlderFirst(a, b); });
        // cleanupUnhealthyReplicas.
        int64_t cleaned = 0;
        for (Json* rs : olds) {
          if (SpecReplicas(*rs) == 0) continue;
          if (cleaned >= max_scaled_down) break;
          const int64_t unhealthy = SpecReplicas(*rs) - StatusInt(*rs, "availableReplicas");
          if (unhealthy <= 0) continue;
          const int64_t n = std::min(max_scaled_down - cleaned, unhealthy);
          ARBITER_RETURN_IF_ERROR(ScaleRs(*rs, SpecReplicas(*rs) - n));
          cleaned += n;
        }
        // scaleDownOldReplicaSetsForRollingUpdate.
        int64_t available = 0;
        for (const Json& rs : owned) available += StatusInt(rs, "availableReplicas");
        int64_t scaled = 0;
        if (available > min_available) {
          const int64_t total = available - min_available;
          for (Json* rs : olds) {
            if (scaled >= total) break;
            if (SpecReplicas(*rs) == 0) continue;
            const int64_t n = std::min(SpecReplicas(*rs), total - scaled);
            ARBITER_RETURN_IF_ERROR(ScaleRs(*rs, SpecReplicas(*rs) - n));
            scaled += n;
          }
        }
        if (cleaned + scaled > 0) return SyncRolloutStatus(new_rs);
      }
    }
    if (Complete(StatusOf(d))) ARBITER_RETURN_IF_ERROR(Cleanup(new_rs));
    return SyncRolloutStatus(new_rs);
  }

  Status Recreate() {
    ARBITER_ASSIGN_OR_RETURN(at, NewRs(false));
    Json* new_rs = at >= 0 ? &owned[static_cast<size_t>(at)] : nullptr;
    bool scaled_down = false;
    for (Json* rs : Olds(new_rs)) {
      if (SpecReplicas(*rs) == 0) continue;
      ARBITER_RETURN_IF_ERROR(ScaleRs(*rs, 0));
      scaled_down = true;
    }
    if (scaled_down) return SyncRolloutStatus(new_rs);
    // oldPodsRunning: old ReplicaSets still report pods, or a pod of theirs has not ended.
    std::set<std::string> old_uids;
    for (Json* rs : Olds(new_rs)) {
      if (StatusInt(*rs, "replicas") > 0) return SyncRolloutStatus(new_rs);
      old_uids.insert(Uid(*rs));
    }
    const auto& pods = ctx.informer("pods").objects();
    for (auto it = pods.lower_bound({ns, ""}); it != pods.end() && it->first.first == ns; ++it) {
      const store::Body::Tree second_pinned = it->second->body.tree();
      const Json* ref = ControllerRef(*second_pinned);
      if (ref != nullptr && old_uids.contains(ref->value("uid", "")) && !PodTerminal(*it->second->body.tree())) {
        return SyncRolloutStatus(new_rs);
      }
    }
    if (new_rs == nullptr) {
      ARBITER_ASSIGN_OR_RETURN(created, NewRs(true));
      new_rs = created >= 0 ? &owned[static_cast<size_t>(created)] : nullptr;
    }
    if (new_rs != nullptr && SpecReplicas(*new_rs) != Replicas()) ARBITER_RETURN_IF_ERROR(ScaleRs(*new_rs, Replicas()));
    if (Complete(StatusOf(d))) ARBITER_RETURN_IF_ERROR(Cleanup(new_rs));
    return SyncRolloutStatus(new_rs);
  }

  Status Reconcile() {
    auto selector = DecodeSelector(Find(d, {"spec", "selector"}), "spec.selector");
    if (!selector.ok()) {
      ctx.Log("Invalid Deployment selector", "deployment=\"" + ns + "/" + name + "\" err=\"" + selector.status().message() + "\"");
      return Status::Ok();
    }
    if (*selector && (*selector)->empty()) {
      // A selector that selects everything would take every pod of the namespace.
      ctx.Event(d, kDeploymentKind, kDeploymentApiVersion, "Warning", "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.", std::string(self.Name()));
      Json status = StatusOf(d);
      status["observedGeneration"] = IntAt(d, {"metadata", "generation"}, 0);
      return UpdateStatus(std::move(status));
    }
    ARBITER_RETURN_IF_ERROR(Claim(*selector));
    if (BeingDeleted(d)) {
      ARBITER_ASSIGN_OR_RETURN(at, NewRs(false));
      Json status = CalculateStatus(at >= 0 ? &owned[static_cast<size_t>(at)] : nullptr);
      return UpdateStatus(std::move(status));
    }
    ARBITER_RETURN_IF_ERROR(CheckPaused());
    if (BoolAt(d, {"spec", "paused"}, false) || IsScalingEvent()) {
      ARBITER_ASSIGN_OR_RETURN(at, NewRs(false));
      Json* new_rs = at >= 0 ? &owned[static_cast<size_t>(at)] : nullptr;
      ARBITER_RETURN_IF_ERROR(Scale(new_rs));
      if (BoolAt(d, {"spec", "paused"}, false)) ARBITER_RETURN_IF_ERROR(Cleanup(new_rs));
      return UpdateStatus(CalculateStatus(new_rs));
    }
    return RollingUpdate() ? Rolling() : Recreate();
  }
};

Status DeploymentController::Sync(Context& ctx, const Changes& changed) {
  const Timestamp now = ctx.now();
  const store::Informer& deployments = ctx.informer("deployments");
  for (const Key& key : changed.at("deployments")) queue_.Add(key, now);
  // A ReplicaSet's change goes to its Deployment; an orphan's to every Deployment that selects it.
  auto owner_of = [&](const Key& key, const Json& o) {
    if (const Json* ref = ControllerRef(o); ref != nullptr) {
      if (ref->value("kind", "") == kDeploymentKind) queue_.Add({key.first, ref->value("name", "")}, now);
      return;
    }
    const model::LabelMap labels = LabelsOf(o);
    const auto& all = deployments.objects();
    for (auto it = all.lower_bound({key.first, ""}); it != all.end() && it->first.first == key.first; ++it) {
      auto sel = DecodeSelector(Find(*it->second->body.tree(), {"spec", "selector"}), "spec.selector");
      if (sel.ok() && *sel && !(*sel)->empty() && (*sel)->Matches(labels)) queue_.Add(it->first, now);
    }
  };
  for (const Key& key : changed.at("replicasets")) {
    if (const store::Object* o = ctx.informer("replicasets").Find(key)) {
      owner_of(key, *o->body.tree());
    } else {
      // A deleted ReplicaSet: its Deployment (by the name it was made with) looks again.
      const auto dash = key.second.rfind('-');
      if (dash != std::string::npos) queue_.Add({key.first, key.second.substr(0, dash)}, now);
    }
  }
  // A Recreate rollout waits for the old pods to end: their changes wake it.
  const store::Informer& sets = ctx.informer("replicasets");
  for (const Key& key : changed.at("pods")) {
    const store::Object* p = ctx.informer("pods").Find(key);
    if (p == nullptr) {
      // Gone: the Recreate Deployment it belonged to may start its new pods now.
      if (auto it = recreate_pods_.find(key); it != recreate_pods_.end()) {
        queue_.Add(it->second, now);
        recreate_pods_.erase(it);
      }
      continue;
    }
    const store::Body::Tree p_pinned = p->body.tree();
    const Json* ref = ControllerRef(*p_pinned);
    if (ref == nullptr || ref->value("kind", "") != "ReplicaSet") continue;
    const store::Object* rs = sets.Find({key.first, ref->value("name", "")});
    const store::Body::Tree rs_pinned = rs != nullptr ? rs->body.tree() : nullptr;
    const Json* owner = rs != nullptr ? ControllerRef(*rs_pinned) : nullptr;
    if (owner == nullptr || owner->value("kind", "") != kDeploymentKind) continue;
    const store::Object* d = deployments.Find({key.first, owner->value("name", "")});
    if (d != nullptr && StringAt(*d->body.tree(), {"spec", "strategy", "type"}) == "Recreate") {
      const Key deployment{key.first, owner->value("name", "")};
      queue_.Add(deployment, now);
      recreate_pods_[key] = deployment;
    }
  }
  return queue_.ProcessDue(
      now,
      [&](const Key& key) {
        const store::Object* o = deployments.Find(key);
        if (o == nullptr) return Status::Ok();
        Run run{ctx, *this, o->body.Copy(), key.first, key.second, {}, now};
        return run.Reconcile();
      },
      [](const Key& key) { return "deployment " + key.first + "/" + key.second; });
}

}  // namespace arbiter::controllers
