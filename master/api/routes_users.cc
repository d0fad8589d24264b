// Users: GET /api/v1/users (filters active/admin, pagination), /users/{id},
// /users/{username}/by-username. /me and passwords live with the auth routes.
#include <algorithm>

#include "master/api/json_views.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;

namespace {

// An optional boolean query filter: absent, "true" or "false"; anything else names the parameter.
Result<std::optional<bool>> QueryFilter(const HttpRequest& req, const char* name) {
  std::string v = req.Query(name);
  if (v.empty()) return std::optional<bool>();
  if (v == "true" || v == "1") return std::optional<bool>(true);
  if (v == "false" || v == "0") return std::optional<bool>(false);
  return InvalidArgument(std::string(name) + ": must be true or false (got '" + v + "')");
}

}  // namespace

void RegisterUserRoutes(server::Router* router, server::Master* master) {
  router->Add("GET", "/api/v1/users",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                auto active = QueryFilter(req, "active");
                if (!active.ok()) return ErrorResponse(active.status());
                auto admin = QueryFilter(req, "admin");
                if (!admin.ok()) return ErrorResponse(admin.status());
                auto users = master->auth()->ListUsers();
                if (!users.ok()) return ErrorResponse(users.status());
                std::string name = req.Query("name");
                json out = json::array();
                for (const auto& u : *users) {
                  if (*active && u.active != **active) continue;
                  if (*admin && u.admin != **admin) continue;
                  if (!name.empty() && u.username.find(name) == std::string::npos &&
                      u.display_name.find(name) == std::string::npos) {
                    continue;
                  }
                  out.push_back(UserJson(u));
                }
                if (req.Query("orderBy") == "ORDER_BY_DESC") std::reverse(out.begin(), out.end());
                auto page = Paginate(req, out, "users");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));

  router->Add("GET", "/api/v1/users/{id}",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto u = master->auth()->GetUser(*id);
                if (!u.ok()) return ErrorResponse(u.status());
                return JsonResponse({{"user", UserJson(*u)}});
              }));

  router->Add("GET", "/api/v1/users/{username}/by-username",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                auto users = master->auth()->ListUsers();
                if (!users.ok()) return ErrorResponse(users.status());
                const std::string& name = req.params["username"];
                for (const auto& u : *users) {
                  if (u.username == name) return JsonResponse({{"user", UserJson(u)}});
                }
                return ErrorResponse(NotFound("user '" + name + "' not found"));
              }));
}

}  // namespace det::master::api
