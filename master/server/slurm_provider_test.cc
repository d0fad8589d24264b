// SlurmProvider against a fake Slurm (canned tool output): what it submits, how it reads the
// queue back, and how it stops an agent.
#include "master/server/slurm_provider.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "common/test_dir.h"

namespace det::master::server {
namespace {

class SlurmProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = det::testing::FreshTestDir("det_slurm_provider_test_");
    scheduler::ProvisionerConfig::Slurm pool;
    pool.partition = "compute";
    pool.slurm_conf = "/d/slurm.conf";
    SlurmProvider::Options o;
    o.master_url = "http://127.0.0.1:9";
    o.agent_binary = "/bin/determined-agent";
    o.root = dir_.string();
    o.agent_token_file = "/d/agent_token";
    o.grace_ms = 10000;
    provider_ = std::make_unique<SlurmProvider>(
        o, std::map<std::string, scheduler::ProvisionerConfig::Slurm>{{"grow", pool}}, &clock_,
        [this](const scheduler::ProvisionerConfig::Slurm& p,
               const std::vector<std::string>& argv) -> Result<ProcessResult> {
          EXPECT_EQ(p.slurm_conf, "/d/slurm.conf");
          calls_.push_back(argv);
          if (argv[0] == "sbatch") return ProcessResult{0, "77\n"};
          if (argv[0] == "squeue") return ProcessResult{0, squeue_};
          return ProcessResult{0, ""};
        });
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  bool Called(const std::vector<std::string>& argv) {
    return std::find(calls_.begin(), calls_.end(), argv) != calls_.end();
  }

  std::filesystem::path dir_;
  FakeClock clock_{1000000};
  std::vector<std::vector<std::string>> calls_;
  std::string squeue_;
  std::unique_ptr<SlurmProvider> provider_;
};

TEST_F(SlurmProviderTest, LaunchSubmitsOneAgentJob) {
  ASSERT_TRUE(provider_->Launch({"grow-agent-1", "grow", 1, 5000}).ok());
  ASSERT_EQ(calls_.size(), 1u);
  const auto& a = calls_[0];
  EXPECT_EQ(a[0], "sbatch");
  EXPECT_NE(std::find(a.begin(), a.end(), "--job-name=grow-agent-1"), a.end());
  EXPECT_NE(std::find(a.begin(), a.end(), "--partition=compute"), a.end());
  EXPECT_NE(std::find(a.begin(), a.end(), "--comment=det-agent|http://127.0.0.1:9|5000|grow"),
            a.end());
  EXPECT_NE(a.back().find("--agent-token-file '/d/agent_token'"), std::string::npos) << a.back();
  EXPECT_NE(a.back().find("--data-dir '" + dir_.string() + "/grow-agent-1'"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_directory(dir_ / "grow-agent-1"));
}

TEST_F(SlurmProviderTest, ListReadsThisMastersJobsAndStopEscalates) {
  squeue_ =
      "12|RUNNING|grow-agent-1|det-agent|http://127.0.0.1:9|5000|grow\n"
      "13|PENDING|grow-agent-2|det-agent|http://127.0.0.1:9|6000|grow\n"
      "14|RUNNING|det-trial-3|determined allocation t3.1\n";
  auto listed = provider_->List();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].agent_id, "grow-agent-1");
  EXPECT_EQ((*listed)[0].pool, "grow");
  EXPECT_EQ((*listed)[0].launched_at_ms, 5000);

  // Running: SIGTERM to the agent; pending: cancelled outright.
  ASSERT_TRUE(provider_->Stop("grow-agent-1").ok());
  EXPECT_TRUE(Called({"scancel", "--full", "--signal=TERM", "12"}));
  ASSERT_TRUE(provider_->Stop("grow-agent-2").ok());
  EXPECT_TRUE(Called({"scancel", "13"}));
  // Still there after the grace: scancel, once.
  clock_.Advance(11000 * 1000);
  squeue_ = "12|RUNNING|grow-agent-1|det-agent|http://127.0.0.1:9|5000|grow\n";
  ASSERT_TRUE(provider_->List().ok());
  EXPECT_TRUE(Called({"scancel", "12"}));
  size_t n = calls_.size();
  ASSERT_TRUE(provider_->List().ok());
  EXPECT_EQ(calls_.size(), n + 1);  // just the squeue
}

}  // namespace
}  // namespace det::master::server
