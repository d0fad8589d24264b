#pragma once
// SqliteStore: the Store over SQL, on the embedded SQLite (WAL mode, the default) or on
// PostgreSQL (OpenPostgres); one implementation of every method runs on both (db.h). Writes run
// on one connection guarded by a mutex (SQLite serializes writers anyway); read-only methods run
// on a pool of read connections (read_pool.h), so a read never waits behind a write transaction
// (a 20,000-trial search's rows, a batch of metric reports). Every commit reaches the
// operating system before the call returns, so it survives kill -9 of the master; whether it also
// survives power loss depends on SqliteOptions::synchronous and ::metrics_synchronous (see
// docs/operations.md).

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "master/store/sqlite/db.h"
#include "master/store/sqlite/read_pool.h"
#include "master/store/sqlite/trial_validations.h"
#include "master/store/sqlite/wal_checkpointer.h"
#include "master/store/store.h"

namespace det::master::store {

struct SqliteOptions {
  enum class Synchronous {
    // WAL synced at checkpoints only: a commit survives kill -9 (it is in the OS's page cache);
    // a power loss may take the last commits since the latest checkpoint, never corrupt.
    kNormal,
    // WAL synced at every commit: a commit also survives power loss.
    kFull,
  };
  Synchronous synchronous = Synchronous::kFull;
  // The metric writer's batches (AddMetricsBatch) only: by default they are not synced, so a
  // report is answered once its commit reached the OS (it survives kill -9); the next synced
  // commit or WAL checkpoint makes it survive power loss too. kFull syncs every batch.
  Synchronous metrics_synchronous = Synchronous::kNormal;
  // WAL checkpoints on a thread of their own (WalCheckpointer); false: inside the commit that
  // grows the log past 1,000 pages, as SQLite does by default (benchmarks compare both).
  bool background_checkpoints = true;
};

// Parses "normal" | "full" (master.yaml db.synchronous).
Result<SqliteOptions::Synchronous> ParseSqliteSynchronous(const std::string& text);

class SqliteStore : public Store {
 public:
  // Opens (creating if needed) the database at `path` and applies pending migrations.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                   SqliteOptions options = {});
  // Connects to PostgreSQL (`conninfo`: a postgres:// URI or libpq key=value string) and
  // applies pending migrations.
  static Result<std::unique_ptr<SqliteStore>> OpenPostgres(const std::string& conninfo);
  Dialect dialect() const { return db_->dialect(); }
  ~SqliteStore() override;

  // Read connections at most (opened on first need).
  static constexpr size_t kMaxReadConnections = 8;

  // For tests: runs `while_open` while a write transaction that has changed a row (without
  // committing it) holds the write connection; reads it makes must neither wait nor see the
  // change. The transaction is rolled back.
  Status WhileWriteTransactionOpenForTest(const std::function<void()>& while_open);

  Result<std::string> GetOrCreateClusterId(const std::string& fresh_id) override;
  Result<UserRow> GetUserByName(const std::string& username) override;
  Result<UserRow> GetUserById(int64_t id) override;
  Result<std::vector<UserRow>> ListUsers() override;
  Status SetUserPassword(int64_t user_id, const std::optional<std::string>& hash) override;
  Result<bool> EnsureBuiltinUsers(const std::optional<std::string>& initial_hash) override;
  Status CreateSession(const std::string& token, int64_t user_id, int64_t expiry) override;
  Result<int64_t> LookupSession(const std::string& token, int64_t now) override;
  Status RevokeSession(const std::string& token) override;

  Result<int64_t> InsertExperiment(const ExperimentRow& row,
                                   const std::string& model_definition) override;
  Result<ExperimentRow> GetExperiment(int64_t id) override;
  Result<std::vector<ExperimentRow>> ListExperiments(std::optional<bool> archived, const Page& page,
                                                     int64_t* total) override;
  Result<std::vector<ExperimentRow>> ListNonTerminalExperiments() override;
  Result<std::string> GetModelDefinition(int64_t experiment_id) override;
  Status UpdateExperimentState(int64_t id, const std::string& state,
                               std::optional<int64_t> end_time) override;
  Status UpdateExperimentProgress(int64_t id, double progress) override;
  Status UpdateExperimentSnapshot(int64_t id, const nlohmann::json& snapshot) override;
  Status UpdateExperimentMeta(int64_t id, const nlohmann::json& config, bool archived,
                              const std::string& notes) override;

  Status DeleteExperiment(int64_t id) override;

  Result<int64_t> InsertTrial(const TrialRow& row) override;
  Result<TrialRow> GetTrial(int64_t id) override;
  Result<std::vector<TrialRow>> ListTrials(int64_t experiment_id) override;
  Status UpdateTrial(const TrialRow& row) override;

  Status UpsertAllocation(const AllocationRow& row) override;
  Result<AllocationRow> GetAllocation(const std::string& allocation_id) override;
  Result<AllocationRow> GetAllocationByToken(const std::string& token) override;
  Result<std::vector<AllocationRow>> ListOpenAllocations() override;
  Result<std::vector<std::string>> ListExperimentAllocationIds(int64_t experiment_id) override;
  Result<std::vector<std::string>> ListTaskIds(int64_t trial_id) override;

  Status AddMetrics(const MetricRow& row) override;
  Result<std::vector<MetricRow>> ListMetrics(int64_t trial_id, const std::string& group) override;

  Status AddCheckpoint(const CheckpointRow& row) override;
  Result<CheckpointRow> GetCheckpoint(const std::string& uuid) override;
  Result<std::vector<CheckpointRow>> ListCheckpointsForTrial(int64_t trial_id) override;
  Result<std::vector<CheckpointRow>> ListCheckpointsForExperiment(int64_t experiment_id) override;

  Result<int64_t> AddGcRequest(const GcRequestRow& row) override;
  Result<std::vector<GcRequestRow>> ListGcRequests() override;
  Status UpdateGcRequestAttempt(int64_t id, const std::string& error) override;
  Status DeleteGcRequest(int64_t id) override;
  Status AddTrialSourceInfo(const TrialSourceInfoRow& row) override;
  Result<std::vector<TrialSourceInfoRow>> ListTrialSourceInfos(
      const std::string& checkpoint_uuid, const std::string& source_type) override;

  Status AddTaskLogs(const std::vector<TaskLogRow>& rows) override;
  Result<std::vector<TaskLogRow>> ListTrialLogs(int64_t trial_id, int64_t after_id, int64_t limit,
                                                bool descending) override;

  // Model registry (sqlite_store_models.cc).
  Result<ModelRow> InsertModel(const ModelRow& row) override;
  Result<ModelRow> GetModelById(int64_t id) override;
  Result<ModelRow> GetModelByName(const std::string& name) override;
  Result<std::vector<ModelRow>> ListModels() override;
  Status UpdateModel(const ModelRow& row) override;
  Status DeleteModel(int64_t id) override;
  Result<ModelVersionRow> InsertModelVersion(const ModelVersionRow& row) override;
  Result<ModelVersionRow> GetModelVersion(int64_t model_id, int64_t version) override;
  Result<std::vector<ModelVersionRow>> ListModelVersions(int64_t model_id) override;
  Status UpdateModelVersion(const ModelVersionRow& row) override;
  Status DeleteModelVersion(int64_t id) override;
  Result<std::vector<ModelVersionRow>> ListModelVersionsForCheckpoints(
      const std::vector<std::string>& uuids) override;
  // Profiler (sqlite_store_profiler.cc).
  Status AddSystemMetrics(const std::vector<SystemMetricRow>& rows) override;
  Result<std::vector<SystemMetricRow>> ListSystemMetrics(int64_t trial_id, const std::string& group,
                                                         const std::string& agent_id,
                                                         int64_t after_id, int64_t limit) override;
  Result<std::vector<SystemMetricRow>> LatestSystemMetrics(int64_t trial_id) override;
  // Config templates (sqlite_store_templates.cc).
  Result<std::vector<TemplateRow>> ListTemplates() override;
  Result<TemplateRow> GetTemplate(const std::string& name) override;
  Status InsertTemplate(const TemplateRow& row) override;
  Status UpdateTemplate(const TemplateRow& row) override;
  Status RenameTemplate(const std::string& old_name, const std::string& new_name) override;
  Status DeleteTemplate(const std::string& name) override;

  // The cluster message (sqlite_store_notices.cc).
  Result<std::optional<ClusterMessageRow>> GetClusterMessage() override;
  Status SetClusterMessage(const ClusterMessageRow& row) override;
  Status ClearClusterMessage() override;
  // Webhooks and their delivery queue (sqlite_store_notices.cc).
  Result<WebhookRow> InsertWebhook(WebhookRow row) override;
  Result<std::vector<WebhookRow>> ListWebhooks() override;
  Status SetUserWebSettings(int64_t user_id, const std::vector<UserWebSettingRow>& rows,
                            int64_t max_rows) override;
  Result<std::vector<UserWebSettingRow>> ListUserWebSettings(int64_t user_id) override;
  Status ResetUserWebSettings(int64_t user_id) override;
  Result<std::vector<PoolBindingRow>> ListPoolBindings() override;
  Status ChangePoolBindings(const std::string& pool_name, const std::vector<int64_t>& add,
                            const std::vector<int64_t>& remove, bool replace) override;
  Result<std::vector<AllocationUsageRow>> ListAllocationUsage(int64_t from, int64_t to,
                                                              int64_t now, int64_t limit) override;
  Status UpdateWebhookUrl(int64_t id, const std::string& url) override;
  Status DeleteWebhook(int64_t id) override;
  Result<int64_t> EnqueueWebhookEvents(const std::vector<WebhookEventRow>& events) override;
  Result<std::vector<WebhookEventRow>> DueWebhookEvents(int64_t now, int64_t limit) override;
  Status DeleteWebhookEvent(int64_t id) override;
  Status RescheduleWebhookEvent(int64_t id, int64_t attempts, int64_t next_attempt_at) override;

  // Workspaces, projects, experiment placement, user administration
  // (sqlite_store_workspaces.cc).
  Result<std::vector<WorkspaceRow>> ListWorkspaces() override;
  Result<int64_t> InsertWorkspace(const WorkspaceRow& row) override;
  Status UpdateWorkspace(const WorkspaceRow& row) override;
  Status DeleteWorkspace(int64_t id) override;
  Result<std::vector<ProjectRow>> ListProjects() override;
  Result<int64_t> InsertProject(const ProjectRow& row) override;
  Status UpdateProject(const ProjectRow& row) override;
  Status DeleteProject(int64_t id) override;
  Result<std::vector<std::pair<int64_t, int64_t>>> ListExperimentProjects() override;
  Status SetExperimentProject(int64_t experiment_id, int64_t project_id) override;
  Result<int64_t> InsertUser(const UserRow& row) override;
  Status UpdateUser(const UserRow& row) override;

  // Web UI (sqlite_store_webui.cc).
  Result<std::vector<int64_t>> ListExperimentIds(const ExperimentFilter& filter, const Page& page,
                                                 int64_t* total) override;

  // Web UI list columns (sqlite_store_webui_summaries.cc).
  Result<std::vector<ExperimentSummaryRow>> ListExperimentSummaries(
      const std::vector<int64_t>& experiment_ids) override;

  // Unmanaged experiments and trials (sqlite_store_unmanaged.cc).
  Result<int64_t> UpsertUnmanagedExperiment(const ExperimentRow& row,
                                            const std::string& model_definition,
                                            const std::optional<std::string>& external_id,
                                            bool* created) override;
  Result<std::vector<UnmanagedExperimentRow>> ListUnmanagedExperiments() override;
  Result<int64_t> UpsertUnmanagedTrial(const TrialRow& row, const UnmanagedTrialRow& mark,
                                       bool* created) override;
  Result<std::vector<UnmanagedTrialRow>> ListUnmanagedTrials() override;
  Status TouchUnmanagedTrial(int64_t trial_id, int64_t now) override;
  Result<std::vector<UnmanagedTrialRow>> ListSilentUnmanagedTrials(int64_t before) override;

  // Metric ingestion (sqlite_store_metrics_ingest.cc).
  std::vector<Status> AddMetricsBatch(std::span<const MetricRow> rows) override;

  // compat11 (sqlite_store_compat11.cc).
  Result<nlohmann::json> GetTrialSummaryMetrics(int64_t trial_id) override;

  // Scale (sqlite_store_scale.cc).
  Status BulkInsert(const std::vector<ExperimentRow>& experiments,
                    const std::string& model_definition, const std::vector<TrialRow>& trials,
                    const std::vector<MetricRow>& metrics) override;
  Result<int64_t> CountTrials(int64_t experiment_id) override;
  Result<std::vector<int64_t>> ListTrialIds(int64_t experiment_id, const Page& page,
                                            bool descending, int64_t* total) override;
  Result<std::vector<MetricRow>> SampleMetrics(int64_t trial_id, const std::string& group,
                                               int64_t start_batches, int64_t end_batches,
                                               int64_t max_points) override;

  // sched (sqlite_store_sched.cc).
  Result<std::vector<int64_t>> ApplyDecision(const DecisionWrites& writes) override;

  // Searcher journal (sqlite_store_searcher.cc).
  Status AppendSearcherEvent(int64_t experiment_id, int64_t seq,
                             const std::string& record) override;
  Result<std::vector<std::pair<int64_t, std::string>>> ListSearcherEvents(
      int64_t experiment_id) override;
  // slurm (sqlite_store_slurm.cc)
  Status UpsertSlurmJob(const SlurmJobRow& row) override;
  Result<std::vector<SlurmJobRow>> ListOpenSlurmJobs() override;

  // Agent admin state (sqlite_store_agent_admin.cc).
  Status SetAgentAdminState(const std::string& agent_id, int64_t slot_id, bool enabled,
                            bool draining) override;
  Result<std::vector<AgentAdminRow>> ListAgentAdminStates() override;

  // core13: the searcher snapshot alone (sqlite_store_snapshot.cc).
  Result<std::string> GetExperimentSnapshotText(int64_t id) override;
  Status WriteExperimentSnapshotText(int64_t id, const std::string& snapshot_json) override;

  // authz (sqlite_store_authz.cc).
  Result<std::pair<int64_t, int64_t>> LookupSessionExpiry(const std::string& token,
                                                          int64_t now) override;

  // Tasks: commands, notebooks, shells, TensorBoards (sqlite_store_tasks.cc).
  Status UpsertGenericTask(const GenericTaskRow& row) override;
  Result<std::vector<GenericTaskRow>> ListGenericTasks() override;
  Status PutGenericTaskContext(const std::string& task_id, const std::string& tgz) override;
  Result<std::string> GetGenericTaskContext(const std::string& task_id) override;
  Result<std::vector<TaskLogRow>> ListTaskLogsByTask(const std::string& task_id, int64_t after_id,
                                                     int64_t limit, bool descending) override;

  // Agent credentials (sqlite_store_agent_credentials.cc).
  Result<std::string> BindAgentCredential(const std::string& agent_id,
                                          const std::string& key_digest,
                                          int64_t bound_time) override;
  Result<std::string> GetAgentCredential(const std::string& agent_id) override;
  Status DeleteAgentCredential(const std::string& agent_id) override;

  // store13: read path at scale (sqlite_store_validations.cc).
  Result<TrialValidationReports> GetTrialValidations(int64_t trial_id) override;
  Result<std::optional<double>> BestExperimentValidation(int64_t experiment_id,
                                                         bool smaller_is_better) override;

  // reads14: a page of trial views' rows (sqlite_store_trial_page.cc).
  Result<std::vector<TrialViewRows>> GetTrialViewRows(
      const std::vector<int64_t>& trial_ids) override;

 private:
  // The connection one read-only method runs on: a pooled read connection, else (none could be
  // opened) the write connection with mu_ held.
  class Reader {
   public:
    Db* db() const { return db_; }

   private:
    friend class SqliteStore;
    std::optional<ReadPool::Lease> lease_;
    std::unique_lock<std::mutex> writer_lock_;
    Db* db_ = nullptr;
  };
  // REQUIRES: mu_ not held by the caller.
  Reader Read();
  // Starts the read pool (after migrations: readers see the final schema).
  void StartReaders(ReadPool::Opener open);
  // Hands the write connection's WAL checkpoints to a WalCheckpointer (SQLite on a file).
  Status StartCheckpointer(const std::string& path);

  // Runs each statement with `id` bound to its first parameter; stops at the first error (the
  // caller owns the transaction). REQUIRES: mu_ held.
  Status ExecEachWithIdLocked(std::span<const char* const> statements, int64_t id);
  // REQUIRES: mu_ held.
  Result<ModelRow> GetModelLocked(const char* where, int64_t id, const std::string& name);
  explicit SqliteStore(std::unique_ptr<Db> db) : conn_(std::move(db)), db_(conn_.get()) {}
  struct PendingMetric {
    const MetricRow* row;
    Status result;
    bool done;
  };
  Status Migrate();
  Status Exec(const std::string& sql);
  // The usage records (allocation_usage) of trial allocations and of a task, written with them
  // (sqlite_store_usage.cc). REQUIRES: mu_ held, inside the transaction that writes them.
  Status RecordTrialUsageLocked(const std::vector<AllocationRow>& rows);
  Status RecordTaskUsageLocked(const GenericTaskRow& task);
  // Runs `body` inside BEGIN IMMEDIATE ... COMMIT, rolled back when it fails (mu_ held).
  Status InWriteTransactionLocked(const std::function<Status()>& body);
  // An experiment's model definition and searcher snapshot (a null or empty one is not
  // stored) go in tables of their own, off its row (migration 0026). REQUIRES: mu_ held.
  Status InsertExperimentBlobsLocked(int64_t id, const std::string& model_definition,
                                     const nlohmann::json& snapshot);
  // The experiment's row and its blobs; its new id. REQUIRES: mu_ held, inside a transaction.
  // Queues deliveries inside the caller's transaction (ApplyDecision, EnqueueWebhookEvents).
  Result<int64_t> InsertWebhookEventsLocked(const std::vector<WebhookEventRow>& events);
  Result<int64_t> InsertExperimentLocked(const ExperimentRow& row,
                                         const std::string& model_definition);
  // Writes the rows in one transaction, one status each (sqlite_store_metrics_ingest.cc).
  // REQUIRES: mu_ held, no transaction open.
  std::vector<Status> WriteMetricsLocked(std::span<const MetricRow* const> rows);
  // compat11 (sqlite_store_compat11.cc): folds a report just written into the trial's summary
  // in `cache` (loaded on first use; StoreTrialSummariesLocked writes them). `incremental`: the
  // report added a row (no merge into an existing one, no rollback of earlier runs' rows), so it
  // is folded in; otherwise the report's group is recomputed from its rows. REQUIRES: mu_ held,
  // inside a transaction.
  Status FoldTrialSummaryLocked(const MetricRow& row, bool incremental,
                                std::map<int64_t, nlohmann::json>* cache);
  Status StoreTrialSummariesLocked(const std::map<int64_t, nlohmann::json>& cache);
  // store13 (sqlite_store_validations.cc): the trials' best and latest validation columns.
  // Folds a validation report just written into `cache` (a trial's stored columns loaded on
  // first use); `incremental` as for FoldTrialSummaryLocked, else the trial is recomputed from
  // its rows at StoreTrialValidationsLocked. Other groups are ignored. REQUIRES: mu_ held,
  // inside a transaction.
  struct ValidationCacheEntry {
    config::SearcherMetric metric;
    TrialValidations stored;  // the columns as read
    TrialValidations now;     // with this batch's reports
    bool recompute = false;   // a report merged into or archived rows: read them again
  };
  using ValidationCache = std::map<int64_t, ValidationCacheEntry>;
  Status FoldTrialValidationLocked(const MetricRow& row, bool incremental, ValidationCache* cache);
  Status StoreTrialValidationsLocked(const ValidationCache& cache);
  // Recomputes and stores the columns of `trial_id` from its rows. REQUIRES: mu_ held.
  Status RecomputeTrialValidationsLocked(int64_t trial_id);
  // Migration 0021's backfill: every trial with validation rows. REQUIRES: mu_ held.
  Status BackfillTrialValidationsLocked();

  std::mutex mu_;
  // The PRAGMAs of SqliteOptions::synchronous and ::metrics_synchronous; empty on PostgreSQL or
  // where they are the same (the metric batches then switch nothing).
  std::string sync_pragma_, metrics_sync_pragma_;
  std::unique_ptr<Db> conn_;
  Db* db_;
  // Metric ingestion: the trial summaries its last commits stored, parsed, so the next batch
  // folds into them without reading and parsing the row again. Filled only after a COMMIT, taken
  // out while a batch uses one; a writer of trial_summaries other than the metric batches must
  // clear it (BulkInsert does). Guarded by mu_.
  std::map<int64_t, nlohmann::json> summary_cache_;
  std::unique_ptr<ReadPool> readers_;  // null: reads use the write connection
  // Group commit of metric reports (see AddMetrics).
  std::mutex batch_mu_;
  std::condition_variable batch_cv_;
  std::vector<PendingMetric*> batch_queue_;
  bool batch_writer_active_ = false;
  // SQLite on a file: the WAL's checkpoints, off the commit path. Declared last so that it stops
  // before the connection and mu_ go away.
  std::unique_ptr<WalCheckpointer> checkpointer_;
};

}  // namespace det::master::store
