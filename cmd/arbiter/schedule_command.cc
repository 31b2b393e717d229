// `arbiter schedule`: the control loop's live scheduler over the Kubernetes API store, leader
// election through a Lease, and the health and metrics endpoints; shuts down cleanly on SIGTERM
// or SIGINT.
#include "schedule_command.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <ostream>
#include <pthread.h>
#include <thread>

#include "arbiter/api/http.h"
#include "arbiter/controlplane/control_loop.h"
#include "arbiter/controlplane/leader_election.h"
#include "arbiter/kubeclient/kube_store.h"
#include "arbiter/manifest/loader.h"
#include "log_line.h"

namespace arbiter::cmd {

namespace {

// The profile: a KubeSchedulerConfiguration file's, with --scheduler-name over its name.
StatusOr<model::SchedulerConfig> LoadProfile(const ScheduleFlags& flags) {
  model::SchedulerConfig config;
  if (!flags.config.empty()) {
    ARBITER_ASSIGN_OR_RETURN(loaded, manifest::LoadSchedulerConfigFile("--config", flags.config));
    config = std::move(loaded);
  }
  if (!flags.scheduler_name.empty()) config.scheduler_name = flags.scheduler_name;
  return config;
}

StatusOr<kubeclient::Config> ClientConfig(const ScheduleFlags& flags) {
  kubeclient::Config c;
  if (!flags.kubeconfig.empty()) {
    auto loaded = kubeclient::LoadKubeconfig(flags.kubeconfig, flags.context);
    if (!loaded.ok()) return loaded.status();
    c = *loaded;
  } else if (flags.master.empty()) {
    auto in_cluster = kubeclient::InClusterConfig();
    if (!in_cluster.ok()) return in_cluster.status();
    c = *in_cluster;
  }
  if (!flags.master.empty()) c.server = flags.master;
  return c;
}

Duration Seconds(double s) { return static_cast<Duration>(s * static_cast<double>(kSecond)); }

}  // namespace

int RunScheduleCommand(const ScheduleFlags& flags, std::ostream& out, std::ostream& err) {
  (void)out;
  const std::string command = flags.simulate_nodes ? "arbiter nodes" : "arbiter schedule";
  auto fail = [&](const std::string& message, int code) {
    err << command << ": " << message << "\n";
    return code;
  };
  if (flags.kube_api_content_type != "application/json" &&
      flags.kube_api_content_type != "application/vnd.kubernetes.protobuf") {
    return fail("--kube-api-content-type " + flags.kube_api_content_type +
                    ": want application/json or application/vnd.kubernetes.protobuf",
                2);
  }
  if (flags.tls_cert_file.empty() != flags.tls_key_file.empty()) {
    return fail("--tls-cert-file and --tls-private-key-file go together", 2);
  }
  if (!(flags.renew_deadline < flags.lease_duration) || !(flags.retry_period > 0) || !(flags.renew_deadline > 0)) {
    return fail("--leader-elect-renew-deadline must be above 0 and below --leader-elect-lease-duration, and "
                "--leader-elect-retry-period above 0",
                2);
  }
  auto profile = LoadProfile(flags);
  if (!profile.ok()) return fail(profile.status().message(), 2);
  auto client = ClientConfig(flags);
  if (!client.ok()) return fail(client.status().message(), 2);

  // Every request, one line each, for whoever wants to see what the scheduler asks of the server.
  std::mutex request_log_mu;
  std::ofstream request_log;
  if (!flags.request_log.empty()) {
    request_log.open(flags.request_log, std::ios::app);
    if (!request_log) return fail("--request-log " + flags.request_log + ": cannot open it for writing", 2);
  }

  kubeclient::KubeStoreOptions ko;
  ko.config = *client;
  ko.qps = flags.kube_api_qps;
  ko.burst = flags.kube_api_burst;
  ko.protobuf = flags.kube_api_content_type == "application/vnd.kubernetes.protobuf";
  if (flags.simulate_nodes) ko.user_agent = "arbiter-nodes";
  ko.log = [&err](const std::string& line) { Log(err, 'W', "API client", "detail=\"" + line + "\""); };
  if (request_log.is_open()) {
    const bool bodies = flags.request_log_bodies;
    ko.on_request = [&, bodies](const std::string& method, const std::string& target, const std::string& body) {
      std::string line = method + ' ' + target;
      if (bodies && !body.empty()) {
        // The body after a tab, on the same line: JSON as sent (one line), protobuf by its size.
        const bool json = body.front() == '{' && body.find('\n') == std::string::npos;
        line += '\t' + (json ? body : "<" + std::to_string(body.size()) + " bytes of protobuf>");
      }
      std::lock_guard<std::mutex> lock(request_log_mu);
      request_log << line << '\n';
      request_log.flush();
    };
  }
  auto st = kubeclient::OpenKubeStore(ko);
  if (!st.ok()) return fail(st.status().message(), 1);

  std::signal(SIGPIPE, SIG_IGN);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  SystemClock clock;
  controlplane::LoopOptions lo;
  // `arbiter schedule`: the cluster's kubelets report. `arbiter nodes`: it is the kubelets.
  lo.simulate_nodes = flags.simulate_nodes;
  lo.schedule = !flags.simulate_nodes;
  if (flags.simulate_nodes) {
    auto run = ParseGoDurationNanos(flags.default_run_duration);
    if (!run.ok() || *run < 0) {
      return fail("--default-run-duration: \"" + flags.default_run_duration +
                      "\" is not a duration (30s, 2m, 1h; 0 runs pods until they are deleted)",
                  2);
    }
    lo.nodes.default_run_duration = *run / 1000;
  }
  lo.scheduler = *profile;
  lo.expire_events = false;  // the API server's TTL
  lo.background_events = true;
  lo.seed = flags.seed;
  lo.log = [&err](const std::string& msg, const std::string& kv) { Log(err, 'I', msg, kv); };
  // The loop's wake-up, declared before the loop: the watches' threads call its notifier until
  // the loop (and its informers) are gone.
  std::atomic<bool> stop{false};
  std::mutex wake_mu;
  std::condition_variable wake_cv;
  bool woken = false;
  controlplane::ControlLoop loop(**st, clock, lo);

  std::unique_ptr<controlplane::LeaderElector> elector;
  if (flags.leader_elect) {
    controlplane::LeaderElectionOptions le;
    if (flags.identity.empty()) {
      char host[256] = {};
      gethostname(host, sizeof host - 1);
      le.identity = std::string(host) + "_" + std::to_string(getpid());
    } else {
      le.identity = flags.identity;
    }
    le.ns = flags.lease_namespace;
    le.name = flags.lease_name;
    le.lease_duration = Seconds(flags.lease_duration);
    le.renew_deadline = Seconds(flags.renew_deadline);
    le.retry_period = Seconds(flags.retry_period);
    le.log = lo.log;
    elector = std::make_unique<controlplane::LeaderElector>(**st, clock, le);
  }

  // /healthz, /readyz, /livez and /metrics on the secure port, as kube-scheduler serves them.
  // What the HTTP threads read: set by the control thread.
  std::atomic<bool> synced{false}, loop_healthy{true}, leading_now{false};
  std::unique_ptr<api::HttpServer> httpd;
  if (flags.secure_port > 0) {
    api::HttpOptions http;
    http.host = flags.bind_address;
    http.port = flags.secure_port;
    http.worker_threads = 1;
    http.tls_cert_file = flags.tls_cert_file;
    http.tls_key_file = flags.tls_key_file;
    if (http.tls_cert_file.empty()) {
      // kube-scheduler's --cert-dir: a self-signed certificate when none is given.
      const std::string dir = flags.cert_dir.empty() ? std::filesystem::temp_directory_path().string() + "/arbiter-schedule-" +
                                                           std::to_string(getpid())
                                                     : flags.cert_dir;
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      http.tls_cert_file = dir + "/arbiter-scheduler.crt";
      http.tls_key_file = dir + "/arbiter-scheduler.key";
      if (Status s = api::WriteSelfSignedCertificate(flags.bind_address, http.tls_cert_file, http.tls_key_file);
          !s.ok()) {
        return fail("--cert-dir " + dir + ": " + s.message(), 1);
      }
    }
    httpd = std::make_unique<api::HttpServer>(http);
    httpd->AddReadyCheck("sched-handler-sync", [&] { return synced.load(); }, /*healthz=*/false);
    httpd->AddReadyCheck("scheduler", [&] { return loop_healthy.load(); });
    httpd->SetMetrics([&] {
      std::string t = loop.MetricsText();
      if (elector) {
        t += "# HELP leader_election_master_status Whether this replica holds the lease (1) or not (0).\n"
             "# TYPE leader_election_master_status gauge\n"
             "leader_election_master_status{name=\"" +
             flags.lease_name + "\"} " + std::string(leading_now.load() ? "1" : "0") + "\n";
      }
      return t;
    });
    if (Status b = httpd->Bind(); !b.ok()) return fail(b.message(), 1);
  }
  Log(err, 'I', flags.simulate_nodes ? "Simulating nodes" : "Scheduling",
      "server=\"" + client->server + "\" schedulerName=\"" + profile->scheduler_name +
                                  "\" leaderElection=" + (elector ? "true" : "false") +
                                  " qps=" + std::to_string(flags.kube_api_qps) +
                                  " burst=" + std::to_string(flags.kube_api_burst) +
                                  (httpd ? " securePort=" + std::to_string(httpd->port()) : ""));

  constexpr auto kMinPassInterval = std::chrono::milliseconds(20);
  loop.SetChangeNotifier([&] {
    {
      std::lock_guard<std::mutex> lk(wake_mu);
      woken = true;
    }
    wake_cv.notify_one();
  });
  // Leader election on a thread of its own, so that the lease is renewed however long a pass
  // takes (a pass's writes wait for their rate limit). Losing the lease ends the process, as it
  // ends kube-scheduler: no write of a former leader goes out after another replica took over,
  // and the restarted process comes back as a standby.
  std::thread elect;
  if (elector) {
    elect = std::thread([&] {
      bool led = false;
      while (!stop) {
        try {
          elector->Tick();
        } catch (const std::exception& e) {
          Log(err, 'E', "Leader election failed", std::string("err=\"") + e.what() + "\"");
        }
        const bool now = elector->IsLeader();
        if (led && !now) {
          Log(err, 'E', "Leadership lost: exiting", "lease=\"" + flags.lease_namespace + "/" + flags.lease_name + "\"");
          std::_Exit(1);
        }
        if (!led && now) {
          Log(err, 'I', flags.simulate_nodes ? "Leading: simulating nodes" : "Leading: scheduling",
              "identity=\"" + elector->identity() + "\"");
        }
        led = now;
        leading_now = now;
        wake_cv.notify_all();
        std::unique_lock<std::mutex> lk(wake_mu);
        wake_cv.wait_for(lk, std::chrono::milliseconds(100), [&] { return stop.load(); });
      }
    });
  }
  std::thread control([&] {
    std::string last_error;
    while (!stop) {
      const auto pass_start = std::chrono::steady_clock::now();
      if (elector && !leading_now) {
        std::unique_lock<std::mutex> lk(wake_mu);
        wake_cv.wait_for(lk, std::chrono::milliseconds(flags.loop_millis), [&] { return stop.load(); });
        continue;
      }
      const Status s = RunPassAndReport(loop, err, flags.simulate_nodes ? "Node simulation pass failed" : "Scheduling pass failed",
                                        last_error);
      loop_healthy = s.ok();
      if (s.ok()) synced = true;
      std::this_thread::sleep_until(pass_start + kMinPassInterval);
      std::unique_lock<std::mutex> lk(wake_mu);
      wake_cv.wait_for(lk, std::chrono::milliseconds(flags.loop_millis), [&] { return woken || stop.load(); });
      woken = false;
    }
  });
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    Log(err, 'I', "Shutting down", std::string("signal=\"") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + "\"");
    stop = true;
    wake_cv.notify_all();
    if (httpd) httpd->Stop();
  });
  if (httpd) {
    httpd->Serve();
  } else {
    waiter.join();
  }
  stop = true;
  wake_cv.notify_all();
  control.join();
  if (elect.joinable()) elect.join();
  if (waiter.joinable()) {
    pthread_kill(waiter.native_handle(), SIGTERM);
    waiter.join();
  }
  Log(err, 'I', "Stopped");
  return 0;
}

}  // namespace arbiter::cmd
