#include "master/slurm/agent_job.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace det::master::slurm {
namespace {

AgentJobRequest Request() {
  AgentJobRequest r;
  r.agent_id = "grow-agent-2";
  r.pool = "grow";
  r.slots = 2;
  r.partition = "compute";
  r.launched_at_ms = 1700000000123;
  r.agent_path = "/opt/det/determined-agent";
  r.master_url = "http://10.0.0.1:8080";
  r.data_dir = "/shared/agents/grow-agent-2";
  r.output = "/shared/agents/grow-agent-2.log";
  r.agent_token_file = "/etc/det/agent token";
  return r;
}

bool Has(const std::vector<std::string>& args, const std::string& a) {
  return std::find(args.begin(), args.end(), a) != args.end();
}

TEST(AgentSbatchArgsTest, OneAgentPerJobNamedAfterIt) {
  auto a = AgentSbatchArgs(Request());
  EXPECT_TRUE(Has(a, "--parsable"));
  EXPECT_TRUE(Has(a, "--job-name=grow-agent-2"));
  EXPECT_TRUE(Has(a, "--partition=compute"));
  EXPECT_TRUE(Has(a, "--nodes=1"));
  EXPECT_TRUE(Has(a, "--cpus-per-task=2"));
  EXPECT_TRUE(Has(a, "--no-requeue"));
  EXPECT_TRUE(Has(a, "--output=/shared/agents/grow-agent-2.log"));
  EXPECT_TRUE(Has(a, "--comment=det-agent|http://10.0.0.1:8080|1700000000123|grow"));
  EXPECT_TRUE(Has(a,
                  "--wrap=exec '/opt/det/determined-agent' --master-url 'http://10.0.0.1:8080' "
                  "--agent-id 'grow-agent-2' --resource-pool 'grow' --slot-type cpu --slots 2 "
                  "--data-dir '/shared/agents/grow-agent-2' --agent-token-file "
                  "'/etc/det/agent token'"));
}

TEST(AgentSbatchArgsTest, GpuSlotsAndDefaultPartition) {
  AgentJobRequest r = Request();
  r.slot_type = "cuda";
  r.slots = 4;
  r.partition = "";
  r.agent_token_file = "";
  auto a = AgentSbatchArgs(r);
  EXPECT_TRUE(Has(a, "--gpus-per-node=4"));
  EXPECT_TRUE(Has(a, "--cpus-per-task=1"));
  EXPECT_FALSE(std::any_of(a.begin(), a.end(),
                           [](const std::string& s) { return s.rfind("--partition", 0) == 0; }));
  EXPECT_NE(a.back().find("--slot-type cuda --slots 4"), std::string::npos);
  EXPECT_EQ(a.back().find("--agent-token-file"), std::string::npos);
  // A zero-slot agent still asks for one CPU.
  r.slot_type = "cpu";
  r.slots = 0;
  EXPECT_TRUE(Has(AgentSbatchArgs(r), "--cpus-per-task=1"));
}

TEST(ParseAgentJobsTest, OnlyThisMastersAgents) {
  std::string out =
      "12|RUNNING|grow-agent-1|det-agent|http://10.0.0.1:8080|1700000000000|grow\n"
      "13|PENDING|grow-agent-2|det-agent|http://10.0.0.1:8080|1700000000500|grow|odd\n"
      "14|RUNNING|det-trial-3|determined allocation t3.1\n"
      "15|RUNNING|grow-agent-1|det-agent|http://10.0.0.2:8080|1700000000000|grow\n"
      "16|RUNNING|mine|(null)\n"
      "garbage\n";
  auto jobs = ParseAgentJobs(out, "http://10.0.0.1:8080");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].job_id, "12");
  EXPECT_EQ(jobs[0].agent_id, "grow-agent-1");
  EXPECT_EQ(jobs[0].state, "RUNNING");
  EXPECT_EQ(jobs[0].pool, "grow");
  EXPECT_EQ(jobs[0].launched_at_ms, 1700000000000);
  EXPECT_EQ(jobs[1].agent_id, "grow-agent-2");
  EXPECT_EQ(jobs[1].state, "PENDING");
  EXPECT_EQ(jobs[1].pool, "grow|odd");
}

}  // namespace
}  // namespace det::master::slurm
