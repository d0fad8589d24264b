#include "agent/orphan_cleanup.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "agent/allocation_records.h"
#include "agent/testing/orphan_process.h"
#include "agent/testing/temp_dir.h"
#include "agent/warm_python.h"

namespace det::agent {
namespace {

using testing::TempDir;

using testing::IsLive;
using testing::ReadPidWhenWritten;
using testing::SpawnSession;
using testing::WaitGone;

bool Contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

class OrphanCleanupTest : public ::testing::Test {
 protected:
  TempDir tmp_{"orphans"};  // first: removed after TearDown killed what ran in it
  const std::string data_dir_ = tmp_.path();

  void TearDown() override {
    // Only unreaped children: a reaped pid may already name someone else's process.
    for (pid_t pid : spawned_) {
      if (waitpid(pid, nullptr, WNOHANG) != 0) continue;
      kill(-pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    for (pid_t pid : children_) {
      if (IsLive(pid)) kill(pid, SIGKILL);
    }
  }

  // The environment the agent gives an allocation's processes (the parts cleanup checks).
  std::vector<std::string> EnvOf(const std::string& allocation_id) {
    return {"PATH=/usr/bin:/bin", "DET_CONTAINER_ID=" + allocation_id,
            "DET_WORKDIR=" + AllocationWorkDir(data_dir_, allocation_id)};
  }

  pid_t Spawn(const std::string& script, const std::vector<std::string>& env) {
    pid_t pid = SpawnSession(script, env);
    spawned_.push_back(pid);
    return pid;
  }

  std::string Path(const std::string& name) { return data_dir_ + "/" + name; }

  std::vector<pid_t> spawned_;
  std::vector<pid_t> children_;  // their background children
};

TEST(ProcStatTest, ParsesStateAndGroupPastOddCommandNames) {
  auto s = ParseProcStat("4242 (my (odd) cmd) S 1 4240 4240 0 -1 4194560");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->state, 'S');
  EXPECT_EQ(s->pgid, 4240);
  EXPECT_FALSE(ParseProcStat("").has_value());
  EXPECT_FALSE(ParseProcStat("12 (x) Z").has_value());
}

TEST(EnvironTest, MatchesWholeEntriesOnly) {
  using namespace std::string_literals;
  std::string env = "A=1\0DET_CONTAINER_ID=3.1\0DET_WORKDIR=/w/3.1\0"s;
  EXPECT_TRUE(EnvironHas(env, "DET_CONTAINER_ID", "3.1"));
  EXPECT_TRUE(EnvironHas(env, "DET_WORKDIR", "/w/3.1"));
  EXPECT_TRUE(EnvironHas(env, "A", "1"));
  EXPECT_FALSE(EnvironHas(env, "DET_CONTAINER_ID", "3"));
  EXPECT_FALSE(EnvironHas(env, "DET_CONTAINER_ID", "3.10"));
  EXPECT_FALSE(EnvironHas(env, "CONTAINER_ID", "3.1"));
  EXPECT_FALSE(EnvironHas("", "A", ""));
}

TEST_F(OrphanCleanupTest, KillsTheRecordedGroupAndItsChildrenThenRemovesRecordAndWorkDir) {
  std::string child_file = Path("child.pid");
  pid_t leader = Spawn("sleep 300 & echo $! > " + child_file + "; wait", EnvOf("5.1"));
  pid_t child = ReadPidWhenWritten(child_file);
  ASSERT_GT(child, 0);
  children_.push_back(child);
  AllocationRecords records(data_dir_);
  ASSERT_TRUE(records.Write({"5.1", AllocationWorkDir(data_dir_, "5.1"), leader}).ok());
  std::filesystem::create_directories(AllocationWorkDir(data_dir_, "5.1"));
  std::ofstream(AllocationWorkDir(data_dir_, "5.1") + "/train.py") << "x";

  auto cleaned = CleanUpStaleAllocations(data_dir_);
  ASSERT_TRUE(cleaned.ok()) << cleaned.status().message();
  ASSERT_EQ(cleaned->size(), 1u);
  const CleanedAllocation& c = (*cleaned)[0];
  EXPECT_EQ(c.allocation_id, "5.1");
  EXPECT_EQ(c.recorded_pid, leader);
  EXPECT_TRUE(c.gone);
  EXPECT_TRUE(Contains(c.killed_pids, leader));
  EXPECT_TRUE(Contains(c.killed_pids, child));

  int status = testing::WaitChildStatus(leader);
  ASSERT_NE(status, -1) << "the leader still runs";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(WaitGone(child));
  EXPECT_TRUE(records.List()->empty());
  EXPECT_FALSE(std::filesystem::exists(AllocationWorkDir(data_dir_, "5.1")));
}

TEST_F(OrphanCleanupTest, FindsProcessesByEnvironmentWhenTheLeaderIsGone) {
  // The leader exits at once; its background child stays behind in the group (as when a
  // trial's `sh -c` exits while a worker it started lives on), and the record has no pid yet.
  std::string child_file = Path("child.pid");
  pid_t leader = Spawn("sleep 300 & echo $! > " + child_file, EnvOf("6.1"));
  pid_t child = ReadPidWhenWritten(child_file);
  ASSERT_GT(child, 0);
  children_.push_back(child);
  ASSERT_TRUE(WaitGone(leader));
  ASSERT_TRUE(IsLive(child));
  ASSERT_TRUE(AllocationRecords(data_dir_).Write({"6.1", "", 0}).ok());  // workdir defaulted

  auto cleaned = CleanUpStaleAllocations(data_dir_);
  ASSERT_TRUE(cleaned.ok()) << cleaned.status().message();
  ASSERT_EQ(cleaned->size(), 1u);
  EXPECT_TRUE((*cleaned)[0].gone);
  EXPECT_EQ((*cleaned)[0].killed_pids, std::vector<int>{child});
  EXPECT_TRUE(WaitGone(child));
}

TEST_F(OrphanCleanupTest, NeverSignalsProcessesWithoutTheAllocationsEnvironment) {
  // A recorded pid (and its group) now held by processes that are not the allocation's: one
  // of another allocation, one of the same id under another agent's work root.
  pid_t other = Spawn("exec sleep 300", EnvOf("7.2"));
  std::vector<std::string> foreign_env = {"DET_CONTAINER_ID=7.1", "DET_WORKDIR=/elsewhere/7.1"};
  pid_t foreign = Spawn("exec sleep 300", foreign_env);
  ASSERT_TRUE(IsLive(other));
  AllocationRecords records(data_dir_);
  ASSERT_TRUE(records.Write({"7.1", AllocationWorkDir(data_dir_, "7.1"), other}).ok());
  ASSERT_TRUE(records.Write({"7.3", AllocationWorkDir(data_dir_, "7.3"), foreign}).ok());

  auto cleaned = CleanUpStaleAllocations(data_dir_);
  ASSERT_TRUE(cleaned.ok()) << cleaned.status().message();
  ASSERT_EQ(cleaned->size(), 2u);
  for (const auto& c : *cleaned) {
    EXPECT_TRUE(c.gone) << c.allocation_id;
    EXPECT_TRUE(c.killed_pids.empty()) << c.allocation_id;
  }
  EXPECT_TRUE(IsLive(other));
  EXPECT_TRUE(IsLive(foreign));
  EXPECT_TRUE(records.List()->empty());  // nothing of theirs is left: the records go
}

TEST_F(OrphanCleanupTest, KillsAPreviousWarmPythonAndItsForksByTheMarker) {
  // Forks of the warm python keep its initial environment, so they carry no DET_CONTAINER_ID:
  // the marker of this data dir (and the recorded pid) is what finds them.
  std::vector<std::string> marker = {"PATH=/usr/bin:/bin",
                                     std::string(kZygoteMarkerEnv) + "=" + data_dir_};
  pid_t zygote = Spawn("exec sleep 300", marker);
  pid_t trial = Spawn("exec sleep 300", marker);
  pid_t other_agent =
      Spawn("exec sleep 300", {"PATH=/usr/bin:/bin", std::string(kZygoteMarkerEnv) + "=/other"});
  ASSERT_TRUE(IsLive(zygote) && IsLive(trial) && IsLive(other_agent));
  ASSERT_TRUE(
      AllocationRecords(data_dir_).Write({"8.1", AllocationWorkDir(data_dir_, "8.1"), trial}).ok());

  auto cleaned = CleanUpStaleAllocations(data_dir_);
  ASSERT_TRUE(cleaned.ok()) << cleaned.status().message();
  ASSERT_EQ(cleaned->size(), 1u);
  EXPECT_TRUE((*cleaned)[0].gone);
  EXPECT_EQ((*cleaned)[0].killed_pids, std::vector<int>{trial});
  EXPECT_TRUE(WaitGone(trial));
  EXPECT_TRUE(WaitGone(zygote));  // no record names it: killed all the same
  EXPECT_TRUE(IsLive(other_agent));
}

TEST_F(OrphanCleanupTest, NoRecordsNothingToDo) {
  auto cleaned = CleanUpStaleAllocations(data_dir_);
  ASSERT_TRUE(cleaned.ok());
  EXPECT_TRUE(cleaned->empty());
}

}  // namespace
}  // namespace det::agent
