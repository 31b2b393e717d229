#include "arbiter/controlplane/pressure_eviction.h"

#include "arbiter/admission/priority_admission.h"

#include <map>
#include <utility>
#include <vector>

#include "arbiter/controlplane/pod_json.h"
#include "arbiter/kubelet/node_pressure.h"
#include "arbiter/rules/pod_rules.h"

namespace arbiter::controlplane {

using Json = nlohmann::json;

PressureEviction::PressureEviction(WriteBatch& batch, EventRecorder& events, const Clock& clock,
                                   model::KubeletConfig config, Decode decode, Log log)
    : batch_(batch),
      events_(events),
      clock_(clock),
      config_(std::move(config)),
      decode_(std::move(decode)),
      log_(std::move(log)) {}

void PressureEviction::Run(const store::Informer& nodes, const store::Informer& pods,
                           const store::Informer& pod_metrics) {
  if (pod_metrics.objects().empty()) return;
  std::map<std::string, const model::PodMetrics*> usage;
  for (const auto& [key, m] : pod_metrics.objects()) {
    const manifest::LoadResult& r = decode_(*m);
    if (r.ok() && !r.objects.pod_metrics.empty()) usage[r.objects.pod_metrics[0].object.Key()] = &r.objects.pod_metrics[0].object;
  }
  // Running pods by node, decoded (priority as admitted).
  std::map<std::string, std::vector<std::pair<const store::Object*, model::Pod>>> by_node;
  for (const auto& [key, p_ptr] : pods.objects()) {
    const store::Object& p = *p_ptr;
    if (NodeOf(*p.body.tree()).empty() || Terminal(*p.body.tree()) || Terminating(*p.body.tree())) continue;
    const manifest::LoadResult& r = decode_(p);
    if (!r.ok() || r.objects.pods.empty()) continue;
    model::Pod pod = r.objects.pods[0].object;
    pod.priority = admission::StoredPriority(pod);
    by_node[pod.node_name].emplace_back(&p, std::move(pod));
  }
  const std::string now = FormatRfc3339(clock_.Now() / kSecond * kSecond);
  for (const auto& [key, n_ptr] : nodes.objects()) {
    auto on = by_node.find(n_ptr->name);
    if (on == by_node.end()) continue;
    const manifest::LoadResult& nr = decode_(*n_ptr);
    if (!nr.ok() || nr.objects.nodes.empty()) continue;
    std::vector<const model::Pod*> running;
    std::map<std::string, const store::Object*> stored;
    for (const auto& [obj, pod] : on->second) {
      running.push_back(&pod);
      stored[pod.Key()] = obj;
    }
    for (const auto& e : kubelet::NodePressureEvictions(nr.objects.nodes[0].object, running, usage, config_)) {
      const store::Object* cur = stored[e.pod];
      Json next = cur->body.Copy();
      Json& st = next["status"];
      st["phase"] = "Failed";
      st["reason"] = "Evicted";
      st["message"] = e.message;
      rules::UpdatePodCondition(
          st, {{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", "TerminationByKubelet"}, {"message", e.message}},
          now);
      rules::UpdatePodCondition(st, {{"type", "Ready"}, {"status", "False"}}, now);
      if (st.contains("containerStatuses") && st["containerStatuses"].is_array()) {
        for (Json& cs : st["containerStatuses"]) {
          cs["ready"] = false;
          cs["state"] = {{"terminated", {{"exitCode", 137}, {"reason", "Evicted"}, {"finishedAt", now}}}};
        }
      }
      PodEvent event{cur->ns, cur->name, std::string(StringAt(*cur->body.tree(), "metadata", "uid")), "Warning", "Evicted",
                     e.message, "kubelet", e.node};
      batch_.Update(*cur, std::move(next), [this, e, event](const StatusOr<store::ObjectPtr>& r) -> Status {
        if (!r.ok()) {
          // Changed or gone meanwhile: the next pass looks again.
          const StatusCode c = r.status().code();
          return c == StatusCode::kConflict || c == StatusCode::kNotFound ? Status::Ok() : r.status();
        }
        if (log_) log_("Evicting pod under node pressure", "pod=\"" + e.pod + "\" node=\"" + e.node + "\" signal=\"" + e.signal + "\"");
        events_.Record(event);
        return Status::Ok();
      });
    }
  }
}

}  // namespace arbiter::controlplane
