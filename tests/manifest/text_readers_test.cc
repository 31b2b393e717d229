// The fast readers (json_text.h, yaml_text.h) against the reference readers: on every manifest
// of the repository, as YAML and written as JSON, and on thousands of damaged variants of them,
// both report the same errors word for word and decode the same cluster (compared through the
// plan it gives, with every node's explanation). Also what only the fast JSON reader does:
// several JSON values in one file; and Lists read item by item.
#include "arbiter/manifest/json_text.h"
#include "arbiter/manifest/yaml_text.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "arbiter/base/json.h"
#include <yaml-cpp/yaml.h>

#include "arbiter/admission/priority_admission.h"
#include "arbiter/manifest/loader.h"
#include "arbiter/plan/render.h"
#include "arbiter/sim/plan_simulation.h"
#include "testing/paths.h"

namespace arbiter::manifest {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string ReadWholeFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A YAML tree as JSON: plain scalars that read as numbers, booleans or null become those. Throws
// on trees that aliases make deep or huge (the corpus has those on purpose).
Json ToJson(const YAML::Node& n, int depth, size_t& budget) {
  if (depth > 60 || budget == 0) throw std::runtime_error("too deep or too large for JSON");
  --budget;
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      Json o = Json::object();
      for (const auto& kv : n) o[kv.first.Scalar()] = ToJson(kv.second, depth + 1, budget);
      return o;
    }
    case YAML::NodeType::Sequence: {
      Json a = Json::array();
      for (const auto& e : n) a.push_back(ToJson(e, depth + 1, budget));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() != "!") {
        static const std::regex number(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)");
        if (s == "true" || s == "false") return s == "true";
        if (s == "null" || s == "~") return nullptr;
        if (std::regex_match(s, number)) return Json::parse(s);
      }
      return s;
    }
    default:
      return nullptr;
  }
}

// Every YAML manifest of the repository, as it is.
std::vector<std::pair<std::string, std::string>> YamlManifests() {
  std::vector<std::pair<std::string, std::string>> out;
  const fs::path src = arbiter::testing::SourceDir();
  std::vector<fs::path> files;
  for (const char* dir : {"examples", "tests/manifest/bad_inputs", "fuzz/seeds"}) {
    for (const auto& e : fs::recursive_directory_iterator(src / dir)) {
      if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) out.emplace_back(fs::relative(f, src).string(), ReadWholeFile(f));
  return out;
}

// Every manifest of the repository that YAML reads, as JSON text: a List of its documents.
std::vector<std::pair<std::string, std::string>> JsonManifests() {
  std::vector<std::pair<std::string, std::string>> out;
  const fs::path src = arbiter::testing::SourceDir();
  std::vector<fs::path> files;
  for (const char* dir : {"examples", "tests/manifest/bad_inputs"}) {
    for (const auto& e : fs::recursive_directory_iterator(src / dir)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".yaml" || ext == ".json")) files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string text = ReadWholeFile(f);
    const std::string name = fs::relative(f, src).string();
    if (f.extension() == ".json") {
      out.emplace_back(name, text);
      continue;
    }
    try {
      Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", Json::array()}};
      for (const auto& doc : YAML::LoadAll(text)) {
        size_t budget = 100000;
        if (doc.IsDefined() && !doc.IsNull()) list["items"].push_back(ToJson(doc, 0, budget));
      }
      out.emplace_back(name + ".json", list.dump(4));
    } catch (const std::exception&) {
      // Not YAML (the corpus holds broken YAML on purpose): nothing to write as JSON.
    }
  }
  return out;
}

// What a load gives, as one comparable text: the errors, else the plan with its explanation.
std::string Outcome(const std::string& name, const std::string& text, TextReader reader) {
  LoadResult r = Load({{name, text}}, reader);
  std::string out;
  for (const auto& e : r.errors) out += "error: " + e + "\n";
  if (!r.ok()) return out;
  for (const auto& e : admission::AdmitPriorities(r.objects)) out += "admission: " + e + "\n";
  if (!out.empty()) return out;
  sim::PlanOptions o;
  o.explain = true;
  auto plan = sim::RunPlan(r.objects, o);
  if (!plan.ok()) return "plan: " + plan.status().message();
  return plan::Render(*plan, plan::Format::kJson, true);
}

TEST(JsonTextReader, DecodesEveryManifestOfTheRepositoryAsTheReferenceReaderDoes) {
  const auto manifests = JsonManifests();
  ASSERT_GE(manifests.size(), 150u) << "the examples and the bad-input corpus were not found under "
                                    << arbiter::testing::SourceDir();
  for (const auto& [name, text] : manifests) {
    EXPECT_EQ(Outcome(name, text, TextReader::kFast), Outcome(name, text, TextReader::kReference)) << name;
  }
}

// Damages each source `per_source` times (one byte replaced, inserted or removed, at random with
// a fixed seed: the same cases on every run) and compares the readers on each; returns how many
// cases were compared.
int CompareOnDamagedText(const std::vector<std::pair<std::string, std::string>>& sources, int per_source) {
  std::mt19937_64 rng(17);
  const std::string alphabet = "{}[],:\"\\0123456789-+.eE tfnul\n\ta\x01\x7f\xc3\xff#&*!|>'?%@`~";
  int cases = 0;
  for (const auto& [name, text] : sources) {
    for (int k = 0; k < per_source && !text.empty(); ++k) {
      std::string damaged = text;
      const size_t at = std::uniform_int_distribution<size_t>(0, damaged.size() - 1)(rng);
      const char c = alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
      switch (rng() % 3) {
        case 0: damaged[at] = c; break;
        case 1: damaged.insert(damaged.begin() + static_cast<std::ptrdiff_t>(at), c); break;
        default: damaged.erase(at, 1); break;
      }
      const std::string reference = Outcome(name, damaged, TextReader::kReference);
      // Text after the first JSON value: the reference reader refuses it, where the fast reader
      // reads it as the next value, as kubectl does (see ReadsSeveralJsonValuesInOneFileAsKubectlDoes).
      if (reference.find("; expected end of input") != std::string::npos) continue;
      ++cases;
      EXPECT_EQ(Outcome(name, damaged, TextReader::kFast), reference)
          << name << " damaged at byte " << at << ":\n"
          << damaged.substr(at > 80 ? at - 80 : 0, 160);
    }
  }
  return cases;
}

TEST(JsonTextReader, ReportsExactlyWhatTheReferenceReaderReportsOnDamagedText) {
  std::vector<std::pair<std::string, std::string>> sources;
  for (const auto& m : JsonManifests()) {
    if (m.first.rfind("examples/", 0) == 0 || m.first.find("json_") != std::string::npos) sources.push_back(m);
  }
  ASSERT_GE(sources.size(), 10u);
  EXPECT_GE(CompareOnDamagedText(sources, 200), 2000);
}

TEST(YamlTextReader, DecodesEveryYamlManifestOfTheRepositoryAsTheReferenceReaderDoes) {
  const auto manifests = YamlManifests();
  ASSERT_GE(manifests.size(), 150u) << "the examples and the bad-input corpus were not found under "
                                    << arbiter::testing::SourceDir();
  for (const auto& [name, text] : manifests) {
    EXPECT_EQ(Outcome(name, text, TextReader::kFast), Outcome(name, text, TextReader::kReference)) << name;
  }
}

TEST(YamlTextReader, ReportsExactlyWhatTheReferenceReaderReportsOnDamagedText) {
  std::vector<std::pair<std::string, std::string>> sources;
  for (const auto& m : YamlManifests()) {
    if (m.first.rfind("examples/", 0) == 0 || m.first.rfind("fuzz/", 0) == 0) sources.push_back(m);
  }
  ASSERT_GE(sources.size(), 5u);
  EXPECT_GE(CompareOnDamagedText(sources, 300), 1500);
}

TEST(YamlTextReader, HandsOverAListsItemsOneByOneAsTheyAreParsed) {
  std::string list = "apiVersion: v1\nitems:\n";
  for (int i = 0; i < 50; ++i) {
    list += "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p" + std::to_string(i) +
            "\n  spec:\n    containers:\n    - name: c\n";
  }
  list += "kind: List\nmetadata:\n  resourceVersion: \"\"\n";
  YamlTextReader reader;
  ValueTree tree;
  int n = 0;
  ASSERT_EQ(reader.Read(list, tree,
                        [&](const Node& item, int i) {
                          EXPECT_EQ(i, n + 1);
                          EXPECT_EQ(item.Child("metadata").Child("name").Scalar(), "p" + std::to_string(n));
                          ++n;
                        }),
            YamlTextReader::Result::kDocument)
      << reader.why();
  EXPECT_EQ(n, 50);
  EXPECT_TRUE(reader.items_streamed());
  EXPECT_EQ(tree.root().Child("kind").Scalar(), "List");
  LoadResult r = Load({{"list.yaml", list}});
  ASSERT_TRUE(r.ok()) << r.errors[0];
  ASSERT_EQ(r.objects.pods.size(), 50u);
  EXPECT_EQ(r.objects.pods[49].origin.item, 50);
}

TEST(YamlTextReader, TakesBackItemsOfADocumentThatIsNoList) {
  // `items` at the top of a Pod: not a List, so what was handed over is taken back and the
  // document decoded as the reference reader decodes it.
  const std::string pod = "apiVersion: v1\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: x}}\n"
                          "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n";
  EXPECT_EQ(Outcome("pod.yaml", pod, TextReader::kFast), Outcome("pod.yaml", pod, TextReader::kReference));
  LoadResult r = Load({{"pod.yaml", pod}});
  ASSERT_EQ(r.objects.pods.size(), 1u);
  EXPECT_EQ(r.objects.pods[0].object.name, "p");
}

TEST(YamlTextReader, LeavesAnchorsAndAliasesToTheReferenceReader) {
  const std::string yaml = "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n  labels: &l {zone: x}\n"
                           "  annotations: *l\nstatus:\n  allocatable: {cpu: \"4\"}\n";
  ValueTree tree;
  EXPECT_EQ(YamlTextReader().Read(yaml, tree, [](const Node&, int) {}), YamlTextReader::Result::kStepAside);
  LoadResult r = Load({{"alias.yaml", yaml}});
  ASSERT_TRUE(r.ok()) << r.errors[0];
  EXPECT_EQ(r.objects.nodes.size(), 1u);
}

std::string PodJson(const std::string& name, const std::string& extra = "") {
  return R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": ")" + name +
         R"("}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}])" + extra + "}}";
}

TEST(JsonTextReader, ReadsSeveralJsonValuesInOneFileAsKubectlDoes) {
  LoadResult r = Load({{"two.json", PodJson("a") + "\n" + PodJson("b") + " " + PodJson("c")}});
  ASSERT_TRUE(r.ok()) << r.errors[0];
  ASSERT_EQ(r.objects.pods.size(), 3u);
  EXPECT_EQ(r.objects.pods[2].object.name, "c");
  EXPECT_EQ(r.objects.pods[2].origin.document, 3);
}

TEST(JsonTextReader, NamesTheDocumentOfAnErrorInALaterValue) {
  LoadResult r = Load({{"two.json", PodJson("a") + "\n" + PodJson("b", R"(, "priority": "high")")}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0], "two.json: document 2: Pod default/b: spec.priority: must be an integer, not a string");
}

TEST(JsonTextReader, HandsALaterValueItCannotReadToTheReferenceReaderAndReadsOn) {
  // A key given twice: the reference reader's verdict on that value alone, and the values after
  // it are still read.
  const std::string dup = R"({"apiVersion": "v1", "kind": "Pod", "kind": "Pod", "metadata": {"name": "d"}})";
  LoadResult r = Load({{"three.json", PodJson("a") + "\n" + dup + "\n" + PodJson("c")}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("three.json: document 2: invalid JSON: duplicate key \"kind\""), std::string::npos)
      << r.errors[0];

  // Nesting the fast reader leaves to the reference reader, which accepts it: decoded, and on.
  std::string deep = "1";
  for (int i = 0; i < 62; ++i) deep = "[" + deep + "]";
  LoadResult d = Load({{"deep.json", PodJson("a") + "\n" +
                                          R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "annotations": {"x": "y"}}, "spec": {"containers": [{"name": "c"}]}, "extra": )" +
                                          deep + "}\n" + PodJson("c")}},
                      TextReader::kFast, UnknownFields::kIgnore);
  ASSERT_TRUE(d.ok()) << d.errors[0];
  ASSERT_EQ(d.objects.pods.size(), 3u);
  EXPECT_EQ(d.objects.pods[1].object.name, "b");
  EXPECT_EQ(d.objects.pods[2].object.name, "c");
}

// A value followed by text that cannot end (an unterminated string or array): found by the
// fuzzer, where the fast reader once asked for the same document again and again. The values
// before it are read; the unfinished one is the reference reader's error, named by its document.
TEST(JsonTextReader, AValueFollowedByUnfinishedTextIsReadUpToItsError) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{ }\n    \"SysBatchSche ", "document 2: invalid JSON"},
      {"{ }\n\"abc", "document 2: invalid JSON"},
      {PodJson("a") + "\n{\"kind\": \"Po", "document 2: invalid JSON"},
      {PodJson("a") + PodJson("b") + "  [1, 2", "document 3: invalid JSON"},
  };
  for (const auto& [text, want] : cases) {
    const std::string fast = Outcome("t.json", text, TextReader::kFast);
    EXPECT_NE(fast.find(want), std::string::npos) << text << "\n" << fast;
  }
}

TEST(JsonTextReader, ReadsAListItemByItemIntoOneReusedTree) {
  std::string list = R"({"apiVersion": "v1", "items": [)";
  for (int i = 0; i < 100; ++i) list += (i > 0 ? "," : "") + PodJson("p" + std::to_string(i));
  list += R"(], "kind": "List", "metadata": {"resourceVersion": ""}})";
  JsonTextReader reader(list, list.size());
  ValueTree tree;
  ASSERT_EQ(reader.Next(tree), JsonTextReader::Result::kDocument);
  Node root = tree.root();
  ASSERT_TRUE(root.Child("items").IsSequence());
  EXPECT_EQ(root.Child("kind").Scalar(), "List");
  int n = 0;
  for (const auto& item : root.Child("items")) {
    EXPECT_EQ(item.Child("metadata").Child("name").Scalar(), "p" + std::to_string(n));
    ++n;
  }
  EXPECT_EQ(n, 100);
  EXPECT_TRUE(reader.Finish());
  EXPECT_EQ(reader.Next(tree), JsonTextReader::Result::kEnd);
}

TEST(JsonTextReader, StepsAsideOnAnErrorInAListItemAfterOthersWereRead) {
  std::string list = R"({"apiVersion": "v1", "kind": "List", "items": [)" + PodJson("a") + "," + PodJson("b") +
                     R"(, {"kind": "Pod", "apiVersion": "v1", "x": tru}]})";
  JsonTextReader reader(list, list.size());
  ValueTree tree;
  ASSERT_EQ(reader.Next(tree), JsonTextReader::Result::kDocument) << reader.why();
  int n = 0;
  for (const auto& item : tree.root().Child("items")) {
    (void)item;
    ++n;
  }
  EXPECT_EQ(n, 2);
  EXPECT_FALSE(reader.Finish());
  EXPECT_FALSE(reader.why().empty());
  // Through the loader: the reference reader's error, and nothing of the List's items kept.
  LoadResult r = Load({{"list.json", list}});
  EXPECT_TRUE(r.objects.pods.empty());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors, Load({{"list.json", list}}, TextReader::kReference).errors);
}

}  // namespace
}  // namespace arbiter::manifest
