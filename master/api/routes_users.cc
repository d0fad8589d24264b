// Users: GET /api/v1/users (filters active/admin, pagination), /users/{id},
// /users/{username}/by-username; POST /api/v1/users and PATCH /api/v1/users/{id}
// (UserAdminService). /me and passwords live with the auth routes.
#include <algorithm>

#include "master/api/json_views.h"
#include "master/api/list_sort.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/server/user_admin_service.h"

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

Result<std::optional<std::string>> OptString(const json& body, const char* camel,
                                             const char* snake) {
  const json* f = Field(body, camel, snake);
  if (f == nullptr) return std::optional<std::string>();
  if (!f->is_string()) return InvalidArgument(std::string(camel) + ": must be a string");
  return std::optional<std::string>(f->get<std::string>());
}

Result<std::optional<bool>> OptBool(const json& body, const char* camel, const char* snake) {
  const json* f = Field(body, camel, snake);
  if (f == nullptr) return std::optional<bool>();
  if (!f->is_boolean()) return InvalidArgument(std::string(camel) + ": must be true or false");
  return std::optional<bool>(f->get<bool>());
}

server::Actor ActorOf(const Principal& who) { return server::Actor{who.user_id, who.admin}; }

// POST /api/v1/users: {user: {username, admin, active, displayName}, password, isHashed}.
Result<server::UserCreate> ParseUserCreate(const json& body) {
  const json* user = Field(body, "user", "user");
  if (user == nullptr || !user->is_object()) {
    return InvalidArgument("user: required, the new user {username, admin, active}");
  }
  server::UserCreate req;
  DET_ASSIGN_OR_RETURN(auto username, OptString(*user, "username", "username"));
  if (!username) return InvalidArgument("user.username: required");
  req.username = *username;
  DET_ASSIGN_OR_RETURN(auto admin, OptBool(*user, "admin", "admin"));
  req.admin = admin.value_or(false);
  DET_ASSIGN_OR_RETURN(auto active, OptBool(*user, "active", "active"));
  req.active = active.value_or(true);
  DET_ASSIGN_OR_RETURN(auto display, OptString(*user, "displayName", "display_name"));
  req.display_name = display.value_or("");
  if (const json* remote = Field(*user, "remote", "remote");
      remote && remote->is_boolean() && remote->get<bool>()) {
    return InvalidArgument("user.remote: remote (SSO) users are not supported");
  }
  DET_ASSIGN_OR_RETURN(req.password, OptString(body, "password", "password"));
  DET_ASSIGN_OR_RETURN(auto hashed, OptBool(body, "isHashed", "is_hashed"));
  req.password_is_hashed = hashed.value_or(false);
  return req;
}

Result<server::UserPatch> ParseUserPatch(const json& body) {
  server::UserPatch p;
  DET_ASSIGN_OR_RETURN(p.username, OptString(body, "username", "username"));
  DET_ASSIGN_OR_RETURN(p.display_name, OptString(body, "displayName", "display_name"));
  DET_ASSIGN_OR_RETURN(p.admin, OptBool(body, "admin", "admin"));
  DET_ASSIGN_OR_RETURN(p.active, OptBool(body, "active", "active"));
  DET_ASSIGN_OR_RETURN(p.password, OptString(body, "password", "password"));
  DET_ASSIGN_OR_RETURN(auto hashed, OptBool(body, "isHashed", "is_hashed"));
  p.password_is_hashed = hashed.value_or(false);
  if (const json* remote = Field(body, "remote", "remote");
      remote && remote->is_boolean() && remote->get<bool>()) {
    return InvalidArgument("remote: remote (SSO) users are not supported");
  }
  return p;
}

}  // namespace

void RegisterUserRoutes(server::Router* router, server::Master* master) {
  // The caller's web UI settings; before /users/{id}, which would take "setting" as an id.
  router->Add("GET", "/api/v1/users/setting",
              WithAuth(master, Auth::kUser, [master](HttpRequest&, const Principal& who) {
                auto rows = master->user_admin()->WebSettings(who.user_id);
                if (!rows.ok()) return ErrorResponse(rows.status());
                json out = json::array();
                for (const auto& r : *rows) {
                  out.push_back({{"key", r.key}, {"storagePath", r.storage_path}, {"value", r.value}});
                }
                return JsonResponse({{"settings", out}});
              }));
  router->Add("POST", "/api/v1/users/setting",
              WithAuth(master, Create(), [master](HttpRequest& req, const Principal& who) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                const json* settings = Field(*body, "settings", "settings");
                if (settings == nullptr || !settings->is_array()) {
                  return ErrorResponse(InvalidArgument("settings: required list of {key, value, "
                                                       "storagePath}"));
                }
                std::vector<store::UserWebSettingRow> rows;
                for (size_t i = 0; i < settings->size(); ++i) {
                  const json& s = (*settings)[i];
                  std::string where = "settings[" + std::to_string(i) + "]";
                  if (!s.is_object()) return ErrorResponse(InvalidArgument(where + ": not an object"));
                  store::UserWebSettingRow r;
                  for (auto [field, out] : {std::pair{"key", &r.key}, std::pair{"value", &r.value},
                                            std::pair{"storagePath", &r.storage_path}}) {
                    const json* v = Field(s, field, field == std::string("storagePath")
                                                        ? "storage_path"
                                                        : field);
                    if (v == nullptr || v->is_null()) continue;
                    if (!v->is_string()) {
                      return ErrorResponse(
                          InvalidArgument(where + "." + field + ": must be a string"));
                    }
                    *out = v->get<std::string>();
                  }
                  rows.push_back(std::move(r));
                }
                Status st = master->user_admin()->SetWebSettings(who.user_id, rows);
                return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
              }));
  router->Add("POST", "/api/v1/users/setting/reset",
              WithAuth(master, Create(), [master](HttpRequest&, const Principal& who) {
                Status st = master->user_admin()->ResetWebSettings(who.user_id);
                return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
              }));

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
                Status sorted = SortUsers(out, req.Query("sortBy"), req.Query("orderBy"));
                if (!sorted.ok()) return ErrorResponse(sorted);
                auto page = Paginate(req, out, "users");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));

  router->Add("POST", "/api/v1/users",
              WithAuth(master, AdminOnly(core::Action::kManageUsers), [master](HttpRequest& req, const Principal& who) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                auto create = ParseUserCreate(*body);
                if (!create.ok()) return ErrorResponse(create.status());
                auto u = master->user_admin()->Create(ActorOf(who), *create);
                if (!u.ok()) return ErrorResponse(u.status());
                return JsonResponse({{"user", UserJson(*u)}});
              }));

  router->Add("PATCH", "/api/v1/users/{id}",
              WithAuth(master, Checked(core::Action::kManageUsers), [master](HttpRequest& req, const Principal& who) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                auto patch = ParseUserPatch(*body);
                if (!patch.ok()) return ErrorResponse(patch.status());
                auto u = master->user_admin()->Patch(ActorOf(who), *id, *patch);
                if (!u.ok()) return ErrorResponse(u.status());
                return JsonResponse({{"user", UserJson(*u)}});
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
