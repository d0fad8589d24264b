// /info, /api/v1/master, login/logout, users.
#include "master/api/json_views.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/core/cluster_message.h"
#include "master/server/cluster_message_service.h"
#include "master/server/passwords.h"
#include "common/version.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::HttpResponse;
using server::Principal;

void RegisterAuthRoutes(server::Router* router, server::Master* master) {
  auto info = NoAuth([master](HttpRequest&) {
    const std::string& name = master->config().cluster_name;
    std::optional<store::ClusterMessageRow> message = master->cluster_message()->Active();
    return JsonResponse({{"version", kVersion},
                         {"clusterMessage",
                          message ? core::ClusterMessageJson(*message) : json(nullptr)},
                         {"masterId", master->master_id()},
                         {"clusterId", master->cluster_id()},
                         {"clusterName", name},
                         {"master_id", master->master_id()},
                         {"cluster_id", master->cluster_id()},
                         {"cluster_name", name},
                         {"telemetryEnabled", false},
                         {"telemetry", {{"enabled", false}}},
                         {"hasCustomLogo", false},
                         {"strictJobQueueControl", false},
                         {"rbacEnabled", false},
                         {"userManagementEnabled", true},
                         {"featureSwitches", json::array()},
                         {"ssoProviders", json::array()},
                         {"sso_providers", json::array()}});
  });
  router->Add("GET", "/info", info);
  router->Add("GET", "/api/v1/master", info);

  router->Add("POST", "/api/v1/auth/login", NoAuth([master](HttpRequest& req) {
    Result<json> body = ParseBody(req);
    if (!body.ok()) return ErrorResponse(body.status());
    const json* username = Field(*body, "username", "username");
    if (username == nullptr || !username->is_string()) {
      return ErrorResponse(InvalidArgument("username: required string"));
    }
    const json* password = Field(*body, "password", "password");
    std::string pw = password && password->is_string() ? password->get<std::string>() : "";
    const json* hashed = Field(*body, "isHashed", "is_hashed");
    bool is_hashed = hashed && hashed->is_boolean() && hashed->get<bool>();
    std::string client_hash = is_hashed ? pw : server::ClientPasswordHash(pw);
    int64_t retry_after = 0;
    auto r = master->auth()->Login(username->get<std::string>(), client_hash, req.remote_address,
                                   &retry_after);
    if (!r.ok() && retry_after > 0) {
      // Throttled after repeated failures: 429 with the wait, as HTTP clients expect it.
      HttpResponse resp = ErrorResponse(r.status());
      resp.status = 429;
      resp.headers.push_back({"Retry-After", std::to_string(retry_after)});
      return resp;
    }
    if (!r.ok()) return ErrorResponse(r.status());
    HttpResponse resp = JsonResponse({{"token", r->first}, {"user", UserJson(r->second)}});
    resp.headers.push_back({"Set-Cookie", "auth=" + r->first + "; Path=/; HttpOnly"});
    return resp;
  }));

  router->Add("POST", "/api/v1/auth/logout",
              WithAuth(master, Auth::kUser, [master](HttpRequest&, const Principal& who) {
                Status st = master->auth()->Logout(who.token);
                return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
              }));

  // The caller's own user: /api/v1/me, and Determined's /api/v1/auth/user (its web UI asks it
  // on every full page load).
  for (const char* path : {"/api/v1/me", "/api/v1/auth/user"}) {
    router->Add("GET", path,
                WithAuth(master, Auth::kUser, [master](HttpRequest&, const Principal& who) {
                  auto u = master->auth()->GetUser(who.user_id);
                  if (!u.ok()) return ErrorResponse(u.status());
                  return JsonResponse({{"user", UserJson(*u)}});
                }));
  }

  router->Add("POST", "/api/v1/users/{id}/password",
              WithAuth(master, CheckedInHandler(Auth::kUser, core::Action::kManageUsers),
                       [master](HttpRequest& req, const Principal& who) {
                         Result<int64_t> id = PathId(req, "id");
                         if (!id.ok()) return ErrorResponse(id.status());
                         Result<json> body = ParseBody(req);
                         if (!body.ok()) return ErrorResponse(body.status());
                         std::string pw;
                         if (body->is_string()) {
                           pw = body->get<std::string>();
                         } else if (const json* p = Field(*body, "password", "password");
                                    p && p->is_string()) {
                           pw = p->get<std::string>();
                         } else {
                           return ErrorResponse(InvalidArgument("password: required string"));
                         }
                         // Clients send the salted SHA-512 already, as for login.
                         Status st = master->auth()->SetPassword(who, *id, pw);
                         return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
                       }));
}

}  // namespace det::master::api
