#include "master/core/experiment_moves.h"

#include <gtest/gtest.h>

namespace det::master::core {
namespace {

using P = TrialPresence;

TEST(ExperimentMovesTest, APauseStopsRunningTrialsAndDropsQueuedOnes) {
  TrialMove running = MoveWithExperiment(RunState::kPaused, RunState::kActive, P::kRunning);
  EXPECT_EQ(running.to, RunState::kPaused);
  EXPECT_TRUE(running.stop_process);
  EXPECT_FALSE(running.kill_process);
  TrialMove queued = MoveWithExperiment(RunState::kPaused, RunState::kActive, P::kQueued);
  EXPECT_EQ(queued.to, RunState::kPaused);
  EXPECT_TRUE(queued.drop_queued);
  EXPECT_FALSE(queued.tell_searcher_canceled) << "a paused trial comes back";
  EXPECT_FALSE(MoveWithExperiment(RunState::kPaused, RunState::kCompleted, P::kNone).to);
  EXPECT_FALSE(MoveWithExperiment(RunState::kPaused, RunState::kStoppingKilled, P::kRunning).to);
}

TEST(ExperimentMovesTest, AnActivationRunsEveryActiveTrialWithoutAnAllocation) {
  TrialMove paused = MoveWithExperiment(RunState::kActive, RunState::kPaused, P::kNone);
  EXPECT_EQ(paused.to, RunState::kActive);
  EXPECT_TRUE(paused.request_process);
  // Paused while its process still checkpoints: ACTIVE now, run again by its exit.
  TrialMove exiting = MoveWithExperiment(RunState::kActive, RunState::kPaused, P::kRunning);
  EXPECT_EQ(exiting.to, RunState::kActive);
  EXPECT_FALSE(exiting.request_process);
  TrialMove idle = MoveWithExperiment(RunState::kActive, RunState::kActive, P::kNone);
  EXPECT_FALSE(idle.to);
  EXPECT_TRUE(idle.request_process);
  EXPECT_FALSE(MoveWithExperiment(RunState::kActive, RunState::kActive, P::kQueued).request_process);
  EXPECT_FALSE(MoveWithExperiment(RunState::kActive, RunState::kCanceled, P::kNone).request_process);
}

TEST(ExperimentMovesTest, AStopEndsTrialsWithoutAProcessAndStopsTheOthers) {
  TrialMove idle = MoveWithExperiment(RunState::kStoppingCanceled, RunState::kActive, P::kNone);
  EXPECT_EQ(idle.to, RunState::kCanceled);
  EXPECT_TRUE(idle.tell_searcher_canceled);
  TrialMove queued = MoveWithExperiment(RunState::kStoppingKilled, RunState::kPaused, P::kQueued);
  EXPECT_EQ(queued.to, RunState::kCanceled);
  EXPECT_TRUE(queued.drop_queued);
  EXPECT_TRUE(queued.tell_searcher_canceled);
  TrialMove cancel = MoveWithExperiment(RunState::kStoppingCanceled, RunState::kActive, P::kRunning);
  EXPECT_EQ(cancel.to, RunState::kStoppingCanceled);
  EXPECT_TRUE(cancel.stop_process);
  EXPECT_FALSE(cancel.tell_searcher_canceled) << "its exit tells the searcher";
  // A kill after a cancel: the process is killed now.
  TrialMove kill =
      MoveWithExperiment(RunState::kStoppingKilled, RunState::kStoppingCanceled, P::kRunning);
  EXPECT_EQ(kill.to, RunState::kStoppingKilled);
  EXPECT_TRUE(kill.kill_process);
  EXPECT_FALSE(
      MoveWithExperiment(RunState::kStoppingKilled, RunState::kStoppingKilled, P::kRunning).to);
}

}  // namespace
}  // namespace det::master::core
