// The model registry: /api/v1/models..., /api/v1/model/labels. Parsing and rendering only; the
// rules live in server::ModelService. {modelName} is a model's name, or its id when all digits.
#include "common/clock.h"
#include "common/whole_int64.h"
#include "master/api/json_views.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;
using server::ModelCaller;
using server::ModelService;
using server::ModelVersionView;
using server::ModelView;
using server::Principal;

namespace {

json ModelJson(const ModelView& m) {
  const store::ModelRow& r = m.row;
  return json{{"id", r.id},
              {"name", r.name},
              {"description", r.description},
              {"notes", r.notes},
              {"metadata", r.metadata},
              {"labels", r.labels},
              {"creationTime", FormatRfc3339(r.creation_time)},
              {"lastUpdatedTime", FormatRfc3339(r.last_updated_time)},
              {"numVersions", r.num_versions},
              {"username", m.username},
              {"userId", r.user_id},
              {"workspaceId", r.workspace_id},
              {"archived", r.archived}};
}

json VersionJson(server::Master* master, const ModelVersionView& v) {
  const store::ModelVersionRow& r = v.row;
  return json{
      {"id", r.id},
      {"model", ModelJson(v.model)},
      {"checkpoint", CheckpointJson(v.checkpoint, CheckpointTrainingJson(master, v.checkpoint))},
      {"version", r.version},
      {"creationTime", FormatRfc3339(r.creation_time)},
      {"lastUpdatedTime", FormatRfc3339(r.last_updated_time)},
      {"name", r.name},
      {"comment", r.comment},
      {"notes", r.notes},
      {"metadata", r.metadata},
      {"labels", r.labels},
      {"username", v.username},
      {"userId", r.user_id}};
}

ModelCaller CallerOf(const Principal& who) { return ModelCaller{who.user_id, who.admin}; }

Result<std::string> StringField(const json& body, const char* camel, const char* snake) {
  const json* v = Field(body, camel, snake);
  if (v == nullptr || v->is_null()) return std::string();
  if (!v->is_string()) {
    return InvalidArgument(std::string(camel) + ": must be a string (got " + v->dump() + ")");
  }
  return v->get<std::string>();
}

Result<std::optional<int64_t>> IntField(const json& body, const char* camel, const char* snake) {
  const json* v = Field(body, camel, snake);
  if (v == nullptr || v->is_null()) return std::optional<int64_t>();
  if (v->is_number_integer()) return std::optional<int64_t>(v->get<int64_t>());
  // proto3 JSON also allows integers as strings.
  if (v->is_string()) {
    if (std::optional<int64_t> n = WholeInt64(v->get<std::string>())) return n;
  }
  return InvalidArgument(std::string(camel) + ": must be an integer (got " + v->dump() + ")");
}

Result<std::vector<int64_t>> QueryInts(const HttpRequest& req, const char* name) {
  std::vector<int64_t> out;
  for (const auto& s : req.QueryAll(name)) {
    std::optional<int64_t> n = WholeInt64(s);
    if (!n) return InvalidArgument(std::string(name) + ": must be integers (got '" + s + "')");
    out.push_back(*n);
  }
  return out;
}

Result<std::optional<bool>> QueryOptBool(const HttpRequest& req, const char* name) {
  std::string v = req.Query(name);
  if (v.empty()) return std::optional<bool>();
  if (v == "true" || v == "1") return std::optional<bool>(true);
  if (v == "false" || v == "0") return std::optional<bool>(false);
  return InvalidArgument(std::string(name) + ": must be true or false (got '" + v + "')");
}

Result<server::ModelQuery> ParseModelQuery(const HttpRequest& req) {
  server::ModelQuery q;
  q.sort_by = req.Query("sortBy");
  q.order_by = req.Query("orderBy");
  DET_ASSIGN_OR_RETURN(int64_t id, QueryInt(req, "id", 0));
  if (id != 0) q.id = id;
  q.name = req.Query("name");
  q.description = req.Query("description");
  q.labels = req.QueryAll("labels");
  DET_ASSIGN_OR_RETURN(q.archived, QueryOptBool(req, "archived"));
  q.users = req.QueryAll("users");
  DET_ASSIGN_OR_RETURN(q.user_ids, QueryInts(req, "userIds"));
  DET_ASSIGN_OR_RETURN(q.workspace_ids, QueryInts(req, "workspaceIds"));
  q.workspace_names = req.QueryAll("workspaceNames");
  return q;
}

Result<server::CreateModelRequest> ParseCreate(const json& body) {
  server::CreateModelRequest r;
  DET_ASSIGN_OR_RETURN(r.name, StringField(body, "name", "name"));
  if (r.name.empty()) return InvalidArgument("name: required");
  DET_ASSIGN_OR_RETURN(r.description, StringField(body, "description", "description"));
  DET_ASSIGN_OR_RETURN(r.notes, StringField(body, "notes", "notes"));
  if (const json* md = Field(body, "metadata", "metadata"); md != nullptr) r.metadata = *md;
  if (const json* l = Field(body, "labels", "labels"); l != nullptr) r.labels = *l;
  DET_ASSIGN_OR_RETURN(r.workspace_id, IntField(body, "workspaceId", "workspace_id"));
  const json* wn = Field(body, "workspaceName", "workspace_name");
  if (wn != nullptr && !wn->is_null()) {
    DET_ASSIGN_OR_RETURN(std::string name, StringField(body, "workspaceName", "workspace_name"));
    r.workspace_name = name;
  }
  return r;
}

Result<server::RegisterVersionRequest> ParseRegister(const json& body) {
  server::RegisterVersionRequest r;
  DET_ASSIGN_OR_RETURN(r.checkpoint_uuid, StringField(body, "checkpointUuid", "checkpoint_uuid"));
  DET_ASSIGN_OR_RETURN(r.name, StringField(body, "name", "name"));
  DET_ASSIGN_OR_RETURN(r.comment, StringField(body, "comment", "comment"));
  DET_ASSIGN_OR_RETURN(r.notes, StringField(body, "notes", "notes"));
  if (const json* md = Field(body, "metadata", "metadata"); md != nullptr) r.metadata = *md;
  if (const json* l = Field(body, "labels", "labels"); l != nullptr) r.labels = *l;
  return r;
}

// PATCH bodies: Determined's clients send the PatchModel / PatchModelVersion object itself; a
// body wrapping it under `model` / `modelVersion` is accepted too. snake_case keys become
// camelCase.
json PatchBody(json body, const char* wrapper) {
  if (body.contains(wrapper) && body[wrapper].is_object()) body = body[wrapper];
  if (body.contains("workspace_id") && !body.contains("workspaceId")) {
    body["workspaceId"] = body["workspace_id"];
  }
  if (body.contains("workspace_name") && !body.contains("workspaceName")) {
    body["workspaceName"] = body["workspace_name"];
  }
  if (body.contains("workspaceId") && body["workspaceId"].is_string()) {
    // Not a number: left a string, for the field's own check to name it.
    if (std::optional<int64_t> n = WholeInt64(body["workspaceId"].get<std::string>())) {
      body["workspaceId"] = *n;
    }
  }
  return body;
}

// Runs `fn(body)` on the parsed body, answering its error or `ok(result)`.
template <typename F>
HttpResponse WithBody(const HttpRequest& req, F fn) {
  Result<json> body = ParseBody(req);
  if (!body.ok()) return ErrorResponse(body.status());
  if (!body->is_object()) return ErrorResponse(InvalidArgument("body: must be a JSON object"));
  return fn(*body);
}

HttpResponse EmptyOr(const Status& st) {
  return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
}

}  // namespace

void RegisterModelRoutes(server::Router* router, server::Master* master) {
  ModelService* models = master->models();

  router->Add("GET", "/api/v1/models",
              WithAuth(master, Auth::kUser, [models](HttpRequest& req, const Principal&) {
                auto q = ParseModelQuery(req);
                if (!q.ok()) return ErrorResponse(q.status());
                auto list = models->List(*q);
                if (!list.ok()) return ErrorResponse(list.status());
                json items = json::array();
                for (const auto& m : *list) items.push_back(ModelJson(m));
                auto page = Paginate(req, items, "models");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));

  router->Add("POST", "/api/v1/models",
              WithAuth(master, Create(), [models](HttpRequest& req, const Principal& who) {
                return WithBody(req, [&](const json& body) {
                  auto create = ParseCreate(body);
                  if (!create.ok()) return ErrorResponse(create.status());
                  auto m = models->Create(*create, CallerOf(who));
                  if (!m.ok()) return ErrorResponse(m.status());
                  return JsonResponse({{"model", ModelJson(*m)}});
                });
              }));

  router->Add("GET", "/api/v1/model/labels",
              WithAuth(master, Auth::kUser, [models](HttpRequest& req, const Principal&) {
                auto ws = QueryInt(req, "workspaceId", 0);
                if (!ws.ok()) return ErrorResponse(ws.status());
                auto labels = models->Labels(*ws > 0 ? std::optional<int64_t>(*ws) : std::nullopt);
                if (!labels.ok()) return ErrorResponse(labels.status());
                return JsonResponse({{"labels", *labels}});
              }));

  router->Add("GET", "/api/v1/models/{modelName}",
              WithAuth(master, Auth::kUser, [models](HttpRequest& req, const Principal&) {
                auto m = models->Get(req.params["modelName"]);
                if (!m.ok()) return ErrorResponse(m.status());
                return JsonResponse({{"model", ModelJson(*m)}});
              }));

  router->Add("PATCH", "/api/v1/models/{modelName}",
              WithAuth(master, EditShared(), [models](HttpRequest& req, const Principal&) {
                return WithBody(req, [&](const json& body) {
                  auto m = models->Patch(req.params["modelName"], PatchBody(body, "model"));
                  if (!m.ok()) return ErrorResponse(m.status());
                  return JsonResponse({{"model", ModelJson(*m)}});
                });
              }));

  router->Add("DELETE", "/api/v1/models/{modelName}",
              WithAuth(master, Checked(core::Action::kModify), [models](HttpRequest& req, const Principal& who) {
                return EmptyOr(models->Delete(req.params["modelName"], CallerOf(who)));
              }));

  router->Add("POST", "/api/v1/models/{modelName}/archive",
              WithAuth(master, EditShared(), [models](HttpRequest& req, const Principal&) {
                return EmptyOr(models->SetArchived(req.params["modelName"], true));
              }));

  router->Add("POST", "/api/v1/models/{modelName}/unarchive",
              WithAuth(master, EditShared(), [models](HttpRequest& req, const Principal&) {
                return EmptyOr(models->SetArchived(req.params["modelName"], false));
              }));

  router->Add("POST", "/api/v1/models/{modelName}/move",
              WithAuth(master, EditShared(), [models](HttpRequest& req, const Principal&) {
                return WithBody(req, [&](const json& body) {
                  auto ws = IntField(body, "destinationWorkspaceId", "destination_workspace_id");
                  if (!ws.ok()) return ErrorResponse(ws.status());
                  if (!ws->has_value()) {
                    return ErrorResponse(InvalidArgument("destinationWorkspaceId: required"));
                  }
                  return EmptyOr(models->Move(req.params["modelName"], **ws));
                });
              }));

  router->Add("GET", "/api/v1/models/{modelName}/versions",
              WithAuth(master, Auth::kUser, [master, models](HttpRequest& req, const Principal&) {
                auto m = models->Get(req.params["modelName"]);
                if (!m.ok()) return ErrorResponse(m.status());
                auto versions = models->ListVersions(*m, req.Query("sortBy"), req.Query("orderBy"));
                if (!versions.ok()) return ErrorResponse(versions.status());
                json items = json::array();
                for (const auto& v : *versions) items.push_back(VersionJson(master, v));
                auto page = Paginate(req, items, "modelVersions");
                if (!page.ok()) return ErrorResponse(page.status());
                (*page)["model"] = ModelJson(*m);
                return JsonResponse(*page);
              }));

  router->Add(
      "POST", "/api/v1/models/{modelName}/versions",
      WithAuth(master, EditShared(), [master, models](HttpRequest& req, const Principal& who) {
        return WithBody(req, [&](const json& body) {
          auto r = ParseRegister(body);
          if (!r.ok()) return ErrorResponse(r.status());
          auto v = models->RegisterVersion(req.params["modelName"], *r, CallerOf(who));
          if (!v.ok()) return ErrorResponse(v.status());
          return JsonResponse({{"modelVersion", VersionJson(master, *v)}});
        });
      }));

  router->Add("GET", "/api/v1/models/{modelName}/versions/{versionNum}",
              WithAuth(master, Auth::kUser, [master, models](HttpRequest& req, const Principal&) {
                auto num = PathId(req, "versionNum");
                if (!num.ok()) return ErrorResponse(num.status());
                auto v = models->GetVersion(req.params["modelName"], *num);
                if (!v.ok()) return ErrorResponse(v.status());
                return JsonResponse({{"modelVersion", VersionJson(master, *v)}});
              }));

  router->Add("PATCH", "/api/v1/models/{modelName}/versions/{versionNum}",
              WithAuth(master, EditShared(), [master, models](HttpRequest& req, const Principal&) {
                auto num = PathId(req, "versionNum");
                if (!num.ok()) return ErrorResponse(num.status());
                return WithBody(req, [&](const json& body) {
                  auto v = models->PatchVersion(req.params["modelName"], *num,
                                                PatchBody(body, "modelVersion"));
                  if (!v.ok()) return ErrorResponse(v.status());
                  return JsonResponse({{"modelVersion", VersionJson(master, *v)}});
                });
              }));

  router->Add("GET", "/api/v1/models/{modelName}/versions/{versionNum}/metrics",
              WithAuth(master, Auth::kUser, [models](HttpRequest& req, const Principal&) {
                auto num = PathId(req, "versionNum");
                if (!num.ok()) return ErrorResponse(num.status());
                std::string type = req.Query("trialSourceInfoType");
                if (type == "TRIAL_SOURCE_INFO_TYPE_UNSPECIFIED") type.clear();
                auto rows = models->VersionTrialMetrics(req.params["modelName"], *num, type,
                                                        req.Query("metricGroup"));
                if (!rows.ok()) return ErrorResponse(rows.status());
                json out = json::array();
                for (const auto& m : *rows) out.push_back(MetricsReportJsonOf(m));
                return JsonResponse({{"metrics", out}});
              }));

  router->Add("DELETE", "/api/v1/models/{modelName}/versions/{versionNum}",
              WithAuth(master, Checked(core::Action::kModify), [models](HttpRequest& req, const Principal& who) {
                auto num = PathId(req, "versionNum");
                if (!num.ok()) return ErrorResponse(num.status());
                return EmptyOr(models->DeleteVersion(req.params["modelName"], *num, CallerOf(who)));
              }));
}

}  // namespace det::master::api
