#include "master/scheduler/fitting.h"

#include <gtest/gtest.h>

#include "master/scheduler/test_util.h"

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

using testing::MakeAgent;
using testing::MakeRequest;

std::vector<AgentState> Idle(const std::vector<int>& sizes) {
  std::vector<AgentState> out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    out.emplace_back(MakeAgent("agent" + std::to_string(i), sizes[i]));
  }
  return out;
}

std::vector<int> FitSizes(int slots, const std::vector<int>& sizes, bool hetero = false) {
  std::vector<AgentState> agents = Idle(sizes);
  std::vector<int> out;
  for (const Fit& f : FindFits(MakeRequest("task", "job", slots), agents, FittingPolicy::kWorst,
                               hetero)) {
    EXPECT_EQ(f.slots, agents[f.agent_index].NumEmptySlots());
    out.push_back(f.slots);
  }
  return out;
}

// The dedicated-fit vectors of §5.2 (Determined's fitting_test.go, WorstFit).
TEST(DedicatedFitTest, SingleLargeAgent) { EXPECT_EQ(FitSizes(10, {1, 5, 10}), std::vector<int>{10}); }
TEST(DedicatedFitTest, FourAgentsOfFour) {
  EXPECT_EQ(FitSizes(16, {8, 7, 7, 4, 4, 4, 4}), (std::vector<int>{4, 4, 4, 4}));
}
TEST(DedicatedFitTest, NotEnoughSlots) { EXPECT_TRUE(FitSizes(16, {3, 3, 3, 3, 3}).empty()); }
TEST(DedicatedFitTest, NoDivisibleSize) { EXPECT_TRUE(FitSizes(12, {8, 8, 3, 3, 3}).empty()); }
TEST(DedicatedFitTest, TwoOfFive) { EXPECT_EQ(FitSizes(8, {4, 4, 4, 4, 4}), (std::vector<int>{4, 4})); }
TEST(DedicatedFitTest, HeterogeneousThreeAgents) {
  EXPECT_EQ(FitSizes(4, {2, 1, 1}, true), (std::vector<int>{2, 1, 1}));
  EXPECT_TRUE(FitSizes(4, {2, 1, 1}, false).empty());
}
TEST(DedicatedFitTest, HomogeneousPreferred) {
  EXPECT_EQ(FitSizes(4, {2, 1, 1, 1, 1}, true), (std::vector<int>{1, 1, 1, 1}));
}
TEST(DedicatedFitTest, HeterogeneousMixed) {
  EXPECT_EQ(FitSizes(4, {2, 1, 1, 1}, true), (std::vector<int>{2, 1, 1}));
}
TEST(DedicatedFitTest, HeterogeneousTooFew) { EXPECT_TRUE(FitSizes(8, {2, 1, 1}, true).empty()); }
TEST(DedicatedFitTest, HeterogeneousPowersOfTwo) {
  EXPECT_EQ(FitSizes(63, {32, 32, 16, 16, 8, 8, 4, 4, 2, 2, 1, 1}, true),
            (std::vector<int>{32, 16, 8, 4, 2, 1}));
}

// Ensures a dedicated fit uses only fully idle agents and single-node tasks never split.
TEST(DedicatedFitTest, BusyAgentsAndSingleNode) {
  std::vector<AgentState> agents = Idle({4, 4});
  agents[0].Allocate(1);
  EXPECT_TRUE(FindFits(MakeRequest("t", "j", 6), agents, FittingPolicy::kBest, true).empty());
  agents = Idle({4, 4});
  AllocationRequest single = MakeRequest("t", "j", 8);
  single.single_node = true;
  EXPECT_TRUE(FindFits(single, agents, FittingPolicy::kBest, false).empty());
  single.single_node = false;
  EXPECT_EQ(FindFits(single, agents, FittingPolicy::kBest, false).size(), 2u);
}

TEST(SharedFitTest, BestFitPrefersFullestAgentWorstFitEmptiest) {
  std::vector<AgentState> agents = Idle({4, 4});
  agents[0].Allocate(2);
  auto best = FindFits(MakeRequest("t", "j", 1), agents, FittingPolicy::kBest, false);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].agent_index, 0u);
  auto worst = FindFits(MakeRequest("t", "j", 1), agents, FittingPolicy::kWorst, false);
  ASSERT_EQ(worst.size(), 1u);
  EXPECT_EQ(worst[0].agent_index, 1u);
}

TEST(SharedFitTest, BlockedAgentsAreSkipped) {
  std::vector<AgentState> agents = Idle({4, 8});
  AllocationRequest r = MakeRequest("t", "j", 2);
  r.blocked_agents = {"agent0"};
  auto fits = FindFits(r, agents, FittingPolicy::kBest, false);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].agent_index, 1u);
}

TEST(SharedFitTest, ZeroSlotNeedsZeroSlotCapacity) {
  Agent full = MakeAgent("a", 0);
  full.max_zero_slot_containers = 1;
  full.used_zero_slot_containers = 1;
  std::vector<AgentState> agents = {AgentState(full)};
  EXPECT_TRUE(FindFits(MakeRequest("t", "j", 0), agents, FittingPolicy::kBest, false).empty());
  agents.emplace_back(MakeAgent("b", 0));
  auto fits = FindFits(MakeRequest("t", "j", 0), agents, FittingPolicy::kBest, false);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].agent_index, 1u);
  EXPECT_EQ(fits[0].slots, 0);
}

// Equal scores are broken by md5 hash distance, then agent id.
TEST(SharedFitTest, HashDistanceTieBreak) {
  std::vector<AgentState> agents = Idle({4, 4, 4});
  AllocationRequest r = MakeRequest("alloc-1", "j", 1);
  size_t expected = 0;
  for (size_t i = 1; i < agents.size(); ++i) {
    if (HashDistance(r.id, agents[i].id()) < HashDistance(r.id, agents[expected].id())) {
      expected = i;
    }
  }
  auto fits = FindFits(r, agents, FittingPolicy::kBest, false);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].agent_index, expected);
  EXPECT_EQ(HashDistance("x", "x"), 0u);
}

TEST(AgentStateTest, DisabledAndDrainingHaveNoRoom) {
  Agent a = MakeAgent("a", 4);
  a.used_slot_ids = {0};
  a.draining = true;
  AgentState draining(a);
  EXPECT_EQ(draining.NumSlots(), 1);
  EXPECT_EQ(draining.NumEmptySlots(), 0);
  a.draining = false;
  a.enabled = false;
  AgentState disabled(a);
  EXPECT_EQ(disabled.NumSlots(), 0);
  EXPECT_EQ(disabled.NumEmptySlots(), 0);
  EXPECT_EQ(disabled.NumEmptyZeroSlots(), 0);
}

}  // namespace
}  // namespace det::master::scheduler
