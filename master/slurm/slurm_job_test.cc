#include "master/slurm/slurm_job.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "master/slurm/slurm_config.h"

namespace det::master::slurm {
namespace {

JobRequest Request(int64_t slots, const std::string& type = "cpu") {
  JobRequest r;
  r.allocation_id = "t1.1";
  r.name = "det-trial-1";
  r.partition = "debug";
  r.slot_type = type;
  r.slots = slots;
  r.work_dir = "/jobs/t1.1";
  r.agent_path = "/opt/det/determined-agent";
  r.master_url = "http://10.0.0.1:8080";
  r.resource_pool = "compute";
  return r;
}

bool Has(const std::vector<std::string>& args, const std::string& a) {
  return std::find(args.begin(), args.end(), a) != args.end();
}

TEST(ShapeJobTest, CpuSlotsFitOneNode) {
  auto shape = ShapeJob(Request(2), {1, 4, 0});
  ASSERT_TRUE(shape.ok()) << shape.status().ToString();
  EXPECT_EQ(shape->nodes, 1);
  EXPECT_EQ(shape->slots_per_node, 2);
  EXPECT_EQ(shape->cpus_per_node, 2);
}

TEST(ShapeJobTest, GpuSlotsSpreadEvenlyOverNodes) {
  auto shape = ShapeJob(Request(6, "cuda"), {4, 32, 4});
  ASSERT_TRUE(shape.ok()) << shape.status().ToString();
  EXPECT_EQ(shape->nodes, 2);
  EXPECT_EQ(shape->slots_per_node, 3);
  EXPECT_EQ(shape->cpus_per_node, 1);
}

TEST(ShapeJobTest, TooBigOrSingleNodeIsAClearError) {
  auto shape = ShapeJob(Request(16, "cuda"), {2, 32, 4});
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.status().message().find("needs 4 node(s)"), std::string::npos);
  JobRequest r = Request(8, "cuda");
  r.single_node = true;
  auto single = ShapeJob(r, {4, 32, 4});
  ASSERT_FALSE(single.ok());
  EXPECT_NE(single.status().message().find("is_single_node"), std::string::npos);
  EXPECT_FALSE(ShapeJob(Request(1, "cuda"), {2, 32, 0}).ok());  // no GPUs at all
}

TEST(SbatchArgsTest, NodesTasksCpusGpusAndNice) {
  JobRequest r = Request(8, "cuda");
  r.priority = 10;
  auto args = SbatchArgs(r, {2, 4, 1});
  EXPECT_TRUE(Has(args, "--parsable"));
  EXPECT_TRUE(Has(args, "--partition=debug"));
  EXPECT_TRUE(Has(args, "--nodes=2"));
  EXPECT_TRUE(Has(args, "--ntasks-per-node=1"));
  EXPECT_TRUE(Has(args, "--gpus-per-node=4"));
  EXPECT_TRUE(Has(args, "--nice=10"));
  EXPECT_TRUE(Has(args, "--no-requeue"));
  EXPECT_FALSE(Has(SbatchArgs(Request(2), {1, 2, 2}), "--gpus-per-node=2"));
  EXPECT_TRUE(Has(SbatchArgs(Request(2), {1, 2, 2}), "--cpus-per-task=2"));
}

TEST(BatchScriptTest, StartsOneSingleAllocationAgentPerNode) {
  JobRequest r = Request(2);
  r.harness_path = "/opt/it's/harness";
  std::string s = BatchScript(r, {1, 2, 2});
  EXPECT_EQ(s.rfind("#!/bin/sh\n", 0), 0u);
  EXPECT_NE(s.find("exec srun --ntasks-per-node=1"), std::string::npos);
  EXPECT_NE(s.find("slurm-${SLURM_JOB_ID}-${SLURM_NODEID}"), std::string::npos);
  EXPECT_NE(s.find("--exit-after-allocation"), std::string::npos);
  EXPECT_EQ(s.find("--agent-token-file"), std::string::npos);  // no secret configured
  r.agent_token_file = "/data/agent_token";
  EXPECT_NE(BatchScript(r, {1, 2, 2}).find("--agent-token-file '/data/agent_token'"),
            std::string::npos);
  EXPECT_EQ(s.find("--master-cert-file"), std::string::npos);  // plain http
  r.master_url = "https://10.0.0.1:8443";
  r.master_cert_file = "/etc/det/master.crt";
  std::string tls = BatchScript(r, {1, 2, 2});
  EXPECT_NE(tls.find("--master-url 'https://10.0.0.1:8443'"), std::string::npos) << tls;
  EXPECT_NE(tls.find("--master-cert-file '/etc/det/master.crt'"), std::string::npos) << tls;
  EXPECT_NE(s.find("--slots 2"), std::string::npos);
  EXPECT_NE(s.find("'http://10.0.0.1:8080'"), std::string::npos);
  EXPECT_NE(s.find("'/opt/it'\\''s/harness'"), std::string::npos);  // quoted for sh
}

TEST(AgentIdTest, RoundTrips) {
  EXPECT_EQ(AgentIdFor("123", 1), "slurm-123-1");
  auto p = ParseAgentId("slurm-123-1");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->first, "123");
  EXPECT_EQ(p->second, 1);
  EXPECT_FALSE(ParseAgentId("agent-1"));
  EXPECT_FALSE(ParseAgentId("slurm-x-1"));
  EXPECT_FALSE(ParseAgentId("slurm-12"));
}

TEST(SqueueTest, ParsesStatesReasonsAndOrder) {
  std::string out =
      "7|RUNNING|None|debug|1|4294901749|10|det-trial-1\n"
      "8|PENDING|Resources|debug|1|4294901758|0|det-trial-2\n"
      "9|PENDING|Priority|debug|1|4294901700|5|det|odd\n"
      "10|CANCELLED|None|debug|1|0|0|x\n"
      "garbage\n";
  auto jobs = ParseSqueue(out);
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].state, JobState::kRunning);
  EXPECT_EQ(jobs[1].reason, "Resources");
  EXPECT_EQ(jobs[2].name, "det|odd");
  EXPECT_EQ(jobs[3].state, JobState::kCancelled);
  EXPECT_EQ(JobsAhead(jobs, "8"), 0);
  EXPECT_EQ(JobsAhead(jobs, "9"), 1);
  EXPECT_FALSE(JobsAhead(jobs, "7"));  // running: not in the queue
}

TEST(JobStateTest, FinalAndInfrastructure) {
  EXPECT_EQ(ParseJobState("CANCELLED by 0"), JobState::kCancelled);
  EXPECT_FALSE(IsFinal(JobState::kCompleting));
  EXPECT_TRUE(IsFinal(JobState::kFailed));
  EXPECT_TRUE(IsInfrastructureEnd(JobState::kNodeFail));
  EXPECT_TRUE(IsInfrastructureEnd(JobState::kCancelled));
  EXPECT_FALSE(IsInfrastructureEnd(JobState::kFailed));
  EXPECT_FALSE(IsInfrastructureEnd(JobState::kCompleted));
  EXPECT_EQ(DescribePendingReason("None"), "");
  EXPECT_EQ(DescribePendingReason("Resources"), "Slurm: Resources (waiting for resources)");
}

TEST(SinfoTest, PartitionsWithSmallestNode) {
  auto parts = ParseSinfo(
      "debug*|n1|8|(null)\n"
      "debug*|n2|4|(null)\n"
      "gpu|g1|32|gpu:a100:4(S:0-1)\n"
      "gpu|g1|32|gpu:a100:4(S:0-1)\n");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts["debug"].nodes, 2);
  EXPECT_EQ(parts["debug"].cpus_per_node, 4);
  EXPECT_EQ(parts["gpu"].nodes, 1);
  EXPECT_EQ(parts["gpu"].gpus_per_node, 4);
}

TEST(SlurmConfigTest, PoolsMapToPartitionsAndBadValuesAreNamed) {
  nlohmann::json rm = {{"type", "slurm"},
                       {"slot_type", "cpu"},
                       {"master_port", 9000},
                       {"partition_overrides", {{"gpu", {{"slot_type", "cuda"}}}}}};
  nlohmann::json pools = {
      {{"pool_name", "compute"}, {"provider", {{"type", "hpc"}, {"partition", "debug"}}}},
      {{"pool_name", "gpu"}}};
  nlohmann::json rest, pools_rest;
  auto c = ParseSlurmConfig(rm, pools, &rest, &pools_rest);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->PartitionOf("compute"), "debug");
  EXPECT_EQ(c->PartitionOf("gpu"), "gpu");
  EXPECT_EQ(c->SlotTypeOf("gpu"), "cuda");
  EXPECT_EQ(c->SlotTypeOf("debug"), "cpu");
  EXPECT_EQ(c->master_port, 9000);
  EXPECT_FALSE(rest.contains("slot_type"));
  EXPECT_FALSE(pools_rest[0].contains("provider"));

  rm["slot_type"] = "tpu";
  auto bad = ParseSlurmConfig(rm, pools, &rest, &pools_rest);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("resource_manager.slot_type"), std::string::npos);
  EXPECT_NE(bad.status().message().find("tpu"), std::string::npos);
}

}  // namespace
}  // namespace det::master::slurm
