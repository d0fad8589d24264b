#include "master/server/container_spec.h"

#include <gtest/gtest.h>

namespace det::master::server {
namespace {

using nlohmann::json;

config::ExperimentConfig Parse(const std::string& yaml) {
  config::ConfigDefaults defaults;
  auto cfg = config::ParseExperimentConfig(
      "entrypoint: python3 train.py\nsearcher: {name: single, metric: loss, max_length: "
      "{batches: 1}}\n" +
          yaml,
      defaults);
  EXPECT_TRUE(cfg.ok()) << cfg.status().message();
  return cfg.ok() ? *cfg : config::ExperimentConfig{};
}

TEST(MemorySizeBytesTest, ReadsBinaryMultiples) {
  EXPECT_EQ(*MemorySizeBytes("1024"), 1024);
  EXPECT_EQ(*MemorySizeBytes("1k"), 1024);
  EXPECT_EQ(*MemorySizeBytes("4G"), 4LL << 30);
  EXPECT_EQ(*MemorySizeBytes("1.5gb"), 3LL << 29);
  EXPECT_EQ(*MemorySizeBytes("512 Mi"), 512LL << 20);
  EXPECT_EQ(*MemorySizeBytes("100b"), 100);
  EXPECT_FALSE(MemorySizeBytes("giga").ok());
  EXPECT_FALSE(MemorySizeBytes("").ok());
}

TEST(ContainerSpecForTest, DefaultImageRunsAsAProcess) {
  auto spec = ContainerSpecFor(Parse(""), "cpu");
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->has_value());
}

TEST(ContainerSpecForTest, PicksTheImageOfTheDevice) {
  auto cfg = Parse("environment: {image: {cpu: 'img:cpu', cuda: 'img:cuda'}}\n");
  auto cpu = ContainerSpecFor(cfg, "cpu");
  auto cuda = ContainerSpecFor(cfg, "cuda");
  ASSERT_TRUE(cpu.ok() && cpu->has_value());
  ASSERT_TRUE(cuda.ok() && cuda->has_value());
  EXPECT_EQ((**cpu)["image"], "img:cpu");
  EXPECT_EQ((**cuda)["image"], "img:cuda");
  // rocm was not named: it keeps the built-in default, which runs as a process.
  auto rocm = ContainerSpecFor(cfg, "rocm");
  ASSERT_TRUE(rocm.ok());
  EXPECT_FALSE(rocm->has_value());
}

TEST(ContainerSpecForTest, CarriesPullAuthMountsShmDevicesAndCapabilities) {
  auto cfg = Parse(
      "environment:\n"
      "  image: localhost/mine:1\n"
      "  force_pull_image: true\n"
      "  registry_auth: {username: u, password: p, serveraddress: reg.example}\n"
      "  add_capabilities: [SYS_PTRACE]\n"
      "  drop_capabilities: [NET_RAW]\n"
      "bind_mounts:\n"
      "  - {host_path: /data, container_path: /mnt/data, read_only: true}\n"
      "  - {host_path: /scratch, container_path: /scratch, propagation: rshared}\n"
      "resources: {shm_size: 256M, devices: ['/dev/fuse:/dev/fuse']}\n"
      "checkpoint_storage: {type: shared_fs, host_path: /ckpt}\n");
  auto spec = ContainerSpecFor(cfg, "cpu");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ASSERT_TRUE(spec->has_value());
  const json& s = **spec;
  EXPECT_EQ(s["image"], "localhost/mine:1");
  EXPECT_EQ(s["forcePull"], true);
  EXPECT_EQ(s["registryAuth"]["username"], "u");
  EXPECT_EQ(s["shmSizeBytes"], 256LL << 20);
  EXPECT_EQ(s["devices"], json({"/dev/fuse:/dev/fuse:mrw"}));
  EXPECT_EQ(s["addCapabilities"], json({"SYS_PTRACE"}));
  EXPECT_EQ(s["dropCapabilities"], json({"NET_RAW"}));
  ASSERT_EQ(s["bindMounts"].size(), 3u);
  EXPECT_EQ(s["bindMounts"][0], json({{"hostPath", "/data"},
                                      {"containerPath", "/mnt/data"},
                                      {"readOnly", true},
                                      {"propagation", "rprivate"}}));
  EXPECT_EQ(s["bindMounts"][1]["propagation"], "rshared");
  // The shared_fs checkpoint storage is reachable at the path the master uses.
  EXPECT_EQ(s["bindMounts"][2]["hostPath"], "/ckpt");
  EXPECT_EQ(s["bindMounts"][2]["containerPath"], "/ckpt");
  EXPECT_EQ(s["bindMounts"][2]["readOnly"], false);
}

TEST(ContainerSpecForTest, NoShmSizeIsNull) {
  auto spec = ContainerSpecFor(Parse("environment: {image: x:1}\n"), "cpu");
  ASSERT_TRUE(spec.ok() && spec->has_value());
  EXPECT_TRUE((**spec)["shmSizeBytes"].is_null());
  EXPECT_TRUE((**spec)["registryAuth"].is_null());
}

}  // namespace
}  // namespace det::master::server
