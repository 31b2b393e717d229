// The HTTP load client of `arbiter bench --scenario ApiLoad`.
#include "arbiter/bench/api_load.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "arbiter/base/json.h"

namespace arbiter::bench {

namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::unique_ptr<httplib::Client> Connect(const ApiLoadOptions& o) {
  auto c = std::make_unique<httplib::Client>(o.server);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);
  c->set_connection_timeout(5);
  c->set_read_timeout(30);
  c->enable_server_certificate_verification(false);
  if (!o.token.empty()) c->set_bearer_token_auth(o.token);
  return c;
}

}  // namespace

StatusOr<ApiLoadResult> RunApiLoad(const ApiLoadOptions& o, const std::function<void(size_t, size_t)>& progress) {
  ApiLoadResult r;
  const std::string path = "/api/v1/namespaces/" + o.ns + "/pods";
  std::atomic<size_t> next{0}, created{0};
  std::mutex err_mu;
  std::string first_error;
  const auto start = Clock::now();
  std::vector<std::thread> workers;
  for (size_t w = 0; w < o.connections; ++w) {
    workers.emplace_back([&] {
      auto client = Connect(o);
      for (size_t i = next++; i < o.pods; i = next++) {
        const Json pod = {{"apiVersion", "v1"},
                          {"kind", "Pod"},
                          {"metadata", {{"name", "load-" + std::to_string(i)}, {"labels", {{"app", "load"}}}}},
                          {"spec",
                           {{"terminationGracePeriodSeconds", 0},
                            {"containers", {{{"name", "c"}, {"image", "pause"},
                                             {"resources", {{"requests", {{"cpu", "10m"}, {"memory", "10Mi"}}}}}}}}}}};
        auto res = client->Post(path, pod.dump(), "application/json");
        if (!res || res->status != 201) {
          std::lock_guard<std::mutex> lock(err_mu);
          if (first_error.empty()) {
            first_error = res ? "HTTP " + std::to_string(res->status) + ": " + res->body
                              : "request failed: " + httplib::to_string(res.error());
          }
          next = o.pods;  // stop every worker
          return;
        }
        if (const size_t n = ++created; n % 2000 == 0 && progress) progress(n, o.pods);
      }
    });
  }
  for (auto& t : workers) t.join();
  if (!first_error.empty()) return Unavailable("creating pods on " + o.server + ": " + first_error);
  r.created = created;
  r.create_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.creates_per_second = r.create_seconds > 0 ? static_cast<double>(r.created) / r.create_seconds : 0;

  // Wait for the bindings: list with a field selector for bound pods of this run.
  auto client = Connect(o);
  while (true) {
    auto res = client->Get(path + "?labelSelector=app%3Dload&fieldSelector=spec.nodeName!%3D");
    if (res && res->status == 200) {
      try {
        r.bound = Json::parse(res->body)["items"].size();
      } catch (const std::exception&) {
      }
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (r.bound >= r.created) {
      r.all_bound_seconds = elapsed;
      break;
    }
    if (elapsed > o.bind_timeout_seconds) {
      r.all_bound_seconds = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return r;
}

}  // namespace arbiter::bench
