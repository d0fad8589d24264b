#include "master/config/storage_roots.h"

#include <gtest/gtest.h>

#include "master/config/experiment_config.h"

namespace det::master::config {
namespace {

using nlohmann::json;

constexpr char kBase[] =
    "name: x\nentrypoint: python3 train.py\nsearcher: {name: single, metric: m, max_length: "
    "{batches: 1}}\n";

ConfigDefaults Defaults() {
  ConfigDefaults d;
  d.checkpoint_storage = {{"type", "shared_fs"}, {"host_path", "/srv/det/checkpoints"}};
  d.storage_allowed_roots = std::vector<std::string>{"/srv/det/checkpoints", "/shared"};
  return d;
}

TEST(StorageRoots, BaseDirOfEachFileStorage) {
  EXPECT_EQ(StorageBaseDir({{"type", "shared_fs"}, {"host_path", "/a"}}), "/a");
  EXPECT_EQ(StorageBaseDir({{"type", "shared_fs"}, {"host_path", "/a"}, {"storage_path", "b"}}),
            "/a/b");
  EXPECT_EQ(StorageBaseDir({{"type", "shared_fs"}, {"host_path", "/a"}, {"storage_path", "/a/c"}}),
            "/a/c");
  EXPECT_EQ(StorageBaseDir({{"type", "directory"}, {"container_path", "/d"}}), "/d");
  EXPECT_EQ(StorageBaseDir({{"type", "s3"}, {"bucket", "b"}}), "");
}

TEST(StorageRoots, PathsOutsideTheRootsAreRefusedNamingFieldValueAndRoots) {
  for (const char* storage :
       {"checkpoint_storage: {type: shared_fs, host_path: /home/alice/.ssh}",
        "checkpoint_storage: {type: shared_fs, host_path: /}",
        "checkpoint_storage: {type: shared_fs, host_path: /shared2}",
        "checkpoint_storage: {type: shared_fs, host_path: /shared/../etc}",
        "checkpoint_storage: {type: directory, container_path: /srv/det}"}) {
    auto cfg = ParseExperimentConfig(std::string(kBase) + storage + "\n", Defaults());
    ASSERT_FALSE(cfg.ok()) << storage;
    const std::string m = cfg.status().message();
    EXPECT_EQ(cfg.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(m.find("checkpoint_storage.host_path") != std::string::npos ||
                m.find("checkpoint_storage.container_path") != std::string::npos)
        << m;
    EXPECT_NE(m.find("[/srv/det/checkpoints, /shared]"), std::string::npos) << m;
    EXPECT_NE(m.find("checkpoint_storage_allowed_roots"), std::string::npos) << m;
  }
  auto abs_sp = ParseExperimentConfig(
      std::string(kBase) +
          "checkpoint_storage: {type: shared_fs, host_path: /, storage_path: /etc}\n",
      Defaults());
  ASSERT_FALSE(abs_sp.ok());
  EXPECT_NE(abs_sp.status().message().find("checkpoint_storage.storage_path"), std::string::npos)
      << abs_sp.status().message();
}

TEST(StorageRoots, PathsInsideTheRootsAndObjectStoragePass) {
  for (const char* storage :
       {"", "checkpoint_storage: {storage_path: mine}",
        "checkpoint_storage: {type: shared_fs, host_path: /shared/bob, storage_path: runs}",
        "checkpoint_storage: {type: directory, container_path: /shared/dir}",
        "checkpoint_storage: {type: s3, bucket: b}"}) {
    auto cfg = ParseExperimentConfig(std::string(kBase) + storage + "\n", Defaults());
    EXPECT_TRUE(cfg.ok()) << storage << ": " << cfg.status().ToString();
  }
  // No roots (an object-storage master without any): no file storage path at all.
  ConfigDefaults none = Defaults();
  none.storage_allowed_roots = std::vector<std::string>{};
  EXPECT_FALSE(ParseExperimentConfig(std::string(kBase) +
                                         "checkpoint_storage: {type: shared_fs, host_path: /x}\n",
                                     none)
                   .ok());
  // Unset: no limit (a config read without a master).
  ConfigDefaults open = Defaults();
  open.storage_allowed_roots.reset();
  EXPECT_TRUE(ParseExperimentConfig(std::string(kBase) +
                                        "checkpoint_storage: {type: shared_fs, host_path: /x}\n",
                                    open)
                  .ok());
}

}  // namespace
}  // namespace det::master::config
