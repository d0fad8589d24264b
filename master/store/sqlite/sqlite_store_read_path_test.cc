// store13: the read path at scale on both backends. Reads run beside an open write transaction
// (read connections), each trial's best and latest validation kept on its row as reports arrive
// (and filled by migration 0021 for reports stored before it), and the experiment name column.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "common/test_dir.h"
#include "master/config/searcher_metric.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"
#include "master/store/store_backends.h"

namespace det::master::store {
namespace {

using nlohmann::json;

class ReadPathTest : public ::testing::TestWithParam<store_test::Backend> {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_store_read_path_test_");
    loc_ = std::make_unique<store_test::TestStoreLocation>(GetParam(), dir_);
    DET_CREATE_STORE_LOCATION_OR_SKIP(*loc_);
    Reopen();
    ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());
    owner_ = store_->GetUserByName("admin")->id;
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Reopen() {
    store_.reset();
    auto s = loc_->Open();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }

  int64_t NewExperiment(const std::string& name, const std::string& metric, bool smaller) {
    ExperimentRow e;
    e.state = "ACTIVE";
    e.config = {{"name", name}, {"searcher", {{"metric", metric}, {"smaller_is_better", smaller}}}};
    e.original_config = "name: " + name;
    e.owner_id = owner_;
    e.job_id = "job-" + name;
    e.start_time = 1;
    e.notes = "committed";
    auto id = store_->InsertExperiment(e, "");
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }
  int64_t NewTrial(int64_t experiment_id, const std::string& request) {
    TrialRow t;
    t.experiment_id = experiment_id;
    t.request_id = request;
    t.hparams = json::object();
    t.state = "ACTIVE";
    t.task_id = std::to_string(experiment_id) + "." + request;
    auto id = store_->InsertTrial(t);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }
  static MetricRow Validation(int64_t trial, int64_t run, int64_t steps, json values) {
    MetricRow m;
    m.trial_id = trial;
    m.trial_run_id = run;
    m.group = "validation";
    m.total_batches = steps;
    m.metrics = {{"validation_metrics", std::move(values)}};
    m.report_time = steps;
    return m;
  }
  void Report(std::vector<MetricRow> rows) {
    for (const Status& st : store_->AddMetricsBatch(rows)) ASSERT_TRUE(st.ok()) << st.ToString();
  }
  // What a reader of every validation row finds (as the master did before 0021).
  TrialValidationReports Scan(int64_t trial, const config::SearcherMetric& metric) {
    TrialValidationReports out;
    std::optional<double> best;
    auto rows = store_->ListMetrics(trial, "validation");
    EXPECT_TRUE(rows.ok());
    for (const MetricRow& m : *rows) {
      out.latest = m;
      std::optional<double> v = metric.ValueInReport(m.metrics);
      if (v && (!best || metric.Better(*v, *best))) {
        best = v;
        out.best = m;
      }
    }
    return out;
  }
  // Steps of the stored best and latest (-1: none), checked against Scan.
  std::pair<int64_t, int64_t> Kept(int64_t trial, const config::SearcherMetric& metric) {
    auto kept = store_->GetTrialValidations(trial);
    EXPECT_TRUE(kept.ok()) << kept.status().ToString();
    TrialValidationReports scan = Scan(trial, metric);
    auto id = [](const std::optional<MetricRow>& m) { return m ? m->id : -1; };
    EXPECT_EQ(id(kept->best), id(scan.best)) << "trial " << trial;
    EXPECT_EQ(id(kept->latest), id(scan.latest)) << "trial " << trial;
    if (kept->best && scan.best) {
      EXPECT_EQ(kept->best->metrics, scan.best->metrics);
    }
    auto steps = [](const std::optional<MetricRow>& m) { return m ? m->total_batches : -1; };
    return {steps(kept->best), steps(kept->latest)};
  }

  std::filesystem::path dir_;
  std::unique_ptr<store_test::TestStoreLocation> loc_;
  std::unique_ptr<SqliteStore> store_;
  int64_t owner_ = 0;
};

TEST_P(ReadPathTest, ReadsProceedWhileAWriteTransactionIsOpen) {
  const int64_t id = NewExperiment("reads", "loss", true);
  const int64_t trial = NewTrial(id, "r1");
  std::future<Result<ExperimentRow>> experiment;
  std::future<Result<std::vector<int64_t>>> listed;
  std::future<Result<TrialRow>> trial_row;
  bool answered = false;
  Status st = store_->WhileWriteTransactionOpenForTest([&] {
    // Readers on other threads (as HTTP handlers are), while the writer holds its transaction.
    experiment = std::async(std::launch::async, [&] { return store_->GetExperiment(id); });
    listed = std::async(std::launch::async, [&] {
      int64_t total = 0;
      return store_->ListExperimentIds(ExperimentFilter{}, Page{0, 10}, &total);
    });
    trial_row = std::async(std::launch::async, [&] { return store_->GetTrial(trial); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    answered = experiment.wait_until(deadline) == std::future_status::ready &&
               listed.wait_until(deadline) == std::future_status::ready &&
               trial_row.wait_until(deadline) == std::future_status::ready;
  });
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(answered) << "a read waited for the write transaction to end";
  Result<ExperimentRow> e = experiment.get();
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  // The last commit, not the open transaction's change.
  EXPECT_EQ(e->notes, "committed");
  ASSERT_TRUE(listed.get().ok());
  ASSERT_TRUE(trial_row.get().ok());
  // The rolled-back change never shows; a commit is seen by the next read at once.
  ASSERT_TRUE(store_->UpdateExperimentMeta(id, e->config, false, "second").ok());
  EXPECT_EQ(store_->GetExperiment(id)->notes, "second");
}

TEST_P(ReadPathTest, BestAndLatestValidationKeptAsReportsArrive) {
  const config::SearcherMetric loss{"loss", true};
  const config::SearcherMetric acc{"accuracy", false};
  const int64_t e1 = NewExperiment("small", "loss", true);
  const int64_t e2 = NewExperiment("large", "accuracy", false);
  const int64_t t1 = NewTrial(e1, "a");
  const int64_t t2 = NewTrial(e2, "b");
  const int64_t t3 = NewTrial(e1, "c");
  EXPECT_EQ(Kept(t1, loss), std::make_pair(int64_t{-1}, int64_t{-1}));
  // Out of step order, in one batch and in several; a report without the metric is latest only.
  Report({Validation(t1, 1, 20, {{"loss", 0.3}}), Validation(t1, 1, 10, {{"loss", 0.5}}),
          Validation(t2, 1, 10, {{"accuracy", 0.7}}), Validation(t3, 1, 5, {{"other", 1}})});
  EXPECT_EQ(Kept(t1, loss), std::make_pair(int64_t{20}, int64_t{20}));
  EXPECT_EQ(Kept(t2, acc), std::make_pair(int64_t{10}, int64_t{10}));
  EXPECT_EQ(Kept(t3, loss), std::make_pair(int64_t{-1}, int64_t{5}));
  Report({Validation(t1, 1, 30, {{"loss", 0.4}})});
  Report({Validation(t2, 1, 20, {{"accuracy", 0.9}}), Validation(t2, 1, 30, {{"accuracy", 0.9}})});
  EXPECT_EQ(Kept(t1, loss), std::make_pair(int64_t{20}, int64_t{30}));
  // A tie keeps the earlier report.
  EXPECT_EQ(Kept(t2, acc), std::make_pair(int64_t{20}, int64_t{30}));
  // A report merged into a stored one (same run and steps) changes that row's value.
  Report({Validation(t1, 1, 30, {{"loss", 0.1}})});
  EXPECT_EQ(Kept(t1, loss), std::make_pair(int64_t{30}, int64_t{30}));
  // A later run restarted from step 15 archives the earlier run's reports past it.
  Report({Validation(t1, 2, 15, {{"loss", 0.45}})});
  EXPECT_EQ(Kept(t1, loss), std::make_pair(int64_t{15}, int64_t{15}));
  // Training reports leave them alone.
  MetricRow training = Validation(t1, 2, 40, {{"loss", 0.01}});
  training.group = "training";
  training.metrics = {{"avg_metrics", {{"loss", 0.01}}}};
  Report({training});
  EXPECT_EQ(Kept(t1, loss), std::make_pair(int64_t{15}, int64_t{15}));
  // The experiment's best over its trials.
  EXPECT_EQ(*store_->BestExperimentValidation(e1, true), std::optional<double>(0.45));
  EXPECT_EQ(*store_->BestExperimentValidation(e2, false), std::optional<double>(0.9));
  EXPECT_EQ(*store_->BestExperimentValidation(e2 + 100, false), std::nullopt);
  EXPECT_EQ(store_->GetTrialValidations(t3 + 100).status().code(), StatusCode::kNotFound);
  // Kept across a reopen (they are columns, not a cache).
  Reopen();
  EXPECT_EQ(Kept(t1, loss), std::make_pair(int64_t{15}, int64_t{15}));
}

TEST_P(ReadPathTest, MigrationFillsTheColumnsOfStoredReports) {
  const config::SearcherMetric loss{"loss", true};
  const int64_t e1 = NewExperiment("old-name", "loss", true);
  const int64_t t1 = NewTrial(e1, "a");
  Report({Validation(t1, 1, 10, {{"loss", 0.5}}), Validation(t1, 1, 20, {{"loss", 0.2}}),
          Validation(t1, 1, 30, {{"loss", 0.6}})});
  // Back to the schema before 0021, as a database made by an earlier build.
  {
    auto db = loc_->OpenDb();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    const bool pg = (*db)->dialect() == Dialect::kPostgres;
    std::string undo =
        pg ? "DROP TRIGGER experiments_name_sync ON experiments; DROP FUNCTION "
             "experiments_name_sync(); CREATE INDEX experiments_name ON "
             "experiments(COALESCE((config::jsonb #>> '{name}'), ''));"
           : "DROP TRIGGER experiments_name_insert; DROP TRIGGER experiments_name_update; "
             "CREATE INDEX experiments_name ON experiments(COALESCE(json_extract(config, "
             "'$.name'), ''));";
    // 0023's index (on the name column) goes first, and 0023 is applied again after 0021.
    undo +=
        "DROP INDEX experiments_owner_name; CREATE INDEX experiments_owner ON "
        "experiments(owner_id); DELETE FROM schema_migrations WHERE version = 23; "
        "DROP INDEX experiments_by_name; DROP INDEX trials_experiment_best; "
        "ALTER TABLE experiments DROP COLUMN name; ALTER TABLE trials DROP COLUMN "
        "best_validation_id; ALTER TABLE trials DROP COLUMN best_validation_value; ALTER TABLE "
        "trials DROP COLUMN latest_validation_id; DELETE FROM schema_migrations WHERE version = 21";
    Status st = (*db)->Exec(undo);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  Reopen();
  EXPECT_EQ(Kept(t1, loss), std::make_pair(int64_t{20}, int64_t{30}));
  EXPECT_EQ(*store_->BestExperimentValidation(e1, true), std::optional<double>(0.2));
  ExperimentFilter f;
  f.name = "OLD-na";
  int64_t total = 0;
  auto ids = store_->ListExperimentIds(f, Page{0, 10}, &total);
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  EXPECT_EQ(*ids, std::vector<int64_t>{e1});
}

TEST_P(ReadPathTest, NameColumnFollowsTheConfig) {
  const int64_t a = NewExperiment("beta", "loss", true);
  const int64_t b = NewExperiment("alpha", "loss", true);
  const int64_t c = NewExperiment("gamma-beta", "loss", true);
  ExperimentFilter f;
  f.sort_by = ExperimentSortKey::kName;
  int64_t total = 0;
  EXPECT_EQ(*store_->ListExperimentIds(f, Page{0, 10}, &total), (std::vector<int64_t>{b, a, c}));
  f.name = "BETA";
  EXPECT_EQ(*store_->ListExperimentIds(f, Page{0, 10}, &total), (std::vector<int64_t>{a, c}));
  EXPECT_EQ(total, 2);
  // A renamed experiment (det experiment set name) moves in the list.
  json config = store_->GetExperiment(b)->config;
  config["name"] = "zeta-beta";
  ASSERT_TRUE(store_->UpdateExperimentMeta(b, config, false, "").ok());
  EXPECT_EQ(*store_->ListExperimentIds(f, Page{0, 10}, &total), (std::vector<int64_t>{a, c, b}));
  f.descending = true;
  EXPECT_EQ(*store_->ListExperimentIds(f, Page{0, 2}, &total), (std::vector<int64_t>{b, c}));
  EXPECT_EQ(total, 3);
}

TEST(ReadPoolTest, OpensUpToItsMaximumAndReusesReturnedConnections) {
  auto dir = det::testing::FreshTestDir("det_read_pool_test_");
  const std::string path = (dir / "det.db").string();
  { ASSERT_TRUE(SqliteStore::Open(path).ok()); }
  ReadPool pool([path] { return OpenSqliteReadDb(path); }, 2);
  {
    auto a = pool.Acquire();
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    auto b = pool.Acquire();
    ASSERT_TRUE(b.ok());
    EXPECT_NE(a->db(), b->db());
    EXPECT_EQ(pool.opened(), 2u);
    // A third caller waits for one to come back.
    Db* first = a->db();
    auto third = std::async(std::launch::async, [&pool] {
      auto c = pool.Acquire();
      return c.ok() ? c->db() : nullptr;
    });
    EXPECT_EQ(third.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
    { auto returned = std::move(a).value(); }
    EXPECT_EQ(third.get(), first);
  }
  EXPECT_EQ(pool.opened(), 2u);
  // A read connection cannot write.
  auto r = pool.Acquire();
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->db()->Exec("DELETE FROM users").ok());
  // A pool whose connections cannot open says why.
  ReadPool broken([] { return Result<std::unique_ptr<Db>>(Unavailable("no database")); }, 1);
  EXPECT_EQ(broken.Acquire().status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(broken.opened(), 0u);
  std::filesystem::remove_all(dir);
}

DET_STORE_BACKENDS(ReadPathTest);

}  // namespace
}  // namespace det::master::store
