// CheckpointService over a real SQLite store in a temp dir, with a fake clock. The GC runner is
// not started: deletions are checked as the persisted requests it would run.
#include "master/server/checkpoint_service.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

// A checkpoint uuid made from a short name ("c1" -> 00000000-0000-4000-8000-000000006331),
// as reported uuids must be uuids.
std::string U(const std::string& name) {
  static const char* kHex = "0123456789abcdef";
  std::string tail;
  for (char ch : name) {
    tail += kHex[(static_cast<unsigned char>(ch) >> 4) & 15];
    tail += kHex[static_cast<unsigned char>(ch) & 15];
  }
  tail = std::string(12 - std::min<size_t>(12, tail.size()), '0') + tail.substr(0, 12);
  return "00000000-0000-4000-8000-" + tail;
}

namespace fs = std::filesystem;
using nlohmann::json;

class CheckpointServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det-checkpoint-service-");
    auto opened = store::SqliteStore::Open((dir_ / "determined.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());
    service_ = std::make_unique<CheckpointService>(store_.get(), &clock_, "/usr/bin/python3", "");
  }
  void TearDown() override {
    service_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  // An experiment with `config` and one trial; returns the trial id.
  int64_t AddTrial(const json& config, const std::string& request_id = "r1") {
    if (experiment_id_ == 0) {
      store::ExperimentRow exp;
      exp.state = "COMPLETED";
      exp.config = config;
      exp.owner_id = 1;
      exp.job_id = "job";
      Result<int64_t> id = store_->InsertExperiment(exp, "");
      EXPECT_TRUE(id.ok()) << id.status().ToString();
      experiment_id_ = id.ok() ? *id : 0;
    }
    store::TrialRow trial;
    trial.experiment_id = experiment_id_;
    trial.request_id = request_id;
    trial.state = "COMPLETED";
    trial.task_id = std::to_string(experiment_id_) + "." + request_id;
    Result<int64_t> id = store_->InsertTrial(trial);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  void Report(int64_t trial_id, const std::string& uuid, int64_t steps,
              const std::string& state = "") {
    store::CheckpointRow row;
    row.uuid = uuid;
    row.trial_id = trial_id;
    row.state = state;
    row.metadata = {{"steps_completed", steps}};
    row.resources = {{"a", 10}, {"b", "5"}};
    Status st = service_->Record(row);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  void Validation(int64_t trial_id, int64_t steps, double loss) {
    store::MetricRow m;
    m.trial_id = trial_id;
    m.trial_run_id = 1;
    m.total_batches = steps;
    m.group = "validation";
    m.metrics = {{"validation_metrics", {{"loss", loss}}}};
    m.report_time = clock_.NowMicros();
    ASSERT_TRUE(store_->AddMetrics(m).ok());
  }

  // The uuids of every pending GC request, in order.
  std::vector<std::vector<std::string>> PendingDeletions() {
    Result<std::vector<store::GcRequestRow>> rows = store_->ListGcRequests();
    EXPECT_TRUE(rows.ok());
    std::vector<std::vector<std::string>> out;
    for (const auto& r : *rows) out.push_back(r.uuids);
    return out;
  }

  fs::path dir_;
  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<CheckpointService> service_;
  int64_t experiment_id_ = 0;
};

TEST_F(CheckpointServiceTest, RecordNormalizesTheReportedRow) {
  int64_t trial = AddTrial(json::object());
  Report(trial, U("c1"), 100, "STATE_COMPLETED");
  Report(trial, U("c2"), 200);
  Result<store::CheckpointRow> c1 = service_->GetCheckpoint(U("c1"));
  ASSERT_TRUE(c1.ok()) << c1.status().ToString();
  EXPECT_EQ(c1->state, "COMPLETED");
  EXPECT_EQ(c1->steps_completed, 100);
  EXPECT_EQ(c1->size, 15);
  EXPECT_EQ(c1->report_time, clock_.NowMicros());
  EXPECT_EQ(service_->GetCheckpoint(U("c2"))->state, "COMPLETED");
}

TEST_F(CheckpointServiceTest, ValidateNamesTheMissingField) {
  store::CheckpointRow row;
  EXPECT_EQ(CheckpointService::Validate(&row).message(), "uuid: required");
  row.uuid = "../x";
  row.metadata = {{"steps_completed", 10}};
  EXPECT_EQ(CheckpointService::Validate(&row).code(), StatusCode::kInvalidArgument);
  row.uuid = U("x");
  row.metadata = {{"steps_completed", "ten"}};
  EXPECT_EQ(CheckpointService::Validate(&row).message(),
            "metadata.steps_completed: required integer");
  row.metadata = {{"steps_completed", 10}};
  ASSERT_TRUE(CheckpointService::Validate(&row).ok());
  EXPECT_EQ(row.steps_completed, 10);
}

TEST_F(CheckpointServiceTest, LatestCompletedSkipsDeletedCheckpoints) {
  int64_t trial = AddTrial(json::object());
  Result<std::optional<store::CheckpointRow>> none = service_->LatestCompleted(trial);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  Report(trial, U("c1"), 100);
  Report(trial, U("c2"), 300);
  Report(trial, U("c3"), 200);
  EXPECT_EQ((*service_->LatestCompleted(trial))->uuid, U("c2"));
  ASSERT_TRUE(service_->PatchCheckpointResources(U("c2"), json::object()).ok());
  EXPECT_EQ(service_->GetCheckpoint(U("c2"))->state, "DELETED");
  EXPECT_EQ((*service_->LatestCompleted(trial))->uuid, U("c3"));
  ASSERT_TRUE(service_->PatchCheckpointResources(U("c3"), {{"a", 4}}).ok());
  EXPECT_EQ(service_->GetCheckpoint(U("c3"))->state, "PARTIALLY_DELETED");
  EXPECT_EQ(service_->GetCheckpoint(U("c3"))->size, 4);
  EXPECT_EQ((*service_->LatestCompleted(trial))->uuid, U("c1"));
}

TEST_F(CheckpointServiceTest, MetadataMustKeepStepsCompleted) {
  int64_t trial = AddTrial(json::object());
  Report(trial, U("c1"), 100);
  EXPECT_FALSE(service_->SetCheckpointMetadata(U("c1"), {{"note", "x"}}).ok());
  EXPECT_FALSE(service_->SetCheckpointMetadata(U("c1"), json::array()).ok());
  Result<json> set = service_->SetCheckpointMetadata(U("c1"), {{"steps_completed", 100}, {"k", 1}});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(service_->GetCheckpoint(U("c1"))->metadata.value("k", 0), 1);
  EXPECT_EQ(service_->SetCheckpointMetadata("nope", {{"steps_completed", 1}}).status().code(),
            StatusCode::kNotFound);
}

TEST_F(CheckpointServiceTest, GcPolicyKeepsTheBestAndLatestOfEachTrial) {
  json config = {{"searcher", {{"metric", "loss"}, {"smaller_is_better", true}}},
                 {"checkpoint_storage",
                  {{"type", "shared_fs"},
                   {"save_experiment_best", 0},
                   {"save_trial_best", 1},
                   {"save_trial_latest", 1}}}};
  int64_t trial = AddTrial(config);
  for (int64_t steps : {100, 200, 300, 400}) {
    Report(trial, U("c" + std::to_string(steps)), steps);
    Validation(trial, steps, steps == 200 ? 0.1 : 1.0);  // the best is at 200
  }
  ASSERT_TRUE(service_->CollectExperimentCheckpoints(experiment_id_).ok());
  std::vector<std::vector<std::string>> pending = PendingDeletions();
  ASSERT_EQ(pending.size(), 1u);
  std::sort(pending[0].begin(), pending[0].end());
  EXPECT_EQ(pending[0], (std::vector<std::string>{U("c100"), U("c300")}));
}

TEST_F(CheckpointServiceTest, DeletionsAreSubmittedPerExperimentAndEmptyListsRefused) {
  int64_t trial = AddTrial({{"checkpoint_storage", {{"type", "shared_fs"}}}});
  Report(trial, U("c1"), 100);
  Report(trial, U("c2"), 200);
  EXPECT_EQ(service_->DeleteCheckpoints({}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(service_->DeleteCheckpoints({U("missing")}).code(), StatusCode::kNotFound);
  EXPECT_EQ(service_->DeleteCheckpoints({"../.."}).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(service_->RemoveCheckpointFiles({U("c1")}, {}).ok());  // no glob: nothing to remove
  EXPECT_TRUE(PendingDeletions().empty());
  ASSERT_TRUE(service_->DeleteCheckpoints({U("c1")}).ok());
  ASSERT_TRUE(service_->PatchCheckpointResources(U("c1"), json::object()).ok());
  ASSERT_TRUE(service_->DeleteExperimentFiles(experiment_id_, json::object()).ok());
  Result<std::vector<store::GcRequestRow>> rows = store_->ListGcRequests();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].uuids, std::vector<std::string>{U("c1")});
  EXPECT_EQ((*rows)[0].storage_config.value("type", ""), "shared_fs");
  EXPECT_FALSE((*rows)[0].delete_experiment);
  // The experiment's deletion skips what is already DELETED.
  EXPECT_EQ((*rows)[1].uuids, std::vector<std::string>{U("c2")});
  EXPECT_TRUE((*rows)[1].delete_experiment);
}

TEST_F(CheckpointServiceTest, ListsRefuseUnknownTrialsAndExperiments) {
  EXPECT_EQ(service_->ListTrialCheckpoints(99).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(service_->ListExperimentCheckpoints(99).status().code(), StatusCode::kNotFound);
  int64_t trial = AddTrial(json::object());
  Report(trial, U("c1"), 100);
  EXPECT_EQ(service_->ListTrialCheckpoints(trial)->size(), 1u);
  EXPECT_EQ(service_->ListExperimentCheckpoints(experiment_id_)->size(), 1u);
}

}  // namespace
}  // namespace det::master::server
