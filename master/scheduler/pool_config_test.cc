#include "master/scheduler/pool_config.h"

#include <gtest/gtest.h>

namespace det::master::scheduler {
namespace {

using nlohmann::json;

TEST(PoolConfigTest, Defaults) {
  auto c = ParseResourcePools(json(), json());
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->pools.size(), 1u);
  const PoolConfig& p = c->pools[0];
  EXPECT_EQ(p.pool_name, "default");
  EXPECT_EQ(p.scheduler.type, SchedulerType::kPriority);
  EXPECT_FALSE(p.scheduler.preemption);
  EXPECT_EQ(p.scheduler.default_priority, 42);
  EXPECT_EQ(p.scheduler.fitting_policy, FittingPolicy::kBest);
  EXPECT_FALSE(p.scheduler.allow_heterogeneous_fits);
  EXPECT_EQ(c->default_compute_pool, "default");
  EXPECT_EQ(c->default_aux_pool, "default");
}

TEST(PoolConfigTest, FlatAndNestedForms) {
  json pools = json::parse(R"([
    {"pool_name": "gpu", "description": "A100s",
     "scheduler": {"type": "priority", "preemption": true, "default_priority": 10,
                   "fitting_policy": "worst", "allow_heterogeneous_fits": true}},
    {"pool_name": "cpu", "scheduler": {"priority": {"preemption": true}}},
    {"pool_name": "fair", "scheduler": {"type": "fair_share"}, "max_aux_containers_per_agent": 3}
  ])");
  json rm = {{"default_compute_resource_pool", "gpu"}, {"default_aux_resource_pool", "cpu"}};
  auto c = ParseResourcePools(rm, pools);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const PoolConfig* gpu = c->Find("gpu");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->description, "A100s");
  EXPECT_TRUE(gpu->scheduler.preemption);
  EXPECT_EQ(gpu->scheduler.default_priority, 10);
  EXPECT_EQ(gpu->scheduler.fitting_policy, FittingPolicy::kWorst);
  EXPECT_TRUE(gpu->scheduler.allow_heterogeneous_fits);
  EXPECT_TRUE(c->Find("cpu")->scheduler.preemption);
  EXPECT_EQ(c->Find("fair")->scheduler.type, SchedulerType::kFairShare);
  EXPECT_EQ(c->Find("fair")->max_aux_containers_per_agent, 3);
  AllocationRequest aux;
  aux.slots = 0;
  EXPECT_EQ(ResolvePool(*c, aux), "cpu");
  aux.slots = 2;
  EXPECT_EQ(ResolvePool(*c, aux), "gpu");
  aux.pool = "fair";
  EXPECT_EQ(ResolvePool(*c, aux), "fair");
}

TEST(PoolConfigTest, ResourceManagerSchedulerIsThePoolDefault) {
  json rm = {{"scheduler", {{"type", "fair_share"}}}};
  auto c = ParseResourcePools(rm, json::parse(R"([{"pool_name": "default"}])"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->pools[0].scheduler.type, SchedulerType::kFairShare);
}

std::string Error(const std::string& pools, json rm = json()) {
  auto c = ParseResourcePools(rm, json::parse(pools));
  return c.ok() ? "ok" : c.status().message();
}

TEST(PoolConfigTest, ProviderMakesThePoolGrow) {
  auto c = ParseResourcePools(
      json(),
      json::array({{{"pool_name", "default"}},
                   {{"pool_name", "grow"},
                    {"provider",
                     {{"type", "local"}, {"max_agents", 2}, {"max_idle_agent_period", "3s"}}}}}));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->pools[0].provider.has_value());
  ASSERT_TRUE(c->pools[1].provider.has_value());
  EXPECT_EQ(c->pools[1].provider->max_instances, 2);
  EXPECT_EQ(c->pools[1].provider->max_idle_agent_period_ms, 3000);
  EXPECT_EQ(
      ParseResourcePools(
          json(),
          json::array({{{"pool_name", "grow"},
                        {"provider", {{"type", "local"}, {"max_idle_agent_period", "soon"}}}}}))
          .status()
          .message(),
      "resource_pools[0].provider.max_idle_agent_period: must be a duration such as "
      "\"30s\", \"5m\" or \"1h\" (got \"soon\")");
}

TEST(PoolConfigTest, Errors) {
  EXPECT_EQ(Error(R"([{"pool_name": "default", "scheduler": {"type": "round_robin"}}])"),
            "resource_pools[0].scheduler.type: the round_robin scheduler is no longer supported; "
            "use priority with equal priorities");
  EXPECT_EQ(Error(R"([{"pool_name": "default", "scheduler": {"type": "lottery"}}])"),
            "resource_pools[0].scheduler.type: unknown scheduler type \"lottery\" (expected "
            "priority or fair_share)");
  EXPECT_EQ(Error(R"([{"pool_name": "default", "scheduler": {"fitting_policy": "random"}}])"),
            "resource_pools[0].scheduler.fitting_policy: unknown fitting policy \"random\" "
            "(expected best or worst)");
  EXPECT_EQ(Error(R"([{"pool_name": "default", "scheduler": {"default_priority": 100}}])"),
            "resource_pools[0].scheduler.default_priority: must be between 1 and 99, got 100");
  EXPECT_EQ(Error(R"([{"pool_name": "default", "scheduler": {"preemption": "yes"}}])"),
            "resource_pools[0].scheduler.preemption: must be a boolean");
  EXPECT_EQ(Error(R"([{"pool_name": "default", "scheduler": {"type": "fair_share",
                       "preemption": true}}])"),
            "resource_pools[0].scheduler.preemption: only applies to the priority scheduler "
            "(fair_share always preempts)");
  EXPECT_EQ(Error(R"([{"pool_name": "default", "colour": "red"}])"),
            "resource_pools[0]: unknown key \"colour\"");
  EXPECT_EQ(Error(R"([{"pool_name": "default", "scheduler": {"preempt": true}}])"),
            "resource_pools[0].scheduler: unknown key \"preempt\"");
  EXPECT_EQ(Error(R"([{"pool_name": "a"}, {"pool_name": "a"}])"),
            "resource_pools[1].pool_name: duplicate pool name \"a\"");
  EXPECT_EQ(Error(R"([{"description": "x"}])"),
            "resource_pools[0].pool_name: must be a non-empty string");
  EXPECT_EQ(Error(R"([{"pool_name": "a"}])"),
            "resource_manager.default_compute_resource_pool: no resource pool named \"default\"");
  EXPECT_EQ(Error(R"({"pool_name": "a"})"), "resource_pools: must be a list");
}

}  // namespace
}  // namespace det::master::scheduler
