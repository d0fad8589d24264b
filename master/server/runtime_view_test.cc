#include "master/server/runtime_view.h"

#include <gtest/gtest.h>

namespace det::master::server {
namespace {

using core::AllocationState;
using core::RunState;

TEST(RuntimeViewTest, AnExperimentIsRunningWhileAnyTrialsAllocationRuns) {
  RuntimeView view;
  EXPECT_FALSE(view.PresentedExperimentState(1).has_value()) << "not live";
  view.PutExperiment(1, RunState::kActive);
  view.PutTrial(10, 1, RunState::kActive, 1, "1.a");
  view.PutTrial(11, 1, RunState::kActive, 1, "1.b");
  EXPECT_EQ(view.PresentedExperimentState(1), "STATE_QUEUED");
  view.SetAllocation(10, "1.a.1", AllocationState::kPending);
  EXPECT_EQ(view.PresentedExperimentState(1), "STATE_QUEUED");
  view.SetAllocation(10, "1.a.1", AllocationState::kAssigned);
  EXPECT_EQ(view.PresentedExperimentState(1), "STATE_STARTING");
  view.SetAllocation(11, "1.b.1", AllocationState::kRunning);
  EXPECT_EQ(view.PresentedExperimentState(1), "STATE_RUNNING");
  view.SetAllocation(11, "1.b.1", AllocationState::kTerminated);
  EXPECT_EQ(view.PresentedExperimentState(1), "STATE_STARTING") << "counts follow every change";
  view.SetAllocation(10, "1.a.1", std::nullopt);
  EXPECT_EQ(view.PresentedExperimentState(1), "STATE_QUEUED");
  view.PutExperiment(1, RunState::kPaused);
  EXPECT_EQ(view.PresentedExperimentState(1), "STATE_PAUSED");
}

TEST(RuntimeViewTest, AnOlderAllocationsEndDoesNotClearTheTrialsNewOne) {
  RuntimeView view;
  view.PutExperiment(1, RunState::kActive);
  view.PutTrial(10, 1, RunState::kActive, 2, "1.a");
  view.SetAllocation(10, "1.a.2", AllocationState::kRunning);
  view.SetAllocation(10, "1.a.1", std::nullopt);  // run 1's end, reported late
  auto t = view.FindTrial(10);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->allocation_id, "1.a.2");
  EXPECT_EQ(t->activity, AllocationState::kRunning);
  EXPECT_EQ(view.PresentedExperimentState(1), "STATE_RUNNING");
}

TEST(RuntimeViewTest, TrialsAreFoundByTaskAndPresentedFromTheirStoredState) {
  RuntimeView view;
  view.PutExperiment(1, RunState::kActive);
  view.PutTrial(10, 1, RunState::kActive, 3, "1.a");
  EXPECT_EQ(view.TrialOfTask("1.a"), 10);
  EXPECT_FALSE(view.TrialOfTask("1.b").has_value());
  EXPECT_EQ(view.FindTrial(10)->run_id, 3);
  EXPECT_EQ(view.RunOf(10), 3);
  EXPECT_FALSE(view.RunOf(11).has_value());
  view.SetAllocation(10, "1.a.3", AllocationState::kRunning);
  EXPECT_EQ(view.PresentedTrialState(10, "ACTIVE"), "STATE_RUNNING");
  EXPECT_EQ(view.PresentedTrialState(99, "COMPLETED"), "STATE_COMPLETED") << "not live";
  EXPECT_EQ(view.PresentedTrialState(10, "BOGUS"), "STATE_BOGUS");
  view.RemoveTrial(10);
  EXPECT_FALSE(view.FindTrial(10).has_value());
  EXPECT_FALSE(view.TrialOfTask("1.a").has_value());
  EXPECT_EQ(view.PresentedExperimentState(1), "STATE_QUEUED") << "its running count went with it";
}

}  // namespace
// The slots an allocation holds follow what it holds now; another allocation's claim on a slot
// is not cleared when an older holder's entry goes.
TEST(RuntimeViewTest, HeldSlotsFollowEachAllocationAndAreKeptPerAgent) {
  RuntimeView view;
  view.SetHeld("1.a.1", {{"n1", {0, 1}, "r0"}, {"n2", {0}, "r1"}});
  auto n1 = view.SlotsOn("n1");
  ASSERT_EQ(n1.size(), 2u);
  EXPECT_EQ(n1.at(1).allocation_id, "1.a.1");
  EXPECT_EQ(n1.at(1).resources_id, "r0");
  ASSERT_EQ(view.SlotsOn("n2").size(), 1u);
  EXPECT_EQ(view.SlotsOn("n2").at(0).resources_id, "r1");
  // Its process on n2 exited: n2 is free, n1 still held.
  view.SetHeld("1.a.1", {{"n1", {0, 1}, "r0"}});
  EXPECT_TRUE(view.SlotsOn("n2").empty());
  EXPECT_EQ(view.SlotsOn("n1").size(), 2u);
  // Another allocation is placed on slot 1 before the first one's end is published.
  view.SetHeld("2.b.1", {{"n1", {1}, "r2"}});
  view.SetHeld("1.a.1", {});
  auto after = view.SlotsOn("n1");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after.at(1).allocation_id, "2.b.1");
  view.SetHeld("2.b.1", {});
  EXPECT_TRUE(view.SlotsOn("n1").empty());
  EXPECT_TRUE(view.SlotsOn("unknown").empty());
}

}  // namespace det::master::server
