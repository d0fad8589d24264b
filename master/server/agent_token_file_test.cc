#include "master/server/agent_token_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "common/secret_file.h"
#include "common/test_dir.h"
#include "master/server/master_config.h"

namespace det::master::server {
namespace {

TEST(AgentTokenFileTest, InlineSecretIsWrittenOwnerOnlyAndConfigPointsAtIt) {
  std::filesystem::path dir = det::testing::FreshTestDir("agent_token_file_");
  MasterConfig config;
  config.data_dir = (dir / "data").string();  // not created yet: the helper makes it
  config.agent_token = "s3cret-inline";
  ASSERT_TRUE(MaterializeInlineAgentToken(&config).ok());
  ASSERT_FALSE(config.agent_token_file.empty());
  EXPECT_TRUE(std::filesystem::path(config.agent_token_file).is_absolute());
  EXPECT_EQ(std::filesystem::path(config.agent_token_file).filename(), kInlineAgentTokenFileName);
  auto read = ReadSecretFile(config.agent_token_file);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(*read, "s3cret-inline");
  struct stat st {};
  ASSERT_EQ(::stat(config.agent_token_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
}

TEST(AgentTokenFileTest, ExistingFileOrNoSecretLeavesConfigAlone) {
  std::filesystem::path dir = det::testing::FreshTestDir("agent_token_file_");
  MasterConfig with_file;
  with_file.data_dir = dir.string();
  with_file.agent_token = "from-file";
  with_file.agent_token_file = "/etc/determined/agent_token";
  ASSERT_TRUE(MaterializeInlineAgentToken(&with_file).ok());
  EXPECT_EQ(with_file.agent_token_file, "/etc/determined/agent_token");

  MasterConfig none;
  none.data_dir = dir.string();
  ASSERT_TRUE(MaterializeInlineAgentToken(&none).ok());
  EXPECT_TRUE(none.agent_token_file.empty());
  EXPECT_FALSE(std::filesystem::exists(dir / kInlineAgentTokenFileName));
}

TEST(AgentTokenFileTest, EmptySecretIsRefusedByName) {
  auto r = WriteAgentTokenFile("/tmp", "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("security.agent_token"), std::string::npos);
}

}  // namespace
}  // namespace det::master::server
