// ExperimentSummaryService against a real SQLite store, with a fake clock.
#include "master/server/experiment_summary_service.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

class ExperimentSummaryServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_summary_service_test_");
    auto opened = store::SqliteStore::Open((dir_ / "det.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());
    store::ExperimentRow e;
    e.state = "COMPLETED";
    e.config = {{"name", "x"}, {"searcher", {{"metric", "loss"}}}};
    e.owner_id = store_->GetUserByName("determined")->id;
    e.job_id = "job-1";
    auto id = store_->InsertExperiment(e, "tgz");
    ASSERT_TRUE(id.ok());
    exp_ = *id;
    store::TrialRow t;
    t.experiment_id = exp_;
    t.request_id = "r";
    t.hparams = nlohmann::json::object();
    t.state = "COMPLETED";
    auto trial = store_->InsertTrial(t);
    ASSERT_TRUE(trial.ok());
    trial_ = *trial;
    store::CheckpointRow c;
    c.uuid = "u";
    c.task_id = "task";
    c.allocation_id = "alloc";
    c.trial_id = trial_;
    c.state = "COMPLETED";
    c.size = 42;
    ASSERT_TRUE(store_->AddCheckpoint(c).ok());
    Validation(10, 0.5);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Validation(int64_t batches, double loss) {
    store::MetricRow m;
    m.trial_id = trial_;
    m.total_batches = batches;
    m.group = "validation";
    m.metrics = {{"validation_metrics", {{"loss", loss}}}};
    ASSERT_TRUE(store_->AddMetrics(m).ok());
  }
  double Best(ExperimentSummaryService& s, std::optional<int64_t> end_time) {
    auto r = s.Summaries({{exp_, end_time}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || !r->contains(exp_) || !r->at(exp_).best_metric) return -1;
    return *r->at(exp_).best_metric;
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::Store> store_;
  FakeClock clock_;
  int64_t exp_ = 0, trial_ = 0;
};

TEST_F(ExperimentSummaryServiceTest, MapsSummariesByExperimentId) {
  ExperimentSummaryService service(store_.get(), &clock_);
  auto r = service.Summaries({{exp_, std::nullopt}, {exp_ + 100, std::nullopt}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  ASSERT_TRUE(r->contains(exp_));
  EXPECT_EQ(r->at(exp_).checkpoint_count, 1);
  EXPECT_EQ(r->at(exp_).checkpoint_size, 42);
  EXPECT_EQ(r->at(exp_).best_trial_id, trial_);
}

TEST_F(ExperimentSummaryServiceTest, RunningExperimentsAreReadEveryTime) {
  ExperimentSummaryService service(store_.get(), &clock_);
  EXPECT_DOUBLE_EQ(Best(service, std::nullopt), 0.5);
  Validation(20, 0.25);
  EXPECT_DOUBLE_EQ(Best(service, std::nullopt), 0.25);
}

TEST_F(ExperimentSummaryServiceTest, FinishedExperimentsAreKeptForAMinute) {
  ExperimentSummaryService service(store_.get(), &clock_);
  EXPECT_DOUBLE_EQ(Best(service, 1000), 0.5);
  Validation(20, 0.25);  // not seen while the kept summary is fresh
  clock_.Advance(ExperimentSummaryService::kMaxAgeMicros - 1);
  EXPECT_DOUBLE_EQ(Best(service, 1000), 0.5);
  clock_.Advance(1);
  EXPECT_DOUBLE_EQ(Best(service, 1000), 0.25);
}

TEST_F(ExperimentSummaryServiceTest, AnotherEndTimeReadsAgain) {
  ExperimentSummaryService service(store_.get(), &clock_);
  EXPECT_DOUBLE_EQ(Best(service, 1000), 0.5);
  Validation(20, 0.25);  // a continued experiment reported more, then finished again
  EXPECT_DOUBLE_EQ(Best(service, 2000), 0.25);
}

}  // namespace
}  // namespace det::master::server
