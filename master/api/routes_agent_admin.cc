// Enabling and disabling agents and slots, as Determined's (admins only):
//   POST /api/v1/agents/{id}/enable, /disable {drain}      -> {"agent": Agent}
//   POST /api/v1/agents/{id}/slots/{slotId}/enable, /disable -> {"slot": Slot}
// The state lives in AgentAdminService; the scheduler reads it every tick.
#include "master/api/json_views.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/server/agent_admin_service.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;

namespace {

Result<server::AgentView> FindAgentView(server::Master* master, const std::string& id) {
  for (auto& a : master->allocations()->ListAgents()) {
    if (a.id == id) return a;
  }
  return NotFound("agent '" + id + "' not found");
}

Result<int> SlotIdOf(const server::AgentView& a, const std::string& raw) {
  for (const auto& s : a.slots) {
    if (std::to_string(s.value("id", -1)) == raw) return s.value("id", -1);
  }
  return NotFound("slot '" + raw + "' not found on agent '" + a.id + "'");
}

Status RequireAdmin(const Principal& who, const std::string& what) {
  if (who.admin) return Status::Ok();
  return PermissionDenied("only an admin may " + what + " (user '" + who.username + "' is not)");
}

}  // namespace

json AdminSlotJson(server::Master* master, const server::AgentView& a, const json& slot) {
  json out = SlotJson(a, slot);
  out["enabled"] = master->agent_admin()->SlotEnabled(a.id, slot.value("id", -1));
  out["draining"] = master->agent_admin()->Agent(a.id).draining;
  return out;
}

json AdminAgentJson(server::Master* master, const server::AgentView& a) {
  json out = AgentJson(a);
  const server::AgentAdminState state = master->agent_admin()->Agent(a.id);
  out["enabled"] = state.enabled;
  out["draining"] = state.draining;
  for (const auto& s : a.slots) {
    std::string id = std::to_string(s.value("id", -1));
    if (out["slots"].contains(id)) out["slots"][id] = AdminSlotJson(master, a, s);
  }
  return out;
}

void RegisterAgentAdminRoutes(server::Router* router, server::Master* master) {
  for (bool enable : {true, false}) {
    router->Add(
        "POST", std::string("/api/v1/agents/{id}/") + (enable ? "enable" : "disable"),
        WithAuth(master, AdminOnly(), [master, enable](HttpRequest& req, const Principal& who) {
          if (Status st = RequireAdmin(who, enable ? "enable agents" : "disable agents");
              !st.ok()) {
            return ErrorResponse(st);
          }
          bool drain = false;
          if (!enable && !req.body.empty()) {
            Result<json> body = ParseBody(req);
            if (!body.ok()) return ErrorResponse(body.status());
            if (const json* d = Field(*body, "drain", "drain"); d != nullptr) {
              if (!d->is_boolean())
                return ErrorResponse(InvalidArgument("drain: must be a boolean"));
              drain = d->get<bool>();
            }
          }
          auto a = FindAgentView(master, req.params["id"]);
          if (!a.ok()) return ErrorResponse(a.status());
          if (Status st = master->agent_admin()->SetAgent(a->id, enable, drain); !st.ok()) {
            return ErrorResponse(st);
          }
          return JsonResponse({{"agent", AdminAgentJson(master, *a)}});
        }));
    router->Add(
        "POST",
        std::string("/api/v1/agents/{id}/slots/{slotId}/") + (enable ? "enable" : "disable"),
        WithAuth(master, AdminOnly(), [master, enable](HttpRequest& req, const Principal& who) {
          if (Status st = RequireAdmin(who, enable ? "enable slots" : "disable slots"); !st.ok()) {
            return ErrorResponse(st);
          }
          auto a = FindAgentView(master, req.params["id"]);
          if (!a.ok()) return ErrorResponse(a.status());
          auto slot = SlotIdOf(*a, req.params["slotId"]);
          if (!slot.ok()) return ErrorResponse(slot.status());
          if (Status st = master->agent_admin()->SetSlot(a->id, *slot, enable); !st.ok()) {
            return ErrorResponse(st);
          }
          for (const auto& s : a->slots) {
            if (s.value("id", -1) == *slot) {
              return JsonResponse({{"slot", AdminSlotJson(master, *a, s)}});
            }
          }
          return ErrorResponse(NotFound("slot '" + req.params["slotId"] + "' not found"));
        }));
  }
}

}  // namespace det::master::api
