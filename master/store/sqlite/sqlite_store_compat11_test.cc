// Store: trial summary metrics kept at report time, against a real SQLite store in a temp dir.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"
#include "master/store/store_backends.h"
#include "master/store/test_rows.h"

namespace det::master::store {
namespace {

using nlohmann::json;

class TrialSummaryStore : public ::testing::TestWithParam<store_test::Backend> {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_store_compat11_test_");
    loc_ = std::make_unique<store_test::TestStoreLocation>(GetParam(), dir_);
    DET_CREATE_STORE_LOCATION_OR_SKIP(*loc_);
    Open();
    ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());
    auto id = store_test::InsertTestExperiment(store_.get());
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    experiment_id_ = *id;
    auto tid = store_test::InsertTestTrial(store_.get(), *id);
    ASSERT_TRUE(tid.ok());
    trial_id_ = *tid;
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Open() {
    store_.reset();
    auto s = loc_->Open();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  void Report(const std::string& group, int64_t run, int64_t steps, json avg, int64_t t) {
    MetricRow m;
    m.trial_id = trial_id_;
    m.trial_run_id = run;
    m.total_batches = steps;
    m.group = group;
    m.metrics = {{"avg_metrics", std::move(avg)}};
    m.report_time = t;
    Status st = store_->AddMetrics(m);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  json Summary() {
    auto s = store_->GetTrialSummaryMetrics(trial_id_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : json();
  }
  void Sql(const std::string& sql) {
    auto db = loc_->OpenDb();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    Status st = (*db)->Exec(sql);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  std::filesystem::path dir_;
  std::unique_ptr<store_test::TestStoreLocation> loc_;
  std::unique_ptr<Store> store_;
  int64_t experiment_id_ = 0;
  int64_t trial_id_ = 0;
};

TEST_P(TrialSummaryStore, EmptyBeforeAnyReportAndNotFoundForAnUnknownTrial) {
  EXPECT_EQ(Summary(), json::object());
  auto missing = store_->GetTrialSummaryMetrics(trial_id_ + 100);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST_P(TrialSummaryStore, ReportsAreFoldedPerGroup) {
  Report("training", 1, 10, {{"loss", 3.0}}, 1);
  Report("training", 1, 20, {{"loss", 1.0}}, 2);
  Report("validation", 1, 20, {{"acc", 0.5}}, 3);
  Report("inference", 1, 20, {{"n", "x"}}, 4);
  json s = Summary();
  EXPECT_EQ(s["avg_metrics"]["loss"]["count"], 2);
  EXPECT_DOUBLE_EQ(s["avg_metrics"]["loss"]["mean"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(s["avg_metrics"]["loss"]["last"].get<double>(), 1.0);
  EXPECT_EQ(s["validation_metrics"]["acc"]["count"], 1);
  EXPECT_EQ(s["inference"]["n"]["type"], "string");
}

TEST_P(TrialSummaryStore, ARetriedReportIsNotCountedTwice) {
  Report("training", 1, 10, {{"loss", 3.0}}, 1);
  Report("training", 1, 10, {{"loss", 3.0}}, 2);
  Report("training", 1, 10, {{"acc", 0.1}}, 3);  // merged into the same row
  json s = Summary();
  EXPECT_EQ(s["avg_metrics"]["loss"]["count"], 1);
  EXPECT_EQ(s["avg_metrics"]["acc"]["count"], 1);
}

TEST_P(TrialSummaryStore, ARollbackRecomputesFromTheRowsLeft) {
  Report("training", 1, 10, {{"loss", 5.0}}, 1);
  Report("training", 1, 20, {{"loss", 4.0}}, 2);
  Report("training", 1, 30, {{"loss", 9.0}}, 3);
  // Run 2 restarted from the checkpoint at step 10: steps 20 and 30 of run 1 are archived.
  Report("training", 2, 20, {{"loss", 1.0}}, 4);
  json loss = Summary()["avg_metrics"]["loss"];
  EXPECT_EQ(loss["count"], 2);
  EXPECT_DOUBLE_EQ(loss["max"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(loss["min"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(loss["last"].get<double>(), 1.0);
}

TEST_P(TrialSummaryStore, SummaryKeptBetweenBatchesSurvivesAFailedRowsRetry) {
  // The first commit leaves the summary parsed in the store; a batch whose other row fails (an
  // unknown trial) rolls back and is written again row by row; the good row counts once.
  Report("training", 1, 10, {{"loss", 1.0}}, 1);
  MetricRow good;
  good.trial_id = trial_id_;
  good.trial_run_id = 1;
  good.total_batches = 20;
  good.group = "training";
  good.metrics = {{"avg_metrics", {{"loss", 3.0}}}};
  good.report_time = 2;
  MetricRow bad = good;
  bad.trial_id = trial_id_ + 100;
  std::vector<MetricRow> rows = {good, bad};
  std::vector<Status> results = store_->AddMetricsBatch(rows);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].ok()) << results[0].ToString();
  EXPECT_FALSE(results[1].ok());
  Report("training", 1, 30, {{"loss", 5.0}}, 3);
  json loss = Summary()["avg_metrics"]["loss"];
  EXPECT_EQ(loss["count"], 3);
  EXPECT_DOUBLE_EQ(loss["mean"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(loss["last"].get<double>(), 5.0);
  // And as stored: a fresh store (nothing cached) reads the same.
  Open();
  EXPECT_EQ(Summary()["avg_metrics"]["loss"], loss);
}

// A batch is folded as if its reports came one by one, on either backend (PostgreSQL writes an
// independent batch in a few statements and folds after every row is in): retries, reports
// after a retry, a trial without a summary yet, a restart archiving, and two trials at once.
TEST_P(TrialSummaryStore, ABatchFoldsAsItsReportsOneByOne) {
  TrialRow t2;
  t2.experiment_id = experiment_id_;
  t2.request_id = "r2";
  t2.hparams = json::object();
  t2.state = "ACTIVE";
  auto other = store_->InsertTrial(t2);
  ASSERT_TRUE(other.ok());
  auto row = [](int64_t trial, const std::string& group, int64_t run, int64_t steps, json avg,
                int64_t t) {
    MetricRow m;
    m.trial_id = trial;
    m.trial_run_id = run;
    m.total_batches = steps;
    m.group = group;
    m.metrics = {{"avg_metrics", std::move(avg)}};
    m.report_time = t;
    return m;
  };
  auto batch = [&](std::vector<MetricRow> rows) {
    std::vector<Status> results = store_->AddMetricsBatch(rows);
    ASSERT_EQ(results.size(), rows.size());
    for (const Status& st : results) EXPECT_TRUE(st.ok()) << st.ToString();
  };
  const int64_t t = trial_id_;
  batch({row(t, "training", 1, 10, {{"loss", 3.0}}, 1),
         row(t, "training", 1, 20, {{"loss", 1.0}}, 2),
         row(t, "validation", 1, 20, {{"acc", 0.5}}, 3),
         row(*other, "training", 1, 5, {{"loss", 7.0}}, 4)});
  json s = Summary();
  EXPECT_EQ(s["avg_metrics"]["loss"]["count"], 2);
  EXPECT_DOUBLE_EQ(s["avg_metrics"]["loss"]["mean"].get<double>(), 2.0);
  EXPECT_EQ(s["validation_metrics"]["acc"]["count"], 1);
  // A retry (merged, so the group is recomputed with the batch's rows in) and a new step.
  batch({row(t, "training", 1, 20, {{"loss", 1.0}}, 5),
         row(t, "training", 1, 30, {{"loss", 2.0}}, 6),
         row(t, "validation", 1, 30, {{"acc", 0.7}}, 7),
         row(*other, "training", 1, 6, {{"loss", 5.0}}, 8)});
  s = Summary();
  EXPECT_EQ(s["avg_metrics"]["loss"]["count"], 3);
  EXPECT_DOUBLE_EQ(s["avg_metrics"]["loss"]["mean"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(s["avg_metrics"]["loss"]["last"].get<double>(), 2.0);
  EXPECT_EQ(s["validation_metrics"]["acc"]["count"], 2);
  // A trial with no summary yet (as a migration leaves it): computed from every row once.
  store_.reset();
  Sql("UPDATE trial_summaries SET summary_metrics = NULL");
  Open();
  batch({row(t, "training", 1, 40, {{"loss", 4.0}}, 9),
         row(t, "validation", 1, 40, {{"acc", 0.9}}, 10)});
  s = Summary();
  EXPECT_EQ(s["avg_metrics"]["loss"]["count"], 4);
  EXPECT_EQ(s["validation_metrics"]["acc"]["count"], 3);
  auto trial = store_->GetTrial(t);
  ASSERT_TRUE(trial.ok());
  EXPECT_EQ(trial->total_batches, 40);
  // Run 2 restarts from step 20: run 1's later rows of both groups are archived.
  batch({row(t, "training", 2, 25, {{"loss", 0.0}}, 11),
         row(t, "validation", 2, 25, {{"acc", 0.1}}, 12),
         row(*other, "training", 1, 7, {{"loss", 3.0}}, 13)});
  s = Summary();
  EXPECT_EQ(s["avg_metrics"]["loss"]["count"], 3);
  EXPECT_DOUBLE_EQ(s["avg_metrics"]["loss"]["last"].get<double>(), 0.0);
  EXPECT_EQ(s["validation_metrics"]["acc"]["count"], 2);
  auto other_summary = store_->GetTrialSummaryMetrics(*other);
  ASSERT_TRUE(other_summary.ok());
  EXPECT_EQ((*other_summary)["avg_metrics"]["loss"]["count"], 3);
  EXPECT_DOUBLE_EQ((*other_summary)["avg_metrics"]["loss"]["mean"].get<double>(), 5.0);
  auto other_trial = store_->GetTrial(*other);
  ASSERT_TRUE(other_trial.ok());
  EXPECT_EQ(other_trial->total_batches, 7);
  // What was folded is what the rows say: a fresh store recomputing from the rows agrees.
  store_.reset();
  Sql("UPDATE trial_summaries SET summary_metrics = NULL");
  Open();
  EXPECT_EQ(Summary(), s);
}

TEST_P(TrialSummaryStore, ATrialFromBeforeTheMigrationIsComputedOnFirstRead) {
  Report("training", 1, 10, {{"loss", 2.0}}, 1);
  Report("validation", 1, 10, {{"acc", 0.7}}, 2);
  store_.reset();
  // As the migration leaves such a trial: a row with no summary yet.
  Sql("UPDATE trial_summaries SET summary_metrics = NULL");
  Open();
  json s = Summary();
  EXPECT_EQ(s["avg_metrics"]["loss"]["count"], 1);
  EXPECT_EQ(s["validation_metrics"]["acc"]["count"], 1);
  // A later report folds into the computed summary.
  Sql("UPDATE trial_summaries SET summary_metrics = NULL");
  Report("training", 1, 20, {{"loss", 4.0}}, 3);
  s = Summary();
  EXPECT_EQ(s["avg_metrics"]["loss"]["count"], 2);
  EXPECT_EQ(s["validation_metrics"]["acc"]["count"], 1);
}

TEST_P(TrialSummaryStore, DeletingTheExperimentDeletesTheSummary) {
  Report("training", 1, 10, {{"loss", 2.0}}, 1);
  ASSERT_TRUE(store_->DeleteExperiment(experiment_id_).ok());
  auto s = store_->GetTrialSummaryMetrics(trial_id_);
  EXPECT_FALSE(s.ok());
  store_.reset();
  auto db = loc_->OpenDb();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  Statement count(db->get(), "SELECT COUNT(*) FROM trial_summaries");
  auto row = count.Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ(count.Int(0), 0);
}

TEST_P(TrialSummaryStore, GcRequestsKeepTheTensorboardFlag) {
  GcRequestRow r;
  r.experiment_id = experiment_id_;
  r.storage_config = {{"type", "shared_fs"}, {"host_path", "/tmp"}};
  r.delete_tensorboards = true;
  ASSERT_TRUE(store_->AddGcRequest(r).ok());
  r.delete_tensorboards = false;
  r.uuids = {"u"};
  ASSERT_TRUE(store_->AddGcRequest(r).ok());
  auto rows = store_->ListGcRequests();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_TRUE((*rows)[0].delete_tensorboards);
  EXPECT_TRUE((*rows)[0].uuids.empty());
  EXPECT_FALSE((*rows)[1].delete_tensorboards);
}

DET_STORE_BACKENDS(TrialSummaryStore);

}  // namespace
}  // namespace det::master::store
