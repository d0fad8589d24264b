#include "agent/launcher/process_launcher.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <mutex>
#include <thread>

#include "agent/entrypoint.h"

namespace det::agent {
namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "agent-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct Output {
  std::mutex mu;
  std::string out;
  std::string err;
  void Add(StdType t, std::string_view d) {
    std::lock_guard<std::mutex> lock(mu);
    (t == StdType::kStdout ? out : err).append(d);
  }
};

LaunchSpec Spec(std::vector<std::string> argv, const std::string& cwd) {
  LaunchSpec spec;
  spec.argv = std::move(argv);
  spec.env = {{"PATH", "/usr/bin:/bin"}, {"FOO", "bar"}};
  spec.cwd = cwd;
  return spec;
}

TEST(ProcessLauncherTest, ReportsOutputAndExitCode) {
  TempDir dir;
  Output output;
  ProcessLauncher launcher;
  auto p = launcher.Launch(Spec({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, dir.path()),
                           [&](StdType t, std::string_view d) { output.Add(t, d); });
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_GT((*p)->pid(), 0);
  EXPECT_EQ((*p)->Wait(), 3);
  EXPECT_EQ(output.out, "out\n");
  EXPECT_EQ(output.err, "err\n");
}

TEST(ProcessLauncherTest, RunsInCwdWithEnvInNewSession) {
  TempDir dir;
  Output output;
  ProcessLauncher launcher;
  auto p = launcher.Launch(
      Spec({"sh", "-c", "pwd; echo $FOO; test $(ps -o sid= -p $$) -eq $$ && echo leader"},
           dir.path()),
      [&](StdType t, std::string_view d) { output.Add(t, d); });
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)->Wait(), 0) << output.err;
  std::string canonical = std::filesystem::canonical(dir.path()).string();
  EXPECT_EQ(output.out, canonical + "\nbar\nleader\n");
}

TEST(ProcessLauncherTest, KillTerminatesTheWholeGroup) {
  TempDir dir;
  ProcessLauncher launcher;
  Output output;
  // The shell starts a background sleep too; both must die with the group.
  auto p = launcher.Launch(Spec({"/bin/sh", "-c", "sleep 30 & echo started; sleep 30"}, dir.path()),
                           [&](StdType t, std::string_view d) { output.Add(t, d); });
  ASSERT_TRUE(p.ok());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(output.mu);
      if (output.out == "started\n") break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE((*p)->Signal(SIGKILL).ok());
  ASSERT_TRUE((*p)->Signal(SIGKILL).ok());  // idempotent
  EXPECT_EQ((*p)->Wait(), 128 + SIGKILL);
  EXPECT_TRUE((*p)->Signal(SIGKILL).ok());  // after exit: no-op
  int pgid = (*p)->pid();
  // No process of the group is left (the orphaned sleep may take a moment to be reaped).
  auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (kill(-pgid, 0) == 0 && std::chrono::steady_clock::now() < gone_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(kill(-pgid, 0), -1);
}

TEST(ProcessLauncherTest, SigtermIsDelivered) {
  TempDir dir;
  ProcessLauncher launcher;
  Output output;
  auto p = launcher.Launch(
      Spec({"/bin/sh", "-c",
            "trap 'echo got-term; exit 7' TERM; echo ready; while :; do sleep 0.01; done"},
           dir.path()),
      [&](StdType t, std::string_view d) { output.Add(t, d); });
  ASSERT_TRUE(p.ok());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(output.mu);
      if (output.out == "ready\n") break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE((*p)->Signal(SIGTERM).ok());
  EXPECT_EQ((*p)->Wait(), 7);
  EXPECT_EQ(output.out, "ready\ngot-term\n");
}

TEST(ProcessLauncherTest, ExecFailureIsAnError) {
  TempDir dir;
  ProcessLauncher launcher;
  auto p = launcher.Launch(Spec({"/nonexistent/program"}, dir.path()), nullptr);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("exec /nonexistent/program"), std::string::npos);
  auto q = launcher.Launch(Spec({"/bin/true"}, dir.path() + "/missing"), nullptr);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("chdir"), std::string::npos);
}

TEST(ProcessLauncherTest, StartupHookIsSourcedBeforeTheEntrypoint) {
  TempDir dir;
  {
    FILE* f = fopen((dir.path() + "/startup-hook.sh").c_str(), "w");
    fputs("export HOOKED=yes\n", f);
    fclose(f);
  }
  ProcessLauncher launcher;
  Output output;
  auto p = launcher.Launch(
      Spec(WrapWithStartupHook({"sh", "-c", "echo hook=$HOOKED \"$0\" $1", "arg0", "arg 1"}),
           dir.path()),
      [&](StdType t, std::string_view d) { output.Add(t, d); });
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->Wait(), 0) << output.err;
  EXPECT_EQ(output.out, "hook=yes arg0 arg 1\n");

  {
    FILE* f = fopen((dir.path() + "/startup-hook.sh").c_str(), "w");
    fputs("exit 5\n", f);
    fclose(f);
  }
  auto q = launcher.Launch(Spec(WrapWithStartupHook({"echo", "never"}), dir.path()), nullptr);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ((*q)->Wait(), 5);
}

}  // namespace
}  // namespace det::agent
