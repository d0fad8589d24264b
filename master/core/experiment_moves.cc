#include "master/core/experiment_moves.h"

#include "master/core/lifecycle.h"

namespace det::master::core {

TrialMove MoveWithExperiment(RunState experiment_to, RunState trial_state,
                             TrialPresence presence) {
  TrialMove m;
  if (IsTerminal(trial_state)) return m;
  if (experiment_to == RunState::kActive) {
    if (trial_state == RunState::kPaused) m.to = RunState::kActive;
    // Every ACTIVE trial without an allocation gets one, closed or not: its process is then
    // told it is done (or what the searcher has for it).
    if ((m.to || trial_state == RunState::kActive) && presence == TrialPresence::kNone) {
      m.request_process = true;
    }
    return m;
  }
  if (experiment_to == RunState::kPaused) {
    if (trial_state != RunState::kActive) return m;
    m.to = RunState::kPaused;
    m.drop_queued = presence == TrialPresence::kQueued;
    m.stop_process = presence == TrialPresence::kRunning;
    return m;
  }
  if (!IsStopping(experiment_to)) return m;
  const bool running = presence == TrialPresence::kRunning;
  RunState target = TrialStateOnStop(experiment_to, running);
  if (trial_state == target) return m;
  m.to = target;
  m.drop_queued = presence == TrialPresence::kQueued;
  if (running) {
    (experiment_to == RunState::kStoppingKilled ? m.kill_process : m.stop_process) = true;
  } else {
    m.tell_searcher_canceled = IsTerminal(target);
  }
  return m;
}

}  // namespace det::master::core
