// The node lifecycle controller.
#include "arbiter/controllers/node_lifecycle.h"

#include "arbiter/controllers/object_json.h"

namespace arbiter::controllers {

namespace {

constexpr const char* kUnreachable = "node.kubernetes.io/unreachable";
constexpr const char* kNotReady = "node.kubernetes.io/not-ready";

}  // namespace

Status NodeLifecycleController::Sync(Context& ctx, const Changes& changed) {
  const store::Informer& nodes = ctx.informer("nodes");
  const store::Informer& leases = ctx.informer("leases");
  if (auto c = changed.find("nodes"); c != changed.end()) {
    for (const Key& key : c->second) {
      const store::Object* object = nodes.Find(key);
      if (object == nullptr) {
        health_.erase(key.second);
        continue;
      }
      const store::Body::Tree node_tree = object->body.tree();
      const Json* status = Find(*node_tree, {"status"});
      const Json* ready = status != nullptr ? GetCondition(*status, "Ready") : nullptr;
      Health h;
      h.ready = ready != nullptr ? ready->value("status", "") : "";
      if (const Json* t = Find(*node_tree, {"spec", "taints"}); t != nullptr && t->is_array()) {
        for (const Json& x : *t) {
          const std::string k = x.is_object() ? x.value("key", "") : "";
          if (k == kUnreachable || k == kNotReady) h.owned_taints.emplace_back(k, x.value("effect", "") == "NoExecute");
        }
      }
      health_[key.second] = std::move(h);
    }
  }
  if (auto c = changed.find("leases"); c != changed.end()) {
    for (const Key& key : c->second) {
      if (key.first != "kube-node-lease") continue;
      const store::Object* lease = leases.Find(key);
      if (lease == nullptr) {
        renewed_.erase(key.second);
      } else {
        renewed_[key.second] = StringAt(*lease->body.tree(), {"spec", "renewTime"});
      }
    }
  }
  const Timestamp now = ctx.now();
  if (now < next_) return Status::Ok();
  next_ = now + kMonitorPeriod;
  const api::ResourceInfo& node_info = Resource("", "v1", "nodes");
  const std::string now_text = FormatRfc3339(now / kSecond * kSecond);
  Status first = Status::Ok();
  std::map<std::string, std::pair<std::string, Timestamp>> seen;
  for (const auto& [name, health] : health_) {
    auto renewed = renewed_.find(name);
    const std::string renew = renewed != renewed_.end() ? renewed->second : "";
    // The last renewal as observed here: a node gets the grace period from when it was first seen.
    auto before = seen_.find(name);
    const Timestamp at = before != seen_.end() && before->second.first == renew ? before->second.second : now;
    seen[name] = {renew, at};
    const bool unreachable = now - at > kGracePeriod;
    const std::string& ready_status = health.ready;
    // Whether the taints below would change, from what is kept of them: a node that needs
    // nothing is left alone without reading its body.
    const std::string wanted = unreachable ? kUnreachable : ready_status == "False" ? kNotReady : "";
    bool taints_change = false, wanted_ns = false, wanted_ne = false;
    for (const auto& [k, no_execute] : health.owned_taints) {
      if (k != wanted) {
        taints_change = true;
      } else {
        (no_execute ? wanted_ne : wanted_ns) = true;
      }
    }
    if (!wanted.empty() && (!wanted_ns || !wanted_ne)) taints_change = true;
    const bool mark_unknown = unreachable && ready_status != "Unknown" && !ready_status.empty();
    if (!taints_change && !mark_unknown) continue;
    const store::Object* object = nodes.Find({"", name});
    if (object == nullptr) continue;
    const store::Body::Tree node_tree = object->body.tree();
    const Json& node = *node_tree;

    if (mark_unknown) {
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
    // The taints the node's health calls for (`wanted`, added where missing), other taints kept
    // as they are.
    if (!taints_change) continue;
    Json taints = Json::array();
    if (const Json* t = Find(node, {"spec", "taints"}); t != nullptr && t->is_array()) {
      for (const Json& x : *t) {
        const std::string k = x.is_object() ? x.value("key", "") : "";
        if ((k == kUnreachable || k == kNotReady) && k != wanted) continue;
        taints.push_back(x);
      }
    }
    if (!wanted.empty() && !wanted_ns) taints.push_back({{"key", wanted}, {"effect", "NoSchedule"}, {"timeAdded", now_text}});
    if (!wanted.empty() && !wanted_ne) taints.push_back({{"key", wanted}, {"effect", "NoExecute"}, {"timeAdded", now_text}});
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
