#include "master/core/unmanaged_states.h"

namespace det::master::core {
namespace {

// Determined's ranking of trial states for an unmanaged experiment; states not listed (stopping,
// deleting) do not move it. CANCELED is ours: Determined leaves such an experiment PAUSED.
int Rank(RunState s) {
  switch (s) {
    case RunState::kPaused:
      return 10;
    case RunState::kCanceled:
      return 15;
    case RunState::kError:
      return 20;
    case RunState::kCompleted:
      return 30;
    case RunState::kActive:
      return 40;
    default:
      return 0;
  }
}

}  // namespace

Result<RunState> ParseUnmanagedTrialState(std::string_view name) {
  std::string_view bare = name;
  if (bare.starts_with("STATE_")) bare.remove_prefix(6);
  if (bare == "RUNNING" || bare == "ACTIVE") return RunState::kActive;
  std::optional<RunState> s = ParseRunState(bare);
  if (s && (*s == RunState::kPaused || *s == RunState::kCompleted || *s == RunState::kError ||
            *s == RunState::kCanceled)) {
    return *s;
  }
  return InvalidArgument(
      "state: an unmanaged trial can be set to STATE_RUNNING, STATE_PAUSED, "
      "STATE_COMPLETED, STATE_ERROR or STATE_CANCELED (got '" +
      std::string(name) + "')");
}

std::optional<RunState> UnmanagedExperimentState(const std::vector<RunState>& trial_states) {
  if (trial_states.empty()) return std::nullopt;
  RunState best = RunState::kPaused;
  for (RunState s : trial_states) {
    if (Rank(s) > Rank(best)) best = s;
  }
  return best;
}

std::string PresentedUnmanagedState(std::string_view db_state) {
  if (db_state == "ACTIVE") return "STATE_RUNNING";
  return "STATE_" + std::string(db_state);
}

}  // namespace det::master::core
