// SlurmService against a fake Slurm (canned tool output) and a real SQLite store.
#include "master/server/slurm_service.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>

#include "common/test_dir.h"
#include "master/store/sqlite/sqlite_store.h"

namespace det::master::server {
namespace {

// Answers the Slurm tools from `squeue_out` etc.; records every command line.
struct FakeSlurm {
  std::mutex mu;
  std::vector<std::vector<std::string>> calls;
  std::string squeue_out;
  std::string sbatch_out = "41\n";
  int sbatch_exit = 0;

  SlurmService::Runner Runner() {
    return [this](const std::vector<std::string>& argv) -> Result<ProcessResult> {
      std::lock_guard<std::mutex> lock(mu);
      calls.push_back(argv);
      if (argv[0] == "sinfo") return ProcessResult{0, "compute*|n1|4|(null)\n"};
      if (argv[0] == "sbatch") return ProcessResult{sbatch_exit, sbatch_out};
      if (argv[0] == "squeue") return ProcessResult{0, squeue_out};
      if (argv[0] == "sacct") return ProcessResult{1, "accounting storage is disabled\n"};
      return ProcessResult{0, ""};
    };
  }
  void Squeue(std::string out) {
    std::lock_guard<std::mutex> lock(mu);
    squeue_out = std::move(out);
  }
  void Sbatch(std::string out, int exit_code = 0) {
    std::lock_guard<std::mutex> lock(mu);
    sbatch_out = std::move(out);
    sbatch_exit = exit_code;
  }
  bool Called(const std::string& tool, const std::string& arg) {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& c : calls) {
      if (c[0] == tool && std::find(c.begin(), c.end(), arg) != c.end()) return true;
    }
    return false;
  }
};

class SlurmServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_slurm_service_test_");
    auto s = store::SqliteStore::Open((dir_ / "det.db").string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    config_.job_storage_root = (dir_ / "jobs").string();
    config_.poll_interval_ms = 3600000;  // the tests poll by hand
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<SlurmService> NewService() {
    auto svc = std::make_unique<SlurmService>(config_, store_.get(), &clock_, fake_.Runner());
    SlurmService::Listener l;
    l.job_ended = [this](const std::string& id, const slurm::JobStatus& s) {
      std::lock_guard<std::mutex> lock(mu_);
      ended_.emplace_back(id, s.state_text);
    };
    l.exit_verdict = [this](const SlurmService::DeferredExit& d, bool infra, const std::string&) {
      std::lock_guard<std::mutex> lock(mu_);
      verdicts_.emplace_back(d.allocation_id, infra);
    };
    l.submit_failed = [this](const std::string& id, const Status& st) {
      std::lock_guard<std::mutex> lock(mu_);
      failed_.emplace_back(id, std::string(st.message()));
    };
    EXPECT_TRUE(svc->Start(std::move(l)).ok());
    return svc;
  }
  slurm::JobRequest Request(const std::string& alloc) {
    slurm::JobRequest r;
    r.allocation_id = alloc;
    r.name = "det-trial-1";
    r.partition = "compute";
    r.slots = 2;
    r.work_dir = config_.job_storage_root + "/" + alloc;
    r.agent_path = "/bin/determined-agent";
    r.master_url = "http://127.0.0.1:1";
    r.resource_pool = "compute";
    return r;
  }
  // Waits (bounded) until the queued submission has a job id.
  std::string WaitForJob(SlurmService& svc, const std::string& alloc) {
    for (int i = 0; i < 500; ++i) {
      auto info = svc.Job(alloc);
      if (info && !info->job_id.empty()) return info->job_id;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return "";
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::Store> store_;
  SystemClock clock_;
  FakeSlurm fake_;
  slurm::SlurmConfig config_;
  std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> ended_;
  std::vector<std::pair<std::string, bool>> verdicts_;
  std::vector<std::pair<std::string, std::string>> failed_;
};

TEST_F(SlurmServiceTest, SubmitsPersistsAndReadoptsAfterRestart) {
  {
    auto svc = NewService();
    svc->Submit(Request("t1.1"));
    ASSERT_EQ(WaitForJob(*svc, "t1.1"), "41");
    EXPECT_TRUE(fake_.Called("sbatch", "--cpus-per-task=2"));
    EXPECT_TRUE(std::filesystem::exists(config_.job_storage_root + "/t1.1/job.sh"));
    svc->Stop();
  }
  auto rows = store_->ListOpenSlurmJobs();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].job_id, "41");
  // A restarted master knows the job without submitting again.
  auto svc = NewService();
  EXPECT_TRUE(svc->Tracks("t1.1"));
  auto owner = svc->AllocationOfJob("41");
  ASSERT_TRUE(owner);
  EXPECT_EQ(owner->first, "t1.1");
  EXPECT_EQ(owner->second, 1);
}

TEST_F(SlurmServiceTest, RefusedSubmissionIsReported) {
  fake_.Sbatch("sbatch: error: invalid partition specified\n", 1);
  auto svc = NewService();
  svc->Submit(Request("t1.1"));
  for (int i = 0; i < 500 && svc->Tracks("t1.1"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  svc->Stop();
  ASSERT_EQ(failed_.size(), 1u);
  EXPECT_NE(failed_[0].second.find("invalid partition"), std::string::npos);
}

TEST_F(SlurmServiceTest, CancelledJobEndsTheAllocationAndVerdictsWaitForCompleting) {
  auto svc = NewService();
  svc->Submit(Request("t1.1"));
  ASSERT_EQ(WaitForJob(*svc, "t1.1"), "41");
  fake_.Squeue("41|PENDING|Resources|compute|1|100|0|det-trial-1\n");
  svc->PollNow();
  auto info = svc->Job("t1.1");
  ASSERT_TRUE(info && info->status);
  EXPECT_EQ(info->status->reason, "Resources");
  EXPECT_EQ(info->jobs_ahead, 0);

  // An exit while the job is COMPLETING waits; CANCELLED then makes it infrastructure.
  fake_.Squeue("41|COMPLETING|None|compute|1|100|0|det-trial-1\n");
  svc->DeferExit({"t1.1", "slurm-41-0", 143, "killed"});
  svc->PollNow();
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_TRUE(verdicts_.empty());
  }
  fake_.Squeue("41|CANCELLED|None|compute|1|100|0|det-trial-1\n");
  svc->PollNow();
  ASSERT_EQ(verdicts_.size(), 1u);
  EXPECT_TRUE(verdicts_[0].second);
  EXPECT_TRUE(ended_.empty());  // the verdict ended it, not job_ended
  EXPECT_FALSE(svc->Tracks("t1.1"));
  EXPECT_TRUE(store_->ListOpenSlurmJobs()->empty());

  // A job Slurm fails with no exit report: job_ended.
  fake_.Sbatch("42\n");
  svc->Submit(Request("t2.1"));
  ASSERT_EQ(WaitForJob(*svc, "t2.1"), "42");
  fake_.Squeue("42|NODE_FAIL|None|compute|1|100|0|det-trial-2\n");
  svc->PollNow();
  ASSERT_EQ(ended_.size(), 1u);
  EXPECT_EQ(ended_[0], std::make_pair(std::string("t2.1"), std::string("NODE_FAIL")));
}

TEST_F(SlurmServiceTest, RunningJobMeansTheExitIsTheTrialsAndForgetCancelsPending) {
  auto svc = NewService();
  svc->Submit(Request("t1.1"));
  ASSERT_EQ(WaitForJob(*svc, "t1.1"), "41");
  fake_.Squeue("41|RUNNING|None|compute|1|100|0|det-trial-1\n");
  svc->DeferExit({"t1.1", "slurm-41-0", 1, "exit 1"});
  svc->PollNow();
  ASSERT_EQ(verdicts_.size(), 1u);
  EXPECT_FALSE(verdicts_[0].second);

  fake_.Sbatch("43\n");
  svc->Submit(Request("t3.1"));
  ASSERT_EQ(WaitForJob(*svc, "t3.1"), "43");
  fake_.Squeue(
      "41|RUNNING|None|compute|1|100|0|det-trial-1\n43|PENDING|Priority|compute|1|100|0|det-trial-"
      "3\n");
  svc->Forget("t3.1");
  svc->PollNow();
  EXPECT_TRUE(fake_.Called("scancel", "43"));
  // Lost: squeue and sacct no longer know it.
  fake_.Squeue("");
  for (int i = 0; i < 3; ++i) svc->PollNow();
  EXPECT_FALSE(svc->Tracks("t3.1"));
}

TEST_F(SlurmServiceTest, ForgetWithoutGraceCancelsARunningJobAtOnce) {
  auto svc = NewService();
  svc->Submit(Request("t1.1"));
  ASSERT_EQ(WaitForJob(*svc, "t1.1"), "41");
  fake_.Squeue("41|RUNNING|None|compute|1|100|0|det-trial-1\n");
  svc->PollNow();
  // The default grace lets a running job end by itself: no scancel yet.
  fake_.Sbatch("42\n");
  svc->Submit(Request("t2.1"));
  ASSERT_EQ(WaitForJob(*svc, "t2.1"), "42");
  fake_.Squeue(
      "41|RUNNING|None|compute|1|100|0|det-trial-1\n42|RUNNING|None|compute|1|100|0|det-trial-"
      "2\n");
  svc->Forget("t1.1");
  svc->PollNow();
  EXPECT_FALSE(fake_.Called("scancel", "41"));
  // A lost agent's job: cancelled on the next poll.
  svc->Forget("t2.1", 0);
  svc->PollNow();
  EXPECT_TRUE(fake_.Called("scancel", "42"));
  EXPECT_FALSE(fake_.Called("scancel", "41"));
}

}  // namespace
}  // namespace det::master::server
