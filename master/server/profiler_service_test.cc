// ProfilerService against a real SQLite store in a temp dir.
#include "master/server/profiler_service.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "common/test_dir.h"
#include "master/server/master.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

using nlohmann::json;

class ProfilerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_profiler_service_test_");
    auto s = store::SqliteStore::Open((dir_ / "det.db").string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
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
    t.run_id = 2;
    auto tid = store_->InsertTrial(t);
    ASSERT_TRUE(tid.ok());
    trial_ = *tid;
    service_ = std::make_unique<ProfilerService>(store_.get(), &clock_);
    chief_.is_allocation = true;
    chief_.allocation_id = "1.1.2";
    chief_.trial_id = trial_;
  }
  void TearDown() override {
    service_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ProfilerService> service_;
  Principal chief_;
  int64_t trial_ = 0;
};

TEST_F(ProfilerServiceTest, ReportsBecomeSeriesAndPoints) {
  ASSERT_TRUE(service_
                  ->Report(chief_, trial_, 2, "cpu", {{"agent-1", {{"cpu_util_simple", 12.5}}}},
                           std::nullopt)
                  .ok());
  ASSERT_TRUE(service_
                  ->Report(chief_, trial_, 2, "gpu",
                           {{"agent-1",
                             {{"GPU-a", {{"gpu_util", 40}, {"gpu_free_memory", 1e9}}},
                              {"GPU-b", {{"gpu_util", 60}, {"gpu_free_memory", 2e9}}}}}},
                           int64_t{1700000000000123})
                  .ok());
  ASSERT_TRUE(
      service_
          ->Report(chief_, trial_, 2, "cpu", {{"agent-1", {{"cpu_util_simple", 30}}}}, std::nullopt)
          .ok());

  auto series = service_->AvailableSeries(trial_);
  ASSERT_TRUE(series.ok()) << series.status().ToString();
  ASSERT_EQ(series->size(), 5u);  // cpu_util_simple + 2 GPUs x 2 metrics
  EXPECT_EQ((*series)[0].name, "cpu_util_simple");
  EXPECT_EQ((*series)[0].agent_id, "agent-1");
  EXPECT_EQ((*series)[1].gpu_uuid, "GPU-a");

  auto cpu = service_->Points(trial_, "cpu_util_simple", "agent-1", "", 0, 100);
  ASSERT_TRUE(cpu.ok());
  ASSERT_EQ(cpu->points.size(), 2u);
  EXPECT_EQ(cpu->points[0].value, 12.5);
  EXPECT_EQ(cpu->points[0].time, clock_.NowMicros());
  EXPECT_EQ(cpu->points[1].value, 30);
  // The cursor continues after the last report read.
  auto more = service_->Points(trial_, "cpu_util_simple", "", "", cpu->last_row, 100);
  ASSERT_TRUE(more.ok());
  EXPECT_TRUE(more->points.empty());
  EXPECT_EQ(more->last_row, cpu->last_row);

  auto gpus = service_->Points(trial_, "gpu_util", "agent-1", "", 0, 100);
  ASSERT_TRUE(gpus.ok());
  ASSERT_EQ(gpus->points.size(), 2u);
  EXPECT_EQ(gpus->points[1].series.gpu_uuid, "GPU-b");
  EXPECT_EQ(gpus->points[1].value, 60);
  EXPECT_EQ(gpus->points[1].time, 1700000000000123);
  auto one_gpu = service_->Points(trial_, "gpu_util", "agent-1", "GPU-a", 0, 100);
  ASSERT_TRUE(one_gpu.ok());
  ASSERT_EQ(one_gpu->points.size(), 1u);
  EXPECT_EQ(one_gpu->points[0].value, 40);

  auto unknown = service_->Points(trial_, "loss", "", "", 0, 100);
  ASSERT_TRUE(unknown.ok());
  EXPECT_TRUE(unknown->points.empty());
}

TEST_F(ProfilerServiceTest, RefusesOtherTrialsStaleRunsAndBadReports) {
  Principal other = chief_;
  other.trial_id = trial_ + 1;
  Status st =
      service_->Report(other, trial_, 2, "cpu", {{"a", {{"cpu_util_simple", 1}}}}, std::nullopt);
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  st = service_->Report(chief_, trial_, 1, "cpu", {{"a", {{"cpu_util_simple", 1}}}}, std::nullopt);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("run id 1"), std::string::npos);
  Principal user;
  user.user_id = 1;
  st =
      service_->Report(user, trial_ + 7, 2, "cpu", {{"a", {{"cpu_util_simple", 1}}}}, std::nullopt);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  st =
      service_->Report(chief_, trial_, 2, "cpu", {{"a", {{"cpu_util_simple", "x"}}}}, std::nullopt);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  auto series = service_->AvailableSeries(trial_);
  ASSERT_TRUE(series.ok());
  EXPECT_TRUE(series->empty());
  EXPECT_EQ(service_->AvailableSeries(trial_ + 7).status().code(), StatusCode::kNotFound);
}

TEST_F(ProfilerServiceTest, WaitForReportWakesOnAReport) {
  uint64_t seen = service_->reports();
  std::thread reporter([&] {
    ASSERT_TRUE(
        service_->Report(chief_, trial_, 2, "memory", {{"a", {{"memory_free", 5}}}}, std::nullopt)
            .ok());
  });
  service_->WaitForReport(seen, 60000);  // returns on the report, not at the timeout
  reporter.join();
  EXPECT_NE(service_->reports(), seen);
}

}  // namespace
}  // namespace det::master::server
