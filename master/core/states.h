#pragma once
// Experiment and trial states and their legal transitions (reference architecture §4.1–4.2).
// Pure: no I/O.

#include <optional>
#include <string>
#include <string_view>

namespace det::master::core {

enum class RunState {
  kActive,
  kPaused,
  kStoppingCompleted,
  kStoppingCanceled,
  kStoppingKilled,
  kStoppingError,
  kCompleted,
  kCanceled,
  kError,
  kDeleting,
  kDeleteFailed,
  kDeleted,
};

// "ACTIVE", "STOPPING_CANCELED", ... as stored.
std::string_view RunStateName(RunState s);
std::optional<RunState> ParseRunState(std::string_view name);
bool IsTerminal(RunState s);
bool IsStopping(RunState s);
// The terminal state a stopping state ends in.
RunState TerminalFor(RunState stopping);
// Whether `from` -> `to` is a legal experiment transition.
bool ExperimentTransitionAllowed(RunState from, RunState to);

}  // namespace det::master::core
