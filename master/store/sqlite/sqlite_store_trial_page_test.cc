// reads14: Store::GetTrialViewRows on both backends reads for each trial what the single-trial
// reads (GetTrial, ListTaskIds, GetTrialSummaryMetrics, GetTrialValidations,
// ListCheckpointsForTrial) read, in the order asked, across chunks of ids.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/store_backends.h"
#include "master/store/test_rows.h"

namespace det::master::store {
namespace {

using nlohmann::json;

class TrialPageTest : public store_test::StoreTest {
 protected:
  TrialPageTest() : StoreTest("det_store_trial_page_test_") {}
  void SetUp() override {
    StoreTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ExperimentRow e;
    e.state = "ACTIVE";
    e.config = {{"name", "page"}, {"searcher", {{"metric", "loss"}, {"smaller_is_better", true}}}};
    e.owner_id = store_->GetUserByName("admin")->id;
    e.job_id = "job-page";
    auto id = store_->InsertExperiment(e, "");
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    experiment_ = *id;
  }
  int64_t NewTrial(const std::string& request) {
    TrialRow t = store_test::TestTrialRow(experiment_, request);
    t.hparams = {{"lr", 0.1}};
    t.metadata = {{"k", request}};
    auto id = store_->InsertTrial(t);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }
  static MetricRow Report(int64_t trial, const std::string& group, int64_t steps, double loss) {
    MetricRow m;
    m.trial_id = trial;
    m.trial_run_id = 1;
    m.group = group;
    m.total_batches = steps;
    m.metrics = {{group == "validation" ? "validation_metrics" : "avg_metrics", {{"loss", loss}}}};
    m.report_time = steps;
    return m;
  }
  // The page read's entry equals what the single-trial reads find.
  void ExpectSameAsSingleReads(const TrialViewRows& got) {
    const int64_t id = got.row.id;
    auto row = store_->GetTrial(id);
    ASSERT_TRUE(row.ok());
    EXPECT_EQ(got.row.request_id, row->request_id);
    EXPECT_EQ(got.row.hparams, row->hparams);
    EXPECT_EQ(got.row.metadata, row->metadata);
    EXPECT_EQ(got.row.task_id, row->task_id);
    EXPECT_EQ(got.row.total_batches, row->total_batches);
    EXPECT_EQ(got.task_ids, *store_->ListTaskIds(id)) << "trial " << id;
    EXPECT_EQ(got.summary_metrics, *store_->GetTrialSummaryMetrics(id)) << "trial " << id;
    auto vals = store_->GetTrialValidations(id);
    ASSERT_TRUE(vals.ok());
    auto same = [](const std::optional<MetricRow>& a, const std::optional<MetricRow>& b) {
      if (!a || !b) return !a && !b;
      return a->id == b->id && a->metrics == b->metrics && a->total_batches == b->total_batches &&
             a->report_time == b->report_time && a->group == b->group;
    };
    EXPECT_TRUE(same(got.validations.best, vals->best)) << "trial " << id;
    EXPECT_TRUE(same(got.validations.latest, vals->latest)) << "trial " << id;
    auto ckpts = store_->ListCheckpointsForTrial(id);
    ASSERT_TRUE(ckpts.ok());
    ASSERT_EQ(got.checkpoints.size(), ckpts->size()) << "trial " << id;
    for (size_t i = 0; i < ckpts->size(); ++i) {
      EXPECT_EQ(got.checkpoints[i].uuid, (*ckpts)[i].uuid);
      EXPECT_EQ(got.checkpoints[i].size, (*ckpts)[i].size);
      EXPECT_EQ(got.checkpoints[i].metadata, (*ckpts)[i].metadata);
    }
  }

  int64_t experiment_ = 0;
};

TEST_P(TrialPageTest, ReadsWhatTheSingleTrialReadsReadInTheOrderAsked) {
  const int64_t busy = NewTrial("busy"), quiet = NewTrial("quiet"), other = NewTrial("other");
  for (const Status& st : store_->AddMetricsBatch(std::vector<MetricRow>{
           Report(busy, "training", 10, 2.0), Report(busy, "validation", 10, 0.5),
           Report(busy, "training", 20, 1.0), Report(busy, "validation", 20, 0.7),
           Report(other, "training", 5, 3.0)})) {
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  for (const char* task : {"b-task-2", "b-task-1"}) {
    AllocationRow a;
    a.allocation_id = std::string(task) + ".alloc";
    a.task_id = task;
    a.trial_id = busy;
    a.state = "TERMINATED";
    a.token = std::string("tok-") + task;
    ASSERT_TRUE(store_->UpsertAllocation(a).ok());
  }
  for (int64_t steps : {20, 10}) {
    CheckpointRow c;
    c.uuid = "ckpt-" + std::to_string(steps);
    c.task_id = "b-task-1";
    c.trial_id = busy;
    c.report_time = steps;
    c.state = "COMPLETED";
    c.metadata = {{"steps", steps}};
    c.steps_completed = steps;
    c.size = steps * 100;
    ASSERT_TRUE(store_->AddCheckpoint(c).ok());
  }

  // An unknown id is left out; a repeated one read once.
  auto page = store_->GetTrialViewRows({other, busy, 999999, quiet, busy});
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->size(), 3u);
  EXPECT_EQ((*page)[0].row.id, other);
  EXPECT_EQ((*page)[1].row.id, busy);
  EXPECT_EQ((*page)[2].row.id, quiet);
  for (const TrialViewRows& v : *page) ExpectSameAsSingleReads(v);
  EXPECT_EQ((*page)[1].task_ids, (std::vector<std::string>{"b-task-1", "b-task-2"}));
  ASSERT_EQ((*page)[1].checkpoints.size(), 2u);
  EXPECT_EQ((*page)[1].checkpoints[0].uuid, "ckpt-10");
  ASSERT_TRUE((*page)[1].validations.best.has_value());
  EXPECT_EQ((*page)[1].validations.best->total_batches, 10);
  EXPECT_EQ((*page)[2].summary_metrics, json::object());

  auto none = store_->GetTrialViewRows({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(TrialPageTest, ManyIdsAreReadInChunks) {
  // More ids than one statement binds (500).
  std::vector<TrialRow> trials;
  for (int i = 0; i < 1203; ++i) {
    TrialRow t;
    t.id = 1000 + i;
    t.experiment_id = experiment_;
    t.request_id = "r" + std::to_string(i);
    t.hparams = json::object();
    t.state = "COMPLETED";
    t.task_id = std::to_string(experiment_) + "." + std::to_string(i);
    trials.push_back(t);
  }
  ASSERT_TRUE(store_->BulkInsert({}, "", trials, {}).ok());
  std::vector<int64_t> ids;
  for (int i = 1202; i >= 0; --i) ids.push_back(1000 + i);
  auto page = store_->GetTrialViewRows(ids);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_EQ((*page)[i].row.id, ids[i]);
    EXPECT_EQ((*page)[i].row.request_id, "r" + std::to_string(ids[i] - 1000));
  }
}

DET_STORE_BACKENDS(TrialPageTest);

}  // namespace
}  // namespace det::master::store
