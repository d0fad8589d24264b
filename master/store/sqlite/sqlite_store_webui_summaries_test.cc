// ListExperimentSummaries against a real SQLite store: checkpoint count and size, and the best
// validation value of the searcher metric in either direction.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/store_backends.h"

namespace det::master::store {
namespace {

class ExperimentSummariesTest : public store_test::StoreTest {
 protected:
  ExperimentSummariesTest() : StoreTest("det_store_summaries_test_") {}
  int64_t Experiment(nlohmann::json searcher) {
    ExperimentRow e;
    e.state = "ACTIVE";
    e.config = {{"name", "x"}, {"searcher", searcher}};
    e.owner_id = store_->GetUserByName("determined")->id;
    e.job_id = "job-" + std::to_string(++n_);
    auto id = store_->InsertExperiment(e, "tgz");
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return *id;
  }
  int64_t Trial(int64_t experiment_id) {
    TrialRow t;
    t.experiment_id = experiment_id;
    t.request_id = "r" + std::to_string(++n_);
    t.hparams = nlohmann::json::object();
    t.state = "ACTIVE";
    auto id = store_->InsertTrial(t);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return *id;
  }
  void Validation(int64_t trial_id, int64_t batches, nlohmann::json values,
                  const char* key = "validation_metrics") {
    MetricRow m;
    m.trial_id = trial_id;
    m.total_batches = batches;
    m.group = "validation";
    m.metrics = {{key, values}};
    ASSERT_TRUE(store_->AddMetrics(m).ok());
  }
  void Checkpoint(int64_t trial_id, const std::string& uuid, const std::string& state,
                  int64_t size) {
    CheckpointRow c;
    c.uuid = uuid;
    c.task_id = "task";
    c.allocation_id = "alloc";
    c.trial_id = trial_id;
    c.state = state;
    c.size = size;
    ASSERT_TRUE(store_->AddCheckpoint(c).ok());
  }

  int n_ = 0;
};

TEST_P(ExperimentSummariesTest, BestValidationFollowsTheSearcherDirection) {
  int64_t smaller = Experiment({{"metric", "loss"}, {"smaller_is_better", true}});
  int64_t larger = Experiment({{"metric", "val.acc"}, {"smaller_is_better", false}});
  int64_t t1 = Trial(smaller), t2 = Trial(smaller), t3 = Trial(larger), t4 = Trial(larger);
  Validation(t1, 10, {{"loss", 0.5}});
  Validation(t1, 20, {{"loss", 0.4}});
  Validation(t2, 10, {{"loss", 0.3}});
  Validation(t2, 20, {{"loss", 0.7}});
  // A dotted metric name is one key; an older report shape uses avg_metrics.
  Validation(t3, 10, {{"val.acc", 0.8}});
  Validation(t4, 10, {{"val.acc", 0.9}}, "avg_metrics");
  Validation(t4, 20, {{"other", 5.0}});

  auto r = store_->ListExperimentSummaries({larger, smaller, 999});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);  // by id; 999 names no experiment
  EXPECT_EQ((*r)[0].experiment_id, smaller);
  ASSERT_TRUE((*r)[0].best_metric.has_value());
  EXPECT_DOUBLE_EQ(*(*r)[0].best_metric, 0.3);
  EXPECT_EQ((*r)[0].best_trial_id, t2);
  EXPECT_EQ((*r)[1].experiment_id, larger);
  ASSERT_TRUE((*r)[1].best_metric.has_value());
  EXPECT_DOUBLE_EQ(*(*r)[1].best_metric, 0.9);
  EXPECT_EQ((*r)[1].best_trial_id, t4);
}

TEST_P(ExperimentSummariesTest, NoValidationLeavesBestEmpty) {
  int64_t e = Experiment({{"metric", "loss"}});
  Trial(e);
  auto r = store_->ListExperimentSummaries({e});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_FALSE((*r)[0].best_metric.has_value());
  EXPECT_FALSE((*r)[0].best_trial_id.has_value());
  EXPECT_EQ((*r)[0].checkpoint_count, 0);
}

TEST_P(ExperimentSummariesTest, CountsCompletedCheckpointsOnly) {
  int64_t e = Experiment({{"metric", "loss"}});
  int64_t other = Experiment({{"metric", "loss"}});
  int64_t t1 = Trial(e), t2 = Trial(e), t3 = Trial(other);
  Checkpoint(t1, "a", "COMPLETED", 100);
  Checkpoint(t2, "b", "COMPLETED", 50);
  Checkpoint(t2, "c", "DELETED", 1000);
  Checkpoint(t3, "d", "COMPLETED", 7);
  auto r = store_->ListExperimentSummaries({e});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].checkpoint_count, 2);
  EXPECT_EQ((*r)[0].checkpoint_size, 150);
}

TEST_P(ExperimentSummariesTest, EmptyIdsReadNothing) {
  auto r = store_->ListExperimentSummaries({});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

DET_STORE_BACKENDS(ExperimentSummariesTest);

}  // namespace
}  // namespace det::master::store
