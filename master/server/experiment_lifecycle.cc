// ExperimentService: creating experiments, their lifecycle (activate, pause, cancel, kill) and
// the searcher's actions.
#include <spdlog/spdlog.h>

#include <future>
#include <unordered_map>

#include "master/config/storage_roots.h"
#include "master/config/workspace_storage.h"
#include "master/core/experiment_moves.h"
#include "master/core/lifecycle.h"
#include "master/core/trial_searcher.h"
#include "master/searcher/journaled_searcher.h"
#include "master/server/checkpoint_service.h"
#include "master/server/experiment_service.h"
#include "master/server/passwords.h"
#include "master/server/webhook_service.h"
#include "master/server/workspace_service.h"

namespace det::master::server {

using core::RunState;
using nlohmann::json;

void ExperimentService::Run(std::function<Status()> decide, Done<Status> done) {
  deps_.loop->Decide(std::move(decide), std::move(done));
}

Status ExperimentService::RunAndWait(std::function<Status()> decide) {
  return deps_.loop->DecideAndWait(std::move(decide));
}

ExperimentRuntime* ExperimentService::FindExperiment(int64_t id) {
  Settle(id);
  auto it = experiments_.find(id);
  return it == experiments_.end() ? nullptr : it->second.get();
}

TrialRuntime* ExperimentService::FindTrial(int64_t id) {
  auto it = trials_.find(id);
  if (it == trials_.end()) {
    // Stored but not yet published: its search publishes the rest first. A search's trials are
    // stored with ascending ids, so the unpublished ones lie in one range (another search's
    // trial in that range only settles this one early).
    std::optional<int64_t> publishing;
    for (const auto& [exp_id, p] : publishing_) {
      const auto& entries = p.staged.entries;
      if (p.staged.published < entries.size() && entries[p.staged.published].trial->id <= id &&
          id <= entries.back().trial->id) {
        publishing = exp_id;
        break;
      }
    }
    if (!publishing) return nullptr;
    Settle(*publishing);
    it = trials_.find(id);
    return it == trials_.end() ? nullptr : it->second.get();
  }
  Settle(it->second->experiment_id);
  return it->second.get();
}

JobSpec ExperimentService::JobOf(const ExperimentRuntime& exp) const {
  JobSpec job;
  job.job_id = exp.job_id;
  job.experiment_id = exp.id;
  job.name = exp.config.name;
  job.username = exp.username;
  job.submission_time = exp.submission_time;
  job.priority = exp.config.resources.priority;
  job.weight = exp.config.resources.weight;
  job.max_slots = exp.config.resources.max_slots;
  job.position = exp.queue_position;
  job.pool = deps_.allocations->ResolvePool(exp.config.resources.resource_pool,
                                            exp.config.resources.slots_per_trial);
  job.single_node = exp.config.resources.is_single_node.value_or(false);
  job.preemption_timeout_seconds = exp.config.preemption_timeout;
  job.terminal = core::IsTerminal(exp.state);
  job.hold_queued = IsEnding(exp.state);
  return job;
}

void ExperimentService::PublishJob(const ExperimentRuntime& exp) {
  deps_.allocations->SetJob(JobOf(exp));
  deps_.view->PutExperiment(exp.id, exp.state);
}

void ExperimentService::NotifyTrial(int64_t trial_id) {
  deps_.waiters->Notify(TrialKey(trial_id));
  deps_.waiters->Notify(TrialLogsKey(trial_id));
}

void ExperimentService::Publish(const TrialRuntime& trial, bool notify) {
  deps_.view->PutTrial(trial.id, trial.experiment_id, trial.state, trial.run_id, trial.task_id);
  if (notify) NotifyTrial(trial.id);
}

Result<CreateExperimentResult> ExperimentService::CreateExperiment(
    const CreateExperimentRequest& req, const Principal& who) {
  if (req.content_bytes >= kMaxContextBytes) {
    return InvalidArgument("model definition is " + std::to_string(req.content_bytes) +
                           " bytes, over the maximum allowed size of " +
                           std::to_string(kMaxContextBytes) + " bytes (95 MiB)");
  }
  const MasterConfig& config = *deps_.config;
  config::ConfigDefaults defaults;
  defaults.checkpoint_storage = config.checkpoint_storage;
  // Determined's seed is an int32 (0..2^31-1); the unix time in seconds fits until 2038.
  defaults.experiment_seed = static_cast<uint32_t>((Now() / 1000000) & 0x7fffffff);
  defaults.preemption_timeout = config.preemption_timeout_seconds;
  defaults.task_container_defaults = config.task_container_defaults;
  // Its workspace's checkpoint storage goes over the master's.
  if (deps_.workspaces != nullptr) {
    DET_ASSIGN_OR_RETURN(store::WorkspaceRow ws, deps_.workspaces->GetWorkspace(req.workspace_id));
    defaults.checkpoint_storage =
        config::WorkspaceStorageDefault(ws.checkpoint_storage, config.checkpoint_storage);
  }
  DET_ASSIGN_OR_RETURN(config::ExperimentConfig cfg,
                       config::ParseExperimentConfig(req.config_yaml, defaults));
  // A config that names no pool runs in its workspace's default pool, when it has one; a
  // pool bound to other workspaces is refused.
  std::string workspace_pool;
  if (deps_.workspaces != nullptr) {
    DET_ASSIGN_OR_RETURN(workspace_pool,
                         deps_.workspaces->ResolvePool(req.workspace_id, cfg.resources.resource_pool,
                                                       cfg.resources.slots_per_trial));
  }
  auto apply_workspace_pool = [&](config::ExperimentConfig& c) {
    if (!c.resources.resource_pool.empty() || workspace_pool.empty() ||
        workspace_pool == deps_.allocations->ResolvePool("", c.resources.slots_per_trial)) {
      return;
    }
    c.resources.resource_pool = workspace_pool;
    c.defaulted["resources"]["resource_pool"] = workspace_pool;
  };
  apply_workspace_pool(cfg);
  // Its pool's task_container_defaults go over the master's: parsed again with both.
  if (const scheduler::PoolConfig* pool = config.pools.Find(deps_.allocations->ResolvePool(
          cfg.resources.resource_pool, cfg.resources.slots_per_trial));
      pool != nullptr && pool->task_container_defaults.is_object() &&
      !pool->task_container_defaults.empty()) {
    defaults.task_container_defaults = TaskContainerDefaultsFor(
        config.task_container_defaults, config.pools, pool->pool_name);
    DET_ASSIGN_OR_RETURN(cfg, config::ParseExperimentConfig(req.config_yaml, defaults));
    apply_workspace_pool(cfg);
  }
  DET_RETURN_IF_ERROR(config::CheckConfigStorageRoots(cfg.defaulted,
                                                      config.checkpoint_storage_allowed_roots));
  Result<std::unique_ptr<searcher::Searcher>> search = searcher::Searcher::Create(cfg);
  if (!search.ok()) return InvalidArgument(search.status().message());
  DET_RETURN_IF_ERROR(deps_.allocations->CheckPoolExists(cfg.resources.resource_pool));
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
  // Until it is published on the loop, nothing else can see the experiment's runtime: its rows
  // and first trials are written here, so the loop does not wait for a large search.
  DET_ASSIGN_OR_RETURN(int64_t id, deps_.store->InsertExperiment(row, tgz));
  row.id = id;
  exp->id = id;
  spdlog::info("created experiment {}", id);
  if (req.project_id != 1 && deps_.workspaces != nullptr) {
    DET_RETURN_IF_ERROR(deps_.workspaces->MoveExperiment(id, req.project_id));
  }
  if (req.activate) {
    DET_RETURN_IF_ERROR(ActivateNewExperiment(std::move(exp)));
    row.state = std::string(core::RunStateName(RunState::kActive));
  } else {
    AdoptOffLoop(std::move(exp));
  }
  result.experiment = row;
  return result;
}

void ExperimentService::AdoptOffLoop(std::unique_ptr<ExperimentRuntime> exp,
                                     StagedTrials trials) {
  // Readers see it at once; later requests about it are decided on the loop after this.
  deps_.view->PutExperiment(exp->id, exp->state);
  auto holder = std::make_shared<std::unique_ptr<ExperimentRuntime>>(std::move(exp));
  auto staged = std::make_shared<StagedTrials>(std::move(trials));
  deps_.loop->Post([this, holder, staged] {
    runtime_role.Assume();
    ExperimentRuntime& e = **holder;
    Adopt(std::move(*holder));
    if (!staged->empty()) PublishStaged(e, staged.get(), nullptr);
  });
}

void ExperimentService::Adopt(std::unique_ptr<ExperimentRuntime> exp) {
  int64_t id = exp->id;
  ExperimentRuntime& ref = *exp;
  experiments_[id] = std::move(exp);
  PublishJob(ref);
}

Status ExperimentService::SetExperimentState(ExperimentRuntime& exp, RunState state,
                                             store::DecisionWrites extra, TrialMoves moves) {
  if (exp.state == state) return Status::Ok();
  if (!core::ExperimentTransitionAllowed(exp.state, state)) {
    return FailedPrecondition("experiment " + std::to_string(exp.id) + " cannot move from " +
                              std::string(core::RunStateName(exp.state)) + " to " +
                              std::string(core::RunStateName(state)));
  }
  store::DecisionWrites& w = extra;
  std::optional<int64_t> end_time;
  if (core::IsTerminal(state)) end_time = Now();
  w.experiment_state =
      store::ExperimentStateWrite{exp.id, std::string(core::RunStateName(state)), end_time};
  if (state == RunState::kCompleted) {
    w.experiment_progress = store::ExperimentProgressWrite{exp.id, 1.0};
  }
  AddWebhookEvents(exp.id, exp.config.defaulted, exp.submission_time, state, end_time, &w);
  // The experiment's own part, once its state is stored.
  auto commit = [&]() ON_RUNTIME {
    RunState old = exp.state;
    exp.state = state;
    PublishJob(exp);
    CommitTrialStates(moves);
    spdlog::info("experiment {} {} -> {}", exp.id, core::RunStateName(old),
                 core::RunStateName(state));
  };
  if (state == RunState::kActive && exp.initialized) {
    // The experiment's state, its paused trials' return and their new runs: one transaction
    // (a large search's other paused trials follow in slices).
    TrialMoves back;
    bool more = false;
    bool webhook_events = !w.webhook_events.empty();
    DET_RETURN_IF_ERROR(ResumeTrials(exp, std::move(w), &back, Slice(), false, &more));
    if (webhook_events) deps_.webhooks->Wake();
    commit();
    CommitTrialStates(back);
    if (more) FollowInSlices(exp);
    return Status::Ok();
  }
  DET_RETURN_IF_ERROR(deps_.store->ApplyDecision(w).status());
  WakeWebhooks(w);
  commit();
  if (core::IsTerminal(state)) {
    Status gc = deps_.checkpoints->CollectExperimentCheckpoints(exp.id);
    if (!gc.ok()) spdlog::error("checkpoint GC of experiment {}: {}", exp.id, gc.ToString());
  }
  if (state == RunState::kActive) {
    // Its first activation: the searcher's first trials.
    exp.initialized = true;
    DET_RETURN_IF_ERROR(ProcessActions(exp, exp.searcher->InitialOperations()));
    TrialMoves back;
    DET_RETURN_IF_ERROR(ResumeTrials(exp, {}, &back));
    CommitTrialStates(back);
  }
  return Status::Ok();
}

void ExperimentService::AddWebhookEvents(int64_t id, const json& config, int64_t start_time,
                                         RunState state, std::optional<int64_t> end_time,
                                         store::DecisionWrites* w) {
  if (deps_.webhooks == nullptr) return;
  WebhookService::ExperimentState e{id, std::string(core::RunStateName(state)), &config,
                                    start_time, end_time};
  for (store::WebhookEventRow& row : deps_.webhooks->ExperimentStateEvents(e)) {
    w->webhook_events.push_back(std::move(row));
  }
}

void ExperimentService::WakeWebhooks(const store::DecisionWrites& w) {
  if (deps_.webhooks != nullptr && !w.webhook_events.empty()) deps_.webhooks->Wake();
}

Status ExperimentService::ResumeTrials(ExperimentRuntime& exp, store::DecisionWrites extra,
                                       TrialMoves* back, size_t limit, bool paused_only,
                                       bool* more) {
  std::vector<TrialRuntime*> paused, run;
  for (auto& [rid, tid] : exp.trial_by_request) {
    TrialRuntime* t = trials_[tid].get();
    core::TrialPresence presence =
        t->allocation_id.empty() ? core::TrialPresence::kNone : core::TrialPresence::kRunning;
    core::TrialMove m = core::MoveWithExperiment(RunState::kActive, t->state, presence);
    if (m.to) {
      if (paused.size() >= limit) {
        if (more != nullptr) *more = true;
        continue;
      }
      paused.push_back(t);
    } else if (paused_only) {
      continue;
    }
    if (m.request_process) run.push_back(t);
  }
  DET_RETURN_IF_ERROR(StageTrialStates(paused, RunState::kActive, &extra, back));
  return RequestAllocations(run, std::move(extra));
}

Status ExperimentService::StageTrialStates(const std::vector<TrialRuntime*>& trials, RunState state,
                                           store::DecisionWrites* writes, TrialMoves* moves) {
  std::optional<int64_t> end_time;
  if (core::IsTerminal(state)) end_time = Now();
  size_t staged = moves->size();
  for (TrialRuntime* trial : trials) {
    if (trial->state == state) continue;
    if (core::IsTerminal(trial->state)) continue;  // patches ignored once terminal
    if (!core::TrialTransitionAllowed(trial->state, state)) {
      moves->resize(staged);
      return FailedPrecondition("trial " + std::to_string(trial->id) + " cannot move from " +
                                std::string(core::RunStateName(trial->state)) + " to " +
                                std::string(core::RunStateName(state)));
    }
    writes->trials.push_back({trial->id, std::string(core::RunStateName(state)), trial->run_id,
                              trial->restarts, end_time});
    moves->emplace_back(trial, state);
  }
  return Status::Ok();
}

void ExperimentService::CommitTrialStates(const TrialMoves& moves) {
  for (const auto& [trial, state] : moves) {
    trial->state = state;
    Publish(*trial);
  }
}

Status ExperimentService::SetTrialStates(const std::vector<TrialRuntime*>& trials, RunState state,
                                         store::DecisionWrites extra) {
  store::DecisionWrites& w = extra;
  TrialMoves moves;
  DET_RETURN_IF_ERROR(StageTrialStates(trials, state, &w, &moves));
  if (w.empty()) return Status::Ok();
  DET_RETURN_IF_ERROR(deps_.store->ApplyDecision(w).status());
  for (const auto& log : w.logs) deps_.logs->Notify(log.trial_id);
  CommitTrialStates(moves);
  return Status::Ok();
}

namespace {

// Persists an experiment's searcher state: `changed` may differ from what was persisted, `all`
// lists every trial (asked for when the journal has no mirror of the experiment).
Status PersistToJournal(
    SearcherJournalService* journal, int64_t experiment_id, searcher::Searcher* search,
    bool initialized, const std::optional<searcher::ShutdownAction>& shutdown,
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

// Only the trials marked dirty (TrialRuntime::MutableSearcher) are diffed: O(changes).
Status ExperimentService::PersistSnapshot(ExperimentRuntime& exp) {
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
  auto all = [&]() NO_THREAD_SAFETY_ANALYSIS {  // called within this call, on the loop
    SearcherJournalService::Trials every;
    every.reserve(exp.trial_by_request.size());
    for (const auto& [rid, tid] : exp.trial_by_request) {
      every.emplace_back(rid, trials_.at(tid)->searcher());
    }
    return every;
  };
  Status st = PersistToJournal(deps_.searcher_journal, exp.id, exp.searcher.get(), exp.initialized,
                               exp.shutdown, exp.queue_position, std::move(changed), all);
  // On failure the marks stay: the next call reports them again (and the service, which has
  // dropped its mirror, writes a full snapshot from every trial anyway).
  if (st.ok()) *exp.searcher_dirty = std::move(unpublished);
  return st;
}

// The experiment's first persist, before it is published: the staged trials are all of its
// trials, and the journal (told to forget it) writes a full snapshot from them.
Status ExperimentService::PersistSearcherState(ExperimentRuntime& exp, const StagedTrials& staged) {
  deps_.searcher_journal->Forget(exp.id);
  auto all = [&staged] {
    SearcherJournalService::Trials trials;
    trials.reserve(staged.entries.size());
    for (const StagedTrials::Entry& e : staged.entries) {
      trials.emplace_back(e.trial->request_id, e.trial->searcher());
    }
    return trials;
  };
  // Not awaited: the trial rows, stored first, imply it (a restore that finds rows its snapshot
  // does not know replays their creation), so a large search answers before it is written.
  return PersistToJournal(deps_.searcher_journal, exp.id, exp.searcher.get(), exp.initialized,
                          exp.shutdown, exp.queue_position, {}, all,
                          SearcherJournalService::Wait::kNotAwaited);
}

void ExperimentService::SearcherExit(ExperimentRuntime& exp, TrialRuntime& trial,
                                     std::optional<searcher::ExitedReason> reason,
                                     std::vector<searcher::Action>* actions) {
  if (trial.searcher().searcher_exited) return;
  trial.MutableSearcher().searcher_exited = true;
  auto append = [actions](std::vector<searcher::Action> more) {
    for (auto& a : more) actions->push_back(std::move(a));
  };
  if (reason) append(exp.searcher->TrialExitedEarly(trial.request_id, *reason));
  append(exp.searcher->TrialExited(trial.request_id));
}

Status ExperimentService::ProcessActions(ExperimentRuntime& exp,
                                         std::vector<searcher::Action> actions) {
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
      DET_RETURN_IF_ERROR(ApplyStaged(&staged, last, {}));
      PublishStaged(exp, &staged, &touched);
    }
    if (queue.empty()) break;
    searcher::Action action = std::move(queue.front());
    queue.pop_front();
    if (auto* v = std::get_if<searcher::ValidateAfterAction>(&action)) {
      auto it = exp.trial_by_request.find(v->request_id);
      if (it != exp.trial_by_request.end()) {
        trials_[it->second]->MutableSearcher().ops.push_back(v->length);
        touched.insert(it->second);
        NotifyTrial(it->second);
      }
    } else if (auto* cl = std::get_if<searcher::CloseAction>(&action)) {
      auto it = exp.trial_by_request.find(cl->request_id);
      if (it == exp.trial_by_request.end()) continue;
      TrialRuntime& t = *trials_[it->second];
      core::CloseEffect effect =
          core::ApplyClose(&t.MutableSearcher(), t.state, !t.allocation_id.empty());
      NotifyTrial(t.id);
      if (effect == core::CloseEffect::kStopProcess) {
        // A running trial is asked to checkpoint and stop; its exit then completes it.
        deps_.allocations->Terminate(t.allocation_id, true);
      } else if (effect == core::CloseEffect::kCompleteNow) {
        // An idle trial (waiting for an operation that will not come) is done.
        DET_RETURN_IF_ERROR(SetTrialStates({&t}, RunState::kCompleted));
        std::vector<searcher::Action> more;
        SearcherExit(exp, t, std::nullopt, &more);
        for (auto& a : more) queue.push_back(std::move(a));
      }
    } else if (auto* s = std::get_if<searcher::ShutdownAction>(&action)) {
      exp.shutdown = *s;
    }
  }
  DET_RETURN_IF_ERROR(PersistSnapshot(exp));
  store::DecisionWrites progress;
  progress.experiment_progress = store::ExperimentProgressWrite{exp.id, exp.searcher->Progress()};
  DET_RETURN_IF_ERROR(deps_.store->ApplyDecision(progress).status());
  if (exp.state == RunState::kActive) {
    // New trials, and idle trials that just received an operation, need a process.
    std::vector<TrialRuntime*> need;
    for (int64_t tid : touched) {
      TrialRuntime& t = *trials_[tid];
      if (core::NeedsProcess(exp.state, t.state, !t.allocation_id.empty(), t.searcher())) {
        need.push_back(&t);
      }
    }
    DET_RETURN_IF_ERROR(RequestAllocations(need));
  }
  return MaybeFinishExperiment(exp);
}

Result<std::string> ExperimentService::WarmStartCheckpoint(const ExperimentRuntime& exp,
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
                       deps_.checkpoints->LatestCompleted(*source_trial));
  return latest ? latest->uuid : std::string();
}

Status ExperimentService::MaybeFinishExperiment(ExperimentRuntime& exp) {
  if (core::IsTerminal(exp.state)) return Status::Ok();
  std::optional<core::SearcherShutdown> shutdown;
  if (exp.shutdown) shutdown = core::SearcherShutdown{exp.shutdown->cancel, exp.shutdown->failure};
  // Called at every trial's end: the trials are counted only when the experiment could end with
  // none live, and only up to the first live one (a live trial means it goes on). Counting all
  // of them each time made a pause of 20,000 queued trials 20,000 x 20,000 steps.
  if (!core::ExperimentEndState(exp.state, {}, exp.continued, shutdown)) return Status::Ok();
  core::ExperimentTrialsSummary summary;
  for (const auto& [rid, tid] : exp.trial_by_request) {
    const TrialRuntime& t = *trials_[tid];
    if (!core::IsTerminal(t.state) || !t.allocation_id.empty()) {
      summary.live++;
      break;
    }
    summary.any_completed = summary.any_completed || t.state == RunState::kCompleted;
    summary.any_errored = summary.any_errored || t.state == RunState::kError;
  }
  std::optional<RunState> end =
      core::ExperimentEndState(exp.state, summary, exp.continued, shutdown);
  if (!end) return Status::Ok();
  return SetExperimentState(exp, *end);
}

std::unique_ptr<AllocationRuntime> ExperimentService::NewAllocation(const ExperimentRuntime& exp,
                                                                    const TrialRuntime& trial,
                                                                    int64_t queued_at) {
  return AllocationService::NewAllocation(exp.job_id, exp.id, trial.id, trial.task_id, trial.run_id,
                                          exp.config.resources.slots_per_trial, queued_at);
}

std::string ExperimentService::SchedulingMessage(int64_t trial_id, int64_t experiment_id,
                                                 const std::string& allocation_id) {
  return "Scheduling Trial " + std::to_string(trial_id) + " (Experiment " +
         std::to_string(experiment_id) + ") (id: " + allocation_id + ")";
}

Status ExperimentService::RequestAllocations(const std::vector<TrialRuntime*>& trials,
                                             store::DecisionWrites extra) {
  store::DecisionWrites& w = extra;
  std::vector<std::pair<TrialRuntime*, std::unique_ptr<AllocationRuntime>>> made;
  const int64_t now = Now();
  // A trial `extra` already writes (e.g. its return from PAUSED) gets its new run in that write.
  std::unordered_map<int64_t, size_t> written;
  written.reserve(w.trials.size());
  for (size_t i = 0; i < w.trials.size(); ++i) written.emplace(w.trials[i].trial_id, i);
  for (TrialRuntime* t : trials) {
    if (!t->allocation_id.empty()) continue;
    t->run_id += 1;
    auto alloc = NewAllocation(*experiments_.at(t->experiment_id), *t, now);
    auto same = written.find(t->id);
    if (same == written.end()) {
      w.trials.push_back({t->id, std::nullopt, t->run_id, t->restarts, std::nullopt});
      w.trials.back().run_queued_at = now;
    } else {
      w.trials[same->second].run_id = t->run_id;
      w.trials[same->second].run_queued_at = now;
    }
    w.logs.push_back(
        deps_.logs->Row(t->id, t->task_id, SchedulingMessage(t->id, t->experiment_id, alloc->id)));
    made.emplace_back(t, std::move(alloc));
  }
  if (w.empty()) return Status::Ok();
  if (Status st = deps_.store->ApplyDecision(w).status(); !st.ok()) {
    for (auto& [t, alloc] : made) t->run_id -= 1;
    return st;
  }
  for (const auto& log : w.logs) deps_.logs->Notify(log.trial_id);
  for (auto& [t, alloc] : made) {
    t->allocation_id = alloc->id;
    Publish(*t);
    deps_.allocations->Publish(std::move(alloc));
  }
  return Status::Ok();
}

void ExperimentService::ActivateExperiment(int64_t id, Done<Status> done) {
  Run(
      [this, id]() ON_RUNTIME -> Status {
        ExperimentRuntime* exp = FindExperiment(id);
        if (exp == nullptr) {
          DET_RETURN_IF_ERROR(deps_.store->GetExperiment(id).status());
          return FailedPrecondition("experiment " + std::to_string(id) + " is in a terminal state");
        }
        if (exp->state == RunState::kActive) return Status::Ok();
        return SetExperimentState(*exp, RunState::kActive);
      },
      std::move(done));
}

void ExperimentService::PauseExperiment(int64_t id, Done<Status> done) {
  Run(
      [this, id]() ON_RUNTIME -> Status {
        ExperimentRuntime* exp = FindExperiment(id);
        if (exp == nullptr) {
          DET_RETURN_IF_ERROR(deps_.store->GetExperiment(id).status());
          return FailedPrecondition("experiment " + std::to_string(id) + " is in a terminal state");
        }
        if (exp->state == RunState::kPaused) return Status::Ok();
        return EndTrials(*exp, RunState::kPaused);
      },
      std::move(done));
}

void ExperimentService::CancelExperiment(int64_t id, Done<Status> done) {
  Run([this, id]() ON_RUNTIME { return StopExperiment(id, RunState::kStoppingCanceled); },
      std::move(done));
}

void ExperimentService::KillExperiment(int64_t id, Done<Status> done) {
  Run([this, id]() ON_RUNTIME { return StopExperiment(id, RunState::kStoppingKilled); },
      std::move(done));
}

// Cancel asks trials to checkpoint and exit (preemption); kill ends them at once. A trial with no
// process goes straight to CANCELED.
Status ExperimentService::StopExperiment(int64_t id, RunState stopping) {
  ExperimentRuntime* found = FindExperiment(id);
  if (found == nullptr) {
    DET_RETURN_IF_ERROR(deps_.store->GetExperiment(id).status());
    return Status::Ok();  // already terminal
  }
  ExperimentRuntime& exp = *found;
  bool graceful = stopping == RunState::kStoppingCanceled;
  if (core::IsTerminal(exp.state) || exp.state == stopping ||
      (graceful && exp.state == RunState::kStoppingKilled)) {
    return Status::Ok();  // ended (as after a restart, where it is not live), or ending already
  }
  return EndTrials(exp, stopping);
}

// The trials one slice of a pause or stop moves, staged into its writes.
struct ExperimentService::Ending {
  store::DecisionWrites writes;
  TrialMoves moves;
  // With a process: asked to stop (or killed) once stored.
  std::vector<std::pair<TrialRuntime*, bool /*kill*/>> running;
  std::vector<TrialRuntime*> unplaced;  // ended with its queued allocation
  std::vector<TrialRuntime*> canceled;  // ended without a process: the searcher is told
  bool more = false;                    // trials without a process left for a later slice
};

// Each trial moves as core::MoveWithExperiment says; those with a process all go in this slice,
// at most `limit` of the others.
Status ExperimentService::StageEnding(ExperimentRuntime& exp, RunState state, size_t limit,
                                      Ending* e) {
  std::map<RunState, std::vector<TrialRuntime*>> by_state;
  size_t idle = 0;
  for (auto& [rid, tid] : exp.trial_by_request) {
    TrialRuntime* t = trials_[tid].get();
    core::TrialPresence presence = core::TrialPresence::kNone;
    if (!t->allocation_id.empty()) {
      presence = deps_.allocations->IsUnplaced(t->allocation_id) ? core::TrialPresence::kQueued
                                                                 : core::TrialPresence::kRunning;
    }
    core::TrialMove m = core::MoveWithExperiment(state, t->state, presence);
    if (!m.to) continue;
    if (presence == core::TrialPresence::kRunning) {
      if (m.stop_process || m.kill_process) e->running.emplace_back(t, m.kill_process);
    } else if (idle < limit) {
      ++idle;
    } else {
      e->more = true;
      continue;
    }
    if (m.drop_queued) e->unplaced.push_back(t);
    if (m.tell_searcher_canceled) e->canceled.push_back(t);
    by_state[*m.to].push_back(t);
  }
  for (const auto& [to, trials] : by_state) {
    DET_RETURN_IF_ERROR(StageTrialStates(trials, to, &e->writes, &e->moves));
  }
  return Status::Ok();
}

// Once stored: processes are asked to stop; queued allocations are dropped in one pass; the
// searcher learns of the trials that ended without a process (a paused trial comes back later).
Status ExperimentService::AfterEnding(ExperimentRuntime& exp, Ending& e) {
  for (auto& [t, kill] : e.running) {
    if (!t->allocation_id.empty()) deps_.allocations->Terminate(t->allocation_id, !kill);
  }
  std::vector<std::string> ids;
  for (TrialRuntime* t : e.unplaced) {
    ids.push_back(std::move(t->allocation_id));
    t->allocation_id.clear();
    NotifyTrial(t->id);
  }
  if (!ids.empty()) deps_.allocations->DropUnplaced(ids);
  if (e.canceled.empty()) return Status::Ok();
  std::vector<searcher::Action> actions;
  for (TrialRuntime* t : e.canceled) {
    SearcherExit(exp, *t, searcher::ExitedReason::kUserCanceled, &actions);
  }
  return actions.empty() ? PersistSnapshot(exp) : ProcessActions(exp, std::move(actions));
}

Status ExperimentService::EndTrials(ExperimentRuntime& exp, RunState state) {
  Ending e;
  DET_RETURN_IF_ERROR(StageEnding(exp, state, Slice(), &e));
  DET_RETURN_IF_ERROR(SetExperimentState(exp, state, std::move(e.writes), e.moves));
  DET_RETURN_IF_ERROR(AfterEnding(exp, e));
  if (!e.more) return MoveRemainingTrials(exp);
  FollowInSlices(exp);
  return Status::Ok();
}

void ExperimentService::FollowInSlices(const ExperimentRuntime& exp) {
  spdlog::info("experiment {}: its other trials follow it to {} in slices of {}", exp.id,
               core::RunStateName(exp.state), Slice());
  moving_.insert(exp.id);
  PostMovingSlice(exp.id);
}

Result<bool> ExperimentService::MoveTrialsSlice(ExperimentRuntime& exp, size_t limit) {
  if (exp.state == RunState::kActive) {
    TrialMoves back;
    DET_RETURN_IF_ERROR(ResumeTrials(exp, {}, &back, limit, /*paused_only=*/true));
    CommitTrialStates(back);
    return !back.empty();
  }
  Ending e;
  DET_RETURN_IF_ERROR(StageEnding(exp, exp.state, limit, &e));
  if (e.moves.empty()) return false;
  DET_RETURN_IF_ERROR(deps_.store->ApplyDecision(e.writes).status());
  CommitTrialStates(e.moves);
  DET_RETURN_IF_ERROR(AfterEnding(exp, e));
  return true;
}

// Also ends the trials the searcher creates meanwhile (a queued trial's end may make it create
// another).
Status ExperimentService::MoveEveryTrial(ExperimentRuntime& exp) {
  while (true) {
    DET_ASSIGN_OR_RETURN(bool moved, MoveTrialsSlice(exp, SIZE_MAX));
    if (!moved) return Status::Ok();
  }
}

Status ExperimentService::MoveRemainingTrials(ExperimentRuntime& exp) {
  DET_RETURN_IF_ERROR(MoveEveryTrial(exp));
  return IsStopping(exp.state) ? MaybeFinishExperiment(exp) : Status::Ok();
}

void ExperimentService::PostMovingSlice(int64_t experiment_id) {
  deps_.loop->Post([this, experiment_id] {
    runtime_role.Assume();
    ContinueMoving(experiment_id);
  });
}

void ExperimentService::ContinueMoving(int64_t experiment_id) {
  // Taken out while the slice runs, so nothing it calls settles the experiment again.
  if (moving_.erase(experiment_id) == 0) return;  // done by a decision about it (Settle)
  auto it = experiments_.find(experiment_id);
  if (it == experiments_.end()) return;
  ExperimentRuntime& exp = *it->second;
  if (IsEnding(exp.state) || exp.state == RunState::kActive) {
    Result<bool> moved = MoveTrialsSlice(exp, Slice());
    if (!moved.ok()) {
      // Queued allocations of a pause or stop stay held; the next decision about the
      // experiment, or a restart, moves the rest.
      spdlog::error("experiment {}: cannot move the next slice of its trials: {}", experiment_id,
                    moved.status().ToString());
      moving_.insert(experiment_id);
      return;
    }
    if (*moved) {
      moving_.insert(experiment_id);
      PostMovingSlice(experiment_id);
      return;
    }
  }
  // The last slice's searcher decisions may have ended the experiment already.
  spdlog::info("experiment {}: the last slice of its trials is done ({})", experiment_id,
               core::RunStateName(exp.state));
  Status st = IsStopping(exp.state) ? MaybeFinishExperiment(exp) : Status::Ok();
  if (!st.ok()) spdlog::error("experiment {}: {}", experiment_id, st.ToString());
}

bool ExperimentService::IsEnding(RunState state) {
  return state == RunState::kPaused || IsStopping(state);
}

bool ExperimentService::IsStopping(RunState state) {
  return state == RunState::kStoppingCanceled || state == RunState::kStoppingKilled;
}

namespace {

Status Wait(const std::function<void(Done<Status>)>& start) {
  std::promise<Status> p;
  start([&p](Status st) { p.set_value(std::move(st)); });
  return p.get_future().get();
}

}  // namespace

Status ExperimentService::ActivateExperiment(int64_t id) {
  return Wait([&](Done<Status> d) { ActivateExperiment(id, std::move(d)); });
}
Status ExperimentService::PauseExperiment(int64_t id) {
  return Wait([&](Done<Status> d) { PauseExperiment(id, std::move(d)); });
}
Status ExperimentService::CancelExperiment(int64_t id) {
  return Wait([&](Done<Status> d) { CancelExperiment(id, std::move(d)); });
}
Status ExperimentService::KillExperiment(int64_t id) {
  return Wait([&](Done<Status> d) { KillExperiment(id, std::move(d)); });
}
Status ExperimentService::PatchExperiment(int64_t id, const json& patch) {
  return Wait([&](Done<Status> d) { PatchExperiment(id, patch, std::move(d)); });
}
Status ExperimentService::ContinueExperiment(int64_t id, const std::string& override_yaml) {
  return Wait([&](Done<Status> d) { ContinueExperiment(id, override_yaml, std::move(d)); });
}
Status ExperimentService::SetArchived(int64_t id, bool archived) {
  return Wait([&](Done<Status> d) { SetArchived(id, archived, std::move(d)); });
}
Status ExperimentService::DeleteExperiment(int64_t id) {
  return Wait([&](Done<Status> d) { DeleteExperiment(id, std::move(d)); });
}
Status ExperimentService::KillTrial(int64_t trial_id) {
  return Wait([&](Done<Status> d) { KillTrial(trial_id, std::move(d)); });
}
Status ExperimentService::CompleteSearcherOperation(int64_t trial_id, uint64_t length,
                                                    double metric) {
  return Wait(
      [&](Done<Status> d) { CompleteSearcherOperation(trial_id, length, metric, std::move(d)); });
}
Status ExperimentService::ReportProgress(int64_t trial_id, double fraction) {
  return Wait([&](Done<Status> d) { ReportProgress(trial_id, fraction, std::move(d)); });
}
Status ExperimentService::ReportEarlyExit(int64_t trial_id, const std::string& reason) {
  return Wait([&](Done<Status> d) { ReportEarlyExit(trial_id, reason, std::move(d)); });
}

}  // namespace det::master::server
