// The experiment's code as Determined's UI reads it: GET /api/v1/experiments/{id}/file_tree
// ({"files": [FileNode]}) and POST /api/v1/experiments/{id}/file {"path"} ({"file": base64}).
#include "common/base64.h"
#include "master/api/file_tree.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;

namespace {

Result<std::vector<ArchiveEntry>> ContextOf(server::Master* master, int64_t experiment_id) {
  DET_RETURN_IF_ERROR(master->experiments()->GetExperiment(experiment_id).status());
  DET_ASSIGN_OR_RETURN(std::string tgz, master->experiments()->GetModelDefinition(experiment_id));
  if (tgz.empty()) return std::vector<ArchiveEntry>{};
  return ReadArchive(tgz);
}

}  // namespace

void RegisterExperimentFileRoutes(server::Router* router, server::Master* master) {
  router->Add("GET", "/api/v1/experiments/{id}/file_tree",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto files = ContextOf(master, *id);
                if (!files.ok()) return ErrorResponse(files.status());
                return JsonResponse({{"files", FileTreeJson(*files)}});
              }));

  router->Add("POST", "/api/v1/experiments/{id}/file",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json* path = Field(*body, "path", "path");
                if (path == nullptr || !path->is_string()) {
                  return ErrorResponse(InvalidArgument("path: required, the file's path"));
                }
                auto files = ContextOf(master, *id);
                if (!files.ok()) return ErrorResponse(files.status());
                auto content = FileContent(*files, path->get<std::string>());
                if (!content.ok()) return ErrorResponse(content.status());
                return JsonResponse({{"file", Base64Encode(*content)}});
              }));
}

}  // namespace det::master::api
