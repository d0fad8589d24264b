#pragma once
// Master: the composition root of the master. It builds the services, each owning its state,
// wires them together, starts them in order and stops them in reverse:
//  - auth(): users, sessions and allocation tokens; ownership() for permission checks;
//  - experiments(): experiments and trials (experiment_service.h);
//  - allocations(): allocations, the scheduling pass and the job queue (allocation_service.h);
//  - agents(): agents and their command channels (agent_service.h);
//  - checkpoints(): the checkpoint registry and GC; metrics(): group-committed metric reports;
//  - tasks(), models(), templates(), workspaces(), ... (one service each).
// The experiments and allocations services decide on one runtime loop (runtime_loop.h): request
// threads hand it their changes and are answered from it, and reads never wait for it.

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "master/server/agent_service.h"
#include "master/server/allocation_service.h"
#include "master/server/auth_service.h"
#include "master/server/checkpoint_service.h"
#include "master/server/experiment_service.h"
#include "master/server/log_buffer.h"
#include "master/server/master_config.h"
#include "master/server/metrics_service.h"
#include "master/server/model_service.h"
#include "master/server/ownership_service.h"
#include "master/server/profiler_service.h"
#include "master/server/runtime_loop.h"
#include "master/server/runtime_view.h"
#include "master/server/searcher_journal_service.h"
#include "master/server/series_service.h"
#include "master/server/trial_log_sink.h"
#include "master/server/unmanaged_service.h"
#include "master/server/waiters.h"
#include "master/store/store.h"

namespace det::master::server {

class Master {
 public:
  Master(MasterConfig config, std::unique_ptr<store::Store> store, const Clock* clock);
  ~Master();

  // Creates built-in users and the cluster id on a fresh store, refuses unsafe setups, restores
  // every non-terminal experiment, and starts the runtime loop.
  Status Start();
  // Answers every open long poll now (as at its deadline) and makes new ones answer at once, so
  // an HTTP server can drain; the Master keeps working otherwise.
  void BeginShutdown();
  void Stop();

  const MasterConfig& config() const { return config_; }
  const std::string& cluster_id() const { return cluster_id_; }
  const std::string& master_id() const { return master_id_; }
  // The master's recent log lines; main() feeds it from spdlog.
  const std::shared_ptr<LogBuffer>& log_buffer() const { return log_buffer_; }

  ExperimentService* experiments() { return experiments_.get(); }
  AllocationService* allocations() { return allocations_.get(); }
  AgentService* agents() { return agents_.get(); }
  AuthService* auth() { return auth_.get(); }
  // Who owns an experiment, trial, checkpoint or allocation (for permission checks).
  OwnershipService* ownership() { return ownership_.get(); }
  // The checkpoint registry, metadata, deletion and GC.
  CheckpointService* checkpoints() { return checkpoints_.get(); }
  // Searcher snapshots and their journal.
  SearcherJournalService* searcher_journal() { return searcher_journal_.get(); }
  // Trials' metric reports: queued and group-committed by one writer.
  MetricsService* metrics() { return metrics_.get(); }
  // The model registry.
  ModelService* models() { return models_.get(); }
  // System metrics of trials' profilers.
  ProfilerService* profiler() { return profiler_.get(); }
  // Downsampled metric series and pages of large trial lists.
  SeriesService* series() { return series_.get(); }
  // Unmanaged (core_v2) experiments and trials.
  UnmanagedService* unmanaged() { return unmanaged_.get(); }
  // Config templates; workspaces, projects and experiment placement; user administration.
  class TemplateService* templates() {
    return templates_.get();
  }
  class WorkspaceService* workspaces() {
    return workspaces_.get();
  }
  // Webhooks and their deliveries.
  class WebhookService* webhooks() {
    return webhooks_.get();
  }
  // The cluster-wide message.
  class ClusterMessageService* cluster_message() {
    return cluster_message_.get();
  }
  class UserAdminService* user_admin() {
    return user_admin_.get();
  }
  // The experiment list's checkpoint and best-validation columns (web UI).
  class ExperimentSummaryService* summaries() {
    return summaries_.get();
  }
  // Commands, notebooks, shells and TensorBoards (task_service.h).
  class TaskService* tasks() {
    return tasks_.get();
  }
  // Agents and slots disabled by an operator (the scheduler skips them).
  class AgentAdminService* agent_admin() {
    return agent_admin_.get();
  }
  // Which credential may speak for an agent id on the agent routes.
  class AgentCredentialService* agent_credentials() {
    return agent_credentials_.get();
  }
  // Pools that grow: agents started and stopped by a provider; null without such a pool.
  class ProvisionerService* provisioner() {
    return provisioner_.get();
  }
  // The runtime loop both deciding services run on.
  RuntimeLoop* runtime() { return loop_.get(); }

 private:
  int64_t Now() const { return clock_->NowMicros(); }

  MasterConfig config_;
  std::unique_ptr<store::Store> store_;
  const Clock* clock_;
  std::string cluster_id_;
  std::string master_id_;
  std::shared_ptr<LogBuffer> log_buffer_ = std::make_shared<LogBuffer>();
  bool stopped_ = false;

  std::unique_ptr<AuthService> auth_;
  std::unique_ptr<OwnershipService> ownership_;
  std::unique_ptr<CheckpointService> checkpoints_;
  std::unique_ptr<SearcherJournalService> searcher_journal_;
  std::unique_ptr<class AgentCredentialService> agent_credentials_;
  std::unique_ptr<Waiters> waiters_;
  std::unique_ptr<AgentService> agents_;
  std::unique_ptr<RuntimeLoop> loop_;
  std::unique_ptr<RuntimeView> view_;
  std::unique_ptr<TrialLogSink> trial_logs_;
  std::unique_ptr<ModelService> models_;
  std::unique_ptr<ProfilerService> profiler_;
  std::unique_ptr<class TemplateService> templates_;
  std::unique_ptr<class WorkspaceService> workspaces_;
  std::unique_ptr<class UserAdminService> user_admin_;
  std::unique_ptr<UnmanagedService> unmanaged_;
  std::unique_ptr<class ExperimentSummaryService> summaries_;
  std::unique_ptr<class AgentAdminService> agent_admin_;
  std::unique_ptr<class TaskService> tasks_;
  std::unique_ptr<class ProvisionerService> provisioner_;
  std::unique_ptr<MetricsService> metrics_;
  std::unique_ptr<SeriesService> series_;
  std::unique_ptr<AllocationService> allocations_;
  std::unique_ptr<ExperimentService> experiments_;
  std::unique_ptr<class ClusterMessageService> cluster_message_;
  // Last: its sender thread stops first.
  std::unique_ptr<class WebhookService> webhooks_;
};

}  // namespace det::master::server
