// ExperimentService: creating experiments and their lifecycle (activate, pause, cancel, kill),
// each a core::Experiment event (experiment_decisions.cc carries it out).
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

JobSpec ExperimentService::JobOf(const ExperimentRuntime& exp,
                                 std::optional<RunState> shown) const {
  const RunState state = shown.value_or(exp.state());
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
  job.terminal = core::IsTerminal(state);
  // Nothing of a paused or stopping experiment waits for slots (its decision dropped it).
  job.hold_queued = state == RunState::kPaused || core::IsStopping(state);
  return job;
}

void ExperimentService::PublishJob(const ExperimentRuntime& exp, std::optional<RunState> shown) {
  deps_.allocations->SetJob(JobOf(exp, shown));
  deps_.view->PutExperiment(exp.id, shown.value_or(exp.state()));
}

void ExperimentService::NotifyTrial(int64_t trial_id) {
  deps_.waiters->Notify(TrialKey(trial_id));
  deps_.waiters->Notify(TrialLogsKey(trial_id));
}

void ExperimentService::Publish(const TrialRuntime& trial, bool notify) {
  deps_.view->PutTrial(trial.id, trial.experiment_id, trial.state(), trial.run_id, trial.task_id);
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
  exp->core = std::make_unique<core::Experiment>(
      std::make_unique<searcher::JournaledSearcher>(std::move(search).value()),
      RulesOf(cfg, /*continued=*/false));
  exp->owner_id = who.user_id;
  exp->username = who.username;
  exp->job_id = row.job_id;
  exp->submission_time = row.start_time;
  row.snapshot = {
      {"initialized", false}, {"searcher", exp->core->searcher().Snapshot()},
      {"trials", json::object()}};
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
  deps_.view->PutExperiment(exp->id, exp->state());
  auto holder = std::make_shared<std::unique_ptr<ExperimentRuntime>>(std::move(exp));
  auto staged = std::make_shared<StagedTrials>(std::move(trials));
  deps_.loop->Post([this, holder, staged] {
    runtime_role.Assume();
    ExperimentRuntime& e = **holder;
    Adopt(std::move(*holder));
    if (!staged->empty()) PublishStaged(e, staged.get());
  });
}

void ExperimentService::Adopt(std::unique_ptr<ExperimentRuntime> exp) {
  int64_t id = exp->id;
  ExperimentRuntime& ref = *exp;
  experiments_[id] = std::move(exp);
  PublishJob(ref);
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

void ExperimentService::ActivateExperiment(int64_t id, Done<Status> done) {
  Run(
      [this, id]() ON_RUNTIME -> Status {
        ExperimentRuntime* exp = FindExperiment(id);
        if (exp == nullptr) {
          DET_RETURN_IF_ERROR(deps_.store->GetExperiment(id).status());
          return FailedPrecondition("experiment " + std::to_string(id) + " is in a terminal state");
        }
        return Decide(*exp, core::Activate{});
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
        return Decide(*exp, core::Pause{});
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
  ExperimentRuntime* exp = FindExperiment(id);
  if (exp == nullptr) {
    DET_RETURN_IF_ERROR(deps_.store->GetExperiment(id).status());
    return Status::Ok();  // already terminal
  }
  return Decide(*exp, core::Stop{stopping});
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
