// Routes of Determined's API closed by issue #11 (compat11): project notes
// (PUT|POST /api/v1/projects/{id}/notes), DELETE /api/v1/experiments/{id}/tensorboard-files, and
// the check of the workspace options this master does not support.
#include <nlohmann/json.hpp>

#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/server/checkpoint_service.h"
#include "master/server/workspace_service.h"

namespace det::master::api {
namespace {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;

server::HttpResponse NotesResponse(const Result<json>& notes) {
  if (!notes.ok()) return ErrorResponse(notes.status());
  return JsonResponse({{"notes", *notes}});
}

// A value a client sends for an option it leaves unset: nothing, "", {} or [].
bool IsUnset(const json* v) {
  return v == nullptr || v->is_null() || (v->is_string() && v->get<std::string>().empty()) ||
         (v->is_object() && v->empty()) || (v->is_array() && v->empty());
}

}  // namespace

Status RefuseUnsupportedWorkspaceOptions(const json& body) {
  struct Option {
    const char* camel;
    const char* snake;
    const char* why;
  };
  static constexpr Option kOptions[] = {
      {"agentUserGroup", "agent_user_group",
       "agent user groups are not supported: trials run as the user the agent runs as"},
      {"clusterNamespaceMeta", "cluster_namespace_meta",
       "Kubernetes namespaces are Kubernetes-only and this master has no Kubernetes resource "
       "manager"},
      {"clusterQuotaPairs", "cluster_quota_pairs",
       "resource quotas are Kubernetes-only and this master has no Kubernetes resource manager"},
  };
  for (const Option& o : kOptions) {
    const json* v = Field(body, o.camel, o.snake);
    if (!IsUnset(v)) {
      return InvalidArgument(std::string(o.camel) + ": " + o.why + " (got " + v->dump() + ")");
    }
  }
  return Status::Ok();
}

void RegisterCompat11Routes(server::Router* router, server::Master* master) {
  server::WorkspaceService* ws = master->workspaces();

  // PutProjectNotes: {notes: [{name, contents}], projectId} replaces every note.
  router->Add("PUT", "/api/v1/projects/{id}/notes",
              WithAuth(master, ProjectOwner(), [ws](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json* notes = Field(*body, "notes", "notes");
                return NotesResponse(ws->SetProjectNotes(*id, notes ? *notes : json::array()));
              }));

  // AddProjectNote: the body is the note ({name, contents}), appended to the project's notes.
  router->Add("POST", "/api/v1/projects/{id}/notes",
              WithAuth(master, ProjectOwner(), [ws](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                return NotesResponse(ws->AddProjectNote(*id, *body));
              }));

  // DeleteTensorboardFiles: a checkpoint GC request that deletes the experiment's TensorBoard
  // files from its checkpoint storage (retried until done, like every GC request).
  router->Add("DELETE", "/api/v1/experiments/{id}/tensorboard-files",
              WithAuth(master, ExperimentOwner(), [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto exp = master->experiments()->GetExperiment(*id);
                if (!exp.ok()) return ErrorResponse(exp.status());
                Status st = master->checkpoints()->DeleteTensorboardFiles(*id, exp->row.config);
                return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
              }));
}

}  // namespace det::master::api
