// SeriesService against a real SQLite store in a temp dir.
#include "master/server/series_service.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

using nlohmann::json;

class SeriesServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_series_service_test_");
    auto s = store::SqliteStore::Open((dir_ / "det.db").string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());
    store::ExperimentRow e;
    e.id = 7;
    e.state = "COMPLETED";
    e.config = {{"name", "x"}};
    e.owner_id = 1;
    std::vector<store::TrialRow> trials;
    for (int64_t id = 1; id <= 5; ++id) {
      store::TrialRow t;
      t.id = id;
      t.experiment_id = 7;
      t.request_id = "r" + std::to_string(id);
      t.hparams = json::object();
      t.state = "COMPLETED";
      trials.push_back(t);
    }
    std::vector<store::MetricRow> metrics;
    // Trial 1: 1,000 training reports (loss, epochs) and 10 validation reports.
    for (int64_t s = 1; s <= 1000; ++s) {
      store::MetricRow m;
      m.trial_id = 1;
      m.group = "training";
      m.total_batches = s;
      m.report_time = s * 1000000;
      m.metrics = {{"avg_metrics", {{"loss", 1.0 / s}, {"epochs", s / 100.0}}}};
      metrics.push_back(m);
      if (s % 100 == 0) {
        m.group = "validation";
        m.metrics = {{"validation_metrics", {{"accuracy", s / 1000.0}}}};
        metrics.push_back(m);
      }
    }
    ASSERT_TRUE(store_->BulkInsert({e}, "tgz", trials, metrics).ok());
    service_ = std::make_unique<SeriesService>(store_.get());
  }
  void TearDown() override {
    service_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<SeriesService> service_;
};

TEST_F(SeriesServiceTest, DownsamplesEachGroupAndNamesValues) {
  SeriesQuery q;
  q.names_by_group = {{"training", {"loss", "missing"}}, {"validation", {"accuracy"}}};
  q.max_points = 5;
  auto series = service_->TrialSeries(1, q);
  ASSERT_TRUE(series.ok()) << series.status().ToString();
  ASSERT_EQ(series->size(), 2u);
  const GroupSeries& train = (*series)[0];
  EXPECT_EQ(train.group, "training");
  ASSERT_EQ(train.points.size(), 5u);
  std::vector<int64_t> steps;
  for (const SeriesPoint& p : train.points) steps.push_back(p.batches);
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 250, 500, 750, 1000}));
  EXPECT_DOUBLE_EQ(train.points[1].values["loss"].get<double>(), 1.0 / 250);
  EXPECT_TRUE(train.points[1].values["missing"].is_null());
  EXPECT_EQ(train.points[1].time, 250 * 1000000);
  ASSERT_TRUE(train.points[4].epoch.has_value());
  EXPECT_DOUBLE_EQ(*train.points[4].epoch, 10.0);
  const GroupSeries& val = (*series)[1];
  EXPECT_EQ(val.group, "validation");
  ASSERT_EQ(val.points.size(), 5u);
  EXPECT_EQ(val.points.front().batches, 100);
  EXPECT_EQ(val.points.back().batches, 1000);
  EXPECT_DOUBLE_EQ(val.points.back().values["accuracy"].get<double>(), 1.0);
  EXPECT_FALSE(val.points.back().epoch.has_value());
}

TEST_F(SeriesServiceTest, NoNamesGivesEveryNumericMetricOfTrainingAndValidation) {
  SeriesQuery q;
  q.max_points = 3;
  auto series = service_->TrialSeries(1, q);
  ASSERT_TRUE(series.ok()) << series.status().ToString();
  ASSERT_EQ(series->size(), 2u);
  EXPECT_EQ((*series)[0].group, "training");
  ASSERT_EQ((*series)[0].points.size(), 3u);
  EXPECT_DOUBLE_EQ((*series)[0].points[0].values["loss"].get<double>(), 1.0);
  EXPECT_TRUE((*series)[0].points[0].values.contains("epochs"));
  EXPECT_EQ((*series)[1].group, "validation");
  EXPECT_DOUBLE_EQ((*series)[1].points.back().values["accuracy"].get<double>(), 1.0);
}

TEST_F(SeriesServiceTest, RangeAndEmptyGroups) {
  SeriesQuery q;
  q.names_by_group = {{"training", {"loss"}}, {"nothing-here", {"x"}}};
  q.start_batches = 10;
  q.end_batches = 20;
  auto series = service_->TrialSeries(1, q);
  ASSERT_TRUE(series.ok());
  // The empty group is left out; a range shorter than max_points comes whole.
  ASSERT_EQ(series->size(), 1u);
  EXPECT_EQ((*series)[0].points.size(), 11u);
  EXPECT_EQ((*series)[0].points.front().batches, 10);
  EXPECT_EQ((*series)[0].points.back().batches, 20);
  // A trial without reports has no series; an unknown one is NotFound.
  auto none = service_->TrialSeries(2, q);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  store::TrialRow row;
  ASSERT_TRUE(service_->TrialSeries(2, q, &row).ok());
  EXPECT_EQ(row.id, 2);
  EXPECT_EQ(row.experiment_id, 7);
  auto missing = service_->TrialSeries(99, q);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST_F(SeriesServiceTest, RejectsBadQueriesNamingTheField) {
  SeriesQuery q;
  q.names_by_group = {{"training", {"loss"}}};
  q.max_points = 0;
  auto r = service_->TrialSeries(1, q);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("maxDatapoints"), std::string::npos);
  q.max_points = SeriesService::kMaxPoints + 1;
  EXPECT_EQ(service_->TrialSeries(1, q).status().code(), StatusCode::kInvalidArgument);
  q.max_points = 10;
  q.start_batches = 50;
  q.end_batches = 40;
  r = service_->TrialSeries(1, q);
  EXPECT_NE(r.status().message().find("endBatches"), std::string::npos);
  q.start_batches = -1;
  r = service_->TrialSeries(1, q);
  EXPECT_NE(r.status().message().find("startBatches"), std::string::npos);
}

TEST_F(SeriesServiceTest, PagesTrials) {
  int64_t total = 0;
  auto page = service_->TrialIdsPage(7, store::Page{1, 2}, false, &total);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(total, 5);
  EXPECT_EQ(*page, (std::vector<int64_t>{2, 3}));
  page = service_->TrialIdsPage(7, store::Page{0, 0}, true, &total);
  EXPECT_EQ(*page, (std::vector<int64_t>{5, 4, 3, 2, 1}));
  EXPECT_EQ(service_->TrialIdsPage(8, store::Page{}, false, &total).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(service_->TrialIdsPage(7, store::Page{-1, 0}, false, &total).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace det::master::server
