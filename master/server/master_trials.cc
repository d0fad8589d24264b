// Master: trials as seen by their processes (metrics, checkpoints, searcher ops, logs) and the
// interpretation of allocation exits.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "master/config/searcher_metric.h"
#include "master/core/lifecycle.h"
#include "master/core/unmanaged_states.h"
#include "master/server/master.h"
#include "master/server/master_runtime.h"
#include "master/server/passwords.h"
#include "master/server/slurm_service.h"
#include "master/server/task_service.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

namespace {

Status CheckTrialAccess(const Principal& who, int64_t trial_id) {
  if (who.is_allocation && who.trial_id != trial_id) {
    return PermissionDenied("allocation " + who.allocation_id + " may not act on trial " +
                            std::to_string(trial_id));
  }
  return Status::Ok();
}

}  // namespace

void Master::TerminateAllocationLocked(AllocationRuntime& alloc, bool graceful) {
  if (alloc.state == AllocationRuntime::State::kTerminated) return;
  if (alloc.state == AllocationRuntime::State::kPending) {
    // Never started: end it here.
    alloc.kill_requested = true;
    pending_.erase(std::remove(pending_.begin(), pending_.end(), alloc.id), pending_.end());
    Status st = HandleAllocationExitLocked(alloc, 0, "", false);
    if (!st.ok()) spdlog::error("ending allocation {}: {}", alloc.id, st.ToString());
    return;
  }
  if (graceful) {
    if (!alloc.preempt) {
      alloc.preempt = true;
      const TrialRuntime& trial = *trials_[alloc.trial_id];
      int64_t timeout = experiments_[trial.experiment_id]->config.preemption_timeout;
      alloc.kill_deadline = Now() + timeout * 1000000;
      NotifyAllocationLocked(alloc.id);
    }
    return;
  }
  alloc.kill_requested = true;
  KillResourcesLocked(alloc);
}

Status Master::HandleAllocationExitLocked(AllocationRuntime& alloc, int exit_code,
                                          const std::string& error, bool infrastructure) {
  if (alloc.state == AllocationRuntime::State::kTerminated) return Status::Ok();
  bool never_started = alloc.state == AllocationRuntime::State::kPending;
  alloc.state = AllocationRuntime::State::kTerminated;
  auth_->EndAllocationDigest(alloc.token_digest);  // refused from now on
  if (slurm_) slurm_->Forget(alloc.id);    // its Slurm job ends with it
  NotifyAllocationLocked(alloc.id);
  pending_.erase(std::remove(pending_.begin(), pending_.end(), alloc.id), pending_.end());
  // Work the scheduler took back and had to kill is rescheduled like an infrastructure loss.
  if (alloc.released && alloc.kill_requested) infrastructure = true;
  store::AllocationRow ar = AllocationRowOf(alloc);
  ar.end_time = Now();
  ar.exit_code = exit_code;
  ar.exit_reason = error;
  DET_RETURN_IF_ERROR(store_->UpsertAllocation(ar));

  TrialRuntime& trial = *trials_[alloc.trial_id];
  ExperimentRuntime& exp = *experiments_[trial.experiment_id];
  if (trial.allocation_id == alloc.id) trial.allocation_id.clear();
  NotifyTrialLocked(trial.id);

  core::AllocationExit e;
  e.exit_code = exit_code;
  e.killed_by_user = alloc.kill_requested;
  e.preemption_acked = alloc.preempt_acked || (never_started && alloc.kill_requested);
  e.infrastructure_failure = infrastructure;
  e.invalid_hp = trial.searcher().exited_early;
  e.searcher_closed = trial.searcher().closed;
  e.out_of_ops = (alloc.out_of_ops || alloc.restored) && trial.searcher().ops.empty();
  core::ExitOutcome outcome =
      core::InterpretExit(trial.state, trial.restarts, exp.config.max_restarts, e);
  if (!never_started) {
    std::string msg = "Trial " + std::to_string(trial.id) + " (Experiment " +
                      std::to_string(exp.id) + ") exited with code " + std::to_string(exit_code);
    if (!error.empty()) msg += ": " + error;
    AppendMasterLogLocked(trial.id, trial.task_id, msg + " (" + outcome.reason + ")");
  }
  trial.restarts = outcome.restarts;
  std::vector<searcher::Action> actions;
  auto searcher_exit = [&](std::optional<searcher::ExitedReason> reason) {
    if (trial.searcher().searcher_exited) return;
    trial.MutableSearcher().searcher_exited = true;
    if (reason) {
      for (auto& a : exp.searcher->TrialExitedEarly(trial.request_id, *reason))
        actions.push_back(a);
    }
    for (auto& a : exp.searcher->TrialExited(trial.request_id)) actions.push_back(a);
  };
  switch (outcome.decision) {
    case core::ExitDecision::kComplete:
      DET_RETURN_IF_ERROR(SetTrialStateLocked(trial, RunState::kCompleted));
      searcher_exit(std::nullopt);
      break;
    case core::ExitDecision::kRestart:
    case core::ExitDecision::kRescheduleFree:
      if (exp.state == RunState::kActive && trial.state == RunState::kActive) {
        // The new run's write carries the restart count.
        DET_RETURN_IF_ERROR(RequestAllocationLocked(trial));
      } else {
        store::DecisionWrites w;
        w.trials.push_back({trial.id, std::nullopt, trial.run_id, trial.restarts, std::nullopt});
        DET_RETURN_IF_ERROR(store_->ApplyDecision(w).status());
      }
      break;
    case core::ExitDecision::kError:
      DET_RETURN_IF_ERROR(SetTrialStateLocked(trial, RunState::kError));
      searcher_exit(searcher::ExitedReason::kErrored);
      break;
    case core::ExitDecision::kTerminal: {
      RunState end = core::TerminalFor(trial.state);
      DET_RETURN_IF_ERROR(SetTrialStateLocked(trial, end));
      searcher_exit(end == RunState::kCanceled ? std::optional<searcher::ExitedReason>(
                                                     searcher::ExitedReason::kUserCanceled)
                                               : std::nullopt);
      break;
    }
    case core::ExitDecision::kIdle:
      break;
  }
  if (!actions.empty()) return ProcessActionsLocked(exp, std::move(actions));
  DET_RETURN_IF_ERROR(PersistSnapshotLocked(exp));
  return MaybeFinishExperimentLocked(exp);
}

void Master::ReportMetrics(const Principal& who, int64_t trial_id, int64_t run_id, int64_t steps,
                           const std::string& group, json metrics,
                           std::function<void(Status)> done) {
  auto check = [&]() -> Status {
    DET_RETURN_IF_ERROR(CheckTrialAccess(who, trial_id));
    if (group.empty() || group.find('.') != std::string::npos) {
      return InvalidArgument("group: must be non-empty and contain no '.' (got '" + group + "')");
    }
    if (steps < 0) return InvalidArgument("stepsCompleted: must be >= 0");
    bool known = false;
    {
      MutexLock lock(&mu_);
      auto it = trials_.find(trial_id);
      if (it != trials_.end()) {
        known = true;
        if (run_id != it->second->run_id) {
          return InvalidArgument("invalid run id " + std::to_string(run_id) + " for trial " +
                                 std::to_string(trial_id) + " (current run is " +
                                 std::to_string(it->second->run_id) + ")");
        }
      }
    }
    if (known) return Status::Ok();
    // Only to tell a missing trial from a finished one; read without the lock.
    DET_RETURN_IF_ERROR(store_->GetTrial(trial_id).status());
    return FailedPrecondition("trial " + std::to_string(trial_id) + " is not running");
  };
  if (Status st = check(); !st.ok()) return done(st);
  store::MetricRow row;
  row.trial_id = trial_id;
  row.trial_run_id = run_id;
  row.total_batches = steps;
  row.group = group;
  row.report_time = Now();
  if (group != "validation") {
    row.metrics = std::move(metrics);
    return metrics_->Submit(std::move(row), std::move(done));
  }
  row.metrics = metrics;
  // After the commit: 0.38 searchers (time_metric + max_time) decide from reported validation
  // metrics, and only from stored ones.
  metrics_->Submit(std::move(row), [this, trial_id, metrics = std::move(metrics),
                                    done = std::move(done)](Status st) {
    if (st.ok()) {
      SearcherJournalService::AwaitScope stored(searcher_journal_.get());
      MutexLock lock(&mu_);
      auto it = trials_.find(trial_id);
      if (it != trials_.end()) {
        ExperimentRuntime& exp = *experiments_[it->second->experiment_id];
        if (exp.config.searcher.time_metric && exp.config.searcher.max_time) {
          const json& values =
              metrics.contains("validation_metrics") ? metrics["validation_metrics"] : metrics;
          Result<std::vector<searcher::Action>> actions =
              exp.searcher->ValidationMetricsReported(it->second->request_id, values);
          st = actions.ok() ? ProcessActionsLocked(exp, std::move(actions).value())
                            : actions.status();
        }
      }
    }
    done(st);
  });
}

Status Master::ReportCheckpoint(const Principal& who, store::CheckpointRow row) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  DET_RETURN_IF_ERROR(CheckpointService::Validate(&row));
  if (who.is_allocation) {
    row.trial_id = who.trial_id;
    if (row.allocation_id.empty()) row.allocation_id = who.allocation_id;
  }
  if (row.trial_id == 0) {
    // A user reporting for a task: find the trial by task id.
    MutexLock lock(&mu_);
    for (const auto& [id, t] : trials_) {
      if (t->task_id == row.task_id) row.trial_id = id;
    }
    if (row.trial_id == 0) return NotFound("task " + row.task_id + " not found");
  }
  {
    MutexLock lock(&mu_);
    auto it = trials_.find(row.trial_id);
    if (it != trials_.end() && row.task_id.empty()) row.task_id = it->second->task_id;
    if (who.is_allocation && it != trials_.end() &&
        it->second->allocation_id != who.allocation_id) {
      // A process the master gave up on (e.g. an orphan of a lost agent) must not add a
      // checkpoint the trial's current run would then resume from.
      return FailedPrecondition("allocation " + who.allocation_id + " no longer runs trial " +
                                std::to_string(row.trial_id));
    }
  }
  DET_RETURN_IF_ERROR(checkpoints_->Record(row));
  MutexLock lock(&mu_);
  AppendMasterLogLocked(row.trial_id, row.task_id,
                        "Reported checkpoint " + row.uuid + " at " +
                            std::to_string(row.steps_completed) + " batches");
  return Status::Ok();
}

void Master::GetSearcherOperation(int64_t trial_id, int64_t wait_ms, Reply<SearcherOpView> reply) {
  MutexLock lock(&mu_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  auto step = std::make_shared<std::function<bool(bool)>>(
      [this, trial_id, reply = std::move(reply)](bool final) REQUIRES(mu_) {
        auto it = trials_.find(trial_id);
        if (it == trials_.end()) {
          Status st = store_->GetTrial(trial_id).status();
          if (!st.ok()) {
            reply(st);
          } else {
            reply(SearcherOpView{std::nullopt, std::nullopt, true});
          }
          return true;
        }
        TrialRuntime& t = *it->second;
        if (!t.searcher().ops.empty()) {
          reply(SearcherOpView{t.request_id, t.searcher().ops.front(), false});
          return true;
        }
        if (t.searcher().closed || core::IsTerminal(t.state) || core::IsStopping(t.state)) {
          reply(SearcherOpView{t.request_id, std::nullopt, true});
          return true;
        }
        // Nothing to do until the searcher decides (e.g. a promotion): the process exits and
        // frees its slots; the trial runs again from its checkpoint when an operation arrives.
        if (!t.allocation_id.empty()) {
          auto a = allocations_.find(t.allocation_id);
          if (a != allocations_.end()) a->second->out_of_ops = true;
          reply(SearcherOpView{t.request_id, std::nullopt, true});
          return true;
        }
        if (!final) return false;
        reply(SearcherOpView{t.request_id, std::nullopt, false});
        return true;
      });
  LongPollLocked("trial:" + std::to_string(trial_id), deadline, std::move(step));
}

Status Master::CompleteSearcherOperation(int64_t trial_id, uint64_t length, double metric) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  MutexLock lock(&mu_);
  auto it = trials_.find(trial_id);
  if (it == trials_.end())
    return FailedPrecondition("trial " + std::to_string(trial_id) + " is not running");
  TrialRuntime& t = *it->second;
  const SearcherTrialState& ss = t.searcher();
  if ((ss.ops.empty() || ss.ops.front() != length) && length != 0 && length == ss.completed_op) {
    return Status::Ok();  // a retry of a completion that was stored before its reply was lost
  }
  if (ss.ops.empty() || ss.ops.front() != length) {
    return InvalidArgument("op.length: no pending searcher operation of length " +
                           std::to_string(length) + " for trial " + std::to_string(trial_id));
  }
  if (!std::isfinite(metric)) {
    return InvalidArgument("searcherMetric: must be a finite number");
  }
  SearcherTrialState& ms = t.MutableSearcher();
  ms.ops.erase(ms.ops.begin());
  ms.completed_op = length;
  NotifyTrialLocked(t.id);
  ExperimentRuntime& exp = *experiments_[t.experiment_id];
  std::vector<searcher::Action> actions;
  if (ms.searcher_exited) {
    // A continued trial (det e continue) finishes work the searcher already closed the books on.
    if (ms.ops.empty()) ms.closed = true;
  } else {
    DET_ASSIGN_OR_RETURN(actions, exp.searcher->ValidationCompleted(t.request_id, metric, length));
  }
  DET_ASSIGN_OR_RETURN(store::TrialRow row, store_->GetTrial(trial_id));
  row.searcher_metric = metric;
  DET_RETURN_IF_ERROR(store_->UpdateTrial(row));
  return ProcessActionsLocked(exp, std::move(actions));
}

Status Master::ReportProgress(int64_t trial_id, double fraction) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  if (!std::isfinite(fraction) || fraction < 0) {
    return InvalidArgument("progress: must be a number >= 0");
  }
  MutexLock lock(&mu_);
  auto it = trials_.find(trial_id);
  if (it == trials_.end()) return Status::Ok();
  TrialRuntime& t = *it->second;
  ExperimentRuntime& exp = *experiments_[t.experiment_id];
  double length = t.searcher().ops.empty()
                      ? static_cast<double>(exp.config.searcher.max_length
                                                ? exp.config.searcher.max_length->value
                                                : 1)
                      : static_cast<double>(t.searcher().ops.front());
  exp.searcher->SetTrialProgress(t.request_id, std::min(fraction, 1.0) * length);
  return store_->UpdateExperimentProgress(exp.id, exp.searcher->Progress());
}

Status Master::ReportEarlyExit(int64_t trial_id, const std::string& reason) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  MutexLock lock(&mu_);
  auto it = trials_.find(trial_id);
  if (it == trials_.end())
    return FailedPrecondition("trial " + std::to_string(trial_id) + " is not running");
  TrialRuntime& t = *it->second;
  if (t.searcher().exited_early)
    return InvalidArgument("trial " + std::to_string(trial_id) + " already reported an early exit");
  searcher::ExitedReason r;
  if (reason == "EXITED_REASON_INVALID_HP" || reason == "INVALID_HP") {
    r = searcher::ExitedReason::kInvalidHp;
  } else if (reason == "EXITED_REASON_USER_REQUESTED_STOP" || reason == "USER_REQUESTED_STOP") {
    r = searcher::ExitedReason::kUserRequestedStop;
  } else if (reason == "EXITED_REASON_ERRORED" || reason == "ERRORED") {
    r = searcher::ExitedReason::kErrored;
  } else {
    return InvalidArgument("reason: unknown early exit reason '" + reason + "'");
  }
  t.MutableSearcher().exited_early = r == searcher::ExitedReason::kInvalidHp;
  ExperimentRuntime& exp = *experiments_[t.experiment_id];
  return ProcessActionsLocked(exp, exp.searcher->TrialExitedEarly(t.request_id, r));
}

Status Master::SetRunnerState(int64_t trial_id, const std::string& state) {
  MutexLock lock(&mu_);
  DET_ASSIGN_OR_RETURN(store::TrialRow row, store_->GetTrial(trial_id));
  row.runner_state = state;
  return store_->UpdateTrial(row);
}

Result<json> Master::SetTrialMetadata(int64_t trial_id, const json& metadata) {
  if (!metadata.is_object()) return InvalidArgument("metadata: must be an object");
  // Sets the one column (nothing is read and written back), so it needs no mu_.
  store::DecisionWrites w;
  w.trial_metadata.push_back({trial_id, metadata});
  DET_RETURN_IF_ERROR(store_->ApplyDecision(w).status());
  return metadata;
}

Result<json> Master::GetTrialMetadata(int64_t trial_id) {
  DET_ASSIGN_OR_RETURN(store::TrialRow row, store_->GetTrial(trial_id));
  return row.metadata;
}

void Master::WaitPreemption(const std::string& allocation_id, int64_t timeout_ms,
                            Reply<bool> reply) {
  MutexLock lock(&mu_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto step = std::make_shared<std::function<bool(bool)>>(
      [this, allocation_id, reply = std::move(reply)](bool final) REQUIRES(mu_) {
        auto it = allocations_.find(allocation_id);
        if (it == allocations_.end()) {
          Status st = store_->GetAllocation(allocation_id).status();
          if (st.ok()) {
            reply(true);  // an ended allocation should stop
          } else {
            reply(st);
          }
          return true;
        }
        if (it->second->preempt || it->second->state == AllocationRuntime::State::kTerminated) {
          reply(true);
          return true;
        }
        if (!final) return false;
        reply(false);
        return true;
      });
  LongPollLocked("alloc:" + allocation_id, deadline, std::move(step), timeout_ms <= 0);
}

Status Master::AckPreemption(const std::string& allocation_id) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  MutexLock lock(&mu_);
  auto it = allocations_.find(allocation_id);
  if (it == allocations_.end()) return NotFound("allocation " + allocation_id + " not found");
  it->second->preempt_acked = true;
  return Status::Ok();
}

Status Master::AddTaskLogs(const Principal& who, std::vector<store::TaskLogRow> rows) {
  if (rows.empty()) return Status::Ok();
  std::string task_id;
  int64_t trial_id = who.trial_id;
  {
    MutexLock lock(&mu_);
    if (who.is_allocation) {
      auto it = trials_.find(who.trial_id);
      if (it != trials_.end()) task_id = it->second->task_id;
    }
    for (auto& r : rows) {
      if (who.is_allocation) {
        r.trial_id = trial_id;
        if (r.task_id.empty()) r.task_id = task_id;
        if (r.allocation_id.empty()) r.allocation_id = who.allocation_id;
      } else if (r.trial_id == 0) {
        for (const auto& [id, t] : trials_) {
          if (t->task_id == r.task_id) r.trial_id = id;
        }
      }
      if (r.timestamp == 0) r.timestamp = Now();
    }
  }
  DET_RETURN_IF_ERROR(store_->AddTaskLogs(rows));
  if (who.is_allocation && who.trial_id == 0) tasks_->NotifyLogs(rows.front().task_id);
  std::set<int64_t> trials;
  for (const auto& r : rows) trials.insert(r.trial_id);
  for (int64_t id : trials) waiters_->Notify("logs:" + std::to_string(id));
  return Status::Ok();
}

void Master::AppendMasterLogLocked(int64_t trial_id, const std::string& task_id,
                                   const std::string& message) {
  Status st = store_->AddTaskLogs({MasterLogRow(trial_id, task_id, message)});
  if (!st.ok()) spdlog::warn("cannot store master log line: {}", st.ToString());
  waiters_->Notify("logs:" + std::to_string(trial_id));
}

Result<std::vector<store::TaskLogRow>> Master::TrialLogs(int64_t trial_id, int64_t after_id,
                                                         int64_t limit, bool descending) {
  return store_->ListTrialLogs(trial_id, after_id, limit, descending);
}

bool Master::TrialFinished(int64_t trial_id) {
  if (unmanaged_->IsUnmanagedTrial(trial_id)) {
    // Its script says when it is done: logs are followed until the trial is terminal.
    Result<store::TrialRow> row = store_->GetTrial(trial_id);
    std::optional<RunState> state = row.ok() ? core::ParseRunState(row->state) : std::nullopt;
    return !state || core::IsTerminal(*state);
  }
  MutexLock lock(&mu_);
  auto it = trials_.find(trial_id);
  if (it == trials_.end()) return true;
  return core::IsTerminal(it->second->state) && it->second->allocation_id.empty();
}

Result<TrialView> Master::GetTrial(int64_t trial_id) {
  DET_ASSIGN_OR_RETURN(std::vector<TrialView> views, GetTrials({trial_id}));
  return std::move(views.front());
}

namespace {

// A trial's view from its rows; presented_state is left to the caller. Its best and latest
// validation are kept on the trial row as reports arrive: two rows read, not every report.
TrialView TrialViewOf(store::TrialViewRows rows) {
  TrialView v;
  v.task_ids = std::move(rows.task_ids);
  if (v.task_ids.empty()) v.task_ids.push_back(rows.row.task_id);
  v.summary_metrics = std::move(rows.summary_metrics);
  v.latest_validation = std::move(rows.validations.latest);
  v.best_validation = std::move(rows.validations.best);
  for (auto& c : rows.checkpoints) {
    if (c.state != "COMPLETED") continue;
    ++v.checkpoint_count;
    v.total_checkpoint_size += c.size;
    if (v.best_validation && c.steps_completed == v.best_validation->total_batches) {
      v.best_checkpoint = c;
    }
    if (!v.best_checkpoint && c.steps_completed >= 0) v.best_checkpoint = c;
  }
  v.row = std::move(rows.row);
  return v;
}

}  // namespace

Result<std::vector<TrialView>> Master::GetTrials(const std::vector<int64_t>& trial_ids) {
  DET_ASSIGN_OR_RETURN(std::vector<store::TrialViewRows> rows,
                       store_->GetTrialViewRows(trial_ids));
  std::vector<TrialView> out;
  out.reserve(rows.size());
  size_t next = 0;
  for (int64_t id : trial_ids) {
    if (next < rows.size() && rows[next].row.id == id) {
      out.push_back(TrialViewOf(std::move(rows[next++])));
      continue;
    }
    // A repeated id (its one entry already used) or a trial that does not exist.
    auto seen = std::find_if(out.begin(), out.end(),
                             [id](const TrialView& v) { return v.row.id == id; });
    if (seen == out.end()) return NotFound("trial " + std::to_string(id) + " not found");
    out.push_back(*seen);
  }
  std::vector<bool> unmanaged(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    unmanaged[i] = unmanaged_->IsUnmanagedTrial(out[i].row.id);
    if (unmanaged[i]) out[i].presented_state = core::PresentedUnmanagedState(out[i].row.state);
  }
  MutexLock lock(&mu_);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!unmanaged[i]) {
      out[i].presented_state = PresentedTrialStateLocked(out[i].row.id, out[i].row.state);
    }
  }
  return out;
}

Result<std::vector<TrialView>> Master::ListTrials(int64_t experiment_id) {
  DET_RETURN_IF_ERROR(store_->GetExperiment(experiment_id).status());
  DET_ASSIGN_OR_RETURN(std::vector<store::TrialRow> rows, store_->ListTrials(experiment_id));
  std::vector<int64_t> ids;
  ids.reserve(rows.size());
  for (const auto& r : rows) ids.push_back(r.id);
  return GetTrials(ids);
}

Result<std::string> Master::GetContextForTask(const std::string& task_id) {
  if (tasks_->Has(task_id)) return tasks_->Context(task_id);  // a command, notebook, ...
  size_t dot = task_id.find('.');
  int64_t exp_id = std::atoll(task_id.substr(0, dot).c_str());
  if (exp_id <= 0) return NotFound("task " + task_id + " not found");
  return store_->GetModelDefinition(exp_id);
}

Result<std::optional<double>> Master::BestValidationMetric(int64_t experiment_id) {
  DET_ASSIGN_OR_RETURN(store::ExperimentRow exp, store_->GetExperiment(experiment_id));
  const config::SearcherMetric metric = config::SearcherMetric::FromConfigJson(exp.config);
  return store_->BestExperimentValidation(experiment_id, metric.smaller_is_better);
}

Result<std::vector<store::MetricRow>> Master::ListMetrics(int64_t trial_id,
                                                          const std::string& group) {
  DET_RETURN_IF_ERROR(store_->GetTrial(trial_id).status());
  return store_->ListMetrics(trial_id, group);
}

}  // namespace det::master::server
