// base::json_text cuts and splices compact JSON text; every splice must print what dump() of the
// changed tree prints, or refuse.
#include "arbiter/base/json_text.h"

#include <gtest/gtest.h>

#include "arbiter/base/json.h"

namespace arbiter::base::json_text {
namespace {

using Json = nlohmann::json;

// The splice against the tree: both must agree byte for byte.
void ExpectSameAsTree(const Json& body, const std::string& key, const Json& value) {
  const std::string text = body.dump();
  auto spliced = WithNestedMember(text, "metadata", key, value.dump());
  ASSERT_TRUE(spliced.has_value()) << text;
  Json changed = body;
  changed["metadata"][key] = value;
  EXPECT_EQ(*spliced, changed.dump());
}

TEST(JsonText, ASplicedResourceVersionIsWhatTheChangedTreePrints) {
  const Json pod = {{"apiVersion", "v1"},
                    {"kind", "Pod"},
                    {"metadata",
                     {{"name", "web-1"},
                      {"namespace", "default"},
                      {"annotations", {{"note", "{\"resourceVersion\":\"7\", \"x\": [1,{\"}\":2}]}"}}},
                      {"resourceVersion", "41"},
                      {"uid", "u-1"}}},
                    {"spec", {{"nodeName", "n1"}, {"containers", Json::array({{{"name", "c"}}})}}},
                    {"status", {{"phase", "Running"}}}};
  ExpectSameAsTree(pod, "resourceVersion", "1234567");  // replaced
  Json no_version = pod;
  no_version["metadata"].erase("resourceVersion");
  ExpectSameAsTree(no_version, "resourceVersion", "8");  // inserted between keys
  ExpectSameAsTree({{"metadata", {{"name", "a"}}}}, "resourceVersion", "9");        // inserted last
  ExpectSameAsTree({{"metadata", {{"uid", "a"}}}}, "resourceVersion", "9");         // inserted first
  ExpectSameAsTree({{"metadata", Json::object()}, {"z", 1}}, "resourceVersion", "9");  // into an empty object
  ExpectSameAsTree({{"a", {{"metadata", 1}}}, {"metadata", {{"generation", 3}, {"name", "x"}}}}, "resourceVersion",
                   "10");  // the top-level member, not a nested one of the same name
}

TEST(JsonText, TextItCannotSpliceExactlyIsRefused) {
  EXPECT_FALSE(WithNestedMember(R"({"kind":"Pod"})", "metadata", "resourceVersion", R"("1")"));  // no metadata
  EXPECT_FALSE(WithNestedMember(R"({"metadata":"x"})", "metadata", "resourceVersion", R"("1")"));  // not an object
  EXPECT_FALSE(WithNestedMember(R"({"metadata":{"na\u006de":"a"}})", "metadata", "resourceVersion", R"("1")"));
  EXPECT_FALSE(WithNestedMember(R"({"metadata":{"name":"a"})", "metadata", "resourceVersion", R"("1")"));  // cut short
  EXPECT_FALSE(WithNestedMember(R"({"metadata": {"name":"a"}})", "metadata", "resourceVersion", R"("1")"));  // not compact
  EXPECT_FALSE(WithNestedMember("", "metadata", "resourceVersion", R"("1")"));
  EXPECT_FALSE(WithNestedMember("[1]", "metadata", "resourceVersion", R"("1")"));
}

TEST(JsonText, AMemberIsItsValuesTextWhateverItsStringsHold) {
  const std::string text = Json{{"a", "x\\\"}"}, {"b", {{"c", Json::array({1, "]", 2})}}}, {"d", 3}}.dump();
  EXPECT_EQ(Member(text, "a"), Json("x\\\"}").dump());
  EXPECT_EQ(Member(text, "b"), R"({"c":[1,"]",2]})");
  EXPECT_EQ(Member(text, "d"), "3");
  EXPECT_FALSE(Member(text, "c"));
  EXPECT_EQ(EndOfValue(text, 0), text.size());
}

}  // namespace
}  // namespace arbiter::base::json_text
