// Master: experiment lifecycle, searcher actions and restore.
#include <spdlog/spdlog.h>

#include "master/core/lifecycle.h"
#include "master/core/unmanaged_states.h"
#include "master/server/master.h"
#include "master/server/master_runtime.h"
#include "master/server/passwords.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

Result<CreateExperimentResult> Master::CreateExperiment(const CreateExperimentRequest& req,
                                                        const Principal& who) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  if (req.content_bytes >= kMaxContextBytes) {
    return InvalidArgument("model definition is " + std::to_string(req.content_bytes) +
                           " bytes, over the maximum allowed size of " +
                           std::to_string(kMaxContextBytes) + " bytes (95 MiB)");
  }
  config::ConfigDefaults defaults;
  defaults.checkpoint_storage = config_.checkpoint_storage;
  // Determined's seed is an int32 (0..2^31-1); the unix time in seconds fits until 2038.
  defaults.experiment_seed = static_cast<uint32_t>((Now() / 1000000) & 0x7fffffff);
  defaults.preemption_timeout = config_.preemption_timeout_seconds;
  defaults.task_container_defaults = config_.task_container_defaults;
  DET_ASSIGN_OR_RETURN(config::ExperimentConfig cfg,
                       config::ParseExperimentConfig(req.config_yaml, defaults));
  Result<std::unique_ptr<searcher::Searcher>> search = searcher::Searcher::Create(cfg);
  if (!search.ok()) return InvalidArgument(search.status().message());
  DET_RETURN_IF_ERROR(CheckPoolExists(cfg.resources.resource_pool));
  CreateExperimentResult result;
  result.config = cfg.defaulted;
  if (req.validate_only) return result;

  DET_ASSIGN_OR_RETURN(std::string tgz, CreateTarGz(req.files));
  store::ExperimentRow row;
  row.state = std::string(core::RunStateName(RunState::kPaused));
  row.config = cfg.defaulted;
  row.original_config = req.config_yaml;
  row.owner_id = who.user_id;
  row.job_id = NewToken().substr(0, 32);
  row.start_time = Now();
  row.parent_id = req.parent_id;

  auto exp = std::make_unique<ExperimentRuntime>();
  exp->config = cfg;
  exp->searcher = std::make_unique<searcher::JournaledSearcher>(std::move(search).value());
  exp->owner_id = who.user_id;
  exp->username = who.username;
  exp->job_id = row.job_id;
  exp->submission_time = row.start_time;
  row.snapshot = {
      {"initialized", false}, {"searcher", exp->searcher->Snapshot()}, {"trials", json::object()}};
  // Until it is published below, nothing else can see the experiment's runtime: its rows and
  // first trials are written without mu_, so other requests do not wait for a large search.
  DET_ASSIGN_OR_RETURN(int64_t id, store_->InsertExperiment(row, tgz));
  row.id = id;
  exp->id = id;
  spdlog::info("created experiment {}", id);
  if (req.activate) {
    DET_RETURN_IF_ERROR(ActivateNewExperiment(std::move(exp)));
    row.state = std::string(core::RunStateName(RunState::kActive));
  } else {
    MutexLock lock(&mu_);
    experiments_[id] = std::move(exp);
  }
  result.experiment = row;
  return result;
}

Status Master::SetExperimentStateLocked(ExperimentRuntime& exp, RunState state) {
  if (exp.state == state) return Status::Ok();
  if (!core::ExperimentTransitionAllowed(exp.state, state)) {
    return FailedPrecondition("experiment " + std::to_string(exp.id) + " cannot move from " +
                              std::string(core::RunStateName(exp.state)) + " to " +
                              std::string(core::RunStateName(state)));
  }
  std::optional<int64_t> end_time;
  if (core::IsTerminal(state)) end_time = Now();
  DET_RETURN_IF_ERROR(
      store_->UpdateExperimentState(exp.id, std::string(core::RunStateName(state)), end_time));
  RunState old = exp.state;
  exp.state = state;
  spdlog::info("experiment {} {} -> {}", exp.id, core::RunStateName(old),
               core::RunStateName(state));
  if (state == RunState::kCompleted) {
    DET_RETURN_IF_ERROR(store_->UpdateExperimentProgress(exp.id, 1.0));
  }
  if (core::IsTerminal(state)) {
    Status gc = checkpoints_->CollectExperimentCheckpoints(exp.id);
    if (!gc.ok()) spdlog::error("checkpoint GC of experiment {}: {}", exp.id, gc.ToString());
  }
  if (state == RunState::kActive) {
    if (!exp.initialized) {
      exp.initialized = true;
      DET_RETURN_IF_ERROR(ProcessActionsLocked(exp, exp.searcher->InitialOperations()));
    }
    std::vector<TrialRuntime*> paused, active;
    for (auto& [rid, tid] : exp.trial_by_request) {
      TrialRuntime* t = trials_[tid].get();
      if (t->state == RunState::kPaused) paused.push_back(t);
      if (t->state == RunState::kPaused || t->state == RunState::kActive) active.push_back(t);
    }
    DET_RETURN_IF_ERROR(SetTrialStatesLocked(paused, RunState::kActive));
    DET_RETURN_IF_ERROR(RequestAllocationsLocked(active));
  }
  return Status::Ok();
}

Status Master::SetTrialStateLocked(TrialRuntime& trial, RunState state) {
  return SetTrialStatesLocked({&trial}, state);
}

Status Master::SetTrialStatesLocked(const std::vector<TrialRuntime*>& trials, RunState state) {
  store::DecisionWrites w;
  std::vector<TrialRuntime*> changed;
  std::optional<int64_t> end_time;
  if (core::IsTerminal(state)) end_time = Now();
  for (TrialRuntime* trial : trials) {
    if (trial->state == state) continue;
    if (core::IsTerminal(trial->state)) continue;  // patches ignored once terminal
    if (!core::TrialTransitionAllowed(trial->state, state)) {
      return FailedPrecondition("trial " + std::to_string(trial->id) + " cannot move from " +
                                std::string(core::RunStateName(trial->state)) + " to " +
                                std::string(core::RunStateName(state)));
    }
    w.trials.push_back({trial->id, std::string(core::RunStateName(state)), trial->run_id,
                        trial->restarts, end_time});
    changed.push_back(trial);
  }
  if (changed.empty()) return Status::Ok();
  DET_RETURN_IF_ERROR(store_->ApplyDecision(w).status());
  for (TrialRuntime* trial : changed) {
    trial->state = state;
    NotifyTrialLocked(trial->id);
  }
  return Status::Ok();
}

namespace {

// Persists an experiment's searcher state: `changed` may differ from what was persisted, `all`
// lists every trial (asked for when the journal has no mirror of the experiment).
Status PersistToJournal(SearcherJournalService* journal, int64_t experiment_id,
                        searcher::Searcher* search, bool initialized,
                        const std::optional<searcher::ShutdownAction>& shutdown,
                        const std::optional<scheduler::QueuePosition>& queue_position,
                        SearcherJournalService::Trials changed,
                        const std::function<SearcherJournalService::Trials()>& all,
                        SearcherJournalService::Wait wait = SearcherJournalService::Wait::kAwaited) {
  SearcherHeader header;
  header.initialized = initialized;
  header.shutdown = shutdown;
  if (queue_position) header.queue_position = queue_position->ToString();
  auto* journaled = dynamic_cast<searcher::JournaledSearcher*>(search);
  if (journaled == nullptr) return Internal("experiment searcher is not journaled");
  return journal->PersistChanged(experiment_id, *journaled, header, std::move(changed), all, wait);
}

}  // namespace

// A journal record of what changed, or now and then a full snapshot (SearcherJournalService).
// Only the trials marked dirty (TrialRuntime::MutableSearcher) are diffed: O(changes).
Status Master::PersistSnapshotLocked(ExperimentRuntime& exp) {
  SearcherJournalService::Trials changed;
  changed.reserve(exp.searcher_dirty->size());
  std::set<std::string> unpublished;  // staged, not yet a trial of exp: kept for later
  for (const std::string& rid : *exp.searcher_dirty) {
    auto it = exp.trial_by_request.find(rid);
    if (it == exp.trial_by_request.end()) {
      unpublished.insert(rid);
      continue;
    }
    changed.emplace_back(rid, trials_[it->second]->searcher());
  }
  auto all = [&]() NO_THREAD_SAFETY_ANALYSIS {  // called within this call, under mu_
    SearcherJournalService::Trials every;
    every.reserve(exp.trial_by_request.size());
    for (const auto& [rid, tid] : exp.trial_by_request) {
      every.emplace_back(rid, trials_.at(tid)->searcher());
    }
    return every;
  };
  Status st = PersistToJournal(searcher_journal_.get(), exp.id, exp.searcher.get(), exp.initialized,
                               exp.shutdown, exp.queue_position, std::move(changed), all);
  // On failure the marks stay: the next call reports them again (and the service, which has
  // dropped its mirror, writes a full snapshot from every trial anyway).
  if (st.ok()) *exp.searcher_dirty = std::move(unpublished);
  return st;
}

// Every trial is given (the experiment's first persist, before it is published).
Status Master::PersistSearcherState(ExperimentRuntime& exp, SearcherJournalService::Trials trials) {
  // Not awaited: the trial rows, stored first, imply it (a restore that finds rows its snapshot
  // does not know replays their creation), so a large search answers before it is written.
  return PersistToJournal(
      searcher_journal_.get(), exp.id, exp.searcher.get(), exp.initialized, exp.shutdown,
      exp.queue_position, trials, [&trials] { return trials; },
      SearcherJournalService::Wait::kNotAwaited);
}

Status Master::ProcessActionsLocked(ExperimentRuntime& exp, std::vector<searcher::Action> actions) {
  std::deque<searcher::Action> queue(std::make_move_iterator(actions.begin()),
                                     std::make_move_iterator(actions.end()));
  // Trials created or given an operation here: they may need a process.
  std::set<int64_t> touched;
  while (!queue.empty()) {
    // Creations are stored together; when nothing follows them, with their allocations.
    StagedTrials staged;
    DET_RETURN_IF_ERROR(StageCreations(exp, queue, &staged));
    if (!staged.empty()) {
      bool last = queue.empty() && exp.state == RunState::kActive;
      DET_RETURN_IF_ERROR(ApplyStaged(exp, &staged, last, {}));
      std::vector<store::TaskLogRow> logs;
      for (const StagedTrials::Entry& e : staged.entries) {
        if (e.allocation) {
          logs.push_back(MasterLogRow(e.trial->id, e.trial->task_id,
                                      SchedulingMessage(*e.trial, *e.allocation)));
        }
      }
      searcher_journal_->QueueTaskLogs(std::move(logs));  // written after mu_ is let go
      PublishStagedLocked(exp, &staged, &touched);
    }
    if (queue.empty()) break;
    searcher::Action action = std::move(queue.front());
    queue.pop_front();
    if (auto* v = std::get_if<searcher::ValidateAfterAction>(&action)) {
      auto it = exp.trial_by_request.find(v->request_id);
      if (it != exp.trial_by_request.end()) {
        trials_[it->second]->MutableSearcher().ops.push_back(v->length);
        touched.insert(it->second);
        NotifyTrialLocked(it->second);
      }
    } else if (auto* cl = std::get_if<searcher::CloseAction>(&action)) {
      auto it = exp.trial_by_request.find(cl->request_id);
      if (it == exp.trial_by_request.end()) continue;
      TrialRuntime& t = *trials_[it->second];
      t.MutableSearcher().closed = true;
      t.MutableSearcher().ops.clear();
      NotifyTrialLocked(t.id);
      if (!t.allocation_id.empty()) {
        // A running trial is asked to checkpoint and stop; its exit then completes it.
        TerminateAllocationLocked(*allocations_[t.allocation_id], true);
      } else if (!core::IsTerminal(t.state) && !core::IsStopping(t.state)) {
        // An idle trial (waiting for an operation that will not come) is done.
        DET_RETURN_IF_ERROR(SetTrialStateLocked(t, RunState::kCompleted));
        if (!t.searcher().searcher_exited) {
          t.MutableSearcher().searcher_exited = true;
          for (auto& a : exp.searcher->TrialExited(t.request_id)) queue.push_back(std::move(a));
        }
      }
    } else if (auto* s = std::get_if<searcher::ShutdownAction>(&action)) {
      exp.shutdown = *s;
    }
  }
  DET_RETURN_IF_ERROR(PersistSnapshotLocked(exp));
  DET_RETURN_IF_ERROR(store_->UpdateExperimentProgress(exp.id, exp.searcher->Progress()));
  if (exp.state == RunState::kActive) {
    // New trials, and idle trials that just received an operation, need a process.
    std::vector<TrialRuntime*> need;
    for (int64_t tid : touched) {
      TrialRuntime& t = *trials_[tid];
      if (t.state == RunState::kActive && t.allocation_id.empty() && !t.searcher().closed) {
        need.push_back(&t);
      }
    }
    DET_RETURN_IF_ERROR(RequestAllocationsLocked(need));
  }
  return MaybeFinishExperimentLocked(exp);
}

Result<std::string> Master::WarmStartCheckpoint(const ExperimentRuntime& exp,
                                                const searcher::CreateAction& create) {
  std::optional<int64_t> source_trial;
  if (create.parent_request_id) {
    auto it = exp.trial_by_request.find(*create.parent_request_id);
    if (it != exp.trial_by_request.end()) source_trial = it->second;
  } else if (exp.config.searcher.source_checkpoint_uuid) {
    return *exp.config.searcher.source_checkpoint_uuid;
  } else if (exp.config.searcher.source_trial_id) {
    source_trial = *exp.config.searcher.source_trial_id;
  }
  if (!source_trial) return std::string();
  DET_ASSIGN_OR_RETURN(std::optional<store::CheckpointRow> latest,
                       checkpoints_->LatestCompleted(*source_trial));
  return latest ? latest->uuid : std::string();
}

Status Master::MaybeFinishExperimentLocked(ExperimentRuntime& exp) {
  if (core::IsTerminal(exp.state)) return Status::Ok();
  core::ExperimentTrialsSummary summary;
  for (const auto& [rid, tid] : exp.trial_by_request) {
    const TrialRuntime& t = *trials_[tid];
    if (!core::IsTerminal(t.state) || !t.allocation_id.empty()) summary.live++;
    summary.any_completed = summary.any_completed || t.state == RunState::kCompleted;
    summary.any_errored = summary.any_errored || t.state == RunState::kError;
  }
  std::optional<core::SearcherShutdown> shutdown;
  if (exp.shutdown) shutdown = core::SearcherShutdown{exp.shutdown->cancel, exp.shutdown->failure};
  std::optional<RunState> end =
      core::ExperimentEndState(exp.state, summary, exp.continued, shutdown);
  if (!end) return Status::Ok();
  return SetExperimentStateLocked(exp, *end);
}

Status Master::ActivateExperiment(int64_t id) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  MutexLock lock(&mu_);
  auto it = experiments_.find(id);
  if (it == experiments_.end()) {
    DET_RETURN_IF_ERROR(store_->GetExperiment(id).status());
    return FailedPrecondition("experiment " + std::to_string(id) + " is in a terminal state");
  }
  if (it->second->state == RunState::kActive) return Status::Ok();
  return SetExperimentStateLocked(*it->second, RunState::kActive);
}

Status Master::PauseExperiment(int64_t id) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  MutexLock lock(&mu_);
  auto it = experiments_.find(id);
  if (it == experiments_.end()) {
    DET_RETURN_IF_ERROR(store_->GetExperiment(id).status());
    return FailedPrecondition("experiment " + std::to_string(id) + " is in a terminal state");
  }
  ExperimentRuntime& exp = *it->second;
  if (exp.state == RunState::kPaused) return Status::Ok();
  DET_RETURN_IF_ERROR(SetExperimentStateLocked(exp, RunState::kPaused));
  std::vector<TrialRuntime*> active;
  for (auto& [rid, tid] : exp.trial_by_request) {
    TrialRuntime* t = trials_[tid].get();
    if (t->state == RunState::kActive) active.push_back(t);
  }
  DET_RETURN_IF_ERROR(SetTrialStatesLocked(active, RunState::kPaused));
  for (TrialRuntime* t : active) {
    if (!t->allocation_id.empty()) {
      TerminateAllocationLocked(*allocations_[t->allocation_id], true);
    }
  }
  return Status::Ok();
}

Status Master::CancelExperiment(int64_t id) {
  return StopExperiment(id, RunState::kStoppingCanceled);
}

Status Master::KillExperiment(int64_t id) { return StopExperiment(id, RunState::kStoppingKilled); }

// Cancel asks trials to checkpoint and exit (preemption); kill ends them at once. A trial with no
// process goes straight to CANCELED.
Status Master::StopExperiment(int64_t id, RunState stopping) {
  // Answers once the searcher state this call changed is stored (after mu_ is released).
  SearcherJournalService::AwaitScope stored(searcher_journal_.get());
  MutexLock lock(&mu_);
  auto it = experiments_.find(id);
  if (it == experiments_.end()) {
    DET_RETURN_IF_ERROR(store_->GetExperiment(id).status());
    return Status::Ok();  // already terminal
  }
  ExperimentRuntime& exp = *it->second;
  bool graceful = stopping == RunState::kStoppingCanceled;
  if (exp.state == stopping || (graceful && exp.state == RunState::kStoppingKilled)) {
    return Status::Ok();
  }
  DET_RETURN_IF_ERROR(SetExperimentStateLocked(exp, stopping));
  // Trials with a process stop through it; the others end now. One write for each group; again
  // for trials the searcher creates meanwhile (a pending allocation ends at once, and its trial's
  // exit may make the searcher create another).
  while (true) {
    std::vector<TrialRuntime*> running, idle;
    for (auto& [rid, tid] : exp.trial_by_request) {
      TrialRuntime* t = trials_[tid].get();
      bool live = !t->allocation_id.empty();
      if (core::IsTerminal(t->state) || t->state == core::TrialStateOnStop(stopping, live)) {
        continue;
      }
      (live ? running : idle).push_back(t);
    }
    if (running.empty() && idle.empty()) break;
    DET_RETURN_IF_ERROR(SetTrialStatesLocked(running, core::TrialStateOnStop(stopping, true)));
    DET_RETURN_IF_ERROR(SetTrialStatesLocked(idle, core::TrialStateOnStop(stopping, false)));
    for (TrialRuntime* t : running) {
      if (!t->allocation_id.empty()) {
        TerminateAllocationLocked(*allocations_[t->allocation_id], graceful);
      }
    }
  }
  return MaybeFinishExperimentLocked(exp);
}

Status Master::SetArchived(int64_t id, bool archived) {
  MutexLock lock(&mu_);
  DET_ASSIGN_OR_RETURN(store::ExperimentRow row, store_->GetExperiment(id));
  auto state = core::ParseRunState(row.state);
  if (archived && state && !core::IsTerminal(*state)) {
    return FailedPrecondition("experiment " + std::to_string(id) +
                              " must be in a terminal state to be archived (it is " + row.state +
                              ")");
  }
  return store_->UpdateExperimentMeta(id, row.config, archived, row.notes);
}

std::string Master::PresentedExperimentStateLocked(const ExperimentRuntime& exp) const {
  bool running = false, assigned = false;
  for (const auto& [rid, tid] : exp.trial_by_request) {
    const TrialRuntime& t = *trials_.at(tid);
    if (t.allocation_id.empty()) continue;
    const AllocationRuntime& a = *allocations_.at(t.allocation_id);
    if (a.state == AllocationRuntime::State::kRunning) running = true;
    if (a.state == AllocationRuntime::State::kAssigned) assigned = true;
  }
  return core::PresentedExperimentState(exp.state, running, assigned);
}

std::string Master::PresentedTrialStateLocked(int64_t trial_id, const std::string& db_state) const {
  std::optional<RunState> state = core::ParseRunState(db_state);
  if (!state) return "STATE_" + db_state;
  auto it = trials_.find(trial_id);
  std::optional<core::AllocationState> live;
  if (it != trials_.end() && !it->second->allocation_id.empty()) {
    live = allocations_.at(it->second->allocation_id)->state;
  }
  return core::PresentedTrialState(*state, core::ActivityOf(live));
}

Result<ExperimentView> Master::GetExperiment(int64_t id) {
  DET_ASSIGN_OR_RETURN(store::ExperimentRow row, store_->GetExperiment(id));
  ExperimentView v;
  // Counted, not read: an experiment may hold 10,000s of trials.
  DET_ASSIGN_OR_RETURN(v.num_trials, store_->CountTrials(id));
  Result<store::UserRow> owner = store_->GetUserById(row.owner_id);
  v.username = owner.ok() ? owner->username : "";
  if (std::optional<UnmanagedService::ExperimentMark> mark = unmanaged_->FindExperiment(id)) {
    v.unmanaged = true;
    v.external_experiment_id = mark->external_id;
    v.presented_state = core::PresentedUnmanagedState(row.state);
    v.row = std::move(row);
    return v;
  }
  MutexLock lock(&mu_);
  auto it = experiments_.find(id);
  v.presented_state =
      it != experiments_.end() ? PresentedExperimentStateLocked(*it->second) : "STATE_" + row.state;
  v.row = std::move(row);
  return v;
}

Result<std::vector<ExperimentView>> Master::ListExperiments(const store::ExperimentFilter& filter,
                                                            const store::Page& page,
                                                            int64_t* total) {
  DET_ASSIGN_OR_RETURN(std::vector<int64_t> ids, store_->ListExperimentIds(filter, page, total));
  std::vector<ExperimentView> out;
  for (int64_t id : ids) {
    DET_ASSIGN_OR_RETURN(ExperimentView v, GetExperiment(id));
    out.push_back(std::move(v));
  }
  return out;
}

// Rebuilds one experiment's runtime (searcher from its snapshot, trials, open allocations).
Status Master::RestoreExperimentLocked(
    const store::ExperimentRow& row, const std::map<int64_t, store::AllocationRow>& open_by_trial) {
  auto exp = std::make_unique<ExperimentRuntime>();
  exp->id = row.id;
  exp->state = core::ParseRunState(row.state).value_or(RunState::kError);
  exp->owner_id = row.owner_id;
  exp->job_id = row.job_id;
  exp->submission_time = row.start_time;
  // The stored full snapshot with its journal merged in; the journal's searcher events are
  // replayed on the searcher restored from it below.
  Result<SearcherJournalService::Loaded> journal = searcher_journal_->Load(row.id, row.snapshot);
  if (!journal.ok()) {
    spdlog::error("cannot restore experiment {}: {}", row.id, journal.status().ToString());
    return store_->UpdateExperimentState(row.id, std::string(core::RunStateName(RunState::kError)),
                                         Now());
  }
  const json& snapshot = journal->snapshot;
  if (snapshot.contains("queue_position")) {
    Result<scheduler::QueuePosition> pos =
        scheduler::QueuePosition::Parse(snapshot["queue_position"].get<std::string>());
    if (pos.ok()) exp->queue_position = *pos;
  }
  Result<store::UserRow> owner = store_->GetUserById(row.owner_id);
  exp->username = owner.ok() ? owner->username : "";
  Result<config::ExperimentConfig> cfg = config::ExperimentConfigFromJson(row.config);
  Result<std::unique_ptr<searcher::Searcher>> search =
      cfg.ok() ? (snapshot.contains("searcher")
                      ? searcher::Searcher::Restore(*cfg, snapshot["searcher"])
                      : searcher::Searcher::Create(*cfg))
               : Result<std::unique_ptr<searcher::Searcher>>(cfg.status());
  if (search.ok()) {
    Status replayed = searcher::JournaledSearcher::Replay(**search, journal->events);
    if (!replayed.ok()) search = replayed;
  }
  if (!search.ok()) {
    spdlog::error("cannot restore experiment {}: {}", row.id, search.status().ToString());
    return store_->UpdateExperimentState(row.id, std::string(core::RunStateName(RunState::kError)),
                                         Now());
  }
  exp->config = std::move(cfg).value();
  exp->searcher = std::make_unique<searcher::JournaledSearcher>(std::move(search).value());
  exp->initialized = snapshot.value("initialized", false);
  if (snapshot.contains("shutdown")) {
    exp->shutdown = searcher::ShutdownAction{snapshot["shutdown"].value("cancel", false),
                                             snapshot["shutdown"].value("failure", false)};
  }
  const json trial_snaps = snapshot.value("trials", json::object());
  DET_ASSIGN_OR_RETURN(std::vector<store::TrialRow> trows, store_->ListTrials(row.id));
  for (store::TrialRow& tr : trows) {
    auto t = std::make_unique<TrialRuntime>(tr.request_id, exp->searcher_dirty);
    t->id = tr.id;
    t->experiment_id = row.id;
    t->state = core::ParseRunState(tr.state).value_or(RunState::kError);
    t->restarts = tr.restarts;
    t->run_id = tr.run_id;
    t->task_id = tr.task_id;
    if (trial_snaps.contains(tr.request_id)) {
      t->MutableSearcher() = SearcherTrialState::FromJson(trial_snaps[tr.request_id]);
    }
    auto open_it = open_by_trial.find(tr.id);
    if (open_it != open_by_trial.end()) {
      // Its process may still be running on an agent: wait for the agent to report it.
      const store::AllocationRow& ar = open_it->second;
      auto alloc = std::make_unique<AllocationRuntime>();
      alloc->id = ar.allocation_id;
      alloc->task_id = ar.task_id;
      alloc->trial_id = tr.id;
      alloc->slots = ar.slots;
      alloc->token_digest = ar.token;  // the token itself is not stored
      auth_->RegisterAllocationDigest(alloc->token_digest, alloc->id, tr.id);
      for (const auto& r : ar.resources) {
        AllocationRuntime::Resource res;
        res.agent_id = r.value("agentId", std::string());
        for (const auto& sid : r.value("slotIds", json::array()))
          res.slot_ids.push_back(sid.get<int>());
        alloc->resources.push_back(std::move(res));
      }
      if (alloc->resources.empty() && !ar.agent_id.empty()) {
        alloc->resources.push_back({ar.agent_id, {}});  // stored before resources were recorded
      }
      alloc->queued_at = ar.start_time;
      alloc->state = alloc->resources.empty() ? AllocationRuntime::State::kPending
                                              : AllocationRuntime::State::kAssigned;
      alloc->adopt_deadline = Now() + config_.agent_timeout_seconds * 1000000;
      alloc->restored = true;
      if (alloc->state == AllocationRuntime::State::kPending) pending_.push_back(alloc->id);
      t->allocation_id = alloc->id;
      allocations_[alloc->id] = std::move(alloc);
    }
    exp->trial_by_request[tr.request_id] = tr.id;
    trials_[tr.id] = std::move(t);
  }
  ExperimentRuntime& ref = *exp;
  experiments_[row.id] = std::move(exp);
  spdlog::info("restored experiment {} ({}) with {} trials", row.id, core::RunStateName(ref.state),
               ref.trial_by_request.size());
  if (ref.state == RunState::kActive) {
    std::vector<TrialRuntime*> need;
    for (auto& [rid, tid] : ref.trial_by_request) {
      TrialRuntime* t = trials_[tid].get();
      if (t->state == RunState::kActive && t->allocation_id.empty()) need.push_back(t);
    }
    DET_RETURN_IF_ERROR(RequestAllocationsLocked(need));
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
    if (!core::IsTerminal(t.state) || t.searcher().searcher_exited) continue;
    t.MutableSearcher().searcher_exited = true;
    std::optional<searcher::ExitedReason> reason;
    if (t.state == RunState::kError) reason = searcher::ExitedReason::kErrored;
    if (t.state == RunState::kCanceled) reason = searcher::ExitedReason::kUserCanceled;
    if (reason) {
      for (auto& a : ref.searcher->TrialExitedEarly(rid, *reason)) replay.push_back(std::move(a));
    }
    for (auto& a : ref.searcher->TrialExited(rid)) replay.push_back(std::move(a));
  }
  if (!replay.empty()) return ProcessActionsLocked(ref, std::move(replay));
  DET_RETURN_IF_ERROR(MaybeFinishExperimentLocked(ref));
  return Status::Ok();
}

Status Master::RestoreLocked() {
  DET_ASSIGN_OR_RETURN(std::vector<store::ExperimentRow> rows,
                       store_->ListNonTerminalExperiments());
  DET_ASSIGN_OR_RETURN(std::vector<store::AllocationRow> open, store_->ListOpenAllocations());
  std::map<int64_t, store::AllocationRow> open_by_trial;
  for (auto& a : open) open_by_trial[a.trial_id] = a;
  for (store::ExperimentRow& row : rows) {
    DET_RETURN_IF_ERROR(RestoreExperimentLocked(row, open_by_trial));
  }
  // Allocations whose trials are no longer live are closed.
  for (auto& a : open) {
    if (!allocations_.count(a.allocation_id)) {
      a.end_time = Now();
      a.state = std::string(core::AllocationStateName(core::AllocationState::kTerminated));
      a.exit_reason = "closed at master restart";
      DET_RETURN_IF_ERROR(store_->UpsertAllocation(a));
    }
  }
  return Status::Ok();
}

}  // namespace det::master::server
