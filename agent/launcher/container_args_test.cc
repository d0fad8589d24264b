#include "agent/launcher/container_args.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace det::agent {
namespace {

using nlohmann::json;

bool HasPair(const std::vector<std::string>& argv, const std::string& flag,
             const std::string& value) {
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == flag && argv[i + 1] == value) return true;
  }
  return false;
}

ContainerRun PodmanRun() {
  ContainerRun run;
  run.runtime = "podman";
  run.oci_runtime = "runc";
  run.name = ContainerName("3.1");
  run.workdir = "/data/work/3.1";
  run.harness_path = "/src/harness";
  run.data_dir = "/data";
  run.allocation_id = "3.1";
  run.env_names = {"DET_MASTER", "DET_SESSION_TOKEN"};
  return run;
}

TEST(ParseContainerSpecTest, ReadsEveryField) {
  auto spec = ParseContainerSpec(json::parse(R"({
    "image": "localhost/x:1", "forcePull": true, "registryAuth": {"username": "u"},
    "bindMounts": [{"hostPath": "/a", "containerPath": "/b", "readOnly": true,
                    "propagation": "rshared"}],
    "shmSizeBytes": 1048576, "devices": ["/dev/fuse:/dev/fuse:mrw"],
    "addCapabilities": ["SYS_PTRACE"], "dropCapabilities": ["NET_RAW"]})"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->image, "localhost/x:1");
  EXPECT_TRUE(spec->force_pull);
  EXPECT_EQ(spec->registry_auth["username"], "u");
  ASSERT_EQ(spec->bind_mounts.size(), 1u);
  EXPECT_TRUE(spec->bind_mounts[0].read_only);
  EXPECT_EQ(spec->bind_mounts[0].propagation, "rshared");
  EXPECT_EQ(spec->shm_size_bytes, 1048576);
  EXPECT_EQ(spec->devices.size(), 1u);
}

TEST(ParseContainerSpecTest, NamesTheBadField) {
  EXPECT_EQ(ParseContainerSpec(json::object()).status().message(),
            "container.image: required (a non-empty string)");
  EXPECT_EQ(ParseContainerSpec(json::parse(R"({"image":"x","bindMounts":[{"hostPath":"rel",
             "containerPath":"/b"}]})"))
                .status()
                .message(),
            "container.bindMounts[0].hostPath: must be an absolute path");
  EXPECT_EQ(ParseContainerSpec(json::parse(R"({"image":"x","bindMounts":[{"hostPath":"/a",
             "containerPath":"/b","propagation":"sideways"}]})"))
                .status()
                .message(),
            "container.bindMounts[0].propagation: must be one of private, rprivate, shared, "
            "rshared, slave, rslave (got \"sideways\")");
  EXPECT_FALSE(ParseContainerSpec(json::parse(R"({"image":"x","shmSizeBytes":-1})")).ok());
  EXPECT_FALSE(ParseContainerSpec(json::parse(R"({"image":"x","devices":[3]})")).ok());
}

TEST(ContainerNameTest, ReplacesCharactersNamesRefuse) {
  EXPECT_EQ(ContainerName("12.3-a_b"), "det-12.3-a_b");
  EXPECT_EQ(ContainerName("a/b c"), "det-a_b_c");
}

TEST(BuildContainerRunArgvTest, PodmanCommandLine) {
  ContainerSpec spec;
  spec.image = "localhost/det-test:1";
  spec.bind_mounts = {{"/usr", "/usr", true, ""}, {"/scratch", "/s", false, "rshared"}};
  spec.shm_size_bytes = 64 << 20;
  spec.devices = {"/dev/fuse:/dev/fuse:mrw"};
  spec.add_capabilities = {"SYS_PTRACE"};
  spec.drop_capabilities = {"NET_RAW"};
  ContainerRun run = PodmanRun();
  run.authfile = "/data/work/3.1/.det-auth/config.json";
  run.gpu_uuids = {"GPU-1"};
  auto argv = BuildContainerRunArgv(run, spec, {"python3", "train.py"});
  ASSERT_GE(argv.size(), 6u);
  EXPECT_EQ(argv[0], "podman");
  EXPECT_EQ(argv[1], "--runtime");
  EXPECT_EQ(argv[2], "runc");
  EXPECT_EQ(argv[3], "run");
  EXPECT_TRUE(HasPair(argv, "--name", "det-3.1"));
  EXPECT_TRUE(HasPair(argv, "--label", "ai.determined.agent-data=/data"));
  EXPECT_TRUE(HasPair(argv, "--network", "host"));
  EXPECT_TRUE(HasPair(argv, "--pull", "missing"));
  EXPECT_TRUE(HasPair(argv, "--authfile", "/data/work/3.1/.det-auth/config.json"));
  EXPECT_TRUE(HasPair(argv, "-v", "/data/work/3.1:/data/work/3.1"));
  EXPECT_TRUE(HasPair(argv, "-v", "/src/harness:/src/harness:ro"));
  EXPECT_TRUE(HasPair(argv, "-v", "/usr:/usr:ro"));
  EXPECT_TRUE(HasPair(argv, "-v", "/scratch:/s:rshared"));
  EXPECT_TRUE(HasPair(argv, "-w", "/data/work/3.1"));
  EXPECT_TRUE(HasPair(argv, "--shm-size", "67108864b"));
  EXPECT_TRUE(HasPair(argv, "--device", "/dev/fuse:/dev/fuse:mrw"));
  EXPECT_TRUE(HasPair(argv, "--device", "nvidia.com/gpu=GPU-1"));
  EXPECT_TRUE(HasPair(argv, "--cap-add", "SYS_PTRACE"));
  EXPECT_TRUE(HasPair(argv, "--cap-drop", "NET_RAW"));
  // Values stay out of argv: `-e NAME` takes them from the client's environment.
  EXPECT_TRUE(HasPair(argv, "-e", "DET_SESSION_TOKEN"));
  // The image, then the entrypoint, end the command line.
  ASSERT_GE(argv.size(), 3u);
  EXPECT_EQ(argv[argv.size() - 3], "localhost/det-test:1");
  EXPECT_EQ(argv[argv.size() - 2], "python3");
  EXPECT_EQ(argv.back(), "train.py");
}

TEST(BuildContainerRunArgvTest, DockerAndForcePull) {
  ContainerSpec spec;
  spec.image = "img";
  spec.force_pull = true;
  ContainerRun run = PodmanRun();
  run.runtime = "docker";
  run.authfile = "/ignored";
  run.gpu_uuids = {"GPU-1", "GPU-2"};
  auto argv = BuildContainerRunArgv(run, spec, {"true"});
  EXPECT_EQ(argv[0], "docker");
  EXPECT_EQ(argv[1], "run");  // no --runtime: docker has its own
  EXPECT_TRUE(HasPair(argv, "--pull", "always"));
  EXPECT_TRUE(HasPair(argv, "--gpus", "\"device=GPU-1,GPU-2\""));
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--authfile"), 0);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--shm-size"), 0);
}

TEST(BuildContainerKillArgvTest, SignalsByName) {
  EXPECT_EQ(BuildContainerKillArgv("podman", "det-1", 15),
            (std::vector<std::string>{"podman", "kill", "--signal", "15", "det-1"}));
}

TEST(RegistryAuthFileTest, UsernamePasswordForTheImagesRegistry) {
  auto file = RegistryAuthFile(json{{"username", "user"}, {"password", "pass"}},
                               "registry.example:5000/team/img:1");
  ASSERT_TRUE(file.ok()) << file.status().message();
  json j = json::parse(*file);
  EXPECT_EQ(j["auths"]["registry.example:5000"]["auth"], "dXNlcjpwYXNz");  // base64 user:pass
  auto hub = RegistryAuthFile(json{{"auth", "abc="}}, "team/img");
  ASSERT_TRUE(hub.ok());
  EXPECT_EQ(json::parse(*hub)["auths"]["docker.io"]["auth"], "abc=");
  auto named = RegistryAuthFile(
      json{{"username", "a"}, {"password", "b"}, {"serveraddress", "https://r.example/"}}, "x");
  ASSERT_TRUE(named.ok());
  EXPECT_TRUE(json::parse(*named)["auths"].contains("r.example"));
  EXPECT_FALSE(RegistryAuthFile(json{{"username", "only"}}, "x").ok());
}

TEST(ContainerEnvironmentTest, KeepsDetVariablesNotTheHostPath) {
  AgentEnv agent;
  agent.master = {"http://127.0.0.1:8080", "http", "127.0.0.1", 8080};
  agent.allocation_id = "3.1";
  agent.workdir = "/data/work/3.1";
  agent.harness_path = "/src/harness";
  agent.python = "/usr/bin/python3";
  auto env = ContainerEnvironment({{"DET_TRIAL_ID", "3"}, {"FOO", "bar"}}, agent);
  EXPECT_EQ(env["DET_MASTER"], "http://127.0.0.1:8080");
  EXPECT_EQ(env["DET_TRIAL_ID"], "3");
  EXPECT_EQ(env["FOO"], "bar");
  EXPECT_EQ(env["PYTHONPATH"], "/src/harness");
  EXPECT_EQ(env["DET_WORKDIR"], "/data/work/3.1");
  EXPECT_FALSE(env.count("PATH"));
  EXPECT_FALSE(env.count("DET_PYTHON_EXECUTABLE"));
  auto with_path = ContainerEnvironment({{"PATH", "/opt/bin"}}, agent);
  EXPECT_EQ(with_path["PATH"], "/opt/bin");
}

}  // namespace
}  // namespace det::agent
