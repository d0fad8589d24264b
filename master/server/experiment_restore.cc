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
  auto mark_error = [&]() {
    store::DecisionWrites w;
    int64_t end = Now();
    w.experiment_state = store::ExperimentStateWrite{
        row.id, std::string(core::RunStateName(RunState::kError)), end};
    AddWebhookEvents(row.id, row.config, row.start_time, RunState::kError, end, &w);
    Status st = deps_.store->ApplyDecision(w).status();
    if (st.ok()) WakeWebhooks(w);
    return st;
  };
  auto exp = std::make_unique<ExperimentRuntime>();
  exp->id = row.id;
  exp->state = core::ParseRunState(row.state).value_or(RunState::kError);
  exp->owner_id = row.owner_id;
  exp->job_id = row.job_id;
  exp->submission_time = row.start_time;
  // The stored full snapshot with its journal merged in; the journal's searcher events are
  // replayed on the searcher restored from it below.
  Result<SearcherJournalService::Loaded> journal =
      deps_.searcher_journal->Load(row.id, row.snapshot);
  if (!journal.ok()) {
    spdlog::error("cannot restore experiment {}: {}", row.id, journal.status().ToString());
    return mark_error();
  }
  const json& snapshot = journal->snapshot;
  if (snapshot.contains("queue_position")) {
    Result<scheduler::QueuePosition> pos =
        scheduler::QueuePosition::Parse(snapshot["queue_position"].get<std::string>());
    if (pos.ok()) exp->queue_position = *pos;
  }
  Result<store::UserRow> owner = deps_.store->GetUserById(row.owner_id);
  exp->username = owner.ok() ? owner->username : "";
  Result<config::ExperimentConfig> cfg = config::ExperimentConfigFromJson(row.config);
  Result<std::unique_ptr<searcher::Searcher>> search =
      cfg.ok()
          ? (snapshot.contains("searcher") ? searcher::Searcher::Restore(*cfg, snapshot["searcher"])
                                           : searcher::Searcher::Create(*cfg))
          : Result<std::unique_ptr<searcher::Searcher>>(cfg.status());
  if (search.ok()) {
    Status replayed = searcher::JournaledSearcher::Replay(**search, journal->events);
    if (!replayed.ok()) search = replayed;
  }
  if (!search.ok()) {
    spdlog::error("cannot restore experiment {}: {}", row.id, search.status().ToString());
    return mark_error();
  }
  exp->config = std::move(cfg).value();
  exp->searcher = std::make_unique<searcher::JournaledSearcher>(std::move(search).value());
  exp->initialized = snapshot.value("initialized", false);
  if (snapshot.contains("shutdown")) {
    exp->shutdown = searcher::ShutdownAction{snapshot["shutdown"].value("cancel", false),
                                             snapshot["shutdown"].value("failure", false)};
  }
  ExperimentRuntime& ref = *exp;
  // Published first: its allocations are restored into its job.
  Adopt(std::move(exp));
  const json trial_snaps = snapshot.value("trials", json::object());
  DET_ASSIGN_OR_RETURN(std::vector<store::TrialRow> trows, deps_.store->ListTrials(row.id));
  int64_t adopt_deadline = Now() + deps_.config->agent_timeout_seconds * 1000000;
  std::unordered_map<int64_t, int64_t> run_queued_at;  // trial id -> its row's run_queued_at
  for (store::TrialRow& tr : trows) {
    run_queued_at[tr.id] = tr.run_queued_at;
    auto t = std::make_unique<TrialRuntime>(tr.request_id, ref.searcher_dirty);
    t->id = tr.id;
    t->experiment_id = row.id;
    t->state = core::ParseRunState(tr.state).value_or(RunState::kError);
    t->restarts = tr.restarts;
    t->run_id = tr.run_id;
    t->task_id = tr.task_id;
    t->seed = tr.seed;
    t->hparams = std::move(tr.hparams);
    t->warm_start_checkpoint_uuid = tr.warm_start_checkpoint_uuid;
    if (trial_snaps.contains(tr.request_id)) {
      t->MutableSearcher() = SearcherTrialState::FromJson(trial_snaps[tr.request_id]);
    }
    ref.trial_by_request[tr.request_id] = tr.id;
    TrialRuntime& trial = *t;
    trials_[tr.id] = std::move(t);
    Publish(trial);
    auto open_it = open_by_trial.find(tr.id);
    if (open_it != open_by_trial.end()) {
      // Its process may still be running on an agent: wait for the agent to report it.
      trial.allocation_id = open_it->second.allocation_id;
      deps_.allocations->Restore(open_it->second, ref.job_id, row.id, adopt_deadline);
    }
  }
  spdlog::info("restored experiment {} ({}) with {} trials", row.id, core::RunStateName(ref.state),
               ref.trial_by_request.size());
  // A pause, stop or activation stores the experiment's state with its first slice of trials;
  // a crash before the last slice left the others as they were: they follow now. (A search
  // that never started, PAUSED and not initialized, keeps its trials for its first activation.)
  if (IsStopping(ref.state) ||
      ((ref.state == RunState::kPaused || ref.state == RunState::kActive) && ref.initialized)) {
    DET_RETURN_IF_ERROR(MoveEveryTrial(ref));  // whether it ended is decided below
  }
  if (ref.state == RunState::kActive) {
    DET_ASSIGN_OR_RETURN(std::vector<std::string> stored_ids,
                         deps_.store->ListExperimentAllocationIds(row.id));
    const std::unordered_set<std::string> stored(stored_ids.begin(), stored_ids.end());
    std::vector<TrialRuntime*> need;
    for (auto& [rid, tid] : ref.trial_by_request) {
      TrialRuntime* t = trials_[tid].get();
      if (t->state != RunState::kActive || !t->allocation_id.empty()) continue;
      // A run whose allocation has no row was queued and never placed (a row is stored before
      // any process gets the allocation's token): it is queued again as the same run, so its
      // id, and a Slurm job submitted for it, stay valid. Other trials get a new run.
      bool queued_run =
          t->run_id > 0 &&
          !stored.contains(AllocationService::AllocationIdOf(t->task_id, t->run_id));
      if (!queued_run) {
        need.push_back(t);
        continue;
      }
      // Queued when its row says (rows before migration 0025 say 0: now).
      int64_t queued_at = run_queued_at[tid];
      std::unique_ptr<AllocationRuntime> alloc =
          NewAllocation(ref, *t, queued_at > 0 ? queued_at : Now());
      t->allocation_id = alloc->id;
      Publish(*t);
      deps_.allocations->Publish(std::move(alloc));
    }
    DET_RETURN_IF_ERROR(RequestAllocations(need));
  }
  // The master may have died between storing a change and the snapshot that follows it; replay
  // what the stored rows say happened so the searcher catches up instead of waiting forever.
  std::vector<searcher::Action> replay;
  if (ref.state == RunState::kActive && !ref.initialized) {
    ref.initialized = true;
    replay = ref.searcher->InitialOperations();
  }
  for (auto& [rid, tid] : ref.trial_by_request) {
    TrialRuntime& t = *trials_[tid];
    if (!core::IsTerminal(t.state)) continue;
    std::optional<searcher::ExitedReason> reason;
    if (t.state == RunState::kError) reason = searcher::ExitedReason::kErrored;
    if (t.state == RunState::kCanceled) reason = searcher::ExitedReason::kUserCanceled;
    SearcherExit(ref, t, reason, &replay);
  }
  if (!replay.empty()) return ProcessActions(ref, std::move(replay));
  return MaybeFinishExperiment(ref);
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
