#include "agent/launcher/warm_launcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "agent/entrypoint.h"
#include "agent/launcher/process_launcher.h"
#include "agent/testing/orphan_process.h"
#include "agent/testing/temp_dir.h"
#include "common/paths.h"

namespace det::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPython[] = "/usr/bin/python3";

// Prints what a trial can see of how it was started, as one JSON line, then exits 3.
constexpr char kIntrospect[] = R"(import json, os, sys
main = sys.modules["__main__"]
print(json.dumps({
    "cwd": os.getcwd(), "env": dict(os.environ), "argv": sys.argv, "orig_argv": sys.orig_argv,
    "executable": sys.executable, "path": sys.path, "file": __file__, "name": __name__,
    "main_globals": sorted(k for k in vars(main) if k.startswith("__")),
    "spec": __spec__ and [__spec__.name, __spec__.origin], "package": __package__,
    "group_is_session": os.getpgid(0) == os.getsid(0), "stdin": os.readlink("/proc/self/fd/0"),
    "parent": open(f"/proc/{os.getppid()}/cmdline").read().replace("\0", " "),
}))
sys.exit(3)
)";

struct Output {
  std::mutex mu;
  std::string out, err;
  OutputCallback Callback() {
    return [this](StdType t, std::string_view d) {
      std::lock_guard<std::mutex> lock(mu);
      (t == StdType::kStdout ? out : err).append(d);
    };
  }
};

class WarmLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    harness_ = HarnessDirNearExecutable();
    if (harness_.empty() || !std::filesystem::exists(kPython)) {
      GTEST_SKIP() << "needs " << kPython << " and the harness next to the build";
    }
    ZygoteOptions options;
    options.python = kPython;
    options.env = ZygoteEnvironment(CurrentEnvironment(), kPython, harness_, tmp_.path());
    options.cwd = tmp_.path();
    launcher_ = std::make_unique<WarmLauncher>(std::make_unique<ProcessLauncher>(), options);
    launcher_->Start();
  }

  // A trial's spec as the allocation runner builds it, for `entrypoint` run in work dir `id`.
  LaunchSpec Spec(const std::string& id, const std::string& entrypoint, bool warm) {
    AgentEnv agent;
    agent.python = kPython;
    agent.harness_path = harness_;
    agent.allocation_id = id;
    agent.workdir = tmp_.path() + "/work/" + id;
    std::filesystem::create_directories(agent.workdir);
    LaunchSpec spec;
    std::vector<std::string> argv = {"sh", "-c", entrypoint};
    spec.argv = WrapWithStartupHook(argv);
    spec.env = BuildProcessEnv(CurrentEnvironment(), {}, agent);
    spec.cwd = agent.workdir;
    if (warm) {
      auto plan = PlanWarmPython(argv, spec.env);
      EXPECT_TRUE(plan.ok()) << plan.status().message();
      if (plan.ok()) spec.warm = *plan;
    }
    return spec;
  }

  void Write(const LaunchSpec& spec, const std::string& name, const std::string& text) {
    std::ofstream(spec.cwd + "/" + name) << text;
  }

  int Run(const LaunchSpec& spec, Output& output) {
    auto process = launcher_->Launch(spec, output.Callback());
    EXPECT_TRUE(process.ok()) << process.status().message();
    return process.ok() ? (*process)->Wait() : -1;
  }

  testing::TempDir tmp_{"warm-launcher"};
  std::string harness_;
  std::unique_ptr<WarmLauncher> launcher_;
};

TEST_F(WarmLauncherTest, AWarmTrialSeesWhatAColdOneSees) {
  LaunchSpec warm = Spec("1.a.1", "python3 introspect.py --flag x", true);
  LaunchSpec cold = Spec("1.b.1", "python3 introspect.py --flag x", false);
  cold.env["DET_CONTAINER_ID"] = warm.env["DET_CONTAINER_ID"];  // the same trial, twice
  cold.env["DET_WORKDIR"] = warm.env["DET_WORKDIR"];
  cold.cwd = warm.cwd;
  Write(warm, "introspect.py", kIntrospect);
  Output warm_out, cold_out;
  EXPECT_EQ(Run(warm, warm_out), 3) << warm_out.err;
  EXPECT_EQ(Run(cold, cold_out), 3) << cold_out.err;
  EXPECT_EQ(launcher_->warm_starts(), 1);
  EXPECT_EQ(launcher_->cold_starts(), 1);

  auto w = nlohmann::json::parse(warm_out.out);
  auto c = nlohmann::json::parse(cold_out.out);
  // The proof that the warm path ran: its parent is the zygote, the cold one's is not.
  EXPECT_THAT(w["parent"].get<std::string>(), HasSubstr("determined.exec.zygote"));
  EXPECT_THAT(c["parent"].get<std::string>(), Not(HasSubstr("determined.exec.zygote")));
  EXPECT_GT(launcher_->zygote_pid(), 0);
  w.erase("parent");
  c.erase("parent");
  EXPECT_EQ(w.dump(1), c.dump(1));
  EXPECT_EQ(warm_out.err, cold_out.err);
}

TEST_F(WarmLauncherTest, ModulesRunAsWithDashM) {
  LaunchSpec warm = Spec("2.a.1", "python3 -m introspect a", true);
  LaunchSpec cold = Spec("2.a.1", "python3 -m introspect a", false);
  Write(warm, "introspect.py", kIntrospect);
  Output warm_out, cold_out;
  EXPECT_EQ(Run(warm, warm_out), 3) << warm_out.err;
  EXPECT_EQ(Run(cold, cold_out), 3) << cold_out.err;
  auto w = nlohmann::json::parse(warm_out.out);
  auto c = nlohmann::json::parse(cold_out.out);
  EXPECT_THAT(w["parent"].get<std::string>(), HasSubstr("determined.exec.zygote"));
  w.erase("parent");
  c.erase("parent");
  EXPECT_EQ(w.dump(1), c.dump(1));
}

TEST_F(WarmLauncherTest, ExceptionsAndExitsAsAColdInterpreter) {
  LaunchSpec spec = Spec("3.a.1", "python3 fail.py", true);
  Write(spec, "fail.py", "def f():\n    raise ValueError('boom')\nf()\n");
  Output out;
  EXPECT_EQ(Run(spec, out), 1);
  EXPECT_THAT(out.err, HasSubstr("Traceback (most recent call last):\n  File \"" + spec.cwd +
                                 "/fail.py\", line 3, in <module>"));
  EXPECT_THAT(out.err, HasSubstr("ValueError: boom"));
  EXPECT_THAT(out.err, Not(HasSubstr("zygote")));

  Write(spec, "fail.py", "import sys\nsys.exit('bad input')\n");
  Output message;
  EXPECT_EQ(Run(spec, message), 1);
  EXPECT_EQ(message.err, "bad input\n");

  // Output a trial leaves in an unclosed file is flushed at exit, as module teardown does.
  Write(spec, "fail.py", "f = open('left-open.txt', 'w')\nf.write('kept')\n");
  Output flushed;
  EXPECT_EQ(Run(spec, flushed), 0) << flushed.err;
  std::ifstream left(spec.cwd + "/left-open.txt");
  std::string text((std::istreambuf_iterator<char>(left)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "kept");
  EXPECT_EQ(launcher_->warm_starts(), 3);
}

TEST_F(WarmLauncherTest, KillReachesTheWholeGroupOfAWarmTrial) {
  LaunchSpec spec = Spec("4.a.1", "python3 sleeper.py", true);
  Write(spec, "sleeper.py",
        "import subprocess, sys, time\n"
        "child = subprocess.Popen(['sleep', '300'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(300)\n");
  Output out;
  auto process = launcher_->Launch(spec, out.Callback());
  ASSERT_TRUE(process.ok()) << process.status().message();
  pid_t grandchild = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (grandchild == 0 && std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(out.mu);
      if (out.out.find('\n') != std::string::npos) grandchild = std::stoi(out.out);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(grandchild, 0) << out.err;
  ASSERT_TRUE((*process)->Signal(SIGKILL).ok());
  EXPECT_EQ((*process)->Wait(), 128 + SIGKILL);
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (kill(grandchild, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(kill(grandchild, 0), 0) << "the trial's child outlived the kill";
  EXPECT_EQ(launcher_->warm_starts(), 1);
}

TEST_F(WarmLauncherTest, AContextModuleShadowingAPreloadedOneStartsCold) {
  // `determined` in the context directory would win over the harness on a cold sys.path.
  LaunchSpec spec = Spec("5.a.1", "python3 uses_local.py", true);
  std::filesystem::create_directories(spec.cwd + "/determined");
  Write(spec, "determined/__init__.py", "WHO = 'local'\n");
  Write(spec, "uses_local.py", "import determined\nprint(determined.WHO)\n");
  Output out;
  EXPECT_EQ(Run(spec, out), 0) << out.err;
  EXPECT_EQ(out.out, "local\n");
  EXPECT_THAT(out.err, HasSubstr("starting a fresh interpreter"));
}

TEST_F(WarmLauncherTest, ADifferentStartupEnvironmentStartsCold) {
  LaunchSpec spec = Spec("6.a.1", "python3 introspect.py", true);
  spec.env["PYTHONHASHSEED"] = "7";
  Write(spec, "introspect.py", kIntrospect);
  Output out;
  EXPECT_EQ(Run(spec, out), 3) << out.err;
  EXPECT_THAT(out.out, Not(HasSubstr("determined.exec.zygote")));
  EXPECT_EQ(launcher_->warm_starts(), 0);
  EXPECT_EQ(launcher_->cold_starts(), 1);
}

}  // namespace
}  // namespace det::agent

namespace det::agent {
namespace {

TEST_F(WarmLauncherTest, TrialsDieWithTheZygoteAndLaterStartsAreCold) {
  LaunchSpec spec = Spec("7.a.1", "python3 sleeper.py", true);
  Write(spec, "sleeper.py", "import time\nprint('up', flush=True)\ntime.sleep(300)\n");
  Output out;
  auto process = launcher_->Launch(spec, out.Callback());
  ASSERT_TRUE(process.ok()) << process.status().message();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(out.mu);
      if (out.out == "up\n") break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int zygote = launcher_->zygote_pid();
  ASSERT_GT(zygote, 0);
  ASSERT_EQ(kill(zygote, SIGKILL), 0);
  EXPECT_EQ((*process)->Wait(), 128 + SIGKILL);  // reported killed, and the fork is gone
  EXPECT_TRUE(testing::WaitGone((*process)->pid())) << "the fork outlived its zygote";

  LaunchSpec next = Spec("7.b.1", "python3 introspect.py", true);
  Write(next, "introspect.py", kIntrospect);
  Output cold;
  EXPECT_EQ(Run(next, cold), 3) << cold.err;
  EXPECT_THAT(cold.out, Not(HasSubstr("determined.exec.zygote")));
  EXPECT_EQ(launcher_->warm_starts(), 1);
  EXPECT_EQ(launcher_->cold_starts(), 1);
}

}  // namespace
}  // namespace det::agent
