// The shared Store suite: every backend must pass it. Runs against SQLite always.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "common/test_dir.h"
#include "master/store/decision_writes.h"
#include "master/store/session_token.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/store_backends.h"

namespace det::master::store {
namespace {

class StoreSuite : public ::testing::TestWithParam<store_test::Backend> {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_store_test_");
    loc_ = std::make_unique<store_test::TestStoreLocation>(GetParam(), dir_);
    DET_CREATE_STORE_LOCATION_OR_SKIP(*loc_);
    auto s = loc_->Open();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<Store> Reopen() {
    store_.reset();
    auto s = loc_->Open();
    EXPECT_TRUE(s.ok());
    return std::move(s).value();
  }

  int64_t MakeExperimentAndTrial(int64_t* trial_id) {
    EXPECT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());
    ExperimentRow e;
    e.state = "PAUSED";
    e.config = {{"name", "x"}};
    e.original_config = "name: x";
    e.owner_id = 1;
    e.job_id = "job";
    e.start_time = 5;
    auto id = store_->InsertExperiment(e, "tgz-bytes");
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    TrialRow t;
    t.experiment_id = *id;
    t.request_id = "req-1";
    t.hparams = {{"lr", 0.1}};
    t.state = "ACTIVE";
    t.task_id = "1.1";
    t.warm_start_checkpoint_uuid = "parent-ckpt";
    auto tid = store_->InsertTrial(t);
    EXPECT_TRUE(tid.ok());
    *trial_id = *tid;
    return *id;
  }

  std::filesystem::path dir_;
  std::unique_ptr<store_test::TestStoreLocation> loc_;
  std::unique_ptr<Store> store_;
};

// Webhooks keep their triggers; the delivery queue hands out what is due, oldest first, takes a
// TASK_LOG delivery once per task and trigger, and queues with a decision or not at all.
TEST_P(StoreSuite, WebhooksAndTheirDeliveryQueue) {
  WebhookRow w;
  w.name = "alerts";
  w.url = "http://127.0.0.1:9/x";
  w.webhook_type = "SLACK";
  w.mode = "SPECIFIC";
  w.workspace_id = 1;
  w.triggers = {{0, 0, "TASK_LOG", {{"regex", "boom"}}}, {0, 0, "CUSTOM", nlohmann::json::object()}};
  auto stored = store_->InsertWebhook(w);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  ASSERT_GT(stored->id, 0);
  ASSERT_EQ(stored->triggers.size(), 2u);
  EXPECT_GT(stored->triggers[1].id, stored->triggers[0].id);
  store_ = Reopen();
  auto listed = store_->ListWebhooks();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].workspace_id, std::optional<int64_t>(1));
  EXPECT_EQ((*listed)[0].triggers[0].condition, nlohmann::json({{"regex", "boom"}}));
  ASSERT_TRUE(store_->UpdateWebhookUrl(stored->id, "http://127.0.0.1:9/y").ok());
  EXPECT_EQ(store_->UpdateWebhookUrl(stored->id + 100, "http://z").code(), StatusCode::kNotFound);

  WebhookEventRow a{0, "http://127.0.0.1:9/a", "{}", 0, 10, "task-1", stored->triggers[0].id};
  WebhookEventRow b{0, "http://127.0.0.1:9/b", "{}", 0, 5, "", 0};
  auto queued = store_->EnqueueWebhookEvents({a, b, a});
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  EXPECT_EQ(*queued, 2);  // the repeat of a's task and trigger is skipped
  EXPECT_EQ(*store_->EnqueueWebhookEvents({a}), 0);
  auto due = store_->DueWebhookEvents(/*now=*/7, 10);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ((*due)[0].url, "http://127.0.0.1:9/b");
  due = store_->DueWebhookEvents(100, 10);
  ASSERT_EQ(due->size(), 2u);
  EXPECT_EQ((*due)[0].url, "http://127.0.0.1:9/b");  // oldest due first
  ASSERT_TRUE(store_->RescheduleWebhookEvent((*due)[0].id, 1, 500).ok());
  ASSERT_TRUE(store_->DeleteWebhookEvent((*due)[1].id).ok());
  due = store_->DueWebhookEvents(100, 10);
  EXPECT_TRUE(due->empty());
  due = store_->DueWebhookEvents(500, 10);
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ((*due)[0].attempts, 1);

  // With a decision: a failed decision queues nothing.
  DecisionWrites bad;
  bad.trials.push_back({999999, std::string("ACTIVE"), 0, 0, std::nullopt});
  bad.webhook_events.push_back({0, "http://127.0.0.1:9/c", "{}", 0, 0, "", 0});
  EXPECT_FALSE(store_->ApplyDecision(bad).ok());
  EXPECT_EQ(store_->DueWebhookEvents(1000, 10)->size(), 1u);
  DecisionWrites good;
  good.webhook_events.push_back({0, "http://127.0.0.1:9/c", "{}", 0, 0, "", 0});
  ASSERT_TRUE(store_->ApplyDecision(good).ok());
  EXPECT_EQ(store_->DueWebhookEvents(1000, 10)->size(), 2u);

  ASSERT_TRUE(store_->DeleteWebhook(stored->id).ok());
  EXPECT_TRUE(store_->ListWebhooks()->empty());
  EXPECT_EQ(store_->DeleteWebhook(stored->id).code(), StatusCode::kNotFound);
  // Its task-log marks went with it: the same task may be reported to a new trigger id anew.
}

// Ensures built-in users are created once with blank passwords and sessions resolve.
TEST_P(StoreSuite, BuiltinUsersAndSessions) {
  auto fresh = store_->EnsureBuiltinUsers(std::nullopt);
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(*fresh);
  EXPECT_FALSE(*store_->EnsureBuiltinUsers(std::nullopt));
  auto admin = store_->GetUserByName("admin");
  ASSERT_TRUE(admin.ok());
  EXPECT_TRUE(admin->admin);
  EXPECT_FALSE(admin->password_hash.has_value());
  ASSERT_TRUE(store_->CreateSession("tok", admin->id, 100).ok());
  EXPECT_EQ(*store_->LookupSession("tok", 50), admin->id);
  EXPECT_FALSE(store_->LookupSession("tok", 150).ok());
  ASSERT_TRUE(store_->RevokeSession("tok").ok());
  EXPECT_FALSE(store_->LookupSession("tok", 50).ok());
  EXPECT_EQ(store_->GetUserByName("nobody").status().code(), StatusCode::kNotFound);
  auto users = store_->ListUsers();
  ASSERT_TRUE(users.ok());
  ASSERT_EQ(users->size(), 2u);
  EXPECT_EQ((*users)[0].username, "admin");
  EXPECT_EQ((*users)[1].username, "determined");
}

// Ensures experiments and trials survive reopening the database and list with pagination.
TEST_P(StoreSuite, ExperimentsPersistAcrossReopen) {
  int64_t trial_id = 0;
  int64_t id = MakeExperimentAndTrial(&trial_id);
  ASSERT_TRUE(store_->UpdateExperimentState(id, "ACTIVE", std::nullopt).ok());
  store_ = Reopen();
  auto e = store_->GetExperiment(id);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->state, "ACTIVE");
  EXPECT_EQ(e->config["name"], "x");
  EXPECT_EQ(*store_->GetModelDefinition(id), "tgz-bytes");
  auto trials = store_->ListTrials(id);
  ASSERT_TRUE(trials.ok());
  ASSERT_EQ(trials->size(), 1u);
  EXPECT_EQ((*trials)[0].hparams["lr"], 0.1);
  EXPECT_EQ((*trials)[0].warm_start_checkpoint_uuid, "parent-ckpt");
  int64_t total = 0;
  auto page = store_->ListExperiments(std::nullopt, Page{1, 10}, &total);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(total, 1);
  EXPECT_TRUE(page->empty());
  EXPECT_EQ(store_->GetExperiment(999).status().code(), StatusCode::kNotFound);
}

// Ensures a retried metric report is stored once and a later run archives rolled-back steps.
TEST_P(StoreSuite, MetricsDedupAndRollback) {
  int64_t trial_id = 0;
  MakeExperimentAndTrial(&trial_id);
  MetricRow m;
  m.trial_id = trial_id;
  m.trial_run_id = 1;
  m.group = "training";
  for (int step : {1, 2, 3}) {
    m.total_batches = step;
    m.metrics = {{"avg_metrics", {{"loss", step}}}};
    ASSERT_TRUE(store_->AddMetrics(m).ok());
  }
  ASSERT_TRUE(store_->AddMetrics(m).ok());  // retry of step 3
  EXPECT_EQ(store_->ListMetrics(trial_id, "training")->size(), 3u);
  m.trial_run_id = 2;
  m.total_batches = 2;
  m.metrics = {{"avg_metrics", {{"loss", 20}}}};
  ASSERT_TRUE(store_->AddMetrics(m).ok());
  auto rows = store_->ListMetrics(trial_id, "training");
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].metrics["avg_metrics"]["loss"], 20);
}

// Ensures concurrent reports (group-committed) are all stored once and raise total_batches.
TEST_P(StoreSuite, ConcurrentMetricReportsAllCommit) {
  int64_t trial_id = 0;
  MakeExperimentAndTrial(&trial_id);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 1; k <= 50; ++k) {
        MetricRow m;
        m.trial_id = trial_id;
        m.trial_run_id = 1;
        m.group = "training";
        m.total_batches = t * 50 + k;
        m.metrics = {{"avg_metrics", {{"loss", k}}}};
        if (!store_->AddMetrics(m).ok()) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(store_->ListMetrics(trial_id, "training")->size(), 400u);
  EXPECT_EQ(store_->GetTrial(trial_id)->total_batches, 400);
  MetricRow bad;
  bad.trial_id = 999999;  // no such trial: fails alone, without harming other writes
  bad.trial_run_id = 1;
  bad.group = "training";
  bad.metrics = nlohmann::json::object();
  EXPECT_FALSE(store_->AddMetrics(bad).ok());
}

// Ensures deleting an experiment removes it and everything recorded under it, and only it.
TEST_P(StoreSuite, DeleteExperimentRemovesEverythingUnderIt) {
  int64_t trial_id = 0;
  int64_t exp_id = MakeExperimentAndTrial(&trial_id);
  int64_t other_trial = 0;
  int64_t other_exp = MakeExperimentAndTrial(&other_trial);
  MetricRow m;
  m.trial_id = trial_id;
  m.trial_run_id = 1;
  m.group = "training";
  m.metrics = nlohmann::json::object();
  ASSERT_TRUE(store_->AddMetrics(m).ok());
  CheckpointRow c;
  c.uuid = "gone";
  c.trial_id = trial_id;
  c.state = "DELETED";
  ASSERT_TRUE(store_->AddCheckpoint(c).ok());
  // A trial of another experiment that used this experiment's checkpoint, and the reverse.
  TrialSourceInfoRow link;
  link.trial_id = other_trial;
  link.checkpoint_uuid = "gone";
  link.source_type = "TRIAL_SOURCE_INFO_TYPE_INFERENCE";
  ASSERT_TRUE(store_->AddTrialSourceInfo(link).ok());
  link.trial_id = trial_id;
  link.checkpoint_uuid = "kept";
  ASSERT_TRUE(store_->AddTrialSourceInfo(link).ok());
  ASSERT_TRUE(store_->WriteExperimentSnapshotText(exp_id, R"({"searcher":1})").ok());
  ASSERT_TRUE(store_->WriteExperimentSnapshotText(other_exp, R"({"searcher":2})").ok());
  ASSERT_TRUE(store_->DeleteExperiment(exp_id).ok());
  // Its model definition and snapshot, in tables of their own, go with it.
  EXPECT_EQ(store_->GetModelDefinition(exp_id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->GetExperimentSnapshotText(exp_id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*store_->GetModelDefinition(other_exp), "tgz-bytes");
  EXPECT_EQ(*store_->GetExperimentSnapshotText(other_exp), R"({"searcher":2})");
  // A snapshot written after the deletion (a writer that lagged) adds nothing.
  ASSERT_TRUE(store_->WriteExperimentSnapshotText(exp_id, R"({"searcher":3})").ok());
  EXPECT_EQ(store_->GetExperimentSnapshotText(exp_id).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->ListTrialSourceInfos("gone", "")->empty());
  EXPECT_TRUE(store_->ListTrialSourceInfos("kept", "")->empty());
  EXPECT_EQ(store_->GetExperiment(exp_id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->GetTrial(trial_id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->GetCheckpoint("gone").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->GetExperiment(other_exp).ok());
  EXPECT_TRUE(store_->GetTrial(other_trial).ok());
}

// An allocation's usage record is written with the allocation (in a decision, and again at its
// end), a task's with the task, and both outlive the experiment; the period filter counts a
// running allocation until now.
TEST_P(StoreSuite, AllocationUsageOutlivesItsExperiment) {
  int64_t trial_id = 0;
  int64_t exp_id = MakeExperimentAndTrial(&trial_id);
  AllocationRow a;
  a.allocation_id = "1.1.1";
  a.task_id = "1.1";
  a.trial_id = trial_id;
  a.state = "ASSIGNED";
  a.token = "digest-usage";
  a.slots = 2;
  a.start_time = 100;
  a.resource_pool = "default";
  DecisionWrites w;
  w.allocations = {a};
  ASSERT_TRUE(store_->ApplyDecision(w).ok());
  a.end_time = 500;
  a.state = "TERMINATED";
  ASSERT_TRUE(store_->UpsertAllocation(a).ok());
  GenericTaskRow t;
  t.task_id = "cmd";
  t.task_type = "COMMAND";
  t.owner_id = 1;
  t.username = "bob";
  t.config = {{"resources", {{"resource_pool", "aux"}}}};
  t.state = "STATE_QUEUED";
  t.job_id = "job-cmd";
  t.registered_time = 250;
  ASSERT_TRUE(store_->UpsertGenericTask(t).ok());
  t.allocation_id = "cmd.1";
  t.slot_ids = {0};
  t.start_time = 300;
  t.state = "STATE_RUNNING";
  ASSERT_TRUE(store_->UpsertGenericTask(t).ok());

  auto rows = store_->ListAllocationUsage(0, 1000, 2000, 10);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);  // a queued task has no record yet
  const AllocationUsageRow& trial = (*rows)[0];
  EXPECT_EQ(trial.allocation_id, "1.1.1");
  EXPECT_EQ(trial.task_type, "TRIAL");
  EXPECT_EQ(trial.experiment_id, exp_id);
  EXPECT_EQ(trial.workspace_name, "Uncategorized");
  EXPECT_FALSE(trial.username.empty());
  EXPECT_EQ(trial.slots, 2);
  EXPECT_EQ(trial.resource_pool, "default");
  EXPECT_EQ(trial.end_time, 500);
  const AllocationUsageRow& task = (*rows)[1];
  EXPECT_EQ(task.task_type, "COMMAND");
  EXPECT_EQ(task.username, "bob");
  EXPECT_FALSE(task.experiment_id.has_value());
  EXPECT_EQ(task.resource_pool, "aux");
  EXPECT_EQ(task.slots, 1);
  EXPECT_FALSE(task.end_time.has_value());

  ASSERT_TRUE(store_->DeleteExperiment(exp_id).ok());
  rows = store_->ListAllocationUsage(0, 1000, 2000, 10);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].experiment_id, exp_id);
  EXPECT_EQ((*rows)[0].workspace_name, "Uncategorized");
  // Periods: after the trial ended only the running task; before both started, nothing.
  rows = store_->ListAllocationUsage(600, 700, 2000, 10);
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].allocation_id, "cmd.1");
  EXPECT_TRUE(store_->ListAllocationUsage(0, 50, 2000, 10)->empty());
  EXPECT_EQ(store_->ListAllocationUsage(0, 1000, 2000, 1)->size(), 1u);
}

// Web UI settings: one value per key and storage path, an empty value deletes, a write that
// would pass the limit changes nothing, and each user has their own.
TEST_P(StoreSuite, UserWebSettings) {
  ASSERT_TRUE(store_->SetUserWebSettings(1, {{"b", "p", "2"}, {"a", "", "1"}}, 10).ok());
  ASSERT_TRUE(store_->SetUserWebSettings(2, {{"a", "", "other"}}, 10).ok());
  auto rows = store_->ListUserWebSettings(1);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].key, "a");
  EXPECT_EQ((*rows)[1].storage_path, "p");
  ASSERT_TRUE(store_->SetUserWebSettings(1, {{"a", "", "3"}, {"b", "p", ""}}, 10).ok());
  rows = store_->ListUserWebSettings(1);
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].value, "3");
  Status full = store_->SetUserWebSettings(1, {{"x", "", "1"}, {"y", "", "1"}}, 2);
  EXPECT_EQ(full.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ListUserWebSettings(1)->size(), 1u);
  ASSERT_TRUE(store_->ResetUserWebSettings(1).ok());
  EXPECT_TRUE(store_->ListUserWebSettings(1)->empty());
  EXPECT_EQ((*store_->ListUserWebSettings(2))[0].value, "other");
}

// Pool bindings: add, remove and replace change nothing on an error; a workspace's default
// pools are kept with it; deleting a workspace deletes its bindings.
TEST_P(StoreSuite, PoolBindingsAndWorkspaceDefaultPools) {
  WorkspaceRow w;
  w.name = "a";
  w.default_compute_pool = "gpu";
  w.checkpoint_storage = {{"type", "shared_fs"}, {"host_path", "/w"}};
  auto a = store_->InsertWorkspace(w);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  w.name = "b";
  w.default_compute_pool = "";
  w.checkpoint_storage = nullptr;
  auto b = store_->InsertWorkspace(w);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(store_->ChangePoolBindings("gpu", {*a, *b}, {}, false).ok());
  using Rows = std::vector<PoolBindingRow>;
  EXPECT_EQ(*store_->ListPoolBindings(), (Rows{{"gpu", *a}, {"gpu", *b}}));
  // A second binding of a, with a new one: AlreadyExists, nothing added.
  ASSERT_TRUE(store_->ChangePoolBindings("cpu", {*b}, {}, false).ok());
  EXPECT_EQ(store_->ChangePoolBindings("gpu", {9, *a}, {}, false).code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->ListPoolBindings()->size(), 3u);
  EXPECT_EQ(store_->ChangePoolBindings("gpu", {}, {*b, 9}, false).code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->ListPoolBindings()->size(), 3u);
  ASSERT_TRUE(store_->ChangePoolBindings("gpu", {*b}, {}, true).ok());
  EXPECT_EQ(*store_->ListPoolBindings(), (Rows{{"cpu", *b}, {"gpu", *b}}));
  ASSERT_TRUE(store_->ChangePoolBindings("cpu", {}, {*b}, false).ok());
  auto ws = store_->ListWorkspaces();
  ASSERT_TRUE(ws.ok());
  bool seen = false;
  for (WorkspaceRow& row : *ws) {
    if (row.id != *a) continue;
    seen = true;
    EXPECT_EQ(row.default_compute_pool, "gpu");
    EXPECT_EQ(row.checkpoint_storage["host_path"], "/w");
    row.default_aux_pool = "aux";
    ASSERT_TRUE(store_->UpdateWorkspace(row).ok());
  }
  ASSERT_TRUE(seen);
  ws = store_->ListWorkspaces();
  ASSERT_TRUE(ws.ok());
  for (const WorkspaceRow& row : *ws) {
    if (row.id == *a) {
      EXPECT_EQ(row.default_aux_pool, "aux");
    }
  }
  ASSERT_TRUE(store_->DeleteWorkspace(*b).ok());
  EXPECT_TRUE(store_->ListPoolBindings()->empty());
}

// The searcher snapshot lives apart from the experiment's row: state and progress writes keep
// it, a new snapshot replaces it, and the restore's listing returns it ("{}" before the first).
TEST_P(StoreSuite, AnExperimentsSnapshotIsKeptApartFromItsRow) {
  int64_t trial_id = 0;
  int64_t id = MakeExperimentAndTrial(&trial_id);
  EXPECT_EQ(*store_->GetExperimentSnapshotText(id), "{}");
  ASSERT_TRUE(store_->WriteExperimentSnapshotText(id, R"({"searcher":"a"})").ok());
  DecisionWrites w;
  w.experiment_state = ExperimentStateWrite{id, "ACTIVE", std::nullopt};
  w.experiment_progress = ExperimentProgressWrite{id, 0.5};
  ASSERT_TRUE(store_->ApplyDecision(w).ok());
  EXPECT_EQ(*store_->GetExperimentSnapshotText(id), R"({"searcher":"a"})");
  ASSERT_TRUE(store_->WriteExperimentSnapshotText(id, R"({"searcher":"b"})").ok());
  store_ = Reopen();
  auto live = store_->ListNonTerminalExperiments();
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].state, "ACTIVE");
  EXPECT_DOUBLE_EQ((*live)[0].progress, 0.5);
  EXPECT_EQ((*live)[0].snapshot, nlohmann::json({{"searcher", "b"}}));
  EXPECT_EQ(*store_->GetModelDefinition(id), "tgz-bytes");
}

// Ensures trial-to-checkpoint links are stored once, filter by type, and survive a reopen.
TEST_P(StoreSuite, TrialSourceInfos) {
  int64_t trial_id = 0;
  MakeExperimentAndTrial(&trial_id);
  TrialSourceInfoRow row;
  row.trial_id = trial_id;
  row.checkpoint_uuid = "u1";
  row.source_type = "TRIAL_SOURCE_INFO_TYPE_INFERENCE";
  row.model_id = 3;
  ASSERT_TRUE(store_->AddTrialSourceInfo(row).ok());
  ASSERT_TRUE(store_->AddTrialSourceInfo(row).ok());
  store_ = Reopen();
  auto all = store_->ListTrialSourceInfos("u1", "");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].trial_id, trial_id);
  EXPECT_EQ((*all)[0].model_id, std::optional<int64_t>(3));
  EXPECT_FALSE((*all)[0].model_version.has_value());
  EXPECT_EQ(store_->ListTrialSourceInfos("u1", "TRIAL_SOURCE_INFO_TYPE_INFERENCE")->size(), 1u);
  EXPECT_TRUE(store_->ListTrialSourceInfos("u1", "TRIAL_SOURCE_INFO_TYPE_FINE_TUNING")->empty());
  EXPECT_TRUE(store_->ListTrialSourceInfos("u2", "")->empty());
}

TEST_P(StoreSuite, CheckpointsAndLogs) {
  int64_t trial_id = 0;
  int64_t exp_id = MakeExperimentAndTrial(&trial_id);
  CheckpointRow c;
  c.uuid = "u1";
  c.trial_id = trial_id;
  c.state = "COMPLETED";
  c.steps_completed = 10;
  c.metadata = {{"steps_completed", 10}};
  ASSERT_TRUE(store_->AddCheckpoint(c).ok());
  EXPECT_EQ(store_->GetCheckpoint("u1")->steps_completed, 10);
  EXPECT_EQ(store_->ListCheckpointsForExperiment(exp_id)->size(), 1u);
  std::vector<TaskLogRow> logs(3);
  for (int i = 0; i < 3; ++i) {
    logs[i].trial_id = trial_id;
    logs[i].task_id = "1.1";
    logs[i].log = "line " + std::to_string(i) + "\n";
  }
  ASSERT_TRUE(store_->AddTaskLogs(logs).ok());
  auto all = store_->ListTrialLogs(trial_id, 0, 0, false);
  ASSERT_EQ(all->size(), 3u);
  auto after = store_->ListTrialLogs(trial_id, (*all)[0].id, 0, false);
  EXPECT_EQ(after->size(), 2u);
  auto tail = store_->ListTrialLogs(trial_id, 0, 1, true);
  EXPECT_EQ((*tail)[0].log, "line 2\n");
}

// The model registry: unique case-sensitive names, version numbers counted per model (max + 1),
// versions found by checkpoint, and a model's delete taking its versions along.
TEST_P(StoreSuite, ModelRegistry) {
  ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());
  ModelRow m;
  m.name = "mnist";
  m.labels = {"a", "b"};
  m.metadata = {{"k", 1}};
  m.user_id = 1;
  m.creation_time = m.last_updated_time = 7;
  auto created = store_->InsertModel(m);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_GT(created->id, 0);
  EXPECT_EQ(created->labels, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(created->metadata["k"], 1);
  EXPECT_EQ(created->num_versions, 0);
  EXPECT_EQ(store_->InsertModel(m).status().code(), StatusCode::kAlreadyExists);
  m.name = "MNIST";
  ASSERT_TRUE(store_->InsertModel(m).ok());

  ModelVersionRow v;
  v.model_id = created->id;
  v.checkpoint_uuid = "c1";
  v.user_id = 1;
  auto v1 = store_->InsertModelVersion(v);
  auto v2 = store_->InsertModelVersion(v);
  ASSERT_TRUE(v1.ok() && v2.ok());
  EXPECT_EQ(v1->version, 1);
  EXPECT_EQ(v2->version, 2);
  EXPECT_EQ(store_->GetModelByName("mnist")->num_versions, 2);
  ASSERT_TRUE(store_->DeleteModelVersion(v2->id).ok());
  EXPECT_EQ(store_->InsertModelVersion(v)->version, 2);  // max + 1, as Determined numbers

  auto found = store_->ListModelVersionsForCheckpoints({"c1", "nope"});
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->size(), 2u);

  ModelRow renamed = *store_->GetModelById(created->id);
  renamed.name = "MNIST";
  EXPECT_EQ(store_->UpdateModel(renamed).code(), StatusCode::kAlreadyExists);
  renamed.name = "digits";
  renamed.archived = true;
  ASSERT_TRUE(store_->UpdateModel(renamed).ok());
  EXPECT_TRUE(store_->GetModelByName("digits")->archived);

  store_ = Reopen();
  EXPECT_EQ(store_->ListModels()->size(), 2u);
  ASSERT_TRUE(store_->DeleteModel(created->id).ok());
  EXPECT_EQ(store_->GetModelById(created->id).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->ListModelVersionsForCheckpoints({"c1"})->empty());
  EXPECT_EQ(store_->DeleteModel(created->id).code(), StatusCode::kNotFound);
}

// Allocation tokens are stored as their digest: the token finds its allocation, the digest
// (what a copy of the database holds) finds nothing, and an upsert may give a row a new token.
// Migration 0024 hashes the rows of an earlier version in place, on either backend.
TEST_P(StoreSuite, AllocationTokensAreStoredAsDigests) {
  int64_t trial_id = 0;
  MakeExperimentAndTrial(&trial_id);
  AllocationRow a;
  a.allocation_id = "1.1.1";
  a.task_id = "1.1";
  a.trial_id = trial_id;
  a.state = "PENDING";
  a.token = "old-token";  // as an earlier version wrote it
  ASSERT_TRUE(store_->UpsertAllocation(a).ok());
  GenericTaskRow t;
  t.task_id = "cmd-1";
  t.task_type = "COMMAND";
  t.owner_id = 1;
  t.state = "STATE_RUNNING";
  t.job_id = "job-cmd";
  t.allocation_id = "cmd-1.1";
  t.allocation_token = "old-task-token";
  t.workspace_id = 3;
  ASSERT_TRUE(store_->UpsertGenericTask(t).ok());
  {
    auto db = loc_->OpenDb();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_TRUE((*db)->Exec("DELETE FROM schema_migrations WHERE version = 24").ok());
  }
  store_ = Reopen();  // applies 0024 again
  auto found = store_->GetAllocationByToken("old-token");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->allocation_id, a.allocation_id);
  EXPECT_EQ(found->token, AllocationTokenDigest("old-token"));
  EXPECT_FALSE(store_->GetAllocationByToken(found->token).ok());
  auto tasks = store_->ListGenericTasks();
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 1u);
  EXPECT_EQ((*tasks)[0].allocation_token, AllocationTokenDigest("old-task-token"));
  EXPECT_EQ((*tasks)[0].workspace_id, 3);  // the workspace it was launched in (0029)

  // A restored pending allocation started with a new token.
  a.token = AllocationTokenDigest("new-token");
  a.state = "ASSIGNED";
  ASSERT_TRUE(store_->UpsertAllocation(a).ok());
  EXPECT_FALSE(store_->GetAllocationByToken("old-token").ok());
  found = store_->GetAllocationByToken("new-token");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->state, "ASSIGNED");
}

DET_STORE_BACKENDS(StoreSuite);

}  // namespace
}  // namespace det::master::store
