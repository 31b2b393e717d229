// The bad-input corpus: every file in tests/manifest/bad_inputs/ is a mistake a user could make.
// Loading it (with priority admission, as `arbiter plan` does) must fail without throwing, every
// error line must name the file and, unless the whole file is at fault, the document, and some
// line must contain the file's expected text. That text is the file's first line,
// `# expect: TEXT`, or the content of the sidecar file NAME.expect for files that cannot hold a
// comment (JSON, empty and binary files).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arbiter/base/json.h"

#include "arbiter/manifest/loader.h"
#include "testing/paths.h"

#include "testing/plan_harness.h"

namespace arbiter::manifest {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kExpectSuffix = ".expect";
constexpr std::string_view kExpectComment = "# expect: ";

fs::path CorpusDir() { return fs::path(arbiter::testing::SourceDir()) / "tests" / "manifest" / "bad_inputs"; }

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The corpus files (not the sidecars), sorted by name.
std::vector<std::string> CorpusFiles() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(CorpusDir(), ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && !EndsWith(name, kExpectSuffix)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TrimRight(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// The expected substring for `path`, or "" if the file states none.
std::string Expectation(const fs::path& path, const std::string& content) {
  fs::path sidecar = path;
  sidecar += std::string(kExpectSuffix);
  if (fs::exists(sidecar)) return TrimRight(ReadAll(sidecar));
  if (!StartsWith(content, kExpectComment)) return "";
  return TrimRight(content.substr(kExpectComment.size(),
                                  content.find('\n') - kExpectComment.size()));
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += "\n  " + l;
  return s;
}

class BadInputCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BadInputCorpusTest, IsRejectedWithAnErrorNamingFileDocumentAndField) {
  const std::string& name = GetParam();
  const fs::path path = CorpusDir() / name;
  const std::string content = ReadAll(path);
  const std::string expected = Expectation(path, content);
  ASSERT_FALSE(expected.empty()) << name << " has neither a `# expect:` first line nor a "
                                 << name << kExpectSuffix << " file";

  std::vector<std::string> errors;
  ASSERT_NO_THROW(errors = arbiter::testing::LoadErrors(content, name));
  ASSERT_FALSE(errors.empty()) << name << " was accepted";

  const std::string whole_file = name + ": the file ";
  const std::string document = name + ": document ";
  for (const auto& e : errors) {
    EXPECT_TRUE(StartsWith(e, name + ": ")) << "does not start with the file name: " << e;
    EXPECT_TRUE(StartsWith(e, document) || StartsWith(e, whole_file))
        << "names no document: " << e;
  }
  EXPECT_TRUE(std::any_of(errors.begin(), errors.end(),
                          [&](const std::string& e) { return e.find(expected) != std::string::npos; }))
      << "no error contains \"" << expected << "\"; the errors are:" << Joined(errors);
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum) c = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInputCorpusTest, ::testing::ValuesIn(CorpusFiles()), TestName);

TEST(BadInputCorpus, HoldsAtLeastFortyFiveFiles) {
  EXPECT_GE(CorpusFiles().size(), 45u) << "corpus directory: " << CorpusDir();
}

TEST(BadInputCorpus, EverySidecarBelongsToAFile) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(CorpusDir(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!EndsWith(name, kExpectSuffix)) continue;
    const std::string target = name.substr(0, name.size() - kExpectSuffix.size());
    EXPECT_TRUE(fs::exists(CorpusDir() / target)) << name << " has no file " << target;
  }
  EXPECT_FALSE(ec) << ec.message();
}

// The API server decodes the JSON objects it holds without printing them: each JSON file of the
// corpus that parses as one JSON value reports, decoded from that value, what its text reports.
// Except what only text has: duplicate keys and nesting (the API server's body parser bounds
// and reports those itself), and the digits of an integer beyond 64 bits (a parsed value holds
// it as a floating-point number).
TEST(BadInputCorpus, JsonDecodedFromItsValueReportsWhatItsTextReports) {
  const std::set<std::string> text_only = {"json_deeply_nested.json", "json_duplicate_key.json",
                                           "json_priority_overflow.json"};
  size_t compared = 0;
  for (const std::string& name : CorpusFiles()) {
    if (!EndsWith(name, ".json") || text_only.contains(name)) continue;
    const std::string text = ReadAll(CorpusDir() / name);
    const nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) continue;  // a syntax error: only text has it
    for (const bool strict : {false, true}) {
      const LoadResult from_text = DecodeEach({{name, text, strict}});
      const LoadResult from_value = DecodeJson(name, value, strict);
      EXPECT_EQ(from_value.errors, from_text.errors) << name << (strict ? " (strict strings)" : "");
    }
    ++compared;
  }
  EXPECT_GE(compared, 8u);
}

TEST(JsonDecoding, AnObjectDecodesFromItsValueAsFromItsText) {
  const std::string text = R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "team", "labels": {"app": "web", "tier": "1"}, "uid": "u1"},
    "spec": {"priority": 7, "nodeName": "n1", "terminationGracePeriodSeconds": 30,
      "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
      "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms":
        [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}},
      "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "250m", "memory": "64Mi"},
                                                                "limits": {"cpu": 1, "nvidia.com/gpu": 2}}},
                     {"name": "d", "image": "y", "ports": [{"containerPort": 80, "hostPort": 8080}]}]}})";
  const LoadResult a = DecodeEach({{"p.json", text}});
  const LoadResult b = DecodeJson("p.json", nlohmann::json::parse(text));
  ASSERT_TRUE(a.ok()) << Joined(a.errors);
  ASSERT_TRUE(b.ok()) << Joined(b.errors);
  ASSERT_EQ(a.objects.pods.size(), 1u);
  ASSERT_EQ(b.objects.pods.size(), 1u);
  const model::Pod& x = a.objects.pods[0].object;
  const model::Pod& y = b.objects.pods[0].object;
  EXPECT_EQ(y.Key(), x.Key());
  EXPECT_EQ(y.uid, x.uid);
  EXPECT_EQ(y.labels, x.labels);
  EXPECT_EQ(y.node_name, x.node_name);
  EXPECT_EQ(y.spec_priority, x.spec_priority);
  EXPECT_EQ(y.termination_grace_period_seconds, x.termination_grace_period_seconds);
  EXPECT_EQ(y.requests.milli_cpu, 250);
  EXPECT_EQ(y.requests.milli_cpu, x.requests.milli_cpu);
  EXPECT_EQ(y.requests.memory, x.requests.memory);
  EXPECT_EQ(y.requests.Get("nvidia.com/gpu"), 2);
  EXPECT_EQ(y.non_zero_milli_cpu, x.non_zero_milli_cpu);
  EXPECT_EQ(y.non_zero_memory, x.non_zero_memory);
  EXPECT_EQ(y.tolerations.size(), 1u);
  EXPECT_EQ(y.host_ports.size(), 1u);
  ASSERT_TRUE(y.affinity.node_affinity.required.has_value());
  EXPECT_EQ(x.affinity.node_affinity.required.has_value(), true);
}

}  // namespace
}  // namespace arbiter::manifest
