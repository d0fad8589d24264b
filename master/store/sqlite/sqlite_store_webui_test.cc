// ListExperimentIds against a real SQLite store: filters, sort keys, paging and the total.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/store_backends.h"

namespace det::master::store {
namespace {

class ExperimentIdsTest : public store_test::StoreTest {
 protected:
  ExperimentIdsTest() : StoreTest("det_store_webui_test_") {}
  void SetUp() override {
    StoreTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    admin_ = store_->GetUserByName("admin")->id;
    determined_ = store_->GetUserByName("determined")->id;
    // id 1: "mnist-a" ACTIVE by admin [x]; 2: "Mnist-b" PAUSED by determined [x, y], archived;
    // 3: "cifar" COMPLETED by determined [], two trials.
    a_ = Insert("mnist-a", "ACTIVE", admin_, {"x"}, false, 30, 0.5);
    b_ = Insert("Mnist-b", "PAUSED", determined_, {"x", "y"}, true, 10, 0.9);
    c_ = Insert("cifar", "COMPLETED", determined_, {}, false, 20, 1.0);
    for (int i = 0; i < 2; ++i) {
      TrialRow t;
      t.experiment_id = c_;
      t.request_id = "r" + std::to_string(i);
      t.hparams = nlohmann::json::object();
      t.state = "COMPLETED";
      ASSERT_TRUE(store_->InsertTrial(t).ok());
    }
  }
  int64_t Insert(const std::string& name, const std::string& state, int64_t owner,
                 std::vector<std::string> labels, bool archived, int64_t start, double progress) {
    ExperimentRow e;
    e.state = state;
    e.config = {{"name", name}, {"labels", labels}, {"description", "about " + name}};
    e.original_config = "name: " + name;
    e.owner_id = owner;
    e.job_id = "job-" + name;
    e.start_time = start;
    e.progress = progress;
    e.archived = archived;
    auto id = store_->InsertExperiment(e, "tgz");
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    if (archived) {
      EXPECT_TRUE(store_->UpdateExperimentMeta(*id, e.config, true, "").ok());
    }
    if (progress > 0) {
      EXPECT_TRUE(store_->UpdateExperimentProgress(*id, progress).ok());
    }
    return *id;
  }
  std::vector<int64_t> Ids(const ExperimentFilter& f, Page page = {}, int64_t* total = nullptr) {
    int64_t t = 0;
    auto r = store_->ListExperimentIds(f, page, &t);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (total) *total = t;
    return r.ok() ? *r : std::vector<int64_t>{};
  }

  int64_t admin_ = 0, determined_ = 0, a_ = 0, b_ = 0, c_ = 0;
};

TEST_P(ExperimentIdsTest, NoFilterListsAllById) {
  int64_t total = 0;
  EXPECT_EQ(Ids({}, {}, &total), (std::vector<int64_t>{a_, b_, c_}));
  EXPECT_EQ(total, 3);
}

TEST_P(ExperimentIdsTest, Filters) {
  ExperimentFilter f;
  f.states = {"PAUSED", "COMPLETED"};
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b_, c_}));
  f = {};
  f.usernames = {"admin"};
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{a_}));
  f = {};
  f.user_ids = {determined_};
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b_, c_}));
  f = {};
  f.labels = {"x"};
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{a_, b_}));
  f.labels = {"x", "y"};  // every label must be present
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b_}));
  f = {};
  f.name = "MNIST";  // case-insensitive substring
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{a_, b_}));
  f = {};
  f.description = "about cif";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{c_}));
  f = {};
  f.id_gt = a_;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b_, c_}));
  f.id_lte = b_;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b_}));
  f = {};
  f.id_gte = b_;
  f.id_lt = c_;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b_}));
  f = {};
  f.id_in = {a_, c_};
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{a_, c_}));
  f.id_not_in = {a_};
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{c_}));
  f = {};
  f.archived = false;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{a_, c_}));
  f.name = "mnist";
  f.usernames = {"determined"};
  EXPECT_EQ(Ids(f), std::vector<int64_t>{});
}

TEST_P(ExperimentIdsTest, SortsAndPages) {
  ExperimentFilter f;
  f.sort_by = ExperimentSortKey::kStartTime;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b_, c_, a_}));
  f.descending = true;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{a_, c_, b_}));
  f.sort_by = ExperimentSortKey::kName;
  f.descending = false;
  // Binary collation: upper case first.
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b_, c_, a_}));
  f.sort_by = ExperimentSortKey::kNumTrials;
  f.descending = true;
  EXPECT_EQ(Ids(f).front(), c_);
  f.sort_by = ExperimentSortKey::kProgress;
  f.descending = false;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{a_, b_, c_}));
  f.sort_by = ExperimentSortKey::kUser;
  EXPECT_EQ(Ids(f).front(), a_);
  f = {};
  int64_t total = 0;
  EXPECT_EQ(Ids(f, {1, 1}, &total), (std::vector<int64_t>{b_}));
  EXPECT_EQ(total, 3);
  EXPECT_EQ(Ids(f, {5, 10}, &total), std::vector<int64_t>{});
  EXPECT_EQ(total, 3);
  for (auto key : {ExperimentSortKey::kDescription, ExperimentSortKey::kEndTime,
                   ExperimentSortKey::kState, ExperimentSortKey::kForkedFrom,
                   ExperimentSortKey::kResourcePool, ExperimentSortKey::kCheckpointSize,
                   ExperimentSortKey::kCheckpointCount, ExperimentSortKey::kSearcherMetricVal}) {
    f.sort_by = key;
    EXPECT_EQ(Ids(f).size(), 3u);
  }
}

// The best validation value of each experiment's searcher metric, read from the trial summaries
// that AddMetrics keeps: smaller is better unless the config says otherwise.
TEST_P(ExperimentIdsTest, SortsBySearcherMetricValue) {
  auto report = [&](int64_t exp, double loss) {
    TrialRow t;
    t.experiment_id = exp;
    t.request_id = "m" + std::to_string(exp) + "-" + std::to_string(loss);
    t.hparams = nlohmann::json::object();
    t.state = "COMPLETED";
    auto id = store_->InsertTrial(t);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    MetricRow m;
    m.trial_id = *id;
    m.trial_run_id = 1;
    m.group = "validation";
    m.total_batches = 10;
    m.metrics = {{"validation_metrics", {{"loss", loss}}}};
    ASSERT_TRUE(store_->AddMetrics(m).ok());
  };
  for (int64_t exp : {a_, b_, c_}) {
    nlohmann::json config = {{"name", "e"}, {"searcher", {{"metric", "loss"}}}};
    ASSERT_TRUE(store_->UpdateExperimentMeta(exp, config, exp == b_, "").ok());
  }
  report(a_, 0.5);
  report(a_, 0.2);  // a's best: 0.2
  report(b_, 0.3);
  report(c_, 0.1);
  ExperimentFilter f;
  f.sort_by = ExperimentSortKey::kSearcherMetricVal;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{c_, a_, b_}));
  f.descending = true;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b_, a_, c_}));
}

DET_STORE_BACKENDS(ExperimentIdsTest);

}  // namespace
}  // namespace det::master::store
