#pragma once
// What one trial does when its experiment is paused, activated or stopped. Pure: applied by
// core::Experiment, which both the experiments service and the cluster simulation (master/sim)
// run, so the simulation runs the master's rule rather than a copy of it.

#include <optional>

#include "master/core/states.h"

namespace det::master::core {

// Where the trial's allocation is.
enum class TrialPresence {
  kNone,     // no allocation
  kQueued,   // queued for slots, never placed: it can end without an exit
  kRunning,  // placed: its process must stop and its exit decides the rest
};

struct TrialMove {
  std::optional<RunState> to;  // the trial's new state; nullopt: it stays as it is
  bool drop_queued = false;    // its queued allocation ends unplaced
  bool stop_process = false;   // its process is asked to checkpoint and stop (preemption)
  bool kill_process = false;   // its process is killed
  bool request_process = false;  // a new run of it is queued
  // It ended without a process of its own to report the end: the searcher is told it exited,
  // canceled by the user.
  bool tell_searcher_canceled = false;
};

// `experiment_to` is the state the experiment moves to: kActive (an activation), kPaused, or a
// stopping state. Terminal trials never move; a paused trial whose process has not exited yet
// is made ACTIVE and gets no new run (its exit after the preemption runs it again).
TrialMove MoveWithExperiment(RunState experiment_to, RunState trial_state, TrialPresence presence);

}  // namespace det::master::core
