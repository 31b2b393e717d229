// The Kubernetes API client of `arbiter plan --server`: kubeconfig, TLS and paginated lists.
#include "arbiter/kubeclient/kubeclient.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <fstream>
#include <sstream>

#include <httplib.h>
#include "arbiter/base/json.h"
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <yaml-cpp/yaml.h>

namespace arbiter::kubeclient {

namespace {

// What went wrong on the way to the server, in words a user can act on (cpp-httplib's own names
// are one word: "Connection").
std::string DescribeError(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection: return "connection refused or the host unreachable: is the API server running there?";
    case httplib::Error::ConnectionTimeout: return "timed out connecting: is the address right and reachable?";
    case httplib::Error::Read: return "the server closed the connection before answering";
    case httplib::Error::Write: return "the connection broke while sending the request";
    case httplib::Error::SSLConnection:
      return "the TLS handshake failed (an http:// server given as https://, or the other way round?)";
    case httplib::Error::SSLServerVerification:
      return "the server's certificate is not trusted (its CA in the kubeconfig, or --insecure-skip-tls-verify)";
    default: return httplib::to_string(e);
  }
}

}  // namespace

namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

StatusOr<std::string> ReadFile(const fs::path& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(what + ": cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

StatusOr<std::string> Base64(const std::string& text, const std::string& what) {
  std::string clean;
  for (char c : text) {
    if (c != '\n' && c != '\r' && c != ' ') clean += c;
  }
  if (clean.size() % 4 != 0) return InvalidArgument(what + ": not base64");
  std::string out(clean.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(clean.data()), static_cast<int>(clean.size()));
  if (n < 0) return InvalidArgument(what + ": not base64");
  size_t len = static_cast<size_t>(n);
  if (!clean.empty() && clean.back() == '=') --len;
  if (clean.size() > 1 && clean[clean.size() - 2] == '=') --len;
  out.resize(len);
  return out;
}

// A named entry of one of a kubeconfig's lists (clusters, users, contexts).
YAML::Node Named(const YAML::Node& list, const std::string& name) {
  if (!list.IsSequence()) return YAML::Node();
  for (const auto& e : list) {
    if (e.IsMap() && e["name"] && e["name"].Scalar() == name) return e;
  }
  return YAML::Node();
}

// A PEM given inline (`<field>-data`, base64) or as a file (`<field>`), relative to `dir`.
StatusOr<std::string> Pem(const YAML::Node& m, const std::string& field, const fs::path& dir, const std::string& what) {
  if (m[field + "-data"] && m[field + "-data"].IsScalar()) return Base64(m[field + "-data"].Scalar(), what + "." + field + "-data");
  if (m[field] && m[field].IsScalar()) {
    fs::path p = m[field].Scalar();
    if (p.is_relative()) p = dir / p;
    return ReadFile(p, what + "." + field);
  }
  return std::string();
}

}  // namespace

std::string PercentEncode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

namespace {

// The longest one collection's listing may take, all pages together.
constexpr int kListSeconds = 300;

class HttpClient final : public Client {
 public:
  HttpClient(const Config& c, ClientOptions options) : config_(c), options_(std::move(options)) {}

  Status Init() {
    const bool https = config_.server.rfind("https://", 0) == 0;
    if (!https && config_.server.rfind("http://", 0) != 0) {
      return InvalidArgument("--server: \"" + config_.server + "\" must start with https:// or http://");
    }
    // host[:port], a bracketed IPv6 address allowed; no path.
    std::string host = config_.server.substr(https ? 8 : 7);
    if (const size_t slash = host.find('/'); slash != std::string::npos) host.resize(slash);
    int port = https ? 443 : 80;
    const size_t bracket = host.rfind(']');
    if (const size_t colon = host.rfind(':');
        colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
      port = std::atoi(host.c_str() + colon + 1);
      host.resize(colon);
    }
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.empty() || port <= 0 || port > 65535) {
      return InvalidArgument("--server: \"" + config_.server + "\" has no host, or a bad port");
    }
    if (https) {
      X509* cert = nullptr;
      EVP_PKEY* key = nullptr;
      if (!config_.client_cert_pem.empty()) {
        BIO* b = BIO_new_mem_buf(config_.client_cert_pem.data(), static_cast<int>(config_.client_cert_pem.size()));
        cert = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
        BIO_free(b);
        BIO* k = BIO_new_mem_buf(config_.client_key_pem.data(), static_cast<int>(config_.client_key_pem.size()));
        key = PEM_read_bio_PrivateKey(k, nullptr, nullptr, nullptr);
        BIO_free(k);
        if (cert == nullptr || key == nullptr) return InvalidArgument("the client certificate or key is not PEM");
      }
      auto ssl = std::make_unique<httplib::SSLClient>(host, port, cert, key);
      if (cert != nullptr) X509_free(cert);
      if (key != nullptr) EVP_PKEY_free(key);
      ssl->enable_server_certificate_verification(!config_.insecure);
      if (!config_.ca_pem.empty()) {
        X509_STORE* store = X509_STORE_new();
        BIO* b = BIO_new_mem_buf(config_.ca_pem.data(), static_cast<int>(config_.ca_pem.size()));
        int added = 0;
        while (X509* ca = PEM_read_bio_X509(b, nullptr, nullptr, nullptr)) {
          added += X509_STORE_add_cert(store, ca);
          X509_free(ca);
        }
        BIO_free(b);
        if (added == 0) {
          X509_STORE_free(store);
          return InvalidArgument("the certificate authority is not PEM");
        }
        ssl->set_ca_cert_store(store);  // owned by the client from here
      }
      http_ = std::move(ssl);
    } else {
      http_ = std::make_unique<httplib::ClientImpl>(host, port);
    }
    token_ = config_.token;
    token_read_ = std::chrono::steady_clock::now();
    http_->set_connection_timeout(10);
    http_->set_read_timeout(options_.timeout.count());
    http_->set_write_timeout(options_.timeout.count());
    http_->set_keep_alive(true);
    // A request's headers and body go out as two writes: without this, Nagle's algorithm holds
    // the body until the server's delayed acknowledgement (40 ms a request).
    http_->set_tcp_nodelay(true);
    http_->set_default_headers({{"User-Agent", options_.user_agent}});
    return Status::Ok();
  }

  const std::string& server() const override { return config_.server; }

  // The Authorization header, from the token as last read.
  void Authorize(httplib::Request& req) {
    if (!config_.token_file.empty() && std::chrono::steady_clock::now() - token_read_ > std::chrono::minutes(1)) {
      token_read_ = std::chrono::steady_clock::now();
      if (auto read = ReadFile(config_.token_file, "the token file"); read.ok()) {
        std::string t = *read;
        while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
        if (!t.empty()) token_ = t;
      }
    }
    if (!token_.empty()) req.headers.emplace("Authorization", "Bearer " + token_);
  }

  StatusOr<Response> Send(const std::string& method, const std::string& target, const std::string& body,
                          const std::string& content_type) override {
    for (int attempt = 0;; ++attempt) {
      auto r = SendOnce(method, target, body, content_type);
      if (!r.ok() || attempt >= 10 || !(r->status == 429 || (r->status >= 500 && r->retry_after >= 0))) return r;
      // The server asked to come back later (API Priority and Fairness, or a restart).
      std::this_thread::sleep_for(std::chrono::seconds(std::clamp(r->retry_after, 1, 10)));
    }
  }

  StatusOr<Response> SendOnce(const std::string& method, const std::string& target, const std::string& body,
                              const std::string& content_type) {
    if (options_.limiter) options_.limiter->Wait();
    if (options_.on_request) options_.on_request(method, target, body);
    httplib::Request req;
    req.method = method;
    req.path = target;
    req.headers = {{"Accept", options_.accept}};
    Authorize(req);
    if (!body.empty()) {
      req.body = body;
      req.headers.emplace("Content-Type", content_type);
    }
    std::string received;
    bool too_large = false;
    req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
      too_large = received.size() + len > options_.max_response_bytes;
      if (too_large) return false;
      received.append(data, len);
      return true;
    };
    auto r = http_->send(req);
    if (too_large) {
      return Unavailable(method + " " + config_.server + target + ": the answer is larger than " +
                         std::to_string(options_.max_response_bytes) + " bytes");
    }
    if (!r) {
      return Unavailable("cannot reach " + config_.server + " (" + method + " " + target + ": " +
                         DescribeError(r.error()) + ")");
    }
    Response out{r->status, std::move(received), r->get_header_value("Content-Type")};
    if (r->has_header("Retry-After")) out.retry_after = std::atoi(r->get_header_value("Retry-After").c_str());
    return out;
  }

  StatusOr<Response> Stream(const std::string& target, const OnData& on_data) override {
    if (options_.limiter) options_.limiter->Wait();
    if (options_.on_request) options_.on_request("GET", target, "");
    httplib::Request req;
    req.method = "GET";
    req.path = target;
    req.headers = {{"Accept", options_.accept}};
    Authorize(req);
    int status = 0;
    std::string error_body, content_type;
    req.response_handler = [&](const httplib::Response& res) {
      status = res.status;
      content_type = res.get_header_value("Content-Type");
      return true;
    };
    req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
      if (status != 200) {
        if (error_body.size() + len > options_.max_response_bytes) return false;
        error_body.append(data, len);
        return true;
      }
      return on_data(std::string_view(data, len), content_type);
    };
    auto r = http_->send(req);
    if (status != 0) return Response{status, std::move(error_body), content_type};
    if (!r) {
      return Unavailable("cannot reach " + config_.server + " (GET " + target + ": " + DescribeError(r.error()) +
                         ")");
    }
    return Response{r->status, std::move(error_body), content_type};
  }

  void Cancel() override { http_->stop(); }

  StatusOr<std::string> ListAll(const std::string& path, const std::string& api_version, const std::string& kind,
                                size_t page, size_t max_bytes) override {
    Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", Json::array()}};
    std::string cont;
    size_t bytes = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kListSeconds);
    do {
      std::string target = path + "?limit=" + std::to_string(page);
      if (!cont.empty()) target += "&continue=" + PercentEncode(cont);
      // The body is bounded as it arrives (what is left of max_bytes), and the whole listing in
      // time: a server that sends without end, or a byte at a time, is cut off.
      std::string received;
      bool too_large = false, too_slow = false;
      if (options_.limiter) options_.limiter->Wait();
      httplib::Headers headers{{"Accept", "application/json"}};
      if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
      auto r = http_->Get(target.c_str(), headers,
                          [&](const char* data, size_t len) {
                            too_large = bytes + received.size() + len > max_bytes;
                            too_slow = std::chrono::steady_clock::now() > deadline;
                            if (too_large || too_slow) return false;
                            received.append(data, len);
                            return true;
                          });
      if (too_large) return InvalidArgument(path + ": the listing is larger than the input limit (raise --max-input-size)");
      if (too_slow) return Unavailable("GET " + config_.server + path + ": the listing took longer than " +
                                       std::to_string(kListSeconds) + " s");
      if (!r) {
        return Unavailable("cannot reach " + config_.server + " (GET " + target + ": " + DescribeError(r.error()) +
                           ")");
      }
      r->body = std::move(received);
      if (r->status == 404) return NotFound(path + " is not served by " + config_.server);
      if (r->status == 401 || r->status == 403) {
        return FailedPrecondition("GET " + path + " on " + config_.server + ": " + std::to_string(r->status) +
                                " (give a token with --token, or a kubeconfig whose user may list it)");
      }
      if (r->status != 200) {
        return Unavailable("GET " + config_.server + target + ": HTTP " + std::to_string(r->status));
      }
      bytes += r->body.size();
      Json body = Json::parse(r->body, nullptr, false);
      if (!body.is_object() || !body["items"].is_array()) return Unavailable("GET " + path + ": not a list");
      for (auto& item : body["items"]) {
        if (!item.is_object()) continue;
        item["apiVersion"] = api_version;
        item["kind"] = kind;
        list["items"].push_back(std::move(item));
      }
      cont = body.value("metadata", Json::object()).value("continue", "");
    } while (!cont.empty());
    return list.dump();
  }

 private:
  Config config_;
  ClientOptions options_;
  std::string token_;  // the bearer token as last read
  std::chrono::steady_clock::time_point token_read_;
  std::unique_ptr<httplib::ClientImpl> http_;
};

}  // namespace

StatusOr<Config> LoadKubeconfig(const std::string& path, const std::string& context) {
  ARBITER_ASSIGN_OR_RETURN(text, ReadFile(path, "--kubeconfig"));
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ": not a kubeconfig: " + e.what());
  }
  if (!doc.IsMap()) return InvalidArgument(path + ": not a kubeconfig");
  const std::string ctx_name = !context.empty() ? context : doc["current-context"] ? doc["current-context"].Scalar() : "";
  if (ctx_name.empty()) return InvalidArgument(path + ": no current-context (name one with --context)");
  const YAML::Node ctx = Named(doc["contexts"], ctx_name)["context"];
  if (!ctx || !ctx.IsMap()) return InvalidArgument(path + ": no context \"" + ctx_name + "\"");
  const std::string cluster_name = ctx["cluster"] ? ctx["cluster"].Scalar() : "";
  const std::string user_name = ctx["user"] ? ctx["user"].Scalar() : "";
  const YAML::Node cluster = Named(doc["clusters"], cluster_name)["cluster"];
  if (!cluster || !cluster.IsMap() || !cluster["server"]) {
    return InvalidArgument(path + ": context \"" + ctx_name + "\" names cluster \"" + cluster_name + "\", which has no server");
  }
  const fs::path dir = fs::path(path).parent_path();
  Config c;
  c.server = cluster["server"].Scalar();
  c.insecure = cluster["insecure-skip-tls-verify"] && cluster["insecure-skip-tls-verify"].Scalar() == "true";
  const std::string where = path + ": cluster \"" + cluster_name + "\"";
  ARBITER_ASSIGN_OR_RETURN(ca, Pem(cluster, "certificate-authority", dir, where));
  c.ca_pem = std::move(ca);
  if (!user_name.empty()) {
    const YAML::Node user = Named(doc["users"], user_name)["user"];
    if (user && user.IsMap()) {
      const std::string uwhere = path + ": user \"" + user_name + "\"";
      if (user["token"]) c.token = user["token"].Scalar();
      if (user["tokenFile"]) {
        ARBITER_ASSIGN_OR_RETURN(read, ReadFile(user["tokenFile"].Scalar(), uwhere + ".tokenFile"));
        std::string token = read;
        while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
        c.token = token;
      }
      ARBITER_ASSIGN_OR_RETURN(cert, Pem(user, "client-certificate", dir, uwhere));
      ARBITER_ASSIGN_OR_RETURN(key, Pem(user, "client-key", dir, uwhere));
      c.client_cert_pem = std::move(cert);
      c.client_key_pem = std::move(key);
      if (user["exec"] || user["auth-provider"]) {
        return InvalidArgument(uwhere + ": exec and auth-provider credentials are not supported (give --token)");
      }
    }
  }
  return c;
}

StatusOr<Config> InClusterConfig(const std::string& secrets_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == 0 || *port == 0) {
    return FailedPrecondition(
        "not running in a pod (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set): give --kubeconfig");
  }
  Config c;
  const std::string h = host;
  c.server = "https://" + (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + port;
  const fs::path dir = secrets_dir;
  ARBITER_ASSIGN_OR_RETURN(read, ReadFile(dir / "token", "the service account token"));
  std::string token = read;
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  c.token = token;
  c.token_file = (dir / "token").string();
  ARBITER_ASSIGN_OR_RETURN(ca, ReadFile(dir / "ca.crt", "the service account CA"));
  c.ca_pem = std::move(ca);
  return c;
}

RateLimiter::RateLimiter(double qps, int burst)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(std::max(1, burst)), last_(std::chrono::steady_clock::now()) {}

void RateLimiter::Wait() {
  if (qps_ <= 0) return;
  std::chrono::steady_clock::duration wait{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * qps_);
    last_ = now;
    // Take the token now (the balance may go negative: later callers queue behind this one).
    tokens_ -= 1;
    if (tokens_ < 0) wait = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(-tokens_ / qps_));
  }
  if (wait.count() > 0) std::this_thread::sleep_for(wait);
}

StatusOr<std::unique_ptr<Client>> Client::Connect(const Config& config, ClientOptions options) {
  auto c = std::make_unique<HttpClient>(config, std::move(options));
  ARBITER_RETURN_IF_ERROR(c->Init());
  return std::unique_ptr<Client>(std::move(c));
}

}  // namespace arbiter::kubeclient
