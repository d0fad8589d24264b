// checkpoint_storage_allowed_roots in master.yaml.
#include <gtest/gtest.h>

#include "master/server/master_config.h"

namespace det::master::server {
namespace {

TEST(MasterConfigStorageRoots, DefaultIsTheMastersOwnStorage) {
  MasterConfig config;
  config.data_dir = "/srv/det";
  ASSERT_TRUE(FinalizeMasterConfig(&config).ok());
  ASSERT_TRUE(config.checkpoint_storage_allowed_roots.has_value());
  EXPECT_EQ(*config.checkpoint_storage_allowed_roots,
            std::vector<std::string>{"/srv/det/checkpoints"});
}

TEST(MasterConfigStorageRoots, AdminRootsAreAddedToTheMastersStorage) {
  MasterConfig config;
  config.data_dir = "/srv/det";
  ASSERT_TRUE(ApplyMasterYaml("checkpoint_storage_allowed_roots: [/shared/, /scratch/../data]\n"
                              "checkpoint_storage: {type: shared_fs, host_path: /mnt/ckpt, "
                              "storage_path: det}\n",
                              &config)
                  .ok());
  ASSERT_TRUE(FinalizeMasterConfig(&config).ok());
  ASSERT_TRUE(config.checkpoint_storage_allowed_roots.has_value());
  EXPECT_EQ(*config.checkpoint_storage_allowed_roots,
            (std::vector<std::string>{"/mnt/ckpt/det", "/shared", "/data"}));
}

TEST(MasterConfigStorageRoots, AnObjectStorageMasterWithoutRootsAllowsNoFilePath) {
  MasterConfig config;
  config.data_dir = "/srv/det";
  config.checkpoint_storage = {{"type", "s3"}, {"bucket", "b"}};
  ASSERT_TRUE(FinalizeMasterConfig(&config).ok());
  ASSERT_TRUE(config.checkpoint_storage_allowed_roots.has_value());
  EXPECT_TRUE(config.checkpoint_storage_allowed_roots->empty());
}

TEST(MasterConfigStorageRoots, BadRootsNameTheFieldAndValue) {
  for (const char* yaml : {"checkpoint_storage_allowed_roots: relative/dir",
                           "checkpoint_storage_allowed_roots: [relative]",
                           "checkpoint_storage_allowed_roots: [5]"}) {
    MasterConfig config;
    Status st = ApplyMasterYaml(yaml, &config);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << yaml;
    EXPECT_NE(st.message().find("checkpoint_storage_allowed_roots: must be a list of absolute"),
              std::string::npos)
        << st.message();
  }
}

}  // namespace
}  // namespace det::master::server
