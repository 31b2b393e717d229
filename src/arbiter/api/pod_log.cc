// The pods/log subresource and the node's streaming subresources (exec, attach, portforward, proxy).
#include "arbiter/api/server.h"

#include <algorithm>
#include <charconv>

#include "arbiter/api/field_validation.h"
#include "arbiter/schema/schema.h"
#include "arbiter/api/server_internal.h"

namespace arbiter::api {

using schema::ApiSchema;
using Json = nlohmann::json;
using namespace internal;  // NOLINT: the helpers every part of the server shares

namespace {


// The string at o[a][b], or "" when absent or not a string.
std::string StringOf(const Json& o, const char* a, const char* b) {
  if (!o.is_object() || !o.contains(a) || !o[a].is_object() || !o[a].contains(b) || !o[a][b].is_string()) return "";
  return o[a][b].get<std::string>();
}

// The names of a pod's containers of one list ("containers", "initContainers", ...).
std::vector<std::string> ContainerNames(const Json& pod, const char* list) {
  std::vector<std::string> out;
  if (!pod.contains("spec") || !pod["spec"].is_object() || !pod["spec"].contains(list) || !pod["spec"][list].is_array()) {
    return out;
  }
  for (const Json& c : pod["spec"][list]) {
    if (c.is_object() && c.contains("name") && c["name"].is_string()) out.push_back(c["name"].get<std::string>());
  }
  return out;
}

// A non-negative integer query parameter, or nullopt when absent; an error names it.
StatusOr<std::optional<int64_t>> QueryInt(const Request& r, const std::string& key, int64_t min) {
  auto it = r.query.find(key);
  if (it == r.query.end() || it->second.empty()) return std::optional<int64_t>();
  int64_t v = 0;
  const char* b = it->second.data();
  const auto res = std::from_chars(b, b + it->second.size(), v);
  if (res.ec != std::errc() || res.ptr != b + it->second.size() || v < min) {
    return InvalidArgument(key + ": Invalid value: \"" + it->second + "\": must be an integer of at least " +
                           std::to_string(min));
  }
  return std::optional<int64_t>(v);
}

}  // namespace

Response ApiServer::PodLog(const Request& r, const Target& t) {
  auto current = store_.Get("pods", t.ns, t.name);
  if (!current.ok()) return Error(404, "pods \"" + t.name + "\" not found", "pods", t.name);
  const store::Body::Tree pod_tree = current->body.tree();
  const Json& pod = *pod_tree;
  std::vector<std::string> names = ContainerNames(pod, "containers");
  std::vector<std::string> all = names;
  for (const char* list : {"initContainers", "ephemeralContainers"}) {
    for (std::string& n : ContainerNames(pod, list)) all.push_back(std::move(n));
  }
  std::string container = QueryOr(r, "container");
  if (container.empty()) {
    if (names.size() != 1) {
      std::string choices;
      for (const std::string& n : names) choices += (choices.empty() ? "" : " ") + n;
      return Error(400, "a container name must be specified for pod " + t.name + ", choose one of: [" + choices + "]",
                   "pods", t.name);
    }
    container = names.front();
  } else if (std::find(all.begin(), all.end(), container) == all.end()) {
    return Error(400, "container " + container + " is not valid for pod " + t.name, "pods", t.name);
  }
  // The options, validated as upstream's PodLogOptions.
  auto tail = QueryInt(r, "tailLines", 0);
  auto since_seconds = QueryInt(r, "sinceSeconds", 1);
  auto limit = QueryInt(r, "limitBytes", 1);
  for (const auto* q : {&tail, &since_seconds, &limit}) {
    if (!q->ok()) return Error(400, "PodLogOptions is invalid: " + q->status().message(), "pods", t.name);
  }
  std::optional<Timestamp> since;
  if (const std::string st = QueryOr(r, "sinceTime"); !st.empty()) {
    if (*since_seconds) return Error(400, "PodLogOptions is invalid: at most one of `sinceTime` or `sinceSeconds` may be specified", "pods", t.name);
    auto parsed = ParseRfc3339(st);
    if (!parsed.ok()) return Error(400, "PodLogOptions is invalid: sinceTime: " + parsed.status().message(), "pods", t.name);
    since = *parsed;
  } else if (*since_seconds) {
    since = clock_.Now() - **since_seconds * kSecond;
  }
  const bool previous = QueryBool(QueryOr(r, "previous"));
  const bool timestamps = QueryBool(QueryOr(r, "timestamps"));
  Response out;
  out.code = 200;
  out.content_type = "text/plain";
  // A pod not yet on a node has no log (kube-apiserver answers empty: there is no kubelet to ask).
  if (StringOf(pod, "spec", "nodeName").empty()) return out;
  std::optional<std::vector<ContainerLogs::Line>> lines;
  if (logs_ != nullptr) lines = logs_->Read(StringOf(pod, "metadata", "uid"), container, previous);
  if (previous && !lines) {
    return Error(400, "previous terminated container \"" + container + "\" in pod \"" + t.name + "\" not found",
                 "pods", t.name);
  }
  if (!lines) {
    if (StringOf(pod, "status", "phase") == "Pending") {
      return Error(400, "container \"" + container + "\" in pod \"" + t.name + "\" is waiting to start: ContainerCreating",
                   "pods", t.name);
    }
    return out;  // a node Arbiter does not simulate keeps its logs itself
  }
  size_t from = 0;
  if (since) {
    while (from < lines->size() && (*lines)[from].at < *since) ++from;
  }
  if (*tail && static_cast<int64_t>(lines->size() - from) > **tail) from = lines->size() - static_cast<size_t>(**tail);
  auto text = [timestamps](const ContainerLogs::Line& l) {
    return (timestamps ? FormatRfc3339(l.at) + " " : std::string()) + l.text + "\n";
  };
  bool limited = false;
  for (size_t i = from; i < lines->size(); ++i) {
    const std::string line = text((*lines)[i]);
    if (*limit && static_cast<int64_t>(out.body.size() + line.size()) > **limit) {
      out.body += line.substr(0, static_cast<size_t>(**limit) - out.body.size());
      limited = true;
      break;
    }
    out.body += line;
  }
  // follow: what the container logs next, until it ends or its pod goes.
  const std::string phase = StringOf(pod, "status", "phase");
  if (QueryBool(QueryOr(r, "follow")) && !previous && !limited && phase != "Succeeded" && phase != "Failed") {
    const std::string uid = StringOf(pod, "metadata", "uid");
    uint64_t last = lines->empty() ? 0 : lines->back().seq;
    auto stream = std::make_shared<TextStream>();
    stream->next = [this, ns = t.ns, name = t.name, uid, container, last, text]() mutable -> std::optional<std::string> {
      // Through restarts: the end of the instance that exited (now the previous log), then the
      // new one.
      std::string chunk;
      for (const bool prev : {true, false}) {
        const auto lines_now = logs_->Read(uid, container, prev);
        if (!lines_now) continue;
        for (const ContainerLogs::Line& l : *lines_now) {
          if (l.seq <= last) continue;
          chunk += text(l);
          last = l.seq;
        }
      }
      if (!chunk.empty()) return chunk;
      auto stored = store_.Get("pods", ns, name);
      if (!stored.ok() || StringOf(*stored->body.tree(), "metadata", "uid") != uid) return std::nullopt;  // gone
      const std::string now_phase = StringOf(*stored->body.tree(), "status", "phase");
      if (now_phase == "Succeeded" || now_phase == "Failed") return std::nullopt;  // ended, all said
      return std::string();
    };
    out.stream = std::move(stream);
  }
  return out;
}

Response ApiServer::SimulatedNode(const Request& r, const Target& t) {
  auto current = store_.Get("pods", t.ns, t.name);
  if (!current.ok()) return Error(404, "pods \"" + t.name + "\" not found", "pods", t.name);
  const std::string node = StringOf(*current->body.tree(), "spec", "nodeName");
  const std::string what = t.sub == "exec"          ? "run commands in its containers (kubectl exec, cp)"
                           : t.sub == "attach"      ? "attach to its containers (kubectl attach, debug -it)"
                           : t.sub == "portforward" ? "forward ports to it (kubectl port-forward)"
                                                    : "proxy requests to it";
  (void)r;
  return Error(400, "pod " + t.name + (node.empty() ? " is on no node yet" : " runs on " + node) +
                        ", a node Arbiter simulates: it has no container runtime, so Arbiter cannot " + what +
                        "; its containers' logs are served (kubectl logs)",
               "pods", t.name);
}

}  // namespace arbiter::api
