// The rung view of an adaptive search (web UI, not a Determined route):
//   GET /api/v1/experiments/{id}/searcher/rungs
//     -> {"searcher", "smallerIsBetter", "brackets": [{"index", "maxTrials", "rungs": [{"index",
//         "length", "trials": [{"trialId", "requestId", "metric", "outcome"}]}]}]}
// From the experiment's searcher (ExperimentService::SearcherRungs); 400 for searchers without
// rungs.
#include "master/api/route_helpers.h"
#include "master/api/routes.h"

namespace det::master::api {

using server::HttpRequest;
using server::Principal;

void RegisterRungRoutes(server::Router* router, server::Master* master) {
  router->Add("GET", "/api/v1/experiments/{id}/searcher/rungs",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto rungs = master->experiments()->SearcherRungs(*id);
                if (!rungs.ok()) return ErrorResponse(rungs.status());
                return JsonResponse(*rungs);
              }));
}

}  // namespace det::master::api
