// Workspaces, projects, the project of each experiment, and user administration in SQLite
// (migration 0008).

#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {
namespace {

WorkspaceRow ReadWorkspace(const Statement& s) {
  WorkspaceRow r;
  r.id = s.Int(0);
  r.name = s.Text(1);
  r.archived = s.Int(2) != 0;
  r.user_id = s.Int(3);
  r.immutable = s.Int(4) != 0;
  r.pinned = s.Int(5) != 0;
  r.default_compute_pool = s.Text(6);
  r.default_aux_pool = s.Text(7);
  if (!s.Text(8).empty()) {
    r.checkpoint_storage = nlohmann::json::parse(s.Text(8), nullptr, /*allow_exceptions=*/false);
    if (r.checkpoint_storage.is_discarded()) r.checkpoint_storage = nullptr;
  }
  return r;
}

std::string StorageText(const nlohmann::json& storage) {
  return storage.is_null() ? std::string() : storage.dump();
}

ProjectRow ReadProject(const Statement& s) {
  ProjectRow r;
  r.id = s.Int(0);
  r.name = s.Text(1);
  r.workspace_id = s.Int(2);
  r.description = s.Text(3);
  r.key = s.Text(4);
  r.archived = s.Int(5) != 0;
  r.user_id = s.Int(6);
  r.immutable = s.Int(7) != 0;
  r.notes = nlohmann::json::parse(s.Text(8), nullptr, /*allow_exceptions=*/false);
  if (!r.notes.is_array()) r.notes = nlohmann::json::array();
  return r;
}

// A constraint failure as AlreadyExists naming `what`.
Status Taken(const Status& st, const std::string& what) {
  if (st.code() == StatusCode::kAlreadyExists) return AlreadyExists(what + " already exists");
  return st;
}

}  // namespace

Result<std::vector<WorkspaceRow>> SqliteStore::ListWorkspaces() {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "SELECT id, name, archived, user_id, immutable, pinned, default_compute_pool, "
              "default_aux_pool, checkpoint_storage FROM workspaces ORDER BY id");
  return s.Collect<WorkspaceRow>(ReadWorkspace);
}

Result<int64_t> SqliteStore::InsertWorkspace(const WorkspaceRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "INSERT INTO workspaces (name, archived, user_id, immutable, pinned, "
              "default_compute_pool, default_aux_pool, checkpoint_storage) "
              "VALUES (?, ?, ?, 0, ?, ?, ?, ?)");
  DET_RETURN_IF_ERROR(Taken(s.Bind(1, row.name)
                                .Bind(2, row.archived)
                                .Bind(3, row.user_id)
                                .Bind(4, row.pinned)
                                .Bind(5, row.default_compute_pool)
                                .Bind(6, row.default_aux_pool)
                                .Bind(7, StorageText(row.checkpoint_storage))
                                .Run(),
                            "workspace '" + row.name + "'"));
  return db_->LastInsertId();
}

Status SqliteStore::UpdateWorkspace(const WorkspaceRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "UPDATE workspaces SET name = ?, archived = ?, pinned = ?, default_compute_pool = ?, "
              "default_aux_pool = ?, checkpoint_storage = ? WHERE id = ?");
  DET_RETURN_IF_ERROR(Taken(s.Bind(1, row.name)
                                .Bind(2, row.archived)
                                .Bind(3, row.pinned)
                                .Bind(4, row.default_compute_pool)
                                .Bind(5, row.default_aux_pool)
                                .Bind(6, StorageText(row.checkpoint_storage))
                                .Bind(7, row.id)
                                .Run(),
                            "workspace '" + row.name + "'"));
  if (db_->Changes() == 0) return NotFound("workspace " + std::to_string(row.id) + " not found");
  return Status::Ok();
}

Status SqliteStore::DeleteWorkspace(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  static const char* kStatements[] = {
      "DELETE FROM templates WHERE workspace_id = ?",
      ("DELETE FROM experiment_projects WHERE project_id IN (SELECT id FROM projects WHERE "
       "workspace_id = ?)"),
      "DELETE FROM projects WHERE workspace_id = ?",
      "DELETE FROM pool_workspace_bindings WHERE workspace_id = ?",
      "DELETE FROM workspaces WHERE id = ?",
  };
  Status st = ExecEachWithIdLocked(kStatements, id);
  if (st.ok() && db_->Changes() == 0) {
    st = NotFound("workspace " + std::to_string(id) + " not found");
  }
  if (!st.ok()) {
    (void)Exec("ROLLBACK");
    return st;
  }
  return Exec("COMMIT");
}

Result<std::vector<PoolBindingRow>> SqliteStore::ListPoolBindings() {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 "SELECT pool_name, workspace_id FROM pool_workspace_bindings "
                 "ORDER BY pool_name, workspace_id");
  return s.Collect<PoolBindingRow>(
      [](const Statement& st) { return PoolBindingRow{st.Text(0), st.Int(1)}; });
}

Status SqliteStore::ChangePoolBindings(const std::string& pool_name,
                                       const std::vector<int64_t>& add,
                                       const std::vector<int64_t>& remove, bool replace) {
  std::lock_guard<std::mutex> lock(mu_);
  auto binding = [&pool_name](int64_t id) {
    return "the binding of resource pool " + pool_name + " to workspace " + std::to_string(id);
  };
  return InWriteTransactionLocked([&]() -> Status {
    if (replace) {
      DET_PREPARE(clear, "DELETE FROM pool_workspace_bindings WHERE pool_name = ?");
      DET_RETURN_IF_ERROR(clear.Bind(1, pool_name).Run());
    }
    DET_PREPARE(del,
                "DELETE FROM pool_workspace_bindings WHERE pool_name = ? AND workspace_id = ?");
    for (int64_t id : remove) {
      del.Reset();
      DET_RETURN_IF_ERROR(del.Bind(1, pool_name).Bind(2, id).Run());
      if (db_->Changes() == 0) return NotFound(binding(id) + " does not exist");
    }
    DET_PREPARE(put, "INSERT INTO pool_workspace_bindings (pool_name, workspace_id) VALUES (?, ?)");
    for (int64_t id : add) {
      put.Reset();
      Status st = put.Bind(1, pool_name).Bind(2, id).Run();
      if (st.code() == StatusCode::kAlreadyExists) return AlreadyExists(binding(id) + " exists");
      DET_RETURN_IF_ERROR(st);
    }
    return Status::Ok();
  });
}

Result<std::vector<ProjectRow>> SqliteStore::ListProjects() {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "SELECT id, name, workspace_id, description, key, archived, user_id, "
              "immutable, notes FROM projects ORDER BY id");
  return s.Collect<ProjectRow>(ReadProject);
}

Result<int64_t> SqliteStore::InsertProject(const ProjectRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "INSERT INTO projects (name, workspace_id, description, key, archived, "
              "user_id, immutable, notes) VALUES (?, ?, ?, ?, ?, ?, 0, ?)");
  DET_RETURN_IF_ERROR(Taken(s.Bind(1, row.name)
                                .Bind(2, row.workspace_id)
                                .Bind(3, row.description)
                                .Bind(4, row.key)
                                .Bind(5, row.archived)
                                .Bind(6, row.user_id)
                                .Bind(7, row.notes.dump())
                                .Run(),
                            "project '" + row.name + "' (or key '" + row.key + "')"));
  return db_->LastInsertId();
}

Status SqliteStore::UpdateProject(const ProjectRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "UPDATE projects SET name = ?, workspace_id = ?, description = ?, key = ?, "
              "archived = ?, notes = ? WHERE id = ?");
  DET_RETURN_IF_ERROR(Taken(s.Bind(1, row.name)
                                .Bind(2, row.workspace_id)
                                .Bind(3, row.description)
                                .Bind(4, row.key)
                                .Bind(5, row.archived)
                                .Bind(6, row.notes.dump())
                                .Bind(7, row.id)
                                .Run(),
                            "project '" + row.name + "' (or key '" + row.key + "')"));
  if (db_->Changes() == 0) return NotFound("project " + std::to_string(row.id) + " not found");
  return Status::Ok();
}

Status SqliteStore::DeleteProject(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "DELETE FROM projects WHERE id = ?");
  DET_RETURN_IF_ERROR(s.Bind(1, id).Run());
  if (db_->Changes() == 0) return NotFound("project " + std::to_string(id) + " not found");
  return Status::Ok();
}

Result<std::vector<std::pair<int64_t, int64_t>>> SqliteStore::ListExperimentProjects() {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "SELECT experiment_id, project_id FROM experiment_projects "
              "ORDER BY experiment_id");
  return s.Collect<std::pair<int64_t, int64_t>>(
      [](const Statement& st) { return std::make_pair(st.Int(0), st.Int(1)); });
}

Status SqliteStore::SetExperimentProject(int64_t experiment_id, int64_t project_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (project_id == 1) {
    DET_PREPARE(s, "DELETE FROM experiment_projects WHERE experiment_id = ?");
    return s.Bind(1, experiment_id).Run();
  }
  DET_PREPARE(s,
              "INSERT INTO experiment_projects (experiment_id, project_id) VALUES (?, ?) "
              "ON CONFLICT (experiment_id) DO UPDATE SET project_id = excluded.project_id");
  return s.Bind(1, experiment_id).Bind(2, project_id).Run();
}

Result<int64_t> SqliteStore::InsertUser(const UserRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "INSERT INTO users (username, password_hash, admin, active, display_name) "
              "VALUES (?, ?, ?, ?, ?)");
  DET_RETURN_IF_ERROR(Taken(s.Bind(1, row.username)
                                .Bind(2, row.password_hash)
                                .Bind(3, row.admin)
                                .Bind(4, row.active)
                                .Bind(5, row.display_name)
                                .Run(),
                            "user '" + row.username + "'"));
  return db_->LastInsertId();
}

Status SqliteStore::UpdateUser(const UserRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "UPDATE users SET username = ?, admin = ?, active = ?, display_name = ? "
              "WHERE id = ?");
  DET_RETURN_IF_ERROR(Taken(s.Bind(1, row.username)
                                .Bind(2, row.admin)
                                .Bind(3, row.active)
                                .Bind(4, row.display_name)
                                .Bind(5, row.id)
                                .Run(),
                            "user '" + row.username + "'"));
  if (db_->Changes() == 0) return NotFound("user " + std::to_string(row.id) + " not found");
  return Status::Ok();
}

}  // namespace det::master::store
