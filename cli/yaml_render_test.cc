#include "cli/yaml_render.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace det::cli {
namespace {

TEST(RenderYaml, BlockStyleRoundTrips) {
  nlohmann::json v = nlohmann::json::parse(
      R"({"description": "x: y", "resources": {"slots_per_trial": 2}, "labels": ["a", "b"],
          "flag": true, "lr": 0.5, "none": null})");
  std::string text = RenderYaml(v);
  EXPECT_NE(text.find("resources:\n  slots_per_trial: 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("labels:\n  - a\n  - b\n"), std::string::npos) << text;
  YAML::Node back = YAML::Load(text);
  EXPECT_EQ(back["description"].as<std::string>(), "x: y");  // quoted where needed
  EXPECT_TRUE(back["flag"].as<bool>());
  EXPECT_DOUBLE_EQ(back["lr"].as<double>(), 0.5);
  EXPECT_TRUE(back["none"].IsNull());
}

TEST(RenderYaml, EmptyObject) { EXPECT_EQ(RenderYaml(nlohmann::json::object()), "{}\n"); }

}  // namespace
}  // namespace det::cli
