#include "master/core/states.h"

#include <array>
#include <utility>

namespace det::master::core {
namespace {

constexpr std::array<std::pair<RunState, std::string_view>, 12> kNames = {{
    {RunState::kActive, "ACTIVE"},
    {RunState::kPaused, "PAUSED"},
    {RunState::kStoppingCompleted, "STOPPING_COMPLETED"},
    {RunState::kStoppingCanceled, "STOPPING_CANCELED"},
    {RunState::kStoppingKilled, "STOPPING_KILLED"},
    {RunState::kStoppingError, "STOPPING_ERROR"},
    {RunState::kCompleted, "COMPLETED"},
    {RunState::kCanceled, "CANCELED"},
    {RunState::kError, "ERROR"},
    {RunState::kDeleting, "DELETING"},
    {RunState::kDeleteFailed, "DELETE_FAILED"},
    {RunState::kDeleted, "DELETED"},
}};

}  // namespace

std::string_view RunStateName(RunState s) {
  for (const auto& [state, name] : kNames) {
    if (state == s) return name;
  }
  return "UNSPECIFIED";
}

std::optional<RunState> ParseRunState(std::string_view name) {
  if (name.starts_with("STATE_")) name.remove_prefix(6);
  for (const auto& [state, n] : kNames) {
    if (n == name) return state;
  }
  return std::nullopt;
}

bool IsTerminal(RunState s) {
  return s == RunState::kCompleted || s == RunState::kCanceled || s == RunState::kError ||
         s == RunState::kDeleted || s == RunState::kDeleting || s == RunState::kDeleteFailed;
}

bool IsStopping(RunState s) {
  return s == RunState::kStoppingCompleted || s == RunState::kStoppingCanceled ||
         s == RunState::kStoppingKilled || s == RunState::kStoppingError;
}

RunState TerminalFor(RunState stopping) {
  switch (stopping) {
    case RunState::kStoppingCompleted: return RunState::kCompleted;
    case RunState::kStoppingCanceled:
    case RunState::kStoppingKilled: return RunState::kCanceled;
    case RunState::kStoppingError: return RunState::kError;
    default: return stopping;
  }
}

bool ExperimentTransitionAllowed(RunState from, RunState to) {
  if (from == to) return false;
  switch (from) {
    case RunState::kActive:
      return to == RunState::kPaused || IsStopping(to) || to == RunState::kError ||
             to == RunState::kCompleted || to == RunState::kCanceled;
    case RunState::kPaused:
      return to == RunState::kActive || IsStopping(to) || to == RunState::kError ||
             to == RunState::kCanceled;
    case RunState::kStoppingCanceled:
      return to == RunState::kCanceled || to == RunState::kStoppingKilled ||
             to == RunState::kStoppingError || to == RunState::kError;
    case RunState::kStoppingKilled:
      return to == RunState::kCanceled || to == RunState::kStoppingError || to == RunState::kError;
    case RunState::kStoppingCompleted:
      return to == RunState::kCompleted || to == RunState::kStoppingError ||
             to == RunState::kError || to == RunState::kStoppingCanceled ||
             to == RunState::kStoppingKilled;
    case RunState::kStoppingError:
      return to == RunState::kActive || to == RunState::kError;
    case RunState::kCompleted:
    case RunState::kCanceled:
    case RunState::kError:
      return to == RunState::kDeleting;
    case RunState::kDeleting:
      return to == RunState::kDeleted || to == RunState::kDeleteFailed;
    default:
      return false;
  }
}

}  // namespace det::master::core
