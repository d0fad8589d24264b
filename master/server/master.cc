#include "master/server/master.h"
#include "master/server/task_service.h"

#include <spdlog/spdlog.h>

#include "master/server/agent_admin_service.h"
#include "master/server/agent_credential_service.h"
#include "master/server/experiment_summary_service.h"
#include "master/server/master_runtime.h"
#include "master/server/passwords.h"
#include "master/server/slurm_service.h"
#include "master/server/provisioner_service.h"
#include "master/server/template_service.h"
#include "master/server/user_admin_service.h"
#include "master/server/workspace_service.h"

namespace det::master::server {

using nlohmann::json;

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
                                                       config_.harness_dir)),
      searcher_journal_(std::make_unique<SearcherJournalService>(store_.get())),
      waiters_(std::make_unique<Waiters>()),
      agents_(std::make_unique<AgentService>(clock, waiters_.get(), config_.agent_timeout_seconds)),
      profiler_(std::make_unique<ProfilerService>(store_.get(), clock_)),
      unmanaged_(std::make_unique<UnmanagedService>(store_.get(), clock_, &config_)),
      metrics_(std::make_unique<MetricsService>(store_.get())),
      series_(std::make_unique<SeriesService>(store_.get())) {
  // The loop's hooks take mu_ themselves; after Stop they do nothing.
  scheduling_ = std::make_unique<SchedulingLoop>(
      kSchedulingTickInterval, SchedulingLoop::Hooks{[this] {
                                                       MutexLock lock(&mu_);
                                                       if (!stopping_) SchedulePassLocked();
                                                     },
                                                     [this] {
                                                       MutexLock lock(&mu_);
                                                       if (!stopping_) TickLocked();
                                                     }});
  workspaces_ = std::make_unique<WorkspaceService>(store_.get());
  ownership_ = std::make_unique<OwnershipService>(store_.get());
  summaries_ = std::make_unique<ExperimentSummaryService>(store_.get(), clock_);
  agent_admin_ = std::make_unique<AgentAdminService>(store_.get());
  tasks_ = std::make_unique<TaskService>(store_.get(), clock_, auth_.get(), agents_.get(),
                                         TaskService::Options{&config_.pools, "", ""});
  tasks_->SetOnChange([this] { scheduling_->Request(); });
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
  DET_RETURN_IF_ERROR(tasks_->Restore(Now() + config_.agent_timeout_seconds * 1000000));
  {
    MutexLock lock(&mu_);
    // Slurm's reports wait on mu_ until the allocations they name are restored.
    DET_RETURN_IF_ERROR(StartSlurm());
    DET_RETURN_IF_ERROR(RestoreLocked());
  }
  if (provisioner_) DET_RETURN_IF_ERROR(provisioner_->Start());
  scheduling_->Start();
  return Status::Ok();
}

void Master::BeginShutdown() {
  {
    MutexLock lock(&mu_);
    draining_ = true;
  }
  agents_->BeginShutdown();
  waiters_->ExpireAll();
}

void Master::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  agents_->BeginShutdown();
  // Commits and answers the reports still queued (the HTTP server has drained by now).
  metrics_->Stop();
  // Answers the long polls still open; their callbacks take mu_, so it must not be held here.
  waiters_->Stop();
  scheduling_->Stop();
  // Stores the searcher snapshots and journal records still queued.
  searcher_journal_->Stop();
  if (slurm_) slurm_->Stop();
  // Provisioned agents keep running: the next master re-finds them.
  if (provisioner_) provisioner_->Stop();
  checkpoints_->Stop();
}

void Master::LongPollLocked(const std::string& key, Waiters::TimePoint deadline, PollStep step,
                            bool final) {
  final = final || draining_ || stopping_ || std::chrono::steady_clock::now() >= deadline;
  if ((*step)(final)) return;
  waiters_->Add(key, deadline, [this, key, deadline, step](bool timed_out) {
    MutexLock lock(&mu_);
    LongPollLocked(key, deadline, step, timed_out);
  });
}

void Master::NotifyTrialLocked(int64_t trial_id) {
  waiters_->Notify("trial:" + std::to_string(trial_id));
  waiters_->Notify("logs:" + std::to_string(trial_id));
}

void Master::NotifyAllocationLocked(const std::string& allocation_id) {
  waiters_->Notify("alloc:" + allocation_id);
}

void Master::WaitForTrialLogs(int64_t trial_id, int64_t timeout_ms) {
  // A stream already holds its own thread, so it may block; it still wakes only for its trial.
  struct Signal {
    std::mutex mu;
    std::condition_variable cv;
    bool fired = false;
  };
  auto signal = std::make_shared<Signal>();
  {
    MutexLock lock(&mu_);
    if (stopping_) return;  // the registry takes no more waiters
    waiters_->Add("logs:" + std::to_string(trial_id),
                  std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms),
                  [signal](bool) {
                    std::lock_guard<std::mutex> lock(signal->mu);
                    signal->fired = true;
                    signal->cv.notify_all();
                  });
  }
  std::unique_lock<std::mutex> lock(signal->mu);
  signal->cv.wait(lock, [&] { return signal->fired; });
}

}  // namespace det::master::server
