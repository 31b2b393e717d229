// Pod garbage collection.
#include "arbiter/controllers/podgc.h"

#include <algorithm>

#include "arbiter/controllers/object_json.h"

namespace arbiter::controllers {

Status PodGarbageCollector::Sync(Context& ctx, const Changes& changed) {
  (void)changed;
  const Timestamp now = ctx.now();
  if (now < next_) return Status::Ok();
  next_ = now + kCheckPeriod;
  const store::Informer& pods = ctx.informer("pods");
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
  std::vector<const store::Object*> terminated;
  std::map<std::string, Timestamp> missing;
  for (const auto& [key, object] : pods.objects()) {
    const store::Body::Tree pod_tree = object->body.tree();
    const Json& pod = *pod_tree;
    const std::string node = StringAt(pod, {"spec", "nodeName"});
    if (PodTerminal(pod)) terminated.push_back(object.get());
    if (node.empty()) {
      if (BeingDeleted(pod)) force_delete(*object);  // gcUnscheduledTerminating
      continue;
    }
    if (nodes.Find({"", node}) != nullptr) continue;
    // gcOrphaned: the node must stay missing through the quarantine, and the API must agree.
    auto since = missing_since_.find(node);
    const Timestamp from = since != missing_since_.end() ? since->second : now;
    missing[node] = from;
    if (now - from < kQuarantine) continue;
    if (api.Get(ObjectPath(Resource("", "v1", "nodes"), "", node)).ok()) continue;
    if (!PodTerminal(pod)) {
      Json status = StatusOf(pod);
      status["phase"] = "Failed";
      SetCondition(status, {{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", "DeletionByPodGC"},
                            {"message", "PodGC: node no longer exists"},
                            {"lastTransitionTime", FormatRfc3339(now / kSecond * kSecond)}});
      Json body = pod;
      body["status"] = status;
      keep(api.Update(ObjectPath(pod_info, object->ns, object->name, "status"), body).status());
    }
    force_delete(*object);
  }
  missing_since_ = std::move(missing);
  // gcTerminated: the oldest beyond the threshold.
  if (threshold_ > 0 && static_cast<int64_t>(terminated.size()) > threshold_) {
    std::sort(terminated.begin(), terminated.end(), [](const store::Object* a, const store::Object* b) {
      const Timestamp ca = TimeAt(*a->body.tree(), {"metadata", "creationTimestamp"}).value_or(0);
      const Timestamp cb = TimeAt(*b->body.tree(), {"metadata", "creationTimestamp"}).value_or(0);
      if (ca != cb) return ca < cb;
      return std::tie(a->ns, a->name) < std::tie(b->ns, b->name);
    });
    const size_t excess = terminated.size() - static_cast<size_t>(threshold_);
    for (size_t i = 0; i < excess; ++i) force_delete(*terminated[i]);
  }
  return first;
}

}  // namespace arbiter::controllers
