#pragma once
// ExperimentService: experiments and trials. Each live experiment's runtime (ExperimentRuntime)
// owns a core::Experiment (master/core/experiment.h: its state, trials, searcher and pure
// decision step); every request about it is an event decided on the runtime loop
// (runtime_loop.h), whose writes are stored as one batch (store::DecisionWrites) before its
// effects go out: processes asked of the allocations service (AllocationService), polls woken,
// the searcher journal told. Reads of experiments and trials come from the store and the
// published RuntimeView, never the loop.
//
// Files: experiment_decisions.cc (a decision stored and carried out, a core rebuilt from the
// store), experiment_lifecycle.cc (create, activate, pause, stop), trial_creation.cc (new trials
// staged and stored in batches), experiment_restore.cc (start-up), trial_reports.cc (what trial
// processes report: metrics, checkpoints, searcher operations, progress, logs), trial_launch.cc
// (a trial's process start and end), experiment_edits.cc (patch, continue, kill a trial,
// delete, job updates), experiment_views.cc (reads).

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/archive.h"
#include "common/clock.h"
#include "common/status.h"
#include "master/config/experiment_config.h"
#include "master/core/states.h"
#include "master/searcher/searcher.h"
#include "master/server/allocation_service.h"
#include "master/server/auth_service.h"
#include "master/server/master_config.h"
#include "master/server/runtime_loop.h"
#include "master/server/runtime_records.h"
#include "master/server/runtime_view.h"
#include "master/server/searcher_journal_service.h"
#include "master/server/trial_log_sink.h"
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
  int64_t checkpoint_count = 0;                               // COMPLETED checkpoints
  int64_t total_checkpoint_size = 0;                          // bytes of those
};

struct SearcherOpView {
  std::optional<std::string> request_id;
  std::optional<uint64_t> length;  // nullopt: no op now
  bool completed = false;
};

struct CreateExperimentRequest {
  std::string config_yaml;
  std::vector<ArchiveEntry> files;
  int64_t content_bytes = 0;
  bool activate = true;
  bool validate_only = false;
  std::optional<int64_t> parent_id;
  // The workspace of its project: its pool must be available there, and the workspace's
  // default pool applies when the config names none.
  int64_t workspace_id = 1;
  // Its project (1: Uncategorized), set before it is activated: a trial placed at once
  // already belongs there (its usage record names the project's workspace).
  int64_t project_id = 1;
};

struct CreateExperimentResult {
  std::optional<store::ExperimentRow> experiment;  // absent for validate_only
  nlohmann::json config;
  std::vector<std::string> warnings;
};

// The largest context accepted: (128 MiB / 8 * 6) - 1 MiB, as Determined.
constexpr int64_t kMaxContextBytes = 95ll * 1024 * 1024;

class ExperimentService : public AllocationOwner {
 public:
  struct Deps : RuntimeContext {
    AllocationService* allocations = nullptr;
    class CheckpointService* checkpoints = nullptr;
    SearcherJournalService* searcher_journal = nullptr;
    class MetricsService* metrics = nullptr;
    class UnmanagedService* unmanaged = nullptr;
    class TaskService* tasks = nullptr;
    class WebhookService* webhooks = nullptr;  // null: no webhooks (tests)
    class WorkspaceService* workspaces = nullptr;  // null: pool bindings not checked (tests)
    // Trials a new search stores per transaction and publishes per loop task: another
    // experiment's decision runs between two slices.
    size_t trial_slice = 2000;
  };

  explicit ExperimentService(Deps deps) : deps_(deps) {}
  ExperimentService(const ExperimentService&) = delete;
  ExperimentService& operator=(const ExperimentService&) = delete;

  // Rebuilds every non-terminal experiment from the store (at start-up, before the loop runs).
  Status Restore() ON_RUNTIME;

  // --- Experiments. A change answers once it is stored. ---
  Result<CreateExperimentResult> CreateExperiment(const CreateExperimentRequest& req,
                                                  const Principal& who);
  void ActivateExperiment(int64_t id, Done<Status> done);
  void PauseExperiment(int64_t id, Done<Status> done);
  void CancelExperiment(int64_t id, Done<Status> done);
  void KillExperiment(int64_t id, Done<Status> done);
  // `patch` holds Determined's PatchExperiment fields: name, description, labels, notes,
  // resources {maxSlots, weight, priority}, checkpointStorage {saveExperimentBest, ...}.
  void PatchExperiment(int64_t id, nlohmann::json patch, Done<Status> done);
  void ContinueExperiment(int64_t id, std::string override_yaml, Done<Status> done);
  void SetArchived(int64_t id, bool archived, Done<Status> done);
  // Deletes a terminal experiment: DELETING, every checkpoint's files, then its rows.
  void DeleteExperiment(int64_t id, Done<Status> done);
  void KillTrial(int64_t trial_id, Done<Status> done);
  // The same, waiting for the answer (tests, tools).
  Status ActivateExperiment(int64_t id);
  Status PauseExperiment(int64_t id);
  Status CancelExperiment(int64_t id);
  Status KillExperiment(int64_t id);
  Status PatchExperiment(int64_t id, const nlohmann::json& patch);
  Status ContinueExperiment(int64_t id, const std::string& override_yaml);
  Status SetArchived(int64_t id, bool archived);
  Status DeleteExperiment(int64_t id);
  Status KillTrial(int64_t trial_id);

  // --- Reads (the store and the RuntimeView; never the loop). ---
  Result<ExperimentView> GetExperiment(int64_t id);
  // One page of the experiments matching `filter`, in its order; `total` counts every match.
  Result<std::vector<ExperimentView>> ListExperiments(const store::ExperimentFilter& filter,
                                                      const store::Page& page, int64_t* total);
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
  // promoted or stopped, from its searcher (experiment_views.cc; searcher/rung_view.h).
  Result<nlohmann::json> SearcherRungs(int64_t experiment_id);
  Result<std::vector<store::MetricRow>> ListMetrics(int64_t trial_id, const std::string& group);
  Result<std::vector<store::TaskLogRow>> TrialLogs(int64_t trial_id, int64_t after_id,
                                                   int64_t limit, bool descending);
  // True once the trial is terminal and has no live allocation.
  bool TrialFinished(int64_t trial_id);
  // Blocks the calling thread (a log stream) until the trial logs something or changes state,
  // or `timeout_ms` passes.
  void WaitForTrialLogs(int64_t trial_id, int64_t timeout_ms);

  // --- What trial processes report (principal: their allocation, or a user). ---
  // Checks the report against the published view and queues it on the metrics service; `done`
  // runs once it is committed (and a 0.38 searcher has seen a validation report) or refused.
  void ReportMetrics(const Principal& who, int64_t trial_id, int64_t run_id, int64_t steps,
                     const std::string& group, nlohmann::json metrics, Done<Status> done);
  Status ReportCheckpoint(const Principal& who, store::CheckpointRow row);
  // Answers at once when the trial has an operation or is done, else when one arrives or after
  // `wait_ms` (no operation, not completed).
  // `from`: the allocation the request comes from ("" for a user; nullopt for an in-process
  // caller, counted as the trial's own process). Only the trial's current allocation marks its
  // run as following the searcher or told "no operation for now" (what its exit then means,
  // core::ExitFacts): a user asking about the trial changes nothing about its process's fate.
  using Reporter = std::optional<std::string>;
  void GetSearcherOperation(int64_t trial_id, int64_t wait_ms, Reply<SearcherOpView> reply,
                            Reporter from = std::nullopt);
  void CompleteSearcherOperation(int64_t trial_id, uint64_t length, double metric,
                                 Done<Status> done, Reporter from = std::nullopt);
  void ReportProgress(int64_t trial_id, double fraction, Done<Status> done,
                      Reporter from = std::nullopt);
  void ReportEarlyExit(int64_t trial_id, std::string reason, Done<Status> done);
  Status CompleteSearcherOperation(int64_t trial_id, uint64_t length, double metric);
  Status ReportProgress(int64_t trial_id, double fraction);
  Status ReportEarlyExit(int64_t trial_id, const std::string& reason);
  Status SetRunnerState(int64_t trial_id, const std::string& state);
  Result<nlohmann::json> SetTrialMetadata(int64_t trial_id, const nlohmann::json& metadata);
  Result<nlohmann::json> GetTrialMetadata(int64_t trial_id);
  Status AddTaskLogs(const Principal& who, std::vector<store::TaskLogRow> rows);

  // --- AllocationOwner (trial_launch.cc, experiment_edits.cc). ---
  Result<TrialLaunch> LaunchOf(const AllocationRuntime& alloc,
                               const std::string& device) override ON_RUNTIME;
  Status AllocationEnded(const AllocationRuntime& alloc, const AllocationEnd& end,
                         store::DecisionWrites writes) override ON_RUNTIME;
  Status UpdateJobOf(int64_t experiment_id, const nlohmann::json& resources, bool position_set,
                     std::optional<scheduler::QueuePosition> position) override ON_RUNTIME;

 private:
  // Runs `decide` on the loop and answers `done` once its writes (and searcher state) are
  // stored; the synchronous form waits for that answer.
  void Run(std::function<Status()> decide, Done<Status> done);
  Status RunAndWait(std::function<Status()> decide);

  // --- Decisions (experiment_decisions.cc). ---
  // Runs `event` through the experiment's core::Experiment; unless it is refused (nothing then
  // changes or is stored, `extra` included), stores the decision's writes with `extra` in one transaction and then releases
  // its effects (Carry). `out` gets the decision.
  Status Decide(ExperimentRuntime& exp, const core::ExperimentEvent& event,
                store::DecisionWrites extra = {}, core::Decision* out = nullptr) ON_RUNTIME;
  // A decision already made: its writes with `extra` in one transaction, then new trials
  // published, the searcher journal told, processes queued, dropped, stopped or killed, polls
  // woken. When the writes fail, the experiment's core is rebuilt from what was stored.
  // A decision over more trials than a slice stores its first slice (with the experiment's
  // state) here and the others in loop tasks, so a decision about another experiment waits for
  // one slice; any decision about this experiment stores them first (SettleDecision).
  Status Carry(ExperimentRuntime& exp, const core::Decision& d,
               store::DecisionWrites extra) ON_RUNTIME;
  // A slice's writes, added to `w`, and its new runs' allocations (by change); its trials'
  // run ids are advanced here (UnstageSlice undoes that when the writes fail).
  std::vector<std::unique_ptr<AllocationRuntime>> StageSlice(const ExperimentRuntime& exp,
                                                             const DecisionSlice& slice,
                                                             int64_t decided_at,
                                                             store::DecisionWrites* w) ON_RUNTIME;
  static void UnstageSlice(const DecisionSlice& slice);
  // A stored slice's effects: its trials republished, their processes queued, dropped, stopped
  // or killed, in the order decided.
  void ReleaseSlice(ExperimentRuntime& exp, const DecisionSlice& slice,
                    std::vector<std::unique_ptr<AllocationRuntime>> runs) ON_RUNTIME;
  // After the last slice: an ended experiment's checkpoint GC and job, the searcher journal,
  // polls.
  void FinishDecision(ExperimentRuntime& exp, PendingDecision& p, bool sliced) ON_RUNTIME;
  void CollectCheckpoints(const ExperimentRuntime& exp) ON_RUNTIME;
  // Stores and releases the next slice of the experiment's pending decision; true while more
  // are left. A refused slice leaves the experiment to follow its stored state (follow_stored).
  bool StoreNextSlice(int64_t experiment_id) ON_RUNTIME;
  void ContinueDecision(int64_t experiment_id) ON_RUNTIME;
  void SettleDecision(int64_t experiment_id) ON_RUNTIME;
  // Rebuilds the experiment's core from its stored rows and searcher journal, with the
  // allocations it has now (a decision's writes failed: the core is ahead of the store).
  void Recover(ExperimentRuntime& exp, const Status& why) ON_RUNTIME;
  // The experiment's core from what was stored: `row`'s snapshot and journal, its `trials`
  // (and where their allocations are: `presence`, by trial id); `queue_position` gets the one
  // the snapshot keeps.
  Result<std::unique_ptr<core::Experiment>> LoadCore(
      const store::ExperimentRow& row, const config::ExperimentConfig& config,
      const std::vector<store::TrialRow>& trials,
      const std::map<int64_t, core::TrialPresence>& presence,
      std::optional<scheduler::QueuePosition>* queue_position = nullptr) const;

  // The live experiment or trial a decision is about, its search's publication settled first.
  ExperimentRuntime* FindExperiment(int64_t id) ON_RUNTIME;
  TrialRuntime* FindTrial(int64_t id) ON_RUNTIME;
  TrialRuntime* TrialOf(const ExperimentRuntime& exp, const std::string& request_id) ON_RUNTIME;
  // The experiment's job as the scheduler sees it, handed to the allocations service.
  // `shown`: the state it is stored in when that is not yet its core's (a sliced decision).
  JobSpec JobOf(const ExperimentRuntime& exp,
                std::optional<core::RunState> shown = std::nullopt) const;
  void PublishJob(const ExperimentRuntime& exp,
                  std::optional<core::RunState> shown = std::nullopt) ON_RUNTIME;
  // Publishes the trial's lifecycle fields to the view and wakes its long polls (a new trial
  // has none to wake: `notify` false).
  void Publish(const TrialRuntime& trial, bool notify = true) ON_RUNTIME;
  void NotifyTrial(int64_t trial_id);

  // The lines of a failed run that log policies look at: its trial's latest ones.
  static constexpr int64_t kLogPolicyLines = 10000;
  bool MatchesCancelRetries(const nlohmann::json& policies, int64_t trial_id,
                            const std::string& allocation_id) ON_RUNTIME;
  // The webhook deliveries the experiment's move to `state` causes, added to `w` (stored with
  // the move); WakeWebhooks after it is stored.
  void AddWebhookEvents(int64_t id, const nlohmann::json& config, int64_t start_time,
                        core::RunState state, std::optional<int64_t> end_time,
                        store::DecisionWrites* w);
  void WakeWebhooks(const store::DecisionWrites& w);
  Status StopExperiment(int64_t id, core::RunState stopping) ON_RUNTIME;
  // A journal record of what changed, or now and then a full snapshot (SearcherJournalService).
  Status PersistSnapshot(ExperimentRuntime& exp) ON_RUNTIME;
  // Queues the new experiment's full searcher state for the journal's writer, not awaited by
  // the request (its trial rows imply it).
  Status PersistSearcherState(ExperimentRuntime& exp);
  // The checkpoint a new trial starts from: its PBT parent's latest, or the config's
  // source_checkpoint_uuid / source_trial_id's latest; "" when none.
  Result<std::string> WarmStartCheckpoint(const ExperimentRuntime& exp,
                                          const searcher::CreateAction& create);
  // The pending allocation of `trial`'s current run, queued at `queued_at` (it has no row until
  // it is placed; the trial row keeps that time as run_queued_at).
  static std::unique_ptr<AllocationRuntime> NewAllocation(const ExperimentRuntime& exp,
                                                          const TrialRuntime& trial,
                                                          int64_t queued_at);
  static std::string SchedulingMessage(int64_t trial_id, int64_t experiment_id,
                                       const std::string& allocation_id);

  // Trial creation (trial_creation.cc). StageCreated turns a decision's new trials into rows
  // and records (ids 0) with their core state; ApplyStaged stores the staged trials [begin,
  // end) in one transaction with `extra` and fills in their ids (each one its decision queued
  // is stored with its first run, queued when published); they touch only `exp`, the store and
  // the checkpoint service, so a new experiment's first trials are prepared and stored before
  // it is published, off the loop.
  Status StageCreated(ExperimentRuntime& exp, const core::Decision& d, StagedTrials* staged);
  Status ApplyStaged(StagedTrials* staged, store::DecisionWrites extra, size_t begin = 0,
                     size_t end = SIZE_MAX);
  // Makes stored, staged trials part of the runtime, queues those ApplyStaged marked with a
  // pending allocation, and hands their "Scheduling" log lines to the journal's writer: at most
  // `limit` more of them; true once all are.
  bool PublishStaged(ExperimentRuntime& exp, StagedTrials* staged,
                     size_t limit = SIZE_MAX) ON_RUNTIME;
  // A new search's publication in slices (trial_creation.cc): PublishSlice publishes the next
  // slice and posts the one after, so a decision about another experiment waits for one slice,
  // not for the whole search; Settle publishes the rest at once, before any decision about the
  // experiment itself (FindExperiment, FindTrial), which therefore sees all of its trials.
  void PublishSlice(int64_t experiment_id) ON_RUNTIME;
  void Settle(int64_t experiment_id) ON_RUNTIME;
  void EndPublication(int64_t experiment_id) ON_RUNTIME;
  // Activates a new, unpublished experiment: its decision is made here, its first trials
  // stored in slices (the last one with the activation), then it is published on the loop.
  Status ActivateNewExperiment(std::unique_ptr<ExperimentRuntime> exp);
  // Makes a new or restored experiment part of the runtime.
  void Adopt(std::unique_ptr<ExperimentRuntime> exp) ON_RUNTIME;
  // The same from another thread, with its stored `trials` (none queued).
  void AdoptOffLoop(std::unique_ptr<ExperimentRuntime> exp, StagedTrials trials = {});

  // `open_by_trial`: the open allocations' rows (at start-up; none for a continue).
  Status RestoreExperiment(const store::ExperimentRow& row,
                           const std::map<int64_t, store::AllocationRow>& open_by_trial) ON_RUNTIME;

  Status PatchExperimentNow(int64_t id, const nlohmann::json& patch) ON_RUNTIME;
  Status ContinueExperimentNow(int64_t id, const nlohmann::json& overrides) ON_RUNTIME;
  Status KillTrialNow(int64_t trial_id) ON_RUNTIME;
  Status DeleteExperimentNow(int64_t id) ON_RUNTIME;
  Status CompleteSearcherOperationNow(int64_t trial_id, uint64_t length, double metric,
                                      const Reporter& from) ON_RUNTIME;
  static bool FromOwnProcess(const TrialRuntime& trial, const Reporter& from);
  Status ReportEarlyExitNow(int64_t trial_id, const std::string& reason) ON_RUNTIME;

  int64_t Now() const { return deps_.clock->NowMicros(); }
  size_t Slice() const { return std::max<size_t>(deps_.trial_slice, 1); }

  const Deps deps_;
  std::map<int64_t, std::unique_ptr<ExperimentRuntime>> experiments_ GUARDED_BY(runtime_role);
  std::map<int64_t, std::unique_ptr<TrialRuntime>> trials_ GUARDED_BY(runtime_role);
  struct Publication {
    StagedTrials staged;
    std::function<void()> ended;  // after the last slice (the timing line)
  };
  std::map<int64_t, Publication> publishing_ GUARDED_BY(runtime_role);
  // Decisions whose later slices are not stored yet, by experiment id (Carry).
  std::map<int64_t, std::shared_ptr<PendingDecision>> deciding_ GUARDED_BY(runtime_role);
  // Set while a restore runs: a trial whose current run was queued and never placed (its
  // allocation has no row) is queued again as the same run; by trial id, its queue time.
  std::map<int64_t, int64_t> requeue_same_run_ GUARDED_BY(runtime_role);
};

}  // namespace det::master::server
