#pragma once
// Master: the composition root of the master's state. It owns the runtime view of experiments,
// trials, allocations and agents, persists every decision through the Store before acting on it,
// and drives the pure pieces (config parsing, searcher, exit policy, fitting). Thread-safe: one
// mutex guards the runtime state. Long polls hold no thread: they register a callback in a
// Waiters registry under the key of what they wait for (agent, trial, allocation) and answer
// through it when that key is notified or their deadline passes.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/archive.h"
#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "master/config/experiment_config.h"
#include "master/core/exit_policy.h"
#include "master/core/states.h"
#include "master/scheduler/types.h"
#include "master/searcher/searcher.h"
#include "master/server/agent_service.h"
#include "master/server/auth_service.h"
#include "master/server/checkpoint_service.h"
#include "master/server/searcher_journal_service.h"
#include "master/server/log_buffer.h"
#include "master/server/master_config.h"
#include "master/server/metrics_service.h"
#include "master/server/model_service.h"
#include "master/server/ownership_service.h"
#include "master/server/profiler_service.h"
#include "master/server/scheduling_loop.h"
#include "master/server/series_service.h"
#include "master/server/unmanaged_service.h"
#include "master/server/waiters.h"
#include "master/store/decision_writes.h"
#include "master/store/store.h"

namespace det::master::server {

struct ExperimentView {
  store::ExperimentRow row;
  std::string presented_state;  // STATE_QUEUED / STATE_RUNNING for ACTIVE, else STATE_<db>
  int64_t num_trials = 0;
  std::string username;
  bool unmanaged = false;  // run by a core_v2 script (UnmanagedService)
  std::optional<std::string> external_experiment_id;
};

struct TrialView {
  store::TrialRow row;
  std::string presented_state;
  std::vector<std::string> task_ids;
  std::optional<store::MetricRow> latest_validation;
  std::optional<store::MetricRow> best_validation;
  std::optional<store::CheckpointRow> best_checkpoint;
  nlohmann::json summary_metrics = nlohmann::json::object();  // Store::GetTrialSummaryMetrics
  int64_t checkpoint_count = 0;       // COMPLETED checkpoints
  int64_t total_checkpoint_size = 0;  // bytes of those
};

struct SearcherOpView {
  std::optional<std::string> request_id;
  std::optional<uint64_t> length;  // nullopt: no op now
  bool completed = false;
};

struct AgentView {
  std::string id;
  std::string resource_pool;
  std::string hostname;
  nlohmann::json slots;                         // [{id, type, brand, uuid}]
  std::map<int, std::string> slot_allocations;  // slot id -> allocation id
  std::map<int, std::string> slot_resources;    // slot id -> resources (container) id
  int64_t registered_time = 0;
  int64_t last_seen = 0;
  bool connected = false;
};

// One live allocation (`det task list`): a trial's run, pending or holding slots.
struct AllocationSummaryView {
  struct Resources {
    std::string resources_id;  // also the container id shown on the agent's slots
    std::string agent_id;
    std::vector<int> slot_ids;
    bool started = false;
  };
  std::string allocation_id;
  std::string task_id;
  std::string name;  // "Trial 5 (Experiment 3)"
  int64_t trial_id = 0;
  int64_t experiment_id = 0;
  std::string resource_pool;
  int64_t slots_needed = 0;
  int64_t registered_time = 0;  // micros, when it was queued
  std::optional<int64_t> priority;
  std::string state;  // STATE_PENDING | STATE_ASSIGNED | STATE_RUNNING
  std::vector<Resources> resources;
};

// One job of the queue (`det job list`): an active experiment.
struct JobView {
  std::string job_id;
  int64_t experiment_id = 0;
  std::string name;
  std::string username;
  int64_t submission_time = 0;
  int64_t priority = 42;
  double weight = 1;
  std::string resource_pool = "default";
  int64_t requested_slots = 0;
  int64_t allocated_slots = 0;
  bool scheduled = false;
  std::string state = "STATE_QUEUED";  // STATE_QUEUED | STATE_SCHEDULED | ..._BACKFILLED
  int64_t jobs_ahead = 0;              // -1 under fair share (Determined: unsupported)
  std::string position;                // the exact queue position, as stored
  // Slurm pools: the jobs' ids, states and pending reasons as Slurm reports them.
  std::string rm_detail;
  std::string type = "TYPE_EXPERIMENT";  // TYPE_COMMAND, TYPE_NOTEBOOK, ... for tasks
  std::string entity_id;                 // a task's id ("" for an experiment: its id)
  bool preemptible = true;
};

struct CreateExperimentRequest {
  std::string config_yaml;
  std::vector<ArchiveEntry> files;
  int64_t content_bytes = 0;
  bool activate = true;
  bool validate_only = false;
  std::optional<int64_t> parent_id;
};

struct CreateExperimentResult {
  std::optional<store::ExperimentRow> experiment;  // absent for validate_only
  nlohmann::json config;
  std::vector<std::string> warnings;
};

// Long-poll answers: called exactly once, possibly on another thread and with the Master's lock
// held, so they must only hand the result on (e.g. post an HTTP response), never call back in.
template <typename T>
using Reply = std::function<void(Result<T>)>;

// The largest context accepted: (128 MiB / 8 * 6) - 1 MiB, as Determined.
constexpr int64_t kMaxContextBytes = 95ll * 1024 * 1024;

class Master {
 public:
  Master(MasterConfig config, std::unique_ptr<store::Store> store, const Clock* clock);
  ~Master();

  // Creates built-in users and the cluster id on a fresh store, refuses unsafe setups, restores
  // every non-terminal experiment, and starts the background ticker.
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
  // The model registry.
  ModelService* models() { return models_.get(); }
  // System metrics of trials' profilers.
  ProfilerService* profiler() { return profiler_.get(); }
  // Downsampled metric series and pages of large trial lists.
  SeriesService* series() { return series_.get(); }
  // Config templates; workspaces, projects and experiment placement; user administration.
  class TemplateService* templates() { return templates_.get(); }
  class WorkspaceService* workspaces() { return workspaces_.get(); }
  class UserAdminService* user_admin() { return user_admin_.get(); }
  // The experiment list's checkpoint and best-validation columns (web UI).
  class ExperimentSummaryService* summaries() { return summaries_.get(); }
  // Commands, notebooks, shells and TensorBoards (task_service.h).
  class TaskService* tasks() { return tasks_.get(); }
  // Agents and slots disabled by an operator (the scheduler skips them).
  class AgentAdminService* agent_admin() { return agent_admin_.get(); }
  // Which credential may speak for an agent id on the agent routes.
  class AgentCredentialService* agent_credentials() { return agent_credentials_.get(); }
  // Pools that grow: agents started and stopped by a provider; null without such a pool.
  class ProvisionerService* provisioner() { return provisioner_.get(); }

  // Users, sessions and allocation tokens.
  AuthService* auth() { return auth_.get(); }
  // Who owns an experiment, trial, checkpoint or allocation (for permission checks).
  OwnershipService* ownership() { return ownership_.get(); }
  // The checkpoint registry, metadata, deletion and GC.
  CheckpointService* checkpoints() { return checkpoints_.get(); }
  // Searcher snapshots and their journal.
  SearcherJournalService* searcher_journal() { return searcher_journal_.get(); }

  // Experiments.
  Result<CreateExperimentResult> CreateExperiment(const CreateExperimentRequest& req,
                                                  const Principal& who);
  Result<ExperimentView> GetExperiment(int64_t id);
  // One page of the experiments matching `filter`, in its order; `total` counts every match.
  Result<std::vector<ExperimentView>> ListExperiments(const store::ExperimentFilter& filter,
                                                      const store::Page& page, int64_t* total);
  Status ActivateExperiment(int64_t id);
  Status PauseExperiment(int64_t id);
  Status CancelExperiment(int64_t id);
  Status KillExperiment(int64_t id);
  Status SetArchived(int64_t id, bool archived);
  Result<std::vector<TrialView>> ListTrials(int64_t experiment_id);
  Result<TrialView> GetTrial(int64_t trial_id);
  // The views of several trials (a page of a list), read together (Store::GetTrialViewRows), in
  // the order of `trial_ids`; NotFound when one does not exist.
  Result<std::vector<TrialView>> GetTrials(const std::vector<int64_t>& trial_ids);
  Result<std::string> GetContextForTask(const std::string& task_id);
  // The experiment's context directory as submitted, a tar.gz.
  Result<std::string> GetModelDefinition(int64_t experiment_id);
  Result<std::optional<double>> BestValidationMetric(int64_t experiment_id);
  // The rungs of an adaptive_asha / async_halving search per bracket, with the trials each
  // promoted or stopped, from its searcher (master_rungs.cc; searcher/rung_view.h).
  Result<nlohmann::json> SearcherRungs(int64_t experiment_id);
  Result<std::vector<store::MetricRow>> ListMetrics(int64_t trial_id, const std::string& group);

  // Called by trial processes (principal is their allocation) or users. Checks the report in
  // memory and queues it on metrics(); `done` runs once it is committed (and a 0.38 searcher has
  // seen a validation report) or refused, possibly on another thread.
  void ReportMetrics(const Principal& who, int64_t trial_id, int64_t run_id, int64_t steps,
                     const std::string& group, nlohmann::json metrics,
                     std::function<void(Status)> done);
  // Trials' metric reports: queued and group-committed by one writer.
  MetricsService* metrics() { return metrics_.get(); }
  Status ReportCheckpoint(const Principal& who, store::CheckpointRow row);
  // Answers at once when the trial has an operation or is done, else when one arrives or after
  // `wait_ms` (no operation, not completed).
  void GetSearcherOperation(int64_t trial_id, int64_t wait_ms, Reply<SearcherOpView> reply);
  Status CompleteSearcherOperation(int64_t trial_id, uint64_t length, double metric);
  Status ReportProgress(int64_t trial_id, double fraction);
  Status ReportEarlyExit(int64_t trial_id, const std::string& reason);
  Status SetRunnerState(int64_t trial_id, const std::string& state);
  Result<nlohmann::json> SetTrialMetadata(int64_t trial_id, const nlohmann::json& metadata);
  Result<nlohmann::json> GetTrialMetadata(int64_t trial_id);
  // True once the allocation should stop; false when `timeout_ms` passes first.
  void WaitPreemption(const std::string& allocation_id, int64_t timeout_ms, Reply<bool> reply);
  Status AckPreemption(const std::string& allocation_id);
  Status AddTaskLogs(const Principal& who, std::vector<store::TaskLogRow> rows);
  Result<std::vector<store::TaskLogRow>> TrialLogs(int64_t trial_id, int64_t after_id,
                                                   int64_t limit, bool descending);
  // True once the trial is terminal and has no live allocation.
  bool TrialFinished(int64_t trial_id);
  // Blocks the calling thread (a log stream) until the trial logs something or changes state,
  // or `timeout_ms` passes.
  void WaitForTrialLogs(int64_t trial_id, int64_t timeout_ms);

  // Experiment edits and checkpoint management.
  // `patch` holds Determined's PatchExperiment fields: name, description, labels, notes,
  // resources {maxSlots, weight, priority}, checkpointStorage {saveExperimentBest, ...}.
  Status PatchExperiment(int64_t id, const nlohmann::json& patch);
  Status ContinueExperiment(int64_t id, const std::string& override_yaml);
  Status KillTrial(int64_t trial_id);
  // Deletes a terminal experiment: DELETING, every checkpoint's files, then its rows.
  Status DeleteExperiment(int64_t id);

  // The queue of each resource pool (or one), in queue order.
  std::vector<JobView> ListJobs(const std::string& pool = "");
  // One `det job update`: {priority} | {weight} | {resourcePool} | {aheadOf} | {behindOf}.
  Status UpdateJob(const std::string& job_id, const nlohmann::json& update);
  // Once every process of the allocation runs (or at the timeout: Unavailable), tells this one
  // its rank and every node's address and slot count.
  void Rendezvous(const Principal& who, const std::string& allocation_id,
                  const std::string& resources_id, int64_t timeout_ms, Reply<nlohmann::json> reply);
  // Error naming the pools when `pool` is set and not configured.
  Status CheckPoolExists(const std::string& pool) const;

  // Unmanaged (core_v2) experiments and trials.
  UnmanagedService* unmanaged() { return unmanaged_.get(); }

  // Agents: the registry and command channels are the agent service's; the Master reconciles
  // its allocations with what agents report.
  AgentService* agents() { return agents_.get(); }
  Result<nlohmann::json> RegisterAgent(const std::string& agent_id, const nlohmann::json& body);
  // The agent's commands after `after`, at once when there are any, else when one is pushed,
  // the agent must re-register, or `timeout_ms` passes (empty list).
  void PollCommands(const std::string& agent_id, int64_t after, int64_t timeout_ms,
                    Reply<nlohmann::json> reply);
  Status HandleAgentEvents(const std::string& agent_id, const nlohmann::json& body);
  std::vector<AgentView> ListAgents();
  // Every allocation that is not terminated, by allocation id.
  std::vector<AllocationSummaryView> ListAllocations();

 private:
  struct TrialRuntime;
  struct ExperimentRuntime;
  struct AllocationRuntime;
  struct StagedTrials;

  Status StopExperiment(int64_t id, core::RunState stopping);
  // Everything below REQUIRES mu_ held.
  // Runs `step(final)` now and again each time `key` is notified, until it answers (returns
  // true). With final = true (deadline passed, or shutting down) it must answer.
  using PollStep = std::shared_ptr<std::function<bool(bool final)>>;
  void LongPollLocked(const std::string& key, Waiters::TimePoint deadline, PollStep step,
                      bool final = false) REQUIRES(mu_);
  // Wake the long polls on one trial (searcher operation, log follow) or allocation
  // (preemption, rendezvous).
  void NotifyTrialLocked(int64_t trial_id) REQUIRES(mu_);
  void NotifyAllocationLocked(const std::string& allocation_id) REQUIRES(mu_);
  Status RestoreLocked() REQUIRES(mu_);
  Status RestoreExperimentLocked(const store::ExperimentRow& row,
                                 const std::map<int64_t, store::AllocationRow>& open_by_trial)
      REQUIRES(mu_);
  Status ProcessActionsLocked(ExperimentRuntime& exp, std::vector<searcher::Action> actions)
      REQUIRES(mu_);
  // Trial creation in batches (master_trial_creation.cc). StageCreations takes the creations
  // at the front of `queue` (and the operations of the trials they create) and tells the
  // searcher; it stops at the first other action. It and ApplyStaged touch only `exp`, the
  // store and the checkpoint service, so a new experiment's first trials are prepared and
  // stored before it is published, without mu_.
  Status StageCreations(ExperimentRuntime& exp, std::deque<searcher::Action>& queue,
                        StagedTrials* staged);
  // Stores the staged trials in one transaction with `extra` (and, with `first_allocations`,
  // the allocation that queues each active one); fills in their ids.
  Status ApplyStaged(const ExperimentRuntime& exp, StagedTrials* staged, bool first_allocations,
                     store::DecisionWrites extra);
  void PublishStagedLocked(ExperimentRuntime& exp, StagedTrials* staged, std::set<int64_t>* created)
      REQUIRES(mu_);
  // Activates a new, unpublished experiment with its first trials stored in one transaction,
  // then publishes it; what the searcher asked beyond creations runs under mu_.
  Status ActivateNewExperiment(std::unique_ptr<ExperimentRuntime> exp) EXCLUDES(mu_);
  Status PersistSnapshotLocked(ExperimentRuntime& exp) REQUIRES(mu_);
  // Queues the new experiment's searcher state with these trials (all of them) for the
  // journal's writer, not awaited by the request (its trial rows imply it).
  Status PersistSearcherState(ExperimentRuntime& exp, SearcherJournalService::Trials trials);
  // The checkpoint a new trial starts from: its PBT parent's latest, or the config's
  // source_checkpoint_uuid / source_trial_id's latest; "" when none.
  Result<std::string> WarmStartCheckpoint(const ExperimentRuntime& exp,
                                          const searcher::CreateAction& create);
  // Allocations (master_scheduling.cc). A new run of the trial and its pending allocation,
  // not yet stored or published.
  std::unique_ptr<AllocationRuntime> NewAllocation(const ExperimentRuntime& exp,
                                                   TrialRuntime& trial) const;
  static store::AllocationRow AllocationRowOf(const AllocationRuntime& alloc);
  store::TaskLogRow MasterLogRow(int64_t trial_id, const std::string& task_id,
                                 const std::string& message) const;
  static std::string SchedulingMessage(const TrialRuntime& trial, const AllocationRuntime& alloc);
  // Queues the allocation for slots (the store already holds it). Wakes no waiter: a trial
  // that is new has none.
  void PublishAllocationLocked(TrialRuntime& trial, std::unique_ptr<AllocationRuntime> alloc)
      REQUIRES(mu_);
  Status RequestAllocationLocked(TrialRuntime& trial) REQUIRES(mu_);
  // One transaction for every trial's new run and allocation.
  Status RequestAllocationsLocked(const std::vector<TrialRuntime*>& trials) REQUIRES(mu_);
  // Asks for a scheduling pass: the scheduling loop (scheduling_loop.h) runs one for every
  // batch of changes, never one per queued task.
  void ScheduleLocked() REQUIRES(mu_);
  // One pass of the pure schedulers over the cluster; starts and releases allocations.
  void SchedulePassLocked() REQUIRES(mu_);
  // Runs the pass now, under the caller's lock (an agent's request answers with what it placed),
  // and tells the loop that the requests made so far are served.
  void SchedulePassNowLocked() REQUIRES(mu_);
  scheduler::ClusterSnapshot SnapshotLocked() const REQUIRES(mu_);
  std::string PoolOfLocked(const ExperimentRuntime& exp) const REQUIRES(mu_);
  static std::string ResourcesId(const AllocationRuntime& alloc, size_t rank);
  Status StartAllocationLocked(AllocationRuntime& alloc,
                               const std::vector<scheduler::AgentSlots>& parts) REQUIRES(mu_);
  void KillResourcesLocked(AllocationRuntime& alloc) REQUIRES(mu_);
  // Live allocations with a process group on the agent that has not exited.
  std::vector<AllocationRuntime*> AllocationsOnAgentLocked(const std::string& agent_id) const
      REQUIRES(mu_);
  // One process group of the allocation ended; the allocation ends with the last of them.
  Status HandleResourceExitLocked(AllocationRuntime& alloc, const std::string& agent_id,
                                  int exit_code, const std::string& error,
                                  bool infrastructure = false) REQUIRES(mu_);
  // The Slurm resource manager (master_slurm.cc; slurm_service.h).
  bool IsSlurmPoolLocked(const std::string& pool) const REQUIRES(mu_);
  void SlurmPassLocked() REQUIRES(mu_);
  void SlurmAgentRegisteredLocked(const std::string& agent_id) REQUIRES(mu_);
  bool DeferSlurmExitLocked(AllocationRuntime& alloc, const std::string& agent_id, int exit_code,
                            const std::string& error) REQUIRES(mu_);
  void OverlaySlurmJobLocked(const ExperimentRuntime& exp, JobView* job) REQUIRES(mu_);
  void SlurmPriorityChangedLocked(const ExperimentRuntime& exp) REQUIRES(mu_);
  Status StartSlurm();
  Status HandleAllocationExitLocked(AllocationRuntime& alloc, int exit_code,
                                    const std::string& error, bool infrastructure) REQUIRES(mu_);
  Status SetExperimentStateLocked(ExperimentRuntime& exp, core::RunState state) REQUIRES(mu_);
  Status SetTrialStateLocked(TrialRuntime& trial, core::RunState state) REQUIRES(mu_);
  // The same for many trials, in one transaction.
  Status SetTrialStatesLocked(const std::vector<TrialRuntime*>& trials, core::RunState state)
      REQUIRES(mu_);
  Status MaybeFinishExperimentLocked(ExperimentRuntime& exp) REQUIRES(mu_);
  void TerminateAllocationLocked(AllocationRuntime& alloc, bool graceful) REQUIRES(mu_);
  void TickLocked() REQUIRES(mu_);
  // Hands the provisioner what waits and what each agent does (master_provisioning.cc).
  void ProvisionerTickLocked() REQUIRES(mu_);
  void AppendMasterLogLocked(int64_t trial_id, const std::string& task_id,
                             const std::string& message) REQUIRES(mu_);
  std::string PresentedExperimentStateLocked(const ExperimentRuntime& exp) const REQUIRES(mu_);
  std::string PresentedTrialStateLocked(int64_t trial_id, const std::string& db_state) const
      REQUIRES(mu_);
  int64_t Now() const { return clock_->NowMicros(); }

  MasterConfig config_;
  std::unique_ptr<store::Store> store_;
  const Clock* clock_;
  std::string cluster_id_;
  std::string master_id_;
  std::shared_ptr<LogBuffer> log_buffer_ = std::make_shared<LogBuffer>();

  std::unique_ptr<AuthService> auth_;
  std::unique_ptr<OwnershipService> ownership_;
  std::unique_ptr<CheckpointService> checkpoints_;
  std::unique_ptr<SearcherJournalService> searcher_journal_;
  std::unique_ptr<class AgentCredentialService> agent_credentials_;

  Mutex mu_;
  std::unique_ptr<Waiters> waiters_;
  // Lock order: mu_, then the agent service's mutex (it never calls back).
  std::unique_ptr<AgentService> agents_;
  std::unique_ptr<class SlurmService> slurm_;  // set when resource_manager.type is slurm
  bool draining_ GUARDED_BY(mu_) = false;  // BeginShutdown: long polls answer at once
  std::map<int64_t, std::unique_ptr<ExperimentRuntime>> experiments_ GUARDED_BY(mu_);
  std::map<int64_t, std::unique_ptr<TrialRuntime>> trials_ GUARDED_BY(mu_);
  std::map<std::string, std::unique_ptr<AllocationRuntime>> allocations_ GUARDED_BY(mu_);
  std::deque<std::string> pending_ GUARDED_BY(mu_);  // allocation ids waiting for slots, FIFO
  bool stopping_ GUARDED_BY(mu_) = false;
  // Runs SchedulePassLocked and TickLocked (each under mu_) on its own thread.
  std::unique_ptr<SchedulingLoop> scheduling_;
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
};

}  // namespace det::master::server
