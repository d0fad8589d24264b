#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "master/config/experiment_config.h"

namespace det::master::config {
namespace {

using nlohmann::json;

// Nesting depth of a value (a scalar is 0, [] is 1).
int JsonDepthOf(const json& j) {
  if (!j.is_structured()) return 0;
  int deepest = 0;
  for (const json& child : j) deepest = std::max(deepest, JsonDepthOf(child));
  return deepest + 1;
}

json Yaml(const std::string& text) {
  auto j = YamlToJson(text);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  return j.ok() ? *j : json();
}

// Plain scalars are typed the YAML 1.1 way; quoted ones stay strings.
TEST(YamlToJsonTest, ScalarTyping) {
  json j = Yaml(
      "i: 42\nneg: -7\nhex: 0x1f\nf: 0.5\nexp: 1e-3\ndot: .5\ninf: .inf\nninf: -.inf\n"
      "t: true\nf2: False\nn: null\ntilde: ~\nempty:\ns: hello\nq: \"42\"\nsq: 'true'\n"
      "yes_word: yes\nversion: 1.2.3\nbig: 18446744073709551615\n");
  EXPECT_TRUE(j["i"].is_number_integer());
  EXPECT_EQ(j["i"], 42);
  EXPECT_EQ(j["neg"], -7);
  EXPECT_EQ(j["hex"], 31);
  EXPECT_TRUE(j["f"].is_number_float());
  EXPECT_DOUBLE_EQ(j["exp"].get<double>(), 0.001);
  EXPECT_DOUBLE_EQ(j["dot"].get<double>(), 0.5);
  EXPECT_TRUE(std::isinf(j["inf"].get<double>()));
  EXPECT_LT(j["ninf"].get<double>(), 0);
  EXPECT_EQ(j["t"], true);
  EXPECT_EQ(j["f2"], false);
  EXPECT_TRUE(j["n"].is_null());
  EXPECT_TRUE(j["tilde"].is_null());
  EXPECT_TRUE(j["empty"].is_null());
  EXPECT_EQ(j["s"], "hello");
  EXPECT_EQ(j["q"], "42");
  EXPECT_EQ(j["sq"], "true");
  EXPECT_EQ(j["yes_word"], "yes");
  EXPECT_EQ(j["version"], "1.2.3");
  EXPECT_TRUE(j["big"].is_number_unsigned());
}

// Nested maps, sequences, flow style and aliases all come through.
TEST(YamlToJsonTest, Structures) {
  json j = Yaml("a: &anchor {x: [1, 2, {y: z}]}\nb: *anchor\nc:\n  - one\n  - 2\n");
  EXPECT_EQ(j["a"], (json{{"x", {1, 2, {{"y", "z"}}}}}));
  EXPECT_EQ(j["b"], j["a"]);
  EXPECT_EQ(j["c"], (json{"one", 2}));
}

// Syntax errors name the line and column (1-based).
TEST(YamlToJsonTest, SyntaxErrorHasLineAndColumn) {
  auto j = YamlToJson("name: ok\nsearcher:\n  name: [unclosed\n");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(j.status().message().find("line "), std::string::npos) << j.status().message();
  EXPECT_NE(j.status().message().find(", column "), std::string::npos);

  auto bad = YamlToJson("a: 1\n b: 2\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2, column"), std::string::npos)
      << bad.status().message();
}

std::string BlockSequences(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += "- ";
  return s + "x\n";
}

std::string BlockMaps(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += std::string(i, ' ') + "a:\n";
  return s + std::string(depth, ' ') + "x\n";
}

// Configs and templates come from any logged-in user: nesting in any YAML form, and aliases that
// refer to themselves, are refused with an error instead of recursing as deep as the input says.
TEST(YamlToJsonTest, DeepNestingInEveryFormAndSelfAliasesAreRefusedCleanly) {
  EXPECT_EQ(JsonDepthOf(Yaml(BlockSequences(150))), 150);
  EXPECT_EQ(JsonDepthOf(Yaml(BlockMaps(150))), 150);
  std::vector<std::string> deep = {BlockSequences(201), BlockSequences(800),
                                   BlockSequences(5000), BlockMaps(201),
                                   BlockMaps(1000),      std::string(60000, '['),
                                   std::string(60000, '{'), "a: " + std::string(60000, '[')};
  for (const std::string& text : deep) {
    auto j = YamlToJson(text);
    ASSERT_FALSE(j.ok()) << text.substr(0, 40);
    EXPECT_EQ(j.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(j.status().message().rfind("invalid yaml: ", 0), 0u) << j.status().message();
  }
  for (const char* self : {"a: &a [*a]\n", "a: &a {b: *a}\n", "&a [x, *a]\n"}) {
    auto j = YamlToJson(self);
    ASSERT_FALSE(j.ok()) << self;
    EXPECT_NE(j.status().message().find("levels after expanding aliases"), std::string::npos)
        << self << ": " << j.status().message();
  }
}

TEST(YamlToJsonTest, EmptyDocumentIsNull) { EXPECT_TRUE(Yaml("").is_null()); }

}  // namespace
}  // namespace det::master::config
