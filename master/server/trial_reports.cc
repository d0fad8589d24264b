// ExperimentService: what trial processes report (metrics, checkpoints, searcher operations,
// progress, early exits, logs). Checks against the live runtime read the published RuntimeView;
// only what changes the searcher is decided on the loop.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <mutex>

#include "master/core/trial_searcher.h"
#include "master/core/unmanaged_states.h"
#include "master/server/checkpoint_service.h"
#include "master/server/experiment_service.h"
#include "master/server/metrics_service.h"
#include "master/server/runtime_long_poll.h"
#include "master/server/task_service.h"
#include "master/server/unmanaged_service.h"
#include "master/server/webhook_service.h"

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

void ExperimentService::ReportMetrics(const Principal& who, int64_t trial_id, int64_t run_id,
                                      int64_t steps, const std::string& group, json metrics,
                                      Done<Status> done) {
  auto check = [&]() -> Status {
    DET_RETURN_IF_ERROR(CheckTrialAccess(who, trial_id));
    if (group.empty() || group.find('.') != std::string::npos) {
      return InvalidArgument("group: must be non-empty and contain no '.' (got '" + group + "')");
    }
    if (steps < 0) return InvalidArgument("stepsCompleted: must be >= 0");
    if (std::optional<int64_t> run = deps_.view->RunOf(trial_id)) {
      if (run_id != *run) {
        return InvalidArgument("invalid run id " + std::to_string(run_id) + " for trial " +
                               std::to_string(trial_id) + " (current run is " +
                               std::to_string(*run) + ")");
      }
      return Status::Ok();
    }
    // Only to tell a missing trial from a finished one.
    DET_RETURN_IF_ERROR(deps_.store->GetTrial(trial_id).status());
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
    return deps_.metrics->Submit(std::move(row), std::move(done));
  }
  row.metrics = metrics;
  // After the commit: 0.38 searchers (time_metric + max_time) decide from reported validation
  // metrics, and only from stored ones.
  deps_.metrics->Submit(std::move(row), [this, trial_id, metrics = std::move(metrics),
                                         done = std::move(done)](Status st) mutable {
    if (!st.ok()) return done(st);
    Run(
        [this, trial_id, metrics = std::move(metrics)]() ON_RUNTIME -> Status {
          TrialRuntime* t = FindTrial(trial_id);
          if (t == nullptr) return Status::Ok();
          ExperimentRuntime& exp = *experiments_.at(t->experiment_id);
          if (!exp.config.searcher.time_metric || !exp.config.searcher.max_time) {
            return Status::Ok();
          }
          const json& values =
              metrics.contains("validation_metrics") ? metrics["validation_metrics"] : metrics;
          return Decide(exp, core::MetricsReported{t->request_id, values});
        },
        std::move(done));
  });
}

Status ExperimentService::ReportCheckpoint(const Principal& who, store::CheckpointRow row) {
  DET_RETURN_IF_ERROR(CheckpointService::Validate(&row));
  if (who.is_allocation) {
    row.trial_id = who.trial_id;
    if (row.allocation_id.empty()) row.allocation_id = who.allocation_id;
  }
  if (row.trial_id == 0) {
    // A user reporting for a task: find the trial by task id.
    std::optional<int64_t> trial = deps_.view->TrialOfTask(row.task_id);
    if (!trial) return NotFound("task " + row.task_id + " not found");
    row.trial_id = *trial;
  }
  if (std::optional<RuntimeView::Trial> live = deps_.view->FindTrial(row.trial_id)) {
    if (row.task_id.empty() || who.is_allocation) row.task_id = live->task_id;
    if (who.is_allocation && live->allocation_id != who.allocation_id) {
      // A process the master gave up on (e.g. an orphan of a lost agent) must not add a
      // checkpoint the trial's current run would then resume from.
      return FailedPrecondition("allocation " + who.allocation_id + " no longer runs trial " +
                                std::to_string(row.trial_id));
    }
  }
  DET_RETURN_IF_ERROR(deps_.checkpoints->Record(row));
  deps_.logs->Append(row.trial_id, row.task_id,
                     "Reported checkpoint " + row.uuid + " at " +
                         std::to_string(row.steps_completed) + " batches");
  return Status::Ok();
}

bool ExperimentService::FromOwnProcess(const TrialRuntime& trial, const Reporter& from) {
  return !from || (!from->empty() && *from == trial.allocation_id);
}

void ExperimentService::GetSearcherOperation(int64_t trial_id, int64_t wait_ms,
                                             Reply<SearcherOpView> reply, Reporter from) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  deps_.loop->Post(
      [this, trial_id, deadline, reply = std::move(reply), from = std::move(from)]() mutable {
        runtime_role.Assume();
        auto step = std::make_shared<std::function<bool(bool)>>(
            [this, trial_id, reply = std::move(reply), from = std::move(from)](bool final) {
              runtime_role.Assume();
              TrialRuntime* found = FindTrial(trial_id);
              if (found == nullptr) {
                Status st = deps_.store->GetTrial(trial_id).status();
                if (!st.ok()) {
                  reply(st);
                } else {
                  reply(SearcherOpView{std::nullopt, std::nullopt, true});
                }
                return true;
              }
              TrialRuntime& t = *found;
              Result<core::OpAnswer> answered =
                  experiments_.at(t.experiment_id)->core->Answer(t.request_id);
              if (!answered.ok()) {
                reply(answered.status());
                return true;
              }
              const core::OpAnswer& answer = *answered;
              switch (answer.kind) {
                case core::OpAnswerKind::kTrain:
                  if (FromOwnProcess(t, from)) t.run_progress.followed_op = true;
                  reply(SearcherOpView{t.request_id, answer.length, false});
                  return true;
                case core::OpAnswerKind::kDone:
                  reply(SearcherOpView{t.request_id, std::nullopt, true});
                  return true;
                case core::OpAnswerKind::kNoneForNow:
                  // Its exit with an operation given meanwhile runs it again (core::ExitFacts).
                  if (FromOwnProcess(t, from)) deps_.allocations->MarkOutOfOps(t.allocation_id);
                  reply(SearcherOpView{t.request_id, std::nullopt, true});
                  return true;
                case core::OpAnswerKind::kWait:
                  break;
              }
              if (!final) return false;
              reply(SearcherOpView{t.request_id, std::nullopt, false});
              return true;
            });
        LongPollOnLoop(deps_.loop, deps_.waiters, TrialKey(trial_id), deadline, std::move(step));
      });
}

void ExperimentService::CompleteSearcherOperation(int64_t trial_id, uint64_t length, double metric,
                                                  Done<Status> done, Reporter from) {
  Run([this, trial_id, length, metric, from = std::move(from)]()
          ON_RUNTIME { return CompleteSearcherOperationNow(trial_id, length, metric, from); },
      std::move(done));
}

Status ExperimentService::CompleteSearcherOperationNow(int64_t trial_id, uint64_t length,
                                                       double metric, const Reporter& from) {
  TrialRuntime* found = FindTrial(trial_id);
  if (found == nullptr) {
    return FailedPrecondition("trial " + std::to_string(trial_id) + " is not running");
  }
  TrialRuntime& t = *found;
  ExperimentRuntime& exp = *experiments_.at(t.experiment_id);
  DET_ASSIGN_OR_RETURN(core::Decision d,
                       exp.core->Decide(core::CompleteOperation{t.request_id, trial_id, length,
                                                                metric}));
  if (d.completion == core::CompletionKind::kAlreadyStored) return Status::Ok();
  if (FromOwnProcess(t, from)) t.run_progress.followed_op = t.run_progress.completed_op = true;
  store::DecisionWrites w;
  w.searcher_metrics.push_back({trial_id, metric});
  return Carry(exp, d, std::move(w));
}

void ExperimentService::ReportProgress(int64_t trial_id, double fraction, Done<Status> done,
                                       Reporter from) {
  if (!std::isfinite(fraction) || fraction < 0) {
    return done(InvalidArgument("progress: must be a number >= 0"));
  }
  Run(
      [this, trial_id, fraction, from = std::move(from)]() ON_RUNTIME -> Status {
        TrialRuntime* t = FindTrial(trial_id);
        if (t == nullptr) return Status::Ok();
        if (FromOwnProcess(*t, from)) t->run_progress.followed_op = true;
        ExperimentRuntime& exp = *experiments_.at(t->experiment_id);
        return Decide(exp, core::ReportProgress{t->request_id, fraction});
      },
      std::move(done));
}

void ExperimentService::ReportEarlyExit(int64_t trial_id, std::string reason, Done<Status> done) {
  Run([this, trial_id, reason = std::move(reason)]()
          ON_RUNTIME { return ReportEarlyExitNow(trial_id, reason); },
      std::move(done));
}

Status ExperimentService::ReportEarlyExitNow(int64_t trial_id, const std::string& reason) {
  TrialRuntime* found = FindTrial(trial_id);
  if (found == nullptr) {
    return FailedPrecondition("trial " + std::to_string(trial_id) + " is not running");
  }
  TrialRuntime& t = *found;
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
  ExperimentRuntime& exp = *experiments_.at(t.experiment_id);
  return Decide(exp, core::EarlyExit{t.request_id, trial_id, r});
}

Status ExperimentService::SetRunnerState(int64_t trial_id, const std::string& state) {
  // One column set (nothing is read and written back): no decision of the loop.
  store::DecisionWrites w;
  w.runner_states.push_back({trial_id, state});
  return deps_.store->ApplyDecision(w).status();
}

Result<json> ExperimentService::SetTrialMetadata(int64_t trial_id, const json& metadata) {
  if (!metadata.is_object()) return InvalidArgument("metadata: must be an object");
  store::DecisionWrites w;
  w.trial_metadata.push_back({trial_id, metadata});
  DET_RETURN_IF_ERROR(deps_.store->ApplyDecision(w).status());
  return metadata;
}

Result<json> ExperimentService::GetTrialMetadata(int64_t trial_id) {
  DET_ASSIGN_OR_RETURN(store::TrialRow row, deps_.store->GetTrial(trial_id));
  return row.metadata;
}

Status ExperimentService::AddTaskLogs(const Principal& who, std::vector<store::TaskLogRow> rows) {
  if (rows.empty()) return Status::Ok();
  std::string task_id;
  int64_t trial_id = who.trial_id;
  if (who.is_allocation) {
    // An allocation writes its own task's lines only: a trial's, or a command's, notebook's, ...
    if (who.trial_id == 0) {
      if (deps_.tasks != nullptr) {
        task_id = deps_.tasks->TaskOfAllocation(who.allocation_id).value_or(std::string());
      }
    } else if (std::optional<RuntimeView::Trial> live = deps_.view->FindTrial(who.trial_id)) {
      task_id = live->task_id;
    } else if (Result<store::TrialRow> stored = deps_.store->GetTrial(who.trial_id); stored.ok()) {
      task_id = stored->task_id;
    }
  }
  for (auto& r : rows) {
    if (who.is_allocation) {
      if (!r.task_id.empty() && r.task_id != task_id) {
        return PermissionDenied("allocation " + who.allocation_id +
                                " may write log lines of its own task only, not of task " +
                                r.task_id);
      }
      r.trial_id = trial_id;
      r.task_id = task_id;
      r.allocation_id = who.allocation_id;
    } else if (r.trial_id == 0) {
      r.trial_id = deps_.view->TrialOfTask(r.task_id).value_or(0);
    }
    if (r.timestamp == 0) r.timestamp = Now();
  }
  std::vector<store::WebhookEventRow> events;
  if (deps_.webhooks != nullptr) events = deps_.webhooks->TaskLogEvents(rows);
  if (events.empty()) {
    DET_RETURN_IF_ERROR(deps_.store->AddTaskLogs(rows));
  } else {
    // The lines and the deliveries they cause, in one transaction.
    store::DecisionWrites w;
    w.logs = rows;
    w.webhook_events = std::move(events);
    DET_RETURN_IF_ERROR(deps_.store->ApplyDecision(w).status());
    deps_.webhooks->Wake();
  }
  if (who.is_allocation && who.trial_id == 0) deps_.tasks->NotifyLogs(rows.front().task_id);
  std::set<int64_t> trials;
  for (const auto& r : rows) trials.insert(r.trial_id);
  for (int64_t id : trials) deps_.logs->Notify(id);
  return Status::Ok();
}

Result<std::vector<store::TaskLogRow>> ExperimentService::TrialLogs(int64_t trial_id,
                                                                    int64_t after_id, int64_t limit,
                                                                    bool descending) {
  return deps_.store->ListTrialLogs(trial_id, after_id, limit, descending);
}

bool ExperimentService::TrialFinished(int64_t trial_id) {
  if (deps_.unmanaged->IsUnmanagedTrial(trial_id)) {
    // Its script says when it is done: logs are followed until the trial is terminal.
    Result<store::TrialRow> row = deps_.store->GetTrial(trial_id);
    std::optional<RunState> state = row.ok() ? core::ParseRunState(row->state) : std::nullopt;
    return !state || core::IsTerminal(*state);
  }
  std::optional<RuntimeView::Trial> live = deps_.view->FindTrial(trial_id);
  if (!live) return true;
  return core::IsTerminal(live->state) && live->allocation_id.empty();
}

void ExperimentService::WaitForTrialLogs(int64_t trial_id, int64_t timeout_ms) {
  // A stream already holds its own thread, so it may block; it still wakes only for its trial.
  struct Signal {
    std::mutex mu;
    std::condition_variable cv;
    bool fired = false;
  };
  auto signal = std::make_shared<Signal>();
  if (deps_.loop->stopped() || deps_.waiters->stopped()) return;  // it takes no more waiters
  deps_.waiters->Add(TrialLogsKey(trial_id),
                     std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms),
                     [signal](bool) {
                       std::lock_guard<std::mutex> lock(signal->mu);
                       signal->fired = true;
                       signal->cv.notify_all();
                     });
  std::unique_lock<std::mutex> lock(signal->mu);
  signal->cv.wait(lock, [&] { return signal->fired; });
}

}  // namespace det::master::server
