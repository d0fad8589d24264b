#include "master/server/workspace_service.h"

#include <cctype>
#include <set>

#include "master/config/workspace_storage.h"

namespace det::master::server {

using store::ProjectRow;
using store::WorkspaceRow;

Status CheckEntityName(const std::string& what, const std::string& name) {
  if (name.empty()) return InvalidArgument(what + " name: must not be empty");
  if (name.size() > 80) {
    return InvalidArgument(what + " name: at most 80 characters (got " +
                           std::to_string(name.size()) + ")");
  }
  if (std::isspace(static_cast<unsigned char>(name.front())) ||
      std::isspace(static_cast<unsigned char>(name.back()))) {
    return InvalidArgument(what + " name: must not start or end with whitespace (got '" + name +
                           "')");
  }
  return Status::Ok();
}

Result<std::string> NormalizeProjectKey(const std::string& key) {
  if (key.empty() || key.size() > 5) {
    return InvalidArgument("key: 1 to 5 letters or digits (got '" + key + "')");
  }
  std::string out;
  for (unsigned char c : key) {
    if (!std::isalnum(c)) {
      return InvalidArgument("key: 1 to 5 letters or digits (got '" + key + "')");
    }
    out.push_back(static_cast<char>(std::toupper(c)));
  }
  return out;
}

std::string KeyFromName(const std::string& name) {
  std::string key;
  for (unsigned char c : name) {
    if (std::isalnum(c) && c < 0x80) key.push_back(static_cast<char>(std::toupper(c)));
    if (key.size() == 5) break;
  }
  return key.empty() ? "PROJ" : key;
}

namespace {

// `st` with the request field it is about in front of its message.
Status NamedField(const char* field, const Status& st) {
  if (st.ok()) return st;
  return Status(st.code(), std::string(field) + ": " + st.message());
}

}  // namespace

WorkspaceService::WorkspaceService(store::Store* store,
                                   const scheduler::ResourcePoolsConfig* pools,
                                   std::optional<std::vector<std::string>> storage_roots)
    : store_(store), pools_(pools), storage_roots_(std::move(storage_roots)) {}

Result<const scheduler::PoolBindings*> WorkspaceService::BindingsLocked() {
  if (!bindings_) {
    DET_ASSIGN_OR_RETURN(std::vector<store::PoolBindingRow> rows, store_->ListPoolBindings());
    scheduler::PoolBindings b;
    for (const store::PoolBindingRow& r : rows) b[r.pool_name].insert(r.workspace_id);
    bindings_ = std::move(b);
  }
  return &*bindings_;
}

Result<scheduler::PoolBindings> WorkspaceService::Bindings() {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(const scheduler::PoolBindings* b, BindingsLocked());
  return *b;
}

Status WorkspaceService::CheckPoolChange(const std::string& pool, BindingChange change) const {
  if (pools_ == nullptr) return Status::Ok();
  if (change != BindingChange::kRemove) return scheduler::CheckBindablePool(*pools_, pool);
  if (pools_->Find(pool) == nullptr) return NotFound("pool with name " + pool + " doesn't exist");
  return Status::Ok();
}

Status WorkspaceService::ChangePoolBindings(const std::string& pool,
                                            std::vector<int64_t> workspace_ids,
                                            const std::vector<std::string>& workspace_names,
                                            BindingChange change) {
  DET_RETURN_IF_ERROR(CheckPoolChange(pool, change));
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(auto all, store_->ListWorkspaces());
  std::map<std::string, int64_t> by_name;
  std::set<int64_t> ids;
  for (const WorkspaceRow& w : all) {
    by_name[w.name] = w.id;
    ids.insert(w.id);
  }
  for (const std::string& name : workspace_names) {
    auto it = by_name.find(name);
    if (it == by_name.end()) return NotFound("workspace '" + name + "' not found");
    workspace_ids.push_back(it->second);
  }
  std::set<int64_t> unique;
  std::vector<int64_t> ordered;
  for (int64_t id : workspace_ids) {
    if (!ids.count(id)) return NotFound("workspace " + std::to_string(id) + " not found");
    if (unique.insert(id).second) ordered.push_back(id);
  }
  bool remove = change == BindingChange::kRemove;
  DET_RETURN_IF_ERROR(store_->ChangePoolBindings(pool, remove ? std::vector<int64_t>{} : ordered,
                                                 remove ? ordered : std::vector<int64_t>{},
                                                 change == BindingChange::kReplace));
  bindings_.reset();
  return Status::Ok();
}

Result<std::vector<int64_t>> WorkspaceService::WorkspacesBoundTo(const std::string& pool) {
  if (pools_ != nullptr && pools_->Find(pool) == nullptr) {
    return NotFound("pool with name " + pool + " doesn't exist or is not available");
  }
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(const scheduler::PoolBindings* b, BindingsLocked());
  auto it = b->find(pool);
  if (it == b->end()) return std::vector<int64_t>{};
  return std::vector<int64_t>(it->second.begin(), it->second.end());
}

Result<std::vector<std::string>> WorkspaceService::PoolsAvailableTo(int64_t workspace_id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(GetWorkspaceLocked(workspace_id).status());
  if (pools_ == nullptr) return std::vector<std::string>{};
  DET_ASSIGN_OR_RETURN(const scheduler::PoolBindings* b, BindingsLocked());
  return scheduler::PoolsAvailableTo(*pools_, *b, workspace_id);
}

Result<std::string> WorkspaceService::ResolvePoolLocked(int64_t workspace_id,
                                                        const std::string& requested,
                                                        int64_t slots) {
  if (pools_ == nullptr) return requested;
  DET_ASSIGN_OR_RETURN(WorkspaceRow ws, GetWorkspaceLocked(workspace_id));
  DET_ASSIGN_OR_RETURN(const scheduler::PoolBindings* b, BindingsLocked());
  return scheduler::ResolvePoolForWorkspace(
      *pools_, *b, {ws.id, ws.default_compute_pool, ws.default_aux_pool}, requested, slots);
}

Result<std::string> WorkspaceService::ResolvePool(int64_t workspace_id,
                                                  const std::string& requested, int64_t slots) {
  std::lock_guard<std::mutex> lock(mu_);
  return ResolvePoolLocked(workspace_id, requested, slots);
}

Result<std::string> WorkspaceService::ResolvePoolForExperiment(int64_t experiment_id,
                                                               const std::string& requested,
                                                               int64_t slots) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(LoadLocked());
  auto placed = placements_.find(experiment_id);
  int64_t workspace_id = 1;
  if (placed != placements_.end()) {
    DET_ASSIGN_OR_RETURN(ProjectRow project, GetProjectLocked(placed->second));
    workspace_id = project.workspace_id;
  }
  return ResolvePoolLocked(workspace_id, requested, slots);
}

Status WorkspaceService::LoadLocked() {
  if (loaded_) return Status::Ok();
  DET_ASSIGN_OR_RETURN(auto rows, store_->ListExperimentProjects());
  placements_.clear();
  for (const auto& [exp, project] : rows) placements_[exp] = project;
  loaded_ = true;
  return Status::Ok();
}

Result<WorkspaceRow> WorkspaceService::GetWorkspaceLocked(int64_t id) {
  DET_ASSIGN_OR_RETURN(auto all, store_->ListWorkspaces());
  for (auto& w : all) {
    if (w.id == id) return w;
  }
  return NotFound("workspace " + std::to_string(id) + " not found");
}

Result<ProjectRow> WorkspaceService::GetProjectLocked(int64_t id) {
  DET_ASSIGN_OR_RETURN(auto all, store_->ListProjects());
  for (auto& p : all) {
    if (p.id == id) return p;
  }
  return NotFound("project " + std::to_string(id) + " not found");
}

Result<std::vector<WorkspaceRow>> WorkspaceService::ListWorkspaces() {
  std::lock_guard<std::mutex> lock(mu_);
  return store_->ListWorkspaces();
}

Result<WorkspaceRow> WorkspaceService::GetWorkspace(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  return GetWorkspaceLocked(id);
}

bool WorkspaceService::WorkspaceExists(int64_t id) { return GetWorkspace(id).ok(); }

Result<WorkspaceRow> WorkspaceService::CreateWorkspace(const std::string& name, int64_t user_id,
                                                       const std::string& compute_pool,
                                                       const std::string& aux_pool,
                                                       const nlohmann::json& storage) {
  DET_RETURN_IF_ERROR(CheckEntityName("workspace", name));
  DET_ASSIGN_OR_RETURN(nlohmann::json checked,
                       config::CheckWorkspaceStorage(storage, storage_roots_));
  std::lock_guard<std::mutex> lock(mu_);
  if (pools_ != nullptr) {
    // A new workspace has no bindings: it may use the unbound pools.
    DET_ASSIGN_OR_RETURN(const scheduler::PoolBindings* b, BindingsLocked());
    DET_RETURN_IF_ERROR(NamedField(
        "defaultComputePool", scheduler::CheckWorkspaceDefaultPool(*pools_, *b, 0, compute_pool)));
    DET_RETURN_IF_ERROR(NamedField(
        "defaultAuxPool", scheduler::CheckWorkspaceDefaultPool(*pools_, *b, 0, aux_pool)));
  }
  WorkspaceRow row;
  row.name = name;
  row.user_id = user_id;
  row.default_compute_pool = compute_pool;
  row.default_aux_pool = aux_pool;
  row.checkpoint_storage = std::move(checked);
  DET_ASSIGN_OR_RETURN(row.id, store_->InsertWorkspace(row));
  return row;
}

Result<WorkspaceRow> WorkspaceService::SetWorkspaceStorage(int64_t id,
                                                           const nlohmann::json& storage) {
  DET_ASSIGN_OR_RETURN(nlohmann::json checked,
                       config::CheckWorkspaceStorage(storage, storage_roots_));
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(WorkspaceRow row, GetWorkspaceLocked(id));
  if (row.archived) {
    return FailedPrecondition("workspace '" + row.name + "' is archived: unarchive it first");
  }
  row.checkpoint_storage = std::move(checked);
  DET_RETURN_IF_ERROR(store_->UpdateWorkspace(row));
  return row;
}

Result<WorkspaceRow> WorkspaceService::SetWorkspaceDefaultPools(
    int64_t id, std::optional<std::string> compute_pool, std::optional<std::string> aux_pool) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(WorkspaceRow row, GetWorkspaceLocked(id));
  if (row.archived) {
    return FailedPrecondition("workspace '" + row.name + "' is archived: unarchive it first");
  }
  if (pools_ != nullptr) {
    DET_ASSIGN_OR_RETURN(const scheduler::PoolBindings* b, BindingsLocked());
    DET_RETURN_IF_ERROR(NamedField(
        "defaultComputeResourcePool",
        scheduler::CheckWorkspaceDefaultPool(*pools_, *b, id, compute_pool.value_or(""))));
    DET_RETURN_IF_ERROR(NamedField(
        "defaultAuxResourcePool",
        scheduler::CheckWorkspaceDefaultPool(*pools_, *b, id, aux_pool.value_or(""))));
  }
  if (compute_pool) row.default_compute_pool = *compute_pool;
  if (aux_pool) row.default_aux_pool = *aux_pool;
  DET_RETURN_IF_ERROR(store_->UpdateWorkspace(row));
  return row;
}

Result<WorkspaceRow> WorkspaceService::RenameWorkspace(int64_t id, const std::string& name) {
  DET_RETURN_IF_ERROR(CheckEntityName("workspace", name));
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(WorkspaceRow row, GetWorkspaceLocked(id));
  if (row.immutable) return FailedPrecondition("workspace '" + row.name + "' is immutable");
  // As Determined: an archived workspace is read-only until unarchived.
  if (row.archived) {
    return FailedPrecondition("workspace '" + row.name + "' is archived: unarchive it first");
  }
  row.name = name;
  DET_RETURN_IF_ERROR(store_->UpdateWorkspace(row));
  return row;
}

Status WorkspaceService::SetWorkspaceArchived(int64_t id, bool archived) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(WorkspaceRow row, GetWorkspaceLocked(id));
  if (row.immutable) return FailedPrecondition("workspace '" + row.name + "' is immutable");
  if (row.archived == archived) {
    return FailedPrecondition("workspace '" + row.name + "' is " +
                              (archived ? "already archived" : "not archived"));
  }
  row.archived = archived;
  return store_->UpdateWorkspace(row);
}

Status WorkspaceService::SetWorkspacePinned(int64_t id, bool pinned) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(WorkspaceRow row, GetWorkspaceLocked(id));
  row.pinned = pinned;
  return store_->UpdateWorkspace(row);
}

Status WorkspaceService::DeleteWorkspace(int64_t id, const std::set<int64_t>& busy_projects) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(WorkspaceRow row, GetWorkspaceLocked(id));
  if (row.immutable) return FailedPrecondition("workspace '" + row.name + "' is immutable");
  DET_ASSIGN_OR_RETURN(auto projects, store_->ListProjects());
  for (const auto& p : projects) {
    if (p.workspace_id == id && busy_projects.count(p.id)) {
      return FailedPrecondition("workspace '" + row.name + "' holds experiments (project '" +
                                p.name + "'); move or delete them first");
    }
  }
  bindings_.reset();  // its bindings go with it
  return store_->DeleteWorkspace(id);
}

Result<std::vector<ProjectRow>> WorkspaceService::ListProjects(
    std::optional<int64_t> workspace_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (workspace_id) DET_RETURN_IF_ERROR(GetWorkspaceLocked(*workspace_id).status());
  DET_ASSIGN_OR_RETURN(auto all, store_->ListProjects());
  std::vector<ProjectRow> out;
  for (auto& p : all) {
    if (!workspace_id || p.workspace_id == *workspace_id) out.push_back(std::move(p));
  }
  return out;
}

Result<ProjectRow> WorkspaceService::GetProject(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  return GetProjectLocked(id);
}

Result<std::string> WorkspaceService::UniqueKeyLocked(const std::string& name) {
  DET_ASSIGN_OR_RETURN(auto all, store_->ListProjects());
  std::set<std::string> taken;
  for (const auto& p : all) taken.insert(p.key);
  std::string base = KeyFromName(name);
  if (!taken.count(base)) return base;
  for (int i = 1; i < 100000; ++i) {
    std::string suffix = std::to_string(i);
    std::string key = base.substr(0, 5 - std::min<size_t>(suffix.size(), 4)) + suffix;
    if (!taken.count(key)) return key;
  }
  return Internal("no free project key for '" + name + "'");
}

Result<ProjectRow> WorkspaceService::CreateProject(int64_t workspace_id, const std::string& name,
                                                   const std::string& description,
                                                   const std::string& key, int64_t user_id) {
  DET_RETURN_IF_ERROR(CheckEntityName("project", name));
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(WorkspaceRow ws, GetWorkspaceLocked(workspace_id));
  if (ws.archived) {
    return FailedPrecondition("workspace '" + ws.name + "' is archived; unarchive it first");
  }
  ProjectRow row;
  row.name = name;
  row.workspace_id = workspace_id;
  row.description = description;
  row.user_id = user_id;
  if (key.empty()) {
    DET_ASSIGN_OR_RETURN(row.key, UniqueKeyLocked(name));
  } else {
    DET_ASSIGN_OR_RETURN(row.key, NormalizeProjectKey(key));
  }
  DET_ASSIGN_OR_RETURN(row.id, store_->InsertProject(row));
  return row;
}

Result<ProjectRow> WorkspaceService::PatchProject(int64_t id, const ProjectPatch& patch) {
  if (patch.name) DET_RETURN_IF_ERROR(CheckEntityName("project", *patch.name));
  std::optional<std::string> key;
  if (patch.key) {
    DET_ASSIGN_OR_RETURN(key, NormalizeProjectKey(*patch.key));
  }
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ProjectRow row, GetProjectLocked(id));
  if (row.immutable) return FailedPrecondition("project '" + row.name + "' is immutable");
  if (patch.name) row.name = *patch.name;
  if (patch.description) row.description = *patch.description;
  if (key) row.key = *key;
  DET_RETURN_IF_ERROR(store_->UpdateProject(row));
  return row;
}

Result<nlohmann::json> NormalizeProjectNote(const nlohmann::json& note, const std::string& field) {
  if (!note.is_object()) {
    return InvalidArgument(field + ": must be an object {name, contents} (got " + note.dump() +
                           ")");
  }
  nlohmann::json out = nlohmann::json::object();
  for (const char* key : {"name", "contents"}) {
    auto it = note.find(key);
    if (it == note.end() || !it->is_string()) {
      return InvalidArgument(field + "." + key + ": must be a string (got " +
                             (it == note.end() ? std::string("nothing") : it->dump()) + ")");
    }
    out[key] = *it;
  }
  return out;
}

Result<nlohmann::json> WorkspaceService::SetProjectNotes(int64_t id, const nlohmann::json& notes) {
  if (!notes.is_array()) {
    return InvalidArgument("notes: must be a list of {name, contents} (got " + notes.dump() + ")");
  }
  nlohmann::json clean = nlohmann::json::array();
  for (size_t i = 0; i < notes.size(); ++i) {
    DET_ASSIGN_OR_RETURN(nlohmann::json n,
                         NormalizeProjectNote(notes[i], "notes[" + std::to_string(i) + "]"));
    clean.push_back(std::move(n));
  }
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ProjectRow row, GetProjectLocked(id));
  row.notes = clean;
  DET_RETURN_IF_ERROR(store_->UpdateProject(row));
  return clean;
}

Result<nlohmann::json> WorkspaceService::AddProjectNote(int64_t id, const nlohmann::json& note) {
  DET_ASSIGN_OR_RETURN(nlohmann::json clean, NormalizeProjectNote(note, "note"));
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ProjectRow row, GetProjectLocked(id));
  if (!row.notes.is_array()) row.notes = nlohmann::json::array();
  row.notes.push_back(std::move(clean));
  DET_RETURN_IF_ERROR(store_->UpdateProject(row));
  return row.notes;
}

Status WorkspaceService::SetProjectArchived(int64_t id, bool archived) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ProjectRow row, GetProjectLocked(id));
  if (row.immutable) return FailedPrecondition("project '" + row.name + "' is immutable");
  if (row.archived == archived) {
    return FailedPrecondition("project '" + row.name + "' is " +
                              (archived ? "already archived" : "not archived"));
  }
  if (!archived) {
    DET_ASSIGN_OR_RETURN(WorkspaceRow ws, GetWorkspaceLocked(row.workspace_id));
    if (ws.archived) {
      return FailedPrecondition("workspace '" + ws.name + "' is archived; unarchive it first");
    }
  }
  row.archived = archived;
  return store_->UpdateProject(row);
}

Status WorkspaceService::MoveProject(int64_t id, int64_t workspace_id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ProjectRow row, GetProjectLocked(id));
  if (row.immutable) return FailedPrecondition("project '" + row.name + "' is immutable");
  DET_ASSIGN_OR_RETURN(WorkspaceRow ws, GetWorkspaceLocked(workspace_id));
  if (ws.archived) return FailedPrecondition("workspace '" + ws.name + "' is archived");
  row.workspace_id = workspace_id;
  return store_->UpdateProject(row);
}

Status WorkspaceService::DeleteProject(int64_t id, bool has_experiments) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_ASSIGN_OR_RETURN(ProjectRow row, GetProjectLocked(id));
  if (row.immutable) return FailedPrecondition("project '" + row.name + "' is immutable");
  if (has_experiments) {
    return FailedPrecondition("project '" + row.name +
                              "' holds experiments; move or delete them first");
  }
  return store_->DeleteProject(id);
}

int64_t WorkspaceService::ProjectOf(int64_t experiment_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!LoadLocked().ok()) return 1;
  auto it = placements_.find(experiment_id);
  return it == placements_.end() ? 1 : it->second;
}

std::map<int64_t, int64_t> WorkspaceService::Placements() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!LoadLocked().ok()) return {};
  return placements_;
}

Status WorkspaceService::MoveExperiment(int64_t experiment_id, int64_t project_id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(LoadLocked());
  DET_ASSIGN_OR_RETURN(ProjectRow project, GetProjectLocked(project_id));
  if (project.archived) {
    return FailedPrecondition("project '" + project.name + "' is archived");
  }
  DET_ASSIGN_OR_RETURN(WorkspaceRow ws, GetWorkspaceLocked(project.workspace_id));
  if (ws.archived) return FailedPrecondition("workspace '" + ws.name + "' is archived");
  DET_RETURN_IF_ERROR(store_->SetExperimentProject(experiment_id, project_id));
  if (project_id == 1) {
    placements_.erase(experiment_id);
  } else {
    placements_[experiment_id] = project_id;
  }
  return Status::Ok();
}

}  // namespace det::master::server
