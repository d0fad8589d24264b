#include "master/config/workspace_storage.h"

#include <gtest/gtest.h>

namespace det::master::config {
namespace {

using nlohmann::json;

TEST(WorkspaceStorageTest, NoneIsNull) {
  EXPECT_TRUE(CheckWorkspaceStorage(json(), std::nullopt)->is_null());
  EXPECT_TRUE(CheckWorkspaceStorage(json::object(), std::nullopt)->is_null());
}

TEST(WorkspaceStorageTest, ACompleteStorageIsKeptAsSent) {
  json s = {{"type", "shared_fs"}, {"host_path", "/data/team"}};
  EXPECT_EQ(*CheckWorkspaceStorage(s, std::nullopt), s);
}

TEST(WorkspaceStorageTest, AnIncompleteOrForeignOneIsRefusedNamingTheField) {
  Result<json> partial = CheckWorkspaceStorage(json{{"type", "shared_fs"}}, std::nullopt);
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.status().message().find("checkpointStorageConfig: "), std::string::npos);
  EXPECT_NE(partial.status().message().find("host_path"), std::string::npos);
  EXPECT_FALSE(CheckWorkspaceStorage(json("s3"), std::nullopt).ok());
  // Outside the master's allowed roots.
  Result<json> outside = CheckWorkspaceStorage(
      json{{"type", "shared_fs"}, {"host_path", "/etc"}},
      std::vector<std::string>{"/data"}, "checkpointStorageConfig");
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("/etc"), std::string::npos);
}

TEST(WorkspaceStorageTest, TheWorkspacesGoesOverTheMastersWhenTheTypesAgree) {
  json master = {{"type", "shared_fs"}, {"host_path", "/m"}, {"save_trial_best", 3}};
  EXPECT_EQ(WorkspaceStorageDefault(json(), master), master);
  json same = {{"type", "shared_fs"}, {"host_path", "/w"}};
  EXPECT_EQ(WorkspaceStorageDefault(same, master),
            (json{{"type", "shared_fs"}, {"host_path", "/w"}, {"save_trial_best", 3}}));
  json other = {{"type", "s3"}, {"bucket", "b"}};
  EXPECT_EQ(WorkspaceStorageDefault(other, master), other);
}

}  // namespace
}  // namespace det::master::config
