// ExperimentSummaryService against a real SQLite store.
#include "master/server/experiment_summary_service.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

TEST(ExperimentSummaryServiceTest, MapsSummariesByExperimentId) {
  auto dir = det::testing::FreshTestDir("det_summary_service_test_");
  auto opened = store::SqliteStore::Open((dir / "det.db").string());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<store::Store> st = std::move(opened).value();
  ASSERT_TRUE(st->EnsureBuiltinUsers(std::nullopt).ok());
  store::ExperimentRow e;
  e.state = "ACTIVE";
  e.config = {{"name", "x"}, {"searcher", {{"metric", "loss"}}}};
  e.owner_id = st->GetUserByName("determined")->id;
  e.job_id = "job-1";
  auto id = st->InsertExperiment(e, "tgz");
  ASSERT_TRUE(id.ok());
  store::TrialRow t;
  t.experiment_id = *id;
  t.request_id = "r";
  t.hparams = nlohmann::json::object();
  t.state = "ACTIVE";
  auto trial = st->InsertTrial(t);
  ASSERT_TRUE(trial.ok());
  store::CheckpointRow c;
  c.uuid = "u";
  c.task_id = "task";
  c.allocation_id = "alloc";
  c.trial_id = *trial;
  c.state = "COMPLETED";
  c.size = 42;
  ASSERT_TRUE(st->AddCheckpoint(c).ok());

  ExperimentSummaryService service(st.get());
  auto r = service.Summaries({*id, *id + 100});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  ASSERT_TRUE(r->contains(*id));
  EXPECT_EQ(r->at(*id).checkpoint_count, 1);
  EXPECT_EQ(r->at(*id).checkpoint_size, 42);
  EXPECT_FALSE(r->at(*id).best_metric.has_value());
  st.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace det::master::server
