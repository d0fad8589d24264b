#pragma once
// WorkspaceService: workspaces, the projects in them, and the project of each experiment
// (det workspace / det project / det experiment move; /api/v1/workspaces, /projects,
// /experiments/{id}/move). Workspace 1 and project 1, both "Uncategorized", are built in and
// immutable; an experiment not placed elsewhere belongs to project 1.
//
// Rules (as Determined's, except where docs/compatibility.md says otherwise): names are
// 1-80 characters; workspace names are unique, project names unique within their workspace and
// project keys (1-5 letters or digits, upper-cased) unique; nothing is created in or moved into
// an archived workspace or project; a project or workspace is deleted with its experiments,
// which must all have ended (the routes delete those first; one moved in meanwhile refuses it).

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "master/store/store.h"

namespace det::master::server {

struct ProjectPatch {
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<std::string> key;
};

class WorkspaceService {
 public:
  explicit WorkspaceService(store::Store* store);

  // Workspaces.
  Result<std::vector<store::WorkspaceRow>> ListWorkspaces();
  Result<store::WorkspaceRow> GetWorkspace(int64_t id);
  Result<store::WorkspaceRow> CreateWorkspace(const std::string& name, int64_t user_id);
  Result<store::WorkspaceRow> RenameWorkspace(int64_t id, const std::string& name);
  Status SetWorkspaceArchived(int64_t id, bool archived);
  Status SetWorkspacePinned(int64_t id, bool pinned);
  // `busy_projects`: the projects that still hold experiments.
  Status DeleteWorkspace(int64_t id, const std::set<int64_t>& busy_projects);
  bool WorkspaceExists(int64_t id);

  // Projects.
  // Every project, or those of one workspace.
  Result<std::vector<store::ProjectRow>> ListProjects(std::optional<int64_t> workspace_id);
  Result<store::ProjectRow> GetProject(int64_t id);
  // `key` empty: derived from the name.
  Result<store::ProjectRow> CreateProject(int64_t workspace_id, const std::string& name,
                                          const std::string& description, const std::string& key,
                                          int64_t user_id);
  Result<store::ProjectRow> PatchProject(int64_t id, const ProjectPatch& patch);
  Status SetProjectArchived(int64_t id, bool archived);
  Status MoveProject(int64_t id, int64_t workspace_id);
  Status DeleteProject(int64_t id, bool has_experiments);
  // compat11: a project's notes ([{name, contents}], Determined's PutProjectNotes /
  // AddProjectNote); both return every note of the project afterwards. Notes may be set on any
  // project, the built-in one and archived ones included, as in Determined.
  Result<nlohmann::json> SetProjectNotes(int64_t id, const nlohmann::json& notes);
  Result<nlohmann::json> AddProjectNote(int64_t id, const nlohmann::json& note);

  // Experiments.
  // The project of an experiment (1 unless moved).
  int64_t ProjectOf(int64_t experiment_id);
  // Experiment id -> project id for every experiment outside project 1.
  std::map<int64_t, int64_t> Placements();
  // Moves an experiment into a project that exists and is not archived.
  Status MoveExperiment(int64_t experiment_id, int64_t project_id);

 private:
  Status LoadLocked();
  Result<store::WorkspaceRow> GetWorkspaceLocked(int64_t id);
  Result<store::ProjectRow> GetProjectLocked(int64_t id);
  Result<std::string> UniqueKeyLocked(const std::string& name);

  store::Store* store_;
  std::mutex mu_;
  bool loaded_ = false;
  std::map<int64_t, int64_t> placements_;  // cache of experiment_projects
};

// Checks one note ({name, contents}, both strings; `field` names it in errors) and returns it
// with only those two fields (pure).
Result<nlohmann::json> NormalizeProjectNote(const nlohmann::json& note, const std::string& field);

// Name and key rules (pure).
Status CheckEntityName(const std::string& what, const std::string& name);
// A key of 1-5 letters or digits, upper-cased; an error names the rule.
Result<std::string> NormalizeProjectKey(const std::string& key);
// The key derived from a project name: its first five letters or digits, upper-cased
// ("PROJ" when it has none).
std::string KeyFromName(const std::string& name);

}  // namespace det::master::server
