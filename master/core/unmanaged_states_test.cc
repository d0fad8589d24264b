#include "master/core/unmanaged_states.h"

#include <gtest/gtest.h>

namespace det::master::core {
namespace {

TEST(ParseUnmanagedTrialState, AcceptsDeterminedNamesWithAndWithoutPrefix) {
  EXPECT_EQ(*ParseUnmanagedTrialState("STATE_RUNNING"), RunState::kActive);
  EXPECT_EQ(*ParseUnmanagedTrialState("RUNNING"), RunState::kActive);
  EXPECT_EQ(*ParseUnmanagedTrialState("STATE_ACTIVE"), RunState::kActive);
  EXPECT_EQ(*ParseUnmanagedTrialState("STATE_COMPLETED"), RunState::kCompleted);
  EXPECT_EQ(*ParseUnmanagedTrialState("ERROR"), RunState::kError);
  EXPECT_EQ(*ParseUnmanagedTrialState("STATE_PAUSED"), RunState::kPaused);
  EXPECT_EQ(*ParseUnmanagedTrialState("STATE_CANCELED"), RunState::kCanceled);
}

TEST(ParseUnmanagedTrialState, RejectsOtherStatesNamingTheValue) {
  for (const char* bad : {"STATE_STOPPING_KILLED", "STATE_DELETED", "", "running"}) {
    Result<RunState> r = ParseUnmanagedTrialState(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << r.status().message();
  }
}

TEST(UnmanagedExperimentState, NoTrialsLeavesTheStateAlone) {
  EXPECT_FALSE(UnmanagedExperimentState({}).has_value());
}

TEST(UnmanagedExperimentState, RunningWinsThenCompletedThenErrorThenCanceled) {
  using S = RunState;
  EXPECT_EQ(UnmanagedExperimentState({S::kPaused}), S::kPaused);
  EXPECT_EQ(UnmanagedExperimentState({S::kError, S::kActive, S::kCompleted}), S::kActive);
  EXPECT_EQ(UnmanagedExperimentState({S::kError, S::kCompleted}), S::kCompleted);
  EXPECT_EQ(UnmanagedExperimentState({S::kPaused, S::kError}), S::kError);
  EXPECT_EQ(UnmanagedExperimentState({S::kCanceled, S::kPaused}), S::kCanceled);
  EXPECT_EQ(UnmanagedExperimentState({S::kError, S::kCanceled}), S::kError);
  // States a script cannot set do not move the experiment.
  EXPECT_EQ(UnmanagedExperimentState({S::kStoppingKilled}), S::kPaused);
}

TEST(PresentedUnmanagedState, ActiveShowsAsRunning) {
  EXPECT_EQ(PresentedUnmanagedState("ACTIVE"), "STATE_RUNNING");
  EXPECT_EQ(PresentedUnmanagedState("COMPLETED"), "STATE_COMPLETED");
  EXPECT_EQ(PresentedUnmanagedState("PAUSED"), "STATE_PAUSED");
}

}  // namespace
}  // namespace det::master::core
