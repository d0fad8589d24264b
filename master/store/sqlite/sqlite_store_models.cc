// SqliteStore: the model registry (models, model_versions; 0007_model_registry.sql).

#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {
namespace {

using nlohmann::json;

json ParseObject(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : json::object();
}

std::vector<std::string> ParseLabels(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const auto& l : j) {
    if (l.is_string()) out.push_back(l.get<std::string>());
  }
  return out;
}

std::string LabelsText(const std::vector<std::string>& labels) { return json(labels).dump(); }

// Every model column plus its version count.
constexpr const char* kModelSelect =
    "SELECT m.id, m.name, m.description, m.notes, m.metadata, m.labels, m.user_id, "
    "m.workspace_id, m.archived, m.creation_time, m.last_updated_time, "
    "(SELECT COUNT(*) FROM model_versions v WHERE v.model_id = m.id) FROM models m ";

ModelRow ReadModel(const Statement& s) {
  ModelRow r;
  r.id = s.Int(0);
  r.name = s.Text(1);
  r.description = s.Text(2);
  r.notes = s.Text(3);
  r.metadata = ParseObject(s.Text(4));
  r.labels = ParseLabels(s.Text(5));
  r.user_id = s.Int(6);
  r.workspace_id = s.Int(7);
  r.archived = s.Int(8) != 0;
  r.creation_time = s.Int(9);
  r.last_updated_time = s.Int(10);
  r.num_versions = s.Int(11);
  return r;
}

constexpr const char* kVersionSelect =
    "SELECT id, model_id, version, checkpoint_uuid, name, comment, notes, metadata, labels, "
    "user_id, creation_time, last_updated_time FROM model_versions ";

ModelVersionRow ReadVersion(const Statement& s) {
  ModelVersionRow r;
  r.id = s.Int(0);
  r.model_id = s.Int(1);
  r.version = s.Int(2);
  r.checkpoint_uuid = s.Text(3);
  r.name = s.Text(4);
  r.comment = s.Text(5);
  r.notes = s.Text(6);
  r.metadata = ParseObject(s.Text(7));
  r.labels = ParseLabels(s.Text(8));
  r.user_id = s.Int(9);
  r.creation_time = s.Int(10);
  r.last_updated_time = s.Int(11);
  return r;
}

Status NameTaken(const Status& st, const std::string& name) {
  if (st.code() == StatusCode::kAlreadyExists) {
    return AlreadyExists("model name \"" + name + "\" is taken (names are unique, case-sensitive)");
  }
  return st;
}

}  // namespace

Result<ModelRow> SqliteStore::GetModelLocked(const char* where, int64_t id,
                                             const std::string& name) {
  std::string sql = std::string(kModelSelect) + where;
  DET_PREPARE(s, sql.c_str());
  if (id != 0) {
    s.Bind(1, id);
  } else {
    s.Bind(1, name);
  }
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) {
    return NotFound(id != 0 ? "model " + std::to_string(id) + " not found"
                            : "model \"" + name + "\" not found");
  }
  return ReadModel(s);
}

Result<ModelRow> SqliteStore::InsertModel(const ModelRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t id = 0;
  {
    DET_PREPARE(s,
                "INSERT INTO models (name, description, notes, metadata, labels, user_id, "
                "workspace_id, archived, creation_time, last_updated_time) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    s.Bind(1, row.name).Bind(2, row.description).Bind(3, row.notes).Bind(4, row.metadata.dump());
    s.Bind(5, LabelsText(row.labels)).Bind(6, row.user_id).Bind(7, row.workspace_id);
    s.Bind(8, row.archived).Bind(9, row.creation_time).Bind(10, row.last_updated_time);
    DET_RETURN_IF_ERROR(NameTaken(s.Run(), row.name));
    id = db_->LastInsertId();
  }
  return GetModelLocked("WHERE m.id = ?", id, "");
}

Result<ModelRow> SqliteStore::GetModelById(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (id <= 0) return NotFound("model " + std::to_string(id) + " not found");
  return GetModelLocked("WHERE m.id = ?", id, "");
}

Result<ModelRow> SqliteStore::GetModelByName(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  return GetModelLocked("WHERE m.name = ?", 0, name);
}

Result<std::vector<ModelRow>> SqliteStore::ListModels() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql = std::string(kModelSelect) + "ORDER BY m.id";
  DET_PREPARE(s, sql.c_str());
  return s.Collect<ModelRow>(ReadModel);
}

Status SqliteStore::UpdateModel(const ModelRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "UPDATE models SET name = ?, description = ?, notes = ?, metadata = ?, "
              "labels = ?, user_id = ?, workspace_id = ?, archived = ?, "
              "last_updated_time = ? WHERE id = ?");
  s.Bind(1, row.name).Bind(2, row.description).Bind(3, row.notes).Bind(4, row.metadata.dump());
  s.Bind(5, LabelsText(row.labels)).Bind(6, row.user_id).Bind(7, row.workspace_id);
  s.Bind(8, row.archived).Bind(9, row.last_updated_time).Bind(10, row.id);
  DET_RETURN_IF_ERROR(NameTaken(s.Run(), row.name));
  if (db_->Changes() == 0) return NotFound("model " + std::to_string(row.id) + " not found");
  return Status::Ok();
}

Status SqliteStore::DeleteModel(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Status st;
  for (const char* sql :
       {"DELETE FROM model_versions WHERE model_id = ?", "DELETE FROM models WHERE id = ?"}) {
    Statement s(db_, sql);
    st = s.prepared();
    if (st.ok()) st = s.Bind(1, id).Run();
    if (!st.ok()) break;
  }
  if (st.ok() && db_->Changes() == 0) {
    st = NotFound("model " + std::to_string(id) + " not found");
  }
  if (!st.ok()) {
    (void)Exec("ROLLBACK");
    return st;
  }
  return Exec("COMMIT");
}

Result<ModelVersionRow> SqliteStore::InsertModelVersion(const ModelVersionRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t id = 0;
  {
    // One statement numbers and inserts, so concurrent registrations never share a number.
    DET_PREPARE(s,
                "INSERT INTO model_versions (model_id, version, checkpoint_uuid, name, "
                "comment, notes, metadata, labels, user_id, creation_time, last_updated_time) "
                "SELECT ?1, COALESCE(MAX(version), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 "
                "FROM model_versions WHERE model_id = ?1");
    s.Bind(1, row.model_id).Bind(2, row.checkpoint_uuid).Bind(3, row.name).Bind(4, row.comment);
    s.Bind(5, row.notes).Bind(6, row.metadata.dump()).Bind(7, LabelsText(row.labels));
    s.Bind(8, row.user_id).Bind(9, row.creation_time).Bind(10, row.last_updated_time);
    DET_RETURN_IF_ERROR(s.Run());
    id = db_->LastInsertId();
  }
  std::string sql = std::string(kVersionSelect) + "WHERE id = ?";
  DET_PREPARE(s, sql.c_str());
  s.Bind(1, id);
  DET_ASSIGN_OR_RETURN(bool found, s.Step());
  if (!found) return Internal("model version " + std::to_string(id) + " vanished after insert");
  return ReadVersion(s);
}

Result<ModelVersionRow> SqliteStore::GetModelVersion(int64_t model_id, int64_t version) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql = std::string(kVersionSelect) + "WHERE model_id = ? AND version = ?";
  DET_PREPARE(s, sql.c_str());
  s.Bind(1, model_id).Bind(2, version);
  DET_ASSIGN_OR_RETURN(bool found, s.Step());
  if (!found) {
    return NotFound("version " + std::to_string(version) + " of model " + std::to_string(model_id) +
                    " not found");
  }
  return ReadVersion(s);
}

Result<std::vector<ModelVersionRow>> SqliteStore::ListModelVersions(int64_t model_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql = std::string(kVersionSelect) + "WHERE model_id = ? ORDER BY version";
  DET_PREPARE(s, sql.c_str());
  s.Bind(1, model_id);
  return s.Collect<ModelVersionRow>(ReadVersion);
}

Status SqliteStore::UpdateModelVersion(const ModelVersionRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "UPDATE model_versions SET name = ?, comment = ?, notes = ?, metadata = ?, "
              "labels = ?, last_updated_time = ? WHERE id = ?");
  s.Bind(1, row.name).Bind(2, row.comment).Bind(3, row.notes).Bind(4, row.metadata.dump());
  s.Bind(5, LabelsText(row.labels)).Bind(6, row.last_updated_time).Bind(7, row.id);
  DET_RETURN_IF_ERROR(s.Run());
  if (db_->Changes() == 0) {
    return NotFound("model version " + std::to_string(row.id) + " not found");
  }
  return Status::Ok();
}

Status SqliteStore::DeleteModelVersion(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "DELETE FROM model_versions WHERE id = ?");
  s.Bind(1, id);
  DET_RETURN_IF_ERROR(s.Run());
  if (db_->Changes() == 0) {
    return NotFound("model version " + std::to_string(id) + " not found");
  }
  return Status::Ok();
}

Result<std::vector<ModelVersionRow>> SqliteStore::ListModelVersionsForCheckpoints(
    const std::vector<std::string>& uuids) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ModelVersionRow> out;
  if (uuids.empty()) return out;
  // One query over a JSON array of the uuids: no limit on how many are asked about.
  std::string sql = std::string(kVersionSelect) + "WHERE checkpoint_uuid IN (" +
                    sql::JsonArrayParamElements(db_->dialect()) + ") ORDER BY id";
  DET_PREPARE(s, sql.c_str());
  s.Bind(1, json(uuids).dump());
  return s.Collect<ModelVersionRow>(ReadVersion);
}

}  // namespace det::master::store
