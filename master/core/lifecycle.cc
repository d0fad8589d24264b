#include "master/core/lifecycle.h"

#include <array>
#include <utility>

namespace det::master::core {
namespace {

constexpr std::array<std::pair<AllocationState, std::string_view>, 4> kAllocationNames = {{
    {AllocationState::kPending, "PENDING"},
    {AllocationState::kAssigned, "ASSIGNED"},
    {AllocationState::kRunning, "RUNNING"},
    {AllocationState::kTerminated, "TERMINATED"},
}};

}  // namespace

std::string_view AllocationStateName(AllocationState s) {
  for (const auto& [state, name] : kAllocationNames) {
    if (state == s) return name;
  }
  return "UNSPECIFIED";
}

std::optional<AllocationState> ParseAllocationState(std::string_view name) {
  if (name.starts_with("STATE_")) name.remove_prefix(6);
  for (const auto& [state, n] : kAllocationNames) {
    if (n == name) return state;
  }
  return std::nullopt;
}

std::string PresentedAllocationState(AllocationState s) {
  return "STATE_" + std::string(AllocationStateName(s));
}

std::string PresentedRunState(RunState s) { return "STATE_" + std::string(RunStateName(s)); }

TrialActivity ActivityOf(std::optional<AllocationState> live_allocation) {
  if (!live_allocation) return TrialActivity::kNone;
  switch (*live_allocation) {
    case AllocationState::kPending:
      return TrialActivity::kPending;
    case AllocationState::kAssigned:
      return TrialActivity::kAssigned;
    case AllocationState::kRunning:
      return TrialActivity::kRunning;
    case AllocationState::kTerminated:
      return TrialActivity::kNone;
  }
  return TrialActivity::kNone;
}

std::string PresentedTrialState(RunState state, TrialActivity activity) {
  if (state != RunState::kActive) return PresentedRunState(state);
  switch (activity) {
    case TrialActivity::kRunning:
      return "STATE_RUNNING";
    case TrialActivity::kAssigned:
      return "STATE_STARTING";
    case TrialActivity::kNone:
    case TrialActivity::kPending:
      return "STATE_QUEUED";
  }
  return "STATE_QUEUED";
}

std::string PresentedExperimentState(RunState state, bool any_running, bool any_assigned) {
  if (state != RunState::kActive) return PresentedRunState(state);
  if (any_running) return "STATE_RUNNING";
  if (any_assigned) return "STATE_STARTING";
  return "STATE_QUEUED";
}

bool TrialTransitionAllowed(RunState from, RunState to) {
  if (from == to) return false;
  switch (from) {
    case RunState::kActive:
      return to == RunState::kPaused || IsStopping(to) || to == RunState::kCompleted ||
             to == RunState::kCanceled || to == RunState::kError;
    case RunState::kPaused:
      // A paused trial's process may still end on its own (exit 0 before the pause landed).
      return to == RunState::kActive || IsStopping(to) || to == RunState::kCompleted ||
             to == RunState::kCanceled || to == RunState::kError;
    case RunState::kStoppingCompleted:
    case RunState::kStoppingCanceled:
    case RunState::kStoppingKilled:
    case RunState::kStoppingError:
      // A graceful stop may be escalated to a kill; every stop may end in an error.
      return to == TerminalFor(from) || to == RunState::kError ||
             (to == RunState::kStoppingKilled && from == RunState::kStoppingCanceled);
    case RunState::kCanceled:
    case RunState::kError:
      return to == RunState::kActive;  // `det experiment continue`
    default:
      return false;
  }
}

RunState TrialStateOnStop(RunState stopping, bool has_live_allocation) {
  if (!has_live_allocation) return TerminalFor(stopping);
  return stopping;
}

std::optional<RunState> ExperimentEndState(RunState state, const ExperimentTrialsSummary& trials,
                                           bool continued,
                                           const std::optional<SearcherShutdown>& shutdown) {
  if (IsTerminal(state) || trials.live > 0) return std::nullopt;
  if (IsStopping(state)) return TerminalFor(state);
  if (state != RunState::kActive) return std::nullopt;
  if (continued) {
    return trials.any_completed ? RunState::kCompleted
           : trials.any_errored ? RunState::kError
                                : RunState::kCanceled;
  }
  if (shutdown) {
    return shutdown->failure  ? RunState::kError
           : shutdown->cancel ? RunState::kCanceled
                              : RunState::kCompleted;
  }
  return std::nullopt;
}

}  // namespace det::master::core
