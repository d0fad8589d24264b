#include "master/scheduler/provisioner.h"

#include <gtest/gtest.h>

namespace det::master::scheduler {
namespace {

using nlohmann::json;

ProvisionerConfig Config(int min, int max, int slots = 2) {
  ProvisionerConfig c;
  c.type = "local";
  c.min_instances = min;
  c.max_instances = max;
  c.slots_per_agent = slots;
  c.max_idle_agent_period_ms = 10'000;
  c.max_agent_starting_period_ms = 60'000;
  return c;
}

ProvisionedAgent Starting(const std::string& id, int64_t at) { return {id, false, at, {}}; }
ProvisionedAgent Busy(const std::string& id) { return {id, true, 0, {}}; }
ProvisionedAgent Idle(const std::string& id, int64_t since) { return {id, true, 0, since}; }

TEST(ParseDurationMsTest, ReadsDeterminedDurations) {
  EXPECT_EQ(*ParseDurationMs("30s", "p"), 30'000);
  EXPECT_EQ(*ParseDurationMs("5m", "p"), 300'000);
  EXPECT_EQ(*ParseDurationMs("1h30m", "p"), 5'400'000);
  EXPECT_EQ(*ParseDurationMs("250ms", "p"), 250);
  EXPECT_EQ(*ParseDurationMs(2, "p"), 2'000);
  EXPECT_EQ(ParseDurationMs("soon", "x.max_idle_agent_period").status().message(),
            "x.max_idle_agent_period: must be a duration such as \"30s\", \"5m\" or \"1h\" (got "
            "\"soon\")");
  EXPECT_FALSE(ParseDurationMs(-1, "p").ok());
  EXPECT_FALSE(ParseDurationMs("5d", "p").ok());
}

TEST(ParseProvisionerConfigTest, DeterminedNamesAndAliases) {
  auto c = ParseProvisionerConfig(json{{"type", "local"},
                                       {"min_instances", 0},
                                       {"max_instances", 2},
                                       {"max_idle_agent_period", "3s"},
                                       {"max_agent_starting_period", "1m"},
                                       {"slots_per_agent", 1}},
                                  "resource_pools[0].provider");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->max_instances, 2);
  EXPECT_EQ(c->max_idle_agent_period_ms, 3000);
  EXPECT_EQ(c->max_agent_starting_period_ms, 60000);
  auto alias =
      ParseProvisionerConfig(json{{"type", "slurm"}, {"min_agents", 1}, {"max_agents", 3}}, "p");
  ASSERT_TRUE(alias.ok());
  EXPECT_EQ(alias->min_instances, 1);
  EXPECT_EQ(alias->max_instances, 3);
}

TEST(ParseProvisionerConfigTest, SlurmFields) {
  auto c = ParseProvisionerConfig(json{{"type", "slurm"},
                                       {"partition", "batch"},
                                       {"slurm_conf", "/etc/slurm/slurm.conf"},
                                       {"path", "/opt/slurm/bin"},
                                       {"agent_path", "/shared/determined-agent"},
                                       {"job_storage_root", "/shared/agents"},
                                       {"master_url", "http://login1:8080"}},
                                  "p");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->slurm.partition, "batch");
  EXPECT_EQ(c->slurm.slot_type, "cpu");
  EXPECT_EQ(c->slurm.slurm_conf, "/etc/slurm/slurm.conf");
  EXPECT_EQ(c->slurm.path, "/opt/slurm/bin");
  EXPECT_EQ(c->slurm.agent_path, "/shared/determined-agent");
  EXPECT_EQ(c->slurm.job_storage_root, "/shared/agents");
  EXPECT_EQ(c->slurm.master_url, "http://login1:8080");
  EXPECT_EQ(
      ParseProvisionerConfig(json{{"type", "local"}, {"partition", "x"}}, "p").status().message(),
      "p.partition: only for type slurm (type is local)");
  EXPECT_EQ(
      ParseProvisionerConfig(json{{"type", "slurm"}, {"partition", 3}}, "p").status().message(),
      "p.partition: must be a string (got 3)");
  EXPECT_EQ(ParseProvisionerConfig(json{{"type", "slurm"}, {"slot_type", "rocm"}}, "p")
                .status()
                .message(),
            "p.slot_type: must be cpu or cuda (got \"rocm\")");
}

TEST(ParseProvisionerConfigTest, ErrorsNameTheField) {
  EXPECT_EQ(ParseProvisionerConfig(
                json{{"type", "local"}, {"min_instances", 3}, {"max_instances", 2}}, "p")
                .status()
                .message(),
            "p.min_instances: must not exceed max_instances (3 > 2)");
  EXPECT_EQ(ParseProvisionerConfig(json{{"type", "k8s"}}, "p").status().message(),
            "p.type: must be local, slurm, aws or gcp (got \"k8s\")");
  EXPECT_EQ(
      ParseProvisionerConfig(json{{"type", "local"}, {"max_instance", 2}}, "p").status().message(),
      "p.max_instance: unknown field");
  EXPECT_FALSE(ParseProvisionerConfig(json{{"type", "local"}, {"max_instances", -1}}, "p").ok());
}

TEST(DecideScalingTest, LaunchesForWaitingSlotsUpToMax) {
  ScalingInput in;
  in.now_ms = 1000;
  in.waiting_slots = 3;  // two 2-slot agents
  in.waiting_tasks = 3;
  EXPECT_EQ(DecideScaling(Config(0, 5), in).launch, 2);
  EXPECT_EQ(DecideScaling(Config(0, 1), in).launch, 1);
}

TEST(DecideScalingTest, StartingAgentsCountTowardsWhatWaits) {
  ScalingInput in;
  in.now_ms = 1000;
  in.waiting_slots = 4;
  in.waiting_tasks = 2;
  in.agents = {Starting("a", 900)};
  EXPECT_EQ(DecideScaling(Config(0, 5), in).launch, 1);
  in.agents.push_back(Starting("b", 950));
  EXPECT_EQ(DecideScaling(Config(0, 5), in), ScalingDecision{});
}

TEST(DecideScalingTest, ZeroSlotTaskNeedsOneAgent) {
  ScalingInput in;
  in.waiting_tasks = 1;
  EXPECT_EQ(DecideScaling(Config(0, 5), in).launch, 1);
}

TEST(DecideScalingTest, FreeSlotsOnRegisteredAgentsCoverWhatWaits) {
  ScalingInput in;
  in.now_ms = 1000;
  in.agents = {Idle("a", 900)};
  in.waiting_slots = 3;
  in.waiting_tasks = 3;
  in.free_slots = 2;  // agent a's: one more 2-slot agent for the third slot
  EXPECT_EQ(DecideScaling(Config(0, 5), in).launch, 1);
  in.free_slots = 4;
  EXPECT_EQ(DecideScaling(Config(0, 5), in), ScalingDecision{});
  in.waiting_slots = 0;
  in.waiting_tasks = 1;  // zero-slot: a registered agent runs it
  EXPECT_EQ(DecideScaling(Config(0, 5), in), ScalingDecision{});
}

TEST(DecideScalingTest, KeepsMinInstances) {
  ScalingInput in;
  EXPECT_EQ(DecideScaling(Config(2, 5), in).launch, 2);
  in.agents = {Idle("a", 0), Idle("b", 0)};
  in.now_ms = 1'000'000;
  EXPECT_EQ(DecideScaling(Config(2, 5), in), ScalingDecision{});  // idle, but the minimum
  EXPECT_EQ(DecideScaling(Config(1, 5), in).stop, std::vector<std::string>{"a"});
}

TEST(DecideScalingTest, StopsAgentsIdleForThePeriodOldestFirst) {
  ScalingInput in;
  in.now_ms = 20'000;
  in.agents = {Idle("young", 15'000), Idle("old", 5'000), Idle("older", 1'000), Busy("busy")};
  auto d = DecideScaling(Config(0, 5), in);
  EXPECT_EQ(d.launch, 0);
  EXPECT_EQ(d.stop, (std::vector<std::string>{"older", "old"}));
}

TEST(DecideScalingTest, IdleAgentsStayWhileTasksWait) {
  ScalingInput in;
  in.now_ms = 20'000;
  in.waiting_slots = 4;
  in.waiting_tasks = 1;  // e.g. a 4-slot task that fits no single agent
  in.agents = {Idle("a", 1'000)};
  auto d = DecideScaling(Config(0, 5), in);
  EXPECT_TRUE(d.stop.empty());
  EXPECT_EQ(d.launch, 2);
}

TEST(DecideScalingTest, StopsAgentsThatNeverRegistered) {
  ScalingInput in;
  in.now_ms = 100'000;
  in.waiting_slots = 2;
  in.waiting_tasks = 1;
  in.agents = {Starting("stuck", 10'000)};
  auto d = DecideScaling(Config(0, 5), in);
  EXPECT_EQ(d.stop, std::vector<std::string>{"stuck"});
  EXPECT_EQ(d.launch, 1);  // a replacement
}

}  // namespace
}  // namespace det::master::scheduler
