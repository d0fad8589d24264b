#include "master/core/lifecycle.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace det::master::core {
namespace {

TEST(LifecycleTest, AllocationStatesRoundTripThroughTheirNames) {
  for (AllocationState s : {AllocationState::kPending, AllocationState::kAssigned,
                            AllocationState::kRunning, AllocationState::kTerminated}) {
    EXPECT_EQ(ParseAllocationState(AllocationStateName(s)), s);
    EXPECT_EQ(ParseAllocationState(PresentedAllocationState(s)), s);
  }
  EXPECT_EQ(AllocationStateName(AllocationState::kTerminated), "TERMINATED");
  EXPECT_EQ(PresentedAllocationState(AllocationState::kAssigned), "STATE_ASSIGNED");
  EXPECT_EQ(ParseAllocationState("LOST"), std::nullopt);
}

TEST(LifecycleTest, ActiveTrialIsPresentedByWhatItsAllocationDoes) {
  EXPECT_EQ(PresentedTrialState(RunState::kActive, TrialActivity::kNone), "STATE_QUEUED");
  EXPECT_EQ(PresentedTrialState(RunState::kActive, TrialActivity::kPending), "STATE_QUEUED");
  EXPECT_EQ(PresentedTrialState(RunState::kActive, TrialActivity::kAssigned), "STATE_STARTING");
  EXPECT_EQ(PresentedTrialState(RunState::kActive, TrialActivity::kRunning), "STATE_RUNNING");
  // Other states are shown as stored, whatever the allocation does.
  EXPECT_EQ(PresentedTrialState(RunState::kPaused, TrialActivity::kRunning), "STATE_PAUSED");
  EXPECT_EQ(PresentedTrialState(RunState::kStoppingCanceled, TrialActivity::kRunning),
            "STATE_STOPPING_CANCELED");
  EXPECT_EQ(ActivityOf(std::nullopt), TrialActivity::kNone);
  EXPECT_EQ(ActivityOf(AllocationState::kTerminated), TrialActivity::kNone);
  EXPECT_EQ(ActivityOf(AllocationState::kRunning), TrialActivity::kRunning);
}

TEST(LifecycleTest, ActiveExperimentIsRunningWhenAnyTrialRuns) {
  EXPECT_EQ(PresentedExperimentState(RunState::kActive, false, false), "STATE_QUEUED");
  EXPECT_EQ(PresentedExperimentState(RunState::kActive, false, true), "STATE_STARTING");
  EXPECT_EQ(PresentedExperimentState(RunState::kActive, true, true), "STATE_RUNNING");
  EXPECT_EQ(PresentedExperimentState(RunState::kCompleted, true, false), "STATE_COMPLETED");
}

TEST(LifecycleTest, TrialTransitions) {
  EXPECT_TRUE(TrialTransitionAllowed(RunState::kActive, RunState::kPaused));
  EXPECT_TRUE(TrialTransitionAllowed(RunState::kPaused, RunState::kActive));
  EXPECT_TRUE(TrialTransitionAllowed(RunState::kPaused, RunState::kCompleted));
  EXPECT_TRUE(TrialTransitionAllowed(RunState::kActive, RunState::kStoppingKilled));
  EXPECT_TRUE(TrialTransitionAllowed(RunState::kStoppingCanceled, RunState::kCanceled));
  EXPECT_TRUE(TrialTransitionAllowed(RunState::kStoppingCanceled, RunState::kStoppingKilled));
  EXPECT_TRUE(TrialTransitionAllowed(RunState::kStoppingKilled, RunState::kError));
  EXPECT_TRUE(TrialTransitionAllowed(RunState::kCanceled, RunState::kActive));
  // A stop is never undone, a kill never softened, and a completed trial never reruns.
  EXPECT_FALSE(TrialTransitionAllowed(RunState::kStoppingCanceled, RunState::kActive));
  EXPECT_FALSE(TrialTransitionAllowed(RunState::kStoppingKilled, RunState::kStoppingCanceled));
  EXPECT_FALSE(TrialTransitionAllowed(RunState::kStoppingCanceled, RunState::kCompleted));
  EXPECT_FALSE(TrialTransitionAllowed(RunState::kCompleted, RunState::kActive));
  EXPECT_FALSE(TrialTransitionAllowed(RunState::kActive, RunState::kActive));
  EXPECT_FALSE(TrialTransitionAllowed(RunState::kActive, RunState::kDeleted));
}

TEST(LifecycleTest, StoppingATrialWithoutAProcessEndsItAtOnce) {
  EXPECT_EQ(TrialStateOnStop(RunState::kStoppingCanceled, false), RunState::kCanceled);
  EXPECT_EQ(TrialStateOnStop(RunState::kStoppingKilled, false), RunState::kCanceled);
  EXPECT_EQ(TrialStateOnStop(RunState::kStoppingCanceled, true), RunState::kStoppingCanceled);
  EXPECT_EQ(TrialStateOnStop(RunState::kStoppingKilled, true), RunState::kStoppingKilled);
}

TEST(LifecycleTest, StoppingExperimentEndsOnceNoTrialIsLive) {
  ExperimentTrialsSummary live{.live = 1};
  ExperimentTrialsSummary none{};
  EXPECT_EQ(ExperimentEndState(RunState::kStoppingCanceled, live, false, std::nullopt),
            std::nullopt);
  EXPECT_EQ(ExperimentEndState(RunState::kStoppingCanceled, none, false, std::nullopt),
            RunState::kCanceled);
  EXPECT_EQ(ExperimentEndState(RunState::kStoppingKilled, none, false, std::nullopt),
            RunState::kCanceled);
  EXPECT_EQ(ExperimentEndState(RunState::kStoppingError, none, false, std::nullopt),
            RunState::kError);
}

// MaybeFinishExperiment skips counting trials when no-live-trial already says "goes on", and
// stops counting at the first live one: both rely on this.
TEST(LifecycleTest, TheTrialsOnlyChooseTheEndStateNeverWhetherAnExperimentWithNoneLiveGoesOn) {
  std::vector<std::optional<SearcherShutdown>> shutdowns = {
      std::nullopt, SearcherShutdown{}, SearcherShutdown{.cancel = true},
      SearcherShutdown{.cancel = true, .failure = true}};
  int ends = 0;
  for (int s = 0; s <= static_cast<int>(RunState::kDeleted); ++s) {
    auto state = static_cast<RunState>(s);
    for (bool continued : {false, true}) {
      for (const auto& shutdown : shutdowns) {
        bool none_live_goes_on = !ExperimentEndState(state, {}, continued, shutdown).has_value();
        for (int64_t live : {0, 1, 2}) {
          for (bool completed : {false, true}) {
            for (bool errored : {false, true}) {
              ExperimentTrialsSummary summary{live, completed, errored};
              auto end = ExperimentEndState(state, summary, continued, shutdown);
              if (none_live_goes_on || live > 0) {
                EXPECT_EQ(end, std::nullopt) << RunStateName(state) << " live " << live;
              } else {
                EXPECT_TRUE(end.has_value()) << RunStateName(state);
                ends++;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(ends, 0);
}

TEST(LifecycleTest, ActiveExperimentEndsOnlyWhenTheSearcherShutItDownOrItWasContinued) {
  ExperimentTrialsSummary none{};
  // No live trial but the searcher has not shut down: it waits (e.g. for a promotion).
  EXPECT_EQ(ExperimentEndState(RunState::kActive, none, false, std::nullopt), std::nullopt);
  EXPECT_EQ(ExperimentEndState(RunState::kActive, none, false, SearcherShutdown{}),
            RunState::kCompleted);
  EXPECT_EQ(ExperimentEndState(RunState::kActive, none, false, SearcherShutdown{.cancel = true}),
            RunState::kCanceled);
  EXPECT_EQ(ExperimentEndState(RunState::kActive, none, false,
                               SearcherShutdown{.cancel = true, .failure = true}),
            RunState::kError);
  EXPECT_EQ(ExperimentEndState(RunState::kActive, {.live = 2}, false, SearcherShutdown{}),
            std::nullopt);
  // A continued experiment ends by its trials' outcome.
  EXPECT_EQ(ExperimentEndState(RunState::kActive, {.any_completed = true, .any_errored = true},
                               true, std::nullopt),
            RunState::kCompleted);
  EXPECT_EQ(ExperimentEndState(RunState::kActive, {.any_errored = true}, true, std::nullopt),
            RunState::kError);
  EXPECT_EQ(ExperimentEndState(RunState::kActive, none, true, std::nullopt), RunState::kCanceled);
  // Paused and terminal experiments never end here.
  EXPECT_EQ(ExperimentEndState(RunState::kPaused, none, false, SearcherShutdown{}), std::nullopt);
  EXPECT_EQ(ExperimentEndState(RunState::kCompleted, none, false, SearcherShutdown{}),
            std::nullopt);
}

TEST(LifecycleTest, RunStateNamesRoundTrip) {
  for (RunState s :
       {RunState::kActive, RunState::kPaused, RunState::kStoppingCompleted,
        RunState::kStoppingCanceled, RunState::kStoppingKilled, RunState::kStoppingError,
        RunState::kCompleted, RunState::kCanceled, RunState::kError, RunState::kDeleting,
        RunState::kDeleteFailed, RunState::kDeleted}) {
    EXPECT_EQ(ParseRunState(RunStateName(s)), s);
    EXPECT_EQ(ParseRunState(PresentedRunState(s)), s);
  }
}

}  // namespace
}  // namespace det::master::core
