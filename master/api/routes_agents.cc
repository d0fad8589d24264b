// Agents: the agent protocol (api/agent-protocol.md; authenticated by the cluster agent secret
// and the agent's own key, master/server/agent_credential_service.h) and GET /api/v1/agents,
// /agents/{id}, /agents/{id}/slots, /agents/{id}/slots/{slotId}.
#include "master/api/json_views.h"
#include "master/api/list_sort.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/server/agent_credential_service.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;

namespace {
constexpr int64_t kMaxPollMs = 60 * 1000;

Result<server::AgentView> FindAgent(server::Master* master, const std::string& id) {
  for (auto& a : master->allocations()->ListAgents()) {
    if (a.id == id) return a;
  }
  return NotFound("agent '" + id + "' not found");
}

// The agent routes' credential check (user sessions do not apply to them).
Status AuthenticateAgent(server::Master* master, const HttpRequest& req, bool registering) {
  return master->agent_credentials()->Authenticate(
      req.params.at("id"), req.Header(server::kAgentSecretHeader),
      req.Header(server::kAgentKeyHeader), registering);
}
}  // namespace

void RegisterAgentRoutes(server::Router* router, server::Master* master) {
  router->Add("POST", "/agents/{id}/register", NoAuth([master](HttpRequest& req) {
                if (Status st = AuthenticateAgent(master, req, true); !st.ok())
                  return ErrorResponse(st);
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                // Decided on the runtime loop (re-adoption, then a scheduling pass); no thread
                // waits.
                return server::HttpResponse::Deferred(
                    [master, id = req.params["id"],
                     body = std::move(body).value()](server::Responder respond) mutable {
                      master->allocations()->RegisterAgent(
                          id, std::move(body), [respond = std::move(respond)](Result<json> r) {
                            respond(r.ok() ? JsonResponse(*r) : ErrorResponse(r.status()));
                          });
                    });
              }));

  router->Add("GET", "/agents/{id}/commands", NoAuth([master](HttpRequest& req) {
                if (Status st = AuthenticateAgent(master, req, false); !st.ok())
                  return ErrorResponse(st);
                Result<int64_t> after = QueryInt(req, "after", 0);
                if (!after.ok()) return ErrorResponse(after.status());
                Result<int64_t> timeout = QueryInt(req, "timeoutSeconds", 30);
                if (!timeout.ok()) return ErrorResponse(timeout.status());
                std::string id = req.params["id"];
                int64_t timeout_ms = std::min(*timeout * 1000, kMaxPollMs);
                return server::HttpResponse::Deferred(
                    [master, id, after = *after, timeout_ms](server::Responder respond) {
                      master->allocations()->PollCommands(
                          id, after, timeout_ms, [respond](Result<json> r) {
                            respond(r.ok() ? JsonResponse(*r) : ErrorResponse(r.status()));
                          });
                    });
              }));

  router->Add(
      "POST", "/agents/{id}/events", NoAuth([master](HttpRequest& req) {
        if (Status st = AuthenticateAgent(master, req, false); !st.ok()) return ErrorResponse(st);
        Result<json> body = ParseBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        return DeferredStatus([master, id = req.params["id"],
                               body = std::move(body).value()](server::Done<Status> done) mutable {
          master->allocations()->HandleAgentEvents(id, std::move(body), std::move(done));
        });
      }));

  router->Add("GET", "/api/v1/agents",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                json out = json::array();
                for (const auto& a : master->allocations()->ListAgents())
                  out.push_back(AdminAgentJson(master, a));
                Status sorted = SortAgents(out, req.Query("sortBy"), req.Query("orderBy"));
                if (!sorted.ok()) return ErrorResponse(sorted);
                auto page = Paginate(req, out, "agents");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));

  router->Add("GET", "/api/v1/agents/{id}",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                auto a = FindAgent(master, req.params["id"]);
                if (!a.ok()) return ErrorResponse(a.status());
                return JsonResponse({{"agent", AdminAgentJson(master, *a)}});
              }));

  router->Add("GET", "/api/v1/agents/{id}/slots",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                auto a = FindAgent(master, req.params["id"]);
                if (!a.ok()) return ErrorResponse(a.status());
                json slots = json::array();
                for (const auto& s : a->slots) slots.push_back(AdminSlotJson(master, *a, s));
                return JsonResponse({{"slots", slots}});
              }));

  router->Add(
      "GET", "/api/v1/agents/{id}/slots/{slotId}",
      WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
        auto a = FindAgent(master, req.params["id"]);
        if (!a.ok()) return ErrorResponse(a.status());
        const std::string& slot_id = req.params["slotId"];
        for (const auto& s : a->slots) {
          json slot = AdminSlotJson(master, *a, s);
          if (slot["id"] == slot_id) return JsonResponse({{"slot", slot}});
        }
        return ErrorResponse(NotFound("slot '" + slot_id + "' not found on agent '" + a->id + "'"));
      }));
}

}  // namespace det::master::api
