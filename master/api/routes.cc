#include "master/api/routes.h"

namespace det::master::api {

void RegisterRoutes(server::Router* router, server::Master* master) {
  RegisterAuthRoutes(router, master);
  RegisterExperimentRoutes(router, master);
  RegisterExperimentBulkRoutes(router, master);
  RegisterSeriesRoutes(router, master);
  RegisterTrialRoutes(router, master);
  RegisterAgentRoutes(router, master);
  RegisterCheckpointRoutes(router, master);
  RegisterJobRoutes(router, master);
  RegisterMasterRoutes(router, master);
  RegisterUserRoutes(router, master);
  RegisterWorkspaceRoutes(router, master);
  RegisterTaskRoutes(router, master);
  RegisterNtscRoutes(router, master);
  RegisterProxyRoutes(router, master);
  RegisterWebhookRoutes(router, master);
  RegisterPoolBindingRoutes(router, master);
  RegisterUsageRoutes(router, master);
  RegisterModelRoutes(router, master);
  RegisterUnmanagedRoutes(router, master);
  RegisterProfilerRoutes(router, master);
  RegisterTemplateRoutes(router, master);
  RegisterParityRoutes(router, master);
  RegisterCompat11Routes(router, master);
  RegisterWebUiRoutes(router, master);
  RegisterExperimentFileRoutes(router, master);
  RegisterAgentAdminRoutes(router, master);
  RegisterRungRoutes(router, master);
}

}  // namespace det::master::api
