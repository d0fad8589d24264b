#include "agent/detect/container_runtime.h"

#include <gtest/gtest.h>

#include <set>

namespace det::agent {
namespace {

RuntimeProbe Answering(std::set<std::string> working) {
  return
      [working](const std::vector<std::string>& argv) { return working.count(argv.at(0)) ? 0 : 1; };
}

TEST(ChooseContainerRuntimeTest, AutoPrefersARunningDockerEngine) {
  EXPECT_EQ(*ChooseContainerRuntime("auto", Answering({"docker", "podman"})), "docker");
  EXPECT_EQ(*ChooseContainerRuntime("auto", Answering({"podman"})), "podman");
  EXPECT_EQ(*ChooseContainerRuntime("auto", Answering({})), "");
}

TEST(ChooseContainerRuntimeTest, DockerClientWithoutEngineIsNotDocker) {
  // `docker info` fails without an engine even where the client is installed.
  RuntimeProbe probe = [](const std::vector<std::string>& argv) {
    if (argv[0] == "docker") return argv[1] == "info" ? 1 : 0;
    return 0;
  };
  EXPECT_EQ(*ChooseContainerRuntime("auto", probe), "podman");
}

TEST(ChooseContainerRuntimeTest, NamedRuntimeMustAnswer) {
  EXPECT_EQ(*ChooseContainerRuntime("podman", Answering({"podman"})), "podman");
  auto missing = ChooseContainerRuntime("docker", Answering({"podman"}));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("docker"), std::string::npos);
  EXPECT_EQ(*ChooseContainerRuntime("none", Answering({"docker"})), "");
  EXPECT_FALSE(ChooseContainerRuntime("lxc", Answering({})).ok());
}

}  // namespace
}  // namespace det::agent
