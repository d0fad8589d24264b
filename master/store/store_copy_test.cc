// migrate-store's copy: a SQLite installation copied into PostgreSQL reads back the same, with
// ids preserved and new rows numbered after the copied ones.
#include "master/store/store_copy.h"

#include <gtest/gtest.h>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/store_backends.h"

namespace det::master::store {
namespace {

class StoreCopyTest : public ::testing::TestWithParam<store_test::Backend> {};

TEST_P(StoreCopyTest, CopiesEveryRowWithItsIdAndAdvancesSequences) {
  auto dir = det::testing::FreshTestDir("det_store_copy_test_");
  store_test::TestStoreLocation src(store_test::Backend::kSqlite, dir);
  store_test::TestStoreLocation dst(GetParam(), dir);
  DET_CREATE_STORE_LOCATION_OR_SKIP(dst);
  int64_t exp_id = 0, trial_id = 0;
  {
    auto s = src.Open();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->EnsureBuiltinUsers(std::nullopt).ok());
    ExperimentRow e;
    e.state = "COMPLETED";
    e.config = {{"name", "copied"}, {"searcher", {{"metric", "loss"}}}};
    e.original_config = "name: copied";
    e.owner_id = 1;
    e.job_id = "job";
    // Two experiments, the first deleted: ids are kept, not renumbered.
    ASSERT_TRUE((*s)->InsertExperiment(e, "first").ok());
    auto id = (*s)->InsertExperiment(e, std::string("tgz\0bytes", 9));
    ASSERT_TRUE(id.ok());
    exp_id = *id;
    ASSERT_TRUE((*s)->DeleteExperiment(exp_id - 1).ok());
    TrialRow t;
    t.experiment_id = exp_id;
    t.request_id = "r";
    t.hparams = {{"lr", 0.5}};
    t.state = "COMPLETED";
    t.searcher_metric = 0.25;
    auto tid = (*s)->InsertTrial(t);
    ASSERT_TRUE(tid.ok());
    trial_id = *tid;
    for (int i = 1; i <= 3; ++i) {
      MetricRow m;
      m.trial_id = trial_id;
      m.trial_run_id = 1;
      m.total_batches = i * 10;
      m.group = "validation";
      m.metrics = {{"validation_metrics", {{"loss", 1.0 / i}}}};
      m.report_time = i;
      ASSERT_TRUE((*s)->AddMetrics(m).ok());
    }
  }
  // Both at the latest migration, as migrate-store opens them.
  ASSERT_TRUE(dst.Open().ok());
  auto from = OpenSqliteDb((dir / "det.db").string());
  auto to = dst.OpenDb();
  ASSERT_TRUE(from.ok() && to.ok());
  auto report = CopyStoreTables(from->get(), to->get());
  if (GetParam() == store_test::Backend::kSqlite) {
    // Only PostgreSQL is a target.
    EXPECT_FALSE(report.ok());
    return;
  }
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->rows["metrics"], 3);
  EXPECT_EQ(report->rows["users"], 2);
  EXPECT_EQ(report->rows["experiments"], 1);
  // A second copy into the now full database is refused.
  EXPECT_EQ(CopyStoreTables(from->get(), to->get()).status().code(),
            StatusCode::kFailedPrecondition);

  auto copied = dst.Open();
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  auto e = (*copied)->GetExperiment(exp_id);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->config["name"], "copied");
  EXPECT_EQ(*(*copied)->GetModelDefinition(exp_id), std::string("tgz\0bytes", 9));
  auto tr = (*copied)->GetTrial(trial_id);
  ASSERT_TRUE(tr.ok());
  EXPECT_EQ(tr->searcher_metric, 0.25);
  auto rows = (*copied)->ListMetrics(trial_id, "validation");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_DOUBLE_EQ((*rows)[2].metrics["validation_metrics"]["loss"].get<double>(), 1.0 / 3);
  auto admin = (*copied)->GetUserByName("admin");
  ASSERT_TRUE(admin.ok());
  EXPECT_EQ(admin->id, 1);
  // New rows continue after the copied ids.
  ExperimentRow next = *e;
  auto next_id = (*copied)->InsertExperiment(next, "x");
  ASSERT_TRUE(next_id.ok()) << next_id.status().ToString();
  EXPECT_EQ(*next_id, exp_id + 1);
}

DET_STORE_BACKENDS(StoreCopyTest);

}  // namespace
}  // namespace det::master::store
