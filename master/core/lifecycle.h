#pragma once
// What experiment and trial state transitions imply (reference architecture §4.1–4.2), and the
// states the API presents for them. Pure: the Master feeds in what it knows of the trials and
// allocations and applies the answer.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "master/core/states.h"

namespace det::master::core {

// An allocation's life: queued for slots, given slots, its processes started, ended.
enum class AllocationState { kPending, kAssigned, kRunning, kTerminated };

// "PENDING", "ASSIGNED", "RUNNING", "TERMINATED" as stored.
std::string_view AllocationStateName(AllocationState s);
std::optional<AllocationState> ParseAllocationState(std::string_view name);
// "STATE_PENDING", ... as `det task list` shows it.
std::string PresentedAllocationState(AllocationState s);

// "STATE_" + the stored name, the API's enum spelling.
std::string PresentedRunState(RunState s);

// What a trial's live allocation is doing; kNone when it has none.
enum class TrialActivity { kNone, kPending, kAssigned, kRunning };
TrialActivity ActivityOf(std::optional<AllocationState> live_allocation);

// An ACTIVE trial is shown as STATE_QUEUED (waiting for slots), STATE_STARTING (slots given) or
// STATE_RUNNING (its processes started); every other state as stored.
std::string PresentedTrialState(RunState state, TrialActivity activity);

// An ACTIVE experiment is shown as STATE_RUNNING when any trial runs, else STATE_STARTING when
// any has slots, else STATE_QUEUED; every other state as stored.
std::string PresentedExperimentState(RunState state, bool any_running, bool any_assigned);

// Whether `from` -> `to` is a legal trial transition: ACTIVE <-> PAUSED, into a stopping state
// and from it into its terminal state (or ERROR); a terminal trial moves again only when its
// experiment is continued (back to ACTIVE, never from COMPLETED).
bool TrialTransitionAllowed(RunState from, RunState to);

// The state a trial that is not terminal takes when its experiment enters `stopping`: with no
// process to stop it ends at once (CANCELED); otherwise it waits in `stopping` for its exit.
RunState TrialStateOnStop(RunState stopping, bool has_live_allocation);

// Why the searcher shut the experiment down.
struct SearcherShutdown {
  bool cancel = false;
  bool failure = false;
};

// What the experiment's trials look like when deciding whether it ends.
struct ExperimentTrialsSummary {
  int64_t live = 0;  // trials not terminal, or terminal with a process still running
  bool any_completed = false;
  bool any_errored = false;
};

// Whether the experiment ends now, and in which state: only once no trial is live; a stopping
// experiment ends in its terminal state, a continued one by its trials' outcome (COMPLETED if
// any completed, else ERROR if any errored, else CANCELED), an active one that the searcher shut
// down by the shutdown's kind. nullopt: it goes on. A live trial only ever makes it nullopt, so
// when the answer for no live trial is nullopt, counting the trials can be skipped.
std::optional<RunState> ExperimentEndState(RunState state, const ExperimentTrialsSummary& trials,
                                           bool continued,
                                           const std::optional<SearcherShutdown>& shutdown);

}  // namespace det::master::core
