// The agent's client loop against an in-process fake master, with real processes.

#include "agent/agent.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/allocation_records.h"
#include "agent/launcher/process_launcher.h"
#include "agent/launcher/testing/fake_launcher.h"
#include "agent/testing/fake_master.h"
#include "agent/testing/orphan_process.h"
#include "agent/testing/temp_dir.h"
#include "common/archive.h"

namespace det::agent {
namespace {

using testing::TempDir;

using std::chrono::milliseconds;
using testing::FakeMaster;

class AgentTest : public ::testing::Test {
 protected:
  TempDir tmp_{"agent-run"};  // first: removed after everything that ran in it
  const std::string data_dir_ = tmp_.path();

  void TearDown() override { StopAgent(); }

  AgentConfig Config() {
    AgentConfig c;
    c.master_url = master_.url();
    c.agent_id = "agent-1";
    c.hostname = "host-1";
    c.data_dir = data_dir_;
    c.harness_path = "/opt/harness";
    c.python = "/usr/bin/python3";
    c.poll_timeout_seconds = 1;
    c.retry_initial = milliseconds(5);
    c.retry_max = milliseconds(50);
    c.shutdown_grace = milliseconds(5000);
    c.wait_for_poll_on_shutdown = true;
    c.log_options.flush_interval = milliseconds(20);
    c.log_options.initial_backoff = milliseconds(5);
    c.log_options.max_backoff = milliseconds(50);
    return c;
  }

  void StartAgent(std::unique_ptr<Launcher> launcher) {
    agent_ = std::make_unique<Agent>(Config(), CpuSlots("agent-1", 2, "cpu"), std::move(launcher),
                                     &clock_);
    run_thread_ = std::thread([this] { run_status_ = agent_->Run(); });
  }

  void StopAgent() {
    if (agent_ == nullptr) return;
    agent_->Stop();
    run_thread_.join();
    EXPECT_TRUE(run_status_.ok());
    agent_.reset();
  }

  nlohmann::json StartCommand(const std::string& allocation_id, const nlohmann::json& entrypoint,
                              const std::string& task_id = "1.task") {
    return {{"type", "start"},
            {"allocationId", allocation_id},
            {"taskId", task_id},
            {"slotIds", {0}},
            {"entrypoint", entrypoint},
            {"env",
             {{"DET_SESSION_TOKEN", "tok-" + allocation_id},
              {"DET_ALLOCATION_ID", allocation_id},
              {"DET_TASK_ID", task_id}}}};
  }

  std::optional<nlohmann::json> Event(const std::string& type, const std::string& allocation_id) {
    for (const auto& e : master_.events()) {
      if (e["type"] == type && e["allocationId"] == allocation_id) return e;
    }
    return std::nullopt;
  }

  bool WaitEvent(const std::string& type, const std::string& allocation_id,
                 milliseconds timeout = milliseconds(20000)) {
    return FakeMaster::WaitFor([&] { return Event(type, allocation_id).has_value(); }, timeout);
  }

  std::vector<nlohmann::json> LogsOf(const std::string& allocation_id) {
    std::vector<nlohmann::json> out;
    for (const auto& l : master_.logs()) {
      if (l["allocationId"] == allocation_id) out.push_back(l);
    }
    return out;
  }

  FakeMaster master_;
  FakeClock clock_;
  std::unique_ptr<Agent> agent_;
  std::thread run_thread_;
  Status run_status_;
};

std::string ContextTgz() {
  std::vector<ArchiveEntry> files = {
      {"startup-hook.sh", false, "export HOOKED=yes\n", 0644, 0},
      {"train.sh", false,
       "echo \"[rank=0] INFO: hello $HOOKED $DET_ALLOCATION_ID $DET_AGENT_ID $DET_SLOT_IDS\"\n"
       "echo \"pp=$PYTHONPATH wd=$DET_WORKDIR master=$DET_MASTER_ID\"\n"
       "echo oops >&2\n"
       "exit 3\n",
       0755, 0},
  };
  auto tgz = CreateTarGz(files);
  EXPECT_TRUE(tgz.ok());
  return *tgz;
}

TEST_F(AgentTest, RegistersRunsShipsLogsAndReportsExit) {
  master_.SetContext("1.task", ContextTgz(), "tok-a1");
  StartAgent(std::make_unique<ProcessLauncher>());
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return agent_->registered(); }));
  auto reg = master_.registrations().at(0);
  EXPECT_EQ(reg["resourcePool"], "default");
  EXPECT_EQ(reg["hostname"], "host-1");
  EXPECT_EQ(reg["slots"].size(), 2u);
  EXPECT_EQ(reg["slots"][0]["type"], "cpu");
  EXPECT_TRUE(reg["running"].empty());

  master_.QueueCommand(StartCommand("a1", "sh train.sh"));
  ASSERT_TRUE(WaitEvent("exited", "a1"));
  auto started = Event("started", "a1");
  ASSERT_TRUE(started.has_value());
  EXPECT_GT((*started)["pid"].get<int>(), 0);
  auto exited = *Event("exited", "a1");
  EXPECT_EQ(exited["exitCode"], 3);
  EXPECT_FALSE(exited.contains("error"));
  // started precedes exited
  auto events = master_.events();
  EXPECT_EQ(events.front()["type"], "started");

  // Every line was shipped before the exit was reported.
  auto logs = LogsOf("a1");
  ASSERT_EQ(logs.size(), 3u);
  std::string workdir = data_dir_ + "/work/a1";
  EXPECT_EQ(logs[0]["rankId"], 0);
  EXPECT_EQ(logs[0]["level"], "LOG_LEVEL_INFO");
  EXPECT_EQ(logs[0]["log"], "hello yes a1 agent-1 [0]\n");
  EXPECT_EQ(logs[0]["taskId"], "1.task");
  EXPECT_EQ(logs[0]["agentId"], "agent-1");
  EXPECT_EQ(logs[0]["containerId"], "a1");
  EXPECT_EQ(logs[1]["log"],
            "pp=/opt/harness" +
                std::string(getenv("PYTHONPATH") ? std::string(":") + getenv("PYTHONPATH") : "") +
                " wd=" + workdir + " master=master-1\n");
  bool saw_err = false;
  for (const auto& l : logs) {
    if (l["stdtype"] == "stderr") {
      EXPECT_EQ(l["log"], "oops\n");
      saw_err = true;
    }
  }
  EXPECT_TRUE(saw_err);
  for (const auto& t : master_.log_tokens()) EXPECT_EQ(t, "Bearer tok-a1");
  EXPECT_TRUE(std::filesystem::exists(workdir + "/train.sh"));

  // A duplicate start (at-least-once delivery) does not run it again.
  // The context is served before the start that fetches it is queued.
  master_.SetContext("2.task", "", "tok-a2");
  master_.QueueCommand(StartCommand("a1", "sh train.sh"));
  master_.QueueCommand(StartCommand("a2", nlohmann::json::array({"sh", "-c", "exit 0"}), "2.task"));
  ASSERT_TRUE(WaitEvent("exited", "a2"));
  int a1_exits = 0;
  for (const auto& e : master_.events()) {
    if (e["allocationId"] == "a1" && e["type"] == "exited") ++a1_exits;
  }
  EXPECT_EQ(a1_exits, 1);
  EXPECT_EQ((*Event("exited", "a2"))["exitCode"], 0);
}

TEST_F(AgentTest, KillAndSignalReachTheProcessGroup) {
  master_.SetContext("1.task", "", "tok-k1");
  StartAgent(std::make_unique<ProcessLauncher>());
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return agent_->registered(); }));
  master_.QueueCommand(StartCommand("k1", "sleep 30"));
  ASSERT_TRUE(WaitEvent("started", "k1"));
  EXPECT_EQ(agent_->RunningAllocations(), std::vector<std::string>{"k1"});
  master_.QueueCommand({{"type", "kill"}, {"allocationId", "k1"}});
  master_.QueueCommand({{"type", "kill"}, {"allocationId", "unknown"}});
  ASSERT_TRUE(WaitEvent("exited", "k1"));
  EXPECT_EQ((*Event("exited", "k1"))["exitCode"], 128 + 9);

  master_.SetContext("1.task", "", "tok-s1");
  master_.QueueCommand(StartCommand(
      "s1", "trap 'echo term; exit 4' TERM; echo ready; while :; do sleep 0.01; done"));
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return !LogsOf("s1").empty(); }));
  master_.QueueCommand({{"type", "signal"}, {"allocationId", "s1"}, {"signal", "SIGTERM"}});
  ASSERT_TRUE(WaitEvent("exited", "s1"));
  EXPECT_EQ((*Event("exited", "s1"))["exitCode"], 4);
  // The whole group got SIGTERM (the shell's `sleep` child too); the trap ran.
  bool saw_term = false;
  for (const auto& l : LogsOf("s1")) saw_term |= l["log"] == "term\n";
  EXPECT_TRUE(saw_term);
}

TEST_F(AgentTest, StartFailureReportsErrorAndShipsIt) {
  StartAgent(std::make_unique<ProcessLauncher>());
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return agent_->registered(); }));
  // No context for this task: the master answers 404.
  master_.QueueCommand(StartCommand("f1", "true", "9.missing"));
  ASSERT_TRUE(WaitEvent("exited", "f1"));
  auto exited = *Event("exited", "f1");
  EXPECT_NE(exited["exitCode"], 0);
  EXPECT_NE(exited["error"].get<std::string>().find("context directory"), std::string::npos);
  EXPECT_FALSE(Event("started", "f1").has_value());
  auto logs = LogsOf("f1");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0]["level"], "LOG_LEVEL_ERROR");
  EXPECT_EQ(logs[0]["stdtype"], "stderr");
}

TEST_F(AgentTest, SurvivesMasterOutagesWithoutLosingLinesOrEvents) {
  master_.SetUnavailable(true);
  StartAgent(std::make_unique<ProcessLauncher>());
  // Registration keeps retrying while the master is down.
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return !agent_->registered(); }));
  master_.SetUnavailable(false);
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return agent_->registered(); }));

  master_.SetContext("1.task", "", "tok-o1");
  master_.SetLogsUnavailable(true);
  master_.QueueCommand(
      StartCommand("o1", "i=0; while [ $i -lt 50 ]; do echo line $i; i=$((i+1)); done"));
  ASSERT_TRUE(WaitEvent("started", "o1"));
  // The process is done, but its lines cannot be shipped: no exit is reported yet.
  EXPECT_FALSE(WaitEvent("exited", "o1", milliseconds(300)));
  master_.SetUnavailable(true);  // the whole master goes away for a while
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return !agent_->registered(); }));
  master_.SetLogsUnavailable(false);
  master_.SetUnavailable(false);
  ASSERT_TRUE(WaitEvent("exited", "o1"));
  auto logs = LogsOf("o1");
  ASSERT_EQ(logs.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(logs[i]["log"], "line " + std::to_string(i) + "\n");
  // The exit may be shipped before the re-registration is answered (make test saw 1 of 2).
  EXPECT_TRUE(FakeMaster::WaitFor([&] { return master_.registrations().size() >= 2u; }))
      << master_.registrations().size() << " registrations";
}

TEST_F(AgentTest, ReRegistrationReportsRunningAllocations) {
  auto launcher = std::make_unique<FakeLauncher>();
  FakeLauncher* fake = launcher.get();
  master_.SetContext("1.task", "", "tok-r1");
  StartAgent(std::move(launcher));
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return agent_->registered(); }));
  master_.QueueCommand(StartCommand("r1", nlohmann::json::array({"python3", "train.py"})));
  auto process = fake->WaitForLaunch(1, milliseconds(20000));
  ASSERT_NE(process, nullptr);
  const LaunchSpec& spec = process->spec();
  ASSERT_GE(spec.argv.size(), 6u);
  EXPECT_EQ(spec.argv[0], "/bin/sh");
  EXPECT_EQ(spec.argv[4], "python3");
  EXPECT_EQ(spec.argv[5], "train.py");
  EXPECT_EQ(spec.cwd, data_dir_ + "/work/r1");
  EXPECT_EQ(spec.env.at("DET_CONTAINER_ID"), "r1");
  EXPECT_EQ(spec.env.at("DET_SESSION_TOKEN"), "tok-r1");
  EXPECT_EQ(spec.env.at("DET_MASTER"), master_.url());
  EXPECT_EQ(spec.env.at("DET_CLUSTER_ID"), "cluster-1");

  master_.SetUnavailable(true);
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return !agent_->registered(); }));
  EXPECT_FALSE(process->exited());  // an unreachable master kills nothing
  master_.SetUnavailable(false);
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return agent_->registered(); }));
  auto regs = master_.registrations();
  EXPECT_EQ(regs.back()["running"], nlohmann::json::array({"r1"}));

  process->Emit(StdType::kStdout, "partial line without newline");
  process->Exit(0);
  ASSERT_TRUE(WaitEvent("exited", "r1"));
  auto logs = LogsOf("r1");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0]["log"], "partial line without newline\n");
}

TEST_F(AgentTest, StopKillsRunningProcessesAndReportsTheirExit) {
  master_.SetContext("1.task", "", "tok-x1");
  StartAgent(std::make_unique<ProcessLauncher>());
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return agent_->registered(); }));
  master_.QueueCommand(StartCommand("x1", "sleep 30"));
  ASSERT_TRUE(WaitEvent("started", "x1"));
  StopAgent();
  auto exited = Event("exited", "x1");
  ASSERT_TRUE(exited.has_value());
  EXPECT_EQ((*exited)["exitCode"], 137);
}

TEST_F(AgentTest, RecordsEachLaunchedAllocationUntilItsProcessesAreGone) {
  master_.SetContext("1.task", "", "tok-p1");
  StartAgent(std::make_unique<ProcessLauncher>());
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return agent_->registered(); }));
  master_.QueueCommand(StartCommand("p1", "sleep 30"));
  ASSERT_TRUE(WaitEvent("started", "p1"));
  AllocationRecords records(data_dir_);
  auto listed = records.List();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].allocation_id, "p1");
  EXPECT_EQ((*listed)[0].workdir, data_dir_ + "/work/p1");
  EXPECT_EQ((*listed)[0].pid, (*Event("started", "p1"))["pid"].get<int>());

  master_.QueueCommand({{"type", "kill"}, {"allocationId", "p1"}});
  ASSERT_TRUE(WaitEvent("exited", "p1"));
  EXPECT_TRUE(records.List()->empty());
}

TEST_F(AgentTest, EndsProcessesLeftByAKilledPreviousRunBeforeRegistering) {
  // What a previous run of this agent left after a kill -9: a record and a live process group
  // that carries the allocation's environment.
  std::string workdir = data_dir_ + "/work/old.1";
  std::filesystem::create_directories(workdir);
  pid_t orphan =
      testing::SpawnSession("exec sleep 300", {"DET_CONTAINER_ID=old.1", "DET_WORKDIR=" + workdir});
  ASSERT_TRUE(testing::IsLive(orphan));
  AllocationRecords records(data_dir_);
  ASSERT_TRUE(records.Write({"old.1", workdir, orphan}).ok());

  StartAgent(std::make_unique<ProcessLauncher>());
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return agent_->registered(); }));
  bool gone = !testing::IsLive(orphan);
  if (!gone) kill(orphan, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(orphan, &status, 0), orphan);
  EXPECT_TRUE(gone) << "the orphan still ran when the agent registered";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(master_.registrations().at(0)["running"].empty());
  EXPECT_TRUE(records.List()->empty());
  EXPECT_FALSE(std::filesystem::exists(workdir));
}

TEST_F(AgentTest, ASecondAgentOnTheSameDataDirRefusesToRun) {
  StartAgent(std::make_unique<ProcessLauncher>());
  ASSERT_TRUE(FakeMaster::WaitFor([&] { return agent_->registered(); }));
  Agent second(Config(), CpuSlots("agent-1", 1, "cpu"), std::make_unique<ProcessLauncher>(),
               &clock_);
  Status s = second.Run();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.message();
  EXPECT_EQ(master_.registrations().size(), 1u);
}

}  // namespace
}  // namespace det::agent
