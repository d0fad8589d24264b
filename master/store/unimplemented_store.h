#pragma once
// UnimplementedStore: a Store whose every method answers Unimplemented naming itself. Test fakes
// derive from it and implement only what the code under test uses (e.g.
// master/server/fake_runtime_store.h), so a test fails loudly, not silently, when that code
// starts using another method. A method added to Store is added here too.

#include "master/store/store.h"

namespace det::master::store {

class UnimplementedStore : public Store {
 public:
  Result<std::string> GetOrCreateClusterId(const std::string& fresh_id) override {
    return Unimplemented("GetOrCreateClusterId");
  }
  Result<UserRow> GetUserByName(const std::string& username) override {
    return Unimplemented("GetUserByName");
  }
  Result<UserRow> GetUserById(int64_t id) override {
    return Unimplemented("GetUserById");
  }
  Result<std::vector<UserRow>> ListUsers() override {
    return Unimplemented("ListUsers");
  }
  Status SetUserPassword(int64_t user_id, const std::optional<std::string>& hash) override {
    return Unimplemented("SetUserPassword");
  }
  Result<bool> EnsureBuiltinUsers(const std::optional<std::string>& initial_hash) override {
    return Unimplemented("EnsureBuiltinUsers");
  }
  Status CreateSession(const std::string& token, int64_t user_id, int64_t expiry) override {
    return Unimplemented("CreateSession");
  }
  Result<int64_t> LookupSession(const std::string& token, int64_t now) override {
    return Unimplemented("LookupSession");
  }
  Status RevokeSession(const std::string& token) override {
    return Unimplemented("RevokeSession");
  }
  Result<int64_t> InsertExperiment(const ExperimentRow& row,
      const std::string& model_definition) override {
    return Unimplemented("InsertExperiment");
  }
  Result<ExperimentRow> GetExperiment(int64_t id) override {
    return Unimplemented("GetExperiment");
  }
  Result<std::vector<ExperimentRow>> ListExperiments(std::optional<bool> archived, const Page& page,
      int64_t* total) override {
    return Unimplemented("ListExperiments");
  }
  Result<std::vector<ExperimentRow>> ListNonTerminalExperiments() override {
    return Unimplemented("ListNonTerminalExperiments");
  }
  Result<std::string> GetModelDefinition(int64_t experiment_id) override {
    return Unimplemented("GetModelDefinition");
  }
  Status UpdateExperimentState(int64_t id, const std::string& state,
      std::optional<int64_t> end_time) override {
    return Unimplemented("UpdateExperimentState");
  }
  Status UpdateExperimentProgress(int64_t id, double progress) override {
    return Unimplemented("UpdateExperimentProgress");
  }
  Status UpdateExperimentSnapshot(int64_t id, const nlohmann::json& snapshot) override {
    return Unimplemented("UpdateExperimentSnapshot");
  }
  Status UpdateExperimentMeta(int64_t id, const nlohmann::json& config, bool archived,
      const std::string& notes) override {
    return Unimplemented("UpdateExperimentMeta");
  }
  Status DeleteExperiment(int64_t id) override {
    return Unimplemented("DeleteExperiment");
  }
  Result<int64_t> InsertTrial(const TrialRow& row) override {
    return Unimplemented("InsertTrial");
  }
  Result<TrialRow> GetTrial(int64_t id) override {
    return Unimplemented("GetTrial");
  }
  Result<std::vector<TrialRow>> ListTrials(int64_t experiment_id) override {
    return Unimplemented("ListTrials");
  }
  Status UpdateTrial(const TrialRow& row) override {
    return Unimplemented("UpdateTrial");
  }
  Status UpsertAllocation(const AllocationRow& row) override {
    return Unimplemented("UpsertAllocation");
  }
  Result<AllocationRow> GetAllocation(const std::string& allocation_id) override {
    return Unimplemented("GetAllocation");
  }
  Result<AllocationRow> GetAllocationByToken(const std::string& token) override {
    return Unimplemented("GetAllocationByToken");
  }
  Result<std::vector<AllocationRow>> ListOpenAllocations() override {
    return Unimplemented("ListOpenAllocations");
  }
  Result<std::vector<std::string>> ListTaskIds(int64_t trial_id) override {
    return Unimplemented("ListTaskIds");
  }
  Result<std::vector<std::string>> ListExperimentAllocationIds(int64_t experiment_id) override {
    return Unimplemented("ListExperimentAllocationIds");
  }
  Status AddMetrics(const MetricRow& row) override {
    return Unimplemented("AddMetrics");
  }
  Result<std::vector<MetricRow>> ListMetrics(int64_t trial_id, const std::string& group) override {
    return Unimplemented("ListMetrics");
  }
  Status AddCheckpoint(const CheckpointRow& row) override {
    return Unimplemented("AddCheckpoint");
  }
  Result<CheckpointRow> GetCheckpoint(const std::string& uuid) override {
    return Unimplemented("GetCheckpoint");
  }
  Result<std::vector<CheckpointRow>> ListCheckpointsForTrial(int64_t trial_id) override {
    return Unimplemented("ListCheckpointsForTrial");
  }
  Result<std::vector<CheckpointRow>> ListCheckpointsForExperiment( int64_t experiment_id) override {
    return Unimplemented("ListCheckpointsForExperiment");
  }
  Result<int64_t> AddGcRequest(const GcRequestRow& row) override {
    return Unimplemented("AddGcRequest");
  }
  Result<std::vector<GcRequestRow>> ListGcRequests() override {
    return Unimplemented("ListGcRequests");
  }
  Status UpdateGcRequestAttempt(int64_t id, const std::string& error) override {
    return Unimplemented("UpdateGcRequestAttempt");
  }
  Status DeleteGcRequest(int64_t id) override {
    return Unimplemented("DeleteGcRequest");
  }
  Status AddTrialSourceInfo(const TrialSourceInfoRow& row) override {
    return Unimplemented("AddTrialSourceInfo");
  }
  Result<std::vector<TrialSourceInfoRow>> ListTrialSourceInfos(const std::string& checkpoint_uuid,
      const std::string& source_type) override {
    return Unimplemented("ListTrialSourceInfos");
  }
  Status AddTaskLogs(const std::vector<TaskLogRow>& rows) override {
    return Unimplemented("AddTaskLogs");
  }
  Result<std::vector<TaskLogRow>> ListTrialLogs(int64_t trial_id, int64_t after_id, int64_t limit,
      bool descending) override {
    return Unimplemented("ListTrialLogs");
  }
  Result<ModelRow> InsertModel(const ModelRow& row) override {
    return Unimplemented("InsertModel");
  }
  Result<ModelRow> GetModelById(int64_t id) override {
    return Unimplemented("GetModelById");
  }
  Result<ModelRow> GetModelByName(const std::string& name) override {
    return Unimplemented("GetModelByName");
  }
  Result<std::vector<ModelRow>> ListModels() override {
    return Unimplemented("ListModels");
  }
  Status UpdateModel(const ModelRow& row) override {
    return Unimplemented("UpdateModel");
  }
  Status DeleteModel(int64_t id) override {
    return Unimplemented("DeleteModel");
  }
  Result<ModelVersionRow> InsertModelVersion(const ModelVersionRow& row) override {
    return Unimplemented("InsertModelVersion");
  }
  Result<ModelVersionRow> GetModelVersion(int64_t model_id, int64_t version) override {
    return Unimplemented("GetModelVersion");
  }
  Result<std::vector<ModelVersionRow>> ListModelVersions(int64_t model_id) override {
    return Unimplemented("ListModelVersions");
  }
  Status UpdateModelVersion(const ModelVersionRow& row) override {
    return Unimplemented("UpdateModelVersion");
  }
  Status DeleteModelVersion(int64_t id) override {
    return Unimplemented("DeleteModelVersion");
  }
  Result<std::vector<ModelVersionRow>> ListModelVersionsForCheckpoints(
      const std::vector<std::string>& uuids) override {
    return Unimplemented("ListModelVersionsForCheckpoints");
  }
  Status AddSystemMetrics(const std::vector<SystemMetricRow>& rows) override {
    return Unimplemented("AddSystemMetrics");
  }
  Result<std::vector<SystemMetricRow>> ListSystemMetrics(int64_t trial_id, const std::string& group,
      const std::string& agent_id, int64_t after_id, int64_t limit) override {
    return Unimplemented("ListSystemMetrics");
  }
  Result<std::vector<SystemMetricRow>> LatestSystemMetrics(int64_t trial_id) override {
    return Unimplemented("LatestSystemMetrics");
  }
  Result<std::optional<ClusterMessageRow>> GetClusterMessage() override {
    return Unimplemented("GetClusterMessage");
  }
  Status SetClusterMessage(const ClusterMessageRow&) override {
    return Unimplemented("SetClusterMessage");
  }
  Status ClearClusterMessage() override { return Unimplemented("ClearClusterMessage"); }
  Result<WebhookRow> InsertWebhook(WebhookRow) override { return Unimplemented("InsertWebhook"); }
  Result<std::vector<WebhookRow>> ListWebhooks() override { return Unimplemented("ListWebhooks"); }
  Status SetUserWebSettings(int64_t, const std::vector<UserWebSettingRow>&, int64_t) override {
    return Unimplemented("SetUserWebSettings");
  }
  Result<std::vector<UserWebSettingRow>> ListUserWebSettings(int64_t) override {
    return Unimplemented("ListUserWebSettings");
  }
  Status ResetUserWebSettings(int64_t) override { return Unimplemented("ResetUserWebSettings"); }
  Result<std::vector<PoolBindingRow>> ListPoolBindings() override {
    return Unimplemented("ListPoolBindings");
  }
  Status ChangePoolBindings(const std::string&, const std::vector<int64_t>&,
                            const std::vector<int64_t>&, bool) override {
    return Unimplemented("ChangePoolBindings");
  }
  Result<std::vector<AllocationUsageRow>> ListAllocationUsage(int64_t, int64_t, int64_t, int64_t) override {
    return Unimplemented("ListAllocationUsage");
  }
  Status UpdateWebhookUrl(int64_t, const std::string&) override {
    return Unimplemented("UpdateWebhookUrl");
  }
  Status DeleteWebhook(int64_t) override { return Unimplemented("DeleteWebhook"); }
  Result<int64_t> EnqueueWebhookEvents(const std::vector<WebhookEventRow>&) override {
    return Unimplemented("EnqueueWebhookEvents");
  }
  Result<std::vector<WebhookEventRow>> DueWebhookEvents(int64_t, int64_t) override {
    return Unimplemented("DueWebhookEvents");
  }
  Status DeleteWebhookEvent(int64_t) override { return Unimplemented("DeleteWebhookEvent"); }
  Status RescheduleWebhookEvent(int64_t, int64_t, int64_t) override {
    return Unimplemented("RescheduleWebhookEvent");
  }
  Result<std::vector<TemplateRow>> ListTemplates() override {
    return Unimplemented("ListTemplates");
  }
  Result<TemplateRow> GetTemplate(const std::string& name) override {
    return Unimplemented("GetTemplate");
  }
  Status InsertTemplate(const TemplateRow& row) override {
    return Unimplemented("InsertTemplate");
  }
  Status UpdateTemplate(const TemplateRow& row) override {
    return Unimplemented("UpdateTemplate");
  }
  Status RenameTemplate(const std::string& old_name, const std::string& new_name) override {
    return Unimplemented("RenameTemplate");
  }
  Status DeleteTemplate(const std::string& name) override {
    return Unimplemented("DeleteTemplate");
  }
  Result<std::vector<WorkspaceRow>> ListWorkspaces() override {
    return Unimplemented("ListWorkspaces");
  }
  Result<int64_t> InsertWorkspace(const WorkspaceRow& row) override {
    return Unimplemented("InsertWorkspace");
  }
  Status UpdateWorkspace(const WorkspaceRow& row) override {
    return Unimplemented("UpdateWorkspace");
  }
  Status DeleteWorkspace(int64_t id) override {
    return Unimplemented("DeleteWorkspace");
  }
  Result<std::vector<ProjectRow>> ListProjects() override {
    return Unimplemented("ListProjects");
  }
  Result<int64_t> InsertProject(const ProjectRow& row) override {
    return Unimplemented("InsertProject");
  }
  Status UpdateProject(const ProjectRow& row) override {
    return Unimplemented("UpdateProject");
  }
  Status DeleteProject(int64_t id) override {
    return Unimplemented("DeleteProject");
  }
  Result<std::vector<std::pair<int64_t, int64_t>>> ListExperimentProjects() override {
    return Unimplemented("ListExperimentProjects");
  }
  Status SetExperimentProject(int64_t experiment_id, int64_t project_id) override {
    return Unimplemented("SetExperimentProject");
  }
  Result<int64_t> InsertUser(const UserRow& row) override {
    return Unimplemented("InsertUser");
  }
  Status UpdateUser(const UserRow& row) override {
    return Unimplemented("UpdateUser");
  }
  Result<std::vector<int64_t>> ListExperimentIds(const ExperimentFilter& filter, const Page& page,
      int64_t* total) override {
    return Unimplemented("ListExperimentIds");
  }
  Result<int64_t> UpsertUnmanagedExperiment(const ExperimentRow& row,
      const std::string& model_definition, const std::optional<std::string>& external_id,
      bool* created) override {
    return Unimplemented("UpsertUnmanagedExperiment");
  }
  Result<std::vector<UnmanagedExperimentRow>> ListUnmanagedExperiments() override {
    return Unimplemented("ListUnmanagedExperiments");
  }
  Result<int64_t> UpsertUnmanagedTrial(const TrialRow& row, const UnmanagedTrialRow& mark,
      bool* created) override {
    return Unimplemented("UpsertUnmanagedTrial");
  }
  Result<std::vector<UnmanagedTrialRow>> ListUnmanagedTrials() override {
    return Unimplemented("ListUnmanagedTrials");
  }
  Status TouchUnmanagedTrial(int64_t trial_id, int64_t now) override {
    return Unimplemented("TouchUnmanagedTrial");
  }
  Result<std::vector<UnmanagedTrialRow>> ListSilentUnmanagedTrials(int64_t before) override {
    return Unimplemented("ListSilentUnmanagedTrials");
  }
  Result<std::vector<ExperimentSummaryRow>> ListExperimentSummaries(
      const std::vector<int64_t>& experiment_ids) override {
    return Unimplemented("ListExperimentSummaries");
  }
  Result<nlohmann::json> GetTrialSummaryMetrics(int64_t trial_id) override {
    return Unimplemented("GetTrialSummaryMetrics");
  }
  Status BulkInsert(const std::vector<ExperimentRow>& experiments,
      const std::string& model_definition, const std::vector<TrialRow>& trials,
      const std::vector<MetricRow>& metrics) override {
    return Unimplemented("BulkInsert");
  }
  Result<int64_t> CountTrials(int64_t experiment_id) override {
    return Unimplemented("CountTrials");
  }
  Result<std::vector<int64_t>> ListTrialIds(int64_t experiment_id, const Page& page,
      bool descending, int64_t* total) override {
    return Unimplemented("ListTrialIds");
  }
  Result<std::vector<MetricRow>> SampleMetrics(int64_t trial_id, const std::string& group,
      int64_t start_batches, int64_t end_batches, int64_t max_points) override {
    return Unimplemented("SampleMetrics");
  }
  Result<std::vector<int64_t>> ApplyDecision(const DecisionWrites& writes) override {
    return Unimplemented("ApplyDecision");
  }
  Status AppendSearcherEvent(int64_t experiment_id, int64_t seq,
      const std::string& record) override {
    return Unimplemented("AppendSearcherEvent");
  }
  Result<std::vector<std::pair<int64_t, std::string>>> ListSearcherEvents(
      int64_t experiment_id) override {
    return Unimplemented("ListSearcherEvents");
  }
  Status SetAgentAdminState(const std::string& agent_id, int64_t slot_id, bool enabled,
      bool draining) override {
    return Unimplemented("SetAgentAdminState");
  }
  Result<std::vector<AgentAdminRow>> ListAgentAdminStates() override {
    return Unimplemented("ListAgentAdminStates");
  }
  Result<std::string> GetExperimentSnapshotText(int64_t id) override {
    return Unimplemented("GetExperimentSnapshotText");
  }
  Status WriteExperimentSnapshotText(int64_t id, const std::string& snapshot_json) override {
    return Unimplemented("WriteExperimentSnapshotText");
  }
  Result<std::pair<int64_t, int64_t>> LookupSessionExpiry(const std::string& token,
      int64_t now) override {
    return Unimplemented("LookupSessionExpiry");
  }
  Status UpsertSlurmJob(const SlurmJobRow& row) override {
    return Unimplemented("UpsertSlurmJob");
  }
  Result<std::vector<SlurmJobRow>> ListOpenSlurmJobs() override {
    return Unimplemented("ListOpenSlurmJobs");
  }
  Status UpsertGenericTask(const GenericTaskRow& row) override {
    return Unimplemented("UpsertGenericTask");
  }
  Result<std::vector<GenericTaskRow>> ListGenericTasks() override {
    return Unimplemented("ListGenericTasks");
  }
  Status PutGenericTaskContext(const std::string& task_id, const std::string& tgz) override {
    return Unimplemented("PutGenericTaskContext");
  }
  Result<std::string> GetGenericTaskContext(const std::string& task_id) override {
    return Unimplemented("GetGenericTaskContext");
  }
  Result<std::vector<TaskLogRow>> ListTaskLogsByTask(const std::string& task_id, int64_t after_id,
      int64_t limit, bool descending) override {
    return Unimplemented("ListTaskLogsByTask");
  }
  Result<std::string> BindAgentCredential(const std::string& agent_id,
      const std::string& key_digest, int64_t bound_time) override {
    return Unimplemented("BindAgentCredential");
  }
  Result<std::string> GetAgentCredential(const std::string& agent_id) override {
    return Unimplemented("GetAgentCredential");
  }
  Status DeleteAgentCredential(const std::string& agent_id) override {
    return Unimplemented("DeleteAgentCredential");
  }
  Result<TrialValidationReports> GetTrialValidations(int64_t trial_id) override {
    return Unimplemented("GetTrialValidations");
  }
  Result<std::optional<double>> BestExperimentValidation(int64_t experiment_id,
      bool smaller_is_better) override {
    return Unimplemented("BestExperimentValidation");
  }
  Result<std::vector<TrialViewRows>> GetTrialViewRows(
      const std::vector<int64_t>& trial_ids) override {
    return Unimplemented("GetTrialViewRows");
  }
};

}  // namespace det::master::store
