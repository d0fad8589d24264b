#include "master/scheduler/fitting.h"

#include <gtest/gtest.h>

namespace det::master::scheduler {
namespace {

// Ensures best fit picks the agent with the fewest sufficient free slots.
TEST(FittingTest, BestFitSingleAgent) {
  std::vector<AgentCapacity> agents = {{"a", {0, 1, 2, 3}, 4}, {"b", {1, 0}, 2}};
  auto out = PlaceFifo({{"r1", 2}}, agents);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].agent_id, "b");
  EXPECT_EQ(out[0].slot_ids, (std::vector<int>{0, 1}));
}

// Ensures a request that does not fit does not block a later smaller one.
TEST(FittingTest, BackfillsSmallerRequests) {
  std::vector<AgentCapacity> agents = {{"a", {0}, 1}};
  auto out = PlaceFifo({{"big", 2}, {"small", 1}, {"again", 1}}, agents);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].request_id, "small");
}

TEST(FittingTest, ZeroSlotGoesToEmptiestAgent) {
  std::vector<AgentCapacity> agents = {{"a", {}, 1}, {"b", {0}, 1}};
  auto out = PlaceFifo({{"z", 0}}, agents);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].agent_id, "b");
  EXPECT_TRUE(out[0].slot_ids.empty());
}

TEST(FittingTest, NoAgentsNoPlacements) { EXPECT_TRUE(PlaceFifo({{"r", 1}}, {}).empty()); }

}  // namespace
}  // namespace det::master::scheduler
