#include "arbiter/controllers/expand.h"

#include <map>
#include <optional>
#include <set>

#include "arbiter/api/admission.h"
#include "arbiter/api/resources.h"
#include "arbiter/base/rng.h"
#include "arbiter/controllers/workload_objects.h"
#include "arbiter/manifest/names.h"
#include "arbiter/model/node_eligibility.h"

namespace arbiter::controllers {

namespace {

using manifest::ClusterObjects;
using manifest::Origin;

std::string Plural(int64_t n, const std::string& one) { return std::to_string(n) + " " + one + (n == 1 ? "" : "s"); }

class Expander {
 public:
  Expander(ClusterObjects& objects, uint64_t seed) : objects_(objects), rng_(seed) {
    for (const auto& p : objects_.pods) names_.insert(p.object.Key());
    for (const auto& c : objects_.pvcs) claims_.insert(c.object.ns + "/" + c.object.name);
    // Each input pod under its controller, by index: a workload finds its pods without a walk
    // over all of them.
    for (size_t i = 0; i < objects_.pods.size(); ++i) {
      const model::Pod& p = objects_.pods[i].object;
      if (auto ref = objects_.pod_controllers.find(p.Key()); ref != objects_.pod_controllers.end()) {
        owned_[{ref->second.kind, p.ns, ref->second.name}].push_back(i);
      }
    }
  }

  Expansion Run() {
    // Admission first, as the API would: defaults, generated selectors, validation.
    std::vector<manifest::Sourced<Json>> workloads = objects_.workload_controllers;
    std::vector<manifest::Sourced<Json>> admitted;
    for (auto& w : workloads) {
      Json& md = w.object["metadata"];
      if (!md.contains("uid") || !md["uid"].is_string() || md["uid"].get_ref<const std::string&>().empty()) {
        md["uid"] = NewUid();
      }
      if (const api::ResourceInfo* info = api::FindKind(w.object.value("apiVersion", ""), w.object.value("kind", ""))) {
        if (Status s = api::AdmitWorkload(*info, w.object, nullptr); !s.ok()) {
          out_.errors.push_back(w.origin.ToString() + ": " + s.message());
          continue;
        }
      }
      admitted.push_back(std::move(w));
    }
    // Deployments make ReplicaSets, which then make pods as the input's ReplicaSets do.
    std::vector<manifest::Sourced<Json>> replica_sets;
    for (const auto& w : admitted) {
      const std::string kind = w.object.value("kind", "");
      if (kind == kDeploymentKind) Deployment(w, replica_sets);
      if (kind == kReplicaSetKind) replica_sets.push_back(w);
    }
    for (const auto& w : admitted) {
      const std::string kind = w.object.value("kind", "");
      if (kind == kStatefulSetKind) StatefulSet(w);
      if (kind == kJobKind) Job(w);
      if (kind == kDaemonSetKind) DaemonSet(w);
      if (kind == "CronJob") Note(w.origin, "creates nothing now (its Jobs start on its schedule, " +
                                                StringAt(w.object, {"spec", "schedule"}) + ")");
    }
    for (const auto& rs : replica_sets) ReplicaSet(rs);
    return std::move(out_);
  }

 private:
  using OwnerKey = std::tuple<std::string, std::string, std::string>;  // kind, namespace, name

  std::string NewUid() {
    std::string uid = manifest::GeneratedUid(rng_);
    synthetic_uids_.insert(uid);
    return uid;
  }

  void Note(const Origin& origin, const std::string& what) {
    out_.notes.push_back(origin.kind + " " + origin.object + ": " + what);
  }

  // The active pods of the input `owner` controls.
  std::vector<const model::Pod*> Owned(std::string_view kind, const Json& owner) {
    std::vector<const model::Pod*> pods;
    auto it = owned_.find({std::string(kind), NamespaceOf(owner), NameOf(owner)});
    if (it == owned_.end()) return pods;
    const std::string uid = Uid(owner);
    for (const size_t i : it->second) {
      const auto& p = objects_.pods[i];
      const auto& ref = objects_.pod_controllers.at(p.object.Key());
      if (!ref.uid.empty() && !uid.empty() && ref.uid != uid && !synthetic_uids_.contains(uid)) continue;
      if (p.object.deletion_timestamp) continue;
      pods.push_back(&p.object);
    }
    return pods;
  }

  // Adds a made pod (named from its generateName if it has no name) to the input.
  bool AddPod(Json pod, const Origin& from, std::string_view owner_kind, const Json& owner) {
    Json& md = pod["metadata"];
    const std::string ns = md.value("namespace", "default");
    if (!md.contains("name")) {
      const std::string prefix = md.value("generateName", "");
      std::string name;
      do {
        name = prefix + manifest::GeneratedNameSuffix(rng_);
      } while (names_.contains(ns + "/" + name));
      md["name"] = name;
    }
    const std::string name = md["name"].get<std::string>();
    manifest::LoadResult decoded = manifest::DecodeJson(from.file, pod);
    if (!decoded.ok() || decoded.objects.pods.size() != 1) {
      for (const auto& e : decoded.errors) out_.errors.push_back(from.ToString() + ": its pod " + name + ": " + e);
      return false;
    }
    Origin origin = from;
    origin.kind = "Pod";
    origin.object = ns + "/" + name + " (made for " + from.kind + " " + from.object + ")";
    names_.insert(ns + "/" + name);
    objects_.pod_controllers[ns + "/" + name] = {std::string(owner_kind), NameOf(owner), Uid(owner)};
    objects_.pods.push_back({std::move(decoded.objects.pods.front().object), std::move(origin)});
    return true;
  }

  void Deployment(const manifest::Sourced<Json>& w, std::vector<manifest::Sourced<Json>>& replica_sets) {
    const Json& d = w.object;
    for (const auto& rs : objects_.workload_controllers) {
      const Json* ref = ControllerRef(rs.object);
      if (rs.object.value("kind", "") == kReplicaSetKind && ref != nullptr && ref->value("kind", "") == kDeploymentKind &&
          ref->value("name", "") == NameOf(d) && NamespaceOf(rs.object) == NamespaceOf(d)) {
        Note(w.origin, "its ReplicaSet " + NameOf(rs.object) + " is in the input: planned from it");
        return;
      }
    }
    const int64_t replicas = IntAt(d, {"spec", "replicas"}, 1);
    if (BoolAt(d, {"spec", "paused"}, false)) {
      Note(w.origin, "paused: creates nothing");
      return;
    }
    Json rs = NewReplicaSetOf(d, replicas);
    rs["metadata"]["uid"] = NewUid();
    Origin origin = w.origin;
    Note(origin, "new ReplicaSet " + NameOf(rs) + " of " + Plural(replicas, "replica"));
    origin.kind = "ReplicaSet";
    origin.object = NamespaceOf(rs) + "/" + NameOf(rs);
    replica_sets.push_back({std::move(rs), std::move(origin)});
  }

  void ReplicaSet(const manifest::Sourced<Json>& w) {
    const Json& rs = w.object;
    const int64_t want = IntAt(rs, {"spec", "replicas"}, 1);
    const int64_t have = static_cast<int64_t>(Owned(kReplicaSetKind, rs).size());
    const Json* tmpl = Find(rs, {"spec", "template"});
    int64_t made = 0;
    for (int64_t i = have; i < want; ++i) {
      made += AddPod(PodFromTemplate(tmpl != nullptr ? *tmpl : Json::object(), rs, kReplicaSetApiVersion, kReplicaSetKind,
                                     NameOf(rs) + "-"),
                     w.origin, kReplicaSetKind, rs);
    }
    Note(w.origin, Plural(made, "pod") + " of " + std::to_string(want) +
                       (have > 0 ? " (" + std::to_string(have) + " in the input)" : ""));
  }

  void StatefulSet(const manifest::Sourced<Json>& w) {
    const Json& set = w.object;
    const int64_t replicas = IntAt(set, {"spec", "replicas"}, 1);
    const int64_t start = IntAt(set, {"spec", "ordinals", "start"}, 0);
    const std::string revision = StatefulSetRevision(set);
    std::set<std::string> have;
    for (const model::Pod* p : Owned(kStatefulSetKind, set)) have.insert(p->name);
    int64_t made = 0, claims_made = 0;
    for (int64_t ordinal = start; ordinal < start + replicas; ++ordinal) {
      std::vector<Json> claims;
      Json pod = StatefulSetPod(set, ordinal, revision, &claims);
      if (have.contains(NameOf(pod)) || names_.contains(NamespaceOf(set) + "/" + NameOf(pod))) continue;
      for (const Json& claim : claims) {
        const std::string key = NamespaceOf(claim) + "/" + NameOf(claim);
        if (claims_.contains(key)) continue;
        manifest::LoadResult decoded = manifest::DecodeJson(w.origin.file, claim);
        if (!decoded.ok() || decoded.objects.pvcs.size() != 1) {
          for (const auto& e : decoded.errors) out_.errors.push_back(w.origin.ToString() + ": its claim " + NameOf(claim) + ": " + e);
          continue;
        }
        Origin origin = w.origin;
        origin.kind = "PersistentVolumeClaim";
        origin.object = key;
        claims_.insert(key);
        objects_.pvcs.push_back({std::move(decoded.objects.pvcs.front().object), std::move(origin)});
        ++claims_made;
      }
      made += AddPod(std::move(pod), w.origin, kStatefulSetKind, set);
    }
    std::string note = Plural(made, "pod") + " of " + std::to_string(replicas) + " in ordinal order";
    if (claims_made > 0) note += ", " + Plural(claims_made, "claim");
    if (StringAt(set, {"spec", "podManagementPolicy"}) != "Parallel" && made > 1) {
      note += " (OrderedReady: the controller makes each once the one before is Running and Ready)";
    }
    Note(w.origin, note);
  }

  void Job(const manifest::Sourced<Json>& w) {
    const Json& job = w.object;
    if (BoolAt(job, {"spec", "suspend"}, false)) {
      Note(w.origin, "suspended: creates nothing");
      return;
    }
    const int64_t parallelism = IntAt(job, {"spec", "parallelism"}, 1);
    const Json* completions_json = Find(job, {"spec", "completions"});
    const bool has_completions = completions_json != nullptr && completions_json->is_number_integer();
    const int64_t completions = has_completions ? completions_json->get<int64_t>() : -1;
    const int64_t succeeded = IntAt(job, {"status", "succeeded"}, 0);
    const std::vector<const model::Pod*> active = Owned(kJobKind, job);
    int64_t want = parallelism;
    if (has_completions) want = std::min(want, completions - succeeded);
    const int64_t count = std::max<int64_t>(0, want - static_cast<int64_t>(active.size()));
    const bool indexed = StringAt(job, {"spec", "completionMode"}) == "Indexed";
    std::set<int64_t> busy;
    for (const model::Pod* p : active) {
      if (const std::string* i = p->labels.Find(kJobCompletionIndex)) busy.insert(std::atoll(i->c_str()));
    }
    int64_t made = 0;
    for (int64_t k = 0, index = 0; k < count; ++k) {
      std::optional<int64_t> i;
      if (indexed) {
        while (busy.contains(index)) ++index;
        if (has_completions && index >= completions) break;
        i = index++;
      }
      made += AddPod(JobPod(job, i), w.origin, kJobKind, job);
    }
    Note(w.origin, Plural(made, "pod") + " (its first wave: parallelism " + std::to_string(parallelism) +
                       (has_completions ? ", completions " + std::to_string(completions) : "") +
                       (active.empty() ? "" : ", " + std::to_string(active.size()) + " active in the input") + ")");
  }

  void DaemonSet(const manifest::Sourced<Json>& w) {
    const Json& set = w.object;
    std::set<std::string> covered;
    for (const model::Pod* p : Owned(kDaemonSetKind, set)) {
      if (!p->node_name.empty()) covered.insert(p->node_name);
    }
    int64_t made = 0, ineligible = 0;
    for (const auto& n : objects_.nodes) {
      const model::Node& node = n.object;
      if (covered.contains(node.name)) continue;
      Json pod = DaemonSetPod(set, node.name);
      manifest::LoadResult probe = manifest::DecodeJson(w.origin.file, [&] {
        Json named = pod;
        named["metadata"]["name"] = NameOf(set) + "-probe";
        return named;
      }());
      if (!probe.ok() || probe.objects.pods.size() != 1) {
        for (const auto& e : probe.errors) out_.errors.push_back(w.origin.ToString() + ": its pod template: " + e);
        return;
      }
      // NodeShouldRunDaemonPod: the pod's own constraints, not the node's free resources.
      const model::Pod& p = probe.objects.pods.front().object;
      if (!model::MatchesRequiredNodeAffinity(p, node) || !model::ToleratesNoScheduleTaints(p, node)) {
        ++ineligible;
        continue;
      }
      made += AddPod(std::move(pod), w.origin, kDaemonSetKind, set);
    }
    std::string note = Plural(made, "pod") + ", one per eligible node";
    if (ineligible > 0) note += " (" + Plural(ineligible, "node") + " its selector, affinity or taints exclude)";
    if (!covered.empty()) note += " (" + Plural(static_cast<int64_t>(covered.size()), "node") + " already run it)";
    Note(w.origin, note);
  }

  ClusterObjects& objects_;
  Rng rng_;
  Expansion out_;
  std::set<std::string> names_;   // "ns/name" of every pod
  std::set<std::string> claims_;  // "ns/name" of every claim
  std::map<OwnerKey, std::vector<size_t>> owned_;  // the input's pods (indices) by controller
  std::set<std::string> synthetic_uids_;  // uids made here (the input's pods cannot name them)
};

}  // namespace

Expansion ExpandWorkloads(ClusterObjects& objects, uint64_t seed) {
  if (objects.workload_controllers.empty()) return {};
  return Expander(objects, seed).Run();
}

}  // namespace arbiter::controllers
