// Tests of the API schema and what is built from it: the protobuf wire format of objects, the
// OpenAPI documents, server-side field validation, Status causes; and of the serve edge's
// listen addresses, data directory lock and simulated node addresses.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <google/protobuf/dynamic_message.h>
#include <gtest/gtest.h>
#include "arbiter/base/json.h"

#include "arbiter/api/endpoint.h"
#include "arbiter/api/field_validation.h"
#include "arbiter/api/http.h"
#include "arbiter/api/openapi.h"
#include "arbiter/api/protobuf_codec.h"
#include "arbiter/api/resources.h"
#include "arbiter/schema/schema.h"
#include "arbiter/base/dir_lock.h"
#include "arbiter/controlplane/node_simulator.h"

namespace arbiter::api {

using schema::ApiSchema;
using schema::FieldDoc;
using schema::JsonField;
using schema::WireShape;
namespace pb = google::protobuf;
namespace {

using Json = nlohmann::json;

Json SamplePod() {
  return Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "namespace": "team", "uid": "u-1", "resourceVersion": "42",
                 "creationTimestamp": "2025-03-01T10:00:00Z", "labels": {"app": "web"},
                 "annotations": {"note": "x"},
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "r-1",
                                      "controller": true}]},
    "spec": {"priorityClassName": "high", "priority": 1000, "nodeName": "n1",
             "terminationGracePeriodSeconds": 5,
             "containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                             "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": 1}},
                             "readinessProbe": {"httpGet": {"path": "/", "port": "http"}}}],
             "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 30}],
             "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                 {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}}},
    "status": {"phase": "Running", "podIP": "10.64.0.2",
               "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2025-03-01T10:00:05Z"}]}
  })");
}

TEST(ProtobufCodec, APodRoundTripsThroughTheEnvelope) {
  const Json pod = SamplePod();
  auto bytes = EncodeProtobufObject(pod);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  ASSERT_EQ(bytes->substr(0, 4), std::string("k8s\0", 4));
  auto back = DecodeProtobufObject(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().message();
  Json want = pod;
  // A number where a Quantity is expected comes back as the quantity's text.
  want["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "1";
  EXPECT_EQ(*back, want) << back->dump(2);
}

TEST(ProtobufCodec, FieldNumbersAreKubernetesOwn) {
  // Pod.metadata = 1 (ObjectMeta.name = 1); Pod.spec = 2 (PodSpec.nodeName = 10, priority = 25).
  auto bytes = EncodeProtobufObject({{"apiVersion", "v1"},
                                     {"kind", "Pod"},
                                     {"metadata", {{"name", "a"}}},
                                     {"spec", {{"nodeName", "b"}, {"priority", 7}}}});
  ASSERT_TRUE(bytes.ok());
  const pb::Descriptor* unknown = ApiSchema::Get().Find("k8s.io.apimachinery.pkg.runtime.Unknown");
  pb::DynamicMessageFactory factory;
  std::unique_ptr<pb::Message> u(factory.GetPrototype(unknown)->New());
  ASSERT_TRUE(u->ParseFromString(bytes->substr(4)));
  const std::string raw = u->GetReflection()->GetString(*u, unknown->FindFieldByName("raw"));
  // metadata (field 1, length-delimited) holding name (field 1) "a"; then spec (field 2)
  // holding nodeName (field 10) "b" and priority (field 25, varint) 7.
  const std::string want = std::string("\x0a\x03\x0a\x01" "a", 5) + std::string("\x12\x06\x52\x01" "b" "\xc8\x01\x07", 8);
  EXPECT_EQ(raw, want);
}

TEST(ProtobufCodec, BadBodiesAreErrorsThatSayWhy) {
  EXPECT_FALSE(DecodeProtobufObject("{}").ok());
  EXPECT_FALSE(DecodeProtobufObject(std::string("k8s\0\xff\xff\xff", 7)).ok());
  auto wrong = EncodeProtobufObject({{"apiVersion", "v1"}, {"kind", "Pod"}, {"spec", {{"priority", "high"}}}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("spec.priority"), std::string::npos) << wrong.status().message();
  EXPECT_EQ(EncodeProtobufObject({{"apiVersion", "example.com/v1"}, {"kind", "Widget"}}).status().code(),
            StatusCode::kNotFound);
}

TEST(ProtobufCodec, MediaTypesAreReadFromTheFirstEntry) {
  EXPECT_TRUE(IsProtobufMediaType("application/vnd.kubernetes.protobuf"));
  EXPECT_TRUE(IsProtobufMediaType("application/vnd.kubernetes.protobuf, */*"));
  EXPECT_FALSE(IsProtobufMediaType("application/json, application/vnd.kubernetes.protobuf"));
  EXPECT_FALSE(IsProtobufMediaType("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"));
}

TEST(ApiSchema, EveryServedKindHasAMessage) {
  for (const auto& r : Resources()) {
    EXPECT_NE(ApiSchema::Get().Find(ProtoMessageName(r.group, r.version, r.kind)), nullptr) << r.kind;
  }
}

TEST(OpenApi, V3DescribesPodFieldsWithRequiredAndPatchMetadata) {
  const Json doc = OpenApiV3Document("", "v1");
  const Json& schemas = doc["components"]["schemas"];
  const Json& pod = schemas["io.k8s.api.core.v1.Pod"];
  EXPECT_EQ(pod["x-kubernetes-group-version-kind"][0]["kind"], "Pod");
  EXPECT_TRUE(pod["properties"].contains("spec"));
  const Json& container = schemas["io.k8s.api.core.v1.Container"];
  EXPECT_NE(std::find(container["required"].begin(), container["required"].end(), "image"), container["required"].end());
  EXPECT_FALSE(container["properties"]["image"]["description"].get<std::string>().empty());
  const Json& spec = schemas["io.k8s.api.core.v1.PodSpec"];
  EXPECT_EQ(spec["properties"]["containers"]["x-kubernetes-patch-merge-key"], "name");
  EXPECT_EQ(schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"]["type"], "string");
  // Every reference resolves inside the document.
  std::function<void(const Json&)> check = [&](const Json& j) {
    if (j.is_object()) {
      if (j.contains("$ref")) {
        const std::string ref = j["$ref"];
        EXPECT_TRUE(schemas.contains(ref.substr(std::string("#/components/schemas/").size()))) << ref;
      }
      for (const auto& [k, v] : j.items()) check(v);
    } else if (j.is_array()) {
      for (const Json& v : j) check(v);
    }
  };
  check(schemas);
}

TEST(OpenApi, V2ProtobufHoldsTheSameDefinitions) {
  const std::string& bytes = OpenApiV2Protobuf();
  const pb::Descriptor* d = ApiSchema::Get().Find("openapi.v2.Document");
  pb::DynamicMessageFactory factory;
  std::unique_ptr<pb::Message> doc(factory.GetPrototype(d)->New());
  ASSERT_TRUE(doc->ParseFromString(bytes));
  const pb::Message& defs = doc->GetReflection()->GetMessage(*doc, d->FindFieldByName("definitions"));
  const pb::FieldDescriptor* named = defs.GetDescriptor()->FindFieldByName("additional_properties");
  EXPECT_EQ(static_cast<size_t>(defs.GetReflection()->FieldSize(defs, named)), OpenApiV2Document()["definitions"].size());
  std::set<std::string> names;
  for (int i = 0; i < defs.GetReflection()->FieldSize(defs, named); ++i) {
    const pb::Message& n = defs.GetReflection()->GetRepeatedMessage(defs, named, i);
    names.insert(n.GetReflection()->GetString(n, n.GetDescriptor()->FindFieldByName("name")));
  }
  EXPECT_TRUE(names.contains("io.k8s.api.core.v1.Pod"));
  EXPECT_TRUE(names.contains("io.k8s.api.scheduling.v1.PriorityClass"));
}

TEST(FieldValidation, UnknownFieldsAreReportedByPathAndDropped) {
  Json pod = SamplePod();
  pod["spec"]["containers"][0]["imagee"] = "typo";
  pod["spec"]["bogus"] = 1;
  const SchemaCheck c = CheckAgainstSchema(pod, ApiSchema::Get().Find("k8s.io.api.core.v1.Pod"));
  EXPECT_EQ(c.unknown, (std::vector<std::string>{"spec.bogus", "spec.containers[0].imagee"}));
  EXPECT_TRUE(c.missing.empty());
  EXPECT_EQ(pod, SamplePod());
}

TEST(FieldValidation, RequiredFieldsAreMissingByPath) {
  Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}}},
              {"spec", {{"containers", Json::array({{{"name", "c"}}})}}}};
  const SchemaCheck c = CheckAgainstSchema(pod, ApiSchema::Get().Find("k8s.io.api.core.v1.Pod"));
  ASSERT_EQ(c.missing.size(), 1u);
  EXPECT_EQ(c.missing[0].field, "spec.containers[0].image");
  EXPECT_EQ(c.missing[0].reason, "FieldValueRequired");
}

TEST(FieldValidation, InvalidMessagesBecomeCauses) {
  const auto errors = FieldErrorsOf("Pod \"p\" is invalid: spec.priority: Invalid value: 3; metadata.name: Required value");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].field, "spec.priority");
  EXPECT_EQ(errors[0].reason, "FieldValueInvalid");
  EXPECT_EQ(errors[1].reason, "FieldValueRequired");
  const Json body = InvalidStatusBody("m", "Pod", "", "p", errors);
  EXPECT_EQ(body["details"]["kind"], "Pod");
  EXPECT_EQ(body["details"]["causes"][1]["field"], "metadata.name");
  EXPECT_EQ(body["code"], 422);
  EXPECT_FALSE(ParseFieldValidation("strict").ok());
}

TEST(Endpoint, ListenAddressesAreParsedAndLoopbackIsAnyLoopback) {
  EXPECT_EQ(ParseListenAddress("[::1]:8080")->host, "::1");
  EXPECT_EQ(ParseListenAddress("127.0.0.1:0")->port, 0);
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:99999").ok());
  EXPECT_FALSE(ParseListenAddress("::1:8080").ok());
  EXPECT_FALSE(ParseListenAddress("localhost").ok());
  EXPECT_FALSE(ParseListenAddress("[::1]8080").ok());
  for (const char* h : {"127.0.0.1", "127.1.2.3", "::1", "localhost", "::ffff:127.0.0.1"}) EXPECT_TRUE(IsLoopbackHost(h)) << h;
  for (const char* h : {"0.0.0.0", "10.0.0.1", "::", "example.com"}) EXPECT_FALSE(IsLoopbackHost(h)) << h;
  EXPECT_EQ(ParseListenAddress("[::1]:80")->Authority(), "[::1]:80");
}

TEST(Endpoint, TheKubeconfigNamesTheServerAndToken) {
  const std::string y = KubeconfigYaml({"https://127.0.0.1:6443", "/ca.pem", "t0k", "arbiter"});
  EXPECT_NE(y.find("server: \"https://127.0.0.1:6443\""), std::string::npos);
  EXPECT_NE(y.find("certificate-authority: \"/ca.pem\""), std::string::npos);
  EXPECT_NE(y.find("token: \"t0k\""), std::string::npos);
  EXPECT_NE(y.find("current-context: \"arbiter\""), std::string::npos);
}

TEST(DirLock, ASecondHolderIsRefusedWithThePidOfTheFirst) {
  const std::string dir = testing::TempDir() + "/dirlock-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  auto first = DirLock::Acquire(dir);
  ASSERT_TRUE(first.ok()) << first.status().message();
  // flock is per open file description: another process sees the lock.
  const pid_t child = fork();
  if (child == 0) _exit(DirLock::Acquire(dir).ok() ? 0 : 7);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 7);
  { DirLock released = std::move(*first); }
  const pid_t again = fork();
  if (again == 0) _exit(DirLock::Acquire(dir).ok() ? 0 : 7);
  waitpid(again, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::filesystem::remove_all(dir);
}

TEST(NodeAddresses, NetworksParseAndFormat) {
  auto n = Ipv4Net::Parse("10.64.0.0/10");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->Size(), uint64_t{1} << 22);
  EXPECT_TRUE(n->Contains(ParseIpv4("10.127.255.1").value()));
  EXPECT_FALSE(n->Contains(ParseIpv4("10.128.0.1").value()));
  EXPECT_EQ(FormatIpv4(ParseIpv4("10.0.0.1").value()), "10.0.0.1");
  EXPECT_FALSE(Ipv4Net::Parse("10.0.0.0/33").ok());
  EXPECT_FALSE(Ipv4Net::Parse("10.0.0/8").ok());
}


TEST(TokenFile, AFileWithoutTokensIsAnErrorNotAnOpenServer) {
  const std::string path = testing::TempDir() + "/tokens-" + std::to_string(getpid()) + ".csv";
  {
    std::ofstream f(path);
    f << "# no tokens here\n\n";
  }
  auto tokens = LoadTokenFile(path);
  ASSERT_FALSE(tokens.ok());
  EXPECT_NE(tokens.status().message().find("holds no token"), std::string::npos);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace arbiter::api
