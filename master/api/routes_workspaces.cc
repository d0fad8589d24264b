// Workspaces and projects, as a fresh Determined has them: the one workspace "Uncategorized"
// (id 1) holding the one project "Uncategorized" (id 1), to which every experiment belongs.
// Read-only: creating workspaces and projects is not supported.
#include <algorithm>
#include <cctype>

#include "master/api/json_views.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;

namespace {

constexpr int64_t kDefaultId = 1;
constexpr const char* kDefaultName = "Uncategorized";

struct ExperimentCounts {
  int64_t experiments = 0;
  int64_t active = 0;
  int64_t runs = 0;  // trials
  std::optional<int64_t> last_start;
};

Result<ExperimentCounts> CountExperiments(server::Master* master) {
  int64_t total = 0;
  DET_ASSIGN_OR_RETURN(std::vector<server::ExperimentView> all,
                       master->ListExperiments(store::ExperimentFilter{}, store::Page{}, &total));
  ExperimentCounts c;
  c.experiments = static_cast<int64_t>(all.size());
  for (const auto& v : all) {
    const std::string& s = v.presented_state;
    if (s == "STATE_ACTIVE" || s == "STATE_RUNNING" || s == "STATE_QUEUED") ++c.active;
    c.runs += v.num_trials;
    c.last_start = std::max(c.last_start.value_or(0), v.row.start_time);
  }
  return c;
}

// The admin owns the built-in workspace and project (user 1, created first).
json WorkspaceJson(const ExperimentCounts& c) {
  return json{{"id", kDefaultId},  {"name", kDefaultName},
              {"archived", false}, {"username", "admin"},
              {"userId", 1},       {"immutable", true},
              {"numProjects", 1},  {"numExperiments", c.experiments},
              {"pinned", false},   {"state", "WORKSPACE_STATE_UNSPECIFIED"},
              {"errorMessage", ""}};
}

json ProjectJson(const ExperimentCounts& c) {
  return json{
      {"id", kDefaultId},
      {"name", kDefaultName},
      {"key", "UNCAT"},
      {"workspaceId", kDefaultId},
      {"workspaceName", kDefaultName},
      {"description", ""},
      {"lastExperimentStartedAt", c.last_start ? json(TimeOrNull(c.last_start)) : json(nullptr)},
      {"notes", json::array()},
      {"numExperiments", c.experiments},
      {"numActiveExperiments", c.active},
      {"numRuns", c.runs},
      {"archived", false},
      {"username", "admin"},
      {"userId", 1},
      {"immutable", true},
      {"state", "WORKSPACE_STATE_UNSPECIFIED"},
      {"errorMessage", ""}};
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Whether the built-in object passes the list filters `name` (case-insensitive unless
// nameCaseSensitive) and `archived`.
bool PassesFilters(const HttpRequest& req) {
  std::string name = req.Query("name");
  if (!name.empty()) {
    bool exact = QueryBool(req, "nameCaseSensitive", false);
    if (exact ? name != kDefaultName : Lower(name) != Lower(kDefaultName)) return false;
  }
  return !QueryBool(req, "archived", false);
}

Status CheckId(const HttpRequest& req, const char* what) {
  DET_ASSIGN_OR_RETURN(int64_t id, PathId(req, "id"));
  if (id != kDefaultId)
    return NotFound(std::string(what) + " " + std::to_string(id) + " not found");
  return Status::Ok();
}

}  // namespace

void RegisterWorkspaceRoutes(server::Router* router, server::Master* master) {
  router->Add("GET", "/api/v1/workspaces",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                auto counts = CountExperiments(master);
                if (!counts.ok()) return ErrorResponse(counts.status());
                json items = json::array();
                if (PassesFilters(req)) items.push_back(WorkspaceJson(*counts));
                auto page = Paginate(req, items, "workspaces");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));

  router->Add("GET", "/api/v1/workspaces/{id}",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                if (Status st = CheckId(req, "workspace"); !st.ok()) return ErrorResponse(st);
                auto counts = CountExperiments(master);
                if (!counts.ok()) return ErrorResponse(counts.status());
                return JsonResponse({{"workspace", WorkspaceJson(*counts)}});
              }));

  router->Add("GET", "/api/v1/workspaces/{id}/projects",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                if (Status st = CheckId(req, "workspace"); !st.ok()) return ErrorResponse(st);
                auto counts = CountExperiments(master);
                if (!counts.ok()) return ErrorResponse(counts.status());
                json items = json::array();
                if (PassesFilters(req)) items.push_back(ProjectJson(*counts));
                auto page = Paginate(req, items, "projects");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));

  router->Add("GET", "/api/v1/projects/{id}",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                if (Status st = CheckId(req, "project"); !st.ok()) return ErrorResponse(st);
                auto counts = CountExperiments(master);
                if (!counts.ok()) return ErrorResponse(counts.status());
                return JsonResponse({{"project", ProjectJson(*counts)}});
              }));

  router->Add("GET", "/api/v1/projects/{id}/experiments",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                if (Status st = CheckId(req, "project"); !st.ok()) return ErrorResponse(st);
                return ListExperimentsResponse(master, req, true);
              }));
}

}  // namespace det::master::api
