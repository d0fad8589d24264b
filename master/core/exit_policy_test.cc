#include "master/core/exit_policy.h"

#include <gtest/gtest.h>

namespace det::master::core {
namespace {

// Ensures non-zero exits count restarts until max_restarts, then error.
TEST(ExitPolicyTest, RestartsUntilMax) {
  AllocationExit fail{.exit_code = 1};
  ExitOutcome o = InterpretExit(RunState::kActive, 0, 2, fail);
  EXPECT_EQ(o.decision, ExitDecision::kRestart);
  EXPECT_EQ(o.restarts, 1);
  o = InterpretExit(RunState::kActive, 2, 2, fail);
  EXPECT_EQ(o.decision, ExitDecision::kError);
  EXPECT_EQ(o.restarts, 2);  // ran three times: two restarts
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 0, fail).decision, ExitDecision::kError);
}

TEST(ExitPolicyTest, ACancelRetriesMatchEndsAFailureWithoutARestart) {
  AllocationExit fail{.exit_code = 7, .dont_retry = true};
  ExitOutcome o = InterpretExit(RunState::kActive, 0, 5, fail);
  EXPECT_EQ(o.decision, ExitDecision::kError);
  EXPECT_EQ(o.restarts, 0);
  EXPECT_EQ(o.reason, "trial failed and matched logs to a don't retry policy");
  // Only a failure: a run that matched and then exited 0 completes as usual.
  AllocationExit ok{.dont_retry = true};
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 5, ok).decision, ExitDecision::kComplete);
}

TEST(ExitPolicyTest, ExitLinesCarryDeterminedsWording) {
  EXPECT_EQ(ExitPhrase(0), "resources exited successfully with a zero exit code");
  EXPECT_EQ(ExitPhrase(3),
            "resources failed with non-zero exit code: container failed with non-zero exit code: "
            "3 (exit code 3)");
}

TEST(ExitPolicyTest, InfrastructureFailureIsNotCounted) {
  AllocationExit e{.exit_code = 137, .infrastructure_failure = true};
  ExitOutcome o = InterpretExit(RunState::kActive, 1, 1, e);
  EXPECT_EQ(o.decision, ExitDecision::kRescheduleFree);
  EXPECT_EQ(o.restarts, 1);
}

TEST(ExitPolicyTest, ZeroExitCompletesUnlessPreemptionAcked) {
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 5, {}).decision, ExitDecision::kComplete);
  AllocationExit acked{.preemption_acked = true};
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 5, acked).decision, ExitDecision::kRescheduleFree);
  EXPECT_EQ(InterpretExit(RunState::kPaused, 0, 5, acked).decision, ExitDecision::kIdle);
}

// Ensures a trial that exited because it had no searcher operation waits instead of completing.
TEST(ExitPolicyTest, OutOfOpsWaitsForTheSearcher) {
  AllocationExit e{.out_of_ops = true};
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 5, e).decision, ExitDecision::kIdle);
  e.searcher_closed = true;
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 5, e).decision, ExitDecision::kComplete);
  AllocationExit failed{.exit_code = 2, .out_of_ops = true};
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 5, failed).decision, ExitDecision::kRestart);
}

// The lost promotion: the process was told "no operation for now" and left; the searcher's
// promotion came before its exit did. The trial runs again, no restart counted.
TEST(ExitPolicyTest, AnOperationGivenAfterTheProcessWasToldNoneRunsAgain) {
  AllocationExit e{.op_given_after_exit = true};
  ExitOutcome out = InterpretExit(RunState::kActive, 2, 5, e);
  EXPECT_EQ(out.decision, ExitDecision::kRescheduleFree);
  EXPECT_EQ(out.restarts, 2);
  e.searcher_closed = true;
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 5, e).decision, ExitDecision::kComplete);
  AllocationExit failed{.exit_code = 1, .op_given_after_exit = true};
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 5, failed).decision, ExitDecision::kRestart);
}

// A closed trial whose agent is lost completes (no process is started only to be told it is
// done); its own non-zero exit is still a failure.
TEST(ExitPolicyTest, AClosedTrialCompletesWhenItsAgentIsLost) {
  AllocationExit lost{.exit_code = 1, .infrastructure_failure = true, .searcher_closed = true};
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 5, lost).decision, ExitDecision::kComplete);
  EXPECT_EQ(InterpretExit(RunState::kPaused, 0, 5, lost).decision, ExitDecision::kComplete);
  AllocationExit crashed{.exit_code = 7, .searcher_closed = true};
  ExitOutcome out = InterpretExit(RunState::kActive, 0, 0, crashed);
  EXPECT_EQ(out.decision, ExitDecision::kError);
}

TEST(ExitPolicyTest, StoppingTrialsEndTerminal) {
  AllocationExit killed{.exit_code = 137, .killed_by_user = true};
  EXPECT_EQ(InterpretExit(RunState::kStoppingKilled, 0, 5, killed).decision,
            ExitDecision::kTerminal);
}

TEST(StatesTest, NamesRoundTrip) {
  EXPECT_EQ(RunStateName(RunState::kStoppingCanceled), "STOPPING_CANCELED");
  EXPECT_EQ(ParseRunState("STATE_PAUSED"), RunState::kPaused);
  EXPECT_EQ(TerminalFor(RunState::kStoppingKilled), RunState::kCanceled);
  EXPECT_TRUE(ExperimentTransitionAllowed(RunState::kPaused, RunState::kActive));
  EXPECT_FALSE(ExperimentTransitionAllowed(RunState::kCompleted, RunState::kActive));
}

}  // namespace
}  // namespace det::master::core
