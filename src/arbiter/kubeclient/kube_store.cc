// The store interface over a Kubernetes API server (see kube_store.h).
#include "arbiter/kubeclient/kube_store.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include "arbiter/api/event_versions.h"
#include "arbiter/api/patch.h"
#include "arbiter/api/protobuf_codec.h"
#include "arbiter/api/resources.h"

#include "arbiter/kubeclient/kube_internal.h"

namespace arbiter::kubeclient {

using namespace internal;  // NOLINT: the store's own parts

Json EventsV1Event(const Json& core) {
  Json e = api::CoreEventToEventsV1(core);
  // As client-go's events recorder writes an event: no deprecated fields, an eventTime, the
  // reporting instance, kube-scheduler's action for the reason, and a series once it repeats.
  const std::string first = e.value("deprecatedFirstTimestamp", e.value("deprecatedLastTimestamp", ""));
  const std::string last = e.value("deprecatedLastTimestamp", first);
  const Json count = e.value("deprecatedCount", Json(1));
  const Json& source = Field(e, "deprecatedSource");
  std::string controller = e.value("reportingController", "");
  if (controller.empty() && source.is_object()) controller = source.value("component", "");
  for (const char* k : {"deprecatedSource", "deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedCount"}) {
    e.erase(k);
  }
  e["metadata"] = {{"name", MetaString(core, "name")}, {"namespace", MetaString(core, "namespace")}};
  if (!e.contains("eventTime")) e["eventTime"] = MicroTime(first);
  e["reportingController"] = controller;
  if (!e.contains("reportingInstance")) e["reportingInstance"] = controller + "-" + Hostname();
  const std::string reason = e.value("reason", "");
  if (!e.contains("action")) {
    e["action"] = reason == "Scheduled"          ? "Binding"
                  : reason == "FailedScheduling" ? "Scheduling"
                  : reason == "Preempted"        ? "Preempting"
                                                 : reason;
  }
  if (count.is_number_integer() && count.get<int64_t>() > 1) {
    e["series"] = {{"count", count}, {"lastObservedTime", MicroTime(last)}};
  }
  // events.k8s.io/v1 refuses a note over 1 KiB: cut, as kube-scheduler cuts its messages, at a
  // character boundary, with " ..." at the end.
  constexpr size_t kNoteLengthLimit = 1024;
  if (e.contains("note") && e["note"].is_string() && e["note"].get_ref<const std::string&>().size() > kNoteLengthLimit) {
    std::string note = e["note"].get<std::string>();
    size_t cut = kNoteLengthLimit - 4;
    while (cut > 0 && (static_cast<unsigned char>(note[cut]) & 0xC0) == 0x80) --cut;
    e["note"] = note.substr(0, cut) + " ...";
  }
  return e;
}

namespace {

struct Lane {
  std::mutex mu;
  std::unique_ptr<Client> client;
};


class KubeStore final : public store::Store {
 public:
  explicit KubeStore(KubeStoreOptions options) : options_(std::move(options)) {}

  Status Open() {
    main_limiter_ = std::make_shared<RateLimiter>(options_.qps, options_.burst);
    writers_.resize(std::max<size_t>(1, options_.parallel_writes));
    for (auto& w : writers_) w = std::make_unique<Lane>();
    std::vector<Lane*> lanes = {&events_, &leases_};
    for (auto& w : writers_) lanes.push_back(w.get());
    for (Lane* lane : lanes) {
      ClientOptions co;
      // The scheduling connections share one limit (one client set); events and leader
      // election have theirs.
      const bool scheduling = lane != &events_ && lane != &leases_;
      co.limiter = scheduling ? main_limiter_ : std::make_shared<RateLimiter>(options_.qps, options_.burst);
      co.user_agent = options_.user_agent + (lane == &events_ ? "/events" : lane == &leases_ ? "/leader-election" : "");
      co.accept = Accept();
      co.on_request = options_.on_request;
      co.timeout = options_.request_timeout;
      co.max_response_bytes = options_.max_list_bytes;
      auto c = Client::Connect(options_.config, co);
      if (!c.ok()) return c.status();
      lane->client = std::move(*c);
    }
    ARBITER_ASSIGN_OR_RETURN(version, Call(*writers_[0], "GET", "/version"));
    if (version.status != 200) return FromHttp("GET", "/version", version);
    // client-go's event broadcaster adapter: events.k8s.io/v1 when served, else core v1.
    ARBITER_ASSIGN_OR_RETURN(group, Call(events_, "GET", "/apis/events.k8s.io/v1"));
    events_v1_ = group.status == 200;
    return Status::Ok();
  }

  bool WantsUpdateBase() const override { return true; }

  StatusOr<store::Object> Create(const std::string& resource, const std::string& ns, const std::string& name,
                                 Json body) override {
    ARBITER_ASSIGN_OR_RETURN(route, RouteOf(resource));
    if (!body.is_object()) return InvalidArgument("create " + resource + "/" + name + ": the body is not an object");
    body["metadata"]["name"] = name;
    if (route.namespaced) body["metadata"]["namespace"] = ns;
    body["metadata"].erase("resourceVersion");
    if (resource == "events" && events_v1_) body = EventsV1Event(body);
    const std::string target = Collection(route, ns);
    ARBITER_ASSIGN_OR_RETURN(r, Send(LaneOf(resource), "POST", target, body));
    if (r.status != 201 && r.status != 200) return FromHttp("POST", target, r);
    return Decode(resource, route, r, "POST " + target);
  }

  StatusOr<store::Object> Get(const std::string& resource, const std::string& ns, const std::string& name) override {
    ARBITER_ASSIGN_OR_RETURN(route, RouteOf(resource));
    const std::string target = Item(route, ns, name);
    ARBITER_ASSIGN_OR_RETURN(r, Call(LaneOf(resource), "GET", target));
    if (r.status != 200) return FromHttp("GET", target, r);
    return Decode(resource, route, r, "GET " + target);
  }

  StatusOr<store::Object> Update(const std::string& resource, const std::string& ns, const std::string& name, Json body,
                                 int64_t expected_revision) override {
    store::WriteOp op;
    op.kind = store::WriteOp::Kind::kUpdate;
    op.resource = resource;
    op.ns = ns;
    op.name = name;
    op.body = std::move(body);
    op.expected_revision = expected_revision;
    ARBITER_ASSIGN_OR_RETURN(o, ApplyOne(op));
    return *o;
  }

  StatusOr<store::Object> Delete(const std::string& resource, const std::string& ns, const std::string& name,
                                 int64_t expected_revision) override {
    store::WriteOp op;
    op.kind = store::WriteOp::Kind::kDelete;
    op.resource = resource;
    op.ns = ns;
    op.name = name;
    op.expected_revision = expected_revision;
    ARBITER_ASSIGN_OR_RETURN(o, ApplyOne(op));
    return *o;
  }

  // A binding is a typed write (the live scheduler's, through rules::BindPod): it becomes a POST to
  // pods/binding, as kube-scheduler's DefaultBinder makes it.
  static bool IsBinding(const store::WriteOp& op) {
    return op.kind == store::WriteOp::Kind::kUpdate && op.resource == "pods" &&
           op.intent == store::WriteOp::Intent::kBind;
  }

  // A batch's writes are made in order, except that a run of bindings (each of another pod) goes
  // out over the writer connections at once, as kube-scheduler binds each pod in a goroutine of
  // its own. Everything else keeps the batch's order: a victim's condition and deletion go before
  // its preemptor's nomination, as kube-scheduler makes them.
  std::vector<StatusOr<store::ObjectPtr>> Apply(std::vector<store::WriteOp> ops) override {
    std::vector<StatusOr<store::ObjectPtr>> out(ops.size(), Internal("not written"));
    std::vector<size_t> run;
    std::set<std::pair<std::string, std::string>> in_run;
    auto flush = [&] {
      std::atomic<size_t> next{0};
      auto work = [&](size_t worker) {
        writer_ = writers_[worker].get();
        for (size_t k = next++; k < run.size(); k = next++) out[run[k]] = ApplyGuarded(ops[run[k]]);
        writer_ = nullptr;
      };
      std::vector<std::thread> threads;
      for (size_t w = 1; w < std::min(writers_.size(), run.size()); ++w) threads.emplace_back(work, w);
      work(0);
      for (auto& t : threads) t.join();
      run.clear();
      in_run.clear();
    };
    for (size_t i = 0; i < ops.size(); ++i) {
      const store::WriteOp& op = ops[i];
      const bool binding = IsBinding(op);
      if (binding && in_run.insert({op.ns, op.name}).second) {
        run.push_back(i);
        continue;
      }
      if (!run.empty()) flush();
      if (binding) {
        run.push_back(i);
        in_run.insert({op.ns, op.name});
        continue;
      }
      out[i] = ApplyGuarded(ops[i]);
    }
    if (!run.empty()) flush();
    return out;
  }

  StatusOr<store::ListResult> List(const std::string& resource, const std::string& ns) override {
    ARBITER_ASSIGN_OR_RETURN(route, RouteOf(resource));
    const std::string path = Collection(route, ns);
    store::ListResult out;
    std::string cont;
    size_t bytes = 0;
    bool first = true;
    int restarts = 0;  // a continue token that expired: listed again from the start, a few times
    do {
      std::string target = path + "?limit=" + std::to_string(options_.page);
      if (!cont.empty()) target += "&continue=" + PercentEncode(cont);
      ARBITER_ASSIGN_OR_RETURN(r, Call(LaneOf(resource), "GET", target));
      if (r.status == 404 && first && ns.empty()) {
        // Not served (an API this server's version or feature gates lack, such as the Workload
        // API): there are none, as kube-scheduler starts no informer for a disabled API.
        MarkUnserved(resource, path);
        return out;
      }
      if (r.status == 410 && !first && ++restarts <= 3) {
        // The continue token expired: list again from the start, as the reflector does.
        out.items.clear();
        cont.clear();
        bytes = 0;
        first = true;
        continue;
      }
      if (r.status != 200) return FromHttp("GET", target, r);
      bytes += r.body.size();
      if (bytes > options_.max_list_bytes) {
        return Unavailable("GET " + path + ": the list is larger than " + std::to_string(options_.max_list_bytes) +
                           " bytes");
      }
      Json list = BodyJson(r);
      // An empty list decoded from protobuf has no items at all.
      if (list.is_object() && !list.contains("items")) list["items"] = Json::array();
      if (!list.is_object() || !list["items"].is_array()) return Unavailable("GET " + target + ": not a list");
      if (first) {
        ARBITER_ASSIGN_OR_RETURN(rv, ParseRevision(Field(Field(list, "metadata"), "resourceVersion"), "GET " + path));
        out.revision = rv;
        first = false;
      }
      for (Json& item : list["items"]) {
        if (!item.is_object()) continue;
        item["apiVersion"] = route.api_version;
        item["kind"] = route.kind;
        ARBITER_ASSIGN_OR_RETURN(o, ToObject(resource, std::move(item), "GET " + path));
        out.items.push_back(std::move(o));
      }
      cont = StringOf(Field(list, "metadata"), "continue");
    } while (!cont.empty() || first);
    Served(resource);
    std::sort(out.items.begin(), out.items.end(),
              [](const store::Object& a, const store::Object& b) { return std::tie(a.ns, a.name) < std::tie(b.ns, b.name); });
    return out;
  }

  StatusOr<std::unique_ptr<store::Watch>> WatchFrom(const std::string& resource, const std::string& ns,
                                                    int64_t from_revision, store::WatchOptions) override {
    ARBITER_ASSIGN_OR_RETURN(route, RouteOf(resource));
    if (Unserved(resource)) return std::unique_ptr<store::Watch>(NewIdleWatch());
    ClientOptions co;
    co.limiter = main_limiter_;
    co.user_agent = options_.user_agent;
    co.accept = Accept();
    co.on_request = options_.on_request;
    // A quiet stream is cut a while after the server should have ended it, then resumed.
    co.timeout = options_.watch_timeout + std::chrono::seconds(30);
    auto client = Client::Connect(options_.config, co);
    if (!client.ok()) return client.status();
    return std::unique_ptr<store::Watch>(
        NewKubeWatch(std::move(*client), route, resource, ns, from_revision, options_));
  }

  StatusOr<int64_t> Revision() override {
    ARBITER_ASSIGN_OR_RETURN(list, List("namespaces", ""));
    return list.revision;
  }

  Status Compact(int64_t) override {
    return FailedPrecondition("the API server compacts its own history (kube-apiserver's --etcd-compaction-interval)");
  }

 private:
  void MarkUnserved(const std::string& resource, const std::string& path) {
    std::lock_guard<std::mutex> lock(unserved_mu_);
    if (unserved_.insert(resource).second && options_.log) {
      options_.log(path + " is not served by " + options_.config.server + ": no " + resource + " are read");
    }
  }
  void Served(const std::string& resource) {
    std::lock_guard<std::mutex> lock(unserved_mu_);
    unserved_.erase(resource);
  }
  bool Unserved(const std::string& resource) {
    std::lock_guard<std::mutex> lock(unserved_mu_);
    return unserved_.contains(resource);
  }

  StatusOr<Route> RouteOf(const std::string& resource) const {
    if (resource == "events" && events_v1_) {
      return Route{"/apis/events.k8s.io/v1", "events", "events.k8s.io/v1", "Event", true, false};
    }
    for (const auto& r : api::Resources()) {
      if (r.review || r.AnotherVersion() || r.StoreKey() != resource) continue;
      Route route;
      route.prefix = r.group.empty() ? "/api/" + std::string(r.version)
                                     : "/apis/" + std::string(r.group) + "/" + std::string(r.version);
      route.resource = std::string(r.resource);
      route.api_version = r.ApiVersion();
      route.kind = std::string(r.kind);
      route.namespaced = r.namespaced;
      route.status = r.HasSubresource("status");
      return route;
    }
    return InvalidArgument("the resource \"" + resource + "\" has no known place in the Kubernetes API");
  }

  Lane& LaneOf(const std::string& resource) {
    if (resource == "events") return events_;
    if (resource == "leases") return leases_;
    return writer_ != nullptr ? *writer_ : *writers_[0];
  }

  static StatusOr<Response> Call(Lane& lane, const std::string& method, const std::string& target,
                                 const std::string& body = "", const std::string& content_type = "application/json") {
    std::lock_guard<std::mutex> lock(lane.mu);
    return lane.client->Send(method, target, body, content_type);
  }

  // A POST or PUT of `object`: in protobuf when asked for and the kind has a protobuf form (as
  // kube-scheduler sends its bindings), else JSON.
  StatusOr<Response> Send(Lane& lane, const std::string& method, const std::string& target, const Json& object) {
    if (options_.protobuf) {
      if (auto encoded = api::EncodeProtobufObject(object); encoded.ok()) {
        return Call(lane, method, target, *encoded, std::string(api::kProtobufMediaType));
      }
    }
    return Call(lane, method, target, object.dump());
  }

  std::string Accept() const {
    return options_.protobuf ? std::string(api::kProtobufMediaType) + ", application/json" : "application/json";
  }

  static StatusOr<store::Object> ToObject(const std::string& resource, Json body, const std::string& what) {
    ARBITER_ASSIGN_OR_RETURN(rv, ParseRevision(Field(Field(body, "metadata"), "resourceVersion"), what));
    store::Object o;
    o.resource = resource;
    o.ns = MetaString(body, "namespace");
    o.name = MetaString(body, "name");
    o.revision = rv;
    o.body = std::move(body);
    return o;
  }

  static StatusOr<store::Object> Decode(const std::string& resource, const Route& route, const Response& r,
                                        const std::string& what) {
    Json body = BodyJson(r);
    if (!body.is_object()) return Unavailable(what + ": the answer is not an object (" + r.content_type + ")");
    if (!body.contains("apiVersion")) body["apiVersion"] = route.api_version;
    if (!body.contains("kind")) body["kind"] = route.kind;
    return ToObject(resource, std::move(body), what);
  }

  StatusOr<store::ObjectPtr> Shared(StatusOr<store::Object> o) {
    if (!o.ok()) return o.status();
    return std::make_shared<const store::Object>(std::move(*o));
  }

  // PUT `body` at `target`, conditional on `expected` when > 0.
  StatusOr<store::Object> Put(const std::string& resource, const Route& route, const std::string& target, Json body,
                              int64_t expected) {
    if (expected > 0) {
      body["metadata"]["resourceVersion"] = std::to_string(expected);
    } else if (body.contains("metadata")) {
      body["metadata"].erase("resourceVersion");
    }
    ARBITER_ASSIGN_OR_RETURN(r, Send(LaneOf(resource), "PUT", target, body));
    if (r.status != 200 && r.status != 201) return FromHttp("PUT", target, r);
    return Decode(resource, route, r, "PUT " + target);
  }

  // PATCH pods/NAME/status with the strategic merge patch from `before` to `after`.
  StatusOr<store::Object> PatchStatus(const Route& route, const std::string& ns, const std::string& name,
                                      const Json& before, const Json& after) {
    const Json patch = api::TwoWayStrategicMergePatch(Json{{"status", Field(before, "status")}},
                                                      Json{{"status", Field(after, "status")}});
    const std::string target = Item(route, ns, name) + "/status";
    ARBITER_ASSIGN_OR_RETURN(
        r, Call(LaneOf("pods"), "PATCH", target, patch.dump(), "application/strategic-merge-patch+json"));
    if (r.status != 200) return FromHttp("PATCH", target, r);
    return Decode("pods", route, r, "PATCH " + target);
  }

  StatusOr<store::Object> DeleteItem(const std::string& resource, const Route& route, const std::string& ns,
                                     const std::string& name, const std::string& uid, const Json& fallback,
                                     int64_t fallback_revision, bool now = false) {
    Json options = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
    if (!uid.empty()) options["preconditions"] = {{"uid", uid}};
    if (now) options["gracePeriodSeconds"] = 0;
    const std::string target = Item(route, ns, name);
    ARBITER_ASSIGN_OR_RETURN(r, Call(LaneOf(resource), "DELETE", target, options.dump()));
    if (r.status != 200 && r.status != 202) return FromHttp("DELETE", target, r);
    Json body = BodyJson(r);
    if (body.is_object() && body.value("kind", "") != "Status" && Meta(body) != nullptr &&
        Field(*Meta(body), "resourceVersion").is_string()) {
      return Decode(resource, route, r, "DELETE " + target);
    }
    // Deleted, answered with a Status: the object as the caller last held it.
    store::Object o;
    o.resource = resource;
    o.ns = ns;
    o.name = name;
    o.revision = fallback_revision;
    o.body = fallback;
    return o;
  }

  // A write whose answer had an unexpected shape fails alone.
  StatusOr<store::ObjectPtr> ApplyGuarded(store::WriteOp& op) {
    try {
      return ApplyOne(op);
    } catch (const std::exception& e) {
      return Internal(op.resource + "/" + op.name + ": an answer of an unexpected shape: " + e.what());
    }
  }

  StatusOr<store::ObjectPtr> ApplyOne(store::WriteOp& op) {
    auto route = RouteOf(op.resource);
    if (!route.ok()) return route.status();
    switch (op.kind) {
      case store::WriteOp::Kind::kCreate:
        return Shared(Create(op.resource, op.ns, op.name, std::move(op.body)));
      case store::WriteOp::Kind::kDelete: {
        // A store delete removes the object. A pod already terminating is removed at once, as the
        // kubelet's status manager ends its graceful deletion (gracePeriodSeconds 0, the uid as a
        // precondition); a plain DELETE would leave it waiting for its grace period again.
        const store::Body::Tree known = op.known.tree();
        const bool terminating = op.resource == "pods" && known->is_object() &&
                                 Field(Field(*known, "metadata"), "deletionTimestamp").is_string();
        return Shared(DeleteItem(op.resource, *route, op.ns, op.name, known->is_object() ? MetaString(*known, "uid") : "",
                                 *known, op.expected_revision, terminating));
      }
      case store::WriteOp::Kind::kUpdate:
        break;
    }
    if (op.resource == "events") return Shared(UpdateEvent(*route, op));
    if (op.resource == "pods" && op.base.is_object()) return Shared(UpdatePod(*route, op));
    // Only the status changed: its subresource (the main resource ignores status changes).
    const bool status_only = route->status && op.base.is_object() && [&] {
      Json a = op.base, b = op.body;
      a.erase("status");
      b.erase("status");
      if (a.contains("metadata")) a["metadata"].erase("resourceVersion");
      if (b.contains("metadata")) b["metadata"].erase("resourceVersion");
      return a == b;
    }();
    const std::string target = Item(*route, op.ns, op.name) + (status_only ? "/status" : "");
    if (status_only || !route->status || !op.base.is_object() || Field(op.base, "status") == Field(op.body, "status")) {
      return Shared(Put(op.resource, *route, target, std::move(op.body), op.expected_revision));
    }
    // Both changed: kube-apiserver keeps the stored status on the main resource (a Node's too), so
    // the status goes to its subresource after, at the revision the first write made.
    const Json status = Field(op.body, "status");
    auto main = Put(op.resource, *route, target, std::move(op.body), op.expected_revision);
    if (!main.ok() || Field(*main->body.tree(), "status") == status) return Shared(std::move(main));
    Json body = std::move(*main->body.tree());
    body["status"] = status;
    return Shared(Put(op.resource, *route, target + "/status", std::move(body), main->revision));
  }

  // A repeated event: its series, patched (events.k8s.io/v1), or the event replaced (core v1).
  StatusOr<store::Object> UpdateEvent(const Route& route, store::WriteOp& op) {
    if (!events_v1_) return Put(op.resource, route, Item(route, op.ns, op.name), std::move(op.body), 0);
    Json e = EventsV1Event(op.body);
    Json patch = {{"series", e.contains("series") ? e["series"] : Json(nullptr)}};
    const std::string target = Item(route, op.ns, op.name);
    ARBITER_ASSIGN_OR_RETURN(r, Call(events_, "PATCH", target, patch.dump(), "application/strategic-merge-patch+json"));
    if (r.status != 200) return FromHttp("PATCH", target, r);
    return Decode(op.resource, route, r, "PATCH " + target);
  }

  StatusOr<store::Object> UpdatePod(const Route& route, store::WriteOp& op) {
    const Json& before = op.base;
    Json& after = op.body;
    if (IsBinding(op)) {
      const std::string node = NodeNameOf(after);
      // kube-scheduler's DefaultBinder: a Binding to the node, naming the pod's uid. The server
      // sets PodScheduled; the status changes made with it are the server's to make.
      Json binding = {{"apiVersion", "v1"},
                      {"kind", "Binding"},
                      {"metadata", {{"name", op.name}, {"namespace", op.ns}, {"uid", MetaString(before, "uid")}}},
                      {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
      const std::string target = Item(route, op.ns, op.name) + "/binding";
      ARBITER_ASSIGN_OR_RETURN(r, Send(LaneOf("pods"), "POST", target, binding));
      if (r.status != 201 && r.status != 200) return FromHttp("POST", target, r);
      // The server answers a binding with a Status: the binding's revision is not known, but it
      // is later than the base's, which is what the caller needs to prefer this body to the
      // base until the watch brings the pod as bound.
      store::Object o;
      o.resource = "pods";
      o.ns = op.ns;
      o.name = op.name;
      o.revision = op.expected_revision + 1;
      o.body = std::move(after);
      return o;
    }
    // A typed write is the call it names; an untyped one is told from what changed.
    const bool typed = op.intent == store::WriteOp::Intent::kStatus || op.intent == store::WriteOp::Intent::kEvict;
    const bool deleting = typed ? op.intent == store::WriteOp::Intent::kEvict
                                : !Field(Field(before, "metadata"), "deletionTimestamp").is_string() &&
                                      Field(Field(after, "metadata"), "deletionTimestamp").is_string();
    StatusOr<store::Object> result = Internal("no write");
    if (typed || Field(before, "status") != Field(after, "status")) {
      result = PatchStatus(route, op.ns, op.name, before, after);
      if (!result.ok()) return result;
    }
    if (deleting) {
      // kube-scheduler deletes a victim after patching its DisruptionTarget condition; the
      // pod's own grace period applies (the deletion timestamp written here is the same).
      const int64_t revision = result.ok() ? result->revision : op.expected_revision;
      const store::Body::Tree result_tree = result.ok() ? result->body.tree() : nullptr;
      const Json& held = result_tree != nullptr ? *result_tree : before;
      return DeleteItem("pods", route, op.ns, op.name, MetaString(before, "uid"), held, revision);
    }
    if (result.ok()) return result;
    Json a = before, b = after;
    for (Json* j : {&a, &b}) {
      if (j->contains("metadata")) (*j)["metadata"].erase("resourceVersion");
    }
    if (a == b) {
      store::Object o;
      o.resource = "pods";
      o.ns = op.ns;
      o.name = op.name;
      o.revision = op.expected_revision;
      o.body = std::move(after);
      return o;
    }
    return Put("pods", route, Item(route, op.ns, op.name), std::move(after), op.expected_revision);
  }

  KubeStoreOptions options_;
  // The scheduler's connections (Apply spreads a batch over them), and one each for events and
  // leader election.
  std::vector<std::unique_ptr<Lane>> writers_;
  Lane events_, leases_;
  // The writer connection of the calling Apply worker (null: the first).
  static thread_local Lane* writer_;
  std::shared_ptr<RateLimiter> main_limiter_;
  bool events_v1_ = false;
  std::mutex unserved_mu_;
  std::set<std::string> unserved_;  // resources whose collection is 404
};

thread_local Lane* KubeStore::writer_ = nullptr;

}  // namespace

StatusOr<std::unique_ptr<store::Store>> OpenKubeStore(const KubeStoreOptions& options) {
  auto s = std::make_unique<KubeStore>(options);
  ARBITER_RETURN_IF_ERROR(s->Open());
  return std::unique_ptr<store::Store>(std::move(s));
}

}  // namespace arbiter::kubeclient
