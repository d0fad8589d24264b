// Config templates in SQLite (the templates table, migration 0008).

#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {
namespace {

TemplateRow ReadTemplate(const Statement& s) {
  TemplateRow r;
  r.name = s.Text(0);
  r.workspace_id = s.Int(1);
  r.config = nlohmann::json::parse(s.Text(2), nullptr, /*allow_exceptions=*/false);
  if (r.config.is_discarded()) r.config = nlohmann::json::object();
  return r;
}

Status TemplateNotFound(const std::string& name) {
  return NotFound("template '" + name + "' not found");
}

}  // namespace

Result<std::vector<TemplateRow>> SqliteStore::ListTemplates() {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "SELECT name, workspace_id, config FROM templates ORDER BY name");
  return s.Collect<TemplateRow>(ReadTemplate);
}

Result<TemplateRow> SqliteStore::GetTemplate(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "SELECT name, workspace_id, config FROM templates WHERE name = ?");
  s.Bind(1, name);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return TemplateNotFound(name);
  return ReadTemplate(s);
}

Status SqliteStore::InsertTemplate(const TemplateRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "INSERT INTO templates (name, workspace_id, config) VALUES (?, ?, ?)");
  Status st = s.Bind(1, row.name).Bind(2, row.workspace_id).Bind(3, row.config.dump()).Run();
  if (st.code() == StatusCode::kAlreadyExists) {
    return AlreadyExists("template '" + row.name + "' already exists");
  }
  return st;
}

Status SqliteStore::UpdateTemplate(const TemplateRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "UPDATE templates SET workspace_id = ?, config = ? WHERE name = ?");
  DET_RETURN_IF_ERROR(
      s.Bind(1, row.workspace_id).Bind(2, row.config.dump()).Bind(3, row.name).Run());
  if (db_->Changes() == 0) return TemplateNotFound(row.name);
  return Status::Ok();
}

Status SqliteStore::RenameTemplate(const std::string& old_name, const std::string& new_name) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "UPDATE templates SET name = ? WHERE name = ?");
  Status st = s.Bind(1, new_name).Bind(2, old_name).Run();
  if (st.code() == StatusCode::kAlreadyExists) {
    return AlreadyExists("template '" + new_name + "' already exists");
  }
  DET_RETURN_IF_ERROR(st);
  if (db_->Changes() == 0) return TemplateNotFound(old_name);
  return Status::Ok();
}

Status SqliteStore::DeleteTemplate(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "DELETE FROM templates WHERE name = ?");
  DET_RETURN_IF_ERROR(s.Bind(1, name).Run());
  if (db_->Changes() == 0) return TemplateNotFound(name);
  return Status::Ok();
}

}  // namespace det::master::store
