// ExperimentService: rebuilding the runtime at start-up from the store (searchers from their
// snapshots and journals, trials, open allocations), before the loop runs.
#include <unordered_map>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "master/searcher/journaled_searcher.h"
#include "master/server/experiment_service.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

Status ExperimentService::RestoreExperiment(
    const store::ExperimentRow& row, const std::map<int64_t, store::AllocationRow>& open_by_trial) {
  auto mark_error = [&](const Status& why) {
    spdlog::error("cannot restore experiment {}: {}", row.id, why.ToString());
    store::DecisionWrites w;
    int64_t end = Now();
    w.experiment_state = store::ExperimentStateWrite{
        row.id, std::string(core::RunStateName(RunState::kError)), end};
    AddWebhookEvents(row.id, row.config, row.start_time, RunState::kError, end, &w);
    Status st = deps_.store->ApplyDecision(w).status();
    if (st.ok()) WakeWebhooks(w);
    return st;
  };
  Result<config::ExperimentConfig> cfg = config::ExperimentConfigFromJson(row.config);
  if (!cfg.ok()) return mark_error(cfg.status());
  DET_ASSIGN_OR_RETURN(std::vector<store::TrialRow> trows, deps_.store->ListTrials(row.id));
  // Its open allocations were placed (a row is stored before any process gets the
  // allocation's token): their processes may still run.
  std::map<int64_t, core::TrialPresence> presence;
  for (const store::TrialRow& tr : trows) {
    if (open_by_trial.contains(tr.id)) presence[tr.id] = core::TrialPresence::kRunning;
  }
  std::optional<scheduler::QueuePosition> queue_position;
  Result<std::unique_ptr<core::Experiment>> decided =
      LoadCore(row, *cfg, trows, presence, &queue_position);
  if (!decided.ok()) return mark_error(decided.status());
  auto exp = std::make_unique<ExperimentRuntime>();
  exp->id = row.id;
  exp->owner_id = row.owner_id;
  exp->job_id = row.job_id;
  exp->submission_time = row.start_time;
  exp->stored_progress = row.progress;
  Result<store::UserRow> owner = deps_.store->GetUserById(row.owner_id);
  exp->username = owner.ok() ? owner->username : "";
  exp->config = std::move(cfg).value();
  exp->core = std::move(decided).value();
  exp->queue_position = queue_position;
  ExperimentRuntime& ref = *exp;
  // Published first: its allocations are restored into its job.
  Adopt(std::move(exp));
  int64_t adopt_deadline = Now() + deps_.config->agent_timeout_seconds * 1000000;
  DET_ASSIGN_OR_RETURN(std::vector<std::string> stored_ids,
                       deps_.store->ListExperimentAllocationIds(row.id));
  const std::unordered_set<std::string> stored(stored_ids.begin(), stored_ids.end());
  requeue_same_run_.clear();
  for (store::TrialRow& tr : trows) {
    auto t = std::make_unique<TrialRuntime>();
    t->id = tr.id;
    t->experiment_id = row.id;
    t->request_id = tr.request_id;
    t->decided = ref.core->Find(tr.request_id);
    t->run_id = tr.run_id;
    t->task_id = tr.task_id;
    t->seed = tr.seed;
    t->hparams = std::move(tr.hparams);
    t->warm_start_checkpoint_uuid = tr.warm_start_checkpoint_uuid;
    ref.trial_by_request[tr.request_id] = tr.id;
    ref.records[tr.request_id] = t.get();
    TrialRuntime& trial = *t;
    trials_[tr.id] = std::move(t);
    Publish(trial);
    auto open_it = open_by_trial.find(tr.id);
    if (open_it != open_by_trial.end()) {
      // Its process may still be running on an agent: wait for the agent to report it.
      trial.allocation_id = open_it->second.allocation_id;
      deps_.allocations->Restore(open_it->second, ref.job_id, row.id, adopt_deadline);
    } else if (tr.state == "ACTIVE" && trial.run_id > 0 &&
               !stored.contains(AllocationService::AllocationIdOf(trial.task_id, trial.run_id))) {
      // Its run was queued and never placed: queued again as the same run, so its id (and a
      // Slurm job submitted for it) stay valid, when it was first queued (rows before migration
      // 0025 say 0: now). A paused trial's run was dropped: it gets a new one.
      requeue_same_run_[tr.id] = tr.run_queued_at;
    }
  }
  spdlog::info("restored experiment {} ({}) with {} trials", row.id,
               core::RunStateName(ref.state()), ref.trial_by_request.size());
  // What a crash between a write and the next left undone (core::Restored).
  Status st = Decide(ref, core::Restored{});
  requeue_same_run_.clear();
  return st;
}

Status ExperimentService::Restore() {
  DET_ASSIGN_OR_RETURN(std::vector<store::ExperimentRow> rows,
                       deps_.store->ListNonTerminalExperiments());
  DET_ASSIGN_OR_RETURN(std::vector<store::AllocationRow> open, deps_.store->ListOpenAllocations());
  std::map<int64_t, store::AllocationRow> open_by_trial;
  for (auto& a : open) open_by_trial[a.trial_id] = a;
  for (store::ExperimentRow& row : rows) {
    DET_RETURN_IF_ERROR(RestoreExperiment(row, open_by_trial));
  }
  // Allocations whose trials are no longer live are closed.
  store::DecisionWrites closed;
  for (auto& a : open) {
    if (deps_.allocations->Has(a.allocation_id)) continue;
    a.end_time = Now();
    a.state = std::string(core::AllocationStateName(core::AllocationState::kTerminated));
    a.exit_reason = "closed at master restart";
    closed.allocations.push_back(a);
  }
  return deps_.store->ApplyDecision(closed).status();
}

}  // namespace det::master::server
