// TaskService over a real SQLite store in a temp dir, a fake clock and a real AgentService:
// launch and persistence, the scheduler's view, start/exit on an agent, the proxy's owner
// check, idle timeouts and config errors.
#include "master/server/task_service.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <future>

#include "common/test_dir.h"
#include "master/store/session_token.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

using nlohmann::json;

class TaskServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_task_service_test_");
    auto s = store::SqliteStore::Open((dir_ / "det.db").string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    auth_ = std::make_unique<AuthService>(store_.get(), &clock_);
    ASSERT_TRUE(auth_->EnsureBuiltinUsers(std::nullopt, "127.0.0.1").ok());
    agents_ = std::make_unique<AgentService>(&clock_, &waiters_, 60);
    json body = {{"resourcePool", "default"},
                 {"slots", json::array({{{"id", 0}, {"type", "cpu"}}})}};
    ASSERT_TRUE(agents_
                    ->Register("a1", body,
                               [](const std::string&, const std::string&) { return Status::Ok(); })
                    .ok());
    pools_.pools.push_back(scheduler::PoolConfig{});
    pools_.pools.back().pool_name = "default";
    pools_.default_compute_pool = "default";
    pools_.default_aux_pool = "default";
    NewService();
    owner_.user_id = 2;
    owner_.username = "determined";
  }
  void TearDown() override {
    tasks_.reset();
    agents_.reset();
    auth_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void NewService() {
    tasks_ = std::make_unique<TaskService>(store_.get(), &clock_, auth_.get(), agents_.get(),
                                           TaskService::Options{&pools_, "cluster", "master", ""});
    tasks_->SetOnChange([this] { ++changes_; });
  }
  TaskView LaunchCommand(json config) {
    LaunchTaskRequest req;
    req.type = TaskType::kCommand;
    req.config = std::move(config);
    Result<TaskView> v = tasks_->Launch(req, owner_);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? *v : TaskView{};
  }
  // The commands queued for agent a1 after `after`.
  json Commands(int64_t after) {
    std::promise<Result<json>> p;
    auto f = p.get_future();
    agents_->PollCommands("a1", after, 0, [&p](Result<json> r) { p.set_value(std::move(r)); });
    Result<json> r = f.get();
    EXPECT_TRUE(r.ok());
    return r.ok() ? (*r)["commands"] : json::array();
  }

  std::filesystem::path dir_;
  FakeClock clock_;
  Waiters waiters_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<AuthService> auth_;
  std::unique_ptr<AgentService> agents_;
  scheduler::ResourcePoolsConfig pools_;
  std::unique_ptr<TaskService> tasks_;
  Principal owner_;
  int changes_ = 0;
};

TEST_F(TaskServiceTest, LaunchedCommandIsQueuedPersistedAndScheduledAsAJob) {
  TaskView v = LaunchCommand({{"entrypoint", "echo hi"}, {"resources", {{"priority", 7}}}});
  EXPECT_EQ(v.row.state, "STATE_QUEUED");
  EXPECT_EQ(changes_, 1);
  scheduler::ClusterSnapshot snap;
  tasks_->AddToSnapshot(&snap);
  ASSERT_EQ(snap.jobs.size(), 1u);
  EXPECT_EQ(snap.jobs[0].priority, 7);
  ASSERT_EQ(snap.requests.size(), 1u);
  EXPECT_FALSE(snap.requests[0].preemptible);
  EXPECT_EQ(snap.requests[0].slots, 1);
  EXPECT_TRUE(tasks_->HasPending());
  ASSERT_TRUE(tasks_->Job(v.row.job_id).has_value());
  EXPECT_EQ(tasks_->Job(v.row.job_id)->type, "TYPE_COMMAND");

  NewService();  // a restarted master
  ASSERT_TRUE(tasks_->Restore(clock_.NowMicros()).ok());
  Result<TaskView> again = tasks_->Get(v.row.task_id);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->row.state, "STATE_QUEUED");
  EXPECT_EQ(again->row.config["entrypoint"], "echo hi");
}

TEST_F(TaskServiceTest, SlotsNoAgentHasAreRefusedAsUnfulfillable) {
  LaunchTaskRequest req;
  req.type = TaskType::kCommand;
  req.config = {{"entrypoint", "sleep 1"}, {"resources", {{"slots", 2}}}};
  Result<TaskView> v = tasks_->Launch(req, owner_);  // a1, the pool's only agent, has one slot
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(v.status().message().find("request unfulfillable"), std::string::npos)
      << v.status().message();
  EXPECT_NE(v.status().message().find("pool 'default' has 1"), std::string::npos);
  EXPECT_EQ(changes_, 0);  // nothing stored
  req.config["resources"]["slots"] = 1;
  EXPECT_TRUE(tasks_->Launch(req, owner_).ok());
}

TEST_F(TaskServiceTest, StartSendsTheProcessAndItsExitEndsTheTask) {
  TaskView v = LaunchCommand({{"entrypoint", json::array({"sh", "-c", "exit 3"})}});
  scheduler::ClusterSnapshot snap;
  tasks_->AddToSnapshot(&snap);
  ASSERT_TRUE(tasks_->Owns(snap.requests[0].id));
  ASSERT_TRUE(tasks_->Start(snap.requests[0].id, {{"a1", {0}}}).ok());
  json cmds = Commands(0);
  ASSERT_EQ(cmds.size(), 1u);
  EXPECT_EQ(cmds[0]["type"], "start");
  EXPECT_EQ(cmds[0]["taskType"], "COMMAND");
  EXPECT_EQ(cmds[0]["env"]["DET_TASK_ID"], v.row.task_id);
  EXPECT_EQ(cmds[0]["env"]["DET_TASK_TYPE"], "COMMAND");
  std::string alloc = cmds[0]["allocationId"];
  // The token goes to the process; the row keeps its digest only.
  const std::string token = cmds[0]["env"]["DET_SESSION_TOKEN"];
  EXPECT_EQ(tasks_->Get(v.row.task_id)->row.allocation_token, store::AllocationTokenDigest(token));
  Result<Principal> who = auth_->AuthenticateAllocationToken(token);
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_EQ(who->allocation_id, alloc);
  EXPECT_FALSE(tasks_->HasPending());
  EXPECT_TRUE(tasks_->HandleAgentEvent("a1", {{"type", "started"}, {"allocationId", alloc}}));
  EXPECT_EQ(tasks_->Get(v.row.task_id)->row.state, "STATE_RUNNING");
  EXPECT_TRUE(tasks_->HandleAgentEvent(
      "a1", {{"type", "exited"}, {"allocationId", alloc}, {"exitCode", 3}}));
  TaskView done = *tasks_->Get(v.row.task_id);
  EXPECT_TRUE(done.terminal);
  EXPECT_EQ(done.row.exit_code, 3);
  EXPECT_EQ(auth_->AuthenticateAllocationToken(token).status().code(),
            StatusCode::kUnauthenticated);  // its token died with it
  EXPECT_FALSE(tasks_->HandleAgentEvent("a1", {{"type", "exited"}, {"allocationId", "x.1"}}));
  auto logs = tasks_->Logs(v.row.task_id, 0, 0, false);
  ASSERT_TRUE(logs.ok());
  EXPECT_NE(logs->back().log.find("exited with code 3"), std::string::npos);
}

TEST_F(TaskServiceTest, ProxyIsForTheOwnerOrAnAdminAndIdleTasksAreKilled) {
  LaunchTaskRequest req;
  req.type = TaskType::kNotebook;
  req.config = {{"idle_timeout", "2s"}};
  Result<TaskView> v = tasks_->Launch(req, owner_);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  const std::string id = v->row.task_id;
  EXPECT_EQ(tasks_->Proxy(id, &owner_).status().code(), StatusCode::kUnavailable);
  scheduler::ClusterSnapshot snap;
  tasks_->AddToSnapshot(&snap);
  ASSERT_TRUE(tasks_->Start(snap.requests[0].id, {{"a1", {0}}}).ok());
  std::string alloc = tasks_->Get(id)->row.allocation_id;
  Principal proc;
  proc.is_allocation = true;
  proc.allocation_id = alloc;
  EXPECT_FALSE(tasks_->SetProxyAddress(proc, alloc, "127.0.0.1").ok());  // no port
  // Another user can neither point the proxy elsewhere nor mark the task ready.
  Principal stranger;
  stranger.user_id = 99;
  stranger.username = "stranger";
  EXPECT_EQ(tasks_->SetProxyAddress(stranger, alloc, "127.0.0.1:1").code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(tasks_->SetReady(stranger, alloc).code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(tasks_->Get(id)->row.ready);
  ASSERT_TRUE(tasks_->SetProxyAddress(proc, alloc, "127.0.0.1:9999").ok());
  ASSERT_TRUE(tasks_->SetReady(proc, alloc).ok());
  Result<TaskService::ProxyTarget> t = tasks_->Proxy(id, &owner_);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->address, "127.0.0.1:9999");
  EXPECT_FALSE(t->notebook_token.empty());
  Principal other;
  other.user_id = 99;
  other.username = "other";
  EXPECT_EQ(tasks_->Proxy(id, &other).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(tasks_->Kill(id, other).code(), StatusCode::kPermissionDenied);
  Principal admin = other;
  admin.admin = true;
  EXPECT_TRUE(tasks_->Proxy(id, &admin).ok());
  // No credential: a notebook is refused (401), WebSocket or not.
  EXPECT_EQ(tasks_->Proxy(id, nullptr).status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(tasks_->Proxy(id, nullptr, true).status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(tasks_->Proxy("no-such-task", nullptr, true).status().code(),
            StatusCode::kUnauthenticated);

  int64_t seen = Commands(0).back()["seq"];
  clock_.Advance(1000000);
  tasks_->Tick();
  EXPECT_EQ(tasks_->Get(id)->row.state, "STATE_RUNNING");  // not idle long enough
  clock_.Advance(3000000);
  tasks_->Tick();
  EXPECT_EQ(tasks_->Get(id)->row.state, "STATE_TERMINATING");
  json kill = Commands(seen);
  ASSERT_EQ(kill.size(), 1u);
  EXPECT_EQ(kill[0]["type"], "kill");
  EXPECT_EQ(kill[0]["allocationId"], alloc);
}

TEST_F(TaskServiceTest, KillingAQueuedTaskEndsIt) {
  TaskView v = LaunchCommand({{"entrypoint", "sleep 100"}});
  ASSERT_TRUE(tasks_->Kill(v.row.task_id, owner_).ok());
  EXPECT_TRUE(tasks_->Get(v.row.task_id)->terminal);
  EXPECT_FALSE(tasks_->HasPending());
}

TEST(TaskConfigTest, ErrorsNameTheFieldValueAndRule) {
  auto bad = ParseTaskConfig(TaskType::kCommand,
                             {{"entrypoint", "x"}, {"resources", {{"priority", 500}}}}, "d");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("resources.priority"), std::string::npos);
  EXPECT_NE(bad.status().message().find("500"), std::string::npos);
  auto unknown =
      ParseTaskConfig(TaskType::kCommand, {{"entrypoint", "x"}, {"hyperparameters", 1}}, "d");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("hyperparameters"), std::string::npos);
  EXPECT_FALSE(ParseTaskConfig(TaskType::kCommand, json::object(), "d").ok());  // no entrypoint
  auto tb = ParseTaskConfig(TaskType::kTensorboard, json::object(), "d");
  ASSERT_TRUE(tb.ok());
  EXPECT_EQ(tb->slots, 0);
  EXPECT_EQ(*ParseDurationSeconds("30m", "idle_timeout"), 1800);
  EXPECT_FALSE(ParseDurationSeconds("3 weeks", "idle_timeout").ok());
}

TEST_F(TaskServiceTest, JobUpdateChangesAQueuedCommandsPriorityAndSurvivesARestart) {
  TaskView v = LaunchCommand({{"entrypoint", "sleep 1"}});
  const std::string job = v.row.job_id;
  ASSERT_TRUE(tasks_->UpdateJob(job, {{"priority", 10}}).ok());
  scheduler::ClusterSnapshot snap;
  tasks_->AddToSnapshot(&snap);
  ASSERT_EQ(snap.jobs.size(), 1u);
  EXPECT_EQ(snap.jobs[0].priority, 10);
  EXPECT_EQ(tasks_->Get(v.row.task_id)->priority, 10);
  EXPECT_EQ(tasks_->Get(v.row.task_id)->row.config["resources"]["priority"], 10);

  // Bad values name the field and the rule; nothing changes.
  Status bad = tasks_->UpdateJob(job, {{"priority", 500}});
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("priority"), std::string::npos) << bad.message();
  Status weight = tasks_->UpdateJob(job, {{"weight", 2}});
  EXPECT_EQ(weight.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(weight.message().find("fair_share"), std::string::npos) << weight.message();
  Status pool = tasks_->UpdateJob(job, {{"resourcePool", "default"}});
  EXPECT_FALSE(pool.ok());
  EXPECT_NE(pool.message().find("only experiments"), std::string::npos) << pool.message();
  EXPECT_EQ(tasks_->UpdateJob(job, {{"aheadOf", "x"}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(tasks_->UpdateJob("no-such-job", {{"priority", 3}}).code(), StatusCode::kNotFound);

  NewService();  // a restarted master reads the stored priority
  ASSERT_TRUE(tasks_->Restore(0).ok());
  EXPECT_EQ(tasks_->Get(v.row.task_id)->priority, 10);
  auto logs = tasks_->Logs(v.row.task_id, 0, 0, false);
  ASSERT_TRUE(logs.ok());
  EXPECT_NE(logs->back().log.find("set to priority 10"), std::string::npos);

  ASSERT_TRUE(tasks_->Kill(v.row.task_id, owner_).ok());
  EXPECT_EQ(tasks_->UpdateJob(job, {{"priority", 3}}).code(), StatusCode::kNotFound)
      << "an ended task's job is no longer in the queue";
}

TEST_F(TaskServiceTest, JobUpdateSetsWeightInAFairSharePool) {
  pools_.pools.back().scheduler.type = scheduler::SchedulerType::kFairShare;
  NewService();
  TaskView v = LaunchCommand({{"entrypoint", "sleep 1"}});
  ASSERT_TRUE(tasks_->UpdateJob(v.row.job_id, {{"weight", 3.5}}).ok());
  scheduler::ClusterSnapshot snap;
  tasks_->AddToSnapshot(&snap);
  EXPECT_DOUBLE_EQ(snap.jobs[0].weight, 3.5);
  EXPECT_EQ(tasks_->UpdateJob(v.row.job_id, {{"priority", 5}}).code(),
            StatusCode::kFailedPrecondition)
      << "priority is for priority pools";
}

TEST_F(TaskServiceTest, AShellsTunnelNeedsNoCredentialButItsPlainRequestsDo) {
  LaunchTaskRequest req;
  req.type = TaskType::kShell;
  Result<TaskView> v = tasks_->Launch(req, owner_);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  const std::string id = v->row.task_id;
  scheduler::ClusterSnapshot snap;
  tasks_->AddToSnapshot(&snap);
  ASSERT_TRUE(tasks_->Start(snap.requests[0].id, {{"a1", {0}}}).ok());
  std::string alloc = tasks_->Get(id)->row.allocation_id;
  Principal proc;
  proc.is_allocation = true;
  proc.allocation_id = alloc;
  ASSERT_TRUE(tasks_->SetProxyAddress(proc, alloc, "127.0.0.1:2222", "root").ok());
  Result<TaskService::ProxyTarget> t = tasks_->Proxy(id, nullptr, /*tunnel=*/true);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->type, TaskType::kShell);
  EXPECT_EQ(t->address, "127.0.0.1:2222");
  EXPECT_EQ(tasks_->Proxy(id, nullptr, false).status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(tasks_->Proxy(id, &proc, true).status().code(), StatusCode::kPermissionDenied);
}

TEST_F(TaskServiceTest, BindMountsOfAProcessTaskAreLinksAndAnImageGetsAContainer) {
  TaskView v = LaunchCommand({{"entrypoint", json::array({"cat", "data/x"})},
                              {"bind_mounts",
                               {{{"host_path", "/datasets"}, {"container_path", "data"}},
                                {{"host_path", "/srv/models"}, {"container_path", "/models"}}}}});
  scheduler::ClusterSnapshot snap;
  tasks_->AddToSnapshot(&snap);
  ASSERT_TRUE(tasks_->Start(snap.requests[0].id, {{"a1", {0}}}).ok());
  json cmds = Commands(0);
  ASSERT_EQ(cmds.size(), 1u);
  EXPECT_FALSE(cmds[0].contains("container"));
  EXPECT_EQ(cmds[0]["entrypoint"],
            json::array({"/bin/sh", "-c", "ln -sfn '/datasets' 'data' && exec 'cat' 'data/x'"}));
  auto logs = tasks_->Logs(v.row.task_id, 0, 0, false);
  ASSERT_TRUE(logs.ok());
  bool noted = false;
  for (const auto& l : *logs)
    noted = noted || l.log.find("is not mounted at /models") != std::string::npos;
  EXPECT_TRUE(noted);

  // A bad mount fails the launch, naming the field.
  LaunchTaskRequest bad;
  bad.type = TaskType::kCommand;
  bad.config = {{"entrypoint", "true"},
                {"bind_mounts", {{{"host_path", "relative"}, {"container_path", "/x"}}}}};
  Result<TaskView> refused = tasks_->Launch(bad, owner_);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("bind_mounts[0].host_path"), std::string::npos);

  TaskView boxed = LaunchCommand(
      {{"entrypoint", "true"},
       {"environment", {{"image", "localhost/det-test:1"}}},
       {"bind_mounts", {{{"host_path", "/srv/models"}, {"container_path", "/models"}}}}});
  ASSERT_TRUE(tasks_->Kill(v.row.task_id, owner_).ok());
  snap = {};
  tasks_->AddToSnapshot(&snap);
  std::string pending;
  for (const auto& r : snap.requests) {
    if (r.id.find(boxed.row.task_id) != std::string::npos) pending = r.id;
  }
  ASSERT_FALSE(pending.empty());
  ASSERT_TRUE(tasks_->Start(pending, {{"a1", {0}}}).ok());
  cmds = Commands(0);
  ASSERT_FALSE(cmds.empty());
  const json& start = cmds.back();
  ASSERT_EQ(start["type"], "start");
  ASSERT_TRUE(start.contains("container"));
  EXPECT_EQ(start["container"]["image"], "localhost/det-test:1");
  EXPECT_EQ(start["container"]["bindMounts"][0]["containerPath"], "/models");
}

}  // namespace
}  // namespace det::master::server
