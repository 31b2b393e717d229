// Pod garbage collection.
#include "arbiter/controllers/podgc.h"

#include <algorithm>

#include "arbiter/controllers/object_json.h"
#include "arbiter/rules/pod_rules.h"

namespace arbiter::controllers {

void PodGarbageCollector::Observe(const Key& key, const store::Object* object) {
  unscheduled_terminating_.erase(key);
  if (auto t = terminated_at_.find(key); t != terminated_at_.end()) {
    terminated_.erase({t->second, key});
    terminated_at_.erase(t);
  }
  if (object == nullptr) {
    by_node_.Set(key, "");
    return;
  }
  const store::Body::Tree pod_tree = object->body.tree();
  const Json& pod = *pod_tree;
  const std::string node = StringAt(pod, {"spec", "nodeName"});
  by_node_.Set(key, node);
  if (node.empty() && BeingDeleted(pod)) unscheduled_terminating_.insert(key);
  if (PodTerminal(pod)) {
    const Timestamp created = TimeAt(pod, {"metadata", "creationTimestamp"}).value_or(0);
    terminated_.insert({created, key});
    terminated_at_.emplace(key, created);
  }
}

Status PodGarbageCollector::Sync(Context& ctx, const Changes& changed) {
  const store::Informer& pods = ctx.informer("pods");
  if (auto c = changed.find("pods"); c != changed.end()) {
    for (const Key& key : c->second) Observe(key, pods.Find(key));
  }
  const Timestamp now = ctx.now();
  if (now < next_) return Status::Ok();
  next_ = now + kCheckPeriod;
  const store::Informer& nodes = ctx.informer("nodes");
  const api::ResourceInfo& pod_info = Resource("", "v1", "pods");
  ApiClient& api = ctx.api();
  Status first = Status::Ok();
  auto keep = [&first](const Status& s) {
    if (!s.ok() && s.code() != StatusCode::kNotFound && s.code() != StatusCode::kConflict && first.ok()) first = s;
  };
  auto force_delete = [&](const store::Object& p) {
    auto r = api.Delete(ObjectPath(pod_info, p.ns, p.name),
                        {{"gracePeriodSeconds", 0}, {"preconditions", {{"uid", Uid(*p.body.tree())}}}});
    keep(r.status());
  };
  // gcUnscheduledTerminating and gcOrphaned, in the pods' key order: the pods no node holds
  // that are being deleted, and the pods bound to a node that is not there.
  std::vector<Key> due(unscheduled_terminating_.begin(), unscheduled_terminating_.end());
  std::map<std::string, Timestamp> missing;
  for (const auto& [node, bound] : by_node_.groups()) {
    if (nodes.Find({"", node}) != nullptr) continue;
    // The node must stay missing through the quarantine, and the API must agree.
    auto since = missing_since_.find(node);
    missing[node] = since != missing_since_.end() ? since->second : now;
    due.insert(due.end(), bound.begin(), bound.end());
  }
  std::sort(due.begin(), due.end());
  for (const Key& key : due) {
    const store::Object* object = pods.Find(key);
    if (object == nullptr) continue;
    const store::Body::Tree pod_tree = object->body.tree();
    const Json& pod = *pod_tree;
    const std::string node = StringAt(pod, {"spec", "nodeName"});
    if (node.empty()) {
      if (BeingDeleted(pod)) force_delete(*object);
      continue;
    }
    if (now - missing.at(node) < kQuarantine) continue;
    if (api.Get(ObjectPath(Resource("", "v1", "nodes"), "", node)).ok()) continue;
    if (!PodTerminal(pod)) {
      Json status = StatusOf(pod);
      status["phase"] = "Failed";
      rules::UpdatePodCondition(status,
                                {{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", "DeletionByPodGC"},
                                 {"message", "PodGC: node no longer exists"}},
                                FormatRfc3339(now / kSecond * kSecond));
      Json body = pod;
      body["status"] = status;
      keep(api.Update(ObjectPath(pod_info, object->ns, object->name, "status"), body).status());
    }
    force_delete(*object);
  }
  missing_since_ = std::move(missing);
  // gcTerminated: the oldest beyond the threshold (by creation time, then key).
  if (threshold_ > 0 && static_cast<int64_t>(terminated_.size()) > threshold_) {
    const size_t excess = terminated_.size() - static_cast<size_t>(threshold_);
    std::vector<Key> oldest;
    for (auto it = terminated_.begin(); oldest.size() < excess; ++it) oldest.push_back(it->second);
    for (const Key& key : oldest) {
      if (const store::Object* object = pods.Find(key); object != nullptr) force_delete(*object);
    }
  }
  return first;
}

}  // namespace arbiter::controllers
