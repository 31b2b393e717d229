// The controller manager.
#include "arbiter/controllers/controller_manager.h"

#include "arbiter/controllers/cronjob.h"
#include "arbiter/controllers/deployment.h"
#include "arbiter/controllers/disruption.h"
#include "arbiter/controllers/garbage_collector.h"
#include "arbiter/controllers/job.h"
#include "arbiter/controllers/namespace.h"
#include "arbiter/controllers/node_lifecycle.h"
#include "arbiter/controllers/podgc.h"
#include "arbiter/controllers/clusterrole_aggregation.h"
#include "arbiter/controllers/replicaset.h"
#include "arbiter/controllers/resourcequota.h"
#include "arbiter/controllers/statefulset.h"
#include "arbiter/controllers/taint_eviction.h"

namespace arbiter::controllers {

void Context::Event(const Json& object, std::string_view kind, std::string_view api_version, std::string_view type,
                    std::string reason, std::string message, std::string component) {
  if (events_ == nullptr) return;
  static const Json kNone = Json::object();
  const Json& md = object.contains("metadata") ? object["metadata"] : kNone;
  controlplane::PodEvent e;
  e.ns = md.value("namespace", "");
  e.pod = md.value("name", "");
  e.uid = md.value("uid", "");
  e.kind = std::string(kind);
  e.api_version = std::string(api_version);
  e.type = std::string(type);
  e.reason = std::move(reason);
  e.message = std::move(message);
  e.component = std::move(component);
  events_->Record(e);
}

std::set<std::string> ControllerManager::Watched() const {
  std::set<std::string> out;
  for (const auto& e : controllers_) {
    for (const auto& r : e.controller->Watches()) out.insert(r);
  }
  return out;
}

void ControllerManager::Attach(const std::map<std::string, store::Informer*>& informers,
                               controlplane::EventRecorder& events) {
  informers_ = informers;
  events_ = &events;
  for (auto& e : controllers_) {
    for (const auto& r : e.controller->Watches()) e.consumers[r] = informers_.at(r)->AddConsumer();
  }
}

Status ControllerManager::RunOnce() {
  ++passes_;
  Context ctx(clock_, api_, informers_, events_, log_);
  Status first = Status::Ok();
  for (auto& e : controllers_) {
    Changes changes;
    for (const auto& [resource, consumer] : e.consumers) {
      std::set<Key> keys = informers_.at(resource)->TakeChanged(consumer);
      if (e.first) {
        for (const auto& [key, object] : informers_.at(resource)->objects()) keys.insert(key);
      }
      changes[resource] = std::move(keys);
    }
    e.first = false;
    Status s = e.controller->Sync(ctx, changes);
    if (!s.ok() && first.ok()) first = Status(s.code(), std::string(e.controller->Name()) + ": " + s.message());
  }
  return first;
}

void ControllerManager::Reset() {
  for (auto& e : controllers_) {
    e.controller->Reset();
    e.first = true;
  }
}

void AddDefaultControllers(ControllerManager& manager) {
  manager.Add(std::make_unique<NamespaceController>());
  manager.Add(std::make_unique<GarbageCollector>());
  manager.Add(std::make_unique<DeploymentController>());
  manager.Add(std::make_unique<ReplicaSetController>());
  manager.Add(std::make_unique<StatefulSetController>());
  manager.Add(std::make_unique<JobController>());
  manager.Add(std::make_unique<CronJobController>());
  manager.Add(std::make_unique<DisruptionController>());
  manager.Add(std::make_unique<ResourceQuotaController>());
  manager.Add(std::make_unique<NodeLifecycleController>());
  manager.Add(std::make_unique<TaintEvictionController>());
  manager.Add(std::make_unique<PodGarbageCollector>());
  manager.Add(std::make_unique<ClusterRoleAggregationController>());
}

}  // namespace arbiter::controllers
