// Workspace-resource pool bindings, in Determined's shapes: POST / DELETE / PUT / GET
// /api/v1/resource-pools/{resourcePoolName}/workspace-bindings ({workspaceIds, workspaceNames};
// admins change them, any user lists them) and GET
// /api/v1/workspaces/{id}/available-resource-pools. The rules are in
// master/scheduler/pool_bindings.h; WorkspaceService stores them.

#include <string>
#include <vector>

#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/server/workspace_service.h"

namespace det::master::api {

using nlohmann::json;
using server::BindingChange;
using server::HttpRequest;
using server::Principal;

namespace {

// At most this many workspaces per request: each is one row of one transaction.
constexpr size_t kMaxBindingsPerRequest = 10000;

struct BindingTargets {
  std::vector<int64_t> ids;
  std::vector<std::string> names;
};

Result<BindingTargets> ParseTargets(const json& body) {
  BindingTargets t;
  if (const json* ids = Field(body, "workspaceIds", "workspace_ids"); ids != nullptr) {
    if (!ids->is_array()) return InvalidArgument("workspaceIds: must be a list of workspace ids");
    for (const json& id : *ids) {
      if (!id.is_number_integer() || id.get<int64_t>() <= 0) {
        return InvalidArgument("workspaceIds: each must be a workspace id (got " + id.dump() + ")");
      }
      t.ids.push_back(id.get<int64_t>());
    }
  }
  if (const json* names = Field(body, "workspaceNames", "workspace_names"); names != nullptr) {
    if (!names->is_array()) {
      return InvalidArgument("workspaceNames: must be a list of workspace names");
    }
    for (const json& n : *names) {
      if (!n.is_string()) {
        return InvalidArgument("workspaceNames: each must be a string (got " + n.dump() + ")");
      }
      t.names.push_back(n.get<std::string>());
    }
  }
  if (t.ids.size() + t.names.size() > kMaxBindingsPerRequest) {
    return InvalidArgument("workspaceIds, workspaceNames: at most " +
                           std::to_string(kMaxBindingsPerRequest) + " workspaces per request");
  }
  return t;
}

server::Handler ChangeRoute(server::Master* master, BindingChange change) {
  // The pool is checked before the caller, as Determined does: a user binding the default pool
  // hears that it cannot be bound, then an admin's rule.
  auto access = CheckedInHandler(Auth::kUser, core::Action::kManageCluster);
  return WithAuth(master, access, [master, change](HttpRequest& req, const Principal& who) {
    const std::string& pool = req.params.at("resourcePoolName");
    if (Status st = master->workspaces()->CheckPoolChange(pool, change); !st.ok()) {
      return ErrorResponse(st);
    }
    if (Status st = AuthorizeOn(master, who, AdminOnly(), "resource pool " + pool); !st.ok()) {
      return ErrorResponse(st);
    }
    Result<json> body = ParseBody(req);
    if (!body.ok()) return ErrorResponse(body.status());
    Result<BindingTargets> targets = ParseTargets(*body);
    if (!targets.ok()) return ErrorResponse(targets.status());
    Status st = master->workspaces()->ChangePoolBindings(pool, std::move(targets->ids),
                                                          targets->names, change);
    return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
  });
}

}  // namespace

void RegisterPoolBindingRoutes(server::Router* router, server::Master* master) {
  const char* kPath = "/api/v1/resource-pools/{resourcePoolName}/workspace-bindings";
  router->Add("POST", kPath, ChangeRoute(master, BindingChange::kAdd));
  router->Add("DELETE", kPath, ChangeRoute(master, BindingChange::kRemove));
  router->Add("PUT", kPath, ChangeRoute(master, BindingChange::kReplace));
  router->Add("GET", kPath,
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                auto ids = master->workspaces()->WorkspacesBoundTo(
                    req.params.at("resourcePoolName"));
                if (!ids.ok()) return ErrorResponse(ids.status());
                auto page = Paginate(req, json(*ids), "workspaceIds");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));
  router->Add("GET", "/api/v1/workspaces/{id}/available-resource-pools",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                auto pools = master->workspaces()->PoolsAvailableTo(*id);
                if (!pools.ok()) return ErrorResponse(pools.status());
                auto page = Paginate(req, json(*pools), "resourcePools");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));
}

}  // namespace det::master::api
