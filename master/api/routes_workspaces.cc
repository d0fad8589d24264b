// Workspaces and projects (WorkspaceService): the built-in workspace "Uncategorized" (id 1)
// holding the built-in project "Uncategorized" (id 1), and those users create. Every
// experiment belongs to project 1 unless moved (POST /api/v1/experiments/{id}/move).
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "master/api/json_views.h"
#include "master/api/list_sort.h"
#include "master/api/route_helpers.h"
#include "master/api/routes.h"
#include "master/core/secret_redact.h"
#include "master/core/states.h"
#include "master/server/experiment_service.h"
#include "master/server/task_service.h"
#include "master/server/workspace_service.h"

namespace det::master::api {

using nlohmann::json;
using server::HttpRequest;
using server::Principal;
using server::WorkspaceService;
using store::ProjectRow;
using store::WorkspaceRow;

namespace {

struct ProjectCounts {
  int64_t experiments = 0;
  int64_t active = 0;
  int64_t runs = 0;  // trials
  std::optional<int64_t> last_start;
};

// Per-project experiment counts over every experiment.
Result<std::map<int64_t, ProjectCounts>> CountByProject(server::Master* master) {
  int64_t total = 0;
  DET_ASSIGN_OR_RETURN(
      std::vector<server::ExperimentView> all,
      master->experiments()->ListExperiments(store::ExperimentFilter{}, store::Page{}, &total));
  std::map<int64_t, int64_t> placements = master->workspaces()->Placements();
  std::map<int64_t, ProjectCounts> out;
  for (const auto& v : all) {
    auto it = placements.find(v.row.id);
    ProjectCounts& c = out[it == placements.end() ? 1 : it->second];
    ++c.experiments;
    const std::string& s = v.presented_state;
    if (s == "STATE_ACTIVE" || s == "STATE_RUNNING" || s == "STATE_QUEUED") ++c.active;
    c.runs += v.num_trials;
    c.last_start = std::max(c.last_start.value_or(0), v.row.start_time);
  }
  return out;
}

// Usernames by id, for the owner fields.
std::map<int64_t, std::string> Usernames(server::Master* master) {
  std::map<int64_t, std::string> names;
  if (auto users = master->auth()->ListUsers(); users.ok()) {
    for (const auto& u : *users) names[u.id] = u.username;
  }
  return names;
}

// A workspace's checkpoint storage as shown: its secrets masked.
json ShownStorage(json storage) {
  core::RedactSecrets(storage);
  return storage;
}

json WorkspaceJson(const WorkspaceRow& w, const std::vector<ProjectRow>& projects,
                   const std::map<int64_t, ProjectCounts>& counts,
                   const std::map<int64_t, std::string>& users) {
  int64_t num_projects = 0;
  int64_t num_experiments = 0;
  for (const auto& p : projects) {
    if (p.workspace_id != w.id) continue;
    ++num_projects;
    if (auto it = counts.find(p.id); it != counts.end()) num_experiments += it->second.experiments;
  }
  auto user = users.find(w.user_id);
  return json{{"id", w.id},
              {"name", w.name},
              {"archived", w.archived},
              {"username", user == users.end() ? "" : user->second},
              {"userId", w.user_id},
              {"immutable", w.immutable},
              {"numProjects", num_projects},
              {"numExperiments", num_experiments},
              {"pinned", w.pinned},
              {"state", "WORKSPACE_STATE_UNSPECIFIED"},
              {"errorMessage", ""},
              {"defaultComputePool", w.default_compute_pool},
              {"defaultAuxPool", w.default_aux_pool},
              {"checkpointStorageConfig", ShownStorage(w.checkpoint_storage)}};
}

json ProjectJson(const ProjectRow& p, const std::string& workspace_name,
                 const std::map<int64_t, ProjectCounts>& counts,
                 const std::map<int64_t, std::string>& users) {
  ProjectCounts c;
  if (auto it = counts.find(p.id); it != counts.end()) c = it->second;
  auto user = users.find(p.user_id);
  return json{
      {"id", p.id},
      {"name", p.name},
      {"key", p.key},
      {"workspaceId", p.workspace_id},
      {"workspaceName", workspace_name},
      {"description", p.description},
      {"lastExperimentStartedAt", c.last_start ? json(TimeOrNull(c.last_start)) : json(nullptr)},
      {"notes", p.notes},
      {"numExperiments", c.experiments},
      {"numActiveExperiments", c.active},
      {"numRuns", c.runs},
      {"archived", p.archived},
      {"username", user == users.end() ? "" : user->second},
      {"userId", p.user_id},
      {"immutable", p.immutable},
      {"state", "WORKSPACE_STATE_UNSPECIFIED"},
      {"errorMessage", ""}};
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The list filters as Determined's: `name` matches the whole name ignoring case,
// `nameCaseSensitive` (workspaces only) the exact name; `archived` absent = both.
bool PassesFilters(const HttpRequest& req, const std::string& name, bool archived,
                   bool case_sensitive_param) {
  std::string want = req.Query("name");
  if (!want.empty() && Lower(want) != Lower(name)) return false;
  if (case_sensitive_param) {
    std::string exact = req.Query("nameCaseSensitive");
    if (!exact.empty() && exact != name) return false;
  }
  if (!req.Query("archived").empty() && QueryBool(req, "archived", false) != archived) {
    return false;
  }
  return true;
}

// A string field of a request body, if present.
Result<std::optional<std::string>> OptString(const json& body, const char* camel,
                                             const char* snake) {
  const json* f = Field(body, camel, snake);
  if (f == nullptr) return std::optional<std::string>();
  if (!f->is_string()) return InvalidArgument(std::string(camel) + ": must be a string");
  return std::optional<std::string>(f->get<std::string>());
}

Result<int64_t> RequiredId(const json& body, const char* camel, const char* snake) {
  const json* f = Field(body, camel, snake);
  if (f == nullptr || !f->is_number_integer() || f->get<int64_t>() <= 0) {
    return InvalidArgument(std::string(camel) + ": required, a positive id");
  }
  return f->get<int64_t>();
}

class Renderer {
 public:
  explicit Renderer(server::Master* master) : master_(master) {}
  Status Load() {
    DET_ASSIGN_OR_RETURN(counts_, CountByProject(master_));
    DET_ASSIGN_OR_RETURN(projects_, master_->workspaces()->ListProjects(std::nullopt));
    DET_ASSIGN_OR_RETURN(workspaces_, master_->workspaces()->ListWorkspaces());
    users_ = Usernames(master_);
    return Status::Ok();
  }
  json Workspace(const WorkspaceRow& w) const {
    return WorkspaceJson(w, projects_, counts_, users_);
  }
  json Project(const ProjectRow& p) const {
    std::string ws_name;
    for (const auto& w : workspaces_) {
      if (w.id == p.workspace_id) ws_name = w.name;
    }
    return ProjectJson(p, ws_name, counts_, users_);
  }
  const std::vector<WorkspaceRow>& workspaces() const { return workspaces_; }
  const std::vector<ProjectRow>& projects() const { return projects_; }
  bool HasExperiments(int64_t project_id) const {
    auto it = counts_.find(project_id);
    return it != counts_.end() && it->second.experiments > 0;
  }

 private:
  server::Master* master_;
  std::map<int64_t, ProjectCounts> counts_;
  std::vector<ProjectRow> projects_;
  std::vector<WorkspaceRow> workspaces_;
  std::map<int64_t, std::string> users_;
};

// Deleting a project or workspace deletes its experiments first, as Determined's does. Every
// one must have ended (kill it first) and be the caller's own, or the caller an admin: a
// workspace's owner does not delete another user's experiment that was moved into it. Checked
// for all before any is deleted.
Status DeleteExperimentsIn(server::Master* master, const Principal& who,
                           const std::set<int64_t>& projects) {
  std::vector<int64_t> doomed;
  for (const auto& [exp_id, project_id] : master->workspaces()->Placements()) {
    if (!projects.count(project_id)) continue;
    DET_ASSIGN_OR_RETURN(server::ExperimentView v, master->experiments()->GetExperiment(exp_id));
    std::optional<core::RunState> state = core::ParseRunState(v.row.state);
    if (!state || !core::IsTerminal(*state)) {
      return FailedPrecondition("experiment " + std::to_string(exp_id) + " is " + v.row.state +
                                ": it must end (kill it) before its project is deleted");
    }
    if (!who.admin && v.row.owner_id != who.user_id) {
      return PermissionDenied("experiment " + std::to_string(exp_id) + " belongs to user '" +
                              v.username + "': only its owner or an admin may delete it");
    }
    if (*state != core::RunState::kDeleting && *state != core::RunState::kDeleted) {
      doomed.push_back(exp_id);
    }
  }
  for (int64_t id : doomed) DET_RETURN_IF_ERROR(master->experiments()->DeleteExperiment(id));
  return Status::Ok();
}

// Deleting a workspace kills the commands, notebooks, shells and TensorBoards launched in it,
// as Determined's does; each live one must be the caller's, or the caller an admin (checked for
// all before any is killed).
Status KillTasksIn(server::Master* master, const Principal& who, int64_t workspace_id) {
  std::vector<std::string> doomed;
  for (const server::TaskView& v : master->tasks()->List(std::nullopt)) {
    if (v.row.workspace_id != workspace_id || v.terminal) continue;
    if (!who.admin && v.row.owner_id != who.user_id) {
      return PermissionDenied("task " + v.row.task_id + " of user '" + v.row.username +
                              "' runs in workspace " + std::to_string(workspace_id) +
                              ": only its owner or an admin may kill it");
    }
    doomed.push_back(v.row.task_id);
  }
  for (const std::string& id : doomed) DET_RETURN_IF_ERROR(master->tasks()->Kill(id, who));
  return Status::Ok();
}

// The projects among `projects` that still hold an experiment not being deleted (one moved in
// meanwhile); those being deleted go with their rows once their files are.
std::set<int64_t> BusyProjects(server::Master* master, const std::set<int64_t>& projects) {
  std::set<int64_t> busy;
  for (const auto& [exp_id, project_id] : master->workspaces()->Placements()) {
    if (!projects.count(project_id) || busy.count(project_id)) continue;
    Result<server::ExperimentView> v = master->experiments()->GetExperiment(exp_id);
    if (!v.ok()) continue;  // gone
    std::optional<core::RunState> state = core::ParseRunState(v->row.state);
    if (state != core::RunState::kDeleting && state != core::RunState::kDeleted) {
      busy.insert(project_id);
    }
  }
  return busy;
}

// A workspace's default compute and aux pools as a POST (defaultComputePool) or a PATCH
// (defaultComputeResourcePool) names them, Determined's two spellings; unset: nullopt.
Result<std::pair<std::optional<std::string>, std::optional<std::string>>> DefaultPoolFields(
    const json& body) {
  std::pair<std::optional<std::string>, std::optional<std::string>> out;
  static const char* kFields[][2] = {{"defaultComputePool", "default_compute_pool"},
                                     {"defaultComputeResourcePool", "default_compute_resource_pool"},
                                     {"defaultAuxPool", "default_aux_pool"},
                                     {"defaultAuxResourcePool", "default_aux_resource_pool"}};
  for (int i = 0; i < 4; ++i) {
    DET_ASSIGN_OR_RETURN(std::optional<std::string> v, OptString(body, kFields[i][0], kFields[i][1]));
    if (v) (i < 2 ? out.first : out.second) = v;
  }
  return out;
}

// {workspace}; POST and PATCH answers also carry Determined's (empty) namespaceBindings.
server::HttpResponse WorkspaceResponse(server::Master* master, Result<WorkspaceRow> w,
                                       bool with_bindings = false) {
  if (!w.ok()) return ErrorResponse(w.status());
  Renderer r(master);
  if (Status st = r.Load(); !st.ok()) return ErrorResponse(st);
  json body = {{"workspace", r.Workspace(*w)}};
  if (with_bindings) body["namespaceBindings"] = json::object();
  return JsonResponse(body);
}

server::HttpResponse ProjectResponse(server::Master* master, Result<ProjectRow> p) {
  if (!p.ok()) return ErrorResponse(p.status());
  Renderer r(master);
  if (Status st = r.Load(); !st.ok()) return ErrorResponse(st);
  return JsonResponse({{"project", r.Project(*p)}});
}

// A route on {id} that runs `action(id)` and answers `answer`.
server::Handler IdRoute(server::Master* master, std::function<Status(int64_t)> action,
                        json answer = json::object(), Access access = Read()) {
  return WithAuth(master, access,
                  [action, answer](HttpRequest& req, const Principal&) -> server::HttpResponse {
                    Result<int64_t> id = PathId(req, "id");
                    if (!id.ok()) return ErrorResponse(id.status());
                    Status st = action(*id);
                    return st.ok() ? JsonResponse(answer) : ErrorResponse(st);
                  });
}

}  // namespace

json MaskedTaskDefaults(server::Master* master) {
  return server::TaskDefaultsToMask(master->config().task_container_defaults,
                                    master->config().pools);
}

json ShownConfig(server::Master* master, const json& config) {
  return core::ShownConfig(config, MaskedTaskDefaults(master));
}

json PlacedExperimentJson(server::Master* master, const server::ExperimentView& v) {
  json out = ExperimentJson(v, MaskedTaskDefaults(master));
  int64_t project_id = master->workspaces()->ProjectOf(v.row.id);
  if (project_id == 1) return out;
  auto p = master->workspaces()->GetProject(project_id);
  if (!p.ok()) return out;
  out["projectId"] = p->id;
  out["projectName"] = p->name;
  out["projectOwnerId"] = p->user_id;
  out["workspaceId"] = p->workspace_id;
  if (auto w = master->workspaces()->GetWorkspace(p->workspace_id); w.ok()) {
    out["workspaceName"] = w->name;
  }
  return out;
}

void RegisterWorkspaceRoutes(server::Router* router, server::Master* master) {
  WorkspaceService* ws = master->workspaces();

  // Workspaces.
  router->Add("GET", "/api/v1/workspaces",
              WithAuth(master, Auth::kUser, [master](HttpRequest& req, const Principal&) {
                Renderer r(master);
                if (Status st = r.Load(); !st.ok()) return ErrorResponse(st);
                bool pinned_only = QueryBool(req, "pinned", false);
                json items = json::array();
                for (const auto& w : r.workspaces()) {
                  if (!PassesFilters(req, w.name, w.archived, true)) continue;
                  if (pinned_only && !w.pinned) continue;
                  items.push_back(r.Workspace(w));
                }
                Status sorted = SortWorkspaces(items, req.Query("sortBy"), req.Query("orderBy"));
                if (!sorted.ok()) return ErrorResponse(sorted);
                auto page = Paginate(req, items, "workspaces");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));

  router->Add("GET", "/api/v1/workspaces/{id}",
              WithAuth(master, Auth::kUser, [master, ws](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                return WorkspaceResponse(master, ws->GetWorkspace(*id));
              }));

  router->Add("POST", "/api/v1/workspaces",
              WithAuth(master, Create(), [master, ws](HttpRequest& req, const Principal& who) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                if (Status st = RefuseUnsupportedWorkspaceOptions(*body); !st.ok()) {
                  return ErrorResponse(st);
                }
                auto name = OptString(*body, "name", "name");
                if (!name.ok()) return ErrorResponse(name.status());
                if (!*name) return ErrorResponse(InvalidArgument("name: required"));
                auto pools = DefaultPoolFields(*body);
                if (!pools.ok()) return ErrorResponse(pools.status());
                const json* storage =
                    Field(*body, "checkpointStorageConfig", "checkpoint_storage_config");
                return WorkspaceResponse(
                    master,
                    ws->CreateWorkspace(**name, who.user_id, pools->first.value_or(""),
                                        pools->second.value_or(""),
                                        storage == nullptr ? json() : *storage),
                    true);
              }));

  router->Add("PATCH", "/api/v1/workspaces/{id}",
              WithAuth(master, WorkspaceOwner(), [master, ws](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                if (Status st = RefuseUnsupportedWorkspaceOptions(*body); !st.ok()) {
                  return ErrorResponse(st);
                }
                auto name = OptString(*body, "name", "name");
                if (!name.ok()) return ErrorResponse(name.status());
                auto pools = DefaultPoolFields(*body);
                if (!pools.ok()) return ErrorResponse(pools.status());
                if (pools->first || pools->second) {
                  auto set = ws->SetWorkspaceDefaultPools(*id, pools->first, pools->second);
                  if (!set.ok()) return WorkspaceResponse(master, set, true);
                }
                if (const json* storage =
                        Field(*body, "checkpointStorageConfig", "checkpoint_storage_config")) {
                  auto set = ws->SetWorkspaceStorage(*id, *storage);
                  if (!set.ok()) return WorkspaceResponse(master, set, true);
                }
                if (!*name) return WorkspaceResponse(master, ws->GetWorkspace(*id), true);
                return WorkspaceResponse(master, ws->RenameWorkspace(*id, **name), true);
              }));

  router->Add("DELETE", "/api/v1/workspaces/{id}",
              WithAuth(master, WorkspaceOwner(), [master, ws](HttpRequest& req, const Principal& who) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<WorkspaceRow> target = ws->GetWorkspace(*id);
                if (!target.ok()) return ErrorResponse(target.status());
                if (target->immutable) {
                  return ErrorResponse(
                      FailedPrecondition("workspace '" + target->name + "' is immutable"));
                }
                auto projects = ws->ListProjects(*id);
                if (!projects.ok()) return ErrorResponse(projects.status());
                std::set<int64_t> ids;
                for (const auto& p : *projects) ids.insert(p.id);
                if (Status st = DeleteExperimentsIn(master, who, ids); !st.ok()) {
                  return ErrorResponse(st);
                }
                if (Status st = KillTasksIn(master, who, *id); !st.ok()) return ErrorResponse(st);
                Status st = ws->DeleteWorkspace(*id, BusyProjects(master, ids));
                return st.ok() ? JsonResponse({{"completed", true}}) : ErrorResponse(st);
              }));

  router->Add("POST", "/api/v1/workspaces/{id}/archive",
              IdRoute(
                  master, [ws](int64_t id) { return ws->SetWorkspaceArchived(id, true); },
                  json::object(), WorkspaceOwner()));
  router->Add("POST", "/api/v1/workspaces/{id}/unarchive",
              IdRoute(
                  master, [ws](int64_t id) { return ws->SetWorkspaceArchived(id, false); },
                  json::object(), WorkspaceOwner()));
  router->Add("POST", "/api/v1/workspaces/{id}/pin",
              IdRoute(master, [ws](int64_t id) { return ws->SetWorkspacePinned(id, true); }));
  router->Add("POST", "/api/v1/workspaces/{id}/unpin",
              IdRoute(master, [ws](int64_t id) { return ws->SetWorkspacePinned(id, false); }));

  // Projects.
  router->Add("GET", "/api/v1/workspaces/{id}/projects",
              WithAuth(master, Auth::kUser, [master, ws](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                if (auto w = ws->GetWorkspace(*id); !w.ok()) return ErrorResponse(w.status());
                Renderer r(master);
                if (Status st = r.Load(); !st.ok()) return ErrorResponse(st);
                json items = json::array();
                for (const auto& p : r.projects()) {
                  if (p.workspace_id != *id || !PassesFilters(req, p.name, p.archived, false))
                    continue;
                  items.push_back(r.Project(p));
                }
                if (Status sorted = SortProjects(items, req.Query("sortBy"), req.Query("orderBy"));
                    !sorted.ok()) {
                  return ErrorResponse(sorted);
                }
                auto page = Paginate(req, items, "projects");
                return page.ok() ? JsonResponse(*page) : ErrorResponse(page.status());
              }));

  router->Add("POST", "/api/v1/workspaces/{id}/projects",
              WithAuth(master, Create(), [master, ws](HttpRequest& req, const Principal& who) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                if (Status st = RefuseUnsupportedWorkspaceOptions(*body); !st.ok()) {
                  return ErrorResponse(st);
                }
                auto name = OptString(*body, "name", "name");
                if (!name.ok()) return ErrorResponse(name.status());
                if (!*name) return ErrorResponse(InvalidArgument("name: required"));
                auto description = OptString(*body, "description", "description");
                if (!description.ok()) return ErrorResponse(description.status());
                auto key = OptString(*body, "key", "key");
                if (!key.ok()) return ErrorResponse(key.status());
                return ProjectResponse(master,
                                       ws->CreateProject(*id, **name, description->value_or(""),
                                                         key->value_or(""), who.user_id));
              }));

  router->Add("GET", "/api/v1/projects/{id}",
              WithAuth(master, Auth::kUser, [master, ws](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                return ProjectResponse(master, ws->GetProject(*id));
              }));

  router->Add("PATCH", "/api/v1/projects/{id}",
              WithAuth(master, ProjectOwner(), [master, ws](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                server::ProjectPatch patch;
                for (auto [camel, field] :
                     {std::pair{"name", &patch.name}, std::pair{"description", &patch.description},
                      std::pair{"key", &patch.key}}) {
                  auto v = OptString(*body, camel, camel);
                  if (!v.ok()) return ErrorResponse(v.status());
                  *field = *v;
                }
                return ProjectResponse(master, ws->PatchProject(*id, patch));
              }));

  router->Add("DELETE", "/api/v1/projects/{id}",
              WithAuth(master, ProjectOwner(), [master, ws](HttpRequest& req, const Principal& who) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<ProjectRow> target = ws->GetProject(*id);
                if (!target.ok()) return ErrorResponse(target.status());
                if (target->immutable) {
                  return ErrorResponse(
                      FailedPrecondition("project '" + target->name + "' is immutable"));
                }
                if (Status st = DeleteExperimentsIn(master, who, {*id}); !st.ok()) {
                  return ErrorResponse(st);
                }
                Status st = ws->DeleteProject(*id, !BusyProjects(master, {*id}).empty());
                return st.ok() ? JsonResponse({{"completed", true}}) : ErrorResponse(st);
              }));

  router->Add("POST", "/api/v1/projects/{id}/archive",
              IdRoute(
                  master, [ws](int64_t id) { return ws->SetProjectArchived(id, true); },
                  json::object(), ProjectOwner()));
  router->Add("POST", "/api/v1/projects/{id}/unarchive",
              IdRoute(
                  master, [ws](int64_t id) { return ws->SetProjectArchived(id, false); },
                  json::object(), ProjectOwner()));

  router->Add("POST", "/api/v1/projects/{id}/move",
              WithAuth(master, ProjectOwner(), [ws](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                auto dest = RequiredId(*body, "destinationWorkspaceId", "destination_workspace_id");
                if (!dest.ok()) return ErrorResponse(dest.status());
                Status st = ws->MoveProject(*id, *dest);
                return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
              }));

  router->Add("GET", "/api/v1/projects/{id}/experiments",
              WithAuth(master, Auth::kUser, [master, ws](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                if (auto p = ws->GetProject(*id); !p.ok()) return ErrorResponse(p.status());
                return ListExperimentsResponse(master, req, *id);
              }));

  // Experiments between projects.
  router->Add("POST", "/api/v1/experiments/{id}/move",
              WithAuth(master, ExperimentOwner(), [master, ws](HttpRequest& req, const Principal&) {
                Result<int64_t> id = PathId(req, "id");
                if (!id.ok()) return ErrorResponse(id.status());
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                auto dest = RequiredId(*body, "destinationProjectId", "destination_project_id");
                if (!dest.ok()) return ErrorResponse(dest.status());
                if (auto e = master->experiments()->GetExperiment(*id); !e.ok())
                  return ErrorResponse(e.status());
                Status st = ws->MoveExperiment(*id, *dest);
                return st.ok() ? JsonResponse(json::object()) : ErrorResponse(st);
              }));

  // Bulk form: {projectId, destinationProjectId, experimentIds} -> {results: [{id, error}]}.
  // Each experiment is moved only for its owner or an admin, as the single route's rule; the
  // others get the refusal as their result (Determined's bulk shape) and stay where they are.
  router->Add("POST", "/api/v1/experiments/move",
              WithAuth(master, Auth::kUser, [master, ws](HttpRequest& req, const Principal& who) {
                Result<json> body = ParseBody(req);
                if (!body.ok()) return ErrorResponse(body.status());
                auto dest = RequiredId(*body, "destinationProjectId", "destination_project_id");
                if (!dest.ok()) return ErrorResponse(dest.status());
                const json* ids = Field(*body, "experimentIds", "experiment_ids");
                if (ids == nullptr || !ids->is_array()) {
                  return ErrorResponse(InvalidArgument("experimentIds: required, a list of ids"));
                }
                json results = json::array();
                for (const json& e : *ids) {
                  if (!e.is_number_integer()) {
                    return ErrorResponse(InvalidArgument("experimentIds: must be integers"));
                  }
                  int64_t exp_id = e.get<int64_t>();
                  Status st = master->experiments()->GetExperiment(exp_id).status();
                  if (st.ok()) {
                    st = AuthorizeOn(master, who, ExperimentOwner(), std::to_string(exp_id));
                  }
                  if (st.ok()) st = ws->MoveExperiment(exp_id, *dest);
                  results.push_back({{"id", exp_id}, {"error", st.ok() ? "" : st.message()}});
                }
                return JsonResponse({{"results", results}});
              }));
}

}  // namespace det::master::api
