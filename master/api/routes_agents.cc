// Agents: the unauthenticated agent protocol (api/agent-protocol.md) and GET /api/v1/agents.
#include "master/api/json_views.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;

namespace {
constexpr int64_t kMaxPollMs = 60 * 1000;
}  // namespace

void RegisterAgentRoutes(server::Router* router, server::Master* master) {
  router->Add("POST", "/agents/{id}/register", NoAuth([master](HttpRequest& req) {
    Result<json> body = ParseBody(req);
    if (!body.ok()) return ErrorResponse(body.status());
    auto r = master->RegisterAgent(req.params["id"], *body);
    return r.ok() ? JsonResponse(*r) : ErrorResponse(r.status());
  }));

  router->Add("GET", "/agents/{id}/commands", NoAuth([master](HttpRequest& req) {
    Result<int64_t> after = QueryInt(req, "after", 0);
    if (!after.ok()) return ErrorResponse(after.status());
    Result<int64_t> timeout = QueryInt(req, "timeoutSeconds", 30);
    if (!timeout.ok()) return ErrorResponse(timeout.status());
    std::string id = req.params["id"];
    int64_t timeout_ms = std::min(*timeout * 1000, kMaxPollMs);
    return server::HttpResponse::Deferred(
        [master, id, after = *after, timeout_ms](server::Responder respond) {
          master->PollCommands(id, after, timeout_ms, [respond](Result<json> r) {
            respond(r.ok() ? JsonResponse(*r) : ErrorResponse(r.status()));
          });
        });
  }));

  router->Add("POST", "/agents/{id}/events", NoAuth([master](HttpRequest& req) {
    Result<json> body = ParseBody(req);
    if (!body.ok()) return ErrorResponse(body.status());
    Status st = master->HandleAgentEvents(req.params["id"], *body);
    return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
  }));

  router->Add("GET", "/api/v1/agents",
              WithAuth(master, Auth::kUser, [master](HttpRequest&, const Principal&) {
                json out = json::array();
                for (const auto& a : master->ListAgents()) out.push_back(AgentJson(a));
                return JsonResponse({{"agents", out}});
              }));
}

}  // namespace det::master::api
