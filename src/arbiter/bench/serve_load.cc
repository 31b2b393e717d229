// The serve benchmarks: a fresh `arbiter serve` per run, loaded over HTTP.
#include "arbiter/bench/serve_load.h"

#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "arbiter/base/json.h"
#include "arbiter/kubeclient/kubeclient.h"

extern char** environ;

namespace arbiter::bench {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

double Since(SteadyClock::time_point t) { return std::chrono::duration<double>(SteadyClock::now() - t).count(); }

StatusOr<int> FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Unavailable("no socket for a free port");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  if (port < 0) return Unavailable("no free loopback port");
  return port;
}

// A child process with its output in `log`; stopped (SIGTERM, then waited for) on destruction.
class Child {
 public:
  static StatusOr<std::unique_ptr<Child>> Start(const std::vector<std::string>& argv, const fs::path& log) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return Unavailable("cannot start " + argv[0] + ": " + std::strerror(rc));
    auto c = std::unique_ptr<Child>(new Child);
    c->pid_ = pid;
    return c;
  }
  ~Child() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  bool Running() const { return ::waitpid(pid_, nullptr, WNOHANG) == 0; }
  // The peak resident set (VmHWM) in MiB, 0 when unknown.
  double PeakRssMib() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    }
    return 0;
  }

 private:
  Child() = default;
  pid_t pid_ = -1;
};

// A client of the API under test (serve's plain loopback, or any kubeconfig's server, TLS and
// token included), without a rate limit. A client that cannot be made fails every request.
class Api {
 public:
  Api(const kubeclient::Config& config, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    kubeclient::ClientOptions options;
    options.user_agent = "arbiter-bench";
    options.timeout = timeout;
    auto c = kubeclient::Client::Connect(config, options);
    if (c.ok()) {
      client_ = std::move(*c);
    } else {
      error_ = c.status();
    }
  }
  StatusOr<kubeclient::Response> Get(const std::string& target) { return Send("GET", target); }
  StatusOr<kubeclient::Response> Post(const std::string& target, const std::string& body) { return Send("POST", target, body); }
  // The body of a 200 answer to GET `target`; an error otherwise.
  StatusOr<std::string> Read(const std::string& target) {
    ARBITER_ASSIGN_OR_RETURN(r, Get(target));
    if (r.status != 200) return Unavailable("GET " + target + ": HTTP " + std::to_string(r.status) + ": " + r.body.substr(0, 300));
    return r.body;
  }
  kubeclient::Client* client() { return client_.get(); }

 private:
  StatusOr<kubeclient::Response> Send(const std::string& method, const std::string& target, const std::string& body = "") {
    if (!client_) return error_;
    return client_->Send(method, target, body);
  }
  std::unique_ptr<kubeclient::Client> client_;
  Status error_ = Status::Ok();
};

// Waits until `ready` holds, polling every 100 ms.
Status WaitFor(const std::string& what, double timeout, const std::function<bool()>& ready) {
  const auto start = SteadyClock::now();
  while (!ready()) {
    if (Since(start) > timeout) return Unavailable("timed out after " + std::to_string(timeout) + " s waiting for " + what);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::Ok();
}

// POSTs `count` objects made by `make(i)` to `path` over `connections` keep-alive connections.
struct CreateTimes {
  SteadyClock::time_point first, last_ack;
};
StatusOr<CreateTimes> CreateMany(const kubeclient::Config& server, const std::string& path, size_t count, size_t connections,
                                 const std::function<Json(size_t)>& make,
                                 const std::function<void(const std::string&)>& progress) {
  std::atomic<size_t> next{0}, created{0};
  std::mutex mu;
  std::string error;
  CreateTimes t;
  t.first = SteadyClock::now();
  std::vector<std::thread> workers;
  for (size_t w = 0; w < connections; ++w) {
    workers.emplace_back([&] {
      Api client(server);
      for (size_t i = next++; i < count; i = next++) {
        auto res = client.Post(path, make(i).dump());
        if (!res.ok() || res->status != 201) {
          std::lock_guard<std::mutex> lock(mu);
          if (error.empty()) {
            error = res.ok() ? "HTTP " + std::to_string(res->status) + ": " + res->body
                             : "request failed: " + res.status().message();
          }
          next = count;  // stop every worker
          return;
        }
        if (const size_t n = ++created; n % 5000 == 0 && progress) {
          progress(std::to_string(n) + "/" + std::to_string(count) + " created at " + path);
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  t.last_ack = SteadyClock::now();
  if (!error.empty()) return Unavailable("creating objects at " + server.server + path + ": " + error);
  return t;
}

// Follows the pods of the namespace on one watch: which are bound, which are gone, by the value
// of their `bench` label.
class PodWatch {
 public:
  // Follows the pods from `resource_version`. A stream the server ends (kube-apiserver drops a
  // watcher that falls behind) is resumed from the last event's resourceVersion, as an
  // informer's is; when that is too old (410), the pods are listed again and the ones gone since
  // are counted as deleted.
  PodWatch(const kubeclient::Config& server, const std::string& ns, const std::string& resource_version)
      : api_(server, std::chrono::seconds(3600)) {
    thread_ = std::thread([this, ns, resource_version] {
      if (!api_.client()) return;
      const std::string pods = "/api/v1/namespaces/" + ns + "/pods";
      rv_ = resource_version;
      while (!stop_) {
        std::string buffer;
        bool gone = false;
        auto r = api_.client()->Stream(pods + "?watch=true&timeoutSeconds=3600&resourceVersion=" + rv_,
                                       [&](std::string_view data, const std::string&) {
                                         buffer.append(data);
                                         size_t start = 0;
                                         for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos;
                                              start = nl + 1) {
                                           gone = Line(std::string_view(buffer).substr(start, nl - start)) || gone;
                                         }
                                         buffer.erase(0, start);
                                         return !stop_ && !gone;
                                       });
        if (stop_) break;
        if (gone || (r.ok() && r->status == 410)) Relist(pods);
        if (!r.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  ~PodWatch() {
    stop_ = true;
    if (api_.client()) api_.client()->Cancel();
    if (thread_.joinable()) thread_.join();
  }
  size_t bound(const std::string& group) {
    std::lock_guard<std::mutex> lock(mu_);
    return bound_[group];
  }
  size_t deleted(const std::string& group) {
    std::lock_guard<std::mutex> lock(mu_);
    return deleted_[group];
  }
  // Of those, the ones whose last state carried the DisruptionTarget condition.
  size_t deleted_as_disrupted(const std::string& group) {
    std::lock_guard<std::mutex> lock(mu_);
    return disrupted_[group];
  }
  // When the last pod of `group` was seen bound.
  SteadyClock::time_point last_bound(const std::string& group) {
    std::lock_guard<std::mutex> lock(mu_);
    return last_bound_[group];
  }

 private:
  // Lists the pods again: those seen before and not listed now were deleted meanwhile.
  void Relist(const std::string& pods) {
    auto r = api_.client()->Send("GET", pods);
    if (!r.ok() || r->status != 200) return;
    Json list = Json::parse(r->body, nullptr, false);
    if (!list.is_object() || !list["items"].is_array()) return;
    std::set<std::string> listed;
    for (const Json& p : list["items"]) {
      if (!p.is_object()) continue;
      listed.insert(p["metadata"].value("name", ""));
      Apply("MODIFIED", p);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = known_.begin(); it != known_.end();) {
        if (listed.contains(it->first)) {
          ++it;
          continue;
        }
        ++deleted_[it->second];
        if (bound_names_.erase(it->first) > 0) --bound_[it->second];
        it = known_.erase(it);
      }
    }
    rv_ = list["metadata"].value("resourceVersion", rv_);
  }

  // One event of the stream; true for an ERROR event saying the version is gone (410).
  bool Line(std::string_view line) {
    Json e = Json::parse(line, nullptr, false);
    if (!e.is_object() || !e["object"].is_object()) return false;
    const std::string type = e.value("type", "");
    if (type == "ERROR") return e["object"].value("code", 0) == 410;
    if (type == "BOOKMARK") return false;
    const std::string rv = e["object"]["metadata"].value("resourceVersion", "");
    if (!rv.empty()) rv_ = rv;
    Apply(type, e["object"]);
    return false;
  }

  void Apply(const std::string& type, const Json& o) {
    const Json& labels = o["metadata"].value("labels", Json::object());
    const std::string group = labels.is_object() ? labels.value("bench", "") : "";
    const std::string name = o["metadata"].value("name", "");
    const bool has_node = o.contains("spec") && o["spec"].is_object() && o["spec"].value("nodeName", "") != "";
    std::lock_guard<std::mutex> lock(mu_);
    if (type == "DELETED") {
      known_.erase(name);
      ++deleted_[group];
      const Json& status = o.value("status", Json::object());
      for (const Json& c : status.value("conditions", Json::array())) {
        if (c.is_object() && c.value("type", "") == "DisruptionTarget" && c.value("status", "") == "True") {
          ++disrupted_[group];
          break;
        }
      }
      if (bound_names_.erase(name) > 0) --bound_[group];
      return;
    }
    known_[name] = group;
    if (has_node && bound_names_.insert(name).second) {
      ++bound_[group];
      last_bound_[group] = SteadyClock::now();
    }
  }

  Api api_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::set<std::string> bound_names_;
  std::map<std::string, std::string> known_;  // every pod seen and not deleted: its group
  std::string rv_;                           // where the watch resumes (the stream thread's)
  std::map<std::string, size_t> bound_, deleted_, disrupted_;
  std::map<std::string, SteadyClock::time_point> last_bound_;
  std::thread thread_;
};

// What a stuck run looks like from the API: the first unbound measured pods with their status,
// and the scheduler's queue gauges.
std::string Diagnose(Api& api) {
  std::string out;
  if (auto r = api.Get("/api/v1/namespaces/default/pods?labelSelector=bench%3Dmeasured"); r.ok() && r->status == 200) {
    Json list = Json::parse(r->body, nullptr, false);
    size_t shown = 0;
    for (const Json& p : list.is_object() ? list.value("items", Json::array()) : Json::array()) {
      if (!p.is_object() || p["spec"].value("nodeName", "") != "") continue;
      if (shown++ == 5) break;
      out += "  unbound " + p["metadata"].value("name", "") + ": " + p.value("status", Json::object()).dump() + "\n";
    }
  }
  if (auto m = api.Get("/metrics"); m.ok() && m->status == 200) {
    for (size_t at = 0; (at = m->body.find("\nscheduler_pending_pods{", at)) != std::string::npos; ++at) {
      out += "  " + m->body.substr(at + 1, m->body.find('\n', at + 1) - at - 1) + "\n";
    }
  }
  return out;
}

Json PodBody(const std::string& name, const std::string& group, const std::string& cpu, const std::string& priority_class) {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"labels", {{"bench", group}}}}},
              {"spec",
               {{"terminationGracePeriodSeconds", 0},
                {"containers",
                 {{{"name", "c"}, {"image", "pause"}, {"resources", {{"requests", {{"cpu", cpu}, {"memory", "10Mi"}}}}}}}}}}};
  if (!priority_class.empty()) pod["spec"]["priorityClassName"] = priority_class;
  return pod;
}

}  // namespace

StatusOr<ServeLoadResult> RunServeLoad(const ServeLoadOptions& o, const std::function<void(const std::string&)>& progress) {
  const bool preemption = o.scenario == "ServePreemptionBasic" || o.scenario == "SchedulePreemptionBasic";
  // Schedule*: the scheduling is done by an `arbiter schedule` process through the server's API.
  const bool external = o.scenario.rfind("Schedule", 0) == 0;
  if (preemption && o.measured_pods > o.nodes) {
    // Each preemptor needs a whole node (its four low-priority pods evicted): the surplus could
    // never be bound, and the run would only end at the binding timeout.
    return InvalidArgument("ServePreemptionBasic: --pods (" + std::to_string(o.measured_pods) +
                           " preemptors) must not exceed --nodes (" + std::to_string(o.nodes) +
                           "): each preemptor takes a whole node");
  }
  std::error_code ec;
  const fs::path dir = fs::temp_directory_path() / ("arbiter-bench-" + std::to_string(::getpid()) + "-" +
                                                     std::to_string(SteadyClock::now().time_since_epoch().count()));
  fs::create_directories(dir, ec);
  if (ec) return Unavailable("cannot create " + dir.string() + ": " + ec.message());
  struct Cleanup {
    fs::path dir;
    bool keep = false;  // a failed run's data and server log stay for inspection
    ~Cleanup() {
      std::error_code e;
      if (!keep) fs::remove_all(dir, e);
    }
  } cleanup{dir};

  // The API under test: a fresh `arbiter serve` of this run, or the kubeconfig's server.
  const bool own_server = o.kubeconfig.empty();
  kubeclient::Config server;
  std::unique_ptr<Child> etcd, child;
  if (own_server) {
    ARBITER_ASSIGN_OR_RETURN(port, FreePort());
    server.server = "http://127.0.0.1:" + std::to_string(port);
    std::vector<std::string> serve = {o.arbiter, "serve", "--listen", "127.0.0.1:" + std::to_string(port), "--data-dir",
                                      dir.string()};
    serve.insert(serve.end(), o.serve_flags.begin(), o.serve_flags.end());
    if (external) serve.push_back("--no-scheduler");
    if (o.store == "etcd") {
      ARBITER_ASSIGN_OR_RETURN(cport, FreePort());
      ARBITER_ASSIGN_OR_RETURN(pport, FreePort());
      const std::string curl = "http://127.0.0.1:" + std::to_string(cport);
      const std::string purl = "http://127.0.0.1:" + std::to_string(pport);
      auto e = Child::Start({"etcd", "--name", "bench", "--data-dir", (dir / "etcd").string(),
                             "--listen-client-urls", curl, "--advertise-client-urls", curl,
                             "--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl,
                             "--initial-cluster", "bench=" + purl},
                            dir / "etcd.log");
      if (!e.ok()) return e.status();
      etcd = std::move(*e);
      kubeclient::Config etcd_config;
      etcd_config.server = curl;
      Api probe(etcd_config);
      ARBITER_RETURN_IF_ERROR(WaitFor("etcd at " + curl, 30, [&] {
        auto r = probe.Get("/health");
        return r.ok() && r->status == 200;
      }));
      serve.insert(serve.end(), {"--store", "etcd", "--etcd-servers", curl});
    } else if (o.store != "sqlite") {
      return InvalidArgument("--store must be sqlite or etcd, not \"" + o.store + "\"");
    }
    auto started = Child::Start(serve, dir / "server.log");
    if (!started.ok()) return started.status();
    child = std::move(*started);
  } else {
    if (!external) return InvalidArgument(o.scenario + " starts its own server; --kubeconfig is for Schedule* scenarios");
    ARBITER_ASSIGN_OR_RETURN(config, kubeclient::LoadKubeconfig(o.kubeconfig));
    server = config;
  }
  Api api(server);
  ARBITER_RETURN_IF_ERROR(WaitFor("the server at " + server.server, 60, [&] {
    if (child && !child->Running()) return true;
    auto r = api.Get("/readyz");
    return r.ok() && r->status == 200;
  }));
  if (child && !child->Running()) return Unavailable("the server exited at start; its log is " + (dir / "server.log").string());
  if (own_server) {
    // With leader election (etcd) the replica schedules once it holds the lease.
    ARBITER_RETURN_IF_ERROR(WaitFor("the scheduler's leadership", 60, [&] {
      auto r = api.Get("/metrics");
      return r.ok() && r->status == 200 &&
             r->body.find("leader_election_master_status{name=\"arbiter-scheduler\"} 0") == std::string::npos;
    }));
  }
  const std::string kubeconfig = own_server ? (dir / "kubeconfig").string() : o.kubeconfig;
  std::unique_ptr<Child> scheduler;
  std::unique_ptr<httplib::Client> scheduler_api;
  if (external) {
    ARBITER_ASSIGN_OR_RETURN(sport, FreePort());
    std::vector<std::string> argv;
    if (o.scheduler == "kube") {
      // kube-scheduler with the same client rate limits (its KubeSchedulerConfiguration's
      // clientConnection; 50 and 100 are its defaults, as they are `arbiter schedule`'s).
      const fs::path config = dir / "kube-scheduler.yaml";
      std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                            << "leaderElection: {leaderElect: false}\nclientConnection:\n  kubeconfig: " << kubeconfig
                            // client-go's "no limit" is a negative QPS (0 is its default, 5)
                            << "\n  qps: " << (o.scheduler_qps == 0.0 ? -1.0 : o.scheduler_qps.value_or(50)) << "\n  burst: " << o.scheduler_burst.value_or(100)
                            << "\n";
      argv = {o.kube_scheduler, "--config", config.string(), "--bind-address", "127.0.0.1", "--secure-port",
              std::to_string(sport), "--cert-dir", (dir / "scheduler-certs").string()};
    } else if (o.scheduler == "arbiter") {
      argv = {o.arbiter, "schedule", "--kubeconfig", kubeconfig, "--leader-elect=false", "--bind-address", "127.0.0.1",
              "--secure-port", std::to_string(sport), "--cert-dir", (dir / "scheduler-certs").string()};
      if (o.scheduler_qps) argv.insert(argv.end(), {"--kube-api-qps", std::to_string(*o.scheduler_qps)});
      if (o.scheduler_burst) argv.insert(argv.end(), {"--kube-api-burst", std::to_string(*o.scheduler_burst)});
    } else {
      return InvalidArgument("--scheduler must be arbiter or kube, not \"" + o.scheduler + "\"");
    }
    argv.insert(argv.end(), o.scheduler_flags.begin(), o.scheduler_flags.end());
    auto s = Child::Start(argv, dir / "scheduler.log");
    if (!s.ok()) return s.status();
    scheduler = std::move(*s);
    scheduler_api = std::make_unique<httplib::Client>("https://127.0.0.1:" + std::to_string(sport));
    scheduler_api->enable_server_certificate_verification(false);
    scheduler_api->set_connection_timeout(2);
  }
  // The scheduler has listed what there is (its readiness), so the measured pods find it running.
  auto scheduler_ready = [&] {
    if (!external) return true;
    if (!scheduler->Running()) return true;
    auto r = scheduler_api->Get("/readyz");
    return r && r->status == 200;
  };
  const std::string scheduler_name = o.scheduler == "kube" ? "kube-scheduler" : "arbiter schedule";
  ARBITER_RETURN_IF_ERROR(WaitFor(scheduler_name + " to be ready", 60, scheduler_ready));
  if (external && !scheduler->Running()) {
    cleanup.keep = true;
    return Unavailable(scheduler_name + " exited at start; its log is " + (dir / "scheduler.log").string());
  }

  progress("creating " + std::to_string(o.nodes) + " nodes");
  ARBITER_RETURN_IF_ERROR(CreateMany(server, "/api/v1/nodes", o.nodes, o.connections, [](size_t i) {
    return Json{{"apiVersion", "v1"},
                {"kind", "Node"},
                {"metadata", {{"name", "node-" + std::to_string(i)}}},
                {"status", {{"allocatable", {{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}}},
                            {"capacity", {{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}}}}}};
  }, progress).status());
  if (preemption) {
    for (const auto& [name, value] : {std::pair<std::string, int>{"bench-low", 10}, {"bench-high", 1000}}) {
      auto r = api.Post("/apis/scheduling.k8s.io/v1/priorityclasses",
                        Json{{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"},
                             {"metadata", {{"name", name}}}, {"value", value}}.dump());
      if (!r.ok() || r->status != 201) return Unavailable("creating PriorityClass " + name + " failed");
    }
  }
  // The simulated nodes report Ready once; wait for that before loading.
  ARBITER_RETURN_IF_ERROR(WaitFor("the nodes to be Ready", o.timeout_seconds, [&] {
    auto r = api.Get("/api/v1/nodes");
    if (!r.ok() || r->status != 200) return false;
    Json list = Json::parse(r->body, nullptr, false);
    if (!list.is_object() || !list["items"].is_array()) return false;
    size_t ready = 0;
    for (const auto& n : list["items"]) {
      for (const auto& c : n["status"].value("conditions", Json::array())) {
        if (c.value("type", "") == "Ready" && c.value("status", "") == "True") ++ready;
      }
    }
    return ready >= o.nodes;
  }));

  auto list = api.Get("/api/v1/namespaces/default/pods?limit=1");
  if (!list.ok() || list->status != 200) return Unavailable("listing pods on " + server.server + " failed");
  const std::string rv = Json::parse(list->body)["metadata"].value("resourceVersion", "0");
  PodWatch watch(server, "default", rv);

  const size_t initial = preemption ? 4 * o.nodes : o.initial_pods;
  const std::string initial_group = preemption ? "low" : "initial";
  if (initial > 0) {
    progress("creating " + std::to_string(initial) + " " + initial_group + " pods");
    ARBITER_RETURN_IF_ERROR(CreateMany(server, "/api/v1/namespaces/default/pods", initial, o.connections, [&](size_t i) {
      return preemption ? PodBody("low-" + std::to_string(i), "low", "1", "bench-low")
                        : PodBody("initial-" + std::to_string(i), "initial", "10m", "");
    }, progress).status());
    ARBITER_RETURN_IF_ERROR(WaitFor("the " + initial_group + " pods to be bound", o.timeout_seconds,
                                    [&] { return watch.bound(initial_group) >= initial; }));
  }

  // The polling client of --poll-unbound, for the measured phase.
  std::atomic<bool> polling{o.poll_unbound_seconds > 0};
  size_t polls = 0;
  double slowest_poll = 0;
  std::thread poller;
  if (polling) {
    poller = std::thread([&] {
      Api poll_api(server);
      const auto every = std::chrono::duration<double>(o.poll_unbound_seconds);
      while (polling) {
        const auto began = std::chrono::steady_clock::now();
        (void)poll_api.Get("/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3D");
        const auto took = std::chrono::steady_clock::now() - began;
        ++polls;
        slowest_poll = std::max(slowest_poll, std::chrono::duration<double>(took).count());
        if (took < every) std::this_thread::sleep_for(every - took);
      }
    });
  }
  struct StopPolling {
    std::atomic<bool>& polling;
    std::thread& poller;
    ~StopPolling() {
      polling = false;
      if (poller.joinable()) poller.join();
    }
  } stop_polling{polling, poller};
  progress("creating " + std::to_string(o.measured_pods) + " measured pods");
  ARBITER_ASSIGN_OR_RETURN(times, CreateMany(server, "/api/v1/namespaces/default/pods", o.measured_pods, o.connections,
                                             [&](size_t i) {
                                               return preemption ? PodBody("high-" + std::to_string(i), "measured", "3970m", "bench-high")
                                                                 : PodBody("pod-" + std::to_string(i), "measured", "10m", "");
                                             },
                                             progress));
  if (Status st = WaitFor("the measured pods to be bound", o.timeout_seconds,
                          [&] { return watch.bound("measured") >= o.measured_pods; });
      !st.ok()) {
    cleanup.keep = true;
    return Unavailable(st.message() + " (" + std::to_string(watch.bound("measured")) + " of " +
                       std::to_string(o.measured_pods) + " bound)\n" + Diagnose(api) +
                       "the server's data directory and log are kept in " + dir.string());
  }
  polling = false;
  if (poller.joinable()) poller.join();
  ServeLoadResult r;
  r.polls = polls;
  r.slowest_poll_seconds = slowest_poll;
  const auto done = watch.last_bound("measured");
  r.created = o.measured_pods;
  const double create_seconds = std::chrono::duration<double>(times.last_ack - times.first).count();
  r.creates_per_second = create_seconds > 0 ? static_cast<double>(o.measured_pods) / create_seconds : 0;
  r.lag_seconds = std::max(0.0, std::chrono::duration<double>(done - times.last_ack).count());
  const double total = std::chrono::duration<double>(done - times.first).count();
  r.bound_per_second = total > 0 ? static_cast<double>(o.measured_pods) / total : 0;
  r.victims_deleted = watch.deleted("low");
  r.victims_with_condition = watch.deleted_as_disrupted("low");
  if (preemption) {
    // Every victim's Preempted event, counted once the recorder has written what it queued.
    (void)WaitFor("the victims' Preempted events", 30, [&] {
      auto events = api.Get("/api/v1/namespaces/default/events?fieldSelector=reason%3DPreempted");
      if (!events.ok() || events->status != 200) return false;
      const Json found = Json::parse(events->body, nullptr, false);
      r.preempted_events = found.is_object() && found["items"].is_array() ? found["items"].size() : 0;
      return r.preempted_events >= r.victims_deleted;
    });
  }
  r.peak_rss_mib = child ? child->PeakRssMib() : 0;
  if (external) r.scheduler_peak_rss_mib = scheduler->PeakRssMib();
  std::string metrics;
  if (!external) {
    if (auto m = api.Get("/metrics"); m.ok() && m->status == 200) metrics = m->body;
  } else if (auto m = scheduler_api->Get("/metrics"); m && m->status == 200) {
    metrics = m->body;  // kube-scheduler's asks for authorization: its counters stay 0
  }
  if (!metrics.empty()) {
    auto counter = [&](const std::string& series) -> uint64_t {
      const size_t at = metrics.find("\n" + series + " ");
      if (at == std::string::npos) return 0;
      return std::strtoull(metrics.c_str() + at + series.size() + 2, nullptr, 10);
    };
    r.attempts_scheduled = counter("scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"scheduled\"}");
    r.attempts_unschedulable =
        counter("scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"unschedulable\"}");
    r.preemption_attempts = counter("scheduler_preemption_attempts_total");
    r.loop_writes = counter("arbiter_control_loop_store_writes_total");
    r.loop_batches = counter("arbiter_control_loop_store_batches_total");
  }
  return r;
}

}  // namespace arbiter::bench
