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
void RegisterTrialRoutes(server::Router* router, server::Master* master);
void RegisterAgentRoutes(server::Router* router, server::Master* master);
void RegisterCheckpointRoutes(server::Router* router, server::Master* master);
void RegisterJobRoutes(server::Router* router, server::Master* master);
void RegisterMasterRoutes(server::Router* router, server::Master* master);
void RegisterUserRoutes(server::Router* router, server::Master* master);
void RegisterWorkspaceRoutes(server::Router* router, server::Master* master);
void RegisterTaskRoutes(server::Router* router, server::Master* master);
void RegisterWebhookRoutes(server::Router* router, server::Master* master);
void RegisterModelRoutes(server::Router* router, server::Master* master);
void RegisterProfilerRoutes(server::Router* router, server::Master* master);

// GET /api/v1/experiments and /projects/{id}/experiments: one page of experiments (offset,
// limit, archived); `in_project` false answers an empty page (an unknown project).
server::HttpResponse ListExperimentsResponse(server::Master* master, server::HttpRequest& req,
                                             bool in_project);

// The training block of a checkpoint's JSON (trial, experiment, config, metrics at its step).
nlohmann::json CheckpointTrainingJson(server::Master* master, const store::CheckpointRow& c);
// One trialv1.MetricsReport.
nlohmann::json MetricsReportJsonOf(const store::MetricRow& m);
// POST /api/v1/trials/{id}/metrics of a system group (cpu, gpu, memory, disk, network): a
// profiler report, stored by the ProfilerService (no stepsCompleted needed).
server::HttpResponse ReportSystemMetricsResponse(server::Master* master,
                                                 const server::Principal& who, int64_t trial_id,
                                                 const std::string& group,
                                                 const nlohmann::json& metrics);

}  // namespace det::master::api
