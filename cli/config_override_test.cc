#include "cli/config_override.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

using ojson = nlohmann::ordered_json;

ojson Value(const std::string& text) {
  Result<ojson> v = ParseOverrideValue(text);
  EXPECT_TRUE(v.ok()) << v.status().message();
  return v.ok() ? *v : ojson();
}

// Override values are typed as YAML scalars.
TEST(ConfigOverrideTest, ValueTyping) {
  EXPECT_TRUE(Value("3").is_number_integer());
  EXPECT_EQ(Value("3"), 3);
  EXPECT_EQ(Value("-7"), -7);
  EXPECT_TRUE(Value("1e-3").is_number_float());
  EXPECT_DOUBLE_EQ(Value("1e-3").get<double>(), 0.001);
  EXPECT_DOUBLE_EQ(Value("0.5").get<double>(), 0.5);
  EXPECT_EQ(Value("true"), true);
  EXPECT_EQ(Value("False"), false);
  EXPECT_TRUE(Value("null").is_null());
  EXPECT_TRUE(Value("").is_null());
  EXPECT_EQ(Value("adam"), "adam");
  EXPECT_EQ(Value("\"3\""), "3");
  EXPECT_EQ(Value("'true'"), "true");
  EXPECT_EQ(Value("1.2.3"), "1.2.3");
  EXPECT_EQ(Value("0x10"), 16);
}

// A value with commas becomes a list of typed values; flow collections parse too.
TEST(ConfigOverrideTest, Lists) {
  EXPECT_EQ(Value("1,2,x"), ojson::parse(R"([1, 2, "x"])"));
  EXPECT_EQ(Value("[1]"), ojson::parse("[1]"));
  EXPECT_EQ(Value("{a: 1}"), ojson::parse(R"({"a": 1})"));
}

// With no overrides the text goes through unchanged (comments and all).
TEST(ConfigOverrideTest, NoOverridesKeepsText) {
  std::string text = "name: x  # comment\nsearcher:\n  name: single\n";
  Result<std::string> out = ApplyConfigOverrides(text, {});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, text);
}

// Dotted paths set nested values, creating maps as needed, and keep key order.
TEST(ConfigOverrideTest, AppliesDottedPaths) {
  std::string text =
      "name: exp\nhyperparameters:\n  lr: 0.1\n  layers: 2\nsearcher:\n  name: single\n"
      "  max_length:\n    batches: 100\n";
  Result<std::string> out = ApplyConfigOverrides(
      text, {"hyperparameters.lr=1e-3", "searcher.max_length.batches=5", "resources.slots_per_trial=2",
             "name=renamed", "debug=true"});
  ASSERT_TRUE(out.ok()) << out.status().message();
  ojson j = ojson::parse(*out);
  EXPECT_DOUBLE_EQ(j["hyperparameters"]["lr"].get<double>(), 0.001);
  EXPECT_EQ(j["hyperparameters"]["layers"], 2);
  EXPECT_EQ(j["searcher"]["max_length"]["batches"], 5);
  EXPECT_EQ(j["resources"]["slots_per_trial"], 2);
  EXPECT_EQ(j["name"], "renamed");
  EXPECT_EQ(j["debug"], true);
  EXPECT_EQ(j.begin().key(), "name");
  // The output is itself valid YAML that reads back the same.
  Result<ojson> again = YamlToJson(*out);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, j);
}

// An override replaces a scalar on the way with a map.
TEST(ConfigOverrideTest, ReplacesScalarWithMap) {
  Result<std::string> out = ApplyConfigOverrides("a: 1\n", {"a.b=2"});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(ojson::parse(*out), ojson::parse(R"({"a": {"b": 2}})"));
}

// Malformed overrides and YAML are errors that say what is wrong.
TEST(ConfigOverrideTest, Errors) {
  Result<std::string> no_eq = ApplyConfigOverrides("a: 1\n", {"novalue"});
  ASSERT_FALSE(no_eq.ok());
  EXPECT_NE(no_eq.status().message().find("novalue"), std::string::npos);
  EXPECT_FALSE(ApplyConfigOverrides("a: 1\n", {"a..b=1"}).ok());
  EXPECT_FALSE(ApplyConfigOverrides("a: [1\n", {"a=1"}).ok());
  EXPECT_FALSE(ApplyConfigOverrides("- 1\n- 2\n", {"a=1"}).ok());
}

// YAML typing of a whole config: quoted scalars stay strings, plain ones are typed.
TEST(ConfigOverrideTest, YamlToJsonTypes) {
  Result<ojson> j = YamlToJson("a: 1\nb: '1'\nc: 1.5\nd: yes\ne: ~\nf: [x, 2]\ng: hello world\n");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["a"], 1);
  EXPECT_EQ((*j)["b"], "1");
  EXPECT_DOUBLE_EQ((*j)["c"].get<double>(), 1.5);
  EXPECT_EQ((*j)["d"], true);
  EXPECT_TRUE((*j)["e"].is_null());
  EXPECT_EQ((*j)["f"], ojson::parse(R"(["x", 2])"));
  EXPECT_EQ((*j)["g"], "hello world");
}

// Flow collections keep their commas; typed values land at nested paths and list indices.
TEST(ConfigOverrideTest, FlowCollectionsNestedPathsAndIndices) {
  EXPECT_EQ(Value("[1, 2]"), ojson::parse("[1, 2]"));
  EXPECT_EQ(Value("{a: 1, b: x}"), ojson::parse(R"({"a": 1, "b": "x"})"));
  std::string base =
      "searcher: {name: single, max_length: {batches: 5}}\n"
      "bind_mounts:\n  - {host_path: /a, container_path: /a}\n";
  Result<std::string> out = ApplyConfigOverrides(
      base, {"searcher.max_length.batches=50", "resources.slots_per_trial=2",
             "bind_mounts[0].read_only=true", "bind_mounts.1={host_path: /b, container_path: /b}",
             "hyperparameters.lr=0.5"});
  ASSERT_TRUE(out.ok()) << out.status().message();
  ojson cfg = ojson::parse(*out);
  EXPECT_EQ(cfg["searcher"]["max_length"]["batches"], 50);
  EXPECT_EQ(cfg["resources"]["slots_per_trial"], 2);
  EXPECT_EQ(cfg["bind_mounts"][0]["read_only"], true);
  EXPECT_EQ(cfg["bind_mounts"][1]["host_path"], "/b");
  EXPECT_DOUBLE_EQ(cfg["hyperparameters"]["lr"].get<double>(), 0.5);
  EXPECT_FALSE(ApplyConfigOverrides(base, {"bind_mounts[5].read_only=true"}).ok());
  EXPECT_FALSE(ApplyConfigOverrides(base, {"searcher[0]=x"}).ok());
  EXPECT_FALSE(ApplyConfigOverrides(base, {"a..b=1"}).ok());
}

}  // namespace
}  // namespace det::cli
