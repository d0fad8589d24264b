#include "master/core/trial_searcher.h"

#include <cmath>
#include <string>

namespace det::master::core {

using nlohmann::json;

json SearcherTrialState::ToJson() const {
  return {{"ops", ops},
          {"completed_op", completed_op},
          {"closed", closed},
          {"exited_early", exited_early},
          {"searcher_exited", searcher_exited}};
}

SearcherTrialState SearcherTrialState::FromJson(const json& j) {
  SearcherTrialState t;
  auto ops = j.find("ops");
  if (ops != j.end() && ops->is_array()) {
    for (const json& op : *ops) t.ops.push_back(op.get<uint64_t>());
  }
  t.completed_op = j.value("completed_op", uint64_t{0});
  t.closed = j.value("closed", false);
  t.exited_early = j.value("exited_early", false);
  t.searcher_exited = j.value("searcher_exited", false);
  return t;
}

OpAnswer AnswerOperation(const SearcherTrialState& s, RunState trial_state, bool has_allocation) {
  if (!s.ops.empty()) return {OpAnswerKind::kTrain, s.ops.front()};
  if (s.closed || IsTerminal(trial_state) || IsStopping(trial_state)) {
    return {OpAnswerKind::kDone, 0};
  }
  // Nothing until the searcher decides: a process exits and frees its slots, and the trial
  // runs again from its checkpoint when an operation arrives.
  if (has_allocation) return {OpAnswerKind::kNoneForNow, 0};
  return {OpAnswerKind::kWait, 0};
}

Result<CompletionKind> CheckCompletion(const SearcherTrialState& s, int64_t trial_id,
                                       uint64_t length, double metric) {
  bool pending = !s.ops.empty() && s.ops.front() == length;
  if (!pending && length != 0 && length == s.completed_op) return CompletionKind::kAlreadyStored;
  if (!pending) {
    return InvalidArgument("op.length: no pending searcher operation of length " +
                           std::to_string(length) + " for trial " + std::to_string(trial_id));
  }
  if (!std::isfinite(metric)) return InvalidArgument("searcherMetric: must be a finite number");
  return CompletionKind::kApply;
}

void ApplyCompletion(SearcherTrialState* s, uint64_t length) {
  s->ops.erase(s->ops.begin());
  s->completed_op = length;
  // A continued trial (det e continue) finishes work the searcher already closed the books on.
  if (s->searcher_exited && s->ops.empty()) s->closed = true;
}

AllocationExit ExitFacts(const ProcessEnd& end, const SearcherTrialState& s) {
  AllocationExit e;
  e.exit_code = end.exit_code;
  e.killed_by_user = end.killed_by_user;
  e.preemption_acked = end.preemption_acked;
  e.infrastructure_failure = end.infrastructure;
  e.invalid_hp = s.exited_early;
  e.searcher_closed = s.closed;
  // Left on its own after getting somewhere: the same as told none, whether an operation is
  // pending (it runs again now) or comes later (it runs again then).
  bool left_working = end.followed_op && end.progressed;
  e.out_of_ops = (end.told_none || left_working) && s.ops.empty();
  e.op_given_after_exit = end.told_none && !s.ops.empty();
  e.work_left = !end.told_none && left_working && !s.ops.empty();
  e.dont_retry = end.dont_retry;
  return e;
}

CloseEffect ApplyClose(SearcherTrialState* s, RunState trial_state, bool has_allocation) {
  s->closed = true;
  s->ops.clear();
  if (has_allocation) return CloseEffect::kStopProcess;
  if (IsTerminal(trial_state) || IsStopping(trial_state)) return CloseEffect::kNone;
  return CloseEffect::kCompleteNow;
}

bool NeedsProcess(RunState experiment_state, RunState trial_state, bool has_allocation,
                  const SearcherTrialState& s) {
  return experiment_state == RunState::kActive && trial_state == RunState::kActive &&
         !has_allocation && !s.closed;
}

}  // namespace det::master::core
