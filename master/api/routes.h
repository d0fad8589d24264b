#pragma once
// Registers every HTTP route of the master on a Router. Handlers parse and validate the request,
// call the Master, and render the answer; they never touch the store directly.

#include "master/server/http_server.h"
#include "master/server/master.h"

namespace det::master::api {

void RegisterRoutes(server::Router* router, server::Master* master);

// Groups, each in its own file.
void RegisterAuthRoutes(server::Router* router, server::Master* master);
void RegisterExperimentRoutes(server::Router* router, server::Master* master);
// POST /api/v1/projects/{id}/experiments/{kill,...}: routes_experiment_bulk.cc.
void RegisterExperimentBulkRoutes(server::Router* router, server::Master* master);
void RegisterTrialRoutes(server::Router* router, server::Master* master);
// Downsampled metric series (routes_series.cc); registered before the trial routes, whose
// /trials/{id} would take /trials/time-series.
void RegisterSeriesRoutes(server::Router* router, server::Master* master);
void RegisterAgentRoutes(server::Router* router, server::Master* master);
void RegisterCheckpointRoutes(server::Router* router, server::Master* master);
void RegisterJobRoutes(server::Router* router, server::Master* master);
void RegisterMasterRoutes(server::Router* router, server::Master* master);
void RegisterUserRoutes(server::Router* router, server::Master* master);
void RegisterWorkspaceRoutes(server::Router* router, server::Master* master);
void RegisterTaskRoutes(server::Router* router, server::Master* master);
// Commands, notebooks, shells, TensorBoards (routes_ntsc.cc) and /proxy/{task_id}/
// (routes_proxy.cc).
void RegisterNtscRoutes(server::Router* router, server::Master* master);
void RegisterProxyRoutes(server::Router* router, server::Master* master);
void RegisterWebhookRoutes(server::Router* router, server::Master* master);
// Workspace-resource pool bindings (routes_pool_bindings.cc).
void RegisterPoolBindingRoutes(server::Router* router, server::Master* master);
// GET /resources/allocation/allocations-csv (routes_usage.cc).
void RegisterUsageRoutes(server::Router* router, server::Master* master);
void RegisterModelRoutes(server::Router* router, server::Master* master);
void RegisterUnmanagedRoutes(server::Router* router, server::Master* master);
void RegisterProfilerRoutes(server::Router* router, server::Master* master);
void RegisterTemplateRoutes(server::Router* router, server::Master* master);
// Further routes of the upstream CLI (validation history, ...).
void RegisterParityRoutes(server::Router* router, server::Master* master);
// Project notes, tensorboard-files deletion (routes_compat11.cc).
void RegisterCompat11Routes(server::Router* router, server::Master* master);
// A 400 naming the first workspace option of a create/patch body that this master does not
// support (agent user group, checkpoint storage, default pools, Kubernetes namespaces and
// quotas); unset values ("", {}, null) pass (routes_compat11.cc).
Status RefuseUnsupportedWorkspaceOptions(const nlohmann::json& body);

// The submitted config (YAML) with template `name` merged in, as JSON text (routes_templates.cc).
Result<std::string> ApplyTemplateToConfig(server::Master* master, const std::string& name,
                                          const std::string& config_yaml);
// GET / (a redirect) and /det/... (the web UI's files, master/server/static_files.h).
void RegisterWebUiRoutes(server::Router* router, server::Master* master);
// GET /api/v1/experiments/{id}/file_tree, POST /experiments/{id}/file (routes_experiment_files.cc).
void RegisterExperimentFileRoutes(server::Router* router, server::Master* master);
// POST /api/v1/agents/{id}/enable|disable and slots (routes_agent_admin.cc), and the Agent and
// Slot JSON with their enabled/draining state.
void RegisterAgentAdminRoutes(server::Router* router, server::Master* master);
// GET /api/v1/experiments/{id}/searcher/rungs (routes_rungs.cc).
void RegisterRungRoutes(server::Router* router, server::Master* master);
nlohmann::json AdminAgentJson(server::Master* master, const server::AgentView& a);
nlohmann::json AdminSlotJson(server::Master* master, const server::AgentView& a,
                             const nlohmann::json& slot);

// GET /api/v1/experiments and /projects/{id}/experiments: one page of experiments (offset,
// limit, archived), of one project or (nullopt) all.
server::HttpResponse ListExperimentsResponse(server::Master* master, server::HttpRequest& req,
                                             std::optional<int64_t> project_id);
// ExperimentJson with the project and workspace the experiment is in (routes_workspaces.cc).
nlohmann::json PlacedExperimentJson(server::Master* master, const server::ExperimentView& v);
// An experiment's or task's stored config as the API shows it: storage keys and the master's
// environment variables masked (core::ShownConfig); trials get the stored one.
nlohmann::json ShownConfig(server::Master* master, const nlohmann::json& config);
// What shown configs mask: the master's and every pool's task_container_defaults variables.
nlohmann::json MaskedTaskDefaults(server::Master* master);

// The training block of a checkpoint's JSON (trial, experiment, config, metrics at its step).
nlohmann::json CheckpointTrainingJson(server::Master* master, const store::CheckpointRow& c);
// One line of a task-logs body (camelCase or snake_case fields, already checked), authorized for
// `who`: a user's line names its unmanaged trial by task id (routes_trials.cc).
Result<store::TaskLogRow> TaskLogRowOf(server::Master* master, const server::Principal& who,
                                       const nlohmann::json& line);
// One trialv1.MetricsReport.
nlohmann::json MetricsReportJsonOf(const store::MetricRow& m);

// POST /api/v1/experiments with unmanaged: true, and PUT /experiments/by-external-id/{id}: a
// core_v2 script's experiment (routes_unmanaged.cc).
server::HttpResponse CreateUnmanagedExperimentResponse(
    server::Master* master, const nlohmann::json& body, const server::Principal& who,
    const std::optional<std::string>& external_id);

// An error for an unmanaged experiment, which only its script can run (activate, pause).
Status RefuseIfUnmanaged(server::Master* master, int64_t experiment_id, const char* action);

// POST /api/v1/trials/{id}/metrics of a system group (cpu, gpu, memory, disk, network): a
// profiler report, stored by the ProfilerService (no stepsCompleted needed).
server::HttpResponse ReportSystemMetricsResponse(server::Master* master,
                                                 const server::Principal& who, int64_t trial_id,
                                                 const std::string& group,
                                                 const nlohmann::json& metrics);

}  // namespace det::master::api
