#include "master/server/master.h"

#include <spdlog/spdlog.h>

#include "master/server/agent_admin_service.h"
#include "master/server/agent_credential_service.h"
#include "master/server/cluster_message_service.h"
#include "master/server/experiment_summary_service.h"
#include "master/server/passwords.h"
#include "master/server/provisioner_service.h"
#include "master/server/task_service.h"
#include "master/server/template_service.h"
#include "master/server/user_admin_service.h"
#include "master/server/webhook_service.h"
#include "master/server/workspace_service.h"

namespace det::master::server {

namespace {

// Agent timeouts, preemption deadlines and re-adoption deadlines are checked this often.
constexpr auto kSchedulingTickInterval = std::chrono::milliseconds(500);

}  // namespace

Master::Master(MasterConfig config, std::unique_ptr<store::Store> store, const Clock* clock)
    : config_(std::move(config)),
      store_(std::move(store)),
      clock_(clock),
      auth_(std::make_unique<AuthService>(
          store_.get(), clock,
          AuthOptions{.session_lifetime_micros = config_.token_lifetime_seconds * 1000000,
                      .throttle = {}})),
      checkpoints_(std::make_unique<CheckpointService>(store_.get(), clock, config_.python,
                                                       config_.harness_dir,
                                                       config_.checkpoint_storage_allowed_roots)),
      searcher_journal_(std::make_unique<SearcherJournalService>(store_.get())),
      waiters_(std::make_unique<Waiters>()),
      agents_(std::make_unique<AgentService>(clock, waiters_.get(), config_.agent_timeout_seconds)),
      loop_(std::make_unique<RuntimeLoop>(kSchedulingTickInterval, searcher_journal_.get())),
      view_(std::make_unique<RuntimeView>()),
      trial_logs_(std::make_unique<TrialLogSink>(store_.get(), waiters_.get(), clock)),
      profiler_(std::make_unique<ProfilerService>(store_.get(), clock_)),
      unmanaged_(std::make_unique<UnmanagedService>(store_.get(), clock_, &config_)),
      metrics_(std::make_unique<MetricsService>(store_.get())),
      series_(std::make_unique<SeriesService>(store_.get())) {
  workspaces_ = std::make_unique<WorkspaceService>(store_.get(), &config_.pools,
                                                   config_.checkpoint_storage_allowed_roots);
  cluster_message_ = std::make_unique<ClusterMessageService>(store_.get(), clock_);
  webhooks_ = std::make_unique<WebhookService>(
      WebhookService::Deps{.store = store_.get(),
                           .clock = clock_,
                           .workspaces = workspaces_.get(),
                           .signing_key = config_.webhooks_signing_key,
                           .base_url = config_.webhooks_base_url});
  ownership_ = std::make_unique<OwnershipService>(store_.get());
  summaries_ = std::make_unique<ExperimentSummaryService>(store_.get(), clock_);
  agent_admin_ = std::make_unique<AgentAdminService>(store_.get());
  tasks_ = std::make_unique<TaskService>(
      store_.get(), clock_, auth_.get(), agents_.get(),
      TaskService::Options{&config_.pools, "", "", TaskSecretsKeyPath(config_),
                           &config_.task_container_defaults,
                           [this](int64_t workspace_id, const std::string& pool, int64_t slots) {
                             return workspaces_->ResolvePool(workspace_id, pool, slots);
                           }});
  tasks_->SetOnChange([this] { loop_->RequestPass(); });
  agent_credentials_ =
      std::make_unique<AgentCredentialService>(store_.get(), clock_, config_.agent_token);
  provisioner_ = MakeProvisioner(config_, clock_);
  templates_ = std::make_unique<TemplateService>(
      store_.get(), [this](int64_t id) { return workspaces_->WorkspaceExists(id); });
  // A changed user (deactivated, renamed, ...) is looked up again on its next request.
  user_admin_ = std::make_unique<UserAdminService>(
      store_.get(), [this](int64_t user_id) { auth_->ForgetUserSessions(user_id); });
  WorkspaceLookup lookup;
  lookup.by_id = [this](int64_t id) -> Result<WorkspaceRef> {
    DET_ASSIGN_OR_RETURN(store::WorkspaceRow row, workspaces_->GetWorkspace(id));
    return WorkspaceRef{row.id, row.name};
  };
  lookup.by_name = [this](const std::string& name) -> Result<WorkspaceRef> {
    DET_ASSIGN_OR_RETURN(std::vector<store::WorkspaceRow> rows, workspaces_->ListWorkspaces());
    for (const store::WorkspaceRow& row : rows) {
      if (row.name == name) return WorkspaceRef{row.id, row.name};
    }
    return NotFound("workspace \"" + name + "\" not found");
  };
  models_ = std::make_unique<ModelService>(store_.get(), clock, std::move(lookup));

  RuntimeContext runtime;
  runtime.config = &config_;
  runtime.store = store_.get();
  runtime.clock = clock_;
  runtime.loop = loop_.get();
  runtime.waiters = waiters_.get();
  runtime.view = view_.get();
  runtime.logs = trial_logs_.get();
  runtime.auth = auth_.get();
  AllocationService::Deps alloc_deps{runtime};
  alloc_deps.agents = agents_.get();
  alloc_deps.tasks = tasks_.get();
  alloc_deps.agent_admin = agent_admin_.get();
  alloc_deps.provisioner = provisioner_.get();
  alloc_deps.workspaces = workspaces_.get();
  allocations_ = std::make_unique<AllocationService>(alloc_deps);
  ExperimentService::Deps exp_deps{runtime};
  exp_deps.allocations = allocations_.get();
  exp_deps.checkpoints = checkpoints_.get();
  exp_deps.searcher_journal = searcher_journal_.get();
  exp_deps.metrics = metrics_.get();
  exp_deps.unmanaged = unmanaged_.get();
  exp_deps.tasks = tasks_.get();
  exp_deps.webhooks = webhooks_.get();
  exp_deps.workspaces = workspaces_.get();
  experiments_ = std::make_unique<ExperimentService>(exp_deps);
  allocations_->SetOwner(experiments_.get());
  loop_->SetHooks({[this] {
                     runtime_role.Assume();
                     allocations_->SchedulePass();
                   },
                   [this] {
                     runtime_role.Assume();
                     allocations_->Tick();
                   }});
}

Master::~Master() { Stop(); }

Status Master::Start() {
  DET_ASSIGN_OR_RETURN(cluster_id_, store_->GetOrCreateClusterId(NewToken().substr(0, 32)));
  master_id_ = NewToken().substr(0, 16);
  DET_RETURN_IF_ERROR(
      auth_->EnsureBuiltinUsers(config_.initial_user_password, config_.bind_address));
  DET_RETURN_IF_ERROR(agent_admin_->Load());
  checkpoints_->Start();
  tasks_->SetClusterIds(cluster_id_, master_id_);
  allocations_->SetClusterIds(cluster_id_, master_id_);
  DET_RETURN_IF_ERROR(tasks_->Restore(Now() + config_.agent_timeout_seconds * 1000000));
  allocations_->CreateSlurm();
  DET_RETURN_IF_ERROR(webhooks_->Start());
  DET_RETURN_IF_ERROR(cluster_message_->Load());
  // Before the loop runs: the restore decides inline, on this thread.
  DET_RETURN_IF_ERROR(loop_->DecideAndWait([this]() -> Status {
    runtime_role.Assume();
    return experiments_->Restore();
  }));
  // Slurm's reports name the restored allocations; they are decided on the loop.
  DET_RETURN_IF_ERROR(allocations_->StartSlurm());
  if (provisioner_) DET_RETURN_IF_ERROR(provisioner_->Start());
  loop_->Start();
  return Status::Ok();
}

void Master::BeginShutdown() {
  loop_->BeginShutdown();
  agents_->BeginShutdown();
  waiters_->ExpireAll();
}

void Master::Stop() {
  if (stopped_) return;
  stopped_ = true;
  loop_->BeginShutdown();
  agents_->BeginShutdown();
  // Commits and answers the reports still queued (the HTTP server has drained by now).
  metrics_->Stop();
  // Answers the long polls still open (each on the loop, at once while it drains).
  waiters_->Stop();
  // Decides what is queued; later tasks run on the caller's thread.
  loop_->Stop();
  // Stores the searcher snapshots and journal records still queued.
  searcher_journal_->Stop();
  allocations_->Stop();
  // Provisioned agents keep running: the next master re-finds them.
  if (provisioner_) provisioner_->Stop();
  checkpoints_->Stop();
  // Deliveries still queued are made by the next master.
  webhooks_->Stop();
}

}  // namespace det::master::server
