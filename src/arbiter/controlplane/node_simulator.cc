#include "arbiter/controlplane/node_simulator.h"

#include "arbiter/controlplane/pod_json.h"

#include <arpa/inet.h>

#include <algorithm>

#include <map>
#include <utility>

namespace arbiter::controlplane {

namespace {

using Json = nlohmann::json;

// A write that lost a race (the object changed or went away) is retried by the next pass.
Status Accept(const StatusOr<store::ObjectPtr>& r) {
  const Status& s = r.status();
  return r.ok() || s.code() == StatusCode::kConflict || s.code() == StatusCode::kNotFound ||
                 s.code() == StatusCode::kAlreadyExists
             ? Status::Ok()
             : s;
}

const Json* Find(const Json& o, const char* key) {
  if (!o.is_object()) return nullptr;
  auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}

std::string Str(const Json& o, const char* a, const char* b) { return std::string(StringAt(o, a, b)); }

// What a started container's log says it will do.
std::string WorkLine(const std::optional<Duration>& run) {
  if (!run) return "simulated work: running until the pod is deleted";
  return "simulated work: running for " + FormatGoDuration(*run * 1000) + ", then exiting";
}

// A node annotated arbiter.dev/stopped: "true" is switched off: its kubelet neither renews its
// Lease nor starts pods, so the node lifecycle controller sees it go unreachable.
bool Stopped(const Json& node) {
  const Json* a = At(node, "metadata", "annotations");
  return a != nullptr && a->is_object() && a->value("arbiter.dev/stopped", "") == "true";
}

std::string InternalIp(const Json& node) {
  const Json* st = Find(node, "status");
  const Json* addrs = st == nullptr ? nullptr : Find(*st, "addresses");
  if (addrs == nullptr || !addrs->is_array()) return "";
  for (const Json& a : *addrs) {
    if (a.is_object() && a.value("type", "") == "InternalIP" && a.contains("address") && a["address"].is_string()) {
      return a["address"].get<std::string>();
    }
  }
  return "";
}

bool Ready(const Json& node) {
  const Json* st = Find(node, "status");
  const Json* conds = st == nullptr ? nullptr : Find(*st, "conditions");
  if (conds == nullptr || !conds->is_array()) return false;
  for (const Json& c : *conds) {
    if (c.is_object() && c.value("type", "") == "Ready" && c.value("status", "") == "True") return true;
  }
  return false;
}

std::string FormatMicro(Timestamp t) {
  // MicroTime: RFC 3339 with six fractional digits.
  std::string s = FormatRfc3339(t / kSecond * kSecond);
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%06lld", static_cast<long long>(t % kSecond));
  return s.substr(0, s.size() - 1) + frac + "Z";
}

// The lowest address of `net` (from `first` on, below its broadcast address) not in `used`.
}  // namespace

NodeSimulator::NodeSimulator(WriteBatch& batch, const Clock& clock, NodeSimOptions options, PodEventRecorder record)
    : batch_(batch), clock_(clock), options_(std::move(options)), record_(std::move(record)) {}

Status NodeSimulator::Run(store::Informer& nodes, store::Informer& pods, store::Informer& leases) {
  FollowNodes(nodes, leases);
  ARBITER_RETURN_IF_ERROR(InitializeNodes(nodes));
  ARBITER_RETURN_IF_ERROR(RenewLeases(nodes, leases));
  return RunPods(pods);
}

void NodeSimulator::FollowNodes(store::Informer& nodes, store::Informer& leases) {
  std::set<Key> changed_nodes, changed_leases;
  if (node_consumer_ == kNoConsumer) {
    node_consumer_ = nodes.AddConsumer();
    lease_consumer_ = leases.AddConsumer();
    for (const auto& [key, n] : nodes.objects()) changed_nodes.insert(key);
    for (const auto& [key, l] : leases.objects()) changed_leases.insert(key);
  } else {
    changed_nodes = nodes.TakeChanged(node_consumer_);
    changed_leases = leases.TakeChanged(lease_consumer_);
  }
  std::set<std::string> lease_of;  // nodes whose Lease schedule may have changed
  for (const Key& key : changed_nodes) {
    ObserveNode(key.second, nodes.Find(key));
    lease_of.insert(key.second);
  }
  for (const Key& key : changed_leases) {
    if (key.first == "kube-node-lease") lease_of.insert(key.second);
  }
  for (const std::string& name : lease_of) ObserveLease(name, leases);
}

void NodeSimulator::ObserveNode(const std::string& name, const store::Object* n) {
  if (auto f = node_facts_.find(name); f != node_facts_.end()) status_due_.erase({f->second.status_due, name});
  if (n == nullptr) {
    node_facts_.erase(name);
    return;
  }
  const store::Body::Tree body_tree = n->body.tree();
  const Json& body = *body_tree;
  NodeFacts facts;
  facts.stopped = Stopped(body);
  facts.pod_cidr = Str(body, "spec", "podCIDR");
  facts.internal_ip = InternalIp(body);
  facts.uid = Str(body, "metadata", "uid");
  // InitializeNodes' rule, as a time: a running node that is not Ready, or lacks its pod CIDR or
  // InternalIP, is looked at every pass; a Ready one when its Ready condition's heartbeat is
  // status_report_interval old (the last Ready condition's, at once if it has none readable).
  if (!facts.stopped) {
    if (!Ready(body) || facts.pod_cidr.empty() || facts.internal_ip.empty()) {
      facts.status_due = 0;
    } else {
      for (const Json& c : body["status"]["conditions"]) {
        if (!c.is_object() || c.value("type", "") != "Ready") continue;
        auto beat = ParseRfc3339(c.value("lastHeartbeatTime", ""));
        facts.status_due = beat.ok() ? *beat + options_.status_report_interval : 0;
      }
    }
  }
  if (facts.status_due != kNever) status_due_.insert({facts.status_due, name});
  node_facts_[name] = std::move(facts);
}

void NodeSimulator::ObserveLease(const std::string& node, const store::Informer& leases) {
  if (auto d = lease_due_of_.find(node); d != lease_due_of_.end()) {
    lease_due_.erase({d->second, node});
    lease_due_of_.erase(d);
  }
  const store::Object* held = leases.Find({"kube-node-lease", node});
  auto facts = node_facts_.find(node);
  if (facts == node_facts_.end()) {
    // The Lease of a deleted node goes with it (the garbage collector follows its owner).
    if (held != nullptr) {
      orphan_leases_.insert(node);
    } else {
      orphan_leases_.erase(node);
    }
    return;
  }
  orphan_leases_.erase(node);
  if (facts->second.stopped) return;  // a stopped node's kubelet renews nothing
  Timestamp due = 0;                  // no Lease yet: made now
  if (held != nullptr) {
    auto renewed = ParseRfc3339(Str(*held->body.tree(), "spec", "renewTime"));
    due = renewed.ok() ? *renewed + options_.lease_renew_interval : 0;
  }
  lease_due_of_[node] = due;
  lease_due_.insert({due, node});
}

Status NodeSimulator::InitializeNodes(const store::Informer& nodes) {
  ARBITER_ASSIGN_OR_RETURN(cluster, Ipv4Net::Parse(options_.cluster_cidr));
  ARBITER_ASSIGN_OR_RETURN(node_net, Ipv4Net::Parse(options_.node_cidr));
  const Timestamp now = clock_.Now();
  const std::string now_text = FormatRfc3339(now / kSecond * kSecond);
  // What is taken: every node's pod CIDR (as the index of its /24) and InternalIP; gathered
  // when a node needs either (every node is walked each pass, but rarely does one need them).
  std::set<uint32_t> used_blocks, used_ips;
  bool gathered = false;
  auto gather = [&] {
    if (std::exchange(gathered, true)) return;
    for (const auto& [name, facts] : node_facts_) {
      if (auto c = Ipv4Net::Parse(facts.pod_cidr); c.ok() && cluster.Contains(c->base)) {
        used_blocks.insert((c->base - cluster.base) >> 8);
      }
      if (auto ip = ParseIpv4(facts.internal_ip); ip.ok()) used_ips.insert(*ip);
    }
  };
  // The nodes due now, in name order; each is checked against its body as before.
  std::vector<std::string> due;
  for (auto it = status_due_.begin(); it != status_due_.end() && it->first <= now; ++it) due.push_back(it->second);
  std::sort(due.begin(), due.end());
  for (const std::string& name : due) {
    const store::Object* n_ptr = nodes.Find({"", name});
    if (n_ptr == nullptr) continue;
    const store::Object& n = *n_ptr;
    const store::Body::Tree body_tree = n.body.tree();
    const Json& body = *body_tree;
    if (Stopped(body)) continue;  // a stopped node reports nothing
    const bool has_cidr = !Str(body, "spec", "podCIDR").empty();
    const bool has_ip = !InternalIp(body).empty();
    bool heartbeat_due = false;
    if (Ready(body)) {
      // The status report: conditions' lastHeartbeatTime every status_report_interval.
      for (const Json& c : body["status"]["conditions"]) {
        if (c.value("type", "") != "Ready") continue;
        auto beat = ParseRfc3339(c.value("lastHeartbeatTime", ""));
        heartbeat_due = !beat.ok() || now - *beat >= options_.status_report_interval;
      }
      if (!heartbeat_due && has_cidr && has_ip) continue;
    }
    Json next = body;
    if (!has_cidr || !has_ip) gather();
    if (!has_cidr) {
      uint32_t block = 0;
      while (used_blocks.contains(block)) ++block;
      if ((uint64_t{block} + 1) * 256 > cluster.Size()) return Unavailable("the cluster CIDR " + options_.cluster_cidr + " is full");
      used_blocks.insert(block);
      const std::string cidr = FormatIpv4(cluster.base + (block << 8)) + "/24";
      next["spec"]["podCIDR"] = cidr;
      next["spec"]["podCIDRs"] = Json::array({cidr});
    }
    Json& st = next["status"];
    if (!st.is_object()) st = Json::object();
    if (!has_ip) {
      ARBITER_ASSIGN_OR_RETURN(ip, LowestFree(node_net, 1, used_ips));
      used_ips.insert(ip);
      Json addrs = st.contains("addresses") && st["addresses"].is_array() ? st["addresses"] : Json::array();
      addrs.push_back({{"type", "InternalIP"}, {"address", FormatIpv4(ip)}});
      bool has_hostname = false;
      for (const Json& a : addrs) has_hostname = has_hostname || (a.is_object() && a.value("type", "") == "Hostname");
      if (!has_hostname) addrs.push_back({{"type", "Hostname"}, {"address", n.name}});
      st["addresses"] = addrs;
    }
    // Conditions: Ready, and no pressure; transitions keep their time, heartbeats are now.
    std::map<std::string, Json> old;
    if (st.contains("conditions") && st["conditions"].is_array()) {
      for (const Json& c : st["conditions"]) old[c.value("type", "")] = c;
    }
    Json conds = Json::array();
    const std::pair<const char*, const char*> kinds[] = {{"MemoryPressure", "KubeletHasSufficientMemory"},
                                                         {"DiskPressure", "KubeletHasNoDiskPressure"},
                                                         {"PIDPressure", "KubeletHasSufficientPID"},
                                                         {"Ready", "KubeletReady"}};
    for (const auto& [type, reason] : kinds) {
      const std::string status = std::string(type) == "Ready" ? "True" : "False";
      auto it = old.find(type);
      if (it != old.end() && it->second.value("status", "") != status) {
        conds.push_back(it->second);  // a condition someone else set (node pressure) stays
        old.erase(it);
        continue;
      }
      const std::string since = it != old.end() ? it->second.value("lastTransitionTime", now_text) : now_text;
      conds.push_back({{"type", type},
                       {"status", status},
                       {"lastHeartbeatTime", now_text},
                       {"lastTransitionTime", since},
                       {"reason", reason},
                       {"message", std::string(type) == "Ready" ? "kubelet is posting ready status (simulated by arbiter serve)"
                                                                : std::string("kubelet has no ") + type}});
      if (it != old.end()) old.erase(it);
    }
    for (auto& [type, c] : old) conds.push_back(c);
    st["conditions"] = conds;
    st["daemonEndpoints"] = {{"kubeletEndpoint", {{"Port", 10250}}}};
    st["nodeInfo"] = {{"architecture", "amd64"},
                      {"bootID", n.name},
                      {"containerRuntimeVersion", "arbiter-sim://1.0"},
                      {"kernelVersion", "simulated"},
                      {"kubeProxyVersion", options_.kubelet_version},
                      {"kubeletVersion", options_.kubelet_version},
                      {"machineID", n.name},
                      {"operatingSystem", "linux"},
                      {"osImage", "simulated by arbiter serve"},
                      {"systemUUID", n.name}};
    if (!st.contains("phase")) st["phase"] = "Running";
    batch_.Update(n, std::move(next), Accept);
  }
  return Status::Ok();
}

Status NodeSimulator::RenewLeases(const store::Informer& nodes, const store::Informer& leases) {
  const Timestamp now = clock_.Now();
  std::vector<std::string> due;
  for (auto it = lease_due_.begin(); it != lease_due_.end() && it->first <= now; ++it) due.push_back(it->second);
  std::sort(due.begin(), due.end());
  for (const std::string& name : due) {
    const store::Object* n_ptr = nodes.Find({"", name});
    auto facts = node_facts_.find(name);
    if (n_ptr == nullptr || facts == node_facts_.end() || facts->second.stopped) continue;
    const store::Object& n = *n_ptr;
    const store::Object* held = leases.Find({"kube-node-lease", n.name});
    if (held == nullptr) {
      const Json lease = {
          {"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata",
           {{"name", n.name},
            {"namespace", "kube-node-lease"},
            {"creationTimestamp", FormatRfc3339(now / kSecond * kSecond)},
            {"ownerReferences",
             Json::array({{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", n.name}, {"uid", facts->second.uid}}})}}},
          {"spec",
           {{"holderIdentity", n.name}, {"leaseDurationSeconds", options_.lease_duration_seconds}, {"renewTime", FormatMicro(now)}}}};
      batch_.Create("leases", "kube-node-lease", n.name, lease, Accept);
      continue;
    }
    auto renewed = ParseRfc3339(Str(*held->body.tree(), "spec", "renewTime"));
    if (renewed.ok() && now - *renewed < options_.lease_renew_interval) continue;
    Json next = held->body.Copy();
    next["spec"]["renewTime"] = FormatMicro(now);
    next["spec"]["holderIdentity"] = n.name;
    batch_.Update(*held, std::move(next), Accept);
  }
  // The Lease of a deleted node goes with it (the garbage collector follows its owner).
  for (const std::string& name : orphan_leases_) {
    if (const store::Object* l = leases.Find({"kube-node-lease", name}); l != nullptr) batch_.Delete(*l, Accept);
  }
  return Status::Ok();
}

void NodeSimulator::Observe(const Key& key, const store::Object* p) {
  // Its pod IP, if it holds one: every pod bound to a node that has not ended.
  if (auto held = ip_of_.find(key); held != ip_of_.end()) {
    auto on = used_ips_.find(held->second.first);
    if (on != used_ips_.end()) on->second.erase(held->second.second);
    ip_of_.erase(held);
  }
  if (auto d = deadline_of_.find(key); d != deadline_of_.end()) {
    deadlines_.erase({d->second, key});
    deadline_of_.erase(d);
  }
  if (auto r = run_end_of_.find(key); r != run_end_of_.end()) {
    runs_.erase({r->second, key});
    run_end_of_.erase(r);
  }
  if (p == nullptr) {
    killing_sent_.erase(key);
    to_start_.erase(key);
    ephemeral_.erase(key);
    if (auto l = logged_.find(key); l != logged_.end()) {
      if (options_.logs != nullptr) options_.logs->Forget(l->second);
      logged_.erase(l);
    }
    return;
  }
  const store::Body::Tree body_tree = p->body.tree();
  const Json& body = *body_tree;
  const std::string node(StringAt(body, "spec", "nodeName"));
  const bool ended = Terminal(body);
  if (!node.empty() && !ended) {
    if (auto ip = ParseIpv4(std::string(StringAt(body, "status", "podIP"))); ip.ok()) {
      ip_of_[key] = {node, *ip};
      used_ips_[node].insert(*ip);
    }
  }
  if (Terminating(body)) {
    to_start_.erase(key);
    const std::string uid(StringAt(body, "metadata", "uid"));
    if (!node.empty() && !ended) {
      auto [it, inserted] = killing_sent_.try_emplace(key, uid);
      if (inserted || it->second != uid) {
        it->second = uid;
        const int64_t grace = body["metadata"].value("deletionGracePeriodSeconds", int64_t{30});
        for (const Json& c : body["spec"].value("containers", Json::array())) {
          killing_.push_back({p->ns, p->name, uid, "Stopping container " + c.value("name", ""), node});
          Log(key, uid, c.value("name", ""),
              "received SIGTERM: the pod is being deleted; " + std::to_string(grace) + "s to exit before SIGKILL");
        }
      }
    }
    // A pod already marked ended (it keeps finalizers) waits for them, not for its node.
    const bool marked_ended = ended && body["metadata"].value("deletionGracePeriodSeconds", int64_t{-1}) == 0 &&
                              body["metadata"].contains("finalizers");
    if (auto deadline = ParseRfc3339(StringAt(body, "metadata", "deletionTimestamp")); deadline.ok() && !marked_ended) {
      deadline_of_[key] = *deadline;
      deadlines_.insert({*deadline, key});
    }
    return;
  }
  // Simulated work: it ends its run time after its containers (re)started. The annotation
  // rules; without it, a pod that does not restart (a Job's, `kubectl run --restart=Never`)
  // runs the default run time.
  if (!node.empty() && !ended && StringAt(body, "status", "phase") == "Running") {
    const std::optional<Duration> run = RunTime(body);
    if (run) {
      const nlohmann::json* statuses = At(body, "status", "containerStatuses");
      std::string started;
      if (statuses != nullptr && statuses->is_array() && !statuses->empty()) {
        const nlohmann::json& first = (*statuses)[0];
        if (first.contains("state") && first["state"].contains("running")) {
          started = first["state"]["running"].value("startedAt", "");
        }
      }
      if (started.empty()) started = Str(body, "status", "startTime");
      auto from = ParseRfc3339(started);
      if (from.ok()) {
        const Timestamp end = *from + *run;
        run_end_of_[key] = end;
        runs_.insert({end, key});
      }
    }
  }
  killing_sent_.erase(key);
  // Ephemeral containers (`kubectl debug`) start in a running pod as they are added.
  ephemeral_.erase(key);
  if (const Json* wanted = At(body, "spec", "ephemeralContainers");
      !node.empty() && !ended && StringAt(body, "status", "phase") == "Running" && wanted != nullptr && wanted->is_array()) {
    const Json* statuses = At(body, "status", "ephemeralContainerStatuses");
    const size_t have = statuses != nullptr && statuses->is_array() ? statuses->size() : 0;
    if (have < wanted->size()) ephemeral_.insert(key);
  }
  if (!node.empty() && !ended && StringAt(body, "status", "phase") == "Pending") {
    to_start_.insert(key);
  } else {
    to_start_.erase(key);
  }
}

Status NodeSimulator::RunPods(store::Informer& pods) {
  const Timestamp now = clock_.Now();
  const std::string now_text = FormatRfc3339(now / kSecond * kSecond);
  // Only the pods that changed since the last pass are looked at (all of them the first time):
  // the simulator keeps what it needs between passes (the pods to start, the terminating pods
  // by deadline, the pod IPs in use by node).
  std::set<Key> changed;
  if (consumer_ == kNoConsumer) {
    consumer_ = pods.AddConsumer();
    for (const auto& [key, p] : pods.objects()) changed.insert(key);
  } else {
    changed = pods.TakeChanged(consumer_);
  }
  for (const Key& key : changed) Observe(key, pods.Find(key));
  for (const Killing& k : std::exchange(killing_, {})) {
    ARBITER_RETURN_IF_ERROR(record_(k.ns, k.name, k.uid, "Normal", "Killing", k.message, "kubelet", k.node));
  }
  // Terminating pods whose grace period is over go (their deletion's echo forgets them; a
  // deletion that lost a race comes back with the pod's change).
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    const Key key = deadlines_.begin()->second;
    deadlines_.erase(deadlines_.begin());
    deadline_of_.erase(key);
    const store::Object* p = pods.Find(key);
    if (p == nullptr || !Terminating(*p->body.tree())) continue;
    if ((*p->body.tree())["metadata"].contains("finalizers") && !(*p->body.tree())["metadata"]["finalizers"].empty()) {
      EndWithFinalizers(*p, now_text);
    } else {
      batch_.Delete(*p, Accept);
    }
  }
  while (!runs_.empty() && runs_.begin()->first <= now) {
    const Key key = runs_.begin()->second;
    runs_.erase(runs_.begin());
    run_end_of_.erase(key);
    if (const store::Object* p = pods.Find(key); p != nullptr && !Terminating(*p->body.tree()) && !Terminal(*p->body.tree())) {
      FinishRun(*p, now_text);
    }
  }
  for (const Key& key : std::exchange(ephemeral_, {})) {
    const store::Object* p = pods.Find(key);
    if (p == nullptr) continue;
    Json next = p->body.Copy();
    Json& statuses = next["status"]["ephemeralContainerStatuses"];
    if (!statuses.is_array()) statuses = Json::array();
    std::set<std::string> started;
    for (const Json& st : statuses) started.insert(st.value("name", ""));
    const std::string uid = Str(*p->body.tree(), "metadata", "uid");
    const store::Body::Tree p_tree = p->body.tree();
    for (const Json& c : (*p_tree)["spec"]["ephemeralContainers"]) {
      const std::string name = c.value("name", "");
      if (started.contains(name)) continue;
      statuses.push_back({{"name", name},
                          {"image", c.value("image", "")},
                          {"imageID", "arbiter-sim://" + c.value("image", std::string())},
                          {"containerID", "arbiter-sim://" + p->ns + "/" + p->name + "/" + name},
                          {"ready", false},
                          {"restartCount", 0},
                          {"state", {{"running", {{"startedAt", now_text}}}}}});
      Log(key, uid, name, "started on simulated node " + Str(*p->body.tree(), "spec", "nodeName") + " (image " +
                              c.value("image", std::string()) + "; an ephemeral container)");
    }
    batch_.Update(*p, std::move(next), Accept);
  }
  if (to_start_.empty()) return Status::Ok();
  std::vector<Key> starting(to_start_.begin(), to_start_.end());
  for (const Key& key : starting) {
    const store::Object* started = pods.Find(key);
    if (started == nullptr) {
      to_start_.erase(key);
      continue;
    }
    const store::Object& p = *started;
    const store::Body::Tree body_tree = p.body.tree();
    const Json& body = *body_tree;
    const std::string uid = Str(body, "metadata", "uid");
    const std::string node = Str(body, "spec", "nodeName");
    auto n = node_facts_.find(node);
    if (n == node_facts_.end() || n->second.stopped) continue;  // a node that is not (yet) there, or stopped, runs nothing
    auto cidr = Ipv4Net::Parse(n->second.pod_cidr);
    const std::string host_ip = n->second.internal_ip;
    if (!cidr.ok() || host_ip.empty()) continue;  // initialised by the next pass
    Json next = body;
    Json& st = next["status"];
    std::string pod_ip = host_ip;
    if (!(body["spec"].value("hostNetwork", false))) {
      std::set<uint32_t>& used = used_ips_[node];
      auto ip = LowestFree(*cidr, 2, used);  // .1 is the node's bridge
      if (!ip.ok()) continue;  // the node's range is full: the pod waits, as on a real node
      used.insert(*ip);
      ip_of_[key] = {node, *ip};
      pod_ip = FormatIpv4(*ip);
    }
    st["phase"] = "Running";
    st["startTime"] = now_text;
    st["hostIP"] = host_ip;
    st["hostIPs"] = Json::array({{{"ip", host_ip}}});
    st["podIP"] = pod_ip;
    st["podIPs"] = Json::array({{{"ip", pod_ip}}});
    Json conds = st.contains("conditions") && st["conditions"].is_array() ? st["conditions"] : Json::array();
    for (const char* type : {"PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready"}) {
      bool found = false;
      for (Json& c : conds) {
        if (c.value("type", "") == type) {
          c = {{"type", type}, {"status", "True"}, {"lastTransitionTime", now_text}};
          found = true;
        }
      }
      if (!found) conds.push_back({{"type", type}, {"status", "True"}, {"lastTransitionTime", now_text}});
    }
    st["conditions"] = conds;
    st["containerStatuses"] = Json::array();
    for (const Json& c : body["spec"].value("containers", Json::array())) {
      const std::string name = c.value("name", "");
      st["containerStatuses"].push_back({{"name", name},
                                         {"image", c.value("image", "")},
                                         {"imageID", "arbiter-sim://" + c.value("image", std::string())},
                                         {"containerID", "arbiter-sim://" + p.ns + "/" + p.name + "/" + name},
                                         {"ready", true},
                                         {"started", true},
                                         {"restartCount", 0},
                                         {"state", {{"running", {{"startedAt", now_text}}}}}});
      Log(key, uid, name, "started on simulated node " + node + " (image " + c.value("image", std::string()) + ")");
      std::string command;
      for (const char* part : {"command", "args"}) {
        if (!c.contains(part) || !c[part].is_array()) continue;
        for (const Json& word : c[part]) {
          if (word.is_string()) command += (command.empty() ? "" : " ") + word.get<std::string>();
        }
      }
      if (!command.empty()) Log(key, uid, name, "its command, not run on a simulated node: " + command);
      Log(key, uid, name, WorkLine(RunTime(body)));
    }
    batch_.Update(p, std::move(next), Accept);
    to_start_.erase(key);
  }
  return Status::Ok();
}

namespace {

// A container's terminated state ending now.
Json Terminated(const Json& container_status, int64_t exit_code, const std::string& now_text) {
  std::string started = now_text;
  if (container_status.contains("state") && container_status["state"].contains("running")) {
    started = container_status["state"]["running"].value("startedAt", now_text);
  }
  return Json{{"exitCode", exit_code},
              {"reason", exit_code == 0 ? "Completed" : "Error"},
              {"startedAt", started},
              {"finishedAt", now_text},
              {"containerID", container_status.value("containerID", "")}};
}

// Ready and ContainersReady go False with reason PodCompleted, as the kubelet reports an ended pod.
void MarkNotReady(Json& status, const std::string& now_text) {
  if (!status.contains("conditions") || !status["conditions"].is_array()) return;
  for (Json& c : status["conditions"]) {
    const std::string type = c.value("type", "");
    if (type == "Ready" || type == "ContainersReady") {
      c = {{"type", type}, {"status", "False"}, {"reason", "PodCompleted"}, {"lastTransitionTime", now_text}};
    }
  }
}

}  // namespace

std::optional<Duration> NodeSimulator::RunTime(const Json& body) const {
  const Json* annotations = At(body, "metadata", "annotations");
  if (annotations != nullptr && annotations->is_object() && annotations->contains("arbiter.dev/run-duration") &&
      (*annotations)["arbiter.dev/run-duration"].is_string()) {
    auto ns = ParseGoDurationNanos((*annotations)["arbiter.dev/run-duration"].get<std::string>());
    if (ns.ok() && *ns >= 0) return *ns / 1000;  // nanoseconds to microseconds
    return std::nullopt;
  }
  const std::string policy = Str(body, "spec", "restartPolicy");
  if (options_.default_run_duration > 0 && (policy == "Never" || policy == "OnFailure")) return options_.default_run_duration;
  return std::nullopt;
}

void NodeSimulator::Log(const Key& key, const std::string& uid, const std::string& container, const std::string& text) {
  if (options_.logs == nullptr || uid.empty()) return;
  options_.logs->Append(uid, container, clock_.Now(), text);
  logged_[key] = uid;
}

void NodeSimulator::FinishRun(const store::Object& p, const std::string& now_text) {
  const store::Body::Tree body_tree = p.body.tree();
  const Json& body = *body_tree;
  const std::string uid = Str(body, "metadata", "uid");
  int64_t exit_code = 0;
  if (const Json* a = At(body, "metadata", "annotations"); a != nullptr && a->is_object() && a->contains("arbiter.dev/exit-code")) {
    const Json& v = (*a)["arbiter.dev/exit-code"];
    if (v.is_string()) {
      const std::string text = v.get<std::string>();
      char* end = nullptr;
      const long long code = std::strtoll(text.c_str(), &end, 10);
      if (end != nullptr && *end == '\0' && code >= 0 && code <= 255) exit_code = code;
    }
  }
  const std::string policy = Str(body, "spec", "restartPolicy");
  const bool ends = policy == "Never" || (policy == "OnFailure" && exit_code == 0);
  Json next = body;
  Json& st = next["status"];
  if (!st.contains("containerStatuses") || !st["containerStatuses"].is_array()) st["containerStatuses"] = Json::array();
  const Key key{p.ns, p.name};
  for (Json& cs : st["containerStatuses"]) {
    Json terminated = Terminated(cs, exit_code, now_text);
    const std::string name = cs.value("name", "");
    Log(key, uid, name, "simulated work done: exiting with code " + std::to_string(exit_code));
    if (!ends && options_.logs != nullptr) {
      options_.logs->Restart(uid, name);
      Log(key, uid, name, "restarted (restartPolicy " + (policy.empty() ? std::string("Always") : policy) +
                                "; restart " + std::to_string(cs.value("restartCount", int64_t{0}) + 1) + ")");
      Log(key, uid, name, WorkLine(RunTime(body)));
    }
    if (ends) {
      cs["state"] = {{"terminated", std::move(terminated)}};
      cs["ready"] = false;
      cs["started"] = false;
    } else {
      cs["lastState"] = {{"terminated", std::move(terminated)}};
      cs["state"] = {{"running", {{"startedAt", now_text}}}};
      cs["restartCount"] = cs.value("restartCount", int64_t{0}) + 1;
    }
  }
  if (ends) {
    st["phase"] = exit_code == 0 ? "Succeeded" : "Failed";
    MarkNotReady(st, now_text);
  }
  batch_.Update(p, std::move(next), Accept);
}

void NodeSimulator::EndWithFinalizers(const store::Object& p, const std::string& now_text) {
  Json next = p.body.Copy();
  next["metadata"]["deletionGracePeriodSeconds"] = 0;
  Json& st = next["status"];
  if (!Terminal(*p.body.tree())) {
    // Killed by its deletion: the containers' exit code of SIGKILL.
    st["phase"] = "Failed";
    if (st.contains("containerStatuses") && st["containerStatuses"].is_array()) {
      for (Json& cs : st["containerStatuses"]) {
        Log({p.ns, p.name}, Str(*p.body.tree(), "metadata", "uid"), cs.value("name", ""), "grace period over: killed (SIGKILL, exit code 137)");
        cs["state"] = {{"terminated", Terminated(cs, 137, now_text)}};
        cs["ready"] = false;
        cs["started"] = false;
      }
    }
    MarkNotReady(st, now_text);
  }
  batch_.Update(p, std::move(next), Accept);
}

}  // namespace arbiter::controlplane
