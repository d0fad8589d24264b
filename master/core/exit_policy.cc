#include "master/core/exit_policy.h"

namespace det::master::core {

std::string ExitPhrase(int exit_code) {
  if (exit_code == 0) return "resources exited successfully with a zero exit code";
  std::string code = std::to_string(exit_code);
  return "resources failed with non-zero exit code: container failed with non-zero exit code: " +
         code + " (exit code " + code + ")";
}

ExitOutcome InterpretExit(RunState trial_state, int64_t restarts, int64_t max_restarts,
                          const AllocationExit& exit) {
  bool failed = exit.exit_code != 0 && !exit.killed_by_user && !exit.preemption_acked;
  if (IsStopping(trial_state)) {
    if (failed && !exit.infrastructure_failure && trial_state != RunState::kStoppingKilled &&
        trial_state != RunState::kStoppingCanceled) {
      return {ExitDecision::kError, restarts, "trial failed while stopping"};
    }
    return {ExitDecision::kTerminal, restarts, "trial stopped"};
  }
  // A closed trial has nothing left to run: an agent lost under it completes it rather than
  // starting a process only to be told it is done. Its own non-zero exit is still a failure.
  if (exit.searcher_closed && (!failed || exit.infrastructure_failure)) {
    return {ExitDecision::kComplete, restarts, "hp search is finished"};
  }
  if (exit.infrastructure_failure) {
    return {ExitDecision::kRescheduleFree, restarts, "infrastructure failure, not counted"};
  }
  if (failed) {
    if (exit.dont_retry) {
      return {ExitDecision::kError, restarts, "trial failed and matched logs to a don't retry policy"};
    }
    int64_t next = restarts + 1;
    // The failure that ends it is no restart: a trial that ran max_restarts + 1 times shows
    // max_restarts restarts, as Determined's does.
    if (next > max_restarts) {
      return {ExitDecision::kError, restarts, "trial exceeded max restarts"};
    }
    return {ExitDecision::kRestart, next, "trial failed, restarting"};
  }
  if (exit.invalid_hp) return {ExitDecision::kComplete, restarts, "invalid hyperparameters"};
  if (exit.out_of_ops) {
    return {ExitDecision::kIdle, restarts, "waiting for the searcher's next operation"};
  }
  if (exit.op_given_after_exit) {
    return {ExitDecision::kRescheduleFree, restarts, "the searcher has a new operation"};
  }
  if (exit.preemption_acked) {
    if (trial_state == RunState::kPaused) return {ExitDecision::kIdle, restarts, "paused"};
    return {ExitDecision::kRescheduleFree, restarts, "preempted"};
  }
  if (exit.work_left) {
    return {ExitDecision::kRescheduleFree, restarts,
            "the searcher has work left for the trial, not counted"};
  }
  // Exit 0 without acknowledging preemption: the user's code decided it was done.
  return {ExitDecision::kComplete, restarts, "exited successfully"};
}

}  // namespace det::master::core
