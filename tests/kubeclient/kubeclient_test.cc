// The Kubernetes API client of `arbiter plan --server`: kubeconfig contexts and credentials, and
// lists read page by page from a real HTTP server (cpp-httplib's, in process).
#include "arbiter/kubeclient/kubeclient.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include "arbiter/base/json.h"

namespace arbiter::kubeclient {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kubeclient-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

constexpr const char* kTwoContexts = R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-cluster
  cluster: {server: "https://prod.example:6443", certificate-authority-data: "LS0tLS1CRUdJTg=="}
- name: dev-cluster
  cluster: {server: "http://127.0.0.1:8080", insecure-skip-tls-verify: true, certificate-authority: ca.pem}
users:
- name: admin
  user: {token: "s3cret"}
- name: dev
  user: {tokenFile: TOKENFILE}
contexts:
- name: prod
  context: {cluster: prod-cluster, user: admin}
- name: dev
  context: {cluster: dev-cluster, user: dev}
)";

TEST_F(KubeconfigTest, TheCurrentContextGivesTheServerAndTheUsersToken) {
  std::string text = kTwoContexts;
  text.replace(text.find("TOKENFILE"), 9, Write("token", "from-file\n"));
  auto c = LoadKubeconfig(Write("config", text));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "https://prod.example:6443");
  EXPECT_EQ(c->token, "s3cret");
  EXPECT_EQ(c->ca_pem, "-----BEGIN");  // the base64 data, decoded
  EXPECT_FALSE(c->insecure);
}

TEST_F(KubeconfigTest, ANamedContextWinsAndFilesAreReadRelativeToTheKubeconfig) {
  std::string text = kTwoContexts;
  text.replace(text.find("TOKENFILE"), 9, Write("token", "from-file\n"));
  Write("ca.pem", "PEM TEXT");
  auto c = LoadKubeconfig(Write("config", text), "dev");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "http://127.0.0.1:8080");
  EXPECT_EQ(c->token, "from-file");
  EXPECT_EQ(c->ca_pem, "PEM TEXT");
  EXPECT_TRUE(c->insecure);
}

TEST_F(KubeconfigTest, MissingContextsAndExecCredentialsAreClearErrors) {
  auto none = LoadKubeconfig(Write("config", kTwoContexts), "staging");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no context \"staging\""), std::string::npos) << none.status().message();
  auto exec = LoadKubeconfig(Write("exec", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443"}}]
users: [{name: u, user: {exec: {command: aws}}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)"));
  ASSERT_FALSE(exec.ok());
  EXPECT_NE(exec.status().message().find("exec and auth-provider credentials are not supported"), std::string::npos);
  EXPECT_FALSE(LoadKubeconfig((dir_ / "absent").string()).ok());
}

// A server of 7 pods that answers 3 at a time with continue tokens, and insists on a token.
class PagingServer {
 public:
  PagingServer() {
    server_.Get("/api/v1/pods", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.get_header_value("Authorization") != "Bearer t0ken") {
        res.status = 401;
        return;
      }
      ++requests;
      const size_t limit = std::stoul(req.get_param_value("limit"));
      const size_t from = req.has_param("continue") ? std::stoul(req.get_param_value("continue").substr(3)) : 0;
      Json list = {{"kind", "PodList"}, {"apiVersion", "v1"}, {"items", Json::array()}, {"metadata", Json::object()}};
      for (size_t i = from; i < std::min<size_t>(from + limit, 7); ++i) {
        list["items"].push_back({{"metadata", {{"name", "p" + std::to_string(i)}}}});
      }
      if (from + limit < 7) list["metadata"]["continue"] = "at/" + std::to_string(from + limit);
      res.set_content(list.dump(), "application/json");
    });
    port = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~PagingServer() {
    server_.stop();
    thread_.join();
  }
  int port = 0;
  int requests = 0;

 private:
  httplib::Server server_;
  std::thread thread_;
};

Config ConfigFor(const PagingServer& s, const std::string& token) {
  Config c;
  c.server = "http://127.0.0.1:" + std::to_string(s.port);
  c.token = token;
  return c;
}

TEST(KubeClient, ListsEveryPageAndTagsTheItemsWithTheirKind) {
  PagingServer s;
  auto client = Client::Connect(ConfigFor(s, "t0ken"));
  ASSERT_TRUE(client.ok()) << client.status().message();
  auto text = (*client)->ListAll("/api/v1/pods", "v1", "Pod", 3, 1 << 20);
  ASSERT_TRUE(text.ok()) << text.status().message();
  const Json list = Json::parse(*text);
  EXPECT_EQ(list["kind"], "List");
  ASSERT_EQ(list["items"].size(), 7u);
  EXPECT_EQ(list["items"][6]["metadata"]["name"], "p6");
  EXPECT_EQ(list["items"][6]["kind"], "Pod");
  EXPECT_EQ(list["items"][6]["apiVersion"], "v1");
  EXPECT_EQ(s.requests, 3);
}

TEST(KubeClient, WrongCredentialsUnservedCollectionsAndSizeLimitsAreErrors) {
  PagingServer s;
  auto client = Client::Connect(ConfigFor(s, "wrong"));
  ASSERT_TRUE(client.ok());
  auto denied = (*client)->ListAll("/api/v1/pods", "v1", "Pod", 3, 1 << 20);
  ASSERT_FALSE(denied.ok());
  EXPECT_NE(denied.status().message().find("401"), std::string::npos);
  auto ok = Client::Connect(ConfigFor(s, "t0ken"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)->ListAll("/apis/x/v1/things", "x/v1", "Thing", 3, 1 << 20).status().code(), StatusCode::kNotFound);
  EXPECT_EQ((*ok)->ListAll("/api/v1/pods", "v1", "Pod", 3, 100).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(Client::Connect(Config{"ftp://x", "", "", "", "", false, ""}).ok());
}

TEST(KubeClient, ATooManyRequestsAnswerIsTriedAgainAfterTheTimeItAsksFor) {
  httplib::Server server;
  int calls = 0;
  server.Post("/api/v1/namespaces/default/pods/p/binding", [&](const httplib::Request& req, httplib::Response& res) {
    EXPECT_EQ(req.get_header_value("Authorization"), "Bearer t0ken");
    if (++calls == 1) {
      res.status = 429;
      res.set_header("Retry-After", "1");
      return;
    }
    res.status = 201;
    res.set_content("{}", "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Config c;
  c.server = "http://127.0.0.1:" + std::to_string(port);
  c.token = "t0ken";
  auto client = Client::Connect(c);
  ASSERT_TRUE(client.ok());
  auto r = (*client)->Send("POST", "/api/v1/namespaces/default/pods/p/binding", "{}");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(calls, 2);
  client->reset();
  server.stop();
  serving.join();
}

}  // namespace
}  // namespace arbiter::kubeclient
