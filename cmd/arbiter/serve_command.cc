// `arbiter serve`: opens the store, starts the HTTP API and the control loop, and shuts down
// cleanly on SIGTERM or SIGINT.
#include "serve_command.h"

#include "log_line.h"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <condition_variable>
#include <mutex>
#include <ostream>
#include <pthread.h>
#include <sys/resource.h>
#include <thread>
#include <sstream>
#include <unistd.h>

#include "arbiter/api/admission.h"
#include "arbiter/api/endpoint.h"
#include "arbiter/base/dir_lock.h"
#include "arbiter/base/heap.h"
#include "arbiter/store/body.h"
#include "arbiter/api/http.h"
#include "arbiter/controllers/controller_manager.h"
#include "arbiter/controlplane/control_loop.h"
#include "arbiter/controlplane/leader_election.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/store/group_commit.h"
#include "arbiter/ui/dashboard.h"

namespace arbiter::cmd {

int RunServeCommand(const ServeFlags& flags, std::ostream& out, std::ostream& err) {
  // Block the shutdown signals in every thread, before any starts (the stores start threads of
  // their own, which would otherwise take a signal's default action and end the process without
  // a word); one thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  (void)out;
  auto listen = api::ParseListenAddress(flags.listen);
  if (!listen.ok()) {
    err << "arbiter serve: " << listen.status().message() << "\n";
    return 2;
  }
  api::HttpOptions http;
  http.host = listen->host;
  http.port = listen->port;
  if (flags.tls_cert_file.empty() != flags.tls_key_file.empty()) {
    err << "arbiter serve: --tls-cert-file and --tls-private-key-file go together\n";
    return 2;
  }
  http.tls_cert_file = flags.tls_cert_file;
  http.tls_key_file = flags.tls_key_file;
  if (!flags.token_auth_file.empty()) {
    auto tokens = api::LoadTokenFile(flags.token_auth_file);
    if (!tokens.ok()) {
      err << "arbiter serve: " << tokens.status().message() << "\n";
      return 2;
    }
    http.tokens = std::move(*tokens);
  } else if (!api::IsLoopbackHost(http.host)) {
    err << "arbiter serve: without --token-auth-file the API is served on loopback only (not " << http.host << ")\n";
    return 2;
  }
  // The data directory holds the SQLite store and the kubeconfig; one server per directory.
  std::error_code dir_ec;
  // The data directory holds the store (Secrets among it): the owner's alone (0700), as etcd's
  // is. One serve creates is made so; one that exists is left as it is (it may be shared), and
  // its store files are 0600 either way (OpenSqliteStore).
  const bool existed = std::filesystem::exists(flags.data_dir, dir_ec);
  if (!existed && std::filesystem::create_directories(flags.data_dir, dir_ec) && !dir_ec) {
    std::filesystem::permissions(flags.data_dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace, dir_ec);
  }
  if (dir_ec) {
    err << "arbiter serve: --data-dir " << flags.data_dir << ": " << dir_ec.message() << "\n";
    return 2;
  }
  auto dir_lock = DirLock::Acquire(flags.data_dir);
  if (!dir_lock.ok()) {
    err << "arbiter serve: --data-dir " << dir_lock.status().message() << "\n";
    return 1;
  }
  std::error_code perm_ec;
  if (existed && (std::filesystem::status(flags.data_dir, perm_ec).permissions() &
                  (std::filesystem::perms::group_all | std::filesystem::perms::others_all)) != std::filesystem::perms::none) {
    Log(err, 'W', "data directory is open to others",
        "dir=\"" + flags.data_dir + "\" detail=\"the store's files are 0600; 0700 is recommended for the directory\"");
  }

  std::unique_ptr<store::Store> st;
  if (flags.store == "memory") {
    st = store::NewMemoryStore();
  } else if (flags.store == "sqlite") {
    auto opened = store::OpenSqliteStore(flags.data_dir + "/arbiter.db", flags.fsync);
    if (!opened.ok()) {
      err << "arbiter serve: " << opened.status().message() << "\n";
      return 2;
    }
    // The API's concurrent writes share transactions (each keeps its own revision and terms).
    st = std::make_unique<store::GroupCommit>(std::move(*opened));
  } else if (flags.store == "etcd") {
    store::EtcdOptions eo;
    std::stringstream servers(flags.etcd_servers);
    for (std::string url; std::getline(servers, url, ',');) {
      if (!url.empty()) eo.endpoints.push_back(url);
    }
    if (eo.endpoints.empty()) {
      err << "arbiter serve: --store etcd needs --etcd-servers URL[,URL...]\n";
      return 2;
    }
    eo.prefix = flags.etcd_prefix;
    eo.log = [&err](const std::string& line) { Log(err, 'W', "etcd", "detail=\"" + line + "\""); };
    auto opened = store::OpenEtcdStore(eo);
    if (!opened.ok()) {
      err << "arbiter serve: " << opened.status().message() << "\n";
      return 2;
    }
    // No group commit: every write is an etcd transaction of its own (a revision of its own), and
    // concurrent requests send theirs at once, which etcd commits together in one raft batch.
    st = std::move(*opened);
  } else {
    err << "arbiter serve: --store " << flags.store << ": want sqlite, memory or etcd\n";
    return 2;
  }
  const bool elect = flags.leader_elect == "true" || (flags.leader_elect == "auto" && flags.store == "etcd");
  // Every connection and watch holds a descriptor: use all the system grants (the soft limit is
  // often 1024, the hard one far higher).
  if (rlimit nofile{}; getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  // A client that goes away mid-response (a watch ended with ^C, a timed-out request) must cost
  // that connection only: writes to it fail with EPIPE instead of killing the process.
  std::signal(SIGPIPE, SIG_IGN);

  SystemClock clock;
  api::ApiServer::Options api_options;
  api_options.sync_list_caches = true;
  api::ApiServer server(*st, clock, flags.seed ^ static_cast<uint64_t>(clock.Now()), api_options);
  api::InstallAdmission(server);
  // The lists users make most read caches that exist from the start: they then share every
  // object with the watch history and the informers instead of listing a copy of their own.
  if (Status warm = server.PrepareListCaches({"pods", "nodes"}); !warm.ok()) {
    err << "arbiter serve: " << warm.message() << "\n";
    return 1;
  }
  // The simulated containers' logs: the node simulator writes them, pods/log serves them.
  api::ContainerLogs container_logs;
  server.SetContainerLogs(&container_logs);
  api::Authorizer authorizer(*st);
  if (!http.tokens.empty()) {
    http.authorizer = &authorizer;
    server.SetAuthorizer(&authorizer);
  }
  if (Status b = api::EnsureBootstrapObjects(server); !b.ok()) {
    err << "arbiter serve: " << b.message() << "\n";
    return 1;
  }
  // Data written before today's rules: groups' priorities decided again, refused names reported.
  auto audit = api::AuditStoredObjects(*st);
  if (!audit.ok()) {
    err << "arbiter serve: auditing the stored objects: " << audit.status().message() << "\n";
    return 1;
  }
  for (const std::string& line : *audit) Log(err, 'W', "stored object", "detail=" + nlohmann::json(line).dump());
  controlplane::LoopOptions lo;
  if (!flags.kubelet_config.empty()) {
    auto file = manifest::ReadInputFile(flags.kubelet_config);
    if (!file.ok()) {
      err << "arbiter serve: --kubelet-config: " << file.status().message() << "\n";
      return 2;
    }
    manifest::LoadResult loaded = manifest::DecodeEach({*file});
    if (!loaded.ok() || !loaded.objects.kubelet_config) {
      for (const auto& e : loaded.errors) err << "arbiter serve: " << e << "\n";
      if (loaded.ok()) err << "arbiter serve: --kubelet-config " << flags.kubelet_config << ": no KubeletConfiguration in it\n";
      return 2;
    }
    lo.kubelet = loaded.objects.kubelet_config->object;
  }
  if (!flags.config.empty()) {
    auto profile = manifest::LoadSchedulerConfigFile("--config", flags.config);
    if (!profile.ok()) {
      err << "arbiter serve: " << profile.status().message() << "\n";
      return 2;
    }
    lo.scheduler = *std::move(profile);
  }
  lo.simulate_nodes = !flags.no_simulate_nodes;
  lo.nodes.logs = &container_logs;
  {
    auto run = ParseGoDurationNanos(flags.default_run_duration);
    if (!run.ok() || *run < 0) {
      err << "arbiter serve: --default-run-duration: \"" << flags.default_run_duration
          << "\" is not a duration (30s, 2m, 1h; 0 runs pods until they are deleted)\n";
      return 2;
    }
    lo.nodes.default_run_duration = *run / 1000;
  }
  {
    auto age = ParseGoDurationNanos(flags.tree_cache_min_age);
    if (!age.ok() || *age < 0) {
      err << "arbiter serve: --tree-cache-min-age: \"" << flags.tree_cache_min_age
          << "\" is not a duration (3s, 500ms, 0)\n";
      return 2;
    }
    store::SetBodyTreeMinAge(std::chrono::milliseconds(*age / 1000000));
    store::SetBodyTreeBudget(flags.tree_cache_mib << 20);
    store::SetBodyTextBudget(flags.hot_text_mib << 20);
  }
  lo.seed = flags.seed;
  lo.background_events = true;
  lo.node_thread = false;  // measured slower for preemption on 2 cores (docs/benchmarks.md)
  lo.log = [&err](const std::string& msg, const std::string& kv) { Log(err, 'I', msg, kv); };
  // kube-controller-manager's part: the controllers write through this server's own API.
  controllers::ApiClient controller_client(server, "system:kube-controller-manager");
  controllers::ControllerManager controller_manager(clock, controller_client, lo.log);
  lo.schedule = !flags.no_scheduler;
  // What the dashboard (/ui/) reads of the scheduler: its queue on request, its preemptions.
  controlplane::SchedulerActivity activity;
  if (lo.schedule) lo.activity = &activity;
  if (!flags.no_controllers) {
    controllers::AddDefaultControllers(controller_manager);
    lo.controllers = &controller_manager;
  }
  // The loop's wake-up, declared before the loop: store threads may call its notifier until the
  // loop (and its informers) are gone.
  std::mutex wake_mu;
  std::condition_variable wake_cv;
  bool woken = false;
  controlplane::ControlLoop loop(*st, clock, lo);
  // With a shared store only the holder of the Lease schedules and simulates nodes; every
  // replica serves the API.
  std::unique_ptr<controlplane::LeaderElector> elector;
  if (elect) {
    controlplane::LeaderElectionOptions le;
    if (flags.identity.empty()) {
      char host[256] = {};
      gethostname(host, sizeof host - 1);
      le.identity = std::string(host) + "_" + std::to_string(getpid());
    } else {
      le.identity = flags.identity;
    }
    // Without the scheduler the replicas elect for the nodes and controllers only, under a Lease
    // of their own: `arbiter schedule` takes kube-system/arbiter-scheduler.
    if (flags.no_scheduler) le.name = "arbiter-controllers";
    le.log = lo.log;
    elector = std::make_unique<controlplane::LeaderElector>(*st, clock, le);
  }
  http.log = [&err](const std::string& msg, const std::string& kv) { Log(err, 'W', msg, kv); };
  // The dashboard outlives the HTTP server, whose workers call it.
  ui::DashboardService dashboard(*st, clock, lo.schedule ? &activity : nullptr, lo.scheduler.scheduler_name);
  api::HttpServer httpd(server, http);
  auto dashboard_route = [&dashboard](const api::Request& r) {
    ui::DashboardService::Answer a = dashboard.Get(r.path);
    return api::Response{a.code, std::move(a.content_type), std::move(a.body), nullptr, {}, nullptr};
  };
  httpd.AddRoute("/ui", dashboard_route);
  // The server's root: a browser is led to the dashboard; a client gets kube-apiserver's list
  // of paths.
  httpd.AddRoute(
      "/",
      [](const api::Request& r) {
        auto accept = r.headers.find("accept");
        if (accept != r.headers.end() && accept->second.find("text/html") != std::string::npos) {
          return api::Response{200, "text/html; charset=utf-8",
                               "<!doctype html><meta http-equiv=\"refresh\" content=\"0; url=/ui/\">"
                               "<title>Arbiter</title><a href=\"/ui/\">Arbiter's dashboard</a>\n",
                               nullptr,
                               {},
                               nullptr};
        }
        const nlohmann::json paths = {{"paths", {"/api", "/api/v1", "/apis", "/healthz", "/livez", "/metrics",
                                                 "/openapi/v2", "/openapi/v3", "/readyz", "/ui/", "/version"}}};
        return api::Response{200, "application/json", paths.dump(2) + "\n", nullptr, {}, nullptr};
      },
      /*exact=*/true);
  httpd.AddRoute("/apis/arbiter.dev/", dashboard_route);
  std::atomic<bool> loop_healthy{true};
  std::atomic<bool> leading_now{false};  // the control thread's view, for the HTTP threads
  httpd.AddReadyCheck("scheduler", [&] { return loop_healthy.load(); });
  httpd.SetMetrics([&] {
    std::string t = loop.MetricsText();
    if (elector) {
      t += "# HELP leader_election_master_status Whether this replica holds the lease (1) or not (0).\n"
           "# TYPE leader_election_master_status gauge\n"
           "leader_election_master_status{name=\"" + std::string(flags.no_scheduler ? "arbiter-controllers" : "arbiter-scheduler") + "\"} " +
           std::string(leading_now.load() ? "1" : "0") + "\n";
    }
    return t;
  });
  if (Status b = httpd.Bind(); !b.ok()) {
    err << "arbiter serve: " << b.message() << "\n";
    return 1;
  }
  // A kubeconfig of the server's own, so that kubectl reaches this server and no other cluster.
  const std::string kubeconfig = std::filesystem::absolute(flags.data_dir + "/kubeconfig").lexically_normal().string();
  {
    api::KubeconfigOptions kc;
    api::ListenAddress client = *listen;
    if (api::IsWildcardHost(client.host)) client.host = client.host.find(':') != std::string::npos ? "::1" : "127.0.0.1";
    kc.server = std::string(http.tls_cert_file.empty() ? "http://" : "https://") + client.AuthorityWithPort(httpd.port());
    if (!http.tls_cert_file.empty()) kc.ca_file = std::filesystem::absolute(http.tls_cert_file).lexically_normal().string();
    // The first administrator's token (system:masters), else the first token of the file.
    if (!http.tokens.empty()) {
      auto admin = std::find_if(http.tokens.begin(), http.tokens.end(),
                                [](const auto& t) { return t.second.groups.contains("system:masters"); });
      kc.token = (admin != http.tokens.end() ? admin : http.tokens.begin())->first;
    }
    if (Status w = api::WritePrivateFile(kubeconfig, api::KubeconfigYaml(kc)); !w.ok()) {
      err << "arbiter serve: " << w.message() << "\n";
      return 1;
    }
  }
  Log(err, 'I', "Serving", "address=\"" + listen->AuthorityWithPort(httpd.port()) + "\" store=\"" + flags.store +
                               "\" dataDir=\"" + flags.data_dir + "\" tls=" + (http.tls_cert_file.empty() ? "false" : "true") +
                               " authentication=" + (http.tokens.empty() ? "false" : "true") + " leaderElection=" + (elect ? "true" : "false"));
  {
    api::ListenAddress browse = *listen;
    if (api::IsWildcardHost(browse.host)) browse.host = browse.host.find(':') != std::string::npos ? "::1" : "127.0.0.1";
    const std::string url = std::string(http.tls_cert_file.empty() ? "http://" : "https://") +
                            browse.AuthorityWithPort(httpd.port()) + "/ui/";
    Log(err, 'I', "The dashboard: " + url, "url=\"" + url + "\"");
  }
  Log(err, 'I', "kubectl reaches this server with its own kubeconfig: export KUBECONFIG=" + kubeconfig,
      "kubeconfig=\"" + kubeconfig + "\"");
  std::atomic<bool> stop{false};
  // The loop runs a pass when something it watches changed (woken by the informers' watches),
  // and at least every loop_millis (leases, heartbeats, timers). Passes start at least
  // kMinPassInterval apart, so that a burst of writes is taken in one pass.
  constexpr auto kMinPassInterval = std::chrono::milliseconds(20);
  auto wake = [&] {
    {
      std::lock_guard<std::mutex> lk(wake_mu);
      woken = true;
    }
    wake_cv.notify_one();
  };
  loop.SetChangeNotifier(wake);
  activity.SetWake(wake);
  auto wait_for_news = [&](std::chrono::steady_clock::time_point pass_start) {
    std::this_thread::sleep_until(pass_start + kMinPassInterval);
    std::unique_lock<std::mutex> lk(wake_mu);
    wake_cv.wait_for(lk, std::chrono::milliseconds(flags.loop_millis), [&] { return woken || stop.load(); });
    woken = false;
  };
  std::thread control([&] {
    std::string last_error;
    auto last_release = std::chrono::steady_clock::now();
    while (!stop) {
      const auto pass_start = std::chrono::steady_clock::now();
      if (pass_start - last_release >= std::chrono::seconds(5)) {
        store::TrimBodyTrees();                       // the trees of the last burst, once old
        (void)ReleaseHeldMemory(size_t{64} << 20);  // the heap shrinks as the tree cache drops trees
        last_release = pass_start;
      }
      if (elector) {
        elector->Tick();
        leading_now = elector->IsLeader();
        if (!leading_now) {
          loop.Pause();
          std::this_thread::sleep_for(std::chrono::milliseconds(flags.loop_millis));
          continue;
        }
      }
      loop_healthy = RunPassAndReport(loop, err, "Control loop pass failed", last_error).ok();
      wait_for_news(pass_start);
    }
  });
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    Log(err, 'I', "Shutting down", std::string("signal=\"") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + "\"");
    stop = true;
    httpd.Stop();
  });
  httpd.Serve();
  stop = true;
  control.join();
  if (waiter.joinable()) {
    pthread_kill(waiter.native_handle(), SIGTERM);
    waiter.join();
  }
  Log(err, 'I', "Stopped");
  return 0;
}

}  // namespace arbiter::cmd
