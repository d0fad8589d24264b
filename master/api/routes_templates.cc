// Config templates, with Determined's paths and shapes: GET /api/v1/templates (name,
// workspaceIds, orderBy, offset, limit), GET|PUT|POST|PATCH|DELETE /api/v1/templates/{name}
// and PATCH /api/v1/template/rename. A template is {name, config, workspaceId}.
#include <cstdlib>

#include "common/whole_int64.h"
#include "master/api/list_sort.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/config/experiment_config.h"
#include "master/server/template_service.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;
using store::TemplateRow;

namespace {

json TemplateJson(const TemplateRow& t) {
  return json{{"name", t.name}, {"config", t.config}, {"workspaceId", t.workspace_id}};
}

// A v1Template body: {name?, config, workspaceId?}; the path names the template.
Result<TemplateRow> ParseTemplate(const json& body, const std::string& path_name) {
  if (!body.is_object()) return InvalidArgument("body: must be a template object");
  TemplateRow row;
  row.name = path_name;
  if (const json* n = Field(body, "name", "name"); n != nullptr) {
    if (!n->is_string()) return InvalidArgument("name: must be a string");
    if (!n->get<std::string>().empty() && n->get<std::string>() != path_name) {
      return InvalidArgument("name: '" + n->get<std::string>() +
                             "' differs from the template name in the path '" + path_name + "'");
    }
  }
  const json* config = Field(body, "config", "config");
  if (config == nullptr) return InvalidArgument("config: required, the template's config");
  row.config = *config;
  row.workspace_id = 0;
  if (const json* w = Field(body, "workspaceId", "workspace_id"); w != nullptr) {
    if (!w->is_number_integer() || w->get<int64_t>() < 0) {
      return InvalidArgument("workspaceId: must be a non-negative integer (got " + w->dump() + ")");
    }
    row.workspace_id = w->get<int64_t>();
  }
  return row;
}

Result<std::vector<int64_t>> WorkspaceIds(const HttpRequest& req) {
  std::vector<int64_t> ids;
  for (const std::string& v : req.QueryAll("workspaceIds")) {
    std::optional<int64_t> id = WholeInt64(v);
    if (!id || *id <= 0) {
      return InvalidArgument("workspaceIds: must be positive integers (got '" + v + "')");
    }
    ids.push_back(*id);
  }
  return ids;
}

server::HttpResponse TemplateResponse(const Result<TemplateRow>& t) {
  if (!t.ok()) return ErrorResponse(t.status());
  return JsonResponse({{"template", TemplateJson(*t)}});
}

}  // namespace

Result<std::string> ApplyTemplateToConfig(server::Master* master, const std::string& name,
                                          const std::string& config_yaml) {
  Result<json> config = config::YamlToJson(config_yaml);
  if (!config.ok()) return InvalidArgument("config: " + config.status().message());
  DET_ASSIGN_OR_RETURN(json merged, master->templates()->Apply(name, *config));
  return merged.dump();  // JSON is YAML
}

void RegisterTemplateRoutes(server::Router* router, server::Master* master) {
  server::TemplateService* templates = master->templates();

  router->Add("GET", "/api/v1/templates",
              WithAuth(master, Auth::kUser, [templates](HttpRequest& req, const Principal&) {
                auto ws = WorkspaceIds(req);
                if (!ws.ok()) return ErrorResponse(ws.status());
                auto list = templates->List(req.Query("name"), *ws, /*descending=*/false);
                if (!list.ok()) return ErrorResponse(list.status());
                json items = json::array();
                for (const auto& t : *list) items.push_back(TemplateJson(t));
                Status sorted = SortTemplates(items, req.Query("sortBy"), req.Query("orderBy"));
                if (!sorted.ok()) return ErrorResponse(sorted);
                auto page = Paginate(req, items, "templates");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));

  router->Add("GET", "/api/v1/templates/{name}",
              WithAuth(master, Auth::kUser, [templates](HttpRequest& req, const Principal&) {
                return TemplateResponse(templates->Get(req.params["name"]));
              }));

  router->Add("POST", "/api/v1/templates/{name}",
              WithAuth(master, EditShared(), [templates](HttpRequest& req, const Principal&) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                auto row = ParseTemplate(*body, req.params["name"]);
                if (!row.ok()) return ErrorResponse(row.status());
                return TemplateResponse(templates->Create(*row));
              }));

  router->Add("PUT", "/api/v1/templates/{name}",
              WithAuth(master, EditShared(), [templates](HttpRequest& req, const Principal&) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                auto row = ParseTemplate(*body, req.params["name"]);
                if (!row.ok()) return ErrorResponse(row.status());
                return TemplateResponse(templates->Put(*row));
              }));

  // The body is the new config itself.
  router->Add("PATCH", "/api/v1/templates/{name}",
              WithAuth(master, EditShared(), [templates](HttpRequest& req, const Principal&) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                return TemplateResponse(templates->SetConfig(req.params["name"], *body));
              }));

  router->Add("PATCH", "/api/v1/template/rename",
              WithAuth(master, EditShared(), [templates](HttpRequest& req, const Principal&) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json* old_name = Field(*body, "oldName", "old_name");
                const json* new_name = Field(*body, "newName", "new_name");
                if (old_name == nullptr || !old_name->is_string()) {
                  return ErrorResponse(InvalidArgument("oldName: required string"));
                }
                if (new_name == nullptr || !new_name->is_string()) {
                  return ErrorResponse(InvalidArgument("newName: required string"));
                }
                return TemplateResponse(
                    templates->Rename(old_name->get<std::string>(), new_name->get<std::string>()));
              }));

  router->Add("DELETE", "/api/v1/templates/{name}",
              WithAuth(master, EditShared(), [templates](HttpRequest& req, const Principal&) {
                Status st = templates->Delete(req.params["name"]);
                return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
              }));
}

}  // namespace det::master::api
