// The scale reads against a real SQLite store: bulk import, trial counts and pages, downsampled
// series, and the query plans of the list filters and sorts (0012_indexes.sql).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/store_backends.h"

namespace det::master::store {
namespace {

class ScaleStoreTest : public ::testing::TestWithParam<store_test::Backend> {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_store_scale_test_");
    path_ = (dir_ / "det.db").string();
    loc_ = std::make_unique<store_test::TestStoreLocation>(GetParam(), dir_);
    DET_CREATE_STORE_LOCATION_OR_SKIP(*loc_);
    auto s = loc_->Open();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());
    owner_ = store_->GetUserByName("admin")->id;
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  ExperimentRow Experiment(int64_t id) const {
    ExperimentRow e;
    e.id = id;
    e.state = "COMPLETED";
    e.config = {{"name", "exp-" + std::to_string(id)}};
    e.original_config = "name: exp";
    e.owner_id = owner_;
    e.job_id = "job-" + std::to_string(id);
    e.start_time = id * 1000;
    return e;
  }
  static TrialRow Trial(int64_t id, int64_t experiment_id) {
    TrialRow t;
    t.id = id;
    t.experiment_id = experiment_id;
    t.request_id = "r" + std::to_string(id);
    t.hparams = {{"lr", 0.1}};
    t.state = "COMPLETED";
    t.task_id = std::to_string(experiment_id) + "." + std::to_string(id);
    return t;
  }
  static MetricRow Metric(int64_t trial_id, const std::string& group, int64_t steps, double loss) {
    MetricRow m;
    m.trial_id = trial_id;
    m.group = group;
    m.total_batches = steps;
    m.metrics = {{"avg_metrics", {{"loss", loss}}}};
    m.report_time = steps;
    return m;
  }

  // The plan SQLite chooses for `sql`, its detail lines joined by " | ".
  std::string Plan(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    std::string q = "EXPLAIN QUERY PLAN " + sql;
    EXPECT_EQ(sqlite3_prepare_v2(db, q.c_str(), -1, &st, nullptr), SQLITE_OK)
        << sql << ": " << sqlite3_errmsg(db);
    std::string out;
    while (sqlite3_step(st) == SQLITE_ROW) {
      if (!out.empty()) out += " | ";
      out += reinterpret_cast<const char*>(sqlite3_column_text(st, 3));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
  }

  std::filesystem::path dir_;
  std::string path_;
  std::unique_ptr<store_test::TestStoreLocation> loc_;
  std::unique_ptr<SqliteStore> store_;
  int64_t owner_ = 0;
};

TEST_P(ScaleStoreTest, BulkInsertKeepsIdsAndRollsBackOnError) {
  std::vector<MetricRow> metrics = {Metric(10, "training", 5, 0.5)};
  ASSERT_TRUE(
      store_->BulkInsert({Experiment(3)}, "tgz", {Trial(10, 3), Trial(11, 3)}, metrics).ok());
  EXPECT_EQ(store_->GetExperiment(3)->config["name"], "exp-3");
  EXPECT_EQ(*store_->GetModelDefinition(3), "tgz");
  EXPECT_EQ(store_->GetTrial(11)->experiment_id, 3);
  auto rows = store_->ListMetrics(10, "training");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].metrics["avg_metrics"]["loss"], 0.5);
  // The summary is stored as ingestion keeps it; a trial with no rows has none.
  auto summary = store_->GetTrialSummaryMetrics(10);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ((*summary)["avg_metrics"]["loss"]["count"], 1) << summary->dump();
  EXPECT_EQ((*summary)["avg_metrics"]["loss"]["last"], 0.5) << summary->dump();
  EXPECT_EQ(*store_->GetTrialSummaryMetrics(11), nlohmann::json::object());
  // A later batch folds into what the first one stored.
  MetricRow later = Metric(10, "training", 6, 0.25);
  later.report_time += 1;
  ASSERT_TRUE(store_->BulkInsert({}, "", {}, {later}).ok());
  summary = store_->GetTrialSummaryMetrics(10);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ((*summary)["avg_metrics"]["loss"]["count"], 2) << summary->dump();
  EXPECT_EQ((*summary)["avg_metrics"]["loss"]["last"], 0.25) << summary->dump();
  EXPECT_EQ((*summary)["avg_metrics"]["loss"]["min"], 0.25) << summary->dump();
  // A taken id fails the whole batch: experiment 4 is not left behind.
  Status st = store_->BulkInsert({Experiment(4), Experiment(3)}, "tgz", {}, {});
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(store_->GetExperiment(4).ok());
}

TEST_P(ScaleStoreTest, CountsAndPagesTrials) {
  std::vector<TrialRow> trials;
  for (int64_t id = 1; id <= 25; ++id) trials.push_back(Trial(id, id % 2 == 0 ? 1 : 2));
  ASSERT_TRUE(store_->BulkInsert({Experiment(1), Experiment(2)}, "", trials, {}).ok());
  EXPECT_EQ(*store_->CountTrials(1), 12);
  EXPECT_EQ(*store_->CountTrials(2), 13);
  EXPECT_EQ(*store_->CountTrials(99), 0);
  int64_t total = 0;
  auto page = store_->ListTrialIds(1, Page{2, 3}, false, &total);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(total, 12);
  EXPECT_EQ(*page, (std::vector<int64_t>{6, 8, 10}));
  page = store_->ListTrialIds(2, Page{0, 2}, true, &total);
  EXPECT_EQ(total, 13);
  EXPECT_EQ(*page, (std::vector<int64_t>{25, 23}));
  page = store_->ListTrialIds(1, Page{10, 0}, false, &total);
  EXPECT_EQ(*page, (std::vector<int64_t>{22, 24}));
}

TEST_P(ScaleStoreTest, SampleMetricsReturnsShortRangesWhole) {
  std::vector<MetricRow> m;
  for (int64_t s = 10; s <= 50; s += 10) m.push_back(Metric(1, "training", s, 1.0 / s));
  m.push_back(Metric(1, "validation", 50, 0.1));
  ASSERT_TRUE(store_->BulkInsert({Experiment(1)}, "", {Trial(1, 1)}, m).ok());
  auto rows = store_->SampleMetrics(1, "training", 0, 1000, 5);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 5u);
  EXPECT_EQ(rows->front().total_batches, 10);
  EXPECT_EQ(rows->back().total_batches, 50);
  // Bounds are inclusive; other groups stay out.
  rows = store_->SampleMetrics(1, "training", 20, 40, 200);
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].total_batches, 20);
  EXPECT_EQ((*rows)[2].total_batches, 40);
  rows = store_->SampleMetrics(1, "validation", 0, 1000, 200);
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].metrics["avg_metrics"]["loss"], 0.1);
  EXPECT_TRUE(store_->SampleMetrics(1, "training", 0, 1000, 0)->empty());
  EXPECT_TRUE(store_->SampleMetrics(1, "training", 40, 20, 10)->empty());
  EXPECT_TRUE(store_->SampleMetrics(2, "training", 0, 1000, 10)->empty());
}

TEST_P(ScaleStoreTest, SampleMetricsSpreadsLongSeriesEvenlyAndSkipsArchivedRows) {
  std::vector<MetricRow> m;
  for (int64_t s = 1; s <= 10000; ++s) m.push_back(Metric(1, "training", s, 1.0 / s));
  // An archived row (a lost run's report) at a target step is never returned.
  MetricRow lost = Metric(1, "training", 5000, 99);
  lost.trial_run_id = 0;
  m[4999].trial_run_id = 1;
  lost.archived = true;
  m.push_back(lost);
  ASSERT_TRUE(store_->BulkInsert({Experiment(1)}, "", {Trial(1, 1)}, m).ok());
  auto rows = store_->SampleMetrics(1, "training", 0, 1 << 30, 101);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 101u);
  EXPECT_EQ(rows->front().total_batches, 1);
  EXPECT_EQ(rows->back().total_batches, 10000);
  for (size_t k = 0; k < rows->size(); ++k) {
    // Targets 1 + 9999 * k / 100, and every step exists.
    EXPECT_EQ((*rows)[k].total_batches, 1 + static_cast<int64_t>(9999 * k / 100)) << k;
    EXPECT_FALSE((*rows)[k].archived);
    EXPECT_NE((*rows)[k].metrics["avg_metrics"]["loss"], 99);
  }
  // A sub-range keeps its own first and last rows.
  rows = store_->SampleMetrics(1, "training", 2000, 3000, 11);
  ASSERT_EQ(rows->size(), 11u);
  EXPECT_EQ(rows->front().total_batches, 2000);
  EXPECT_EQ(rows->back().total_batches, 3000);
  EXPECT_EQ((*rows)[5].total_batches, 2500);
}

DET_STORE_BACKENDS(ScaleStoreTest);

// SQLite's query plans (EXPLAIN QUERY PLAN): SQLite only.
class SqlitePlanTest : public ScaleStoreTest {};
INSTANTIATE_TEST_SUITE_P(Sqlite, SqlitePlanTest, ::testing::Values(store_test::Backend::kSqlite),
                         store_test::BackendName);

TEST_P(SqlitePlanTest, ListQueriesUseTheirIndexes) {
  // The seek of a downsampled series: an index search with no sort and no table read.
  std::string plan = Plan(
      "SELECT total_batches FROM metrics WHERE trial_id = 1 AND metric_group = 'training' AND "
      "archived = 0 AND total_batches >= 5 AND total_batches <= 10 ORDER BY total_batches, id "
      "LIMIT 1");
  EXPECT_NE(plan.find("COVERING INDEX metrics_series"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << plan;
  // The experiment list's count and its default and start-time pages.
  plan = Plan("SELECT COUNT(*) FROM experiments e WHERE 1 = 1 AND e.archived = ?");
  EXPECT_NE(plan.find("COVERING INDEX experiments_archived"), std::string::npos) << plan;
  plan = Plan(
      "SELECT e.id FROM experiments e WHERE 1 = 1 AND e.archived = ? ORDER BY e.start_time DESC, "
      "e.id DESC LIMIT 10");
  EXPECT_NE(plan.find("experiments_archived_start"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << plan;
  plan = Plan("SELECT e.id FROM experiments e WHERE 1 = 1 ORDER BY e.name ASC, e.id ASC LIMIT 10");
  EXPECT_NE(plan.find("INDEX experiments_by_name"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << plan;
  plan = Plan(
      "SELECT e.id FROM experiments e WHERE 1 = 1 AND e.archived = ? AND e.state IN (?) ORDER BY "
      "e.start_time DESC, e.id DESC LIMIT 10 OFFSET 3000");
  EXPECT_NE(plan.find("COVERING INDEX experiments_state_archived_start"), std::string::npos)
      << plan;
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << plan;
  plan = Plan("SELECT COUNT(*) FROM experiments e WHERE 1 = 1 AND e.owner_id IN (?, ?)");
  EXPECT_NE(plan.find("INDEX experiments_owner_name"), std::string::npos) << plan;
  // reads14: user and name filter: the count and the page read only experiments_owner_name (the
  // name column is stored after the context tarball, so a table read per row is slow).
  plan = Plan(
      "SELECT COUNT(*) FROM experiments e WHERE 1 = 1 AND (e.owner_id IN (SELECT u.id FROM users "
      "u WHERE u.username IN (?))) AND instr(lower(e.name), lower(?)) > 0");
  EXPECT_NE(plan.find("COVERING INDEX experiments_owner_name"), std::string::npos) << plan;
  plan = Plan(
      "SELECT e.id FROM experiments e WHERE 1 = 1 AND (e.owner_id IN (SELECT u.id FROM users u "
      "WHERE u.username IN (?))) AND instr(lower(e.name), lower(?)) > 0 ORDER BY e.name ASC, e.id "
      "ASC LIMIT 10 OFFSET 10");
  EXPECT_EQ(plan.find("USING INDEX experiments_owner"), std::string::npos) << plan;
  plan = Plan("SELECT COUNT(*) FROM experiments e WHERE 1 = 1 AND e.state IN (?)");
  EXPECT_NE(plan.find("INDEX experiments_state"), std::string::npos) << plan;
  plan = Plan("SELECT experiment_id FROM experiment_projects WHERE project_id = ?");
  EXPECT_NE(plan.find("INDEX experiment_projects_project"), std::string::npos) << plan;
  // Trials by experiment (paged both ways) and by state.
  plan = Plan("SELECT id FROM trials WHERE experiment_id = ? ORDER BY id DESC LIMIT 10");
  EXPECT_NE(plan.find("INDEX trials_experiment"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << plan;
  plan = Plan("SELECT id FROM trials WHERE experiment_id = ? AND state = ?");
  EXPECT_NE(plan.find("INDEX trials_experiment_state"), std::string::npos) << plan;
}

}  // namespace
}  // namespace det::master::store
