// The node lifecycle controller.
#include "arbiter/controllers/node_lifecycle.h"

#include "arbiter/controllers/object_json.h"

namespace arbiter::controllers {

namespace {

constexpr const char* kUnreachable = "node.kubernetes.io/unreachable";
constexpr const char* kNotReady = "node.kubernetes.io/not-ready";

}  // namespace

Status NodeLifecycleController::Sync(Context& ctx, const Changes& changed) {
  (void)changed;
  const Timestamp now = ctx.now();
  if (now < next_) return Status::Ok();
  next_ = now + kMonitorPeriod;
  const store::Informer& leases = ctx.informer("leases");
  const api::ResourceInfo& node_info = Resource("", "v1", "nodes");
  const std::string now_text = FormatRfc3339(now / kSecond * kSecond);
  Status first = Status::Ok();
  std::map<std::string, std::pair<std::string, Timestamp>> seen;
  for (const auto& [key, object] : ctx.informer("nodes").objects()) {
    const store::Body::Tree node_tree = object->body.tree();
    const Json& node = *node_tree;
    const std::string& name = key.second;
    const store::Object* lease = leases.Find({"kube-node-lease", name});
    const std::string renew = lease != nullptr ? StringAt(*lease->body.tree(), {"spec", "renewTime"}) : "";
    // The last renewal as observed here: a node gets the grace period from when it was first seen.
    auto before = seen_.find(name);
    const Timestamp at = before != seen_.end() && before->second.first == renew ? before->second.second : now;
    seen[name] = {renew, at};
    const bool unreachable = now - at > kGracePeriod;
    const Json* status = Find(node, {"status"});
    const Json* ready = status != nullptr ? GetCondition(*status, "Ready") : nullptr;
    const std::string ready_status = ready != nullptr ? ready->value("status", "") : "";

    if (unreachable && ready_status != "Unknown" && !ready_status.empty()) {
      Json body = node;
      for (Json& c : body["status"]["conditions"]) {
        const std::string type = c.value("type", "");
        if (type != "Ready" && type != "MemoryPressure" && type != "DiskPressure" && type != "PIDPressure") continue;
        c["status"] = "Unknown";
        c["reason"] = "NodeStatusUnknown";
        c["message"] = "Kubelet stopped posting node status.";
        c["lastTransitionTime"] = now_text;
      }
      auto r = ctx.api().Update(ObjectPath(node_info, "", name, "status"), body);
      if (!r.ok() && r.status().code() != StatusCode::kNotFound && r.status().code() != StatusCode::kConflict && first.ok()) {
        first = r.status();
      }
    }
    // The taints the node's health calls for, other taints kept as they are.
    std::string want;
    if (unreachable) {
      want = kUnreachable;
    } else if (ready_status == "False") {
      want = kNotReady;
    }
    Json taints = Json::array();
    bool have_want_ns = false, have_want_ne = false, changed_taints = false;
    if (const Json* t = Find(node, {"spec", "taints"}); t != nullptr && t->is_array()) {
      for (const Json& x : *t) {
        const std::string k = x.value("key", "");
        if (k == kUnreachable || k == kNotReady) {
          if (k != want) {
            changed_taints = true;
            continue;
          }
          (x.value("effect", "") == "NoExecute" ? have_want_ne : have_want_ns) = true;
        }
        taints.push_back(x);
      }
    }
    if (!want.empty() && !have_want_ns) {
      taints.push_back({{"key", want}, {"effect", "NoSchedule"}, {"timeAdded", now_text}});
      changed_taints = true;
    }
    if (!want.empty() && !have_want_ne) {
      taints.push_back({{"key", want}, {"effect", "NoExecute"}, {"timeAdded", now_text}});
      changed_taints = true;
    }
    if (!changed_taints) continue;
    auto r = ctx.api().MergePatch(ObjectPath(node_info, "", name),
                                  {{"spec", {{"taints", taints.empty() ? Json(nullptr) : taints}}}});
    if (!r.ok() && r.status().code() != StatusCode::kNotFound && r.status().code() != StatusCode::kConflict && first.ok()) {
      first = r.status();
    }
  }
  seen_ = std::move(seen);
  return first;
}

}  // namespace arbiter::controllers
