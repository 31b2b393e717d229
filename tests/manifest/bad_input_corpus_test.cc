// The bad-input corpus: every file in tests/manifest/bad_inputs/ is a mistake a user could make.
// Loading it (with priority admission, as `arbiter plan` does) must fail without throwing, every
// error line must name the file and, unless the whole file is at fault, the document, and some
// line must contain the file's expected text. That text is the file's first line,
// `# expect: TEXT`, or the content of the sidecar file NAME.expect for files that cannot hold a
// comment (JSON, empty and binary files).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace arbiter::manifest
