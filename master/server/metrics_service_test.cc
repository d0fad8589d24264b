// MetricsService against a real SQLite store in a temp dir. Batches are driven by hand
// (start_writer = false) or, for the writer thread, held with the before_commit hook: no sleeps.
#include "master/server/metrics_service.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

using nlohmann::json;

// Collects the outcomes of reports; Wait blocks until `n` have arrived.
class Outcomes {
 public:
  MetricsService::Done Slot(size_t i) {
    return [this, i](Status st) {
      std::lock_guard<std::mutex> lock(mu_);
      results_[i] = std::move(st);
      answered_++;
      cv_.notify_all();
    };
  }
  explicit Outcomes(size_t n) : results_(n, Internal("not answered")) {}
  void Wait(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return answered_ >= n; });
  }
  size_t answered() {
    std::lock_guard<std::mutex> lock(mu_);
    return answered_;
  }
  Status result(size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    return results_[i];
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Status> results_;
  size_t answered_ = 0;
};

class MetricsServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_metrics_service_test_");
    Open();
    ASSERT_TRUE(store_->EnsureBuiltinUsers(std::nullopt).ok());
    store::ExperimentRow e;
    e.state = "ACTIVE";
    e.config = {{"name", "x"}};
    e.owner_id = 1;
    auto id = store_->InsertExperiment(e, "tgz");
    ASSERT_TRUE(id.ok());
    store::TrialRow t;
    t.experiment_id = *id;
    t.request_id = "r";
    t.hparams = json::object();
    t.state = "ACTIVE";
    auto tid = store_->InsertTrial(t);
    ASSERT_TRUE(tid.ok());
    trial_ = *tid;
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Open() {
    auto s = store::SqliteStore::Open((dir_ / "det.db").string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }

  store::MetricRow Row(int64_t steps, double loss, int64_t run = 1,
                       const std::string& group = "training") {
    store::MetricRow m;
    m.trial_id = trial_;
    m.trial_run_id = run;
    m.total_batches = steps;
    m.group = group;
    m.metrics = {{"avg_metrics", {{"loss", loss}}}};
    m.report_time = 1000 + steps;
    return m;
  }
  size_t Stored(const std::string& group = "training") {
    auto rows = store_->ListMetrics(trial_, group);
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? rows->size() : 0;
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::Store> store_;
  int64_t trial_ = 0;
};

MetricsServiceOptions Manual() {
  MetricsServiceOptions o;
  o.start_writer = false;
  return o;
}

// Ensures queued reports are answered only by a commit, all in one transaction, and raise the
// trial's progress to the highest step.
TEST_F(MetricsServiceTest, QueuedReportsCommitTogetherBeforeTheyAreAnswered) {
  MetricsService service(store_.get(), Manual());
  Outcomes out(5);
  for (int i = 0; i < 5; ++i) service.Submit(Row(i + 1, 0.1 * i), out.Slot(i));
  EXPECT_EQ(out.answered(), 0u);
  EXPECT_EQ(service.queued(), 5u);
  EXPECT_EQ(Stored(), 0u);

  EXPECT_EQ(service.CommitPending(), 5u);
  EXPECT_EQ(out.answered(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(out.result(i).ok()) << out.result(i).ToString();
  EXPECT_EQ(Stored(), 5u);
  EXPECT_EQ(store_->GetTrial(trial_)->total_batches, 5);
  MetricsService::Stats stats = service.stats();
  EXPECT_EQ(stats.batches, 1);
  EXPECT_EQ(stats.rows, 5);
  EXPECT_EQ(stats.max_batch, 5);
  EXPECT_EQ(stats.failed, 0);
}

// Ensures a report for a trial that does not exist fails alone; the rest of its batch commits.
TEST_F(MetricsServiceTest, BadReportFailsAloneInItsBatch) {
  MetricsService service(store_.get(), Manual());
  Outcomes out(3);
  service.Submit(Row(1, 0.5), out.Slot(0));
  store::MetricRow bad = Row(2, 0.5);
  bad.trial_id = 999999;
  service.Submit(bad, out.Slot(1));
  service.Submit(Row(3, 0.5), out.Slot(2));
  EXPECT_EQ(service.CommitPending(), 3u);
  EXPECT_TRUE(out.result(0).ok());
  EXPECT_FALSE(out.result(1).ok());
  EXPECT_TRUE(out.result(2).ok());
  EXPECT_EQ(Stored(), 2u);
  EXPECT_EQ(store_->GetTrial(trial_)->total_batches, 3);
  EXPECT_EQ(service.stats().failed, 1);
  EXPECT_EQ(service.stats().batches, 1);
}

// Ensures the store's semantics hold inside one batch: a repeated (trial, run, group, steps)
// merges into one row, and a later run archives the earlier run's rows from its step on.
TEST_F(MetricsServiceTest, RepeatedReportsMergeAndLaterRunsArchive) {
  MetricsService service(store_.get(), Manual());
  Outcomes out(6);
  service.Submit(Row(1, 0.9), out.Slot(0));
  service.Submit(Row(2, 0.8), out.Slot(1));
  store::MetricRow retry = Row(2, 0.8);
  retry.metrics = {{"avg_metrics", {{"accuracy", 0.5}}}};  // a second part of step 2
  service.Submit(retry, out.Slot(2));
  service.Submit(Row(3, 0.7), out.Slot(3));
  service.Submit(Row(2, 0.6, /*run=*/2), out.Slot(4));  // restarted from step 1's checkpoint
  service.Submit(Row(1, 0.1, 1, "validation"), out.Slot(5));
  EXPECT_EQ(service.CommitPending(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(out.result(i).ok()) << out.result(i).ToString();

  auto rows = store_->ListMetrics(trial_, "training");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);  // run 1 step 1, run 2 step 2; run 1 steps 2 and 3 archived
  EXPECT_EQ((*rows)[0].trial_run_id, 1);
  EXPECT_EQ((*rows)[0].total_batches, 1);
  EXPECT_EQ((*rows)[1].trial_run_id, 2);
  EXPECT_DOUBLE_EQ((*rows)[1].metrics["avg_metrics"]["loss"].get<double>(), 0.6);
  EXPECT_EQ(Stored("validation"), 1u);
  EXPECT_EQ(store_->GetTrial(trial_)->total_batches, 3);
}

// Ensures the merge of two parts of one step (same run) keeps both parts' values.
TEST_F(MetricsServiceTest, PartsOfOneStepMerge) {
  MetricsService service(store_.get(), Manual());
  Outcomes out(2);
  service.Submit(Row(4, 0.3), out.Slot(0));
  store::MetricRow part = Row(4, 0.3);
  part.metrics = {{"avg_metrics", {{"accuracy", 0.75}}}};
  service.Submit(part, out.Slot(1));
  service.CommitPending();
  auto rows = store_->ListMetrics(trial_, "training");
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_DOUBLE_EQ((*rows)[0].metrics["avg_metrics"]["loss"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ((*rows)[0].metrics["avg_metrics"]["accuracy"].get<double>(), 0.75);
}

// Ensures a batch holds at most max_batch_rows reports.
TEST_F(MetricsServiceTest, BatchesAreCapped) {
  MetricsServiceOptions o = Manual();
  o.max_batch_rows = 2;
  MetricsService service(store_.get(), o);
  Outcomes out(5);
  for (int i = 0; i < 5; ++i) service.Submit(Row(i + 1, 0.5), out.Slot(i));
  EXPECT_EQ(service.CommitPending(), 5u);
  EXPECT_EQ(service.stats().batches, 3);
  EXPECT_EQ(service.stats().max_batch, 2);
  EXPECT_EQ(Stored(), 5u);
}

// Ensures the writer thread group-commits: every report that arrives while a commit runs goes
// into the next transaction, and each is answered after that one commits.
TEST_F(MetricsServiceTest, WriterCommitsWhatArrivedDuringTheLastCommitInOneBatch) {
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, released = false;
  std::vector<size_t> sizes;
  MetricsServiceOptions o;
  o.before_commit = [&](size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    sizes.push_back(n);
    if (sizes.size() == 1) {
      entered = true;
      cv.notify_all();
      cv.wait(lock, [&] { return released; });
    }
  };
  MetricsService service(store_.get(), o);
  Outcomes out(11);
  service.Submit(Row(1, 0.5), out.Slot(0));
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return entered; });  // the writer holds report 0 in its first commit
  }
  for (int i = 1; i <= 10; ++i) service.Submit(Row(i + 1, 0.5), out.Slot(i));
  EXPECT_EQ(out.answered(), 0u);
  {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
    cv.notify_all();
  }
  out.Wait(11);
  for (int i = 0; i <= 10; ++i) EXPECT_TRUE(out.result(i).ok());
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(sizes, (std::vector<size_t>{1, 10}));
  }
  EXPECT_EQ(service.stats().batches, 2);
  EXPECT_EQ(Stored(), 11u);
}

// Ensures Stop commits and answers what is queued, and refuses reports after it.
TEST_F(MetricsServiceTest, StopCommitsQueuedReportsAndRefusesLaterOnes) {
  MetricsService service(store_.get(), Manual());
  Outcomes out(3);
  service.Submit(Row(1, 0.5), out.Slot(0));
  service.Submit(Row(2, 0.5), out.Slot(1));
  service.Stop();
  EXPECT_TRUE(out.result(0).ok());
  EXPECT_TRUE(out.result(1).ok());
  service.Submit(Row(3, 0.5), out.Slot(2));
  EXPECT_EQ(out.result(2).code(), StatusCode::kUnavailable);
  EXPECT_EQ(Stored(), 2u);
}

// Ensures an answered report is in the database file: a new connection (a restarted master)
// reads every one of them.
TEST_F(MetricsServiceTest, AnsweredReportsAreInTheDatabaseFile) {
  const int n = 200;
  Outcomes out(n);
  {
    MetricsService service(store_.get());
    for (int i = 0; i < n; ++i) service.Submit(Row(i + 1, 0.5), out.Slot(i));
    out.Wait(n);
  }
  for (int i = 0; i < n; ++i) ASSERT_TRUE(out.result(i).ok());
  auto reopened = store::SqliteStore::Open((dir_ / "det.db").string());
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ((*reopened)->ListMetrics(trial_, "training")->size(), static_cast<size_t>(n));
}

}  // namespace
}  // namespace det::master::server
