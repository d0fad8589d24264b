#include "master/core/trial_searcher.h"

#include <gtest/gtest.h>

#include <limits>

namespace det::master::core {
namespace {

SearcherTrialState WithOps(std::vector<uint64_t> ops) {
  SearcherTrialState s;
  s.ops = std::move(ops);
  return s;
}

TEST(TrialSearcherTest, AnswersTheFirstPendingOperation) {
  OpAnswer a = AnswerOperation(WithOps({30, 90}), RunState::kActive, true);
  EXPECT_EQ(a.kind, OpAnswerKind::kTrain);
  EXPECT_EQ(a.length, 30u);
}

TEST(TrialSearcherTest, NoOperationMeansDoneNoneForNowOrWait) {
  SearcherTrialState closed;
  closed.closed = true;
  EXPECT_EQ(AnswerOperation(closed, RunState::kActive, true).kind, OpAnswerKind::kDone);
  EXPECT_EQ(AnswerOperation({}, RunState::kStoppingKilled, true).kind, OpAnswerKind::kDone);
  EXPECT_EQ(AnswerOperation({}, RunState::kCompleted, false).kind, OpAnswerKind::kDone);
  EXPECT_EQ(AnswerOperation({}, RunState::kActive, true).kind, OpAnswerKind::kNoneForNow);
  EXPECT_EQ(AnswerOperation({}, RunState::kActive, false).kind, OpAnswerKind::kWait);
}

TEST(TrialSearcherTest, CompletionAppliesOnceAndNamesTheField) {
  SearcherTrialState s = WithOps({10, 30});
  ASSERT_EQ(*CheckCompletion(s, 7, 10, 0.5), CompletionKind::kApply);
  ApplyCompletion(&s, 10);
  EXPECT_EQ(s.ops, (std::vector<uint64_t>{30}));
  EXPECT_EQ(s.completed_op, 10u);
  EXPECT_EQ(*CheckCompletion(s, 7, 10, 0.5), CompletionKind::kAlreadyStored);
  auto wrong = CheckCompletion(s, 7, 20, 0.5);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("op.length"), std::string::npos);
  EXPECT_NE(wrong.status().message().find("20"), std::string::npos);
  auto nan = CheckCompletion(s, 7, 30, std::numeric_limits<double>::quiet_NaN());
  ASSERT_FALSE(nan.ok());
  EXPECT_NE(nan.status().message().find("searcherMetric"), std::string::npos);
}

TEST(TrialSearcherTest, ContinuedTrialClosesWhenItsLastOperationIsDone) {
  SearcherTrialState s = WithOps({90});
  s.searcher_exited = true;
  ApplyCompletion(&s, 90);
  EXPECT_TRUE(s.closed);
}

// The lost promotion: told none, then a promotion, then the exit: it runs again, not counted.
TEST(TrialSearcherTest, AnOperationGivenAfterToldNoneRunsTheTrialAgain) {
  ProcessEnd end;
  end.told_none = true;
  AllocationExit idle = ExitFacts(end, {});
  EXPECT_TRUE(idle.out_of_ops);
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 5, idle).decision, ExitDecision::kIdle);
  AllocationExit promoted = ExitFacts(end, WithOps({90}));
  EXPECT_TRUE(promoted.op_given_after_exit);
  ExitOutcome o = InterpretExit(RunState::kActive, 0, 5, promoted);
  EXPECT_EQ(o.decision, ExitDecision::kRescheduleFree);
  EXPECT_EQ(o.restarts, 0);
}

// A process that followed the searcher, checkpointed or completed an operation, and exits 0 on
// its own with an operation pending: the rest runs in a new process, no restart counted.
TEST(TrialSearcherTest, AnOwnExitWithWorkLeftRunsTheTrialAgain) {
  ProcessEnd end;
  end.followed_op = true;
  end.progressed = true;
  ExitOutcome o = InterpretExit(RunState::kActive, 0, 0, ExitFacts(end, WithOps({30})));
  EXPECT_EQ(o.decision, ExitDecision::kRescheduleFree);
  EXPECT_EQ(o.restarts, 0);
  // Paused meanwhile: still not done; the activation runs it (the service's ResumeTrials).
  EXPECT_EQ(InterpretExit(RunState::kPaused, 0, 0, ExitFacts(end, WithOps({30}))).decision,
            ExitDecision::kRescheduleFree);
  // Nothing pending yet: it waits for the searcher's next operation (or close), as after
  // "none for now"; closed: done.
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 0, ExitFacts(end, {})).decision,
            ExitDecision::kIdle);
  SearcherTrialState closed = WithOps({30});
  closed.closed = true;
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 0, ExitFacts(end, closed)).decision,
            ExitDecision::kComplete);
}

// Determined's rule for exit 0: a script with no operations loop, or one that stops itself
// without getting anywhere in this run (e.g. it decided it converged), is done.
TEST(TrialSearcherTest, AnOwnExitWithoutFollowingOrProgressCompletesTheTrial) {
  ProcessEnd ignored;  // never asked, reported progress or completed
  ignored.progressed = true;
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 5, ExitFacts(ignored, WithOps({30}))).decision,
            ExitDecision::kComplete);
  ProcessEnd stopped;
  stopped.followed_op = true;
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 5, ExitFacts(stopped, WithOps({30}))).decision,
            ExitDecision::kComplete);
  // A failure is still a failure.
  ProcessEnd crashed = ignored;
  crashed.followed_op = true;
  crashed.exit_code = 1;
  EXPECT_EQ(InterpretExit(RunState::kActive, 0, 0, ExitFacts(crashed, WithOps({30}))).decision,
            ExitDecision::kError);
}

TEST(TrialSearcherTest, AClosedTrialStopsItsProcessOrCompletesNow) {
  SearcherTrialState running = WithOps({30});
  EXPECT_EQ(ApplyClose(&running, RunState::kActive, true), CloseEffect::kStopProcess);
  EXPECT_TRUE(running.closed);
  EXPECT_TRUE(running.ops.empty());
  SearcherTrialState idle;
  EXPECT_EQ(ApplyClose(&idle, RunState::kActive, false), CloseEffect::kCompleteNow);
  SearcherTrialState paused;
  EXPECT_EQ(ApplyClose(&paused, RunState::kPaused, false), CloseEffect::kCompleteNow);
  SearcherTrialState ending;
  EXPECT_EQ(ApplyClose(&ending, RunState::kStoppingCanceled, false), CloseEffect::kNone);
  EXPECT_EQ(ApplyClose(&ending, RunState::kCanceled, false), CloseEffect::kNone);
}

TEST(TrialSearcherTest, SnapshotRoundTrip) {
  SearcherTrialState s = WithOps({10, 30});
  s.completed_op = 3;
  s.closed = true;
  s.searcher_exited = true;
  EXPECT_EQ(SearcherTrialState::FromJson(s.ToJson()), s);
}

TEST(TrialSearcherTest, NeedsProcessOnlyWhenBothAreActive) {
  EXPECT_TRUE(NeedsProcess(RunState::kActive, RunState::kActive, false, {}));
  EXPECT_FALSE(NeedsProcess(RunState::kPaused, RunState::kActive, false, {}));
  EXPECT_FALSE(NeedsProcess(RunState::kActive, RunState::kActive, true, {}));
  SearcherTrialState closed;
  closed.closed = true;
  EXPECT_FALSE(NeedsProcess(RunState::kActive, RunState::kActive, false, closed));
}

}  // namespace
}  // namespace det::master::core
