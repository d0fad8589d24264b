#pragma once
// A trial's side of the search: the operations the searcher gave it, and the decisions that
// follow from them (what its process is told when it asks, whether a completion applies, what
// an exit means, whether it needs a process). Pure: the experiments service and the cluster
// simulation (master/sim) both decide through these, so the simulation tests the real rules.

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "master/core/exit_policy.h"
#include "master/core/states.h"

namespace det::master::core {

// The master's searcher bookkeeping for one trial (as in the snapshot's "trials").
struct SearcherTrialState {
  std::vector<uint64_t> ops;  // pending ValidateAfter lengths, absolute
  uint64_t completed_op = 0;  // the last length reported completed, so a retry is a no-op
  bool closed = false;        // closed by the searcher
  bool exited_early = false;  // reported an InvalidHP early exit
  bool searcher_exited = false;  // TrialExited already given to the searcher

  bool operator==(const SearcherTrialState&) const = default;
  nlohmann::json ToJson() const;
  static SearcherTrialState FromJson(const nlohmann::json& j);
};

// What a process asking for its next operation is told.
enum class OpAnswerKind {
  kTrain,       // train to `length`, then report it
  kDone,        // the search is finished with this trial: exit
  kNoneForNow,  // nothing yet (e.g. a promotion may come): exit and free the slots
  kWait,        // no process of the trial holds an allocation: wait for one
};
struct OpAnswer {
  OpAnswerKind kind = OpAnswerKind::kWait;
  uint64_t length = 0;
};
OpAnswer AnswerOperation(const SearcherTrialState& s, RunState trial_state, bool has_allocation);

// A process reports it trained to `length`. kApply: give it to the searcher (ApplyCompletion);
// kAlreadyStored: a retry of a completion stored before its reply was lost; an error names
// the field when no pending operation has that length or the metric is not finite.
enum class CompletionKind { kApply, kAlreadyStored };
Result<CompletionKind> CheckCompletion(const SearcherTrialState& s, int64_t trial_id,
                                       uint64_t length, double metric);
void ApplyCompletion(SearcherTrialState* s, uint64_t length);

// The searcher closes the trial: its pending operations are dropped, and then a process of it
// is asked to checkpoint and stop (its exit completes the trial), or a trial without one that
// is not ending already completes now (and the searcher is told it exited).
enum class CloseEffect { kNone, kStopProcess, kCompleteNow };
CloseEffect ApplyClose(SearcherTrialState* s, RunState trial_state, bool has_allocation);

// What the allocation's end says, before the trial's searcher state is taken into account.
struct ProcessEnd {
  int exit_code = 0;
  bool killed_by_user = false;
  bool preemption_acked = false;
  bool infrastructure = false;
  bool told_none = false;  // answered "no operation for now" (or restored: it may have been)
  // The process followed the searcher in this run (was told to train by GET .../operation,
  // reported progress on an operation or completed one) and got somewhere (completed an
  // operation, or left a checkpoint of more steps than the one it started from).
  bool followed_op = false;
  bool progressed = false;
  // A line of this run matched a cancel_retries log policy: a failure is not retried.
  bool dont_retry = false;
};
// The facts InterpretExit decides on: an exit with searcher work left runs again instead of
// completing the trial: an operation given after the process was told none, or one pending
// when (or given after) a process that followed the searcher and got somewhere exits 0 on its
// own. A
// process that never followed the searcher (a script with no operations loop), or that got
// nowhere since its start (it stops itself, e.g. converged), completes the trial as in
// Determined (exit 0 without a preemption: the user's code is done).
AllocationExit ExitFacts(const ProcessEnd& end, const SearcherTrialState& s);

// Whether an ACTIVE trial of an ACTIVE experiment, without an allocation, needs a process.
bool NeedsProcess(RunState experiment_state, RunState trial_state, bool has_allocation,
                  const SearcherTrialState& s);

}  // namespace det::master::core
