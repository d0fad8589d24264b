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
#include "master/scheduler/pool_bindings.h"
#include "master/scheduler/pool_config.h"
#include "master/store/store.h"

namespace det::master::server {

struct ProjectPatch {
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<std::string> key;
};

// What a change to a pool's bindings does (POST, DELETE and PUT
// /api/v1/resource-pools/{name}/workspace-bindings).
enum class BindingChange { kAdd, kRemove, kReplace };

class WorkspaceService {
 public:
  // `pools`: the master's resource pools (null: pools and bindings are not checked, tests).
  // `storage_roots`: the master's checkpoint_storage_allowed_roots, which a workspace's
  // checkpoint storage must stay under (nullopt: no limit).
  explicit WorkspaceService(store::Store* store,
                            const scheduler::ResourcePoolsConfig* pools = nullptr,
                            std::optional<std::vector<std::string>> storage_roots = std::nullopt);

  // Workspaces.
  Result<std::vector<store::WorkspaceRow>> ListWorkspaces();
  Result<store::WorkspaceRow> GetWorkspace(int64_t id);
  // `compute_pool` / `aux_pool`: its default pools ("" : the cluster's), each available to it.
  // `storage`: its checkpoint storage (null: none; config/workspace_storage.h).
  Result<store::WorkspaceRow> CreateWorkspace(const std::string& name, int64_t user_id,
                                              const std::string& compute_pool = "",
                                              const std::string& aux_pool = "",
                                              const nlohmann::json& storage = nullptr);
  // Replaces its checkpoint storage (null or {}: removes it).
  Result<store::WorkspaceRow> SetWorkspaceStorage(int64_t id, const nlohmann::json& storage);
  Result<store::WorkspaceRow> SetWorkspaceDefaultPools(int64_t id,
                                                       std::optional<std::string> compute_pool,
                                                       std::optional<std::string> aux_pool);
  Result<store::WorkspaceRow> RenameWorkspace(int64_t id, const std::string& name);
  Status SetWorkspaceArchived(int64_t id, bool archived);
  Status SetWorkspacePinned(int64_t id, bool pinned);
  // `busy_projects`: the projects that still hold experiments.
  Status DeleteWorkspace(int64_t id, const std::set<int64_t>& busy_projects);
  bool WorkspaceExists(int64_t id);

  // Pool bindings (scheduler/pool_bindings.h). Workspaces are named by id or name; a name or
  // id that does not exist is NotFound and changes nothing.
  // Whether `pool` may have its bindings changed so (it exists; an add or replace names no
  // default pool), asked before who asks: Determined answers that first.
  Status CheckPoolChange(const std::string& pool, BindingChange change) const;
  Status ChangePoolBindings(const std::string& pool, std::vector<int64_t> workspace_ids,
                            const std::vector<std::string>& workspace_names, BindingChange change);
  // The workspaces the pool is bound to, by id (NotFound for a pool that does not exist).
  Result<std::vector<int64_t>> WorkspacesBoundTo(const std::string& pool);
  // The pools a workspace may use, in the config's order.
  Result<std::vector<std::string>> PoolsAvailableTo(int64_t workspace_id);
  Result<scheduler::PoolBindings> Bindings();
  // The pool a request of `slots` slots in the workspace runs in (`requested`, else the
  // workspace's default, else the cluster's), refused when not available to it.
  Result<std::string> ResolvePool(int64_t workspace_id, const std::string& requested,
                                  int64_t slots);
  // The same for an experiment, in the workspace of its project.
  Result<std::string> ResolvePoolForExperiment(int64_t experiment_id,
                                               const std::string& requested, int64_t slots);

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
  Result<const scheduler::PoolBindings*> BindingsLocked();
  Result<std::string> ResolvePoolLocked(int64_t workspace_id, const std::string& requested,
                                        int64_t slots);

  store::Store* store_;
  const scheduler::ResourcePoolsConfig* pools_;
  const std::optional<std::vector<std::string>> storage_roots_;
  std::optional<scheduler::PoolBindings> bindings_;  // cache of pool_workspace_bindings
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
