#pragma once
// Store: everything the master persists. One interface, implemented by SqliteStore (embedded
// default) and, later, PostgresStore; callers never see SQL. Every write is committed before the
// call returns, so an acknowledged change survives kill -9. Implementations are thread-safe.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "master/store/slurm_job_row.h"

namespace det::master::store {

struct UserRow {
  int64_t id = 0;
  std::string username;
  std::optional<std::string> password_hash;  // nullopt = blank password
  bool admin = false;
  bool active = true;
  std::string display_name;
};

struct ExperimentRow {
  int64_t id = 0;
  std::string state;            // RunStateName
  nlohmann::json config;        // fully defaulted
  std::string original_config;  // raw YAML as submitted
  int64_t owner_id = 0;
  std::string job_id;
  int64_t start_time = 0;  // micros
  std::optional<int64_t> end_time;
  bool archived = false;
  double progress = 0;
  std::optional<int64_t> parent_id;
  std::string notes;
  nlohmann::json snapshot;           // searcher + per-trial searcher state; read only by
                                     // ListNonTerminalExperiments (null elsewhere)
};

struct TrialRow {
  int64_t id = 0;
  int64_t experiment_id = 0;
  std::string request_id;
  int64_t seed = 0;
  nlohmann::json hparams;
  std::string state;
  int64_t start_time = 0;
  std::optional<int64_t> end_time;
  int64_t restarts = 0;
  int64_t run_id = 0;  // current trial run id (restart id)
  int64_t total_batches = 0;
  std::string runner_state;
  std::optional<double> searcher_metric;
  std::string task_id;
  nlohmann::json metadata = nlohmann::json::object();
  std::string warm_start_checkpoint_uuid;  // "" when none
  // Micros: when its current run was queued (0 in rows stored before migration 0025). A run
  // queued and never placed has no allocation row; a restore queues it again from this time.
  int64_t run_queued_at = 0;
};

struct AllocationRow {
  std::string allocation_id;
  std::string task_id;
  int64_t trial_id = 0;
  std::string agent_id;
  std::string state;
  std::string token;
  int64_t slots = 0;
  int64_t start_time = 0;
  std::optional<int64_t> end_time;
  std::optional<int64_t> exit_code;
  std::string exit_reason;
  // One entry per agent the allocation runs on: [{"agentId": "a", "slotIds": [0, 1]}].
  nlohmann::json resources = nlohmann::json::array();
  std::string resource_pool;  // kept in its usage record only (AllocationUsageRow)
};

// One of a user's web UI settings (user_web_settings, migration 0031).
struct UserWebSettingRow {
  std::string key;
  std::string storage_path;
  std::string value;
};

// What an allocation of a trial or task used (allocation_usage, migration 0030): who, where and
// for which experiment as they were when it started; experiment deletes and project moves leave
// it as it is.
struct AllocationUsageRow {
  std::string allocation_id;
  std::string task_id;
  std::string task_type;  // TRIAL, COMMAND, NOTEBOOK, SHELL, TENSORBOARD
  std::string username;
  std::string workspace_name;
  std::optional<int64_t> experiment_id;
  int64_t slots = 0;
  std::string resource_pool;
  int64_t start_time = 0;  // micros
  std::optional<int64_t> end_time;
};

struct MetricRow {
  int64_t id = 0;
  int64_t trial_id = 0;
  int64_t trial_run_id = 0;
  int64_t total_batches = 0;
  std::string group;       // "training", "validation" or a generic name
  nlohmann::json metrics;  // {"avg_metrics": {...}, "batch_metrics": [...]}
  int64_t report_time = 0;
  bool archived = false;
};

// store13: a trial's best and latest validation reports (Store::GetTrialValidations).
struct TrialValidationReports {
  std::optional<MetricRow> best;
  std::optional<MetricRow> latest;
};

struct CheckpointRow {
  std::string uuid;
  std::string task_id;
  std::string allocation_id;
  int64_t trial_id = 0;
  int64_t report_time = 0;
  std::string state;  // COMPLETED | PARTIALLY_DELETED | DELETED
  nlohmann::json resources = nlohmann::json::object();
  nlohmann::json metadata = nlohmann::json::object();
  int64_t steps_completed = 0;
  int64_t size = 0;
};

// reads14: what the view of one trial reads (Store::GetTrialViewRows).
struct TrialViewRows {
  TrialRow row;
  std::vector<std::string> task_ids;       // as ListTaskIds
  nlohmann::json summary_metrics;          // as GetTrialSummaryMetrics
  TrialValidationReports validations;      // as GetTrialValidations
  std::vector<CheckpointRow> checkpoints;  // as ListCheckpointsForTrial
};

struct TaskLogRow {
  int64_t id = 0;
  std::string task_id;
  int64_t trial_id = 0;
  std::string allocation_id;
  std::string agent_id;
  std::string container_id;
  std::optional<int64_t> rank_id;
  int64_t timestamp = 0;  // micros
  std::string level;      // LOG_LEVEL_INFO, ... or ""
  std::string stdtype;
  std::string source;
  std::string log;
};

// A command, notebook, shell or TensorBoard (generic_tasks, migration 0016).
struct GenericTaskRow {
  std::string task_id;
  std::string task_type;  // COMMAND | NOTEBOOK | SHELL | TENSORBOARD
  int64_t owner_id = 0;
  std::string username;
  std::string description;
  nlohmann::json config = nlohmann::json::object();
  std::string state;  // STATE_QUEUED ... STATE_TERMINATED
  std::string job_id;
  std::string allocation_id;
  std::string allocation_token;
  std::string agent_id;
  std::vector<int> slot_ids;
  std::string proxy_address;  // host:port of the task's service, once registered
  bool ready = false;
  std::optional<int64_t> exit_code;
  std::string exit_error;
  nlohmann::json secrets = nlohmann::json::object();  // notebook token, shell keys
  int64_t registered_time = 0;                        // micros
  int64_t start_time = 0;
  int64_t end_time = 0;
  int64_t workspace_id = 1;  // where it was launched (migration 0029)
};

// A pending checkpoint deletion (see gc_requests in the migrations).
struct GcRequestRow {
  int64_t id = 0;
  int64_t experiment_id = 0;
  nlohmann::json storage_config;
  std::vector<std::string> uuids;
  std::vector<std::string> globs;  // empty = every file
  int64_t created_at = 0;
  int64_t attempts = 0;
  std::string last_error;
  bool delete_experiment = false;    // once the files are gone, delete the experiment's rows
  bool delete_tensorboards = false;  // also delete the experiment's TensorBoard files (compat11)
};

// A trial that used a checkpoint (see trial_source_infos in the migrations).
struct TrialSourceInfoRow {
  int64_t trial_id = 0;
  std::string checkpoint_uuid;
  std::string source_type;  // TRIAL_SOURCE_INFO_TYPE_INFERENCE | ..._FINE_TUNING
  std::optional<int64_t> model_id;
  std::optional<int64_t> model_version;
};

// A model of the model registry (see 0007_model_registry.sql).
struct ModelRow {
  int64_t id = 0;
  std::string name;
  std::string description;
  std::string notes;
  nlohmann::json metadata = nlohmann::json::object();
  std::vector<std::string> labels;
  int64_t user_id = 0;
  int64_t workspace_id = 1;
  bool archived = false;
  int64_t creation_time = 0;      // micros
  int64_t last_updated_time = 0;  // micros
  int64_t num_versions = 0;       // read only: counted on every read
};

// One version of a model: a checkpoint registered under the model's name and a number.
struct ModelVersionRow {
  int64_t id = 0;
  int64_t model_id = 0;
  int64_t version = 0;  // 1, 2, ... within the model
  std::string checkpoint_uuid;
  std::string name;
  std::string comment;
  std::string notes;
  nlohmann::json metadata = nlohmann::json::object();
  std::vector<std::string> labels;
  int64_t user_id = 0;
  int64_t creation_time = 0;
  int64_t last_updated_time = 0;
};

// One profiler report of one agent (see system_metrics in the migrations).
struct SystemMetricRow {
  int64_t id = 0;
  int64_t trial_id = 0;
  int64_t trial_run_id = 0;
  std::string group;  // cpu | gpu | memory | disk | network
  std::string agent_id;
  // {name: number} plus, for labelled metrics, {label: {name: number}} (GPU uuid, disk path).
  nlohmann::json metrics = nlohmann::json::object();
  int64_t end_time = 0;  // micros
};

// A webhook and its triggers (see webhooks in the migrations). Types and modes are Determined's
// names without their prefix: DEFAULT / SLACK, WORKSPACE / SPECIFIC, EXPERIMENT_STATE_CHANGE /
// METRIC_THRESHOLD_EXCEEDED / TASK_LOG / CUSTOM.
struct WebhookTriggerRow {
  int64_t id = 0;
  int64_t webhook_id = 0;
  std::string trigger_type;
  nlohmann::json condition = nlohmann::json::object();
};

struct WebhookRow {
  int64_t id = 0;
  std::string name;
  std::string url;
  std::string webhook_type;
  std::string mode;
  std::optional<int64_t> workspace_id;  // unset: global
  std::vector<WebhookTriggerRow> triggers;
};

// One delivery waiting to be made: what is posted where, how often it was tried and when it is
// next due (micros).
struct WebhookEventRow {
  int64_t id = 0;
  std::string url;
  std::string payload;
  int64_t attempts = 0;
  int64_t next_attempt_at = 0;
  // A TASK_LOG event is queued once per (task, trigger): set, the queue skips a repeat.
  std::string dedupe_task_id;
  int64_t dedupe_trigger_id = 0;
};

// The cluster-wide message shown to users (det master cluster-message; see cluster_messages in
// the migrations). Times in micros; no end: shown until cleared.
struct ClusterMessageRow {
  std::string message;
  int64_t start_time = 0;
  std::optional<int64_t> end_time;
  int64_t created_time = 0;
};

// A config template (see templates in the migrations).
struct TemplateRow {
  std::string name;
  int64_t workspace_id = 1;
  nlohmann::json config = nlohmann::json::object();
};

// A workspace and a project (see workspaces / projects in the migrations). Id 1 of each is the
// built-in "Uncategorized".
struct WorkspaceRow {
  int64_t id = 0;
  std::string name;
  bool archived = false;
  int64_t user_id = 1;
  bool immutable = false;
  bool pinned = false;
  std::string default_compute_pool;  // "" : the cluster's default
  std::string default_aux_pool;
  nlohmann::json checkpoint_storage;  // null: none (the master's applies)
};

// One workspace a resource pool is bound to (migration 0032).
struct PoolBindingRow {
  std::string pool_name;
  int64_t workspace_id = 0;
  bool operator==(const PoolBindingRow&) const = default;
};

struct ProjectRow {
  int64_t id = 0;
  std::string name;
  int64_t workspace_id = 1;
  std::string description;
  std::string key;
  bool archived = false;
  int64_t user_id = 1;
  bool immutable = false;
  nlohmann::json notes = nlohmann::json::array();
};

// The mark of an unmanaged (core_v2) experiment (see unmanaged_experiments in the migrations).
struct UnmanagedExperimentRow {
  int64_t experiment_id = 0;
  std::optional<std::string> external_id;
};

// The mark of an unmanaged trial: its script reports its state and heartbeats.
struct UnmanagedTrialRow {
  int64_t trial_id = 0;
  int64_t experiment_id = 0;
  std::string task_id;
  std::optional<std::string> external_id;
  int64_t last_activity = 0;  // micros
};

struct Page {
  int64_t offset = 0;
  int64_t limit = 0;  // 0 = no limit
};

// Web UI experiment list: which experiments and in what order (GET /api/v1/experiments with
// Determined's query parameters, parsed in master/api/experiment_filter.h).
enum class ExperimentSortKey {
  kId,
  kDescription,
  kStartTime,
  kEndTime,
  kState,
  kNumTrials,
  kProgress,
  kUser,
  kName,
  kForkedFrom,
  kResourcePool,
  kCheckpointSize,
  kCheckpointCount,
  kSearcherMetricVal,
};

struct ExperimentFilter {
  std::optional<bool> archived;
  std::vector<std::string> states;     // stored run states (ACTIVE, PAUSED, ...); any of them
  std::vector<std::string> usernames;  // any of them
  std::vector<int64_t> user_ids;       // any of them
  std::vector<std::string> labels;     // every one of them
  std::string name;                    // case-insensitive substring of config.name
  std::string description;             // case-insensitive substring of config.description
  // Determined's experimentIdFilter: bounds and sets of ids (empty / nullopt: no condition).
  std::optional<int64_t> id_gt, id_gte, id_lt, id_lte;
  std::vector<int64_t> id_in, id_not_in;
  ExperimentSortKey sort_by = ExperimentSortKey::kId;
  bool descending = false;  // ties are broken by id in the same direction
};

// Web UI list columns of one experiment: completed checkpoints and the best validation value of
// its searcher metric (smaller or larger by its config), with the trial that reported it.
struct ExperimentSummaryRow {
  int64_t experiment_id = 0;
  int64_t checkpoint_count = 0;
  int64_t checkpoint_size = 0;
  std::optional<double> best_metric;
  std::optional<int64_t> best_trial_id;
};

struct DecisionWrites;  // master/store/decision_writes.h

// An agent (slot_id -1) or one of its slots that an operator disabled (migration 0020).
struct AgentAdminRow {
  std::string agent_id;
  int64_t slot_id = -1;
  bool draining = false;  // agents only: disabled with drain
};

class Store {
 public:
  virtual ~Store() = default;

  // Cluster identity, created once.
  virtual Result<std::string> GetOrCreateClusterId(const std::string& fresh_id) = 0;

  // Users and sessions.
  virtual Result<UserRow> GetUserByName(const std::string& username) = 0;
  virtual Result<UserRow> GetUserById(int64_t id) = 0;
  // Every user, by id.
  virtual Result<std::vector<UserRow>> ListUsers() = 0;
  virtual Status SetUserPassword(int64_t user_id, const std::optional<std::string>& hash) = 0;
  // Returns true when the user table was created fresh by this call (first start).
  virtual Result<bool> EnsureBuiltinUsers(const std::optional<std::string>& initial_hash) = 0;
  virtual Status CreateSession(const std::string& token, int64_t user_id, int64_t expiry) = 0;
  // The user id of a live (unexpired, unrevoked) session.
  virtual Result<int64_t> LookupSession(const std::string& token, int64_t now) = 0;
  virtual Status RevokeSession(const std::string& token) = 0;

  // Experiments.
  virtual Result<int64_t> InsertExperiment(const ExperimentRow& row,
                                           const std::string& model_definition) = 0;
  virtual Result<ExperimentRow> GetExperiment(int64_t id) = 0;
  virtual Result<std::vector<ExperimentRow>> ListExperiments(std::optional<bool> archived,
                                                             const Page& page, int64_t* total) = 0;
  // Experiments the master runs (unmanaged ones excluded) that are not in a terminal state.
  virtual Result<std::vector<ExperimentRow>> ListNonTerminalExperiments() = 0;
  virtual Result<std::string> GetModelDefinition(int64_t experiment_id) = 0;
  virtual Status UpdateExperimentState(int64_t id, const std::string& state,
                                       std::optional<int64_t> end_time) = 0;
  virtual Status UpdateExperimentProgress(int64_t id, double progress) = 0;
  // Replaces the full snapshot and drops the experiment's searcher journal (AppendSearcherEvent)
  // in one transaction: the snapshot supersedes it.
  virtual Status UpdateExperimentSnapshot(int64_t id, const nlohmann::json& snapshot) = 0;
  virtual Status UpdateExperimentMeta(int64_t id, const nlohmann::json& config, bool archived,
                                      const std::string& notes) = 0;
  // Removes the experiment and everything recorded under it (trials, allocations, metrics,
  // checkpoints, logs) in one transaction.
  virtual Status DeleteExperiment(int64_t id) = 0;

  // Trials.
  virtual Result<int64_t> InsertTrial(const TrialRow& row) = 0;
  virtual Result<TrialRow> GetTrial(int64_t id) = 0;
  virtual Result<std::vector<TrialRow>> ListTrials(int64_t experiment_id) = 0;
  virtual Status UpdateTrial(const TrialRow& row) = 0;

  // Allocations.
  virtual Status UpsertAllocation(const AllocationRow& row) = 0;
  virtual Result<AllocationRow> GetAllocation(const std::string& allocation_id) = 0;
  virtual Result<AllocationRow> GetAllocationByToken(const std::string& token) = 0;
  virtual Result<std::vector<AllocationRow>> ListOpenAllocations() = 0;
  virtual Result<std::vector<std::string>> ListTaskIds(int64_t trial_id) = 0;
  // A user's web UI settings: set (an empty value deletes that key) in one transaction, refused
  // whole when the user would hold more than `max_rows`; listed; all removed.
  virtual Status SetUserWebSettings(int64_t user_id, const std::vector<UserWebSettingRow>& rows,
                                    int64_t max_rows) = 0;
  virtual Result<std::vector<UserWebSettingRow>> ListUserWebSettings(int64_t user_id) = 0;
  virtual Status ResetUserWebSettings(int64_t user_id) = 0;
  // The usage records of allocations that ran during [from, to] (micros; one still running runs
  // until `now`), oldest start first, at most `limit`.
  virtual Result<std::vector<AllocationUsageRow>> ListAllocationUsage(int64_t from, int64_t to,
                                                                      int64_t now, int64_t limit) = 0;
  // Every allocation id stored for the experiment's trials, open or closed, in one query (the
  // restore asks which queued runs were ever placed).
  virtual Result<std::vector<std::string>> ListExperimentAllocationIds(int64_t experiment_id) = 0;

  // Metrics. A report repeated with the same (trial, run, group, steps) merges into the stored
  // one, so client retries never duplicate rows. Reports of a later run archive rows of earlier
  // runs beyond its steps (rollback after restart from a checkpoint).
  virtual Status AddMetrics(const MetricRow& row) = 0;
  virtual Result<std::vector<MetricRow>> ListMetrics(int64_t trial_id,
                                                     const std::string& group) = 0;

  // Checkpoints.
  virtual Status AddCheckpoint(const CheckpointRow& row) = 0;
  virtual Result<CheckpointRow> GetCheckpoint(const std::string& uuid) = 0;
  virtual Result<std::vector<CheckpointRow>> ListCheckpointsForTrial(int64_t trial_id) = 0;
  virtual Result<std::vector<CheckpointRow>> ListCheckpointsForExperiment(
      int64_t experiment_id) = 0;

  // Checkpoint deletions in flight.
  virtual Result<int64_t> AddGcRequest(const GcRequestRow& row) = 0;
  virtual Result<std::vector<GcRequestRow>> ListGcRequests() = 0;
  virtual Status UpdateGcRequestAttempt(int64_t id, const std::string& error) = 0;
  virtual Status DeleteGcRequest(int64_t id) = 0;

  // Trials linked to the checkpoints they used; adding the same link again is a no-op.
  virtual Status AddTrialSourceInfo(const TrialSourceInfoRow& row) = 0;
  // Links to a checkpoint, by trial id; source_type "" = every type.
  virtual Result<std::vector<TrialSourceInfoRow>> ListTrialSourceInfos(
      const std::string& checkpoint_uuid, const std::string& source_type) = 0;

  // Task logs.
  virtual Status AddTaskLogs(const std::vector<TaskLogRow>& rows) = 0;
  // Logs of a trial with id > after_id, ascending, at most `limit` (0 = all).
  virtual Result<std::vector<TaskLogRow>> ListTrialLogs(int64_t trial_id, int64_t after_id,
                                                        int64_t limit, bool descending) = 0;

  // Model registry (master/store/sqlite/sqlite_store_models.cc).
  // Inserts a model (row.id, num_versions ignored) and returns it as stored; AlreadyExists when
  // the name is taken (names are unique, case-sensitive).
  virtual Result<ModelRow> InsertModel(const ModelRow& row) = 0;
  virtual Result<ModelRow> GetModelById(int64_t id) = 0;
  virtual Result<ModelRow> GetModelByName(const std::string& name) = 0;
  // Every model, by id.
  virtual Result<std::vector<ModelRow>> ListModels() = 0;
  // Writes every field but id, creation_time and num_versions; AlreadyExists on a taken name.
  virtual Status UpdateModel(const ModelRow& row) = 0;
  // Removes the model and its versions in one transaction.
  virtual Status DeleteModel(int64_t id) = 0;
  // Inserts a version numbered one more than the model's highest (1 for the first) in one
  // transaction and returns it as stored.
  virtual Result<ModelVersionRow> InsertModelVersion(const ModelVersionRow& row) = 0;
  virtual Result<ModelVersionRow> GetModelVersion(int64_t model_id, int64_t version) = 0;
  // The model's versions, by version.
  virtual Result<std::vector<ModelVersionRow>> ListModelVersions(int64_t model_id) = 0;
  // Writes name, comment, notes, metadata, labels and last_updated_time.
  virtual Status UpdateModelVersion(const ModelVersionRow& row) = 0;
  virtual Status DeleteModelVersion(int64_t id) = 0;
  // The versions registering any of `uuids`, by id.
  virtual Result<std::vector<ModelVersionRow>> ListModelVersionsForCheckpoints(
      const std::vector<std::string>& uuids) = 0;

  // Profiler: system metrics.
  // Stores the rows of one report in one transaction.
  virtual Status AddSystemMetrics(const std::vector<SystemMetricRow>& rows) = 0;
  // Rows of a trial's group with id > after_id, by id, at most `limit` (0 = all); agent_id ""
  // = every agent.
  virtual Result<std::vector<SystemMetricRow>> ListSystemMetrics(int64_t trial_id,
                                                                 const std::string& group,
                                                                 const std::string& agent_id,
                                                                 int64_t after_id,
                                                                 int64_t limit) = 0;
  // The latest row of each (group, agent) of a trial, by group then agent.
  virtual Result<std::vector<SystemMetricRow>> LatestSystemMetrics(int64_t trial_id) = 0;

  // Config templates (clicompat).
  // Every template, by name.
  virtual Result<std::vector<TemplateRow>> ListTemplates() = 0;
  virtual Result<TemplateRow> GetTemplate(const std::string& name) = 0;
  // AlreadyExists when the name is taken.
  virtual Status InsertTemplate(const TemplateRow& row) = 0;
  // Replaces config and workspace of an existing template; NotFound otherwise.
  virtual Status UpdateTemplate(const TemplateRow& row) = 0;
  // NotFound when there is no such template; AlreadyExists when new_name is taken.
  virtual Status RenameTemplate(const std::string& old_name, const std::string& new_name) = 0;
  virtual Status DeleteTemplate(const std::string& name) = 0;

  // Webhooks (webhook_service.h). Insert fills in the ids of the webhook and its triggers.
  virtual Result<WebhookRow> InsertWebhook(WebhookRow row) = 0;
  virtual Result<std::vector<WebhookRow>> ListWebhooks() = 0;
  // NotFound when there is no such webhook.
  virtual Status UpdateWebhookUrl(int64_t id, const std::string& url) = 0;
  virtual Status DeleteWebhook(int64_t id) = 0;
  // Queues deliveries; one with a dedupe task id already queued or delivered for its trigger is
  // skipped. The count queued.
  virtual Result<int64_t> EnqueueWebhookEvents(const std::vector<WebhookEventRow>& events) = 0;
  // At most `limit` deliveries due at `now`, oldest first.
  virtual Result<std::vector<WebhookEventRow>> DueWebhookEvents(int64_t now, int64_t limit) = 0;
  // A delivery made (or given up): removed. One to try again: its attempts and next time.
  virtual Status DeleteWebhookEvent(int64_t id) = 0;
  virtual Status RescheduleWebhookEvent(int64_t id, int64_t attempts, int64_t next_attempt_at) = 0;

  // The cluster message: Set replaces the one there (if any); nullopt when none is set.
  virtual Result<std::optional<ClusterMessageRow>> GetClusterMessage() = 0;
  virtual Status SetClusterMessage(const ClusterMessageRow& row) = 0;
  virtual Status ClearClusterMessage() = 0;

  // Workspaces, projects and the project of each experiment (clicompat).
  virtual Result<std::vector<WorkspaceRow>> ListWorkspaces() = 0;
  // The new id; AlreadyExists when the name is taken.
  virtual Result<int64_t> InsertWorkspace(const WorkspaceRow& row) = 0;
  // Name, archived, pinned, default pools; NotFound / AlreadyExists.
  virtual Status UpdateWorkspace(const WorkspaceRow& row) = 0;
  // Removes the workspace with its projects, templates and pool bindings (their experiments
  // must be gone).
  virtual Status DeleteWorkspace(int64_t id) = 0;
  // Every pool binding, by pool name and workspace id.
  virtual Result<std::vector<PoolBindingRow>> ListPoolBindings() = 0;
  // In one transaction: with `replace`, the pool's bindings become `add`'s; otherwise `add` is
  // bound (AlreadyExists naming the first binding there already) and `remove` unbound
  // (NotFound naming the first binding not there). Nothing changes on an error.
  virtual Status ChangePoolBindings(const std::string& pool_name,
                                    const std::vector<int64_t>& add,
                                    const std::vector<int64_t>& remove, bool replace) = 0;
  virtual Result<std::vector<ProjectRow>> ListProjects() = 0;
  // The new id; AlreadyExists when the name is taken in the workspace or the key anywhere.
  virtual Result<int64_t> InsertProject(const ProjectRow& row) = 0;
  // Name, description, key, archived, notes, workspace; NotFound / AlreadyExists.
  virtual Status UpdateProject(const ProjectRow& row) = 0;
  virtual Status DeleteProject(int64_t id) = 0;
  // Experiments outside project 1: (experiment id, project id), by experiment id.
  virtual Result<std::vector<std::pair<int64_t, int64_t>>> ListExperimentProjects() = 0;
  // Places an experiment in a project (1 = the default).
  virtual Status SetExperimentProject(int64_t experiment_id, int64_t project_id) = 0;

  // User administration (clicompat): the new id; AlreadyExists when the username is taken.
  virtual Result<int64_t> InsertUser(const UserRow& row) = 0;
  // Username, admin, active and display name; NotFound / AlreadyExists.
  virtual Status UpdateUser(const UserRow& row) = 0;

  // Web UI: experiment list with server-side filtering, sorting and paging.
  // Ids of the experiments matching `filter`, in its order, one page; `total` counts every match.
  virtual Result<std::vector<int64_t>> ListExperimentIds(const ExperimentFilter& filter,
                                                         const Page& page, int64_t* total) = 0;

  // Unmanaged experiments and trials (core_v2). ListNonTerminalExperiments leaves them out.
  // Inserts the experiment and its mark in one transaction. When `external_id` already names an
  // unmanaged experiment, nothing is inserted: that experiment's config (and original config)
  // are replaced by the row's. Returns the id; `*created` says whether it is new.
  virtual Result<int64_t> UpsertUnmanagedExperiment(const ExperimentRow& row,
                                                    const std::string& model_definition,
                                                    const std::optional<std::string>& external_id,
                                                    bool* created) = 0;
  virtual Result<std::vector<UnmanagedExperimentRow>> ListUnmanagedExperiments() = 0;
  // Inserts the trial and its mark (trial_id of `mark` is ignored) in one transaction. When the
  // mark's external id is already used in the experiment, returns that trial instead.
  virtual Result<int64_t> UpsertUnmanagedTrial(const TrialRow& row, const UnmanagedTrialRow& mark,
                                               bool* created) = 0;
  virtual Result<std::vector<UnmanagedTrialRow>> ListUnmanagedTrials() = 0;
  virtual Status TouchUnmanagedTrial(int64_t trial_id, int64_t now) = 0;
  // Marks of ACTIVE unmanaged trials whose last activity is before `before`.
  virtual Result<std::vector<UnmanagedTrialRow>> ListSilentUnmanagedTrials(int64_t before) = 0;

  // Web UI list columns (webui2): one summary per id that names an experiment, by id.
  virtual Result<std::vector<ExperimentSummaryRow>> ListExperimentSummaries(
      const std::vector<int64_t>& experiment_ids) = 0;

  // Metric ingestion (MetricsService): every row with AddMetrics' semantics, in order, in one
  // transaction (one commit, so one sync for the whole batch). Returns one status per row: a
  // row that fails (e.g. its trial does not exist) fails alone and the others commit. This
  // default writes them one by one; backends override it.
  virtual std::vector<Status> AddMetricsBatch(std::span<const MetricRow> rows) {
    std::vector<Status> out;
    out.reserve(rows.size());
    for (const MetricRow& row : rows) out.push_back(AddMetrics(row));
    return out;
  }

  // compat11: trial summary metrics (sqlite_store_compat11.cc). AddMetrics keeps them up to date
  // in the same transaction as the report.
  // {group key: {name: {type, count, sum, min, max, mean, last}}}, {} when the trial reported no
  // metrics; NotFound for an unknown trial. A summary not computed yet (a trial from before
  // migration 0011) is computed from the trial's metric rows and stored.
  virtual Result<nlohmann::json> GetTrialSummaryMetrics(int64_t trial_id) = 0;

  // Scale: bulk import, counts and pages for large lists, downsampled series
  // (master/store/sqlite/sqlite_store_scale.cc).
  // Inserts every row in one transaction, each with its id when nonzero: new rows only, with no
  // report semantics (no merge, no archiving, trial total_batches as given). For imports and
  // benchmarks (bench/store_scale.cc); experiments get `model_definition` and project 1.
  virtual Status BulkInsert(const std::vector<ExperimentRow>& experiments,
                            const std::string& model_definition,
                            const std::vector<TrialRow>& trials,
                            const std::vector<MetricRow>& metrics) = 0;
  virtual Result<int64_t> CountTrials(int64_t experiment_id) = 0;
  // One page of an experiment's trial ids by id (descending when asked); `total` counts all.
  virtual Result<std::vector<int64_t>> ListTrialIds(int64_t experiment_id, const Page& page,
                                                    bool descending, int64_t* total) = 0;
  // At most `max_points` live (unarchived) rows of a trial's group with steps in
  // [start_batches, end_batches], ascending: every row when there are no more, else the rows
  // master/core/downsample.h picks (first and last kept, the rest evenly spread over steps),
  // found with one index seek each, so the cost does not grow with the series.
  virtual Result<std::vector<MetricRow>> SampleMetrics(int64_t trial_id, const std::string& group,
                                                       int64_t start_batches, int64_t end_batches,
                                                       int64_t max_points) = 0;

  // sched: decisions written in one transaction (master/store/decision_writes.h).
  // Applies every write of `writes` or none; returns the ids of its new trials, in order.
  virtual Result<std::vector<int64_t>> ApplyDecision(const DecisionWrites& writes) = 0;

  // searcher: the journal of an experiment's searcher decisions since its last full snapshot
  // (migration 0013; master/server/searcher_journal_service.h says what a record holds).
  // Appends one record; `seq` orders the records (AlreadyExists when it is taken).
  virtual Status AppendSearcherEvent(int64_t experiment_id, int64_t seq,
                                     const std::string& record) = 0;
  // The experiment's records in seq order.
  virtual Result<std::vector<std::pair<int64_t, std::string>>> ListSearcherEvents(
      int64_t experiment_id) = 0;

  // webui12: agents and slots disabled by an operator (migration 0020;
  // sqlite_store_agent_admin.cc). Only disabled ones have a row.
  // Records the agent (slot_id -1) or slot as disabled, or (enabled) forgets it.
  virtual Status SetAgentAdminState(const std::string& agent_id, int64_t slot_id, bool enabled,
                                    bool draining) = 0;
  virtual Result<std::vector<AgentAdminRow>> ListAgentAdminStates() = 0;

  // core13: experiment reads leave the searcher snapshot out (GetExperiment, ListExperiments);
  // these read and write it alone, as serialized JSON text.
  // The stored snapshot text ("{}" when none); NotFound for an unknown experiment.
  virtual Result<std::string> GetExperimentSnapshotText(int64_t id) = 0;
  // UpdateExperimentSnapshot with the JSON already serialized (by a writer outside the master's
  // lock): the snapshot and the truncation of the journal in one transaction.
  virtual Status WriteExperimentSnapshotText(int64_t id, const std::string& snapshot_json) = 0;

  // authz: {user id, expiry} of a live (unexpired, unrevoked) session, so that a cached
  // session ends when its row does.
  virtual Result<std::pair<int64_t, int64_t>> LookupSessionExpiry(const std::string& token,
                                                                  int64_t now) = 0;

  // slurm: the Slurm job of each allocation (migration 0017; slurm_job_row.h).
  // Inserts or replaces the row of row.allocation_id.
  virtual Status UpsertSlurmJob(const SlurmJobRow& row) = 0;
  // Rows not yet ended, by submission.
  virtual Result<std::vector<SlurmJobRow>> ListOpenSlurmJobs() = 0;

  // tasks: commands, notebooks, shells and TensorBoards (migration 0016;
  // master/store/sqlite/sqlite_store_tasks.cc).
  // Inserts the task or replaces every column of its row.
  virtual Status UpsertGenericTask(const GenericTaskRow& row) = 0;
  virtual Result<std::vector<GenericTaskRow>> ListGenericTasks() = 0;
  virtual Status PutGenericTaskContext(const std::string& task_id, const std::string& tgz) = 0;
  // "" when the task has no context directory.
  virtual Result<std::string> GetGenericTaskContext(const std::string& task_id) = 0;
  // The task's log lines with id > after_id, ascending (or the last ones with `descending`).
  virtual Result<std::vector<TaskLogRow>> ListTaskLogsByTask(const std::string& task_id,
                                                             int64_t after_id, int64_t limit,
                                                             bool descending) = 0;

  // tls (agent credentials, migration 0015): the credential each agent id is bound to, as a
  // SHA-256 hex digest of the agent's own key; master/server/agent_credential_service.h.
  // Binds `agent_id` unless it is bound already; returns the digest it is bound to either way.
  virtual Result<std::string> BindAgentCredential(const std::string& agent_id,
                                                  const std::string& key_digest,
                                                  int64_t bound_time) = 0;
  // The digest `agent_id` is bound to; NotFound when it is not bound.
  virtual Result<std::string> GetAgentCredential(const std::string& agent_id) = 0;
  // Forgets the binding (an operator re-keys an agent); NotFound when it is not bound.
  virtual Status DeleteAgentCredential(const std::string& agent_id) = 0;

  // store13: the read path at scale (migration 0021; sqlite_store_validations.cc). A trial's
  // best (by its experiment's searcher metric) and latest unarchived validation reports, kept on
  // the trial row in the transaction that writes the reports; NotFound for an unknown trial.
  virtual Result<TrialValidationReports> GetTrialValidations(int64_t trial_id) = 0;
  // The best searcher metric value of the experiment's trials; nullopt when none reported one.
  virtual Result<std::optional<double>> BestExperimentValidation(int64_t experiment_id,
                                                                 bool smaller_is_better) = 0;

  // reads14: the rows of the views of several trials (a page of an experiment's trials) in a
  // few statements for all of them, not five per trial (sqlite_store_trial_page.cc). In the order
  // of `trial_ids`, an entry for each id that names a trial (once when an id is repeated).
  virtual Result<std::vector<TrialViewRows>> GetTrialViewRows(
      const std::vector<int64_t>& trial_ids) = 0;
};

}  // namespace det::master::store
