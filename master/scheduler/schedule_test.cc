#include "master/scheduler/schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "master/scheduler/test_util.h"

namespace det::master::scheduler {
namespace {

using ::testing::ElementsAre;
using testing::MakeAgent;
using testing::MakeJob;
using testing::MakeRequest;
using testing::StartedIds;

TEST(ScheduleTest, MultiAgentFitReturnsEveryAgentsSlots) {
  ClusterSnapshot s;
  s.agents = {MakeAgent("a1", 4), MakeAgent("a2", 4)};
  s.jobs = {MakeJob("j", 1)};
  s.requests = {MakeRequest("r", "j", 8)};
  ScheduleDecision d = Schedule(PoolConfig{}, s);
  ASSERT_EQ(d.to_allocate.size(), 1u);
  EXPECT_EQ(d.to_allocate[0].agents,
            (std::vector<AgentSlots>{{"a1", {0, 1, 2, 3}}, {"a2", {0, 1, 2, 3}}}));
}

TEST(ScheduleTest, UsedSlotsAndDrainingAgentsAreRespected) {
  ClusterSnapshot s;
  Agent busy = MakeAgent("busy", 4);
  busy.used_slot_ids = {0, 2};
  Agent draining = MakeAgent("draining", 8);
  draining.draining = true;
  s.agents = {busy, draining};
  s.jobs = {MakeJob("j", 1)};
  s.requests = {MakeRequest("r1", "j", 2, 1), MakeRequest("r2", "j", 1, 2)};
  ScheduleDecision d = Schedule(PoolConfig{}, s);
  ASSERT_THAT(StartedIds(d), ElementsAre("r1"));
  EXPECT_EQ(d.to_allocate[0].agents, (std::vector<AgentSlots>{{"busy", {1, 3}}}));
}

TEST(ScheduleTest, ScheduleAllRoutesByPool) {
  ResourcePoolsConfig pools;
  PoolConfig compute;
  compute.pool_name = "compute";
  PoolConfig aux;
  aux.pool_name = "aux";
  pools.pools = {compute, aux};
  pools.default_compute_pool = "compute";
  pools.default_aux_pool = "aux";
  ClusterSnapshot s;
  s.agents = {MakeAgent("gpu", 4, "compute"), MakeAgent("cpu", 0, "aux")};
  s.jobs = {MakeJob("j", 1)};
  s.requests = {MakeRequest("train", "j", 2), MakeRequest("tensorboard", "j", 0)};
  auto all = ScheduleAll(pools, s);
  ASSERT_EQ(all.size(), 2u);
  ASSERT_THAT(StartedIds(all["compute"]), ElementsAre("train"));
  ASSERT_THAT(StartedIds(all["aux"]), ElementsAre("tensorboard"));
  EXPECT_EQ(all["aux"].to_allocate[0].agents, (std::vector<AgentSlots>{{"cpu", {}}}));
}

TEST(ScheduleTest, EmptySnapshot) {
  ScheduleDecision d = Schedule(PoolConfig{}, ClusterSnapshot{});
  EXPECT_TRUE(d.to_allocate.empty());
  EXPECT_TRUE(d.to_release.empty());
}

}  // namespace
}  // namespace det::master::scheduler
