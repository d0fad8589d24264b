#pragma once
// States of unmanaged (core_v2) experiments and trials: the script outside the cluster says what
// its trial is doing, and the experiment follows its trials. Pure: no I/O.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "master/core/states.h"

namespace det::master::core {

// The stored state a trial state patch (PATCH /api/v1/trials/{id}) asks for. Takes Determined's
// trialv1State names with or without "STATE_": RUNNING (stored as ACTIVE, as is ACTIVE itself),
// PAUSED, COMPLETED, ERROR, CANCELED. Any other is an error naming the value.
Result<RunState> ParseUnmanagedTrialState(std::string_view name);

// The experiment state its trials add up to, as Determined ranks them: a running trial makes it
// ACTIVE, else COMPLETED if one completed, else ERROR if one errored, else CANCELED if one was
// canceled, else PAUSED. nullopt when there are no trials (the state stays as it is).
std::optional<RunState> UnmanagedExperimentState(const std::vector<RunState>& trial_states);

// How an unmanaged experiment or trial in stored state `db_state` is shown: "STATE_RUNNING" for
// ACTIVE (its script is running it), else "STATE_<db_state>".
std::string PresentedUnmanagedState(std::string_view db_state);

}  // namespace det::master::core
