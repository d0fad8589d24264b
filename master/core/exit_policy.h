#pragma once
// How an allocation's exit is interpreted (reference architecture §4.3). Pure.

#include <cstdint>
#include <string>

#include "master/core/states.h"

namespace det::master::core {

struct AllocationExit {
  int exit_code = 0;
  bool killed_by_user = false;     // we sent kill because of kill/cancel/pause timeout
  bool preemption_acked = false;   // the process acknowledged a preemption signal
  bool infrastructure_failure = false;  // agent lost, start failure on our side
  bool invalid_hp = false;         // the trial reported an InvalidHP early exit
  bool searcher_closed = false;    // the searcher already finished with this trial
  bool out_of_ops = false;         // told it had no searcher operation for now (awaits one)
  // Told it had no operation for now, and the searcher has given one since: the process left
  // because it was told to, so the new operation runs in a new process (the lost promotion).
  bool op_given_after_exit = false;
  // Exited 0 on its own with an operation of the searcher still pending, after following the
  // searcher in this run and getting somewhere (core::ProcessEnd): the rest runs in a new
  // process from the latest checkpoint.
  bool work_left = false;
  // A line this run logged matched a cancel_retries log policy of the experiment's config: a
  // failure ends the trial without a restart.
  bool dont_retry = false;
};

enum class ExitDecision {
  kComplete,        // trial -> COMPLETED
  kRestart,         // reschedule, restarts was incremented
  kRescheduleFree,  // reschedule without counting a restart
  kError,           // trial -> ERROR
  kTerminal,        // trial was stopping: move to its terminal state
  kIdle,            // paused, or waiting for the searcher: nothing to schedule now
};

struct ExitOutcome {
  ExitDecision decision;
  int64_t restarts;  // the trial's restart count after this exit
  std::string reason;
};

// How Determined words an allocation's exit in its logs ("resources exited successfully with a
// zero exit code", "resources failed with non-zero exit code: container failed with non-zero
// exit code: N (exit code N)"): users' log alerts and
// Determined's own tests match on it, so the master's exit lines carry it.
std::string ExitPhrase(int exit_code);

// `trial_state` is the trial's state when the exit arrived.
ExitOutcome InterpretExit(RunState trial_state, int64_t restarts, int64_t max_restarts,
                          const AllocationExit& exit);

}  // namespace det::master::core
