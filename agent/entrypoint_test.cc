#include "agent/entrypoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/subprocess.h"

namespace det::agent {
namespace {

using ::testing::ElementsAre;

TEST(EntrypointTest, ListIsArgv) {
  auto argv = BuildEntrypointArgv(nlohmann::json::array({"python3", "train.py", "--x"}), "py");
  ASSERT_TRUE(argv.ok());
  EXPECT_THAT(*argv, ElementsAre("python3", "train.py", "--x"));
}

TEST(EntrypointTest, LegacyTrialClassRunsHarness) {
  auto argv = BuildEntrypointArgv("model_def:MnistTrial", "/usr/bin/python3");
  ASSERT_TRUE(argv.ok());
  EXPECT_THAT(*argv, ElementsAre("/usr/bin/python3", "-m", "determined.launch.torch_distributed",
                                 "--", "--trial",
                                 "model_def:MnistTrial"));
  EXPECT_TRUE(IsLegacyTrialEntrypoint("pkg.sub.mod:Cls_2"));
  EXPECT_FALSE(IsLegacyTrialEntrypoint("python3 train.py"));
  EXPECT_FALSE(IsLegacyTrialEntrypoint("a:b:c"));
}

TEST(EntrypointTest, OtherStringRunsShell) {
  auto argv = BuildEntrypointArgv("python3 train.py --epochs 2", "py");
  ASSERT_TRUE(argv.ok());
  EXPECT_THAT(*argv, ElementsAre("sh", "-c", "python3 train.py --epochs 2"));
}

TEST(EntrypointTest, BadEntrypoints) {
  EXPECT_FALSE(BuildEntrypointArgv(nlohmann::json::array(), "py").ok());
  EXPECT_FALSE(BuildEntrypointArgv(nlohmann::json::array({1, 2}), "py").ok());
  EXPECT_FALSE(BuildEntrypointArgv(nlohmann::json(), "py").ok());
  EXPECT_FALSE(BuildEntrypointArgv("", "py").ok());
}

TEST(EntrypointTest, StartupHookWrapperPassesArgvThrough) {
  auto wrapped = WrapWithStartupHook({"sh", "-c", "echo hi"});
  ASSERT_EQ(wrapped.size(), 7u);
  EXPECT_EQ(wrapped[0], "/bin/sh");
  EXPECT_EQ(wrapped[1], "-c");
  EXPECT_NE(wrapped[2].find(". ./startup-hook.sh"), std::string::npos);
  EXPECT_NE(wrapped[2].find("exec \"$@\""), std::string::npos);
  EXPECT_EQ(wrapped[3], "det-entrypoint");
  EXPECT_THAT(std::vector<std::string>(wrapped.begin() + 4, wrapped.end()),
              ElementsAre("sh", "-c", "echo hi"));
}

TEST(EntrypointTest, TheDefaultsHookRunsFirstAndWhatItExportsReachesTheEntrypoint) {
  auto wrapped = WrapWithStartupHook({"sh", "-c", "echo \"run $FROM_HOOK\""});
  auto ran = RunProcess(wrapped, {{"DET_TCD_STARTUP_HOOK", "echo hook; export FROM_HOOK=yes"}});
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_EQ(ran->exit_code, 0);
  EXPECT_EQ(ran->stdout_text, "hook\nrun yes\n");
  auto failing = RunProcess(wrapped, {{"DET_TCD_STARTUP_HOOK", "exit 7"}});
  ASSERT_TRUE(failing.ok());
  EXPECT_EQ(failing->exit_code, 7);  // the entrypoint never runs
  EXPECT_EQ(failing->stdout_text, "");
  auto none = RunProcess(wrapped, {{"DET_TCD_STARTUP_HOOK", ""}});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->stdout_text, "run \n");
}

TEST(MasterUrlTest, Parses) {
  auto a = ParseMasterUrl("http://127.0.0.1:8080/");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->url, "http://127.0.0.1:8080");
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8080);
  auto b = ParseMasterUrl("https://master.example.com");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->port, 443);
  auto c = ParseMasterUrl("localhost:9000");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->url, "http://localhost:9000");
  EXPECT_EQ(c->port, 9000);
  EXPECT_FALSE(ParseMasterUrl("ftp://x").ok());
  EXPECT_FALSE(ParseMasterUrl("http://:80").ok());
  EXPECT_FALSE(ParseMasterUrl("http://h:99999").ok());
}

AgentEnv SampleAgentEnv() {
  AgentEnv a;
  a.master = *ParseMasterUrl("http://10.0.0.1:8080");
  a.cluster_id = "cluster";
  a.master_id = "master";
  a.agent_id = "agent-1";
  a.allocation_id = "1.abc.1";
  a.slot_ids = {0, 2};
  a.workdir = "/data/work/1.abc.1";
  a.harness_path = "/repo/harness";
  a.python = "/usr/bin/python3";
  return a;
}

// `det` from the agent's build directory is on every task's PATH, last, and once.
TEST(ProcessEnvTest, TheCliDirectoryEndsPath) {
  AgentEnv agent = SampleAgentEnv();
  agent.cli_dir = "/repo/build/bin";
  auto env = BuildProcessEnv({{"PATH", "/bin"}}, {}, agent);
  EXPECT_EQ(env["PATH"], "/usr/bin:/bin:/repo/build/bin");
  auto again = BuildProcessEnv({{"PATH", "/bin:/repo/build/bin"}}, {}, agent);
  EXPECT_EQ(again["PATH"], "/usr/bin:/bin:/repo/build/bin");
  auto zygote = ZygoteEnvironment({{"PATH", "/bin"}, {"LANG", "C.UTF-8"}}, "/usr/bin/python3",
                                  "/repo/harness", "/data", "/repo/build/bin");
  EXPECT_EQ(zygote["PATH"], "/usr/bin:/bin:/repo/build/bin");  // the same as a trial's
}

TEST(ProcessEnvTest, LayersBaseCommandAndAgent) {
  std::map<std::string, std::string> base = {
      {"PATH", "/bin"}, {"PYTHONPATH", "/base"}, {"DET_AGENT_ID", "stale"}, {"HOME", "/h"}};
  std::map<std::string, std::string> command = {{"DET_TASK_ID", "1.abc"},
                                                {"DET_SESSION_TOKEN", "tok"},
                                                {"PYTHONPATH", "/user"},
                                                {"HOME", "/cmd"}};
  auto env = BuildProcessEnv(base, command, SampleAgentEnv());
  // The trial interpreter's directory comes first, so `python3` in entrypoints is that one.
  EXPECT_EQ(env["PATH"], "/usr/bin:/bin");
  EXPECT_EQ(env["HOME"], "/cmd");
  EXPECT_EQ(env["DET_TASK_ID"], "1.abc");
  EXPECT_EQ(env["DET_SESSION_TOKEN"], "tok");
  EXPECT_EQ(env["PYTHONPATH"], "/repo/harness:/user");
  EXPECT_EQ(env["DET_MASTER"], "http://10.0.0.1:8080");
  EXPECT_EQ(env["DET_MASTER_HOST"], "10.0.0.1");
  EXPECT_EQ(env["DET_MASTER_ADDR"], "10.0.0.1");
  EXPECT_EQ(env["DET_MASTER_PORT"], "8080");
  EXPECT_EQ(env["DET_CLUSTER_ID"], "cluster");
  EXPECT_EQ(env["DET_MASTER_ID"], "master");
  EXPECT_EQ(env["DET_AGENT_ID"], "agent-1");
  EXPECT_EQ(env["DET_CONTAINER_ID"], "1.abc.1");
  EXPECT_EQ(env["DET_SLOT_IDS"], "[0,2]");
  EXPECT_EQ(env["DET_WORKDIR"], "/data/work/1.abc.1");
  EXPECT_EQ(env["PYTHONUNBUFFERED"], "1");
  EXPECT_EQ(env["DET_PYTHON_EXECUTABLE"], "/usr/bin/python3");
  EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);
}

TEST(ProcessEnvTest, HarnessOnlyPythonPathAndGpus) {
  AgentEnv a = SampleAgentEnv();
  a.gpu_uuids = {"GPU-a", "GPU-b"};
  auto env = BuildProcessEnv({}, {{"DET_PYTHON_EXECUTABLE", "/opt/py"}}, a);
  EXPECT_EQ(env["PYTHONPATH"], "/repo/harness");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "GPU-a,GPU-b");
  EXPECT_EQ(env["DET_PYTHON_EXECUTABLE"], "/opt/py");
  EXPECT_EQ(PythonFor({{"DET_PYTHON_EXECUTABLE", "/opt/py"}}, "/usr/bin/python3"), "/opt/py");
  EXPECT_EQ(PythonFor({}, "/usr/bin/python3"), "/usr/bin/python3");
  a.harness_path = "";
  auto env2 = BuildProcessEnv({{"PYTHONPATH", "/x"}}, {}, a);
  EXPECT_EQ(env2["PYTHONPATH"], "/x");
}

}  // namespace
}  // namespace det::agent
