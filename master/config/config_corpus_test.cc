// Walks tests/config_corpus: every valid/*.yaml must parse (and rebuild from its defaulted form
// unchanged); every invalid/*.yaml must fail with each line of its .expected file somewhere in
// the message.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "master/config/experiment_config.h"

namespace det::master::config {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> Yamls(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(fs::path(DET_CONFIG_CORPUS_DIR) / dir)) {
    if (entry.path().extension() == ".yaml") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

ConfigDefaults MasterLikeDefaults() {
  ConfigDefaults d;
  d.checkpoint_storage = {{"type", "shared_fs"}, {"host_path", "/tmp/det-checkpoints"}};
  d.experiment_seed = 1;
  return d;
}

TEST(ConfigCorpusTest, ValidConfigsLoad) {
  std::vector<fs::path> files = Yamls("valid");
  ASSERT_GE(files.size(), 20u);
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    auto cfg = ParseExperimentConfig(Slurp(path), MasterLikeDefaults());
    ASSERT_TRUE(cfg.ok()) << cfg.status().message();
    auto again = ExperimentConfigFromJson(cfg->defaulted);
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ(again->defaulted.dump(), cfg->defaulted.dump());
    // The test-mode rewrite of every valid config is valid too.
    auto test_cfg = ParseExperimentConfig(
        MakeTestModeConfig(*YamlToJson(Slurp(path)), 7).dump(), MasterLikeDefaults());
    ASSERT_TRUE(test_cfg.ok()) << test_cfg.status().message();
    EXPECT_EQ(test_cfg->searcher.name, "single");
  }
}

TEST(ConfigCorpusTest, InvalidConfigsReportExpectedMessages) {
  std::vector<fs::path> files = Yamls("invalid");
  ASSERT_GE(files.size(), 15u);
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    fs::path expected_path = path;
    expected_path.replace_extension(".expected");
    ASSERT_TRUE(fs::exists(expected_path)) << "missing " << expected_path;
    auto cfg = ParseExperimentConfig(Slurp(path), MasterLikeDefaults());
    ASSERT_FALSE(cfg.ok());
    EXPECT_EQ(cfg.status().code(), StatusCode::kInvalidArgument);
    std::istringstream expected(Slurp(expected_path));
    std::string line;
    int checked = 0;
    while (std::getline(expected, line)) {
      if (line.empty() || line[0] == '#') continue;
      ++checked;
      EXPECT_NE(cfg.status().message().find(line), std::string::npos)
          << "missing: " << line << "\nin:\n" << cfg.status().message();
    }
    EXPECT_GT(checked, 0) << "no expectations in " << expected_path;
  }
}

}  // namespace
}  // namespace det::master::config
