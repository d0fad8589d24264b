#include "master/config/storage_roots.h"

#include <gtest/gtest.h>

#include "master/config/experiment_config.h"

namespace det::master::config {
namespace {

using nlohmann::json;

constexpr char kBase[] =
    "name: x\nentrypoint: python3 train.py\nsearcher: {name: single, metric: m, max_length: "
    "{batches: 1}}\n";

const std::vector<std::string> kRoots = {"/srv/det/checkpoints", "/shared"};

ConfigDefaults Defaults() {
  ConfigDefaults d;
  d.checkpoint_storage = {{"type", "shared_fs"}, {"host_path", "/srv/det/checkpoints"}};
  return d;
}

// The parsed config's storage checked against `roots` (what the master does after parsing).
Status Check(const std::string& storage,
             const std::optional<std::vector<std::string>>& roots = kRoots) {
  auto cfg = ParseExperimentConfig(std::string(kBase) + storage + "\n", Defaults());
  if (!cfg.ok()) return cfg.status();
  return CheckConfigStorageRoots(cfg->defaulted, roots);
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
    Status st = Check(storage);
    ASSERT_FALSE(st.ok()) << storage;
    const std::string m = st.message();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(m.find("checkpoint_storage.host_path") != std::string::npos ||
                m.find("checkpoint_storage.container_path") != std::string::npos)
        << m;
    EXPECT_NE(m.find("[/srv/det/checkpoints, /shared]"), std::string::npos) << m;
    EXPECT_NE(m.find("checkpoint_storage_allowed_roots"), std::string::npos) << m;
  }
  Status abs_sp = Check("checkpoint_storage: {type: shared_fs, host_path: /, storage_path: /etc}");
  ASSERT_FALSE(abs_sp.ok());
  EXPECT_NE(abs_sp.message().find("checkpoint_storage.storage_path"), std::string::npos)
      << abs_sp.message();
}

TEST(StorageRoots, PathsInsideTheRootsAndObjectStoragePass) {
  for (const char* storage :
       {"", "checkpoint_storage: {storage_path: mine}",
        "checkpoint_storage: {type: shared_fs, host_path: /shared/bob, storage_path: runs}",
        "checkpoint_storage: {type: directory, container_path: /shared/dir}",
        "checkpoint_storage: {type: s3, bucket: b}"}) {
    Status st = Check(storage);
    EXPECT_TRUE(st.ok()) << storage << ": " << st.ToString();
  }
  // No roots (an object-storage master without any): no file storage path at all.
  EXPECT_FALSE(Check("checkpoint_storage: {type: shared_fs, host_path: /x}",
                     std::vector<std::string>{})
                   .ok());
  EXPECT_TRUE(Check("checkpoint_storage: {type: s3, bucket: b}", std::vector<std::string>{}).ok());
  // Unset: no limit (a master config never finalized).
  EXPECT_TRUE(Check("checkpoint_storage: {type: shared_fs, host_path: /x}", std::nullopt).ok());
}

}  // namespace
}  // namespace det::master::config
