// UnmanagedService over a real SQLite store in a temp dir, with a fake clock; and a Master over
// the same store, to show that unmanaged experiments are presented as such and never run.
#include "master/server/unmanaged_service.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/test_dir.h"
#include "master/server/master.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kConfig = R"(name: detached
searcher: {name: single, metric: loss}
checkpoint_storage: {type: shared_fs, host_path: /tmp/ckpts}
data: null
labels: null
)";

constexpr int64_t kMinute = 60ll * 1000000;

class UnmanagedServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det-unmanaged-");
    config_.data_dir = dir_.string();
    // kConfig's storage is outside the master's own: the admin allows it.
    config_.checkpoint_storage_allowed_roots = std::vector<std::string>{"/tmp/ckpts"};
    ASSERT_TRUE(FinalizeMasterConfig(&config_).ok());
    store_ = OpenStore();
    ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());
    service_ = NewService();
  }
  void TearDown() override {
    service_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  std::unique_ptr<store::Store> OpenStore() {
    auto opened = store::SqliteStore::Open((dir_ / "determined.db").string());
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return std::move(opened).value();
  }

  std::unique_ptr<UnmanagedService> NewService() {
    UnmanagedService::Options options;
    options.check_interval_ms = 0;  // the tests check for lost trials themselves
    return std::make_unique<UnmanagedService>(store_.get(), &clock_, &config_, options);
  }

  int64_t CreateExperiment(std::optional<std::string> external_id = std::nullopt) {
    UnmanagedService::CreateExperimentRequest req;
    req.config_yaml = kConfig;
    req.external_id = std::move(external_id);
    auto created = service_->CreateExperiment(req, /*owner_id=*/2);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->id.value_or(0) : 0;
  }

  int64_t CreateTrial(int64_t exp, std::optional<std::string> external_id = std::nullopt) {
    UnmanagedService::CreateTrialRequest req;
    req.experiment_id = exp;
    req.hparams = {{"lr", 0.5}};
    req.external_id = std::move(external_id);
    auto id = service_->CreateTrial(req);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  std::string ExperimentState(int64_t id) { return store_->GetExperiment(id)->state; }
  std::string TrialState(int64_t id) { return store_->GetTrial(id)->state; }

  fs::path dir_;
  FakeClock clock_;
  MasterConfig config_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<UnmanagedService> service_;
};

TEST_F(UnmanagedServiceTest, CreatesAPausedExperimentWithoutEntrypointThatIsNeverRestored) {
  int64_t exp = CreateExperiment();
  ASSERT_GT(exp, 0);
  auto row = store_->GetExperiment(exp);
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->state, "PAUSED");
  EXPECT_EQ(row->owner_id, 2);
  EXPECT_TRUE(row->config["entrypoint"].is_null());
  EXPECT_EQ(row->config["searcher"]["metric"], "loss");
  EXPECT_EQ(row->config["checkpoint_storage"]["host_path"], "/tmp/ckpts");
  EXPECT_TRUE(service_->FindExperiment(exp).has_value());
  auto restored = store_->ListNonTerminalExperiments();
  ASSERT_TRUE(restored.ok());
  EXPECT_TRUE(restored->empty()) << "an unmanaged experiment must not be restored by the master";
}

TEST_F(UnmanagedServiceTest, BadConfigIsAnErrorNamingTheField) {
  UnmanagedService::CreateExperimentRequest req;
  req.config_yaml = "name: x\nsearcher: {name: single, metric: loss}\nmax_restarts: many\n";
  auto created = service_->CreateExperiment(req, 2);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(created.status().message().find("max_restarts"), std::string::npos)
      << created.status().message();
}

TEST_F(UnmanagedServiceTest, ValidateOnlyStoresNothing) {
  UnmanagedService::CreateExperimentRequest req;
  req.config_yaml = kConfig;
  req.validate_only = true;
  auto created = service_->CreateExperiment(req, 2);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_FALSE(created->id.has_value());
  EXPECT_EQ(created->config["name"], "detached");
  int64_t total = 0;
  ASSERT_TRUE(store_->ListExperiments(std::nullopt, {}, &total).ok());
  EXPECT_EQ(total, 0);
}

TEST_F(UnmanagedServiceTest, ExternalIdsNameTheSameExperimentAndTrialAgain) {
  int64_t exp = CreateExperiment("ext-1");
  UnmanagedService::CreateExperimentRequest again;
  again.config_yaml = std::string(kConfig) + "description: second run\n";
  again.external_id = "ext-1";
  auto second = service_->CreateExperiment(again, 2);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->id, exp);
  EXPECT_FALSE(second->created);
  EXPECT_EQ(store_->GetExperiment(exp)->config["description"], "second run");
  EXPECT_EQ(service_->FindExperiment(exp)->external_id, "ext-1");

  int64_t trial = CreateTrial(exp, "t-1");
  EXPECT_EQ(CreateTrial(exp, "t-1"), trial);
  EXPECT_EQ(store_->GetTrial(trial)->task_id, std::to_string(exp) + ".t-1");
  EXPECT_NE(CreateTrial(exp), trial);
  EXPECT_EQ(store_->ListTrials(exp)->size(), 2u);
  // A different experiment may use the same external trial id.
  int64_t other = CreateExperiment("ext-2");
  EXPECT_NE(CreateTrial(other, "t-1"), trial);
}

TEST_F(UnmanagedServiceTest, TrialsOnlyOnUnmanagedExperiments) {
  store::ExperimentRow managed;
  managed.state = "ACTIVE";
  managed.config = {{"name", "managed"}};
  managed.owner_id = 1;
  managed.job_id = "j";
  auto mid = store_->InsertExperiment(managed, "");
  ASSERT_TRUE(mid.ok());
  UnmanagedService::CreateTrialRequest req;
  req.experiment_id = *mid;
  auto r = service_->CreateTrial(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  req.experiment_id = 9999;
  EXPECT_EQ(service_->CreateTrial(req).status().code(), StatusCode::kNotFound);

  store::TrialRow t;
  t.experiment_id = *mid;
  t.request_id = "r";
  t.state = "ACTIVE";
  t.task_id = "x.1";
  auto tid = store_->InsertTrial(t);
  ASSERT_TRUE(tid.ok());
  EXPECT_EQ(service_->StartTrial(*tid, true).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(service_->PatchTrial(*tid, "STATE_COMPLETED").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(TrialState(*tid), "ACTIVE");
}

TEST_F(UnmanagedServiceTest, StartRunsTheTrialAndTheExperimentFollows) {
  int64_t exp = CreateExperiment();
  int64_t trial = CreateTrial(exp);
  EXPECT_EQ(TrialState(trial), "PAUSED");
  EXPECT_EQ(ExperimentState(exp), "PAUSED");
  EXPECT_TRUE(service_->IsUnmanagedTrial(trial));
  EXPECT_EQ(service_->TrialOfTask(store_->GetTrial(trial)->task_id), trial);

  auto started = service_->StartTrial(trial, /*resume=*/false);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  EXPECT_EQ(started->trial_run_id, 1);
  EXPECT_FALSE(started->latest_checkpoint.has_value());
  EXPECT_EQ(TrialState(trial), "ACTIVE");
  EXPECT_EQ(ExperimentState(exp), "ACTIVE");

  auto again = service_->StartTrial(trial, /*resume=*/false);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(UnmanagedServiceTest, ResumedRunGetsTheLatestCompletedCheckpoint) {
  int64_t exp = CreateExperiment("e");
  int64_t trial = CreateTrial(exp, "t");
  ASSERT_TRUE(service_->StartTrial(trial, true).ok());
  for (auto [uuid, steps, state] :
       {std::tuple{"c-10", 10, "COMPLETED"}, std::tuple{"c-30", 30, "COMPLETED"},
        std::tuple{"c-40", 40, "DELETED"}}) {
    store::CheckpointRow c;
    c.uuid = uuid;
    c.task_id = store_->GetTrial(trial)->task_id;
    c.trial_id = trial;
    c.state = state;
    c.steps_completed = steps;
    c.metadata = {{"steps_completed", steps}};
    ASSERT_TRUE(store_->AddCheckpoint(c).ok());
  }
  ASSERT_TRUE(service_->PatchTrial(trial, "STATE_COMPLETED").ok());
  auto resumed = service_->StartTrial(trial, true);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(resumed->trial_run_id, 2);
  EXPECT_EQ(resumed->latest_checkpoint, "c-30");
  EXPECT_EQ(resumed->steps_completed, 30);
  EXPECT_EQ(TrialState(trial), "ACTIVE");
  EXPECT_FALSE(store_->GetTrial(trial)->end_time.has_value());
  EXPECT_EQ(ExperimentState(exp), "ACTIVE");
  EXPECT_FALSE(store_->GetExperiment(exp)->end_time.has_value());
}

TEST_F(UnmanagedServiceTest, CompletedOnCloseErrorWhenTheScriptRaises) {
  int64_t ok_exp = CreateExperiment();
  int64_t ok_trial = CreateTrial(ok_exp);
  ASSERT_TRUE(service_->StartTrial(ok_trial, true).ok());
  clock_.Advance(kMinute);
  ASSERT_TRUE(service_->PatchTrial(ok_trial, "STATE_COMPLETED").ok());
  EXPECT_EQ(TrialState(ok_trial), "COMPLETED");
  auto row = store_->GetExperiment(ok_exp);
  EXPECT_EQ(row->state, "COMPLETED");
  EXPECT_EQ(row->progress, 1.0);
  EXPECT_EQ(row->end_time, store_->GetTrial(ok_trial)->end_time);
  EXPECT_EQ(row->end_time, clock_.NowMicros());

  int64_t bad_exp = CreateExperiment();
  int64_t bad_trial = CreateTrial(bad_exp);
  ASSERT_TRUE(service_->StartTrial(bad_trial, true).ok());
  ASSERT_TRUE(service_->PatchTrial(bad_trial, "STATE_ERROR").ok());
  EXPECT_EQ(ExperimentState(bad_exp), "ERROR");
}

TEST_F(UnmanagedServiceTest, BadStatePatchChangesNothing) {
  int64_t exp = CreateExperiment();
  int64_t trial = CreateTrial(exp);
  ASSERT_TRUE(service_->StartTrial(trial, true).ok());
  Status st = service_->PatchTrial(trial, "STATE_STOPPING_KILLED");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("STATE_STOPPING_KILLED"), std::string::npos);
  EXPECT_EQ(TrialState(trial), "ACTIVE");
}

TEST_F(UnmanagedServiceTest, MetricsNeedTheCurrentRun) {
  int64_t exp = CreateExperiment();
  int64_t trial = CreateTrial(exp);
  json metrics = {{"avg_metrics", {{"loss", 0.25}}}};
  EXPECT_EQ(service_->ReportMetrics(trial, 1, 5, "training", metrics).code(),
            StatusCode::kInvalidArgument)
      << "not started: there is no run 1 yet";
  ASSERT_TRUE(service_->StartTrial(trial, true).ok());
  ASSERT_TRUE(service_->ReportMetrics(trial, 1, 5, "training", metrics).ok());
  EXPECT_EQ(service_->ReportMetrics(trial, 1, 5, "a.b", metrics).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(service_->ReportMetrics(trial, 1, -1, "training", metrics).code(),
            StatusCode::kInvalidArgument);
  auto rows = store_->ListMetrics(trial, "training");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].total_batches, 5);
  EXPECT_EQ((*rows)[0].metrics["avg_metrics"]["loss"], 0.25);

  ASSERT_TRUE(service_->ReportProgress(trial, 0.4).ok());
  EXPECT_DOUBLE_EQ(store_->GetExperiment(exp)->progress, 0.4);
  EXPECT_EQ(service_->ReportProgress(trial, -1).code(), StatusCode::kInvalidArgument);
}

TEST_F(UnmanagedServiceTest, ASilentRunningTrialIsLostAfterTheTimeout) {
  int64_t exp = CreateExperiment();
  int64_t trial = CreateTrial(exp);
  int64_t idle = CreateTrial(CreateExperiment());  // never started: never lost
  ASSERT_TRUE(service_->StartTrial(trial, true).ok());
  clock_.Advance(4 * kMinute);
  ASSERT_TRUE(service_->PatchTrial(trial, std::nullopt).ok());  // heartbeat
  int64_t last_heartbeat = clock_.NowMicros();
  clock_.Advance(4 * kMinute);
  auto lost = service_->CheckLostTrials();
  ASSERT_TRUE(lost.ok());
  EXPECT_TRUE(lost->empty()) << "4 minutes since the heartbeat is not lost yet";
  EXPECT_EQ(TrialState(trial), "ACTIVE");

  clock_.Advance(2 * kMinute);
  lost = service_->CheckLostTrials();
  ASSERT_TRUE(lost.ok()) << lost.status().ToString();
  ASSERT_EQ(*lost, std::vector<int64_t>{trial});
  EXPECT_EQ(TrialState(trial), "ERROR");
  EXPECT_EQ(store_->GetTrial(trial)->end_time, last_heartbeat);
  EXPECT_EQ(ExperimentState(exp), "ERROR");
  EXPECT_EQ(TrialState(idle), "PAUSED");
  auto logs = store_->ListTrialLogs(trial, 0, 0, false);
  ASSERT_TRUE(logs.ok());
  ASSERT_FALSE(logs->empty());
  EXPECT_NE(logs->back().log.find("is lost"), std::string::npos) << logs->back().log;

  // A script that was only stalled may still finish its trial.
  ASSERT_TRUE(service_->PatchTrial(trial, "STATE_COMPLETED").ok());
  EXPECT_EQ(ExperimentState(exp), "COMPLETED");
  EXPECT_TRUE(service_->CheckLostTrials()->empty());
}

TEST_F(UnmanagedServiceTest, MarksOutliveTheServiceAndGoWithTheExperiment) {
  int64_t exp = CreateExperiment("keep");
  int64_t trial = CreateTrial(exp);
  std::string task = store_->GetTrial(trial)->task_id;
  service_ = NewService();  // a master restart
  EXPECT_EQ(service_->FindExperiment(exp)->external_id, "keep");
  EXPECT_TRUE(service_->IsUnmanagedTrial(trial));
  EXPECT_EQ(service_->TrialOfTask(task), trial);
  EXPECT_FALSE(service_->TrialOfTask("no.such").has_value());

  ASSERT_TRUE(store_->DeleteExperiment(exp).ok());
  EXPECT_TRUE(store_->ListUnmanagedExperiments()->empty());
  EXPECT_TRUE(store_->ListUnmanagedTrials()->empty());
  // The external id is free again.
  int64_t again = CreateExperiment("keep");
  EXPECT_NE(again, exp);
}

TEST_F(UnmanagedServiceTest, MasterShowsUnmanagedExperimentsAndNeverRunsThem) {
  int64_t exp = CreateExperiment("shown");
  int64_t trial = CreateTrial(exp);
  ASSERT_TRUE(service_->StartTrial(trial, true).ok());
  service_.reset();
  store_.reset();

  // A master over the same store (as after a restart).
  auto master = std::make_unique<Master>(config_, OpenStore(), &clock_);
  ASSERT_TRUE(master->Start().ok());
  auto view = master->experiments()->GetExperiment(exp);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_TRUE(view->unmanaged);
  EXPECT_EQ(view->external_experiment_id, "shown");
  EXPECT_EQ(view->presented_state, "STATE_RUNNING");
  auto tview = master->experiments()->GetTrial(trial);
  ASSERT_TRUE(tview.ok());
  EXPECT_EQ(tview->presented_state, "STATE_RUNNING");
  EXPECT_TRUE(master->allocations()->ListJobs().empty())
      << "an unmanaged experiment is no job to schedule";
  EXPECT_TRUE(master->allocations()->ListAllocations().empty());

  ASSERT_TRUE(master->unmanaged()->PatchTrial(trial, "STATE_COMPLETED").ok());
  EXPECT_EQ(master->experiments()->GetExperiment(exp)->presented_state, "STATE_COMPLETED");
  master->Stop();
}

}  // namespace
}  // namespace det::master::server
