// Store: the profiler's system metrics, against a real SQLite store in a temp dir.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/store_backends.h"
#include "master/store/test_rows.h"

namespace det::master::store {
namespace {

class SystemMetricsStore : public store_test::StoreTest {
 protected:
  SystemMetricsStore() : StoreTest("det_store_profiler_test_") {}
  void SetUp() override {
    StoreTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto id = store_test::InsertTestExperiment(store_.get());
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    experiment_id_ = *id;
    auto tid = store_test::InsertTestTrial(store_.get(), *id);
    ASSERT_TRUE(tid.ok());
    trial_id_ = *tid;
  }
  SystemMetricRow Row(const std::string& group, const std::string& agent, double v, int64_t t) {
    SystemMetricRow r;
    r.trial_id = trial_id_;
    r.trial_run_id = 1;
    r.group = group;
    r.agent_id = agent;
    r.metrics = {{"cpu_util_simple", v}};
    r.end_time = t;
    return r;
  }

  int64_t experiment_id_ = 0;
  int64_t trial_id_ = 0;
};

TEST_P(SystemMetricsStore, ListsByGroupAgentAndCursor) {
  ASSERT_TRUE(
      store_->AddSystemMetrics({Row("cpu", "a1", 10, 100), Row("cpu", "a2", 20, 100)}).ok());
  ASSERT_TRUE(
      store_->AddSystemMetrics({Row("cpu", "a1", 30, 200), Row("memory", "a1", 5, 200)}).ok());

  auto all = store_->ListSystemMetrics(trial_id_, "cpu", "", 0, 0);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].agent_id, "a1");
  EXPECT_EQ((*all)[2].metrics["cpu_util_simple"], 30);
  EXPECT_EQ((*all)[2].end_time, 200);

  auto a1 = store_->ListSystemMetrics(trial_id_, "cpu", "a1", 0, 0);
  ASSERT_TRUE(a1.ok());
  ASSERT_EQ(a1->size(), 2u);
  auto after = store_->ListSystemMetrics(trial_id_, "cpu", "a1", (*a1)[0].id, 0);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ((*after)[0].metrics["cpu_util_simple"], 30);
  auto limited = store_->ListSystemMetrics(trial_id_, "cpu", "", 0, 1);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->size(), 1u);
}

TEST_P(SystemMetricsStore, LatestIsOnePerGroupAndAgent) {
  ASSERT_TRUE(
      store_->AddSystemMetrics({Row("cpu", "a1", 10, 100), Row("cpu", "a2", 20, 100)}).ok());
  ASSERT_TRUE(
      store_->AddSystemMetrics({Row("cpu", "a1", 30, 200), Row("memory", "a1", 5, 200)}).ok());
  auto latest = store_->LatestSystemMetrics(trial_id_);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  ASSERT_EQ(latest->size(), 3u);
  EXPECT_EQ((*latest)[0].group, "cpu");
  EXPECT_EQ((*latest)[0].agent_id, "a1");
  EXPECT_EQ((*latest)[0].metrics["cpu_util_simple"], 30);
  EXPECT_EQ((*latest)[1].agent_id, "a2");
  EXPECT_EQ((*latest)[2].group, "memory");
}

TEST_P(SystemMetricsStore, UnknownTrialIsRejectedAndNothingIsKept) {
  SystemMetricRow bad = Row("cpu", "a1", 1, 1);
  bad.trial_id = trial_id_ + 100;
  EXPECT_FALSE(store_->AddSystemMetrics({Row("cpu", "a1", 1, 1), bad}).ok());
  auto rows = store_->ListSystemMetrics(trial_id_, "cpu", "", 0, 0);
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());  // the whole report rolled back
}

TEST_P(SystemMetricsStore, DeletingTheExperimentRemovesThem) {
  ASSERT_TRUE(store_->AddSystemMetrics({Row("cpu", "a1", 10, 100)}).ok());
  ASSERT_TRUE(store_->DeleteExperiment(experiment_id_).ok());
  auto rows = store_->ListSystemMetrics(trial_id_, "cpu", "", 0, 0);
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
}

DET_STORE_BACKENDS(SystemMetricsStore);

}  // namespace
}  // namespace det::master::store
