// The HTTP edge: routing every request into ApiServer, watch streaming, authentication and
// health endpoints.
#include "arbiter/api/http.h"

#include <httplib.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

namespace arbiter::api {

namespace {

using Json = nlohmann::json;

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string VerbOf(const std::string& method, bool has_name, bool watch) {
  if (method == "GET") return watch ? "watch" : has_name ? "get" : "list";
  if (method == "POST") return "create";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return "delete";
  return "unknown";
}

// The resource and namespace of a resource path, for authorisation ("" when not a resource path).
void ResourceOf(const std::string& path, std::string* resource, std::string* ns, bool* has_name) {
  std::vector<std::string> s;
  std::stringstream in(path);
  for (std::string part; std::getline(in, part, '/');) {
    if (!part.empty()) s.push_back(part);
  }
  size_t at = 0;
  if (s.size() >= 2 && s[0] == "api") at = 2;
  else if (s.size() >= 3 && s[0] == "apis") at = 3;
  else return;
  if (at < s.size() && s[at] == "watch") ++at;
  if (at + 2 < s.size() && s[at] == "namespaces") {
    *ns = s[at + 1];
    *resource = s[at + 2];
    *has_name = at + 3 < s.size();
  } else if (at < s.size()) {
    *resource = s[at];
    *has_name = at + 1 < s.size();
    if (*resource == "namespaces" && *has_name) *ns = s[at + 1];
  }
}

}  // namespace

StatusOr<std::map<std::string, TokenUser>> LoadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("--token-auth-file " + path + ": cannot be read");
  std::map<std::string, TokenUser> out;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = SplitCsv(line);
    if (f.size() < 3 || f[0].empty() || f[1].empty()) {
      return InvalidArgument("--token-auth-file " + path + ": line " + std::to_string(n) +
                             ": want token,user,uid[,\"group1,group2\"]");
    }
    TokenUser u{f[1], f[2], {}};
    if (f.size() > 3) {
      std::stringstream gs(f[3]);
      for (std::string g; std::getline(gs, g, ',');) {
        if (!g.empty()) u.groups.insert(g);
      }
    }
    if (!out.emplace(f[0], u).second) {
      return InvalidArgument("--token-auth-file " + path + ": line " + std::to_string(n) + ": duplicate token");
    }
  }
  // An empty file must not mean "no authentication": that would also lift the loopback rule.
  if (out.empty()) return InvalidArgument("--token-auth-file " + path + ": holds no token (want token,user,uid[,\"groups\"] lines)");
  return out;
}

HttpServer::HttpServer(ApiServer& api, HttpOptions options) : api_(api), options_(std::move(options)) {
  if (!options_.tls_cert_file.empty()) {
    http_ = std::make_unique<httplib::SSLServer>(options_.tls_cert_file.c_str(), options_.tls_key_file.c_str());
  } else {
    http_ = std::make_unique<httplib::Server>();
  }
  Install();
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::AddReadyCheck(std::string name, std::function<bool()> check) {
  ready_checks_.emplace_back(std::move(name), std::move(check));
}

void HttpServer::Install() {
  const size_t threads = options_.threads;
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http_->set_payload_max_length(64 * 1024 * 1024);  // the API answers 413 above its own limit
  http_->set_keep_alive_max_count(1000);
  http_->set_tcp_nodelay(true);
  // SO_REUSEADDR only: a restarted server may bind while old connections linger, but a second
  // server on a taken port fails (SO_REUSEPORT, cpp-httplib's default, would let both listen).
  http_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof yes);
  });
  auto health = [this](const httplib::Request& req, httplib::Response& res, bool ready) {
    bool ok = true;
    std::string verbose = "[+]ping ok\n";
    if (ready) {
      for (const auto& [name, check] : ready_checks_) {
        const bool pass = check();
        ok = ok && pass;
        verbose += (pass ? "[+]" : "[-]") + name + (pass ? " ok\n" : " failed\n");
      }
      if (stopping_) {
        ok = false;
        verbose += "[-]shutdown failed: the server is shutting down\n";
      }
    }
    res.status = ok ? 200 : 503;
    if (req.has_param("verbose")) {
      res.set_content(verbose + (ok ? "healthz check passed\n" : "healthz check failed\n"), "text/plain");
    } else {
      res.set_content(ok ? "ok" : "not ready", "text/plain");
    }
  };
  http_->Get("/healthz", [health](const httplib::Request& q, httplib::Response& s) { health(q, s, true); });
  http_->Get("/livez", [health](const httplib::Request& q, httplib::Response& s) { health(q, s, false); });
  http_->Get("/readyz", [health](const httplib::Request& q, httplib::Response& s) { health(q, s, true); });
  http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    std::string text = "# HELP apiserver_request_total Requests served.\n# TYPE apiserver_request_total counter\n"
                       "apiserver_request_total " + std::to_string(requests_.load()) + "\n";
    if (metrics_) text += metrics_();
    res.set_content(text, "text/plain; version=0.0.4");
  });

  auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    ++requests_;
    Request r;
    r.method = req.method;
    r.path = req.path;
    for (const auto& [k, v] : req.params) r.query[k] = v;
    for (const auto& [k, v] : req.headers) {
      std::string key = k;
      for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.headers[key] = v;
    }
    r.body = req.body;
    auto fail = [&](int code, const std::string& reason, const std::string& message) {
      res.status = code;
      res.set_content(StatusBody(code, reason, message).dump(), "application/json");
    };
    if (!options_.tokens.empty()) {
      auto auth = r.headers.find("authorization");
      const TokenUser* user = nullptr;
      if (auth != r.headers.end() && auth->second.starts_with("Bearer ")) {
        auto it = options_.tokens.find(auth->second.substr(7));
        if (it != options_.tokens.end()) user = &it->second;
      }
      if (user == nullptr) {
        if (options_.log) {
          options_.log("Request rejected", "verb=\"" + r.method + "\" URI=\"" + req.target + "\" code=401 remote=\"" +
                                               req.remote_addr + "\" message=\"no valid bearer token\"");
        }
        return fail(401, "Unauthorized", "Unauthorized");
      }
      r.user = user->name;
      r.uid = user->uid;
      r.groups = user->groups;
      r.groups.insert("system:authenticated");
      r.authenticated = true;
      std::string resource, ns;
      bool has_name = false;
      ResourceOf(r.path, &resource, &ns, &has_name);
      const bool watch = r.query.count("watch") > 0 && QueryBool(r.query["watch"]);
      const std::string verb = VerbOf(r.method, has_name, watch);
      if (!resource.empty() && !Authorized(*user, verb, resource, ns)) {
        if (options_.log) {
          options_.log("Request rejected", "verb=\"" + r.method + "\" URI=\"" + req.target + "\" code=403 user=\"" +
                                               user->name + "\" remote=\"" + req.remote_addr + "\"");
        }
        return fail(403, "Forbidden",
                    resource + " is forbidden: User \"" + user->name + "\" cannot " + verb + " resource \"" + resource +
                        "\"" + (ns.empty() ? " at the cluster scope" : " in the namespace \"" + ns + "\""));
      }
    }
    Response out = api_.Handle(r);
    res.status = out.code;
    // Rejections are logged; a read of an absent object (how clients look before they create)
    // is an answer, not a rejection.
    if (out.code >= 400 && options_.log && !(out.code == 404 && r.method == "GET")) {
      std::string message;
      try {
        message = Json::parse(out.body).value("message", "");
      } catch (const std::exception&) {
      }
      options_.log("Request rejected", "verb=\"" + r.method + "\" URI=\"" + req.target + "\" code=" +
                                           std::to_string(out.code) + " user=\"" + r.user + "\" remote=\"" +
                                           req.remote_addr + "\" message=" + Json(message).dump());
    }
    for (const auto& w : out.warnings) res.set_header("Warning", "299 - " + Json(w).dump());
    if (!out.watch) {
      res.set_content(out.body, out.content_type);
      return;
    }
    std::shared_ptr<WatchStream> w = out.watch;
    auto sent_initial = std::make_shared<bool>(false);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(w->timeout_seconds);
    res.set_chunked_content_provider(
        "application/json;stream=watch",  // as kube-apiserver; also keeps the stream uncompressed
        [this, w, sent_initial, deadline](size_t, httplib::DataSink& sink) {
          if (!*sent_initial) {
            *sent_initial = true;
            for (const auto& o : w->initial) {
              if (!ApiServer::Selected(*w, o.body)) continue;
              const std::string line = api_.WatchLine(*w, store::Event{store::EventType::kAdded, o});
              if (!sink.write(line.data(), line.size())) return false;
            }
            w->initial.clear();
          }
          if (stopping_ || std::chrono::steady_clock::now() >= deadline) {
            sink.done();
            return true;
          }
          auto events = w->watch->Next(std::chrono::milliseconds(500));
          if (!events.ok()) {
            if (events.status().code() == StatusCode::kGone) {
              const std::string line =
                  Json{{"type", "ERROR"}, {"object", StatusBody(410, "Expired", events.status().message())}}.dump() + "\n";
              sink.write(line.data(), line.size());
            }
            sink.done();
            return true;
          }
          for (const auto& e : *events) {
            if (!ApiServer::Selected(*w, e.object.body)) continue;
            const std::string line = api_.WatchLine(*w, e);
            if (!sink.write(line.data(), line.size())) return false;
          }
          return sink.is_writable();
        },
        [w](bool) { w->watch->Stop(); });
  };
  const char* any = R"(/.*)";
  http_->Get(any, handler);
  http_->Post(any, handler);
  http_->Put(any, handler);
  http_->Patch(any, handler);
  http_->Delete(any, handler);
}

Status HttpServer::Bind() {
  if (!http_->is_valid()) {
    return InvalidArgument("cannot serve TLS with --tls-cert-file " + options_.tls_cert_file + " and --tls-private-key-file " +
                           options_.tls_key_file + " (unreadable or not a certificate and key)");
  }
  if (options_.port == 0) {
    bound_port_ = http_->bind_to_any_port(options_.host);
    if (bound_port_ <= 0) return Unavailable("cannot listen on " + options_.host + ": no free port");
  } else {
    errno = 0;
    if (!http_->bind_to_port(options_.host, options_.port)) {
      const int why = errno;
      const bool v6 = options_.host.find(':') != std::string::npos;
      const std::string where = (v6 ? "[" + options_.host + "]" : options_.host) + ":" + std::to_string(options_.port);
      if (why == EADDRINUSE) return Unavailable("cannot listen on " + where + ": the address is already in use");
      return Unavailable("cannot listen on " + where + ": " +
                         (why == EADDRNOTAVAIL || why == 0 ? std::string("not an address of this machine")
                                                          : std::string(std::strerror(why))));
    }
    bound_port_ = options_.port;
  }
  return Status::Ok();
}

void HttpServer::Serve() { http_->listen_after_bind(); }

void HttpServer::Stop() {
  stopping_ = true;
  if (http_) http_->stop();
}

}  // namespace arbiter::api
